"""RepoIndexingService (spec 001): index a resource's files into the project's stores.

Every run is incremental: a file whose size and mtime are unchanged is skipped
without reading; a file whose content hash is unchanged only gets its mtime
updated; only the rest is analysed. Changed and removed nodes are retired, not
deleted, so the graph keeps its revision history.

Crash safety: the text index and the node store are written in transactions
that commit only at the end, and ``indexed_files`` is updated last, so an
interrupted run leaves the previous index usable and the next run redoes the
unfinished files. The status row names the worker process; a row stuck in
``indexing`` by a dead process is repaired by :meth:`cleanup_stale_indexing`.
"""

from __future__ import annotations

import errno
import gc
import os
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, insert, select, update

from cleveragents import paths
from cleveragents.errors import BusinessRuleViolation, CleverAgentsError, ValidationError
from cleveragents.models.ids import new_ulid
from cleveragents.models.uko import DEPTH_SIGNATURES, UKONode
from cleveragents_acms.analyzers._common import (
    CALL_RESULT,
    CODE_LANGUAGES,
    PY_REEXPORT,
    RUST_MODULE,
    is_python,
)
from cleveragents_acms.indexing.analysis import (
    ComponentSpec,
    FileAnalysis,
    analyze_files,
    analyzer_changes,
    analyzer_versions,
    changed_analyzers,
)
from cleveragents_acms.indexing.dependents import dependent_files
from cleveragents_acms.indexing.go_interfaces import (
    GO_DECLARATIONS,
    add_implementations,
    go_folder,
)
from cleveragents_acms.indexing.inheritance import stored_ancestry
from cleveragents_acms.indexing.models import (
    FileRecord,
    FileRecords,
    IndexMetadata,
    IndexRun,
    RepoIndex,
)
from cleveragents_acms.indexing.project_index import ProjectIndex, backend_class
from cleveragents_acms.indexing.resolve import (
    INHERITED_TARGET,
    PY_IMPORT,
    PY_MODULE_TYPES,
    RUST_CRATE,
    RUST_USE,
    SCRIPT_EXPORT,
    SYMBOL,
    ReExports,
    binds_names,
    default_export_files,
    dotted_names,
    follow_module_imports,
    reexported_names,
    reexports,
    resolve_edges,
    rust_use_names,
    script_module_files,
    wanted_modules,
    wanted_names,
)
from cleveragents_acms.indexing.store import (
    STORES_WITH_GAPS,
    NodeStore,
    content_digest,
    moved_only,
    node_fingerprint,
    same_as_earlier,
    same_content,
)
from cleveragents_acms.indexing.tables import ensure_tables, indexed_files, repo_indexes
from cleveragents_acms.indexing.vectors import choose_embedder, rebuild_from_nodes

if TYPE_CHECKING:
    from cleveragents_acms.analyzers.walk_ahead import WalkAhead

__all__ = ["IndexBusy", "PhaseListener", "PhaseProgress", "Progress", "RepoIndexingService"]

#: Nodes per graph write.
_GRAPH_BATCH = 5000
#: New nodes from which a fresh resource's graph is loaded by a child process, while
#: the other stores are written (starting one costs ~0.3 s).
_BACKGROUND_GRAPH_NODES = 20_000

#: When the changed files are this many times the others or more, a refresh analyses the
#: others too, instead of searching for those that depend on the changes.
_MOSTLY_CHANGED = 2

#: ``progress(done, total, path)`` is called after each analysed file.
Progress = Callable[[int, int, str], None]
#: Told the name of each phase of a run as it starts (``resolve``, ``graph-wait`` …): after
#: the analysis, a big run spends tens of seconds writing, with every file done.
PhaseListener = Callable[[str], None]
_ON_PHASE: ContextVar[PhaseListener | None] = ContextVar("on_phase", default=None)
#: ``on_phase_progress(phase, done, total)``: how far a long writing phase is, in nodes
#: (the graph phase of a refresh that drops 3,754 files retires 125k nodes in minutes).
PhaseProgress = Callable[[str, int, int], None]
_ON_PHASE_PROGRESS: ContextVar[PhaseProgress | None] = ContextVar("on_phase_progress", default=None)


def _now() -> datetime:
    return datetime.now(UTC)


def _release_renderings(outcome: FileAnalysis, index: ProjectIndex) -> None:
    """Let a file's outlines and full sources go once its text is indexed, when the worker
    left nothing that needs them: its node-store blobs (with the fingerprint's hash of the
    renderings) and vectors are made. A cold run holds every file's nodes until names are
    resolved: on the 10k-file benchmark this process held 1.84 GB after the analysis,
    1.58 GB now.
    """
    nodes = outcome.result.nodes
    blobs = outcome.store_blobs
    if not nodes or not all(n.uri in blobs for n in nodes):
        return
    vectors = index.vectors
    if vectors is not None and (
        outcome.vectors is None or outcome.vectors_from != vectors.embedder_name
    ):
        return  # the vectors are made from the renderings later
    for node in nodes:  # what is left serves the vector entries' signatures
        node.renderings = {d: r for d, r in node.renderings.items() if d <= DEPTH_SIGNATURES}


#: A project's text index is written anew from the node store once the documents it has
#: replaced (which Tantivy counts in its term statistics until a merge drops them) pass
#: this share of its live ones.
_MAX_REPLACED_SHARE = 0.5


def _compact_text(index: ProjectIndex, run: IndexRun) -> None:
    """Write the project's text index anew from the node store's current nodes when the
    documents it replaced weigh too much in its term statistics (BM25's weights drift
    from a cold index's); the old index serves until the commit."""
    skew = _text_skew(index, _MAX_REPLACED_SHARE)
    if skew is None:
        return
    with _phase(run, "text-compact"):
        written = _write_text_anew(index)
    replaced, live = skew
    run.rebuilt.append(
        f"text: {written} documents written anew from the node store, as {replaced} "
        f"replaced ones still weighed in its term statistics (against {live} live ones)"
    )


def _text_skew(index: ProjectIndex, max_share: float) -> tuple[int, int] | None:
    """``(replaced, live)`` documents of the text index when the replaced ones pass
    ``max_share`` of the live ones; None otherwise, or when its backend cannot say."""
    text = index.text
    if text is None or not (hasattr(text, "replaced_count") and hasattr(text, "clear")):
        return None
    replaced, live = text.replaced_count(), text.count()
    return (replaced, live) if replaced and replaced > live * max_share else None


def _text_mostly_of(index: ProjectIndex, resource_id: str) -> bool:
    """Whether ``resource_id``'s documents are three quarters or more of the project's
    text index (writing it anew then costs little more than writing that resource's)."""
    text = index.text
    if text is None or not (hasattr(text, "replaced_count") and hasattr(text, "clear")):
        return False  # a backend that cannot be written anew (see _text_skew)
    return 4 * text.count(resource_id) >= 3 * text.count()


def _write_text_anew(index: ProjectIndex) -> int:
    """Empty the text index and write the node store's current nodes into it, in one
    commit; returns the documents written."""
    text = index.text
    assert text is not None and hasattr(text, "clear")
    written = 0
    try:
        text.clear()
        for resource in index.nodes.current_resources():
            for nodes in index.nodes.iter_current_files(resource):
                written += text.add_nodes(nodes)
        text.commit()
    except BaseException:
        text.rollback()
        raise
    return written


def _rewrite_changed_documents(
    index: ProjectIndex, resource_id: str, outcome: FileAnalysis
) -> None:
    """Replace the text documents of the file's nodes whose content changed, and delete
    those of its nodes that are gone. A document replaced still counts in Tantivy's term
    statistics until a merge: rewriting a whole file for an edit, or every file when an
    analyzer changed, left a Python release's index counting its documents twice."""
    assert index.text is not None
    stored = index.nodes.current_fingerprints(resource_id, [outcome.relative])
    blobs = outcome.store_blobs
    changed = [
        node
        for node in outcome.result.nodes
        if node.uri not in stored
        or not same_content(
            stored[node.uri].fingerprint,
            blobs[node.uri][2] if node.uri in blobs else content_digest(node),
        )
    ]
    current = {node.uri for node in outcome.result.nodes}
    index.text.delete_nodes([uri for uri in stored if uri not in current])
    index.text.delete_nodes([node.uri for node in changed if node.uri in stored])
    index.text.add_nodes(changed)


def _commit_in_background(text: Any) -> Future[None]:
    """Commit the text index from a thread of its own. Tantivy writes its segments without
    the GIL (3-4 s of one core on the 10k-file benchmark) while names are resolved, which
    leaves the other core idle, and the other stores are written."""
    committed: Future[None] = Future()

    def commit() -> None:
        try:
            text.commit()
        except BaseException as exc:
            committed.set_exception(exc)
        else:
            committed.set_result(None)

    threading.Thread(target=commit, name="text-commit").start()
    return committed


def _stored_answers(nodes: NodeStore, resource_id: str, new: Sequence[UKONode]) -> list[UKONode]:
    """The stored nodes that may answer the ``symbol:`` targets of ``new``: those of the
    targets' short names, the modules they may be, the ``export default`` declarations of
    the modules a ``…default`` target names, and, when Rust files changed, every
    ``use`` of the resource with what it brings in (Rust paths go through them) and
    every ``impl Trait for Type`` (a trait's methods are its types'), when
    JavaScript or TypeScript files did, every ``export … from`` with what it names, when
    Python files did, every package's ``from m import a`` with what it names, the
    from-imports of the modules the targets go through (:func:`_stored_module_imports`),
    and the classes and members their inherited-member guesses may go through."""
    targets = {
        # ``pkg.make_client().get`` goes through ``pkg.make_client``: looked up without ``()``
        t[len(SYMBOL) :].replace(CALL_RESULT, "")
        for n in new
        for _, t in n.edges
        if t.startswith(SYMBOL) and not t.startswith(INHERITED_TARGET)
    }
    found = [
        *nodes.nodes_named([resource_id], wanted_names(new)),
        *nodes.modules_at([resource_id], wanted_modules(new)),
        *nodes.default_exports_at([resource_id], default_export_files(targets)),
    ]
    if any(n.path.endswith(".rs") for n in new):
        uses = nodes.nodes_of_type(resource_id, RUST_USE)
        found += [*uses, *nodes.nodes_named([resource_id], rust_use_names(uses))]
        # A type's methods include those its traits give by default.
        found += nodes.rust_trait_impls(resource_id)
        # Every module and crate root: a path goes through them (into another crate by
        # its name), and one that has no glob ends a search (``resolve._RustPaths``),
        # which went on through every glob of the tree without them.
        found += nodes.nodes_of_type(resource_id, RUST_CRATE)
        found += nodes.nodes_of_type(resource_id, RUST_MODULE)
    if any(n.uko_type.startswith("uko-ts:") for n in new):
        exports = nodes.nodes_of_type(resource_id, SCRIPT_EXPORT)
        if exports:
            given = {t for *_, t in reexports(exports)}
            found += [
                *exports,
                *nodes.nodes_named([resource_id], reexported_names(exports)),
                *nodes.modules_at(
                    [resource_id], {p for m in given for p in script_module_files(m)}
                ),
                *nodes.default_exports_at([resource_id], default_export_files(given)),
            ]
    if any(is_python(n) for n in new):
        exports = nodes.nodes_of_type(resource_id, PY_REEXPORT)
        exports += _stored_module_imports(nodes, resource_id, targets, exports)
        if exports:
            # Only the names a search for the targets may look up: what every package
            # re-exports is most of a tree's names.
            ways = ReExports({}, exports).looked_up(targets)
            found += [*exports, *nodes.nodes_named([resource_id], dotted_names(ways))]
        # Last: these classes come with their edges, which the resolver follows.
        found += stored_ancestry(nodes, resource_id, new, found)
    return found


def _stored_module_imports(
    nodes: NodeStore, resource_id: str, targets: set[str], exports: list[UKONode]
) -> list[UKONode]:
    """The stored top-level from-imports of the Python modules that the searches for
    ``targets`` go through (``fields.related.ForeignObjectRel``: ``related.py``'s ``from
    .reverse_related import ForeignObjectRel``), through ``exports`` and one another, as
    far as :class:`ReExports` follows names: every one a cold index would follow."""
    imports: dict[str, UKONode] = {}
    through = ReExports({}, exports)

    def read(modules: set[str]) -> list[UKONode]:
        paths = {
            n.path
            for n in nodes.nodes_named([resource_id], modules)
            if n.uko_type in PY_MODULE_TYPES and n.name in modules
        }
        return [
            n
            for n in nodes.nodes_in_files(resource_id, paths, [PY_IMPORT])
            if binds_names(n) and n.uri not in imports
        ]

    def grow(new: list[UKONode]) -> set[str]:
        imports.update((n.uri, n) for n in new)
        through.extend(new)
        return set(targets) | through.looked_up(targets)

    follow_module_imports(set(targets) | through.looked_up(targets), read, grow)
    return list(imports.values())


@contextmanager
def _phase(run: IndexRun, name: str) -> Iterator[None]:
    listener = _ON_PHASE.get()
    if listener is not None:
        listener(name)
    started = time.perf_counter()
    try:
        yield
    finally:
        run.timed(name, time.perf_counter() - started)


def _phase_progress(name: str, done: int, total: int) -> None:
    listener = _ON_PHASE_PROGRESS.get()
    if listener is not None:
        listener(name, done, total)


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Hold the cyclic garbage collector off for one run.

    A run keeps every analysis alive until it is written, millions of objects with
    hardly a cycle among them, and each full collection walks all of them: about
    3 s of a 5,000-file cold run went to collections that freed nothing.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


#: How often a run waiting for another process's run looks whether that one ended.
_CLAIM_POLL_S = 0.2


class IndexBusy(BusinessRuleViolation):
    """Another live process is indexing the resource into the project."""

    def __init__(self, root: Path, pid: int) -> None:
        super().__init__(
            f"{root} is being indexed by another process (pid {pid})", details={"pid": pid}
        )
        self.pid = pid


def _pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RepoIndexingService:
    """Builds and refreshes the index of resources, one project's stores at a time."""

    def __init__(
        self, database: Any, registry: Any, config: Any, *, workers: int | None = None
    ) -> None:
        self.database = database
        self.registry = registry
        self.config = config
        self.workers = workers
        ensure_tables(database)

    # -- public API (spec 001) ---------------------------------------------------------

    def index_resource(
        self,
        resource_id: str,
        root_path: str | Path,
        *,
        project: str,
        include_globs: tuple[str, ...] = (),
        exclude_globs: tuple[str, ...] = (),
        max_file_size: int | None = None,
        max_total_size: int | None = None,
        force: bool = False,
        progress: Progress | None = None,
        on_phase: PhaseListener | None = None,
        on_phase_progress: PhaseProgress | None = None,
        wait: float = 0.0,
        on_wait: Callable[[int], None] | None = None,
        changed_paths: Iterable[str] | None = None,
        walk_ahead: WalkAhead | None = None,
    ) -> RepoIndex:
        """Index ``root_path`` as ``resource_id`` in ``project``; incremental unless ``force``.

        ``changed_paths`` (relative to the root, as a watcher names them) says that no
        other file changed since the last run: the run looks at those alone instead of
        walking the tree, when that can be told (see ``files.discover_changes``; it walks
        otherwise, and always after a run that did not end ready).

        ``progress`` is told of each file analysed, ``on_phase`` of each phase started and
        ``on_phase_progress`` of the nodes a long writing phase has written so far. While
        another live process indexes the same resource into ``project`` (a ``--watch``
        refreshing), the run waits up to ``wait`` seconds (``math.inf``: as long as that
        process runs it), telling ``on_wait`` that process's id once, then starts.

        ``walk_ahead`` is a walk of ``root_path`` started when the command did
        (``analyzers/walk_ahead.py``): the run takes it instead of walking, unless it had
        to wait for another process (the tree may have changed since) or walks under other
        limits.

        :raises BusinessRuleViolation: the other process still indexes it after ``wait``.
        """
        root = Path(root_path).expanduser()
        if not root.is_dir():
            raise ValidationError(f"path does not exist or is not a directory: {root}")
        if not project.strip():
            raise ValidationError("project name is required")
        self.cleanup_stale_indexing()
        analyzers = analyzer_versions(self.analyzer_specs())  # raises before the claim
        waited: list[int] = []

        def waiting(pid: int) -> None:
            waited.append(pid)
            if on_wait is not None:
                on_wait(pid)

        index_id, previous, built_with = self._claim_waiting(
            resource_id, project, root.resolve(), wait, waiting
        )
        if walk_ahead is not None and waited:
            walk_ahead.discard()
            walk_ahead = None
        run = IndexRun()
        # Asked for, or after a run that stopped (its text may be ahead of the node store):
        # the text index gets every document of the files analysed, not only those that
        # changed.
        rewrite_text = force or previous != "ready"
        #: Analyzers (as files record them) whose unchanged files are analysed again.
        reanalyse: frozenset[str] = frozenset()
        if built_with and built_with != analyzers and not force:
            # What an analyzer finds in an unchanged file may have changed with it.
            changes = analyzer_changes(built_with, analyzers)
            why = f"the analyzers changed since the last run: {changes}"
            changed = changed_analyzers(built_with, analyzers)
            if changed is None:
                force = True
                run.reanalysis = f"every file analysed again: {why}"
            else:
                reanalyse = frozenset(
                    spec.declared("name", spec.name)
                    for spec in self.analyzer_specs()
                    if spec.name in changed
                )
                run.reanalysis = f"the files of {', '.join(sorted(changed))} analysed again: {why}"
        started = time.perf_counter()
        listening = _ON_PHASE.set(on_phase)
        following = _ON_PHASE_PROGRESS.set(on_phase_progress)
        try:
            with _no_cycle_collection():
                files = self._run(
                    index_id,
                    resource_id,
                    project,
                    root.resolve(),
                    run,
                    force=force,
                    rewrite_text=rewrite_text,
                    reanalyse=reanalyse,
                    include_globs=include_globs,
                    exclude_globs=exclude_globs,
                    max_file_size=max_file_size,
                    max_total_size=max_total_size,
                    progress=progress,
                    changed_paths=None if previous != "ready" else changed_paths,
                    walk_ahead=walk_ahead,
                )
        except BaseException as exc:
            interrupted = isinstance(exc, KeyboardInterrupt)
            message = "indexing was interrupted" if interrupted else _describe(exc)
            # The stores were rolled back: the previous index (if any) is intact but stale.
            self._set_status(index_id, "stale" if previous == "ready" else "error", message)
            if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
                raise CleverAgentsError(
                    f"disk full while writing the index of {root}; the previous index is intact"
                ) from exc
            raise
        else:
            with _phase(run, "finish"):
                metadata = self._finish(index_id, files, run, analyzers)
        finally:
            _ON_PHASE_PROGRESS.reset(following)
            _ON_PHASE.reset(listening)
        run.seconds = round(time.perf_counter() - started, 3)
        return RepoIndex(metadata, FileRecords(files), run)

    def compact_text(self, project: str) -> tuple[int, int, int] | None:
        """Write ``project``'s text index anew from its node store if it holds any replaced
        document (which Tantivy counts in BM25's document frequencies until a merge):
        ``(written, replaced, live)``, or None when there was none. A refresh does this
        itself past a share of replaced documents; this does it at once."""
        index = ProjectIndex.open(project, self.registry, self.config, create=False)
        try:
            skew = _text_skew(index, 0.0)
            return None if skew is None else (_write_text_anew(index), *skew)
        finally:
            index.close()

    def refresh_index(self, resource_id: str, root_path: str | Path, **kwargs: Any) -> RepoIndex:
        """Re-analyse only what changed since the last run (same options as index_resource)."""
        project = kwargs.pop("project", None) or self._project_of(resource_id)
        return self.index_resource(resource_id, root_path, project=project, **kwargs)

    def get_index(self, resource_id: str, project: str | None = None) -> RepoIndex | None:
        metadata = self.get_index_status(resource_id, project)
        if metadata is None:
            return None
        with self.database.engine.connect() as conn:
            rows = conn.execute(
                select(indexed_files).where(indexed_files.c.index_id == metadata.index_id)
            ).mappings()
            files = tuple(FileRecord.from_row(r) for r in rows)
        return RepoIndex(metadata, files)

    def get_index_status(
        self, resource_id: str, project: str | None = None
    ) -> IndexMetadata | None:
        query = select(repo_indexes).where(repo_indexes.c.resource_id == resource_id)
        if project:
            query = query.where(repo_indexes.c.project_name == project)
        with self.database.engine.connect() as conn:
            row = conn.execute(query.order_by(repo_indexes.c.indexed_at.desc())).mappings().first()
        return _metadata(row) if row else None

    def file_problems(self, index_id: str) -> dict[str, list[str]]:
        """The files of an index whose last analysis met problems (a syntax error,
        invalid UTF-8, an unreadable file), each with its problems: what a run's summary
        counts."""
        query = (
            select(indexed_files.c.path, indexed_files.c.errors)
            .where(indexed_files.c.index_id == index_id, indexed_files.c.errors.is_not(None))
            .order_by(indexed_files.c.path)
        )
        with self.database.engine.connect() as conn:
            return {row.path: row.errors.splitlines() for row in conn.execute(query)}

    def list_indexes(self, project: str | None = None) -> list[IndexMetadata]:
        query = select(repo_indexes).order_by(repo_indexes.c.project_name, repo_indexes.c.root_path)
        if project:
            query = query.where(repo_indexes.c.project_name == project)
        with self.database.engine.connect() as conn:
            return [_metadata(r) for r in conn.execute(query).mappings()]

    def remove_index(self, resource_id: str, project: str | None = None) -> bool:
        """Drop the resource from the project's stores and its status rows."""
        found = False
        for metadata in [m for m in self.list_indexes(project) if m.resource_id == resource_id]:
            index = ProjectIndex.open(
                metadata.project_name, self.registry, self.config, with_vectors=True
            )
            try:
                index.nodes.delete_resource(resource_id)
                if index.vectors is not None:
                    index.vectors.backend.delete_resource(resource_id)
                    index.vectors.commit()
                if index.text is not None:
                    index.text.delete_resource(resource_id)
                    index.text.commit()
                if index.graph is not None:
                    index.graph.delete_resource(resource_id)
            finally:
                index.close()
            with self.database.engine.begin() as conn:
                conn.execute(
                    delete(indexed_files).where(indexed_files.c.index_id == metadata.index_id)
                )
                conn.execute(
                    delete(repo_indexes).where(repo_indexes.c.index_id == metadata.index_id)
                )
            found = True
        return found

    def cleanup_stale_indexing(self) -> int:
        """Repair rows left in ``indexing`` by a process that no longer runs."""
        host = socket.gethostname()
        repaired = 0
        with self.database.engine.begin() as conn:
            rows = conn.execute(
                select(
                    repo_indexes.c.index_id,
                    repo_indexes.c.worker_pid,
                    repo_indexes.c.worker_host,
                    repo_indexes.c.file_count,
                ).where(repo_indexes.c.status == "indexing")
            ).all()
            for index_id, pid, worker_host, file_count in rows:
                if worker_host == host and _pid_alive(pid):
                    continue
                conn.execute(
                    update(repo_indexes)
                    .where(repo_indexes.c.index_id == index_id)
                    .values(
                        status="stale" if file_count else "error",
                        error_message=f"indexing was interrupted (process {pid} ended); "
                        "run `cleveragents index` again",
                        worker_pid=None,
                    )
                )
                repaired += 1
        return repaired

    # -- the run ---------------------------------------------------------------------

    def _claim(
        self, resource_id: str, project: str, root: Path
    ) -> tuple[str, str | None, str | None]:
        """Create or take the status row; refuse if a live process is indexing it.

        Returns the index id, its status before and the analyzers it was built with.
        """
        now = _now().isoformat()
        me = {
            "status": "indexing",
            "worker_pid": os.getpid(),
            "worker_host": socket.gethostname(),
            "error_message": None,
        }
        with self.database.engine.begin() as conn:
            row = (
                conn.execute(
                    select(repo_indexes).where(
                        repo_indexes.c.resource_id == resource_id,
                        repo_indexes.c.project_name == project,
                    )
                )
                .mappings()
                .first()
            )
            if row is None:
                index_id = new_ulid()
                conn.execute(
                    insert(repo_indexes).values(
                        index_id=index_id,
                        resource_id=resource_id,
                        project_name=project,
                        root_path=str(root),
                        indexed_at=now,
                        created_at=now,
                        **me,
                    )
                )
                return index_id, None, None
            if (
                row["status"] == "indexing"
                and row["worker_pid"] != os.getpid()
                and _pid_alive(row["worker_pid"])
            ):
                raise IndexBusy(root, row["worker_pid"])
            conn.execute(
                update(repo_indexes)
                .where(repo_indexes.c.index_id == row["index_id"])
                .values(root_path=str(root), **me)
            )
            return row["index_id"], row["status"], row["analyzers"]

    def _claim_waiting(
        self,
        resource_id: str,
        project: str,
        root: Path,
        wait: float,
        on_wait: Callable[[int], None] | None,
    ) -> tuple[str, str | None, str | None]:
        """:meth:`_claim`, tried again while another live process holds the row, for up to
        ``wait`` seconds; ``on_wait`` is told that process's id once."""
        deadline, told = time.monotonic() + wait, False
        while True:
            try:
                return self._claim(resource_id, project, root)
            except IndexBusy as busy:
                if time.monotonic() >= deadline:
                    raise
                if on_wait is not None and not told:
                    on_wait(busy.pid)
                    told = True
                time.sleep(min(_CLAIM_POLL_S, max(0.0, deadline - time.monotonic())))

    def _set_status(self, index_id: str, status: str, message: str | None) -> None:
        with self.database.engine.begin() as conn:
            conn.execute(
                update(repo_indexes)
                .where(repo_indexes.c.index_id == index_id)
                .values(status=status, error_message=message, worker_pid=None)
            )

    def _light_embedder(self) -> ComponentSpec | None:
        """The embedder to run in the analysis workers, when it is a light one."""
        try:
            if backend_class(self.registry, self.config, "vector") is None:
                return None
            chosen = choose_embedder(self.registry, self.config)
        except CleverAgentsError:
            return None  # reported when the vector index is opened
        if chosen is None or not getattr(chosen[1], "light", False):
            return None
        registration = next(
            (r for r in self.registry.embedders.registrations() if r.name == chosen[0]), None
        )
        if registration is None or not isinstance(registration.target, str):
            return None
        return ComponentSpec(chosen[0], registration.target)

    def analyzer_specs(self) -> list[ComponentSpec]:
        """The registered analyzers, as the analysis workers rebuild them.

        :raises CleverAgentsError: none is registered.
        """
        specs = []
        for registration in self.registry.analyzers.registrations():
            reference = registration.target if isinstance(registration.target, str) else None
            instance = None if reference else registration.resolve()
            specs.append(ComponentSpec(registration.name, reference, instance))
        if not specs:
            raise CleverAgentsError("no analyzers are registered; is cleveragents-acms installed?")
        return specs

    def _run(
        self,
        index_id: str,
        resource_id: str,
        project: str,
        root: Path,
        run: IndexRun,
        *,
        force: bool,
        rewrite_text: bool = True,
        reanalyse: frozenset[str] = frozenset(),
        include_globs: tuple[str, ...],
        exclude_globs: tuple[str, ...],
        max_file_size: int | None,
        max_total_size: int | None,
        progress: Progress | None,
        changed_paths: Iterable[str] | None = None,
        walk_ahead: WalkAhead | None = None,
    ) -> list[Mapping[str, Any]]:
        from cleveragents_acms.analyzers.files import (
            configured_limits,
            discover,
            discover_changes,
        )

        with _phase(run, "discover"):
            with self.database.engine.connect() as conn:
                known = {
                    r["path"]: r
                    for r in conn.execute(
                        select(indexed_files).where(indexed_files.c.index_id == index_id)
                    ).mappings()
                }
            stats = _file_stats(known)
            limits = configured_limits(
                self.config,
                max_file_size=max_file_size,
                max_total_size=max_total_size,
                include_globs=include_globs,
                exclude_globs=exclude_globs,
            )
            discovery = None
            if changed_paths is not None and not force:
                changed_paths = list(changed_paths)
                discovery = discover_changes(root, changed_paths, stats, **limits)
                if discovery is not None:
                    run.paths_looked_at = len(changed_paths)
            if discovery is None:
                walked = walk_ahead.take() if walk_ahead is not None else None
                discovery = discover(root, known=None if force else stats, walked=walked, **limits)
        run.files_seen, run.files_skipped = len(discovery.files), len(discovery.skipped)
        run.skipped_reasons = discovery.reasons()
        run.skipped = [(s.relative, s.reason) for s in discovery.skipped]
        seen = {f.relative for f in discovery.files}
        removed = sorted(set(known) - seen)
        # unchanged by size and mtime: not read at all (the rule discovery trusts too)
        stale = {path for path, row in known.items() if row["analyzer"] in reanalyse}
        candidates = [
            f
            for f in discovery.files
            if force or stats.get(f.relative) != (f.size, f.mtime_ns) or f.relative in stale
        ]
        total = len(candidates)
        analyses: list[FileAnalysis] = []

        def done(outcome: FileAnalysis) -> None:
            if progress is not None:
                progress(len(analyses) + 1, total, outcome.relative)

        #: Unchanged files analysed again, as what they name changed (``dependents.py``).
        dependents: set[str] = set()

        def is_changed(outcome: FileAnalysis) -> bool:
            previous = known.get(outcome.relative)
            return (
                force
                or previous is None
                or previous["content_hash"] != outcome.content_hash
                or outcome.relative in dependents
                or outcome.relative in stale
            )

        def write_text(outcome: FileAnalysis) -> None:
            if index is None or not is_changed(outcome):
                return
            # The text index needs no resolved edges: it is written while the workers go
            # on parsing, instead of after them.
            if index.text is not None and not text_anew:
                if rewrite_text or outcome.relative not in known:
                    index.text.delete_paths(resource_id, [outcome.relative])
                    index.text.add_nodes(outcome.result.nodes)
                else:
                    _rewrite_changed_documents(index, resource_id, outcome)
            _release_renderings(outcome, index)

        rebuild = _stores_to_rebuild(self.registry, self.config, project, resource_id)
        text_anew = False
        if not candidates and not removed and not rebuild:
            index = None
        else:
            with _phase(run, "open"):
                index = ProjectIndex.open(project, self.registry, self.config, with_vectors=True)
            # Most files changed (a release pulled over the tree, --force): the replaced
            # documents would outweigh the live ones, and the text index be written anew
            # after the run had written it file by file. It is written anew once instead.
            # Not for files read again only as their analyzer changed: their documents are
            # replaced only where their text changed, which is seldom.
            edited = sum(
                1 for f in candidates if force or stats.get(f.relative) != (f.size, f.mtime_ns)
            )
            text_anew = (
                bool(known)
                and edited + len(removed) >= _MOSTLY_CHANGED * (len(discovery.files) - edited)
                and _text_mostly_of(index, resource_id)
            )
        try:
            with _phase(run, "analyse"):
                for outcome in analyze_files(
                    self.analyzer_specs(),
                    root,
                    [f.relative for f in candidates],
                    resource_id,
                    workers=self.workers,
                    on_done=done,
                    embedder=self._light_embedder(),
                ):
                    analyses.append(outcome)
                    write_text(outcome)
                if index is not None and not force:
                    present = [f.relative for f in discovery.files]
                    first = [a for a in analyses if is_changed(a)]
                    rest = set(present) - {a.relative for a in first}
                    # Most files changed (a release pulled, a branch switched): reading the
                    # few others costs less than searching which of them depend on the
                    # changes (5 s of a refresh that changed 237 of 254 files).
                    wave = (
                        rest
                        if len(rest) * _MOSTLY_CHANGED <= len(first)
                        else dependent_files(
                            index,
                            resource_id,
                            first,
                            removed,
                            added={a.relative for a in analyses if a.relative not in known},
                            present=present,
                        )
                    )
                    already = {a.relative: a for a in analyses}
                    while wave:
                        dependents |= wave
                        # A dependent read in this run already (its time stamp moved, not
                        # its text) is not analysed twice.
                        for path in sorted(wave & already.keys()):
                            write_text(already[path])
                        unread = sorted(wave - already.keys())
                        for outcome in (
                            analyze_files(
                                self.analyzer_specs(),
                                root,
                                unread,
                                resource_id,
                                workers=self.workers,
                                embedder=self._light_embedder(),
                            )
                            if unread
                            else ()
                        ):
                            analyses.append(outcome)
                            already[outcome.relative] = outcome
                            write_text(outcome)
                        # A dependent may say other than it did with the same text (its
                        # package's __init__.py came or went: its dotted names moved), and
                        # what went through it then changes as if its text had.
                        reshaped = [
                            already[path]
                            for path in sorted(wave)
                            if _reshaped(index.nodes, resource_id, already[path])
                        ]
                        wave = (
                            dependent_files(
                                index, resource_id, reshaped, [], added=set(), present=present
                            )
                            - {a.relative for a in analyses if is_changed(a)}
                            if reshaped and not dependents >= rest
                            else set()
                        )
                run.files_dependent = len(dependents)
            if index is not None and rebuild:
                self._rebuild(index, resource_id, rebuild, run)
            changed = [a for a in analyses if is_changed(a)]
            run.files_analyzed = len(changed)
            run.files_unchanged = len(discovery.files) - len(changed)
            run.files_removed = len(removed)
            if index is not None:
                self._write(index, resource_id, changed, removed, run, text_anew=text_anew)
                _compact_text(index, run)
        except BaseException:
            if index is not None:
                index.nodes.rollback()
                if index.text is not None:
                    index.text.rollback()
                if index.vectors is not None:
                    index.vectors.rollback()
            raise
        finally:
            if index is not None:
                with _phase(run, "close"):
                    index.close()
        by_path = {f.relative: f for f in discovery.files}
        changed_paths = {a.relative for a in changed}
        touched_only = [a for a in analyses if a.relative not in changed_paths]
        with _phase(run, "record"):
            return self._record_files(index_id, known, changed, touched_only, removed, by_path, run)

    @staticmethod
    def _add_go_implementations(
        index: ProjectIndex, resource_id: str, new: Sequence[UKONode], changed_paths: set[str]
    ) -> None:
        """Which of the run's Go types implement which interfaces of their packages, also
        declared by the packages' files the run leaves as they are (``go_interfaces``)."""
        folders = {f for n in new if (f := go_folder(n.path)) is not None}
        if not folders:
            return
        others = []
        if index.nodes.has_resource(resource_id):
            found = index.nodes.nodes_in_folders(resource_id, folders, ".go", GO_DECLARATIONS)
            others = [n for n in found if n.path not in changed_paths]
        add_implementations(new, others)

    def _write(
        self,
        index: ProjectIndex,
        resource_id: str,
        changed: Sequence[FileAnalysis],
        removed: Sequence[str],
        run: IndexRun,
        *,
        text_anew: bool = False,
    ) -> None:
        """Apply the run to the project's stores (the text index already has the changed
        files, unless it is to be written anew from the node store: ``text_anew``); the
        caller rolls the text index and node store back if this raises."""
        if not changed and not removed:
            return
        valid_from = _now().isoformat()
        loader = None
        # The text index has the changed files' documents: it takes the removed files' out
        # and, when its backend allows, commits while the rest is written. A run stopped
        # after this leaves it ahead of the node store, which the next run repairs (see
        # ``rewrite_text``). Rolling it back waits for the commit to end.
        text_commit = None
        if index.text is not None and not text_anew:
            if removed:
                with _phase(run, "text"):
                    index.text.delete_paths(resource_id, removed)
            if getattr(index.text, "commits_in_background", False):
                text_commit = _commit_in_background(index.text)
        try:
            paths = [a.relative for a in changed] + list(removed)
            new_nodes: list[UKONode] = [n for a in changed for n in a.result.nodes]
            # The fingerprints' hashes of the renderings, where the workers took them.
            blobs = {uri: b for a in changed for uri, b in a.store_blobs.items()}
            contents = [blobs[n.uri][2] if n.uri in blobs else None for n in new_nodes]
            for a in changed:
                run.errors.extend((a.relative, e) for e in a.result.errors)
            with _phase(run, "resolve"):
                previous = index.nodes.current_fingerprints(resource_id, paths)
                # The stored nodes of these files are replaced or gone: they answer no name.
                changed_paths = {a.relative for a in changed} | set(removed)
                # Stored nodes that may answer a name: none in a resource new to the node
                # store (a cold index), whose names were about 1 s of the 10k-file run.
                known = (
                    {n.uri: n for n in _stored_answers(index.nodes, resource_id, new_nodes)}
                    if index.nodes.has_resource(resource_id)
                    else {}
                )
                stored = [n for n in known.values() if n.path not in changed_paths]
                resolve_edges(new_nodes, stored)
                self._add_go_implementations(index, resource_id, new_nodes, changed_paths)
                inserts, revised_uris = [], []
                moved: list[UKONode] = []  # revised only because an edit above moved them
                new_uris = set()
                rehashed: list[tuple[str, str]] = []  # unchanged, hashed by an earlier version
                for node, content in zip(new_nodes, contents, strict=True):
                    new_uris.add(node.uri)
                    fingerprint = node_fingerprint(node, content)
                    old = previous.get(node.uri)
                    if old is not None and old.fingerprint == fingerprint:
                        run.nodes_unchanged += 1
                        continue
                    if old is not None and same_as_earlier(
                        old, node, blobs[node.uri][3] if node.uri in blobs else None
                    ):
                        rehashed.append((node.uri, fingerprint))
                        run.nodes_unchanged += 1
                        continue
                    if old is not None:
                        revised_uris.append(node.uri)
                        run.nodes_revised += 1
                        if moved_only(old, node, blobs[node.uri][3] if node.uri in blobs else None):
                            moved.append(node)
                    else:
                        run.nodes_added += 1
                    inserts.append((node, fingerprint, old.valid_from if old else None))
                retired = [uri for uri in previous if uri not in new_uris]
                run.nodes_retired = len(retired)
            if index.graph is not None:
                with _phase(run, "graph"):
                    # Committed before the graph is written; taken back with the nodes.
                    agrees = index.nodes.begin_writing("graph", resource_id)
                    loader = self._write_graph(
                        index.graph,
                        resource_id,
                        inserts,
                        retired,
                        _parse(valid_from),
                        committed=index.nodes.has_resource(resource_id),
                        agrees=agrees,
                    )
            with _phase(run, "nodes"):
                index.nodes.begin()
                index.nodes.end_writing("graph", resource_id)
                for store, handle in (("graph", index.graph), ("vector", index.vectors)):
                    if handle is None:  # turned off: rebuilt from here once it is back
                        index.nodes.mark_gap(store, resource_id)
                index.nodes.retire(retired + revised_uris, valid_until=valid_from)
                index.nodes.set_fingerprints(rehashed)
                index.nodes.insert(inserts, valid_from=valid_from, blobs=blobs)
            if index.vectors is not None:
                with _phase(run, "vectors"):
                    # A moved node's vector stays: only its lines change (an edit at the
                    # top of many files would otherwise rewrite the whole vector index).
                    kept = {n.uri for n in moved} - {n.uri for n in index.vectors.relocate(moved)}
                    index.vectors.remove([u for u in retired + revised_uris if u not in kept])
                    ready = {
                        uri: vector
                        for a in changed
                        if a.vectors and index.vectors.embedder_name == a.vectors_from
                        for uri, vector in a.vectors.items()
                    }
                    added = [n for n, _, _ in inserts if n.uri not in kept]
                    index.vectors.add(added, resource_id, ready)
            with _phase(run, "commit"):
                # Before the wait for the graph, whose loader still runs: the vectors and
                # the text index may be ahead of the node store after a crash, as between
                # any two commits. The node store commits only once the graph holds its
                # nodes, so a run stopped before that is redone whole by the next one.
                if index.vectors is not None:
                    index.vectors.commit()
                if text_commit is not None:
                    text_commit.result()
                elif index.text is not None and not text_anew:
                    index.text.commit()
            if index.text is not None and text_anew:
                # From the node store's transaction, which holds this run's nodes already;
                # committed before it, as the text index always is.
                with _phase(run, "text-compact"):
                    written = _write_text_anew(index)
                run.rebuilt.append(
                    f"text: {written} documents written anew from the node store, as the run "
                    "changed most of the files"
                )
            if loader is not None:
                with _phase(run, "graph-wait"):
                    pending, loader = loader, None
                    pending.finish()
            with _phase(run, "commit"):
                index.nodes.commit()
        except BaseException:
            if loader is not None:
                loader.abort()
            raise

    @staticmethod
    def _rebuild(index: ProjectIndex, resource_id: str, stores: list[str], run: IndexRun) -> None:
        """Bring the graph or the vectors, off in earlier runs, up to the node store (the
        spec's progressive enhancement: a store added later covers what came before it)."""
        nodes = index.nodes
        if "graph" in stores and index.graph is not None:
            with _phase(run, "graph-rebuild"):
                count = _load_graph_from_nodes(index.graph, nodes, resource_id)
            run.rebuilt.append(
                f"graph: {count} current nodes loaded from the node store, as it was off "
                '(index.graph.backend = "none") for earlier runs; its history starts now'
            )
        if "vector" in stores and index.vectors is not None:
            with _phase(run, "vector-rebuild"):
                count = rebuild_from_nodes(index.vectors, nodes)
            run.rebuilt.append(
                f"vectors: {count} nodes embedded from the node store, as there were none "
                "for earlier runs"
            )
        if "graph" in stores:
            nodes.begin()  # the vectors' gaps were cleared by their rebuild
            nodes.clear_gaps(["graph"], [resource_id])
            nodes.commit()

    @staticmethod
    def _write_graph(
        graph: Any,
        resource_id: str,
        inserts: Sequence[tuple[UKONode, str, str | None]],
        retired: Sequence[str],
        valid_from: datetime,
        *,
        committed: bool = True,
        agrees: bool = False,
    ) -> Any | None:
        """Revise the nodes whose URI is current, retire the nodes that went, then add
        the new ones; a big load of new nodes goes on in a child process.

        ``committed`` says whether the node store holds any version of the resource;
        ``agrees`` whether the graph holds no version the node store lacks (see
        ``NodeStore.begin_writing``). Then a node new to the node store is new to the
        graph too; otherwise every node is looked up there first, so a store left ahead
        of the node store by a run stopped between their commits is repaired, not
        duplicated. Returns the background load to finish before committing, if one
        was started.
        """
        if not committed and graph.has_resource(resource_id):
            # Left by a first run that was stopped before the node store committed (the
            # node store is the record): start afresh, and bulk-load again instead of
            # checking each node against the leftovers (three times slower).
            graph.delete_resource(resource_id)
        # A resource new to the graph (a cold index) skips the per-node check for a
        # current version, as do the new nodes of a graph that agrees with the node
        # store (a lookup each: 14 s of a refresh that brought back 125k nodes).
        fresh = not graph.has_resource(resource_id)
        if fresh:
            revised, new, retiring = [], [n for n, _, _ in inserts], []
        elif agrees:
            revised = [n for n, _, since in inserts if since is not None]
            new = [n for n, _, since in inserts if since is None]
            retiring = list(retired)
        else:
            revised, new, retiring = [n for n, _, _ in inserts], [], list(retired)
        total, done = len(revised) + len(retiring) + len(new), 0
        # Batches keep the TriG text of one call small (a 10k-file run has millions
        # of quads), and tell the progress (a node revised or retired takes about 1 ms).
        for start in range(0, len(revised), _GRAPH_BATCH):
            batch = revised[start : start + _GRAPH_BATCH]
            graph.add_nodes(batch, valid_from=valid_from)
            done += len(batch)
            _phase_progress("graph", done, total)
        # After the revisions: a parent's old version still contains its children that
        # go, in history.
        for start in range(0, len(retiring), _GRAPH_BATCH):
            uris = retiring[start : start + _GRAPH_BATCH]
            graph.retire(uris, valid_until=valid_from)
            done += len(uris)
            _phase_progress("graph", done, total)
        # Last: the background load has the store to itself until it is finished.
        loader = graph.load_in_background() if len(new) >= _BACKGROUND_GRAPH_NODES else None
        try:
            for start in range(0, len(new), _GRAPH_BATCH):
                batch = new[start : start + _GRAPH_BATCH]
                if loader is not None:
                    loader.add_nodes(batch, valid_from=valid_from)
                else:
                    graph.add_nodes(batch, valid_from=valid_from, fresh=True)
                done += len(batch)
                _phase_progress("graph", done, total)
            if loader is not None:
                loader.end()
        except BaseException:  # a full disk, Ctrl-C: the caller never gets the loader
            if loader is not None:
                loader.abort()
            raise
        return loader

    def _record_files(
        self,
        index_id: str,
        known: dict[str, Any],
        changed: Sequence[FileAnalysis],
        touched_only: Sequence[FileAnalysis],
        removed: Sequence[str],
        by_path: dict[str, Any],
        run: IndexRun,
    ) -> list[Mapping[str, Any]]:
        with self.database.engine.begin() as conn:
            if removed:
                conn.execute(
                    delete(indexed_files).where(
                        indexed_files.c.index_id == index_id, indexed_files.c.path.in_(removed)
                    )
                )
            rewritten = [a.relative for a in changed if a.relative in known]
            for start in range(0, len(rewritten), 500):
                conn.execute(
                    delete(indexed_files).where(
                        indexed_files.c.index_id == index_id,
                        indexed_files.c.path.in_(rewritten[start : start + 500]),
                    )
                )
            rows = [
                {
                    "index_id": index_id,
                    "path": a.relative,
                    "content_hash": a.content_hash,
                    "token_count": a.token_estimate,
                    "size_bytes": a.size,
                    "language": a.language,
                    "analyzer": a.analyzer,
                    "node_count": len(a.result.nodes),
                    "errors": "\n".join(a.result.errors) or None,
                    "last_modified": str(by_path[a.relative].mtime_ns),
                }
                for a in changed
            ]
            if rows:
                conn.execute(insert(indexed_files), rows)
            touched = {a.relative: str(by_path[a.relative].mtime_ns) for a in touched_only}
            for path, mtime in touched.items():
                conn.execute(
                    update(indexed_files)
                    .where(indexed_files.c.index_id == index_id, indexed_files.c.path == path)
                    .values(last_modified=mtime)
                )
        # The table now holds what the run read before and wrote since (the index is
        # claimed: no other writer): its rows are those, not read back (12k rows: 60 ms).
        written = {row["path"]: row for row in rows}
        gone = set(removed)
        held: list[Mapping[str, Any]] = [
            {**row, "last_modified": touched[path]} if path in touched else row
            for path, row in known.items()
            if path not in written and path not in gone
        ]
        held.extend(rows)
        return held

    def _finish(
        self, index_id: str, files: Sequence[Mapping[str, Any]], run: IndexRun, analyzers: str
    ) -> IndexMetadata:
        """Mark the index ready with the totals of ``files`` (its ``indexed_files`` rows)."""
        # The primary language is a programming language when there is code at all: a
        # project's prose (Flask's 84 .rst pages) outweighs its code more often than not.
        tokens: Counter[str] = Counter()
        code: Counter[str] = Counter()
        for f in files:
            language = f["language"]
            if language != "unknown":
                tokens[language] += f["token_count"]
                if language in CODE_LANGUAGES:
                    code[language] += f["token_count"]
        values = {
            "status": "ready",
            "error_message": None,
            "worker_pid": None,
            "indexed_at": _now().isoformat(),
            "file_count": len(files),
            "node_count": sum(f["node_count"] for f in files),
            "error_count": sum(1 for f in files if f["errors"]),
            "token_estimate": sum(f["token_count"] for f in files),
            "primary_language": (code or tokens or Counter(["unknown"])).most_common(1)[0][0],
            "analyzers": analyzers,
        }
        with self.database.engine.begin() as conn:
            conn.execute(
                update(repo_indexes).where(repo_indexes.c.index_id == index_id).values(**values)
            )
            row = (
                conn.execute(select(repo_indexes).where(repo_indexes.c.index_id == index_id))
                .mappings()
                .one()
            )
        return _metadata(row)

    def _project_of(self, resource_id: str) -> str:
        indexes = [m for m in self.list_indexes() if m.resource_id == resource_id]
        if not indexes:
            raise ValidationError(f"resource {resource_id} has not been indexed; give a project")
        return indexes[0].project_name


def _stores_to_rebuild(registry: Any, config: Any, project: str, resource_id: str) -> list[str]:
    """The optional stores that are on now and missed changes while they were off.

    The vector index is one per project: a gap of any resource rebuilds it whole.
    """
    location = paths.index_dir("graph", project) / "nodes.db"
    wanted = [s for s in STORES_WITH_GAPS if backend_class(registry, config, s) is not None]
    if "vector" in wanted:
        try:
            if choose_embedder(registry, config) is None:  # a backend, nothing to embed with
                wanted.remove("vector")
        except CleverAgentsError:
            wanted.remove("vector")  # reported when the vector index is opened
    if not wanted or not location.exists():
        return []
    store = NodeStore(location)
    try:
        return [
            s for s in wanted if (resource_id in store.gaps(s) if s == "graph" else store.gaps(s))
        ]
    finally:
        store.close()


def _load_graph_from_nodes(graph: Any, nodes: NodeStore, resource_id: str) -> int:
    """Replace ``resource_id``'s graph by the current nodes of the node store, each
    stamped with the time its version became current; returns the nodes loaded."""
    if graph.has_resource(resource_id):
        graph.delete_resource(resource_id)
    total = nodes.count(resource_id)
    loader = graph.load_in_background() if total >= _BACKGROUND_GRAPH_NODES else None
    loaded = 0
    try:
        batch: list[UKONode] = []
        stamp = ""
        for stored in nodes.iter_current_versions(resource_id):
            if batch and (stored.valid_from != stamp or len(batch) >= _GRAPH_BATCH):
                _add_to_graph(graph, loader, batch, stamp)
                loaded += len(batch)
                batch = []
            stamp = stored.valid_from
            batch.append(stored.node)
        if batch:
            _add_to_graph(graph, loader, batch, stamp)
            loaded += len(batch)
        if loader is not None:
            pending, loader = loader, None
            pending.finish()
    except BaseException:
        if loader is not None:
            loader.abort()
        raise
    return loaded


def _add_to_graph(graph: Any, loader: Any, batch: list[UKONode], stamp: str) -> None:
    if loader is not None:
        loader.add_nodes(batch, valid_from=_parse(stamp))
    else:
        graph.add_nodes(batch, valid_from=_parse(stamp), fresh=True)


def _parse(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp)


def _describe(exc: BaseException) -> str:
    return getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"


def _metadata(row: Any) -> IndexMetadata:
    return IndexMetadata(
        index_id=row["index_id"],
        resource_id=row["resource_id"],
        project_name=row["project_name"],
        root_path=row["root_path"],
        indexed_at=_parse(row["indexed_at"]),
        file_count=row["file_count"],
        node_count=row["node_count"],
        error_count=row["error_count"],
        token_estimate=row["token_estimate"],
        primary_language=row["primary_language"],
        status=row["status"],
        error_message=row["error_message"],
        analyzers=row["analyzers"],
    )


def _reshaped(nodes: NodeStore, resource_id: str, outcome: FileAnalysis) -> bool:
    """Whether an analysis of a file whose text did not change says other than its stored
    nodes: other nodes, or nodes with other names or properties (edges aside, which
    resolution rewrites)."""
    stored = nodes.current_fingerprints(resource_id, [outcome.relative])
    found = outcome.result.nodes
    if stored.keys() != {n.uri for n in found}:
        return True
    for node in found:
        blobs = outcome.store_blobs.get(node.uri)
        content = blobs[2] if blobs else content_digest(node)
        earlier = stored[node.uri]
        if not same_content(earlier.fingerprint, content) and not same_as_earlier(
            earlier, node, blobs[3] if blobs else None
        ):
            return True
    return False


def _file_stats(known: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
    """Path -> (size, mtime_ns) of the files the last run indexed."""
    stats: dict[str, tuple[int, int]] = {}
    for path, row in known.items():
        try:
            stats[path] = (int(row["size_bytes"]), int(row["last_modified"]))
        except (TypeError, ValueError):
            continue  # an odd row: that file is sniffed again
    return stats
