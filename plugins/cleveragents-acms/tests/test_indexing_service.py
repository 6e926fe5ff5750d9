"""RepoIndexingService on real code: full and incremental runs, revisions, isolation, faults."""

from __future__ import annotations

import errno
import os
import random
import re
import shutil
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

import cleveragents
from cleveragents.config import load_config
from cleveragents.models.uko import node_uri
from cleveragents.plugins import PluginHost
from cleveragents.storage.database import Database
from cleveragents_acms.indexing.models import IndexRun
from cleveragents_acms.indexing.project_index import ProjectIndex
from cleveragents_acms.indexing.service import RepoIndexingService
from cleveragents_acms.ontology.namespaces import UKO

CORE_SOURCES = Path(cleveragents.__file__).parent
RESOURCE_A = "01JA0000000000000000000000"
RESOURCE_B = "01JB0000000000000000000000"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A copy of the kernel's own sources plus a few awkward files."""
    root = tmp_path / "repo"
    shutil.copytree(
        CORE_SOURCES, root / "cleveragents", ignore=shutil.ignore_patterns("__pycache__")
    )
    (root / "README.md").write_text("# Demo\n\n## Usage\n\nRun `cleveragents index`.\n")
    (root / "broken.py").write_text("def ok():\n    return 1\n\ndef broken(:\n    pass\n")
    (root / "latin1.py").write_bytes(b"# caf\xe9\nVALUE = 1\n")
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00binary")
    return root


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RepoIndexingService]:
    """A service over a fresh home, with the plugins installed in this environment."""
    monkeypatch.setenv("CLEVERAGENTS_HOME", str(tmp_path / "home"))
    host = PluginHost.load(env={})
    config = load_config(cwd=tmp_path, env={})
    database = Database.for_sqlite_file(tmp_path / "home" / "cleveragents.db")
    yield RepoIndexingService(database, host.registry, config, workers=2)
    database.dispose()


def _search(service: RepoIndexingService, project: str, query: str, scope: set[str]) -> list[Any]:
    index = ProjectIndex.open(project, service.registry, service.config, create=False)
    try:
        return index.text.search(query, scope=frozenset(scope), max_results=20)
    finally:
        index.close()


def test_a_home_made_again_in_the_same_process_gets_its_tables_again(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ACMS tables are created per database handle: a home deleted and made again
    while the process runs (a server, a test) is migrated again, not taken as done."""
    home = tmp_path / "home"
    monkeypatch.setenv("CLEVERAGENTS_HOME", str(home))
    host = PluginHost.load(env={})
    config = load_config(cwd=tmp_path, env={})
    for attempt in range(2):
        home.mkdir()
        database = Database.for_sqlite_file(home / "cleveragents.db")
        try:
            service = RepoIndexingService(database, host.registry, config, workers=1)
            result = service.index_resource(RESOURCE_A, corpus, project="demo")
            assert result.metadata.status == "ready", attempt
            status = service.get_index_status(RESOURCE_A)
            assert status is not None and status.status == "ready"
        finally:
            database.dispose()
        shutil.rmtree(home)


def test_full_index_of_real_code(service: RepoIndexingService, corpus: Path) -> None:
    """Every analysable file is indexed; bad files are recorded, not fatal."""
    result = service.index_resource(RESOURCE_A, corpus, project="demo")
    meta = result.metadata
    assert meta.status == "ready"
    assert meta.primary_language == "python"
    py_files = {p.relative_to(corpus).as_posix() for p in corpus.rglob("*.py")}
    indexed = {f.path for f in result.files}
    assert py_files <= indexed
    assert "image.png" not in indexed
    assert meta.node_count > 300
    errors = {f.path: f.errors for f in result.files if f.errors}
    assert "broken.py" in errors
    assert any("UTF-8" in e for e in errors["latin1.py"])
    hits = _search(service, "demo", "PluginHost", {RESOURCE_A})
    assert any(h.metadata.get("path") == "cleveragents/plugins.py" for h in hits)


def test_a_refresh_of_one_file_resolves_its_edges_as_the_cold_index_did(
    service: RepoIndexingService, corpus: Path
) -> None:
    """Refreshing a file looks its names up among the stored nodes: its imports of other
    modules (``from cleveragents import paths``) resolve to them again instead of staying
    symbolic, so the edges are those of the cold index."""

    def edges() -> dict[str, list[tuple[str, str]]]:
        index = ProjectIndex.open("demo", service.registry, service.config, create=False)
        try:
            return {n.uri: sorted(n.edges) for n in index.nodes.iter_current([RESOURCE_A])}
        finally:
            index.close()

    service.index_resource(RESOURCE_A, corpus, project="demo")
    cold = edges()
    touched = sorted((corpus / "cleveragents" / "cli").glob("*.py"))[:4]
    for path in touched:
        path.write_text(path.read_text() + "\n# touched\n")
        run = service.index_resource(RESOURCE_A, corpus, project="demo").run
        assert run is not None and run.files_analyzed == 1
    refreshed = edges()
    module_edges = [
        target
        for uri, found in cold.items()
        if any(f"/cleveragents/cli/{p.name}" in uri for p in touched)
        for _, target in found
        if target.endswith(".py")  # a whole module, resolved
    ]
    assert module_edges  # the touched files import modules of the package
    assert refreshed == cold


def _current_edges(service: RepoIndexingService, project: str, resource: str) -> dict[str, Any]:
    """Every current node's name and edges, with the resource's ULID taken out."""
    index = ProjectIndex.open(project, service.registry, service.config, create=False)
    try:
        return {
            n.uri.replace(resource, "R"): (
                n.name,
                sorted(t.replace(resource, "R") for _, t in n.edges),
            )
            for n in index.nodes.iter_current([resource])
        }
    finally:
        index.close()


def _assert_text_written_anew(service: RepoIndexingService, run: IndexRun) -> None:
    """The run wrote the text index anew and said so: it holds one document a current
    node, and no replaced one."""
    assert "text-compact" in run.phases
    assert any(line.startswith("text: ") for line in run.rebuilt)
    index = ProjectIndex.open("demo", service.registry, service.config, create=False)
    try:
        assert index.text.replaced_count() == 0
        assert index.text.count(RESOURCE_A) == index.nodes.count(RESOURCE_A)
    finally:
        index.close()


def _refreshed(
    service: RepoIndexingService, root: Path, project: str
) -> tuple[IndexRun, dict[str, Any]]:
    """Index ``root`` again (a refresh): the run, and :func:`_current_edges` after it."""
    run = service.index_resource(RESOURCE_A, root, project=project).run
    assert run is not None
    return run, _current_edges(service, project, RESOURCE_A)


def _refreshed_as_cold(
    service: RepoIndexingService, root: Path, project: str, home: Path, monkeypatch: Any
) -> tuple[IndexRun, dict[str, Any]]:
    """:func:`_refreshed`, checked to give what a cold index of ``root`` into ``home``
    gives."""
    run, edges = _refreshed(service, root, project)
    assert edges == _cold_edges(service, root, project, home, monkeypatch)
    return run, edges


_APP = "https://cleveragents.ai/r/R/app/"


def _indexed_reaching(
    service: RepoIndexingService,
    root: Path,
    project: str,
    files: dict[str, str],
    edge: tuple[str, str],
) -> None:
    """Write ``files`` under ``root``, index it and check the caller reaches the target
    (``edge``: their URIs after ``_APP``)."""
    _write_tree(root, files)
    service.index_resource(RESOURCE_A, root, project=project)
    caller, target = (_APP + name for name in edge)
    assert target in _current_edges(service, project, RESOURCE_A)[caller][1]


def _reached_after_each_step(
    service: RepoIndexingService,
    root: Path,
    project: str,
    monkeypatch: Any,
    caller: str,
    steps: list[tuple[Path, str, str, bool]],
) -> None:
    """Write each step's ``(file, text, target, whether the caller reaches it)``,
    refresh, and check the refresh gives what a cold index gives and whether the
    ``caller`` reaches the target (both named after ``_APP``)."""
    for number, (path, text, target, reaches) in enumerate(steps):
        path.write_text(text)
        home = root.parent / f"cold{number}"
        _, edges = _refreshed_as_cold(service, root, project, home, monkeypatch)
        assert (_APP + target in edges[_APP + caller][1]) is reaches, number


def _write_tree(root: Path, files: dict[str, str]) -> None:
    """Write each ``relative path -> text`` under ``root``, folders made as needed."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _crate_folders(root: Path, *names: str) -> list[Path]:
    """A Rust workspace's crates under ``root``: each one's ``crates/<name>/src``, made."""
    folders = [root / "crates" / name / "src" for name in names]
    for folder in folders:
        folder.mkdir(parents=True)
    return folders


def _cold_edges(
    service: RepoIndexingService,
    root: Path,
    project: str,
    home: Path,
    monkeypatch: Any,
    read: Callable[[RepoIndexingService, str], Any] | None = None,
) -> Any:
    """What ``read(service, project)`` (:func:`_current_edges` by default) gives of a
    cold index of ``root`` into a home of its own."""
    own = home.parent / "home"
    monkeypatch.setenv("CLEVERAGENTS_HOME", str(home))
    database = Database.for_sqlite_file(home / "cleveragents.db")
    try:
        cold = RepoIndexingService(database, service.registry, service.config, workers=2)
        cold.index_resource(RESOURCE_A, root, project=project)
        if read is None:
            return _current_edges(cold, project, RESOURCE_A)
        return read(cold, project)
    finally:
        database.dispose()
        monkeypatch.setenv("CLEVERAGENTS_HOME", str(own))


def test_a_refresh_after_moves_and_deletions_gives_what_a_cold_index_gives(
    service: RepoIndexingService, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files whose names changed meaning are analysed again, though their text did not:
    those with edges to a definition that moved, was renamed or deleted (else the edges
    would point at retired versions), and the modules of a package whose ``__init__.py``
    went (their dotted names change). Nodes of a deleted file answer no name."""
    service.index_resource(RESOURCE_A, corpus, project="demo")
    package = corpus / "cleveragents"
    commands = package / "defaults" / "commands.py"
    commands.write_text(commands.read_text() + "\n# analysed in this process, as a package\n")
    service.index_resource(RESOURCE_A, corpus, project="demo")
    (package / "paths.py").rename(corpus / "paths.py")  # imported all over the package
    (package / "defaults" / "__init__.py").unlink()
    registry = package / "registry.py"
    registry.write_text(registry.read_text().replace("def import_reference(", "def import_ref("))
    os.utime(package / "config.py")  # read again for its time stamp, and a dependent too
    run = service.index_resource(RESOURCE_A, corpus, project="demo").run
    assert run is not None
    defaults = {p.relative_to(corpus).as_posix() for p in (package / "defaults").glob("*.py")}
    assert defaults and run.files_removed == 2  # paths.py's old place, defaults/__init__.py
    assert run.files_dependent >= len(defaults) + 3
    assert run.files_analyzed == 2 + run.files_dependent  # paths.py's new place, registry.py
    refreshed = _current_edges(service, "demo", RESOURCE_A)
    # Named afresh, though this process saw the folder as a package before.
    assert refreshed["https://cleveragents.ai/r/R/cleveragents/defaults/commands.py"][0] == (
        "commands"
    )
    gone = "https://cleveragents.ai/r/R/cleveragents/paths.py"
    assert not any(t.startswith(gone) for _, targets in refreshed.values() for t in targets)
    assert not any(
        t.endswith("registry.py#import_reference") for _, ts in refreshed.values() for t in ts
    )

    assert refreshed == _cold_edges(service, corpus, "demo", tmp_path / "cold", monkeypatch)


def test_a_refresh_that_changed_most_files_reads_the_others_instead_of_searching(
    service: RepoIndexingService, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As after a release pulled over the tree: with the changed files twice the others or
    more, the others are analysed too (no search for the dependents), the text index is
    written anew once from the node store, and the index is what a cold index is, edges of
    the files left as they were included."""
    import cleveragents_acms.indexing.service as service_module

    service.index_resource(RESOURCE_A, corpus, project="demo")
    files = sorted(p for p in corpus.rglob("*.py") if p.name != "latin1.py")
    errors = corpus / "cleveragents" / "errors.py"
    # A definition some of the files left as they are use goes (their edges change).
    users = [p for p in files if p != errors and "ConfigurationError" in p.read_text()]
    kept = [p for p in files if p.name != "__init__.py"][::4]
    kept = [p for p in {*kept, users[0]} if p != errors]
    for path in files:
        if path not in kept:
            path.write_text(path.read_text() + "\n\ndef pulled_in():\n    return 1\n")
    written = {p.relative_to(corpus).as_posix() for p in files if p not in kept}
    errors.write_text(errors.read_text().replace("class ConfigurationError(", "class ConfigError("))

    def no_search(*args: Any, **kwargs: Any) -> set[str]:
        raise AssertionError("searched for dependents")

    monkeypatch.setattr(service_module, "dependent_files", no_search)
    run = service.index_resource(RESOURCE_A, corpus, project="demo").run
    assert run is not None
    assert run.files_analyzed == run.files_seen  # every file
    assert run.files_dependent == run.files_seen - len(written)
    _assert_text_written_anew(service, run)
    hits = _search(service, "demo", "pulled_in", {RESOURCE_A})
    assert "cleveragents/errors.py" in {
        h.metadata["path"] for h in hits if h.metadata.get("name") == "pulled_in"
    }
    refreshed = _current_edges(service, "demo", RESOURCE_A)
    assert not any(
        t.endswith("errors.py#ConfigurationError") for _, ts in refreshed.values() for t in ts
    )
    assert refreshed == _cold_edges(service, corpus, "demo", tmp_path / "cold", monkeypatch)


def test_a_text_backend_that_cannot_be_written_anew_gets_the_changed_files_one_by_one(
    service: RepoIndexingService, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backend without ``replaced_count`` (a plugin's) is never written anew: a refresh
    that changed most files writes their documents file by file, as before."""
    from cleveragents_acms.backends.text import TantivyTextBackend

    service.index_resource(RESOURCE_A, corpus, project="demo")
    monkeypatch.delattr(TantivyTextBackend, "replaced_count")
    for path in corpus.rglob("*.py"):
        if path.name != "latin1.py":
            path.write_text(path.read_text() + "\n\ndef pulled_in_one_by_one():\n    return 1\n")
    run = service.index_resource(RESOURCE_A, corpus, project="demo").run
    assert run is not None and "text-compact" not in run.phases
    hits = _search(service, "demo", "pulled_in_one_by_one", {RESOURCE_A})
    assert len({h.metadata["path"] for h in hits}) == len(hits) == 20  # as many as asked
    index = ProjectIndex.open("demo", service.registry, service.config, create=False)
    try:
        assert index.text.count(RESOURCE_A) == index.nodes.count(RESOURCE_A)
    finally:
        index.close()


@pytest.mark.parametrize("graph", ["oxigraph", "none"])
def test_a_reference_saved_before_its_definition_resolves_once_it_comes(
    service: RepoIndexingService, corpus: Path, tmp_path: Path, graph: str
) -> None:
    """A caller indexed before the module it imports exists names it unresolved; the
    refresh that adds the module analyses the caller again, so its edges resolve, found
    by the graph's index or, with the graph off, by a scan of the node store."""
    config = load_config(cwd=tmp_path, env={"CLEVERAGENTS_INDEX__GRAPH__BACKEND": graph})
    service = RepoIndexingService(service.database, service.registry, config, workers=2)
    package = corpus / "cleveragents"
    (package / "caller.py").write_text(
        "from cleveragents.later import later_fn\n\n\ndef use():\n    return later_fn()\n"
    )
    service.index_resource(RESOURCE_A, corpus, project="demo")
    (package / "later.py").write_text("def later_fn():\n    return 1\n")
    run, edges = _refreshed(service, corpus, "demo")
    assert run.files_analyzed == 2 and run.files_dependent == 1
    assert edges["https://cleveragents.ai/r/R/cleveragents/caller.py#use"][1] == [
        "https://cleveragents.ai/r/R/cleveragents/later.py#later_fn"
    ]


def test_a_second_definition_of_a_name_makes_references_by_that_name_ambiguous(
    service: RepoIndexingService, corpus: Path
) -> None:
    """A call by bare name resolved to the one function of that name; once a refresh adds
    a second one, the caller is analysed again and the call is left unresolved, as a
    cold index leaves it (it cannot tell which one is meant)."""
    package = corpus / "cleveragents"
    (package / "helpers.py").write_text("def only_helper():\n    return 1\n")
    (package / "user.py").write_text("def use():\n    return only_helper()\n")
    service.index_resource(RESOURCE_A, corpus, project="demo")
    use = "https://cleveragents.ai/r/R/cleveragents/user.py#use"
    resolved = ["https://cleveragents.ai/r/R/cleveragents/helpers.py#only_helper"]
    assert _current_edges(service, "demo", RESOURCE_A)[use][1] == resolved
    (package / "other.py").write_text("def only_helper():\n    return 2\n")
    run = service.index_resource(RESOURCE_A, corpus, project="demo").run
    assert run is not None and run.files_dependent == 1
    assert _current_edges(service, "demo", RESOURCE_A)[use][1] == ["symbol:only_helper"]
    (package / "other.py").unlink()
    run = service.index_resource(RESOURCE_A, corpus, project="demo").run
    assert run is not None and run.files_dependent == 1
    assert _current_edges(service, "demo", RESOURCE_A)[use][1] == resolved


def test_a_go_call_to_a_function_of_its_package_resolves_once_the_function_comes_back(
    service: RepoIndexingService, tmp_path: Path
) -> None:
    """A Go call by plain name is a guess that the folder's package defines it; no edge is
    kept while nothing does. When the defining file comes back, the caller's folder is
    analysed again, so the call resolves as in a cold index."""
    root = tmp_path / "gorepo"
    (root / "cmd").mkdir(parents=True)
    (root / "cmd" / "main.go").write_text("package main\n\nfunc main() { helper() }\n")
    helper = root / "cmd" / "helper.go"
    helper.write_text("package main\n\nfunc helper() int { return 1 }\n")
    service.index_resource(RESOURCE_A, root, project="go")
    main = "https://cleveragents.ai/r/R/cmd/main.go#main"
    resolved = ["https://cleveragents.ai/r/R/cmd/helper.go#helper"]
    assert _current_edges(service, "go", RESOURCE_A)[main][1] == resolved
    saved = helper.read_text()
    helper.unlink()
    service.index_resource(RESOURCE_A, root, project="go")
    assert _current_edges(service, "go", RESOURCE_A)[main][1] == []
    helper.write_text(saved)
    run = service.index_resource(RESOURCE_A, root, project="go").run
    assert run is not None and run.files_dependent == 1
    assert _current_edges(service, "go", RESOURCE_A)[main][1] == resolved


def test_go_embedding_across_files_follows_the_embedded_type_s_changes(
    service: RepoIndexingService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A struct embedding a type another file of the package declares inherits from it,
    and a call on the receiver reaches the method promoted from it. When that method is
    renamed the call's edge goes; when it comes back, the embedding file is analysed
    again though its text did not change, and the edges are a cold index's."""
    root = tmp_path / "goembed"
    (root / "srv").mkdir(parents=True)
    (root / "go.mod").write_text("module example.com/emb\n\ngo 1.21\n")
    (root / "srv" / "server.go").write_text(
        "package srv\n\ntype Server struct {\n\t*Base\n\tport int\n}\n\n"
        "func (s *Server) Start() string { return s.Name() }\n"
    )
    base = root / "srv" / "base.go"
    base.write_text(
        "package srv\n\ntype Base struct{ name string }\n\n"
        "func (b *Base) Name() string { return b.name }\n"
    )
    service.index_resource(RESOURCE_A, root, project="embed")
    server = "https://cleveragents.ai/r/R/srv/server.go#Server"
    defined = "https://cleveragents.ai/r/R/srv/base.go#"
    edges = _current_edges(service, "embed", RESOURCE_A)
    assert edges[server][1] == [defined + "Base"] * 2  # inheritsFrom, dependsOn
    assert edges[server + ".Start"][1] == [defined + "Base.Name"]
    saved = base.read_text()
    base.write_text(saved.replace("Name()", "Title()"))
    _, edges = _refreshed(service, root, "embed")
    assert edges[server + ".Start"][1] == []
    base.write_text(saved)
    run, edges = _refreshed(service, root, "embed")
    assert run.files_dependent == 1
    assert edges[server + ".Start"][1] == [defined + "Base.Name"]
    assert edges == _cold_edges(service, root, "embed", tmp_path / "cold", monkeypatch)


def test_a_name_added_to_a_package_sends_only_the_files_that_guessed_it(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Java class used without an import, or a Go call by plain name, is a guess at the
    package's names. When a definition comes, only the package's files that made that
    guess are analysed again (each module node lists its guesses), not the whole
    package; the edges are still a cold index's."""
    root = tmp_path / "pkgs"
    java, go = root / "src" / "app", root / "cmd"
    java.mkdir(parents=True)
    go.mkdir(parents=True)
    for i in range(6):
        (java / f"Other{i}.java").write_text(
            f"package app;\n\nclass Other{i} {{\n    int v() {{ return Other{(i + 1) % 6}.w(); }}\n"
            "    static int w() { return 0; }\n}\n"
        )
        (go / f"other{i}.go").write_text(
            f"package main\n\nfunc other{i}() int {{ return other{(i + 1) % 6}() }}\n"
        )
    (java / "Caller.java").write_text(
        "package app;\n\nclass Caller {\n    int use() { return Later.later(); }\n}\n"
    )
    (go / "caller.go").write_text("package main\n\nfunc caller() int { return later() }\n")
    service.index_resource(RESOURCE_A, root, project="guesses")
    # A file indexed before module nodes listed their guesses may have made any of them.
    index = ProjectIndex.open("guesses", service.registry, service.config, create=False)
    try:
        index.nodes._db.execute(
            "UPDATE nodes SET properties = json_remove(properties, '$.package_guesses') "
            "WHERE path = 'cmd/other0.go' AND qualname = ''"
        )
    finally:
        index.close()
    (java / "Later.java").write_text(
        "package app;\n\nclass Later {\n    static int later() { return 3; }\n}\n"
    )
    (go / "later.go").write_text("package main\n\nfunc later() int { return 3 }\n")
    run, refreshed = _refreshed(service, root, "guesses")
    assert run.files_dependent == 3  # Caller.java, caller.go, other0.go
    assert refreshed["https://cleveragents.ai/r/R/src/app/Caller.java#Caller.use"][1] == [
        "https://cleveragents.ai/r/R/src/app/Later.java#Later.later"
    ]
    assert refreshed["https://cleveragents.ai/r/R/cmd/caller.go#caller"][1] == [
        "https://cleveragents.ai/r/R/cmd/later.go#later"
    ]
    assert refreshed == _cold_edges(service, root, "guesses", tmp_path / "cold", monkeypatch)


def test_go_imports_of_the_module_s_packages_resolve_by_the_go_mod_path(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Go package is named by its import path, the ``go.mod`` module's path and the
    folders below it: a call into another package of the module resolves. When the
    ``go.mod`` changes, a refresh renames every package below it, as a cold index does."""
    root = tmp_path / "gomod"
    (root / "doc").mkdir(parents=True)
    go_mod = root / "go.mod"
    go_mod.write_text("module example.com/tool\n\ngo 1.21\n")
    (root / "tool.go").write_text("package tool\n\nfunc Write(s string) int { return len(s) }\n")
    (root / "doc" / "gen.go").write_text(
        'package doc\n\nimport "example.com/tool"\n\nfunc Gen() int { return tool.Write("x") }\n'
    )
    service.index_resource(RESOURCE_A, root, project="gomod")
    gen = "https://cleveragents.ai/r/R/doc/gen.go#Gen"
    write = "https://cleveragents.ai/r/R/tool.go#Write"
    assert _current_edges(service, "gomod", RESOURCE_A)[gen][1] == [write]
    go_mod.write_text("module example.com/renamed\n\ngo 1.21\n")
    run, edges = _refreshed(service, root, "gomod")
    assert run.files_dependent == 2  # both Go files
    assert edges[gen][1] == ["symbol:example.com/tool.Write"]  # the old path names nothing
    assert edges == _cold_edges(service, root, "gomod", tmp_path / "cold", monkeypatch)
    go_mod.write_text("module example.com/tool\n")
    service.index_resource(RESOURCE_A, root, project="gomod")
    assert _current_edges(service, "gomod", RESOURCE_A)[gen][1] == [write]


def test_go_s_own_source_tree_and_vendored_packages_resolve_by_their_import_paths(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Go's standard library (its ``src`` folder, ``module std``) imports its packages by
    their folders alone (``"strings"``), and a package below a ``vendor`` folder is
    imported by the path below it (``"golang.org/x/net/idna"``): both calls resolve.
    With the module renamed, ``strings`` names nothing in the tree, as in a cold index."""
    root = tmp_path / "src"
    for folder in ("strings", "net/http", "vendor/golang.org/x/net/idna"):
        (root / folder).mkdir(parents=True)
    go_mod = root / "go.mod"
    go_mod.write_text("module std\n\ngo 1.19\n")
    (root / "strings" / "reader.go").write_text(
        "package strings\n\nfunc NewReader(s string) int { return len(s) }\n"
    )
    (root / "vendor/golang.org/x/net/idna" / "idna.go").write_text(
        "package idna\n\nfunc ToASCII(s string) string { return s }\n"
    )
    (root / "net/http" / "client.go").write_text(
        'package http\n\nimport (\n\t"strings"\n\n\t"golang.org/x/net/idna"\n)\n\n'
        "func Get(u string) int { return strings.NewReader(idna.ToASCII(u)) }\n"
    )
    service.index_resource(RESOURCE_A, root, project="gostd")
    get = "https://cleveragents.ai/r/R/net/http/client.go#Get"
    reader = "https://cleveragents.ai/r/R/strings/reader.go#NewReader"
    ascii = "https://cleveragents.ai/r/R/vendor/golang.org/x/net/idna/idna.go#ToASCII"
    assert _current_edges(service, "gostd", RESOURCE_A)[get][1] == sorted([reader, ascii])
    go_mod.write_text("module example.com/std\n")
    run, edges = _refreshed_as_cold(service, root, "gostd", tmp_path / "cold", monkeypatch)
    assert run.files_dependent == 3  # every Go file below the go.mod
    assert edges[get][1] == sorted([ascii, "symbol:strings.NewReader"])


def test_a_required_javascript_module_resolves_to_its_file(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``require("./view")`` and ``require("./router")`` name the modules ``lib/view.js``
    and ``lib/router/index.js``: the edges resolve to their module nodes, in a cold index,
    in a refresh of the requiring file alone, and once a module required before it
    existed comes."""
    lib = tmp_path / "web" / "lib"
    (lib / "router").mkdir(parents=True)
    (lib / "view.js").write_text(
        "function View(name) { this.name = name; }\nmodule.exports = View;\n"
    )
    app = lib / "app.js"
    app.write_text(
        "var View = require('./view');\nvar router = require('./router');\n"
        "function render(name) { return new View(name); }\n"
    )
    root = tmp_path / "web"
    service.index_resource(RESOURCE_A, root, project="web")
    module = "https://cleveragents.ai/r/R/lib/app.js"
    view = "https://cleveragents.ai/r/R/lib/view.js"
    assert _current_edges(service, "web", RESOURCE_A)[module][1] == [view, "symbol:lib.router"]
    app.write_text(app.read_text() + "function other() { return 1; }\n")
    service.index_resource(RESOURCE_A, root, project="web")  # app.js alone
    assert _current_edges(service, "web", RESOURCE_A)[module][1] == [view, "symbol:lib.router"]
    (lib / "router" / "index.js").write_text("function route() {}\nmodule.exports = route;\n")
    run, edges = _refreshed(service, root, "web")
    assert run.files_dependent == 1
    assert edges[module][1] == ["https://cleveragents.ai/r/R/lib/router/index.js", view]
    assert edges == _cold_edges(service, root, "web", tmp_path / "cold", monkeypatch)


def test_a_call_on_a_required_constructor_s_object_reaches_its_prototype_method(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``view.js`` says ``module.exports = View`` and declares ``View.prototype.render``;
    ``new View(name).render()`` in a file that requires it depends on ``View.render``.
    When the export goes, or comes back, a refresh moves the edge as a cold index would."""
    lib = tmp_path / "web" / "lib"
    lib.mkdir(parents=True)
    view = lib / "view.js"
    exported = (
        "function View(name) { this.name = name; }\n"
        "View.prototype.render = function render() { return this.name; };\n"
        "module.exports = View;\n"
    )
    view.write_text(exported)
    (lib / "app.js").write_text(
        "var View = require('./view');\n"
        "function show(name) {\n  var shown = new View(name);\n  return shown.render();\n}\n"
    )
    root = tmp_path / "web"
    service.index_resource(RESOURCE_A, root, project="web")
    show = "https://cleveragents.ai/r/R/lib/app.js#show"
    render = "https://cleveragents.ai/r/R/lib/view.js#View.render"
    assert render in _current_edges(service, "web", RESOURCE_A)[show][1]
    view.write_text(exported.replace("module.exports = View;", "module.exports = {};"))
    run, edges = _refreshed(service, root, "web")
    assert run.files_dependent == 1
    assert render not in edges[show][1] and "symbol:lib.view.render" in edges[show][1]
    assert edges == _cold_edges(service, root, "web", tmp_path / "cold", monkeypatch)
    view.write_text(exported)
    _, edges = _refreshed(service, root, "web")
    assert render in edges[show][1]
    assert edges == _cold_edges(service, root, "web", tmp_path / "cold2", monkeypatch)


def test_a_default_import_reaches_the_default_export_and_its_members(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``import Layer from "./layer"`` names what ``export default`` declares:
    ``new Layer()`` depends on the class and ``.match()`` on an object it made on its
    method, from ``export default class Layer { … }`` or ``export default Layer``; a
    refresh that drops the export moves the edges as a cold index would."""
    src = tmp_path / "web" / "src"
    src.mkdir(parents=True)
    layer = src / "layer.ts"
    declared = "export default class Layer {\n  match(path: string) { return path; }\n}\n"
    layer.write_text(declared)
    (src / "widgets").mkdir()
    (src / "widgets" / "index.ts").write_text("export default function make() { return 1; }\n")
    (src / "only.ts").write_text(  # names the class only: nothing else follows the export
        "import Layer from './layer';\nexport function made() { return new Layer(); }\n"
    )
    (src / "app.ts").write_text(
        "import Layer from './layer';\nimport make from './widgets';\n"
        "export function run(): string {\n  const l = new Layer();\n  make();\n"
        "  return l.match('/');\n}\n"
    )
    root = tmp_path / "web"
    service.index_resource(RESOURCE_A, root, project="web")
    run = "https://cleveragents.ai/r/R/src/app.ts#run"
    make = "https://cleveragents.ai/r/R/src/widgets/index.ts#make"  # a folder imported
    wanted = {
        "https://cleveragents.ai/r/R/src/layer.ts#Layer",
        "https://cleveragents.ai/r/R/src/layer.ts#Layer.match",
        make,
    }
    assert set(_current_edges(service, "web", RESOURCE_A)[run][1]) == wanted
    layer.write_text(declared.replace("export default class", "export class"))
    _, edges = _refreshed(service, root, "web")
    assert set(edges[run][1]) == {
        "symbol:src.layer.default",
        "symbol:src.layer.default.match",
        make,
    }
    assert edges == _cold_edges(service, root, "web", tmp_path / "cold", monkeypatch)
    layer.write_text(declared.replace("export default class", "class") + "export default Layer;\n")
    _, edges = _refreshed(service, root, "web")
    assert set(edges[run][1]) == wanted
    assert edges == _cold_edges(service, root, "web", tmp_path / "cold2", monkeypatch)


def test_an_overloaded_function_restored_is_resolved_by_a_refresh_as_by_a_cold_index(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A TypeScript function with overload signatures answers its name once (the
    implementation): when its file is deleted and restored, the caller left unresolved
    is analysed again and reaches the implementation, as in a cold index."""
    src = tmp_path / "ov" / "src"
    src.mkdir(parents=True)
    overloads = (
        "export function f(x: string): string;\n"
        "export function f(x: number): number;\n"
        "export function f(x: any) { return x; }\n"
    )
    (src / "a.ts").write_text(overloads)
    (src / "b.ts").write_text("import { f } from './a';\nexport function g() { return f(1); }\n")
    root = tmp_path / "ov"
    service.index_resource(RESOURCE_A, root, project="ov")
    g, f = "https://cleveragents.ai/r/R/src/b.ts#g", "https://cleveragents.ai/r/R/src/a.ts#f~3"
    assert _current_edges(service, "ov", RESOURCE_A)[g][1] == [f]
    (src / "a.ts").unlink()
    _, edges = _refreshed(service, root, "ov")
    assert edges[g][1] == ["symbol:src.a.f"]
    (src / "a.ts").write_text(overloads)
    run, edges = _refreshed(service, root, "ov")
    assert run.files_dependent == 1 and edges[g][1] == [f]
    assert edges == _cold_edges(service, root, "ov", tmp_path / "cold", monkeypatch)


def test_a_typescript_declaration_file_answers_for_its_module(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``import { Model } from "./model"`` reads ``model.d.ts``; of its namespace,
    interface and class ``Model`` (merged declarations), the class is what ``extends
    Model`` reaches. When the class goes, the interface answers, and a refresh gives
    what a cold index gives, the class gone and back."""
    src = tmp_path / "dts" / "src"
    src.mkdir(parents=True)
    declared = (
        "export declare namespace Model {\n  type Attrs = {};\n}\n"
        "export interface Model extends Model.Attrs {\n}\n"
        "export declare class Model {\n  select(name: string): Model[];\n}\n"
    )
    model = src / "model.d.ts"
    model.write_text(declared)
    (src / "view.ts").write_text(
        "import { Model } from './model';\n"
        "export class View extends Model {\n  show() { return this.select('a'); }\n}\n"
    )
    root = tmp_path / "dts"
    service.index_resource(RESOURCE_A, root, project="dts")
    view = "https://cleveragents.ai/r/R/src/view.ts#View"
    klass = "https://cleveragents.ai/r/R/src/model.d.ts#Model~3"
    interface = "https://cleveragents.ai/r/R/src/model.d.ts#Model~2"
    assert _current_edges(service, "dts", RESOURCE_A)[view][1] == [klass] * 2  # base, depends
    model.write_text(declared.split("export declare class")[0])
    run, edges = _refreshed_as_cold(service, root, "dts", tmp_path / "cold", monkeypatch)
    assert run.files_dependent == 1 and edges[view][1] == [interface] * 2
    model.write_text(declared)
    _, edges = _refreshed_as_cold(service, root, "dts", tmp_path / "cold2", monkeypatch)
    assert edges[view][1] == [klass] * 2


def test_typescript_names_resolve_through_the_modules_that_export_them(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``import { Model, build, shapes, Deep } from "./lib"`` reaches the definitions
    ``lib/index.ts`` exports from other modules (``export *``, ``export * as``, ``export {
    make as build }``, and on through ``sub/index.ts``). Every refresh that changes what
    the exports give (one dropped and restored, a second ``export *`` that makes a name
    ambiguous, a definition two modules away gone and back) leaves a cold index's edges."""
    lib = tmp_path / "tsb" / "src" / "lib"
    (lib / "sub").mkdir(parents=True)
    barrel = (
        'export * from "./model";\nexport * as shapes from "./shapes";\n'
        'export { make as build } from "./factory";\nexport * from "./sub";\n'
    )
    (lib / "index.ts").write_text(barrel)
    (lib / "model.ts").write_text("export class Model {\n  select(n: string) { return n; }\n}\n")
    (lib / "shapes.ts").write_text("export function circle(r: number) { return r; }\n")
    (lib / "factory.ts").write_text("export function make() { return 1; }\n")
    (lib / "sub" / "index.ts").write_text('export { Deep } from "./deep";\n')
    deep = "export class Deep {\n  run() {}\n}\n"
    (lib / "sub" / "deep.ts").write_text(deep)
    (lib.parent / "app.ts").write_text(
        'import { Model, build, shapes, Deep } from "./lib";\n'
        "export class View extends Model {\n"
        '  show() { build(); shapes.circle(2); new Deep(); return this.select("a"); }\n}\n'
    )
    root = tmp_path / "tsb"
    service.index_resource(RESOURCE_A, root, project="tsb")
    base = "https://cleveragents.ai/r/R/src/"
    view, show = base + "app.ts#View", base + "app.ts#View.show"
    model = base + "lib/model.ts#Model"
    called = [
        base + "lib/factory.ts#make",
        base + "lib/model.ts#Model.select",
        base + "lib/shapes.ts#circle",
        base + "lib/sub/deep.ts#Deep",
    ]
    edges = _current_edges(service, "tsb", RESOURCE_A)
    assert edges[view][1] == [model] * 2 and edges[show][1] == called

    def refreshed_as_cold(name: str) -> dict[str, Any]:
        run, edges = _refreshed_as_cold(service, root, "tsb", tmp_path / name, monkeypatch)
        assert run.files_dependent >= 1
        return edges

    (lib / "index.ts").write_text(barrel.replace('export * from "./model";\n', ""))
    assert refreshed_as_cold("dropped")[view][1] == ["symbol:src.lib.Model"] * 2
    (lib / "index.ts").write_text(barrel)
    assert refreshed_as_cold("restored")[view][1] == [model] * 2
    (lib / "other.ts").write_text("export class Model {}\n")  # alone: answers nothing
    (lib / "index.ts").write_text(barrel + 'export * from "./other";\n')
    assert refreshed_as_cold("ambiguous")[view][1] == ["symbol:src.lib.Model"] * 2
    (lib / "other.ts").write_text("export class Other {}\n")
    assert refreshed_as_cold("unambiguous")[view][1] == [model] * 2
    (lib / "sub" / "deep.ts").write_text("export class Deeper {}\n")
    assert "symbol:src.lib.Deep" in refreshed_as_cold("deep-gone")[show][1]
    (lib / "sub" / "deep.ts").write_text(deep)
    assert refreshed_as_cold("deep-back")[show][1] == called


def test_python_names_resolve_through_the_packages_that_re_export_them(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``from shop.models import Model, build, Deep, Later`` reaches the definitions the
    package's ``__init__`` imports from its modules (``from .base import Model``, ``from
    .factory import make as build``, ``from .sub import *``, and on through
    ``sub/__init__.py``), as Django's ``from django.db.models import Model`` does. Every
    refresh that changes what they give (a re-export dropped and restored, a definition
    two packages away gone and back, one added that a name waited for) leaves a cold
    index's edges."""
    models = tmp_path / "py" / "shop" / "models"
    (models / "sub").mkdir(parents=True)
    (models.parent / "__init__.py").write_text("")
    package = "from .base import Model\nfrom .factory import make as build\nfrom .sub import *\n"
    (models / "__init__.py").write_text(package)
    (models / "base.py").write_text("class Model:\n    def save(self):\n        return 1\n")
    (models / "factory.py").write_text("def make():\n    return 1\n")
    (models / "sub" / "__init__.py").write_text("from .deep import Deep\n")
    deep = "class Deep:\n    pass\n"
    (models / "sub" / "deep.py").write_text(deep)
    (models.parent / "views.py").write_text(
        "from shop.models import Model, build, Deep, Later\n\n\n"
        "class View(Model):\n"
        "    def show(self):\n"
        "        build()\n        Deep()\n        Later()\n        return Model.save(self)\n"
    )
    root = tmp_path / "py"
    service.index_resource(RESOURCE_A, root, project="py")
    base = "https://cleveragents.ai/r/R/shop/"
    view, show = base + "views.py#View", base + "views.py#View.show"
    model = base + "models/base.py#Model"
    called = [
        base + "models/base.py#Model.save",
        base + "models/factory.py#make",
        base + "models/sub/deep.py#Deep",
        "symbol:shop.models.Later",
    ]
    edges = _current_edges(service, "py", RESOURCE_A)
    assert edges[view][1] == [model] * 2 and edges[show][1] == called
    reexport = edges[base + "models/__init__.py#import.shop.models.base"]
    assert reexport[1] == [model]  # the statement itself reaches what it imports

    def refreshed_as_cold(name: str) -> dict[str, Any]:
        run, edges = _refreshed_as_cold(service, root, "py", tmp_path / name, monkeypatch)
        assert run.files_dependent >= 1
        return edges

    (models / "__init__.py").write_text(package.replace("from .base import Model\n", ""))
    assert refreshed_as_cold("dropped")[view][1] == ["symbol:shop.models.Model"] * 2
    (models / "__init__.py").write_text(package)
    assert refreshed_as_cold("restored")[view][1] == [model] * 2
    (models / "sub" / "deep.py").write_text("class Deeper:\n    pass\n")
    assert "symbol:shop.models.Deep" in refreshed_as_cold("deep-gone")[show][1]
    (models / "sub" / "deep.py").write_text(deep)
    assert refreshed_as_cold("deep-back")[show][1] == called
    (models / "sub" / "later.py").write_text("class Later:\n    pass\n")
    (models / "sub" / "__init__.py").write_text("from .deep import Deep\nfrom .later import *\n")
    assert refreshed_as_cold("later")[show][1] == [
        *called[:-1],
        base + "models/sub/later.py#Later",
    ]


def test_python_names_go_on_through_a_module_whose_all_lists_them(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``pd.Frame(...).head()`` of ``import tab as pd``, as pandas's tests call
    ``pd.DataFrame``: the package imports ``Frame`` from ``tab.core.api``, a module that
    imports it from ``tab.core.frame`` and lists it in ``__all__``, so the name goes on
    to the class and its member (inherited too); what the module imports with ``*`` goes
    on too (``helper``), and so does a name it imports and uses without listing it
    (``Hidden``). Taking the imports away (the names end there), and bringing them back,
    each leave a cold index's edges."""
    root = tmp_path / "py"
    core = root / "tab" / "core"
    api = (
        "from tab.core.frame import Frame, Hidden\nfrom tab.core.tools import *\n\n"
        '__all__ = ["Frame"]\nHIDDEN = Hidden\n'
    )
    _write_tree(
        root,
        {
            "tab/__init__.py": "from tab.core.api import Frame, Hidden\n",
            "tab/core/__init__.py": "",
            "tab/core/api.py": api,
            "tab/core/frame.py": "class Base:\n    def shape(self):\n        return 0\n\n\n"
            "class Frame(Base):\n    def head(self):\n        return 1\n\n\n"
            "class Hidden:\n    pass\n",
            "tab/core/tools.py": "def helper():\n    return 2\n",
            "test_frame.py": "import tab as pd\nfrom tab.core.api import helper\n\n\n"
            "def test_head():\n"
            "    df = pd.Frame()\n    pd.Hidden()\n    df.shape()\n    helper()\n"
            "    return df.head()\n",
        },
    )
    service.index_resource(RESOURCE_A, root, project="py")
    uri = "https://cleveragents.ai/r/R/"
    test = uri + "test_frame.py#test_head"
    frame = uri + "tab/core/frame.py#"
    helper = uri + "tab/core/tools.py#helper"
    # Each twice: the test depends on what it calls and tests it.
    reached = [frame + "Frame", frame + "Frame.head", frame + "Base.shape", frame + "Hidden"]
    reached.append(helper)
    assert _current_edges(service, "py", RESOURCE_A)[test][1] == sorted(reached * 2)

    (core / "api.py").write_text('from tab.core.frame import Base\n\n__all__ = ["Base"]\n')
    _, edges = _refreshed_as_cold(service, root, "py", tmp_path / "dropped", monkeypatch)
    names = ["tab.Frame", "tab.Frame.head", "tab.Frame.shape", "tab.core.api.helper"]
    assert edges[test][1] == sorted(["symbol:" + n for n in [*names, "tab.Hidden"]] * 2)
    (core / "api.py").write_text(api)
    _, edges = _refreshed_as_cold(service, root, "py", tmp_path / "listed", monkeypatch)
    assert edges[test][1] == sorted(reached * 2)


def test_a_python_name_goes_on_through_the_modules_that_import_it(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Django's ``contrib/admin/helpers.py`` imports ``ForeignObjectRel`` from
    ``db/models/fields/related.py``, which imports it from ``reverse_related.py`` (and
    uses it): the name goes on to the definition (here a mixin class and its member)
    whether the importing module uses it or not, through two modules as through one.
    It ends where the module defines the name itself, and goes on again once it imports
    it again. A definition that comes later is reached through both modules, and one
    that goes is no longer; each refresh leaves a cold index's edges, also one of the
    importer alone, which reads the two modules' imports as they are stored."""
    root = tmp_path / "py"
    routing = (
        "from kit._requests import _RoutingMixin, Router, Helper\n\n\n"
        "def route():\n    return Router(), Helper, _RoutingMixin\n"
    )
    requests = (
        "class _RoutingMixin:\n    def routes(self):\n        return 1\n\n\n"
        "class Router:\n    pass\n"
    )
    _write_tree(
        root,
        {
            "kit/__init__.py": "",
            "kit/_requests.py": requests,
            "kit/routing.py": routing,
            "kit/api.py": "from kit.routing import Helper, Router\n\nAPI = (Helper, Router)\n",
            "kit/estimator.py": "from kit.routing import _RoutingMixin\n\n\n"
            "class Estimator(_RoutingMixin):\n    def fit(self):\n        return self.routes()\n",
            "app.py": "from kit.api import Helper, Router\n\n\n"
            "def main():\n    return Helper(), Router()\n",
        },
    )
    service.index_resource(RESOURCE_A, root, project="py")
    uri = "https://cleveragents.ai/r/R/"
    estimator, fit = uri + "kit/estimator.py#Estimator", uri + "kit/estimator.py#Estimator.fit"
    mixin, main = uri + "kit/_requests.py#_RoutingMixin", uri + "app.py#main"
    router, helper = uri + "kit/_requests.py#Router", uri + "kit/_requests.py#Helper"
    edges = _current_edges(service, "py", RESOURCE_A)
    assert mixin in edges[estimator][1] and mixin + ".routes" in edges[fit][1]
    assert router in edges[main][1] and "symbol:kit.api.Helper" in edges[main][1]
    # Only the importer changes: the name goes through the two modules as they are stored.
    app = (root / "app.py").read_text()
    (root / "app.py").write_text(app + "\n\ndef other():\n    return Router()\n")
    _, edges = _refreshed_as_cold(service, root, "py", tmp_path / "app", monkeypatch)
    assert router in edges[main][1] and router in edges[uri + "app.py#other"][1]

    own = routing.replace("_RoutingMixin, ", "") + "\n\nclass _RoutingMixin:\n    pass\n"
    (root / "kit" / "routing.py").write_text(own)
    run, edges = _refreshed_as_cold(service, root, "py", tmp_path / "own", monkeypatch)
    # Analysed again: the one file importing the name the module no longer imports
    # (``estimator.py``), not those importing its other names (``api.py``, ``app.py``).
    assert (run.files_analyzed, run.files_dependent) == (2, 1)
    assert mixin not in edges[estimator][1]
    assert uri + "kit/routing.py#_RoutingMixin" in edges[estimator][1]
    (root / "kit" / "routing.py").write_text(routing)
    _, edges = _refreshed_as_cold(service, root, "py", tmp_path / "again", monkeypatch)
    assert mixin in edges[estimator][1] and mixin + ".routes" in edges[fit][1]

    (root / "kit" / "_requests.py").write_text(requests + "\n\nclass Helper:\n    pass\n")
    _, edges = _refreshed_as_cold(service, root, "py", tmp_path / "helper", monkeypatch)
    assert helper in edges[main][1]
    (root / "kit" / "_requests.py").write_text(requests)
    _, edges = _refreshed_as_cold(service, root, "py", tmp_path / "gone", monkeypatch)
    assert helper not in edges[main][1] and "symbol:kit.api.Helper" in edges[main][1]


def test_a_name_imported_unseen_by_the_import_index_from_a_module_that_stops_binding_it(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The kernel's test fixtures import ``new_ulid`` from the ``cleveragents.models``
    package inside a function: that import is no node, but the module lists what its
    functions import, so when the package stops binding the name (its ``__init__.py``
    moved away), the refresh analyses that file again, and the edge to the definition
    goes, as in a cold index; so does ``import kit`` in a function, then ``kit.new_id()``,
    and ``import os, kit`` at the top of a module (its node is found by ``os``). A file
    importing ``new_id`` from where it is defined is not taken for it."""
    root = tmp_path / "py"
    _write_tree(
        root,
        {
            "kit/__init__.py": "from kit.ids import new_id\n",
            "kit/ids.py": "def new_id():\n    return 1\n",
            "fixtures.py": "def make():\n    from kit import new_id\n\n    return new_id()\n",
            "whole.py": "def make():\n    import kit\n\n    return kit.new_id()\n",
            "pair.py": "import os, kit\n\n\ndef make():\n    return kit.new_id(), os\n",
            "other.py": "from kit.ids import new_id\n\n\ndef make():\n    return new_id()\n",
        },
    )
    service.index_resource(RESOURCE_A, root, project="py")
    uri = "https://cleveragents.ai/r/R/"
    new_id = uri + "kit/ids.py#new_id"
    edges = _current_edges(service, "py", RESOURCE_A)
    for caller in ("fixtures.py#make", "whole.py#make", "pair.py#make", "other.py#make"):
        assert new_id in edges[uri + caller][1], caller
    index = ProjectIndex.open("py", service.registry, service.config, create=False)
    try:
        modules = {
            m.path: m for m in index.nodes.modules_at([RESOURCE_A], ["fixtures.py", "pair.py"])
        }
    finally:
        index.close()
    assert modules["fixtures.py"].properties["unindexed_imports"] == "kit.new_id"
    assert modules["pair.py"].properties["unindexed_imports"] == "kit"
    (root / "kit" / "__init__.py").write_text("")
    run, edges = _refreshed_as_cold(service, root, "py", tmp_path / "unbound", monkeypatch)
    assert (run.files_analyzed, run.files_dependent) == (4, 3)
    assert new_id not in edges[uri + "fixtures.py#make"][1]
    assert "symbol:kit.new_id" in edges[uri + "fixtures.py#make"][1]
    assert new_id not in edges[uri + "whole.py#make"][1]
    assert new_id not in edges[uri + "pair.py#make"][1]
    assert new_id in edges[uri + "other.py#make"][1]


def test_a_python_name_defined_in_alternative_branches_is_depended_on_as_a_set(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SymPy's ``testing/pytest.py`` defines ``raises`` as ``pytest.raises`` when pytest is
    there and as a function of its own otherwise: a test calling ``raises`` depends on
    both (as a call to an overloaded Java method does), and so does a call of a method a
    class body defines by version. A stub's overloads alone are what its name answers.
    Taking one branch away and bringing it back each leave a cold index's edges."""
    root = tmp_path / "py"
    kit = root / "kit"
    testing = (
        "try:\n    import pytest\n    raises = pytest.raises\n"
        "except ImportError:\n    def raises(error):\n        return error\n"
    )
    _write_tree(
        root,
        {
            "kit/__init__.py": "",
            "kit/testing.py": testing,
            "kit/shape.py": "import sys\n\n\nclass Shape:\n"
            "    if sys.version_info >= (3, 12):\n"
            "        def size(self):\n            return 1\n    else:\n"
            "        def size(self):\n            return 2\n",
            "kit/native.pyi": "from typing import overload\n\n"
            "@overload\ndef fast(x: int) -> int: ...\n@overload\ndef fast(x: str) -> str: ...\n",
            "test_kit.py": "from kit.testing import raises\nfrom kit.shape import Shape\n"
            "from kit.native import fast\n\n\n"
            "def test_it():\n    raises(ValueError)\n    fast(1)\n    return Shape.size(None)\n",
        },
    )
    service.index_resource(RESOURCE_A, root, project="py")
    uri = "https://cleveragents.ai/r/R/kit/"
    test = "https://cleveragents.ai/r/R/test_kit.py#test_it"
    raises = [uri + "testing.py#raises", uri + "testing.py#raises~2"]
    fast = [uri + "native.pyi#fast", uri + "native.pyi#fast~2"]
    size = [uri + "shape.py#Shape.size", uri + "shape.py#Shape.size~2"]
    edges = _current_edges(service, "py", RESOURCE_A)
    assert edges[test][1] == sorted([*raises, *fast, *size] * 2)
    assert sorted(edges[test[: test.index("#")] + "#import.kit.testing"][1]) == raises

    (kit / "testing.py").write_text("def raises(error):\n    return error\n")
    _, edges = _refreshed_as_cold(service, root, "py", tmp_path / "one", monkeypatch)
    assert edges[test][1] == sorted([uri + "testing.py#raises", *fast, *size] * 2)
    (kit / "testing.py").write_text(testing)
    _, edges = _refreshed_as_cold(service, root, "py", tmp_path / "both", monkeypatch)
    assert edges[test][1] == sorted([*raises, *fast, *size] * 2)


def test_python_calls_through_self_reach_the_members_classes_inherit(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``self.clean()`` in ``Form(Base, Mixin)``, which does not define ``clean``, calls
    the ``clean`` the method resolution order finds first (``Base``'s, in another file,
    two packages away through a re-export); ``self.assertEqual`` of a base from elsewhere
    is no edge. Every refresh that changes what the bases give (the member taken away,
    one nearer added, the bases changed) leaves a cold index's edges and analyses again
    only the files that guessed the member or name it (``Form.clean`` in another file
    is the same member)."""
    app = tmp_path / "py" / "app"
    app.mkdir(parents=True)
    (app / "__init__.py").write_text("from .base import Base\n")
    base = "class Root:\n    def clean(self):\n        return 0\n\n\nclass Base(Root):\n    pass\n"
    (app / "base.py").write_text(base)
    mixin = "class Mixin:\n    def other(self):\n        return 2\n"
    (app / "mixin.py").write_text(mixin)
    (app / "forms.py").write_text(
        "import unittest\n\nfrom app import Base\nfrom app.mixin import Mixin\n\n\n"
        "class Form(Base, Mixin):\n"
        "    def run(self):\n"
        "        self.assertEqual(1, 1)\n        self.other()\n        return self.clean()\n"
    )
    (app / "urls.py").write_text(
        "from app.forms import Form\n\n\ndef route():\n    return Form.clean(None)\n"
    )
    (app / "unrelated.py").write_text(
        "from app.mixin import Mixin\n\n\nclass Plain(Mixin):\n"
        "    def go(self):\n        return self.missing()\n"
    )
    root = tmp_path / "py"
    service.index_resource(RESOURCE_A, root, project="py")
    uri = "https://cleveragents.ai/r/R/app/"
    run_, route = uri + "forms.py#Form.run", uri + "urls.py#route"
    root_clean, other = uri + "base.py#Root.clean", uri + "mixin.py#Mixin.other"
    edges = _current_edges(service, "py", RESOURCE_A)
    assert edges[run_][1] == [root_clean, other]
    assert edges[route][1] == [root_clean]  # ``Form.clean`` names Root's too
    assert edges[uri + "unrelated.py#Plain.go"][1] == []  # no class answers ``missing``

    def refreshed_as_cold(name: str) -> tuple[IndexRun, dict[str, Any]]:
        return _refreshed_as_cold(service, root, "py", tmp_path / name, monkeypatch)

    # A nearer definition, in the class between: found first.
    (app / "base.py").write_text(
        base.replace("    pass\n", "    def clean(self):\n        return 1\n")
    )
    run, edges = refreshed_as_cold("nearer")
    assert edges[run_][1] == [uri + "base.py#Base.clean", other]
    assert edges[route][1] == [uri + "base.py#Base.clean"]
    assert run.files_dependent == 2  # forms.py and urls.py, not unrelated.py
    # Taken away everywhere: no edge.
    (app / "base.py").write_text("class Root:\n    pass\n\n\nclass Base(Root):\n    pass\n")
    run, edges = refreshed_as_cold("gone")
    assert edges[run_][1] == [other]
    # Given by the mixin instead, whose file alone changed.
    (app / "mixin.py").write_text(mixin + "\n    def clean(self):\n        return 3\n")
    run, edges = refreshed_as_cold("mixin")
    assert edges[run_][1] == [uri + "mixin.py#Mixin.clean", other]
    assert edges[route][1] == [uri + "mixin.py#Mixin.clean"]
    assert run.files_dependent == 2
    # Root's ``clean`` back: before the mixin's in the order (Form, Base, Root, Mixin).
    (app / "base.py").write_text(base)
    _, edges = refreshed_as_cold("back")
    assert edges[run_][1] == [root_clean, other]
    # Base's bases changed, its members not: the mixin's ``clean`` again.
    (app / "base.py").write_text(base.replace("class Base(Root):", "class Base:"))
    run, edges = refreshed_as_cold("rebased")
    assert edges[run_][1] == [uri + "mixin.py#Mixin.clean", other]
    assert run.files_dependent == 3  # and __init__.py, which re-exports Base


def test_a_python_module_variable_made_by_a_class_gives_that_class_s_members(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``apps = Apps()`` uses the type ``Apps`` (``uko-code:usesType``), so
    ``apps.get_model()`` in another file is the member ``Apps`` has or inherits, as
    Django's ``apps.get_model`` and a template library's ``@register.filter`` are. When
    the class gains the member, or the variable is made by another class, a refresh
    leaves a cold index's edges."""
    app = tmp_path / "vars" / "app"
    app.mkdir(parents=True)
    (app / "__init__.py").write_text("")
    (app / "loader.py").write_text("class Loader:\n    def get_model(self):\n        return 0\n")
    registry = (
        "from app.loader import Loader\n\n\nclass Apps(Loader):\n    pass\n\n\n"
        "class Other:\n    def get_model(self):\n        return 2\n\n\napps = Apps()\n"
    )
    (app / "registry.py").write_text(registry)
    (app / "use.py").write_text(
        "from app.registry import apps\n\n\ndef load():\n    return apps.get_model()\n"
    )
    root = tmp_path / "vars"
    service.index_resource(RESOURCE_A, root, project="vars")
    uri = "https://cleveragents.ai/r/R/app/"
    load = uri + "use.py#load"
    edges = _current_edges(service, "vars", RESOURCE_A)
    assert edges[uri + "registry.py#apps"][1] == [uri + "registry.py#Apps"]
    assert edges[load][1] == [uri + "loader.py#Loader.get_model"]

    def refreshed_as_cold(name: str) -> dict[str, Any]:
        run, edges = _refreshed_as_cold(service, root, "vars", tmp_path / name, monkeypatch)
        assert run.files_dependent == 1  # use.py
        return edges

    nearer = registry.replace("    pass\n", "    def get_model(self):\n        return 1\n", 1)
    (app / "registry.py").write_text(nearer)
    assert refreshed_as_cold("nearer")[load][1] == [uri + "registry.py#Apps.get_model"]
    (app / "registry.py").write_text(nearer.replace("apps = Apps()", "apps = Other()"))
    assert refreshed_as_cold("other")[load][1] == [uri + "registry.py#Other.get_model"]


def test_a_call_through_a_typed_attribute_follows_its_class_across_refreshes(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``self.client.get()`` of an attribute set from an ``__init__`` parameter annotated
    ``Client`` is the member ``Client`` has or inherits. When the class gains the member,
    and loses its base, a refresh analyses the caller's file again and leaves a cold
    index's edges."""
    app = tmp_path / "attrs" / "app"
    app.mkdir(parents=True)
    (app / "__init__.py").write_text("")
    (app / "base.py").write_text("class Base:\n    def get(self):\n        return 0\n")
    net = "from app.base import Base\n\n\nclass Client(Base):\n    pass\n"
    (app / "net.py").write_text(net)
    (app / "service.py").write_text(
        "from app.net import Client\n\n\nclass Service:\n"
        "    def __init__(self, client: Client):\n        self.client = client\n\n"
        "    def run(self):\n        return self.client.get()\n"
    )
    root = tmp_path / "attrs"
    service.index_resource(RESOURCE_A, root, project="attrs")
    uri = "https://cleveragents.ai/r/R/app/"
    run_uri = uri + "service.py#Service.run"
    assert _current_edges(service, "attrs", RESOURCE_A)[run_uri][1] == [uri + "base.py#Base.get"]

    def refreshed_as_cold(name: str) -> dict[str, Any]:
        run, edges = _refreshed_as_cold(service, root, "attrs", tmp_path / name, monkeypatch)
        assert run.files_dependent == 1  # service.py
        return edges

    nearer = net.replace("    pass\n", "    def get(self):\n        return 1\n")
    (app / "net.py").write_text(nearer)
    assert refreshed_as_cold("nearer")[run_uri][1] == [uri + "net.py#Client.get"]
    (app / "net.py").write_text("class Client:\n    pass\n")
    assert refreshed_as_cold("rebased")[run_uri][1] == ["symbol:app.net.Client.get"]


def test_what_a_call_returns_follows_the_callees_annotation_across_refreshes(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``client = make_client()`` then ``client.get()`` is the member of the class
    ``make_client``'s return annotation names (its ``usesType`` edge), whatever file
    the function is in and through the package that re-exports it; so are
    ``self.client.get()`` of ``self.client = make_client()`` and
    ``make_client().get()``. When that class gains the member, the annotation names
    another class, the function goes and comes back, the class it names does, or the
    same annotation names another class by the module's imports, or, with no annotation,
    the class the function's ``return`` gives changes, a refresh leaves a cold index's
    edges."""
    root = tmp_path / "calls"
    net = (
        "from app.base import Base\n\n\nclass Client(Base):\n    pass\n\n\n"
        "class Other:\n    def get(self):\n        return 2\n"
    )
    factory = (
        "from app.net import Client, Other\n\n\ndef make_client() -> Client:\n    return Client()\n"
    )
    _write_tree(
        root,
        {
            "app/__init__.py": "from app.factory import make_client\n",
            "app/base.py": "class Base:\n    def get(self):\n        return 0\n",
            "app/alt.py": "class Client:\n    def get(self):\n        return 3\n",
            "app/net.py": net,
            "app/factory.py": factory,
            "app/use.py": (
                "from app import make_client\n\n\ndef load():\n"
                "    client = make_client()\n    return client.get()\n\n\n"
                "class User:\n    def __init__(self):\n        self.client = make_client()\n\n"
                "    def run(self):\n        return self.client.get()\n\n\n"
                "def chained():\n    return make_client().get()\n"
            ),
        },
    )
    service.index_resource(RESOURCE_A, root, project="calls")
    uri = "https://cleveragents.ai/r/R/app/"
    load, run_uri = uri + "use.py#load", uri + "use.py#User.run"
    edges = _current_edges(service, "calls", RESOURCE_A)
    assert uri + "net.py#Client" in edges[uri + "factory.py#make_client"][1]
    assert edges[load][1] == [uri + "base.py#Base.get", uri + "factory.py#make_client"]
    assert edges[run_uri][1] == [uri + "base.py#Base.get"]

    def refreshed_as_cold(name: str) -> dict[str, Any]:
        return _refreshed_as_cold(service, root, "calls", tmp_path / name, monkeypatch)[1]

    nearer = net.replace("    pass\n", "    def get(self):\n        return 1\n")
    (root / "app" / "net.py").write_text(nearer)
    assert refreshed_as_cold("nearer")[run_uri][1] == [uri + "net.py#Client.get"]
    (root / "app" / "factory.py").write_text(factory.replace("-> Client", "-> Other"))
    edges = refreshed_as_cold("other")
    assert edges[run_uri][1] == [uri + "net.py#Other.get"]
    assert uri + "net.py#Other.get" in edges[uri + "use.py#chained"][1]
    (root / "app" / "factory.py").write_text("from app.net import Client, Other\n")
    assert refreshed_as_cold("gone")[run_uri][1] == ["symbol:app.make_client().get"]
    (root / "app" / "factory.py").write_text(factory.replace("-> Client", "-> Other"))
    assert refreshed_as_cold("back")[run_uri][1] == [uri + "net.py#Other.get"]
    (root / "app" / "net.py").write_text(nearer.split("class Other")[0])
    assert refreshed_as_cold("class-gone")[run_uri][1] == ["symbol:app.make_client().get"]
    (root / "app" / "net.py").write_text(nearer)
    assert refreshed_as_cold("class-back")[run_uri][1] == [uri + "net.py#Other.get"]
    # The annotation's text stays; the import makes it name another class.
    (root / "app" / "factory.py").write_text(factory)
    assert refreshed_as_cold("imported")[run_uri][1] == [uri + "net.py#Client.get"]
    (root / "app" / "factory.py").write_text(factory.replace("app.net", "app.alt", 1))
    assert refreshed_as_cold("elsewhere")[run_uri][1] == [uri + "alt.py#Client.get"]
    # No annotation: the class the function's ``return`` statements give.
    unannotated = factory.replace(" -> Client", "")
    (root / "app" / "factory.py").write_text(unannotated.replace("Client()", "Other()"))
    assert refreshed_as_cold("returned")[run_uri][1] == [uri + "net.py#Other.get"]
    (root / "app" / "factory.py").write_text(unannotated)
    assert refreshed_as_cold("returned-other")[run_uri][1] == [uri + "net.py#Client.get"]


def test_what_an_inherited_method_returns_follows_its_class_across_refreshes(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``Series().resample().mean()`` where ``Series`` inherits ``resample`` from
    ``NDFrame`` is the member of the class ``NDFrame.resample`` returns, the call named
    or not, and so is ``series.resample().mean()`` of a module's ``series = Series()``. When
    that class loses and gains the member, the subclass defines its own ``resample``
    returning another class, or the base's returns another, a refresh leaves a cold
    index's edges."""
    root = tmp_path / "frames"
    frame = (
        "from app.resample import Resampler, Window\n\n\nclass NDFrame:\n"
        "    def resample(self) -> Resampler:\n        return Resampler()\n\n\n"
        "class Series(NDFrame):\n    pass\n\n\nseries = Series()\n"
    )
    resample = (
        "class Resampler:\n    def mean(self):\n        return 0\n\n\n"
        "class Window:\n    def mean(self):\n        return 1\n"
    )
    _write_tree(
        root,
        {
            "app/__init__.py": "",
            "app/resample.py": resample,
            "app/frame.py": frame,
            "app/use.py": (
                "from app.frame import Series, series\n\n\ndef load():\n"
                "    frame = Series()\n    resampled = frame.resample()\n"
                "    return resampled.mean()\n\n\n"
                "def unnamed():\n    return Series().resample().mean(), series.resample().mean()\n"
            ),
        },
    )
    service.index_resource(RESOURCE_A, root, project="frames")
    uri = "https://cleveragents.ai/r/R/app/"
    load, unnamed = uri + "use.py#load", uri + "use.py#unnamed"
    resampler_mean, window_mean = (
        uri + "resample.py#Resampler.mean",
        uri + "resample.py#Window.mean",
    )
    edges = _current_edges(service, "frames", RESOURCE_A)
    assert edges[load][1] == [
        uri + "frame.py#NDFrame.resample",
        uri + "frame.py#Series",
        resampler_mean,
    ]
    assert edges[unnamed][1].count(resampler_mean) == 1  # both calls, one edge
    assert resampler_mean in edges[unnamed][1]

    def refreshed_as_cold(name: str) -> dict[str, Any]:
        return _refreshed_as_cold(service, root, "frames", tmp_path / name, monkeypatch)[1]

    (root / "app" / "resample.py").write_text(resample.replace("mean", "median", 1))
    assert "symbol:app.frame.Series.resample().mean" in refreshed_as_cold("lost")[load][1]
    (root / "app" / "resample.py").write_text(resample)
    assert resampler_mean in refreshed_as_cold("gained")[load][1]
    own = frame.replace(
        "    pass\n", "    def resample(self) -> Window:\n        return Window()\n"
    )
    (root / "app" / "frame.py").write_text(own)
    edges = refreshed_as_cold("own")
    assert window_mean in edges[load][1] and window_mean in edges[unnamed][1]
    (root / "app" / "frame.py").write_text(frame.replace("-> Resampler", "-> Window"))
    edges = refreshed_as_cold("base-other")
    assert window_mean in edges[load][1] and window_mean in edges[unnamed][1]


def test_a_class_under_another_name_follows_it_across_refreshes(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``m.det()`` of ``m = Matrix(...)``, where ``Matrix = MutableMatrix`` and
    ``MutableMatrix = MutableDenseMatrix``, is ``MutableDenseMatrix.det``. When either
    alias names another class, the class gains a member, the last alias goes and comes
    back, or the caller names a member the class inherits, a refresh leaves a cold
    index's edges."""
    root = tmp_path / "aliases"
    dense = (
        "from app.base import Base\n\n\n"
        "class MutableDenseMatrix(Base):\n    def det(self):\n        return 0\n\n\n"
        "class Other:\n    def det(self):\n        return 1\n\n    def trace(self):\n"
        "        return 2\n"
    )
    matrices = (
        "from app.dense import MutableDenseMatrix, Other\n\n"
        "MutableMatrix = MutableDenseMatrix\nMatrix = MutableMatrix\n"
    )
    _write_tree(
        root,
        {
            "app/__init__.py": "",
            "app/base.py": "class Base:\n    def rank(self):\n        return 4\n",
            "app/dense.py": dense,
            "app/matrices.py": matrices,
            "app/use.py": (
                "from app.matrices import Matrix\n\n\ndef run():\n    m = Matrix([1])\n"
                "    return m.det(), m.trace()\n"
            ),
        },
    )
    service.index_resource(RESOURCE_A, root, project="aliases")
    uri = "https://cleveragents.ai/r/R/app/"
    run = uri + "use.py#run"
    det, other_det = uri + "dense.py#MutableDenseMatrix.det", uri + "dense.py#Other.det"
    edges = _current_edges(service, "aliases", RESOURCE_A)
    assert det in edges[run][1] and "symbol:app.matrices.Matrix.trace" in edges[run][1]

    def refreshed_as_cold(name: str) -> dict[str, Any]:
        return _refreshed_as_cold(service, root, "aliases", tmp_path / name, monkeypatch)[1]

    matrices_path, dense_path = root / "app" / "matrices.py", root / "app" / "dense.py"
    matrices_path.write_text(matrices.replace("Matrix = MutableMatrix", "Matrix = Other"))
    assert other_det in refreshed_as_cold("retargeted")[run][1]
    matrices_path.write_text(matrices)
    assert det in refreshed_as_cold("back")[run][1]
    matrices_path.write_text(
        matrices.replace("MutableMatrix = MutableDenseMatrix", "MutableMatrix = Other")
    )
    assert other_det in refreshed_as_cold("middle")[run][1]
    matrices_path.write_text(matrices)
    assert "symbol:app.matrices.Matrix.trace" in refreshed_as_cold("restored")[run][1]
    grown = dense.replace(
        "        return 0\n", "        return 0\n\n    def trace(self):\n        return 3\n", 1
    )
    dense_path.write_text(grown)
    assert uri + "dense.py#MutableDenseMatrix.trace" in refreshed_as_cold("gained")[run][1]
    matrices_path.write_text(matrices.replace("Matrix = MutableMatrix\n", ""))
    assert det not in refreshed_as_cold("gone")[run][1]
    matrices_path.write_text(matrices)
    assert det in refreshed_as_cold("alias-back")[run][1]
    # Only the caller changes: the class's base is found through both aliases.
    use = root / "app" / "use.py"
    use.write_text(use.read_text().replace("m.trace()", "m.rank()"))
    assert uri + "base.py#Base.rank" in refreshed_as_cold("inherited")[run][1]


def test_a_function_named_as_a_class_gives_what_it_returns_across_refreshes(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SymPy's ``SymmetricGroup(4)`` is a function a capital makes look like a class:
    ``g.order()`` of ``g = SymmetricGroup(4)`` is the member of the class it returns
    (read from its ``return``), after a refresh of the caller alone as in a cold index."""
    root = tmp_path / "groups"
    _write_tree(
        root,
        {
            "app/__init__.py": "",
            "app/groups.py": (
                "class PermutationGroup:\n    def order(self):\n        return 1\n\n\n"
                "def SymmetricGroup(n):\n    group = PermutationGroup()\n    return group\n"
            ),
            "app/use.py": (
                "from app.groups import SymmetricGroup\n\n\ndef run():\n"
                "    g = SymmetricGroup(4)\n    return g.order()\n"
            ),
        },
    )
    service.index_resource(RESOURCE_A, root, project="groups")
    uri = "https://cleveragents.ai/r/R/app/"
    order = uri + "groups.py#PermutationGroup.order"
    assert order in _current_edges(service, "groups", RESOURCE_A)[uri + "use.py#run"][1]
    use = root / "app" / "use.py"
    use.write_text(use.read_text() + "\n\ndef other():\n    return SymmetricGroup(3).order()\n")
    _, edges = _refreshed_as_cold(service, root, "groups", tmp_path / "cold", monkeypatch)
    assert order in edges[uri + "use.py#run"][1] and order in edges[uri + "use.py#other"][1]


def test_an_annotated_parameter_follows_its_class_across_refreshes(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``client.get()`` of ``client: Client`` reaches the member the class has or
    inherits: after the member moves to the base, goes, and comes back in another
    module's class the annotation is retargeted to, each refresh leaves a cold index's
    edges."""
    root = tmp_path / "typed"
    clients = (
        "class Base:\n    pass\n\n\nclass Client(Base):\n    def get(self):\n        return 1\n"
    )
    use_text = (
        "from app.clients import Client\n\n\ndef run(client: Client) -> int:\n"
        "    return client.get()\n"
    )
    files = {"app/__init__.py": "", "app/clients.py": clients, "app/use.py": use_text}
    files["app/other.py"] = "class Remote:\n    def get(self):\n        return 2\n"
    _indexed_reaching(service, root, "typed", files, ("use.py#run", "clients.py#Client.get"))
    module, use = root / "app" / "clients.py", root / "app" / "use.py"
    in_base = (
        "class Base:\n    def get(self):\n        return 1\n\n\nclass Client(Base):\n    pass\n"
    )
    remote = use_text.replace("app.clients import Client", "app.other import Remote as Client")
    steps = [
        (module, in_base, "clients.py#Base.get", True),
        (
            module,
            "class Base:\n    pass\n\n\nclass Client(Base):\n    pass\n",
            "clients.py#Base.get",
            False,
        ),
        (use, remote, "other.py#Remote.get", True),
        (module, clients, "other.py#Remote.get", True),
        (use, use_text, "clients.py#Client.get", True),
    ]
    _reached_after_each_step(service, root, "typed", monkeypatch, "use.py#run", steps)


def test_a_call_through_an_attribute_follows_its_class_across_refreshes(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``store.session.query()`` of ``store: Store`` reaches what ``Store.session``'s
    class has: after a caller is added, the attribute's class changes and comes back,
    the class loses the member and gains it again, the attribute moves to a base, and
    it becomes a property whose annotation changes, each refresh leaves a cold index's
    edges."""
    root = tmp_path / "attributes"
    db = "class Session:\n    def query(self):\n        return 1\n\n\nclass Other:\n    pass\n"
    store = (
        "from app.db import Other, Session\n\n\nclass Base:\n    pass\n\n\n"
        "class Store(Base):\n    session: Session\n"
    )
    edge = ("use.py#run", "db.py#Session.query")
    files = {"app/__init__.py": "", "app/db.py": db, "app/store.py": store}
    files["app/use.py"] = (
        "from app.store import Store\n\n\n"
        "def run(store: Store):\n    return store.session.query()\n"
    )
    _indexed_reaching(service, root, "attributes", files, edge)
    use, db_file, store_file = (root / "app" / name for name in ("use.py", "db.py", "store.py"))
    in_base = store.replace("class Base:\n    pass", "class Base:\n    session: Session")
    in_base = in_base.replace(
        "class Store(Base):\n    session: Session", "class Store(Base):\n    pass"
    )
    more = use.read_text() + "\n\ndef more(s: Store):\n    return s.session.query()\n"
    as_property = store.replace(
        "    session: Session",
        "    @property\n    def session(self) -> Session:\n        return Session()",
    )
    query = edge[1]
    steps = [
        (use, more, query, True),
        (store_file, store.replace("session: Session", "session: Other"), query, False),
        (store_file, store, query, True),
        (db_file, db.replace("query", "ask"), query, False),
        (db_file, db, query, True),
        (store_file, in_base, query, True),
        (store_file, store, query, True),
        (store_file, as_property, query, True),
        (use, more + "\n\ndef third(s: Store):\n    return s.session.query()\n", query, True),
        (store_file, as_property.replace("-> Session", "-> Other"), query, False),
        (store_file, store, query, True),
    ]
    _reached_after_each_step(service, root, "attributes", monkeypatch, edge[0], steps)


def test_a_name_an_isinstance_test_narrows_follows_its_class_across_refreshes(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``shape.side()`` under ``if isinstance(shape, Square):`` reaches the member
    ``Square`` has or inherits: after it moves to the base, goes, and comes back, each
    refresh leaves a cold index's edges."""
    root = tmp_path / "narrowed"
    shapes = (
        "class Shape:\n    pass\n\n\nclass Square(Shape):\n    def side(self):\n        return 1\n"
    )
    files = {"app/__init__.py": "", "app/shapes.py": shapes}
    files["app/use.py"] = (
        "from app.shapes import Square\n\n\n"
        "def run(shape):\n    if isinstance(shape, Square):\n        return shape.side()\n"
    )
    _indexed_reaching(service, root, "narrowed", files, ("use.py#run", "shapes.py#Square.side"))
    module = root / "app" / "shapes.py"
    in_base = (
        "class Shape:\n    def side(self):\n        return 1\n\n\nclass Square(Shape):\n    pass\n"
    )
    steps = [
        (module, in_base, "shapes.py#Shape.side", True),
        (module, in_base.replace("side", "edge"), "shapes.py#Shape.side", False),
        (module, shapes, "shapes.py#Square.side", True),
    ]
    _reached_after_each_step(service, root, "narrowed", monkeypatch, "use.py#run", steps)


def test_what_a_with_statement_binds_follows_enter_across_refreshes(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``s.query()`` of ``with Session() as s`` follows ``Session.__enter__`` of another
    module: when it moves to a base, returns something else, and comes back, each
    refresh leaves a cold index's edges."""
    root = tmp_path / "sessions"
    session = (
        "class Base:\n    pass\n\n\nclass Session(Base):\n"
        "    def __enter__(self):\n        return self\n\n"
        "    def query(self):\n        return 1\n"
    )
    edge = ("use.py#run", "db.py#Session.query")
    files = {"app/__init__.py": "", "app/db.py": session}
    files["app/use.py"] = (
        "from app.db import Session\n\n\n"
        "def run():\n    with Session() as s:\n        return s.query()\n"
    )
    _indexed_reaching(service, root, "sessions", files, edge)
    module = root / "app" / "db.py"
    inherited = (
        "class Base:\n    def __enter__(self):\n        return self\n\n\n"
        "class Session(Base):\n    def query(self):\n        return 1\n"
    )
    # ``return self`` in ``Base`` gives a ``Base``, which has no ``query``.
    query = edge[1]
    steps = [
        (module, inherited, query, False),
        (module, session.replace("return self", "return object()"), query, False),
        (module, session, query, True),
    ]
    _reached_after_each_step(service, root, "sessions", monkeypatch, edge[0], steps)


def test_a_python_import_of_a_plain_name_is_answered_by_a_module_only(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``import re`` in one project of a tree is the standard library's module, not the
    function ``re`` another project defines (SymPy's, which Django's ``import re`` used
    to reach): only a module node answers a plain name an import gives, at a module's top
    or in a function's body (``import re`` there), in a ``.py`` file or a script whose
    ``#!`` line names python. A function's other plain names are any definition's. When
    the tree gains a module of that name, and loses it, a refresh leaves a cold index's
    edges."""
    root = tmp_path / "tree"
    (root / "web").mkdir(parents=True)
    (root / "maths").mkdir()
    (root / "maths" / "complexes.py").write_text("def re(z):\n    return z\n")
    (root / "maths" / "polar.py").write_text(
        "from maths.complexes import re\n\n\ndef radius(z):\n    return re(z)\n"
    )
    (root / "web" / "urls.py").write_text(
        "import re\n\n\ndef route(path):\n    return re.sub('/', '.', path)\n"
    )
    (root / "web" / "slugs.py").write_text(
        "def slug(text):\n    import re, os.path as paths\n    return re.sub(' ', '-', text)\n"
    )
    (root / "bin").mkdir()
    (root / "bin" / "route").write_text("#!/usr/bin/env python3\nimport re\n")
    service.index_resource(RESOURCE_A, root, project="tree")
    uri = "https://cleveragents.ai/r/R/"
    slug, radius = uri + "web/slugs.py#slug", uri + "maths/polar.py#radius"
    script = uri + "bin/route#import.re"
    edges = _current_edges(service, "tree", RESOURCE_A)
    assert edges[uri + "web/urls.py#import.re"][1] == ["symbol:re"]
    assert edges[slug][1] == ["symbol:os.path", "symbol:re", "symbol:re.sub"]
    assert edges[script][1] == ["symbol:re"]
    assert edges[uri + "maths/polar.py#import.maths.complexes"][1] == [
        uri + "maths/complexes.py#re"
    ]
    assert edges[radius][1] == [uri + "maths/complexes.py#re"]
    (root / "re.py").write_text("def compile(pattern):\n    return pattern\n")
    run, edges = _refreshed_as_cold(service, root, "tree", tmp_path / "added", monkeypatch)
    assert edges[uri + "web/urls.py#import.re"][1] == [uri + "re.py"]
    assert edges[slug][1] == [uri + "re.py", "symbol:os.path", "symbol:re.sub"]
    assert edges[script][1] == [uri + "re.py"]
    assert edges[radius][1] == [uri + "maths/complexes.py#re"]
    assert run.files_dependent == 4  # and maths/polar.py: its function shares the name
    (root / "re.py").unlink()
    _, edges = _refreshed_as_cold(service, root, "tree", tmp_path / "gone", monkeypatch)
    assert edges[uri + "web/urls.py#import.re"][1] == ["symbol:re"]
    assert edges[slug][1] == ["symbol:os.path", "symbol:re", "symbol:re.sub"]
    assert edges[script][1] == ["symbol:re"]


def test_a_python_script_without_a_suffix_refreshes_as_a_py_file_does(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A script whose ``#!`` line names python (``bin/run``) is Python to the resolver:
    when only it changes, a refresh looks its imports' modules up as a cold index does,
    ``src/`` layout included."""
    root = tmp_path / "tools"
    (root / "src" / "tools").mkdir(parents=True)
    (root / "bin").mkdir()
    (root / "src" / "tools" / "__init__.py").write_text("")
    (root / "src" / "tools" / "text.py").write_text("def slug(s):\n    return s\n")
    script = "#!/usr/bin/env python3\nfrom tools import text\n\n\ndef main():\n"
    (root / "bin" / "run").write_text(script + "    return text.slug('a')\n")
    service.index_resource(RESOURCE_A, root, project="tools")
    main = "https://cleveragents.ai/r/R/bin/run#main"
    slug = "https://cleveragents.ai/r/R/src/tools/text.py#slug"
    assert _current_edges(service, "tools", RESOURCE_A)[main][1] == [slug]
    (root / "bin" / "run").write_text(script + "    return text.slug('b')\n")
    run, edges = _refreshed_as_cold(service, root, "tools", tmp_path / "cold", monkeypatch)
    assert run.files_analyzed == 1
    assert edges[main][1] == [slug]


def test_a_workspace_package_is_imported_by_its_name(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In an npm workspace, ``import make, { Widget } from "@acme/core"`` reaches the
    package's source entry (``src/index.ts``, for a manifest naming ``lib/index.d.ts``)
    and what it exports, and ``@acme/core/src/util`` a module of its folder. A refresh
    after the manifest's name changes, and back, gives what a cold index gives."""
    core = tmp_path / "ws" / "packages" / "core"
    (core / "src").mkdir(parents=True)
    manifest = '{"name": "@acme/core", "main": "lib/index.js", "types": "lib/index.d.ts"}\n'
    (core / "package.json").write_text(manifest)
    (core / "src" / "index.ts").write_text(
        'export * from "./widget";\nexport default function make() { return 1; }\n'
    )
    (core / "src" / "widget.ts").write_text("export class Widget {\n  draw() {}\n}\n")
    (core / "src" / "util.ts").write_text("export function util() {}\n")
    app = tmp_path / "ws" / "packages" / "app"
    (app / "src").mkdir(parents=True)
    (app / "package.json").write_text('{"name": "@acme/app", "private": true}\n')
    (app / "src" / "main.ts").write_text(
        'import make, { Widget } from "@acme/core";\n'
        'import { util } from "@acme/core/src/util";\n'
        "export function main() {\n  make();\n  util();\n  return new Widget().draw();\n}\n"
    )
    root = tmp_path / "ws"
    service.index_resource(RESOURCE_A, root, project="ws")
    base = "https://cleveragents.ai/r/R/packages/"
    main = base + "app/src/main.ts#main"
    reached = [
        base + "core/src/index.ts#make",
        base + "core/src/util.ts#util",
        base + "core/src/widget.ts#Widget",
    ]
    assert _current_edges(service, "ws", RESOURCE_A)[main][1] == reached
    (core / "package.json").write_text(manifest.replace("@acme/core", "@acme/kernel"))
    run, edges = _refreshed_as_cold(service, root, "ws", tmp_path / "cold", monkeypatch)
    assert run.files_dependent >= 1  # those pointing into the package's folder
    assert sorted(edges[main][1]) == [
        "symbol:@acme.core.Widget",
        "symbol:@acme.core.default",
        "symbol:@acme.core.src.util.util",
    ]
    (core / "package.json").write_text(manifest)
    _, edges = _refreshed_as_cold(service, root, "ws", tmp_path / "cold2", monkeypatch)
    assert edges[main][1] == reached


def test_path_aliases_of_a_tsconfig_resolve_and_follow_its_changes(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``import { Button } from "@/components/button"`` and ``import load from
    "@config"`` reach the modules a ``tsconfig.json``'s ``paths`` map them to; a refresh
    after an alias is renamed, and back, gives what a cold index gives."""
    web = tmp_path / "app" / "web"
    (web / "src" / "components").mkdir(parents=True)
    (web / "config").mkdir()
    config = (
        '{\n  // aliases\n  "compilerOptions": {\n    "baseUrl": ".",\n    "paths": {\n'
        '      "@/*": ["./src/*"],\n      "@config": ["config/index.ts"],\n    },\n  },\n}\n'
    )
    (web / "tsconfig.json").write_text(config)
    (web / "src" / "components" / "button.ts").write_text("export class Button {}\n")
    (web / "config" / "index.ts").write_text("export default function load() { return 1; }\n")
    (web / "src" / "main.ts").write_text(
        'import { Button } from "@/components/button";\nimport load from "@config";\n'
        "export function start() {\n  load();\n  return new Button();\n}\n"
    )
    root = tmp_path / "app"
    service.index_resource(RESOURCE_A, root, project="app")
    start = "https://cleveragents.ai/r/R/web/src/main.ts#start"
    reached = [
        "https://cleveragents.ai/r/R/web/config/index.ts#load",
        "https://cleveragents.ai/r/R/web/src/components/button.ts#Button",
    ]
    assert _current_edges(service, "app", RESOURCE_A)[start][1] == reached
    (web / "tsconfig.json").write_text(config.replace('"@/*"', '"~/*"'))
    run, edges = _refreshed_as_cold(service, root, "app", tmp_path / "cold", monkeypatch)
    assert run.files_dependent >= 1
    assert edges[start][1] == [reached[0], "symbol:@.components.button.Button"]
    (web / "tsconfig.json").write_text(config)
    _, edges = _refreshed_as_cold(service, root, "app", tmp_path / "cold2", monkeypatch)
    assert edges[start][1] == reached
    # ``"baseUrl": "src"``: a name no module answers is looked for from there too.
    (web / "src" / "main.ts").write_text(
        'import { Button } from "components/button";\n'
        "export function start() {\n  return new Button();\n}\n"
    )
    _, edges = _refreshed_as_cold(service, root, "app", tmp_path / "cold3", monkeypatch)
    assert edges[start][1] == ["symbol:components.button.Button"]
    (web / "tsconfig.json").write_text(config.replace('"baseUrl": "."', '"baseUrl": "src"'))
    _, edges = _refreshed_as_cold(service, root, "app", tmp_path / "cold4", monkeypatch)
    assert edges[start][1] == [reached[1]]


def test_a_java_class_moved_to_another_package_leaves_its_importers_unresolved(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A file whose ``package`` line changes keeps its nodes (the same file, the same
    names) but they answer other names: the file importing ``p.A`` is analysed again and
    its edges are a cold index's, unresolved, then resolved when the package is back."""
    root = tmp_path / "moved"
    (root / "p").mkdir(parents=True)
    (root / "q").mkdir()
    a = root / "p" / "A.java"
    a.write_text("package p;\npublic class A { public static int f() { return 1; } }\n")
    (root / "q" / "B.java").write_text(
        "package q;\nimport p.A;\nclass B { int g() { return A.f(); } }\n"
    )
    service.index_resource(RESOURCE_A, root, project="moved")
    g, f = "https://cleveragents.ai/r/R/q/B.java#B.g", "https://cleveragents.ai/r/R/p/A.java#A.f"
    assert _current_edges(service, "moved", RESOURCE_A)[g][1] == [f]
    a.write_text(a.read_text().replace("package p;", "package r;"))
    run, edges = _refreshed(service, root, "moved")
    assert run.files_dependent == 1
    assert edges[g][1] == ["symbol:p.A.f"]
    assert edges == _cold_edges(service, root, "moved", tmp_path / "cold", monkeypatch)
    a.write_text(a.read_text().replace("package r;", "package p;"))
    service.index_resource(RESOURCE_A, root, project="moved")
    assert _current_edges(service, "moved", RESOURCE_A)[g][1] == [f]


def test_a_java_base_of_the_same_package_that_comes_and_goes_is_followed(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``class B extends A`` (no import) names ``A`` of its package. Two other packages
    declare an ``A``: with the package's own deleted the name is ambiguous, with one of
    them deleted as well it is that other package's only ``A``; restored, it is the
    package's own again. Each refresh gives a cold index's edges."""
    root = tmp_path / "jbase"
    for package in ("mro", "override", "exc"):
        (root / package).mkdir(parents=True)
        (root / package / "A.java").write_text(f"package {package};\nclass A {{}}\n")
    (root / "mro" / "B.java").write_text("package mro;\nclass B extends A {}\n")
    own, exc = root / "mro" / "A.java", root / "exc" / "A.java"
    service.index_resource(RESOURCE_A, root, project="jbase")
    b = "https://cleveragents.ai/r/R/mro/B.java#B"
    assert (
        _current_edges(service, "jbase", RESOURCE_A)[b][1]
        == ["https://cleveragents.ai/r/R/mro/A.java#A"] * 2
    )
    own.unlink()
    run, edges = _refreshed_as_cold(service, root, "jbase", tmp_path / "c1", monkeypatch)
    assert run.files_dependent == 1 and edges[b][1] == ["symbol:A"] * 2
    exc.unlink()
    run, edges = _refreshed_as_cold(service, root, "jbase", tmp_path / "c2", monkeypatch)
    assert edges[b][1] == ["https://cleveragents.ai/r/R/override/A.java#A"] * 2
    own.write_text("package mro;\nclass A {}\n")
    run, edges = _refreshed_as_cold(service, root, "jbase", tmp_path / "c3", monkeypatch)
    assert run.files_dependent == 1
    assert edges[b][1] == ["https://cleveragents.ai/r/R/mro/A.java#A"] * 2


def test_a_java_class_of_a_package_imported_on_demand_that_comes_and_goes_is_followed(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``import lib.*;`` in another folder's file: ``new Helper()`` names ``lib.Helper``
    when it comes, nothing when it goes, and the package's own ``Helper`` when that comes;
    each refresh sends the importing file to be analysed again, and gives a cold index's
    edges."""
    root = tmp_path / "ondemand"
    (root / "lib").mkdir(parents=True)
    (root / "app").mkdir()
    (root / "lib" / "Other.java").write_text("package lib;\npublic class Other {}\n")
    (root / "app" / "Main.java").write_text(
        "package app;\nimport lib.*;\nclass Main {\n    void run() { new Helper(); }\n}\n"
    )
    service.index_resource(RESOURCE_A, root, project="ondemand")
    run_uri = "https://cleveragents.ai/r/R/app/Main.java#Main.run"
    assert _current_edges(service, "ondemand", RESOURCE_A)[run_uri][1] == []
    helper = root / "lib" / "Helper.java"
    helper.write_text("package lib;\npublic class Helper {}\n")
    run, edges = _refreshed_as_cold(service, root, "ondemand", tmp_path / "c1", monkeypatch)
    assert run.files_dependent == 1
    assert edges[run_uri][1] == ["https://cleveragents.ai/r/R/lib/Helper.java#Helper"]
    (root / "app" / "Helper.java").write_text("package app;\nclass Helper {}\n")
    run, edges = _refreshed_as_cold(service, root, "ondemand", tmp_path / "c2", monkeypatch)
    assert run.files_dependent == 1
    assert edges[run_uri][1] == ["https://cleveragents.ai/r/R/app/Helper.java#Helper"]
    (root / "app" / "Helper.java").unlink()
    helper.unlink()
    run, edges = _refreshed_as_cold(service, root, "ondemand", tmp_path / "c3", monkeypatch)
    assert run.files_dependent == 1 and edges[run_uri][1] == []


def test_a_java_static_method_imported_on_demand_that_comes_and_goes_is_followed(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``import static lib.Checks.*;`` in another folder's file: a plain ``require(…)``
    names ``Checks.require`` when the class declares it, nothing while it does not (the
    guess of ``org.junit.Assert.require`` neither); each refresh gives a cold index's
    edges."""
    root = tmp_path / "static"
    (root / "lib").mkdir(parents=True)
    (root / "app").mkdir()
    checks = root / "lib" / "Checks.java"
    declared = "package lib;\npublic class Checks {\n    public static void require() {}\n}\n"
    checks.write_text(declared)
    (root / "app" / "Main.java").write_text(
        "package app;\nimport static lib.Checks.*;\nimport static org.junit.Assert.*;\n"
        "class Main {\n    void run() { require(); }\n}\n"
    )
    service.index_resource(RESOURCE_A, root, project="static")
    run_uri = "https://cleveragents.ai/r/R/app/Main.java#Main.run"
    edges = _current_edges(service, "static", RESOURCE_A)
    assert edges[run_uri][1] == ["https://cleveragents.ai/r/R/lib/Checks.java#Checks.require"]
    checks.write_text(declared.replace("require", "ensure"))
    _, refreshed = _refreshed_as_cold(service, root, "static", tmp_path / "c1", monkeypatch)
    assert refreshed[run_uri][1] == []
    checks.write_text(declared)
    run, refreshed = _refreshed_as_cold(service, root, "static", tmp_path / "c2", monkeypatch)
    assert run.files_dependent == 1 and refreshed == edges


def test_an_inherited_method_a_refresh_adds_or_removes_is_followed(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``push`` in ``Stack extends Vector`` calls ``addElement``, which ``Vector`` (another
    file of the package) declares: the call depends on it. When ``Vector`` loses it, or
    gains it back, a refresh leaves the edges a cold index gives."""
    root = tmp_path / "inherit"
    util = root / "util"
    util.mkdir(parents=True)
    vector = util / "Vector.java"
    declared = "package util;\npublic class Vector {\n    void addElement(Object o) {}\n}\n"
    vector.write_text(declared)
    (util / "Stack.java").write_text(
        "package util;\nclass Stack extends Vector {\n"
        "    void push(Object o) { addElement(o); }\n}\n"
    )
    service.index_resource(RESOURCE_A, root, project="inherit")
    push = "https://cleveragents.ai/r/R/util/Stack.java#Stack.push"
    add = "https://cleveragents.ai/r/R/util/Vector.java#Vector.addElement"
    assert _current_edges(service, "inherit", RESOURCE_A)[push][1] == [add]
    vector.write_text(declared.replace("    void addElement(Object o) {}\n", ""))
    _, edges = _refreshed(service, root, "inherit")
    assert edges[push][1] == []  # a guess that nothing answers is no edge
    assert edges == _cold_edges(service, root, "inherit", tmp_path / "cold", monkeypatch)
    vector.write_text(declared)
    run = service.index_resource(RESOURCE_A, root, project="inherit").run
    assert run is not None and run.files_dependent == 1
    assert _current_edges(service, "inherit", RESOURCE_A)[push][1] == [add]


def test_a_call_to_overloaded_java_methods_depends_on_each_overload(
    service: RepoIndexingService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Which overload a Java call picks depends on its arguments' types: the call resolves
    to every overload of the name (it was left unresolved, as ambiguous). An overload
    added or removed by a refresh moves the callers' edges as a cold index would."""
    root = tmp_path / "overloads"
    util, app = root / "src" / "util", root / "src" / "app"
    util.mkdir(parents=True)
    app.mkdir(parents=True)
    checks = util / "Checks.java"
    one, two = (
        "    public static Object need(Object o) { return o; }\n",
        "    public static Object need(Object o, String why) { return o; }\n",
    )
    checks.write_text(f"package util;\n\npublic class Checks {{\n{one}{two}}}\n")
    (app / "Main.java").write_text(
        "package app;\n\nimport util.Checks;\n\n"
        "class Main {\n    Object run(Object x) { return Checks.need(x); }\n}\n"
    )
    (util / "Local.java").write_text(  # the same package, no import
        "package util;\n\nclass Local {\n"
        '    Object run(Object x) { return Checks.need(x, ""); }\n}\n'
    )
    service.index_resource(RESOURCE_A, root, project="overloads")
    need = "https://cleveragents.ai/r/R/src/util/Checks.java#Checks.need"
    main = "https://cleveragents.ai/r/R/src/app/Main.java#Main.run"
    local = "https://cleveragents.ai/r/R/src/util/Local.java#Local.run"
    edges = _current_edges(service, "overloads", RESOURCE_A)
    assert edges[main][1] == edges[local][1] == [need, f"{need}~2"]
    three = "    public static Object need(Object o, int code) { return o; }\n"
    checks.write_text(f"package util;\n\npublic class Checks {{\n{one}{two}{three}}}\n")
    run, edges = _refreshed(service, root, "overloads")
    assert run.files_dependent == 2
    assert edges[main][1] == [need, f"{need}~2", f"{need}~3"]
    assert edges == _cold_edges(service, root, "overloads", tmp_path / "cold", monkeypatch)
    checks.write_text(f"package util;\n\npublic class Checks {{\n{one}}}\n")
    _, edges = _refreshed(service, root, "overloads")
    assert edges[main][1] == edges[local][1] == [need]
    assert edges == _cold_edges(service, root, "overloads", tmp_path / "cold2", monkeypatch)


def test_a_rust_macro_invocation_follows_the_macros_of_its_name(
    service: RepoIndexingService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``square!(x)`` depends on the one ``macro_rules! square`` of the crate, in whatever
    file. A refresh of the invoking file alone still finds it; a second macro of that
    name makes the invocation unresolved (which one is meant is not known), and taking
    it away resolves it again: each time the edges are a cold index's."""
    root = tmp_path / "crate"
    (root / "src").mkdir(parents=True)
    (root / "src" / "macros.rs").write_text(
        "macro_rules! square {\n    ($x:expr) => { $x * $x };\n}\n"
    )
    lib = root / "src" / "lib.rs"
    lib.write_text("#[macro_use]\nmod macros;\n\npub fn area(x: i32) -> i32 { square!(x) }\n")
    service.index_resource(RESOURCE_A, root, project="macros")
    area = "https://cleveragents.ai/r/R/src/lib.rs#area"
    resolved = ["https://cleveragents.ai/r/R/src/macros.rs#square"]
    assert _current_edges(service, "macros", RESOURCE_A)[area][1] == resolved
    lib.write_text(lib.read_text().replace("square!(x)", "square!(x) + 1"))
    run, edges = _refreshed(service, root, "macros")
    assert run.files_analyzed == 1 and edges[area][1] == resolved
    other = root / "src" / "other.rs"
    other.write_text("macro_rules! square {\n    ($x:expr) => { $x };\n}\n")
    run, edges = _refreshed(service, root, "macros")
    assert run.files_dependent == 1
    assert edges[area][1] == ["symbol:macro:square"]
    assert edges == _cold_edges(service, root, "macros", tmp_path / "cold", monkeypatch)
    other.unlink()
    run, edges = _refreshed(service, root, "macros")
    assert run.files_dependent == 1 and edges[area][1] == resolved


def test_a_rust_crate_beside_another_gets_its_own_definitions_on_a_refresh(
    service: RepoIndexingService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two crates in one tree: ``crate::error::make`` and the bare ``Helper`` of crate
    ``b`` never reach crate ``a``'s of those names; when ``b`` gets its own, a refresh
    analyses ``b``'s file naming them again and resolves them as a cold index does."""
    root = tmp_path / "workspace"
    for crate in ("a", "b"):
        (root / crate / "src").mkdir(parents=True)
    make = "pub struct Error;\n\npub fn make() -> Error {\n    Error\n}\n"
    (root / "a" / "src" / "error.rs").write_text(make)
    (root / "a" / "src" / "util.rs").write_text("pub trait Helper {}\n")
    (root / "b" / "src" / "lib.rs").write_text(
        "pub struct Thing;\n\nimpl Helper for Thing {}\n\n"
        "pub fn fail() {\n    crate::error::make();\n}\n"
    )
    service.index_resource(RESOURCE_A, root, project="crates")
    base = "https://cleveragents.ai/r/R/b/src/"
    edges = _current_edges(service, "crates", RESOURCE_A)
    assert edges[f"{base}lib.rs#fail"][1] == ["symbol:crate.error.make"]
    assert "symbol:Helper" in edges[f"{base}lib.rs#Thing~impl~Helper"][1]
    (root / "b" / "src" / "error.rs").write_text(make)
    (root / "b" / "src" / "util.rs").write_text("pub trait Helper {}\n")
    run, refreshed = _refreshed(service, root, "crates")
    assert run.files_dependent == 1
    assert refreshed[f"{base}lib.rs#fail"][1] == [f"{base}error.rs#make"]
    assert f"{base}util.rs#Helper" in refreshed[f"{base}lib.rs#Thing~impl~Helper"][1]
    assert refreshed == _cold_edges(service, root, "crates", tmp_path / "cold", monkeypatch)


def test_a_rust_workspace_resolves_paths_into_its_other_crates_by_their_names(
    service: RepoIndexingService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``use geo::{origin, Point}`` in crate ``app`` reaches crate ``geo``
    (``crates/geo/src``), through the re-export of its ``lib.rs``; a refresh that takes
    ``Point`` away and brings it back gives the edges a cold index gives."""
    root = tmp_path / "workspace"
    geo, app = _crate_folders(root, "geo", "app")
    (geo / "lib.rs").write_text(
        "pub mod shapes;\npub use shapes::Point;\n\npub fn origin() -> Point {\n    Point\n}\n"
    )
    shapes = geo / "shapes.rs"
    shapes.write_text("pub struct Point;\n")
    (app / "main.rs").write_text(
        "use geo::{origin, Point};\n\nfn main() {\n    let p: Point = origin();\n}\n"
    )
    service.index_resource(RESOURCE_A, root, project="ws")
    base = "https://cleveragents.ai/r/R/crates/"
    edges = _current_edges(service, "ws", RESOURCE_A)
    assert f"{base}geo/src/shapes.rs#Point" in edges[f"{base}app/src/main.rs"][1]
    assert edges[f"{base}app/src/main.rs#main"][1] == [f"{base}geo/src/lib.rs#origin"]
    shapes.unlink()
    _, refreshed = _refreshed(service, root, "ws")
    assert "symbol:geo.Point" in refreshed[f"{base}app/src/main.rs"][1]
    assert refreshed == _cold_edges(service, root, "ws", tmp_path / "cold", monkeypatch)
    shapes.write_text("pub struct Point;\n")
    run, refreshed = _refreshed(service, root, "ws")
    assert run.files_dependent >= 1
    assert refreshed == edges
    assert refreshed == _cold_edges(service, root, "ws", tmp_path / "cold2", monkeypatch)


def test_a_rust_derive_macro_and_a_crate_brought_in_as_self_resolve_from_another_crate(
    service: RepoIndexingService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``use macros::Violation`` names the derive macro ``#[proc_macro_derive(Violation)]``
    declares in crate ``macros`` (a node of its own, depending on the function that
    implements it); ``use geo::{self as g, Point}`` brings crate ``geo``
    itself as ``g``, so ``g::origin()`` is ``geo``'s. Renaming the derive and back, each
    refresh gives a cold index's edges."""
    root = tmp_path / "derive"
    macros, geo, app = _crate_folders(root, "macros", "geo", "app")
    derive = macros / "lib.rs"
    source = (
        "use proc_macro::TokenStream;\n\n#[proc_macro_derive(Violation, attributes(v))]\n"
        "pub fn derive_violation(input: TokenStream) -> TokenStream {\n    input\n}\n"
    )
    derive.write_text(source)
    (geo / "lib.rs").write_text("pub struct Point;\n\npub fn origin() -> i32 {\n    0\n}\n")
    (app / "main.rs").write_text(
        "use geo::{self as g, Point};\nuse macros::Violation;\n\n"
        "#[derive(Violation)]\nstruct Rule;\n\nfn main() {\n    g::origin();\n}\n"
    )
    service.index_resource(RESOURCE_A, root, project="derive")
    base = "https://cleveragents.ai/r/R/crates/"
    edges = _current_edges(service, "derive", RESOURCE_A)
    assert {
        f"{base}geo/src/lib.rs",
        f"{base}geo/src/lib.rs#Point",
        f"{base}macros/src/lib.rs#Violation",
    } <= set(edges[f"{base}app/src/main.rs"][1])
    assert edges[f"{base}macros/src/lib.rs#Violation"] == (
        "Violation",
        [f"{base}macros/src/lib.rs#derive_violation"],
    )
    assert edges[f"{base}app/src/main.rs#main"][1] == [f"{base}geo/src/lib.rs#origin"]
    derive.write_text(source.replace("(Violation,", "(Breach,"))
    _, refreshed = _refreshed_as_cold(service, root, "derive", tmp_path / "c1", monkeypatch)
    assert "symbol:macros.Violation" in refreshed[f"{base}app/src/main.rs"][1]
    derive.write_text(source)
    _, refreshed = _refreshed_as_cold(service, root, "derive", tmp_path / "c2", monkeypatch)
    assert refreshed == edges


def test_rust_macros_at_a_crate_root_and_members_through_globs_resolve_from_another_crate(
    service: RepoIndexingService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``use fmt::{format_args, write, Text}``: a ``#[macro_export]`` macro defined in
    ``fmt``'s ``macros.rs`` is at its crate's root, where the crate's ``fn write`` wins
    over the macro ``write`` (another namespace); ``Text::new()`` reaches the method of
    the ``Text`` that ``fmt``'s glob brings in, ``Text::default()`` the type deriving
    ``Default``, as ``Style`` reaches the struct its
    ``bitflags!`` declares. ``use macros::message_formats`` names the
    attribute macro, not the private module of that name (a proc-macro crate exports
    only its macros). Taking the glob, the macro's export, the method and the derive, and
    the attribute macro's attribute, out and back, each refresh gives a cold index's."""
    root = tmp_path / "macros"
    macros, fmt, app = _crate_folders(root, "macros", "fmt", "app")
    (macros / "lib.rs").write_text(
        "use proc_macro::TokenStream;\n\nmod message_formats;\n\n#[proc_macro_attribute]\n"
        "pub fn message_formats(a: TokenStream, b: TokenStream) -> TokenStream {\n    b\n}\n"
    )
    (macros / "message_formats.rs").write_text("pub(crate) fn expand() {}\n")
    lib = fmt / "lib.rs"
    source = "mod macros;\npub mod builders;\npub use builders::*;\n\npub fn write() {}\n"
    lib.write_text(source)
    (fmt / "macros.rs").write_text(
        "#[macro_export]\nmacro_rules! format_args {\n    ($x:expr) => { $x };\n}\n\n"
        "#[macro_export]\nmacro_rules! write {\n    ($x:expr) => { $x };\n}\n"
    )
    (fmt / "builders.rs").write_text(
        "#[derive(Clone, Default)]\npub struct Text;\n\n"
        "impl Text {\n    pub fn new() -> Text {\n        Text\n    }\n}\n\n"
        "bitflags! {\n    pub struct Style: u8 {\n        const BOLD = 1;\n    }\n}\n"
    )
    (app / "main.rs").write_text(
        "use fmt::{format_args, write, Style, Text};\nuse macros::message_formats;\n\n"
        "fn main() {\n    let t = Text::new();\n    let d = Text::default();\n}\n"
    )
    service.index_resource(RESOURCE_A, root, project="macros")
    base = "https://cleveragents.ai/r/R/crates/"
    edges = _current_edges(service, "macros", RESOURCE_A)
    assert {
        f"{base}fmt/src/macros.rs#format_args",
        f"{base}fmt/src/lib.rs#write",
        f"{base}fmt/src/builders.rs#Text",
        f"{base}fmt/src/builders.rs#Style",
        f"{base}macros/src/lib.rs#message_formats",
    } <= set(edges[f"{base}app/src/main.rs"][1])
    text = f"{base}fmt/src/builders.rs#Text"
    assert edges[f"{base}app/src/main.rs#main"][1] == [text, f"{text}.new"]
    lib.write_text(source.replace("pub use builders::*;\n", ""))
    _, refreshed = _refreshed_as_cold(service, root, "macros", tmp_path / "c1", monkeypatch)
    assert refreshed[f"{base}app/src/main.rs#main"][1] == [
        "symbol:fmt.Text.default",
        "symbol:fmt.Text.new",
    ]
    lib.write_text(source)
    _, refreshed = _refreshed_as_cold(service, root, "macros", tmp_path / "c2", monkeypatch)
    assert refreshed == edges
    exported = (fmt / "macros.rs").read_text()
    (fmt / "macros.rs").write_text(
        exported.replace("#[macro_export]\nmacro_rules! format", "macro_rules! format")
    )
    _, refreshed = _refreshed_as_cold(service, root, "macros", tmp_path / "c3", monkeypatch)
    assert "symbol:fmt.format_args" in refreshed[f"{base}app/src/main.rs"][1]
    (fmt / "macros.rs").write_text(exported)
    _, refreshed = _refreshed_as_cold(service, root, "macros", tmp_path / "c4", monkeypatch)
    assert refreshed == edges
    builders = (fmt / "builders.rs").read_text()
    for step, (old, new) in enumerate([("fn new()", "fn empty()"), ("Clone, Default", "Clone")]):
        (fmt / "builders.rs").write_text(builders.replace(old, new))
        home = tmp_path / f"c5-{step}"
        _, refreshed = _refreshed_as_cold(service, root, "macros", home, monkeypatch)
        assert len(refreshed[f"{base}app/src/main.rs#main"][1]) == 2
        assert (
            "symbol:fmt.Text." + ("new" if step == 0 else "default")
            in (refreshed[f"{base}app/src/main.rs#main"][1])
        )
        (fmt / "builders.rs").write_text(builders)
        home = tmp_path / f"c6-{step}"
        _, refreshed = _refreshed_as_cold(service, root, "macros", home, monkeypatch)
        assert refreshed == edges
    attribute = (macros / "lib.rs").read_text()
    (macros / "lib.rs").write_text(attribute.replace("#[proc_macro_attribute]\n", ""))
    _, refreshed = _refreshed_as_cold(service, root, "macros", tmp_path / "c7", monkeypatch)
    assert "symbol:macros.message_formats" in refreshed[f"{base}app/src/main.rs"][1]
    (macros / "lib.rs").write_text(attribute)
    _, refreshed = _refreshed_as_cold(service, root, "macros", tmp_path / "c8", monkeypatch)
    assert refreshed == edges


def test_a_rust_method_a_trait_gives_by_default_resolves_through_the_types_impl(
    service: RepoIndexingService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``e.start()`` for an ``e: &Expr`` in crate ``app`` reaches the default ``fn start``
    of crate ``text``'s trait ``Ranged``, which crate ``ast`` implements for ``Expr`` in
    another file than the struct's, naming the trait by its path (``impl
    text::Ranged for Expr``). Taking the default method, then the impl, out and back,
    and giving ``Expr`` a ``start`` of its own, each refresh gives a cold index's edges."""
    root = tmp_path / "traits"
    text, ast, app = _crate_folders(root, "text", "ast", "app")
    # Another ``start``: the name alone answers no one node (a refresh finds what a
    # method's coming changes by the paths of the types implementing the trait).
    (text / "lib.rs").write_text("mod traits;\npub use traits::Ranged;\n\npub fn start() {}\n")
    trait = text / "traits.rs"
    trait_source = (
        "pub trait Ranged {\n    fn range(&self) -> u32;\n\n"
        "    fn start(&self) -> u32 {\n        self.range()\n    }\n}\n"
    )
    trait.write_text(trait_source)
    (ast / "lib.rs").write_text("pub mod nodes;\nmod generated;\npub use nodes::Expr;\n")
    nodes = ast / "nodes.rs"
    new = "    pub fn new() -> Expr {\n        Expr\n    }\n"
    nodes_source = f"pub struct Expr;\n\nimpl Expr {{\n{new}}}\n"
    nodes.write_text(nodes_source)
    generated = ast / "generated.rs"
    generated_source = (
        "use crate::nodes::Expr;\n\nimpl text::Ranged for Expr {\n"
        "    fn range(&self) -> u32 {\n        0\n    }\n}\n"
    )
    generated.write_text(generated_source)
    (app / "main.rs").write_text("use ast::Expr;\n\nfn main(e: &Expr) -> u32 {\n    e.start()\n}\n")
    service.index_resource(RESOURCE_A, root, project="traits")
    base = "https://cleveragents.ai/r/R/crates/"
    main = f"{base}app/src/main.rs#main"
    edges = _current_edges(service, "traits", RESOURCE_A)
    assert edges[main][1] == [f"{base}text/src/traits.rs#Ranged.start"]
    impl = f"{base}ast/src/generated.rs#Expr~impl~text.Ranged"
    assert f"{base}text/src/traits.rs#Ranged" in edges[impl][1]
    default = "\n\n    fn start(&self) -> u32 {\n        self.range()\n    }"
    own = "    pub fn start(&self) -> u32 {\n        1\n    }\n\n"
    steps = [
        (trait, trait_source.replace(default, ""), "symbol:ast.Expr.start"),
        (generated, "use crate::nodes::Expr;\n", "symbol:ast.Expr.start"),
        (nodes, nodes_source.replace(new, own + new), f"{base}ast/src/nodes.rs#Expr.start"),
    ]
    for step, (path, changed, target) in enumerate(steps):
        source = path.read_text()
        path.write_text(changed)
        home = tmp_path / f"changed-{step}"
        _, refreshed = _refreshed_as_cold(service, root, "traits", home, monkeypatch)
        assert refreshed[main][1] == [target]
        path.write_text(source)
        home = tmp_path / f"back-{step}"
        _, refreshed = _refreshed_as_cold(service, root, "traits", home, monkeypatch)
        assert refreshed == edges


def test_a_rust_call_by_another_crates_path_resolves_without_a_use(
    service: RepoIndexingService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``geo::shapes::origin()`` in crate ``app``, no ``use``: the call reaches crate
    ``geo``'s function; ``std::mem::take`` and ``u16::from`` make no such edge. Taking
    ``origin`` away and back, each refresh gives a cold index's edges."""
    root = tmp_path / "paths"
    geo, app = _crate_folders(root, "geo", "app")
    (geo / "lib.rs").write_text("pub mod shapes;\n")
    shapes = geo / "shapes.rs"
    source = "pub fn origin() -> i32 {\n    0\n}\n"
    shapes.write_text(source)
    (app / "main.rs").write_text(
        "fn main() {\n    let p = geo::shapes::origin();\n"
        "    let v = std::mem::take(&mut 1);\n    let w = u16::from(1u8);\n}\n"
    )
    service.index_resource(RESOURCE_A, root, project="paths")
    base = "https://cleveragents.ai/r/R/crates/"
    edges = _current_edges(service, "paths", RESOURCE_A)
    assert edges[f"{base}app/src/main.rs#main"][1] == [f"{base}geo/src/shapes.rs#origin"]
    shapes.write_text("pub fn start() {}\n")
    _, refreshed = _refreshed_as_cold(service, root, "paths", tmp_path / "c1", monkeypatch)
    assert refreshed[f"{base}app/src/main.rs#main"][1] == ["symbol:geo.shapes.origin"]
    shapes.write_text(source)
    _, refreshed = _refreshed_as_cold(service, root, "paths", tmp_path / "c2", monkeypatch)
    assert refreshed == edges


def test_rust_paths_resolve_through_self_super_and_re_exports(
    service: RepoIndexingService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``self::``, ``super::``, a path from the module (``use parser::…`` in ``lib.rs``)
    and ``crate::Name`` re-exported by ``pub use`` (renamed with ``as``, or through a
    glob) resolve to the definitions; a refresh of one file resolves them again."""
    src = tmp_path / "mini" / "src"
    (src / "parser").mkdir(parents=True)
    (src / "lib.rs").write_text(
        "pub mod parser;\npub mod eval;\n"
        "pub use parser::tokens::Token;\npub use parser::tokens::lex as tokenize;\n"
    )
    (src / "parser" / "mod.rs").write_text(
        "pub mod tokens;\npub mod spans;\npub use self::spans::*;\n"
    )
    (src / "parser" / "tokens.rs").write_text(
        "use super::Span;\n\npub struct Token {\n    pub span: Span,\n}\n\n"
        "pub fn lex(s: &str) -> Vec<Token> {\n    Vec::new()\n}\n"
    )
    (src / "parser" / "spans.rs").write_text("pub struct Span {\n    pub start: usize,\n}\n")
    (src / "eval.rs").write_text(
        "use crate::tokenize;\nuse crate::Token;\nuse crate::parser::Span;\n\n"
        'pub fn eval(t: &Token) -> Span {\n    let v = tokenize("x");\n    t.span\n}\n'
    )
    service.index_resource(RESOURCE_A, src.parent, project="rs")
    base = "https://cleveragents.ai/r/R/src/"
    expected = {
        f"{base}parser/tokens.rs#lex",
        f"{base}parser/tokens.rs#Token",
        f"{base}parser/spans.rs#Span",
    }
    edges = _current_edges(service, "rs", RESOURCE_A)
    assert expected <= set(edges[f"{base}eval.rs"][1])
    assert f"{base}parser/tokens.rs#lex" in edges[f"{base}eval.rs#eval"][1]
    assert f"{base}parser/spans.rs#Span" in edges[f"{base}parser/tokens.rs"][1]  # super::
    assert f"{base}parser/tokens.rs#Token" in edges[f"{base}lib.rs"][1]  # from the module
    (src / "eval.rs").write_text((src / "eval.rs").read_text() + "// touched\n")
    run = service.index_resource(RESOURCE_A, src.parent, project="rs").run
    assert run is not None and run.files_analyzed == 1
    assert _current_edges(service, "rs", RESOURCE_A) == edges
    # Unresolved, a path from the module is kept from the crate's root; when the
    # definition comes back, the file naming it so is analysed again.
    (src / "parser" / "width.rs").write_text(
        "use super::spans::Span;\n\npub fn width(s: &Span) -> usize {\n    s.start\n}\n"
    )
    spans = (src / "parser" / "spans.rs").read_text()
    (src / "parser" / "spans.rs").unlink()
    service.index_resource(RESOURCE_A, src.parent, project="rs")
    width = _current_edges(service, "rs", RESOURCE_A)[f"{base}parser/width.rs"][1]
    assert "symbol:crate.parser.spans.Span" in width
    (src / "parser" / "spans.rs").write_text(spans)
    run, refreshed = _refreshed(service, src.parent, "rs")
    assert run.files_dependent >= 1
    assert f"{base}parser/spans.rs#Span" in refreshed[f"{base}parser/width.rs"][1]
    assert refreshed == _cold_edges(service, src.parent, "rs", tmp_path / "cold", monkeypatch)
    # A re-export removed: what reached the definition through it no longer does.
    (src / "parser" / "mod.rs").write_text("pub mod tokens;\npub mod spans;\n")
    _, refreshed = _refreshed(service, src.parent, "rs")
    assert "symbol:crate.parser.Span" in refreshed[f"{base}eval.rs"][1]
    assert refreshed == _cold_edges(service, src.parent, "rs", tmp_path / "cold2", monkeypatch)
    # ... and added back: what names the definition through it reaches it again.
    (src / "parser" / "mod.rs").write_text(
        "pub mod tokens;\npub mod spans;\npub use self::spans::*;\n"
    )
    _, refreshed = _refreshed(service, src.parent, "rs")
    assert f"{base}parser/spans.rs#Span" in refreshed[f"{base}eval.rs"][1]
    assert refreshed == _cold_edges(service, src.parent, "rs", tmp_path / "cold3", monkeypatch)


def test_a_refresh_finds_modules_outside_the_usual_source_folders(
    service: RepoIndexingService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A package below ``python/`` (not the root, ``src/`` or ``lib/``) and a ``.pyi``
    stub: a refresh of a file importing them resolves the imports as the cold index did."""
    root = tmp_path / "proj"
    package = root / "python" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from pkg.core import run\n")
    (package / "core.py").write_text("def run():\n    return 1\n")
    (package / "_native.pyi").write_text("def fast() -> int: ...\n")
    (root / "tests").mkdir()
    test = root / "tests" / "test_core.py"
    test.write_text(
        "import pkg.core\nfrom pkg import _native\n\n\n"
        "def test_run():\n    assert pkg.core.run() == _native.fast()\n"
    )
    service.index_resource(RESOURCE_A, root, project="py")
    cold = _current_edges(service, "py", RESOURCE_A)
    resolved = cold["https://cleveragents.ai/r/R/tests/test_core.py"][1]
    assert "https://cleveragents.ai/r/R/python/pkg/core.py" in resolved
    test.write_text(test.read_text() + "# touched\n")
    service.index_resource(RESOURCE_A, root, project="py")
    assert _current_edges(service, "py", RESOURCE_A) == _cold_edges(
        service, root, "py", tmp_path / "cold", monkeypatch
    )


def _mutate(root: Path, rng: random.Random, callees: list[int]) -> str:
    """One random edit of the kind a working day makes: a body changed, a function renamed
    or added, a file deleted, moved or added, a caller saved (its callee, ``callees``,
    comes with a later edit), a second definition of a name."""
    # Not the corpus's latin1.py: an editor would not write it back as UTF-8 text either.
    files = [p for p in sorted(root.rglob("*.py")) if p.name != "latin1.py"]
    path = rng.choice(files)
    text = path.read_text()
    kind = rng.choice(["edit", "rename", "delete", "move", "add", "caller", "callee", "duplicate"])
    names = re.findall(r"^def (\w+)", text, re.M)
    if kind == "rename" and names:
        name = rng.choice(names)
        path.write_text(re.sub(rf"\b{name}\b", f"{name}_renamed", text))
    elif kind == "delete":
        path.unlink()
    elif kind == "move":
        (root / "moved").mkdir(exist_ok=True)
        path.rename(root / "moved" / f"{rng.randrange(10**6)}_{path.name}")
    elif kind == "add":
        (path.parent / f"new_{rng.randrange(10**6)}.py").write_text(
            "from cleveragents.errors import CleverAgentsError\n\n\n"
            "class Fresh(CleverAgentsError):\n    def go(self):\n        return helper()\n"
        )
    elif kind == "caller":
        n = rng.randrange(10**6)
        callees.append(n)
        (root / "cleveragents" / f"caller_{n}.py").write_text(
            f"from cleveragents.later_{n} import later_fn\n\n\ndef use():\n    return later_fn()\n"
        )
    elif kind == "callee" and callees:
        n = callees.pop(0)
        (root / "cleveragents" / f"later_{n}.py").write_text("def later_fn():\n    return 1\n")
    elif kind == "duplicate" and names:
        (root / "cleveragents" / f"dup_{rng.randrange(10**6)}.py").write_text(
            f"def {rng.choice(names)}():\n    return 3\n"
        )
    else:
        kind = "edit"
        path.write_text(text + f"\n\ndef added_{rng.randrange(10**6)}():\n    return helper()\n")
    return f"{kind} {path.relative_to(root)}"


def test_refreshes_after_random_edits_give_what_cold_indexes_give(
    service: RepoIndexingService, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After each of a run of random edits (a fixed seed), the refreshed index holds the
    same current nodes, with the same names and edges, as a cold index of the same files."""
    rng, callees = random.Random(5), []
    service.index_resource(RESOURCE_A, corpus, project="demo")
    for step in range(8):
        done = [_mutate(corpus, rng, callees) for _ in range(rng.randint(1, 3))]
        if step == 2:  # a package stops being one
            (corpus / "cleveragents" / "cli" / "__init__.py").unlink(missing_ok=True)
            done.append("delete cleveragents/cli/__init__.py")
        service.index_resource(RESOURCE_A, corpus, project="demo")
        expected = _cold_edges(service, corpus, "demo", tmp_path / f"cold-{step}", monkeypatch)
        assert _current_edges(service, "demo", RESOURCE_A) == expected, done


def test_the_primary_language_is_code_even_when_prose_outweighs_it(
    service: RepoIndexingService, tmp_path: Path
) -> None:
    """Like Flask's sdist: more reStructuredText than Python. Each file keeps the language
    its name says (not the fallback analyzer's "text"); a tree of prose only is prose."""
    tree = tmp_path / "project"
    (tree / "docs").mkdir(parents=True)
    for page in range(5):
        (tree / "docs" / f"page{page}.rst").write_text("Title\n=====\n\n" + "Some prose. " * 400)
    (tree / "app.py").write_text("def main():\n    return 1\n")
    result = service.index_resource(RESOURCE_A, tree, project="demo")
    assert result.metadata.primary_language == "python"
    assert {f.path: f.language for f in result.files}["docs/page0.rst"] == "restructuredtext"
    (tree / "app.py").unlink()
    again = service.refresh_index(RESOURCE_A, tree)
    assert again.metadata.primary_language == "restructuredtext"


def test_refresh_analyses_only_changed_files(service: RepoIndexingService, corpus: Path) -> None:
    """A no-change refresh analyses nothing; one edited file is the only one analysed."""
    service.index_resource(RESOURCE_A, corpus, project="demo")
    again = service.refresh_index(RESOURCE_A, corpus)
    assert again.run is not None and again.run.files_analyzed == 0
    target = corpus / "cleveragents" / "paths.py"
    target.write_text(target.read_text() + "\n\ndef brand_new_helper() -> int:\n    return 42\n")
    changed = service.refresh_index(RESOURCE_A, corpus)
    assert changed.run is not None
    assert changed.run.files_analyzed == 1
    assert changed.run.nodes_added >= 1
    hits = _search(service, "demo", "brand_new_helper", {RESOURCE_A})
    assert hits and hits[0].metadata.get("path") == "cleveragents/paths.py"


def test_a_refresh_told_the_changed_paths_looks_at_those_alone(
    service: RepoIndexingService, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A watcher names the paths saved: the refresh looks at those without walking the
    tree (``paths_looked_at``), a file added, edited and deleted alike. It trusts the
    paths: an edit they do not name waits for the next walk, which a run after one that
    did not end ready makes; then the index is what a cold index is."""
    service.index_resource(RESOURCE_A, corpus, project="demo")
    paths = corpus / "cleveragents" / "paths.py"
    paths.write_text(paths.read_text() + "\n\ndef brand_new_helper() -> int:\n    return 42\n")
    (corpus / "cleveragents" / "fresh.py").write_text(
        "from cleveragents.paths import brand_new_helper\n\n\ndef use():\n"
        "    return brand_new_helper()\n"
    )
    (corpus / "broken.py").unlink()
    unnamed = corpus / "latin1.py"
    unnamed.write_bytes(unnamed.read_bytes() + b"\n\ndef not_named_yet():\n    return 0\n")
    named = ["cleveragents/paths.py", "cleveragents/fresh.py", "broken.py"]
    run = service.index_resource(RESOURCE_A, corpus, project="demo", changed_paths=named).run
    assert run is not None and run.paths_looked_at == 3
    assert run.files_analyzed - run.files_dependent == 2 and run.files_removed == 1
    assert _search(service, "demo", "brand_new_helper", {RESOURCE_A})
    hits = _search(service, "demo", "not_named_yet", {RESOURCE_A})
    assert not any(hit.uko_uri.endswith("#not_named_yet") for hit in hits)
    service._set_status(service.get_index_status(RESOURCE_A, "demo").index_id, "stale", "stopped")  # type: ignore[union-attr]
    run = service.index_resource(RESOURCE_A, corpus, project="demo", changed_paths=[]).run
    assert run is not None and run.paths_looked_at is None and run.files_analyzed == 1
    assert _current_edges(service, "demo", RESOURCE_A) == _cold_edges(
        service, corpus, "demo", tmp_path / "cold", monkeypatch
    )


def test_nodes_let_go_of_their_renderings_keep_their_fingerprints(
    service: RepoIndexingService, corpus: Path
) -> None:
    """Pooled runs take each node's fingerprint hash in the analysis workers and let its deep
    renderings go: the fingerprints equal those of whole nodes (a serial run's), so a
    forced pooled run over the same files revises nothing, and full sources are kept."""
    serial = RepoIndexingService(service.database, service.registry, service.config, workers=1)
    first = serial.index_resource(RESOURCE_A, corpus, project="demo")
    again = service.index_resource(RESOURCE_A, corpus, project="demo", force=True)
    assert again.run is not None and first.run is not None
    assert again.run.files_analyzed == first.run.files_analyzed > 64  # the pool was used
    assert (again.run.nodes_added, again.run.nodes_revised) == (0, 0)
    assert again.run.nodes_unchanged == first.metadata.node_count

    service.index_resource(RESOURCE_B, corpus, project="fresh")  # pooled from the start
    index = ProjectIndex.open("fresh", service.registry, service.config, create=False)
    try:
        module = next(
            n
            for n in index.nodes.iter_current([RESOURCE_B])
            if n.path == "cleveragents/plugins.py" and n.parent is None
        )
    finally:
        index.close()
    source = (corpus / "cleveragents" / "plugins.py").read_text()
    assert module.rendering(9).strip() == source.strip()
    assert module.rendering(6) and module.rendering(6) != module.rendering(9)


def test_a_forced_run_keeps_what_a_newer_analyzer_finds(
    service: RepoIndexingService, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A node's properties are part of its fingerprint: after an analyzer learns to see
    more in the same lines, ``index --force`` stores the new properties as revisions."""
    from cleveragents_acms.analyzers.python import PythonAnalyzer

    serial = RepoIndexingService(service.database, service.registry, service.config, workers=1)
    serial.index_resource(RESOURCE_A, corpus, project="demo")
    analyze = PythonAnalyzer.analyze

    def sees_more(self: PythonAnalyzer, *args: Any, **kwargs: Any) -> Any:
        result = analyze(self, *args, **kwargs)
        for node in result.nodes:
            node.properties["reviewed"] = "yes"
        return result

    monkeypatch.setattr(PythonAnalyzer, "analyze", sees_more)
    again = serial.index_resource(RESOURCE_A, corpus, project="demo", force=True)
    assert again.run is not None and again.run.nodes_revised > 0
    index = ProjectIndex.open("demo", service.registry, service.config, create=False)
    try:
        python = [n for n in index.nodes.iter_current([RESOURCE_A]) if n.path.endswith(".py")]
    finally:
        index.close()
    assert python and all(n.properties.get("reviewed") == "yes" for n in python)


def test_a_refresh_after_the_analyzers_changed_analyses_every_file(
    service: RepoIndexingService, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index records its analyzers' versions; a refresh after an upgrade (or an analyzer
    plugin installed) analyses every file again, once, and says why."""
    from cleveragents_acms.indexing import service as service_module

    first = service.index_resource(RESOURCE_A, corpus, project="demo")
    built_with = first.metadata.analyzers or ""
    assert "python@" in built_with and "markdown@" in built_with
    assert service.refresh_index(RESOURCE_A, corpus).run.files_analyzed == 0  # type: ignore[union-attr]

    python = next(t for t in built_with.split() if t.startswith("python@"))
    upgraded = built_with.replace(python, "python@99") + " golang@1.0"
    monkeypatch.setattr(service_module, "analyzer_versions", lambda specs: upgraded)
    again = service.refresh_index(RESOURCE_A, corpus)
    assert again.run is not None and again.run.files_analyzed == first.run.files_analyzed  # type: ignore[union-attr]
    assert again.run.reanalysis is not None
    assert f"{python} -> python@99" in again.run.reanalysis
    assert "+golang@1.0" in again.run.reanalysis
    assert again.metadata.analyzers == upgraded
    settled = service.refresh_index(RESOURCE_A, corpus)
    assert settled.run is not None and settled.run.files_analyzed == 0
    assert settled.run.reanalysis is None


def test_a_revised_analyzer_analyses_its_own_files_again(
    service: RepoIndexingService, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An analyzer that declares a new ``revision`` (what it finds changed within one
    release) sends only the files it read to be analysed again, once, and says so; the
    Python files of the same index are not read."""
    from cleveragents_acms.analyzers.treesitter import GoAnalyzer

    (corpus / "tool").mkdir()
    (corpus / "tool" / "main.go").write_text(
        "package main\n\nfunc helper() int { return 1 }\n\nfunc main() { helper() }\n"
    )
    (corpus / "tool" / "more.go").write_text("package main\n\nfunc other() { helper() }\n")
    first = service.index_resource(RESOURCE_A, corpus, project="demo")
    assert first.metadata.analyzers is not None
    assert f"go@{version('cleveragents-acms')}+{GoAnalyzer.revision}" in first.metadata.analyzers

    monkeypatch.setattr(GoAnalyzer, "revision", GoAnalyzer.revision + 1)
    again = service.refresh_index(RESOURCE_A, corpus)
    assert again is not None and again.run is not None
    assert again.run.files_analyzed == 2
    assert again.run.files_unchanged == first.run.files_analyzed - 2  # type: ignore[union-attr]
    assert again.run.reanalysis is not None
    assert again.run.reanalysis.startswith("the files of go analysed again")
    assert f"+{GoAnalyzer.revision - 1} -> go@" in again.run.reanalysis
    # Nothing the analyzer finds differs here: the nodes are as they were, not revised.
    assert again.run.nodes_revised == again.run.nodes_added == again.run.nodes_retired == 0
    settled = service.refresh_index(RESOURCE_A, corpus)
    assert settled is not None and settled.run is not None
    assert settled.run.files_analyzed == 0 and settled.run.reanalysis is None


def test_without_analyzers_nothing_is_claimed(service: RepoIndexingService, corpus: Path) -> None:
    """No analyzer registered (ACMS's plugin disabled): a clear error, and no status row
    left behind in ``indexing``."""
    from cleveragents.errors import CleverAgentsError
    from cleveragents.registry import Registry

    bare = RepoIndexingService(service.database, Registry(), service.config, workers=1)
    with pytest.raises(CleverAgentsError, match="no analyzers are registered"):
        bare.index_resource(RESOURCE_A, corpus, project="demo")
    assert service.get_index_status(RESOURCE_A, "demo") is None


def test_touch_without_change_is_not_reanalysed(service: RepoIndexingService, corpus: Path) -> None:
    """A new mtime with the same content only updates the stored mtime."""
    service.index_resource(RESOURCE_A, corpus, project="demo")
    target = corpus / "cleveragents" / "errors.py"
    target.write_bytes(target.read_bytes())
    run = service.refresh_index(RESOURCE_A, corpus).run
    assert run is not None and run.files_analyzed == 0


def test_a_refresh_reports_the_files_its_index_now_records(
    service: RepoIndexingService, corpus: Path
) -> None:
    """The files a refresh returns are those the index records after it: changed, touched,
    added and removed files included, each with its new size and time stamp."""
    service.index_resource(RESOURCE_A, corpus, project="demo")
    changed = corpus / "cleveragents" / "errors.py"
    changed.write_text(changed.read_text() + "\n\ndef added():\n    return 2\n")
    touched = corpus / "cleveragents" / "paths.py"
    touched.write_bytes(touched.read_bytes())
    os.utime(touched, ns=(touched.stat().st_atime_ns, touched.stat().st_mtime_ns + 10**9))
    (corpus / "cleveragents" / "ids.py").unlink(missing_ok=True)
    (corpus / "latin1.py").unlink()
    (corpus / "added.py").write_text("def new_one():\n    return 3\n")
    done = service.refresh_index(RESOURCE_A, corpus)
    stored = service.get_index(RESOURCE_A, "demo")
    assert stored is not None
    assert done.files == tuple(sorted(stored.files, key=lambda f: f.path))
    by_path = {f.path: f for f in done.files}
    assert "latin1.py" not in by_path and "added.py" in by_path
    assert by_path["cleveragents/errors.py"].size_bytes == changed.stat().st_size
    assert by_path["cleveragents/paths.py"].last_modified == str(touched.stat().st_mtime_ns)
    assert done.metadata.file_count == len(done.files)


def test_revision_chain_and_removed_files(service: RepoIndexingService, corpus: Path) -> None:
    """A changed node is kept as a retired version; its successor points back to it."""
    service.index_resource(RESOURCE_A, corpus, project="demo")
    before = datetime.now(UTC)
    target = corpus / "cleveragents" / "paths.py"
    target.write_text(
        target.read_text().replace("def home() -> Path:", "def home() -> Path:  # v2")
    )
    (corpus / "broken.py").unlink()
    run = service.refresh_index(RESOURCE_A, corpus).run
    assert run is not None and run.files_removed == 1 and run.nodes_revised >= 1
    index = ProjectIndex.open("demo", service.registry, service.config, create=False)
    try:
        uri = next(
            n.uri
            for n in index.nodes.iter_current([RESOURCE_A])
            if n.path == "cleveragents/paths.py" and n.name == "home"
        )
        history = index.nodes.history(uri)
        assert [v.is_current for v in history] == [False, True]
        assert history[1].revision_of == history[0].valid_from
        assert history[0].valid_until is not None
        old = index.nodes.at_time(before - timedelta(microseconds=1), [RESOURCE_A])
        assert any(v.node.uri == uri and "# v2" not in v.node.rendering(9) for v in old)
        assert not any(n.path == "broken.py" for n in index.nodes.iter_current([RESOURCE_A]))
        graph = index.graph.query_at_time(
            before - timedelta(microseconds=1), frozenset({RESOURCE_A})
        )
        assert graph.triples
    finally:
        index.close()


def test_a_class_s_earlier_version_still_contains_the_method_a_refresh_removed(
    service: RepoIndexingService, tmp_path: Path
) -> None:
    """The refresh revises the class (its lines moved) before it retires the removed
    method: the class's version in history still contains it, as the graph stood."""
    root = tmp_path / "repo"
    root.mkdir()
    source = (
        "class Shape:\n    def area(self):\n        return 0\n\n"
        "    def gone(self):\n        return 1\n"
    )
    (root / "shapes.py").write_text(source)
    service.index_resource(RESOURCE_A, root, project="demo")
    before = datetime.now(UTC)
    (root / "shapes.py").write_text("# moved\n" + source.split("\n    def gone")[0] + "\n")
    run = service.refresh_index(RESOURCE_A, root).run
    assert run is not None and run.nodes_revised >= 2 and run.nodes_retired == 1
    index = ProjectIndex.open("demo", service.registry, service.config, create=False)
    try:
        shape, gone = (node_uri(RESOURCE_A, "shapes.py", name) for name in ("Shape", "Shape.gone"))
        contains = UKO + "contains"
        now = set(index.graph.get_triples(shape).triples)
        assert (shape, contains, node_uri(RESOURCE_A, "shapes.py", "Shape.area")) in now
        assert (shape, contains, gone) not in now
        then = index.graph.query_at_time(
            before - timedelta(microseconds=1), frozenset({RESOURCE_A})
        )
        assert (shape, contains, gone) in then.triples
        assert (shape, UKO + "sourceRange", "1:1-6:0") in then.triples
        assert (shape, UKO + "sourceRange", "2:1-4:0") in now
    finally:
        index.close()


def test_projects_and_resources_are_isolated(
    service: RepoIndexingService, corpus: Path, tmp_path: Path
) -> None:
    """A query scoped to one resource never returns another's nodes, even in one index."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "zebra.py").write_text("def zebra_unique_function():\n    return 'stripes'\n")
    service.index_resource(RESOURCE_A, corpus, project="demo")
    service.index_resource(RESOURCE_B, other, project="demo")
    in_a = _search(service, "demo", "zebra_unique_function", {RESOURCE_A})
    assert all(RESOURCE_A in hit.uko_uri and "zebra" not in hit.uko_uri for hit in in_a)
    in_b = _search(service, "demo", "zebra_unique_function", {RESOURCE_B})
    assert in_b and in_b[0].uko_uri.endswith("zebra.py#zebra_unique_function")
    service.index_resource(RESOURCE_B, other, project="zoo")
    assert {m.project_name for m in service.list_indexes()} == {"demo", "zoo"}


def test_interrupt_keeps_previous_index_usable(service: RepoIndexingService, corpus: Path) -> None:
    """Ctrl-C during a refresh leaves the old index searchable and the status not stuck."""
    service.index_resource(RESOURCE_A, corpus, project="demo")
    target = corpus / "cleveragents" / "paths.py"
    target.write_text(target.read_text() + "\n\ndef interrupted_addition():\n    pass\n")

    def interrupt(done: int, total: int, path: str) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        service.refresh_index(RESOURCE_A, corpus, progress=interrupt)
    status = service.get_index_status(RESOURCE_A, "demo")
    assert status is not None and status.status == "stale"
    assert _search(service, "demo", "PluginHost", {RESOURCE_A})
    assert not any(
        "interrupted_addition" in h.uko_uri
        for h in _search(service, "demo", "interrupted_addition", {RESOURCE_A})
    )
    finished = service.refresh_index(RESOURCE_A, corpus)
    assert finished.metadata.status == "ready"
    assert any(
        "interrupted_addition" in h.uko_uri
        for h in _search(service, "demo", "interrupted_addition", {RESOURCE_A})
    )


def test_a_refresh_stopped_inside_a_graph_revision_is_completed_by_the_next(
    service: RepoIndexingService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C after the old versions were copied into history but before the current
    graph changed: the next refresh ends each old version once, and the graph is what
    an uninterrupted refresh gives."""
    from cleveragents_acms.backends.graph import OxigraphGraphBackend

    root = tmp_path / "repo"
    root.mkdir()
    source = "def first():\n    return 1\n\n\ndef second():\n    return first()\n"
    (root / "m.py").write_text(source)
    service.index_resource(RESOURCE_A, root, project="demo")
    before = datetime.now(UTC)
    (root / "m.py").write_text("import os\n" + source)
    apply = OxigraphGraphBackend._apply

    def stopped(self: OxigraphGraphBackend, moves: Any) -> None:
        if moves.copies:
            self.store.extend(moves.copies)
        raise KeyboardInterrupt

    monkeypatch.setattr(OxigraphGraphBackend, "_apply", stopped)
    with pytest.raises(KeyboardInterrupt):
        service.refresh_index(RESOURCE_A, root)
    monkeypatch.setattr(OxigraphGraphBackend, "_apply", apply)
    run = service.refresh_index(RESOURCE_A, root).run
    assert run is not None and run.nodes_revised >= 2
    first = node_uri(RESOURCE_A, "m.py", "first")
    index = ProjectIndex.open("demo", service.registry, service.config, create=False)
    try:
        now = set(index.graph.get_triples(first).triples)
        assert (first, UKO + "sourceRange", "2:1-3:0") in now
        assert (first, UKO + "sourceRange", "1:1-2:0") not in now
        ends = index.graph.select(
            f"SELECT ?until WHERE {{ ?old <http://purl.org/dc/terms/isVersionOf> <{first}> ; "
            "uko:validUntil ?until }",
            scope=frozenset({RESOURCE_A}),
            include_history=True,
        )
        assert len(ends) == 1
        then = index.graph.query_at_time(before, frozenset({RESOURCE_A})).triples
        assert (first, UKO + "sourceRange", "1:1-2:0") in then
        bookkeeping = {UKO + "isRevisionOf", UKO + "isCurrent"}
        assert sorted(p for s, p, _ in then if s == first) == sorted(
            p for s, p, _ in now if s == first and p not in bookkeeping
        )
    finally:
        index.close()


def test_files_changing_during_a_run_are_caught_up_by_the_next(
    service: RepoIndexingService, corpus: Path
) -> None:
    """A file removed after discovery is reported, not fatal; a file rewritten after it is
    indexed as read; the next refresh brings the index to the files as they are."""
    serial = RepoIndexingService(service.database, service.registry, service.config, workers=1)
    gone = corpus / "cleveragents" / "paths.py"
    edited = corpus / "cleveragents" / "slots.py"

    def meddle(done: int, total: int, path: str) -> None:
        if done == 1:  # files are analysed in path order: both are still to come
            gone.unlink()
            edited.write_text("def rewritten_while_indexing():\n    return 1\n")

    first = serial.index_resource(RESOURCE_A, corpus, project="demo", progress=meddle)
    assert first.metadata.status == "ready"
    assert first.run is not None
    assert any(p == "cleveragents/paths.py" and "unreadable" in e for p, e in first.run.errors)
    assert "#rewritten_while_indexing" in _found(service, "rewritten_while_indexing")

    edited.write_text("def rewritten_once_more():\n    return 2\n")
    again = serial.refresh_index(RESOURCE_A, corpus)
    assert again.run is not None and again.run.errors == []
    assert {f.path for f in again.files}.isdisjoint({"cleveragents/paths.py"})
    assert "#rewritten_once_more" in _found(service, "rewritten_once_more")
    assert "#rewritten_while_indexing" not in _found(service, "rewritten_while_indexing")


def _found(service: RepoIndexingService, query: str) -> str:
    """The URIs of the project's search hits, one string."""
    return " ".join(h.uko_uri for h in _search(service, "demo", query, {RESOURCE_A}))


def test_full_disk_is_a_clear_error(
    service: RepoIndexingService, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ENOSPC while committing: a one-line error, the old index intact."""
    from cleveragents.errors import CleverAgentsError
    from cleveragents_acms.backends.text import TantivyTextBackend

    service.index_resource(RESOURCE_A, corpus, project="demo")
    (corpus / "cleveragents" / "new_module.py").write_text("def disk_full_probe():\n    pass\n")

    def no_space(self: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(TantivyTextBackend, "commit", no_space)
        with pytest.raises(CleverAgentsError, match="disk full"):
            service.refresh_index(RESOURCE_A, corpus)
    assert _search(service, "demo", "PluginHost", {RESOURCE_A})
    assert not any(
        "disk_full_probe" in h.uko_uri
        for h in _search(service, "demo", "disk_full_probe", {RESOURCE_A})
    )


@pytest.mark.parametrize("in_background", [True, False])
def test_the_text_index_commits_beside_name_resolution_when_its_backend_allows(
    service: RepoIndexingService,
    corpus: Path,
    monkeypatch: pytest.MonkeyPatch,
    in_background: bool,
) -> None:
    """Tantivy commits from a thread of its own while names are resolved; a backend that
    does not say ``commits_in_background`` is committed in the indexer's thread, at the
    end, as before. Either way the new text is searchable after the run."""
    import threading

    from cleveragents_acms.backends.text import TantivyTextBackend

    committed_in: list[str] = []
    commit = TantivyTextBackend.commit

    def noted(self: TantivyTextBackend) -> None:
        committed_in.append(threading.current_thread().name)
        commit(self)

    monkeypatch.setattr(TantivyTextBackend, "commit", noted)
    monkeypatch.setattr(TantivyTextBackend, "commits_in_background", in_background)
    service.index_resource(RESOURCE_A, corpus, project="demo")
    assert committed_in == ["text-commit" if in_background else threading.current_thread().name]
    assert _search(service, "demo", "PluginHost", {RESOURCE_A})


def test_stale_indexing_rows_are_repaired(service: RepoIndexingService, corpus: Path) -> None:
    """A row left in 'indexing' by a dead process is repaired at start-up."""
    from sqlalchemy import update

    from cleveragents_acms.indexing.tables import repo_indexes

    service.index_resource(RESOURCE_A, corpus, project="demo")
    with service.database.engine.begin() as conn:
        conn.execute(update(repo_indexes).values(status="indexing", worker_pid=2**22 + 12345))
    assert service.cleanup_stale_indexing() == 1
    status = service.get_index_status(RESOURCE_A, "demo")
    assert status is not None and status.status == "stale"
    assert "interrupted" in (status.error_message or "")


def test_a_run_waits_for_another_live_process_indexing_the_resource(
    service: RepoIndexingService, corpus: Path
) -> None:
    """A run that finds the resource being indexed by another live process fails at
    once with ``wait=0`` (naming that process), and with a wait tells ``on_wait`` the
    process once, then runs when that one ended."""
    import subprocess
    import sys
    import threading

    from sqlalchemy import update

    from cleveragents_acms.indexing.service import IndexBusy
    from cleveragents_acms.indexing.tables import repo_indexes

    service.index_resource(RESOURCE_A, corpus, project="demo")
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(2)"])
    reaped = threading.Thread(target=other.wait)  # so its id is free once it ends
    reaped.start()
    with service.database.engine.begin() as conn:
        conn.execute(update(repo_indexes).values(status="indexing", worker_pid=other.pid))
    with pytest.raises(IndexBusy) as busy:
        service.index_resource(RESOURCE_A, corpus, project="demo")
    assert busy.value.pid == other.pid and busy.value.code == 409
    told: list[int] = []
    result = service.index_resource(
        RESOURCE_A, corpus, project="demo", wait=float("inf"), on_wait=told.append
    )
    assert told == [other.pid]
    assert other.poll() is not None
    assert result.metadata.status == "ready"
    reaped.join()


def test_remove_index_drops_everything(service: RepoIndexingService, corpus: Path) -> None:
    """remove_index clears the stores and the status rows."""
    service.index_resource(RESOURCE_A, corpus, project="demo")
    assert service.remove_index(RESOURCE_A)
    assert service.get_index_status(RESOURCE_A) is None
    assert _search(service, "demo", "PluginHost", {RESOURCE_A}) == []
    assert not service.remove_index(RESOURCE_A)


def test_bad_input(service: RepoIndexingService, tmp_path: Path) -> None:
    """A missing folder or an empty project name is a validation error."""
    from cleveragents.errors import ValidationError

    with pytest.raises(ValidationError, match="does not exist"):
        service.index_resource(RESOURCE_A, tmp_path / "missing", project="demo")
    with pytest.raises(ValidationError, match="project"):
        service.index_resource(RESOURCE_A, tmp_path, project=" ")


def _assert_the_graph_types_every_current_node(service: RepoIndexingService) -> None:
    """The graph of project ``demo`` holds a type for each of resource A's current nodes
    (a bulk load that ended whole)."""
    index = ProjectIndex.open("demo", service.registry, service.config, create=False)
    try:
        nodes = list(index.nodes.iter_current([RESOURCE_A]))
        typed = index.graph.sparql_query(
            "SELECT (COUNT(DISTINCT ?n) AS ?c) WHERE { ?n a ?t }", scope=frozenset({RESOURCE_A})
        )
        assert nodes and int(typed.triples[0][2]) == len(nodes)  # (row, variable, value)
    finally:
        index.close()


def test_big_fresh_graph_loads_run_in_a_child_process(
    service: RepoIndexingService, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold index past the threshold loads the graph from a child process, in chunks
    read as one stream; the graph is then complete, and the next (incremental) run
    revises it in place."""
    from cleveragents_acms.indexing import service as service_module

    monkeypatch.setattr(service_module, "_BACKGROUND_GRAPH_NODES", 1)
    monkeypatch.setattr(service_module, "_GRAPH_BATCH", 7)  # many chunks, some tiny
    result = service.index_resource(RESOURCE_A, corpus, project="demo")
    assert result.run is not None and "graph-wait" in result.run.phases
    _assert_the_graph_types_every_current_node(service)
    target = corpus / "cleveragents" / "paths.py"
    target.write_text(target.read_text().replace("def home() -> Path:", "def home() -> Path:  # 2"))
    again = service.refresh_index(RESOURCE_A, corpus)
    assert again.run is not None and again.run.nodes_revised >= 1
    assert "graph-wait" not in again.run.phases


def test_a_failed_background_graph_load_is_redone_by_the_next_run(
    service: RepoIndexingService, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The text index and vectors commit while the graph loads; when the load fails the
    node store does not, so the next run indexes every file again and the stores agree."""
    from cleveragents.errors import CleverAgentsError
    from cleveragents_acms.backends.graph_loader import BackgroundLoad
    from cleveragents_acms.indexing import service as service_module

    monkeypatch.setattr(service_module, "_BACKGROUND_GRAPH_NODES", 1)
    add_nodes = BackgroundLoad.add_nodes

    def corrupt_first_chunk(self: BackgroundLoad, nodes: Any, **kwargs: Any) -> int:
        if not self.quads:
            self._append(b"<urn:broken> <urn:chunk> .\n")
        return add_nodes(self, nodes, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(BackgroundLoad, "add_nodes", corrupt_first_chunk)
        with pytest.raises(CleverAgentsError, match="loading the graph store failed"):
            service.index_resource(RESOURCE_A, corpus, project="demo")
    status = service.get_index_status(RESOURCE_A, "demo")
    assert status is not None and status.status == "error"
    index = ProjectIndex.open("demo", service.registry, service.config, create=False)
    try:
        assert not list(index.nodes.iter_current([RESOURCE_A]))
    finally:
        index.close()

    again = service.index_resource(RESOURCE_A, corpus, project="demo")
    assert again.run is not None and again.run.files_analyzed == again.run.files_seen
    _assert_the_graph_types_every_current_node(service)
    assert _search(service, "demo", "PluginHost", {RESOURCE_A})


def test_a_full_disk_while_sending_the_graph_load_stops_its_child_and_frees_the_store(
    service: RepoIndexingService, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chunks for the loader go to a file: a disk full while writing it is the run's
    clear error, the child is stopped and the store handed back, so the next run (here in
    the same process, as ``--watch`` would) loads the graph whole."""
    from cleveragents.errors import CleverAgentsError
    from cleveragents_acms.backends.graph_loader import BackgroundLoad
    from cleveragents_acms.indexing import service as service_module

    monkeypatch.setattr(service_module, "_BACKGROUND_GRAPH_NODES", 1)
    children: list[Any] = []
    append = BackgroundLoad._append

    def full_disk(self: BackgroundLoad, chunk: bytes) -> None:
        children.append(self._process)
        if chunk:
            raise OSError(errno.ENOSPC, "No space left on device")
        append(self, chunk)

    with monkeypatch.context() as patch:
        patch.setattr(BackgroundLoad, "_append", full_disk)
        with pytest.raises(CleverAgentsError, match="disk full"):
            service.index_resource(RESOURCE_A, corpus, project="demo")
    assert children and all(child.poll() is not None for child in children)
    again = service.index_resource(RESOURCE_A, corpus, project="demo")
    assert again.run is not None and "graph-wait" in again.run.phases
    _assert_the_graph_types_every_current_node(service)


def test_a_first_run_stopped_after_its_graph_load_is_redone_as_a_bulk_load(
    service: RepoIndexingService, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C after the graph holds a first run's nodes but before the node store commits:
    the next run drops those leftovers and bulk-loads again (checking each node against
    them took three times as long), and the stores agree, each node current once."""
    from cleveragents_acms.indexing import service as service_module
    from cleveragents_acms.indexing.store import NodeStore
    from cleveragents_acms.ontology.namespaces import UKO

    monkeypatch.setattr(service_module, "_BACKGROUND_GRAPH_NODES", 1)
    commit = NodeStore.commit
    with monkeypatch.context() as patch:

        def interrupted(self: NodeStore) -> None:
            raise KeyboardInterrupt

        patch.setattr(NodeStore, "commit", interrupted)
        with pytest.raises(KeyboardInterrupt):
            service.index_resource(RESOURCE_A, corpus, project="demo")
    assert NodeStore.commit is commit
    index = ProjectIndex.open("demo", service.registry, service.config, create=False)
    try:
        assert index.graph.has_resource(RESOURCE_A)  # the leftovers
        assert not index.nodes.has_resource(RESOURCE_A)
    finally:
        index.close()

    again = service.index_resource(RESOURCE_A, corpus, project="demo")
    assert again.run is not None and "graph-wait" in again.run.phases  # a bulk load
    index = ProjectIndex.open("demo", service.registry, service.config, create=False)
    try:
        nodes = list(index.nodes.iter_current([RESOURCE_A]))
        scope = frozenset({RESOURCE_A})
        typed = index.graph.sparql_query(
            "SELECT (COUNT(DISTINCT ?n) AS ?c) WHERE { ?n a ?t }", scope=scope
        )
        stamps = index.graph.sparql_query(
            f"SELECT (COUNT(?v) AS ?c) WHERE {{ ?n <{UKO}validFrom> ?v }}", scope=scope
        )
        assert nodes and int(typed.triples[0][2]) == len(nodes)
        assert int(stamps.triples[0][2]) == len(nodes)
    finally:
        index.close()


def _graph_agrees_with_nodes(service: RepoIndexingService) -> int:
    """Each current node of the node store is current once in the graph, and no other;
    returns how many there are."""
    index = ProjectIndex.open("demo", service.registry, service.config, create=False)
    try:
        nodes = {n.uri for n in index.nodes.iter_current([RESOURCE_A])}
        stamps = index.graph.select(
            f"SELECT ?n ?v WHERE {{ ?n <{UKO}validFrom> ?v }}", scope=frozenset({RESOURCE_A})
        )
        current = [row["n"] for row in stamps]
        assert len(current) == len(set(current)), "a node is current twice in the graph"
        assert set(current) == nodes
        return len(nodes)
    finally:
        index.close()


def _looked_up(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URIs the graph backend looks up to tell new nodes from current ones."""
    from cleveragents_acms.backends.graph import OxigraphGraphBackend

    looked: list[str] = []
    revised_uris = OxigraphGraphBackend._revised_uris

    def spy(self: OxigraphGraphBackend, nodes: list[Any], stamp: str) -> list[str]:
        looked.extend(n.uri for n in nodes)
        return revised_uris(self, nodes, stamp)

    monkeypatch.setattr(OxigraphGraphBackend, "_revised_uris", spy)
    return looked


def test_a_refresh_adds_new_nodes_without_looking_each_up_in_the_graph(
    service: RepoIndexingService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the node store knows the graph holds nothing it lacks, a node new to the node
    store goes straight into the graph; only the revised ones are looked up there."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "m.py").write_text("def first():\n    return 1\n")
    service.index_resource(RESOURCE_A, root, project="demo")
    looked = _looked_up(monkeypatch)
    (root / "m.py").write_text("def first():\n    return 2\n")
    (root / "n.py").write_text("def second():\n    return 1\n\n\nclass Third:\n    pass\n")
    run = service.refresh_index(RESOURCE_A, root).run
    assert run is not None and run.nodes_added >= 3 and run.nodes_revised >= 1
    assert node_uri(RESOURCE_A, "m.py", "first") in looked
    assert not [uri for uri in looked if "n.py" in uri]
    assert _graph_agrees_with_nodes(service) >= 5


def test_a_run_stopped_before_the_node_store_commits_has_the_next_look_every_node_up(
    service: RepoIndexingService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C after a refresh wrote the graph but before the node store committed: the
    graph holds nodes the node store does not. The next run looks each node up in the
    graph, so none is current twice, and the run after it trusts the node store again."""
    from cleveragents_acms.indexing.store import NodeStore

    root = tmp_path / "repo"
    root.mkdir()
    (root / "m.py").write_text("def first():\n    return 1\n")
    service.index_resource(RESOURCE_A, root, project="demo")
    (root / "n.py").write_text("def second():\n    return 1\n")
    with monkeypatch.context() as patch:

        def interrupted(self: NodeStore) -> None:
            raise KeyboardInterrupt

        patch.setattr(NodeStore, "commit", interrupted)
        with pytest.raises(KeyboardInterrupt):
            service.refresh_index(RESOURCE_A, root)
    looked = _looked_up(monkeypatch)
    run = service.refresh_index(RESOURCE_A, root).run
    assert run is not None and run.nodes_added >= 2
    assert node_uri(RESOURCE_A, "n.py", "second") in looked
    assert _graph_agrees_with_nodes(service) >= 3
    looked.clear()
    (root / "o.py").write_text("def third():\n    return 1\n")
    service.refresh_index(RESOURCE_A, root)
    assert not [uri for uri in looked if "o.py" in uri]
    assert _graph_agrees_with_nodes(service) >= 4


def test_the_graph_phase_tells_how_many_nodes_it_has_written(
    service: RepoIndexingService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``on_phase_progress`` follows the graph phase batch by batch, revised, retired and
    new nodes alike, up to all of them (retiring 125k nodes takes minutes)."""
    from cleveragents_acms.indexing import service as service_module

    monkeypatch.setattr(service_module, "_GRAPH_BATCH", 2)
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def one():\n    return 1\n\n\ndef two():\n    return 2\n")
    (root / "b.py").write_text("def three():\n    return 3\n\n\ndef four():\n    return 4\n")
    service.index_resource(RESOURCE_A, root, project="demo")
    (root / "b.py").unlink()
    (root / "a.py").write_text("def one():\n    return 10\n\n\ndef two():\n    return 2\n")
    (root / "c.py").write_text("def five():\n    return 5\n\n\ndef six():\n    return 6\n")
    reports: list[tuple[str, int, int]] = []
    run = service.index_resource(
        RESOURCE_A,
        root,
        project="demo",
        on_phase_progress=lambda *report: reports.append(report),
    ).run
    assert run is not None and run.nodes_retired == 3 and run.nodes_added == 3
    total = run.nodes_added + run.nodes_revised + run.nodes_retired
    assert {name for name, _, _ in reports} == {"graph"}
    assert {size for _, _, size in reports} == {total}
    done = [count for _, count, _ in reports]
    assert done == sorted(set(done)) and done[-1] == total and len(done) >= 3


def test_text_written_during_analysis_is_rolled_back_on_interrupt(
    service: RepoIndexingService, corpus: Path
) -> None:
    """Changed files reach the text index while later files are still parsed; an interrupt
    after some of them leaves none of their text searchable."""
    service.index_resource(RESOURCE_A, corpus, project="demo")
    for name in ("paths.py", "errors.py", "log.py"):
        target = corpus / "cleveragents" / name
        stem = name.removesuffix(".py")
        target.write_text(target.read_text() + f"\n\ndef streamed_{stem}_marker():\n    pass\n")

    def interrupt_late(done: int, total: int, path: str) -> None:
        if done == total:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        service.refresh_index(RESOURCE_A, corpus, progress=interrupt_late)
    for stem in ("paths", "errors", "log"):
        hits = _search(service, "demo", f"streamed_{stem}_marker", {RESOURCE_A})
        assert not any("marker" in h.uko_uri for h in hits)
    assert _search(service, "demo", "PluginHost", {RESOURCE_A})
    service.refresh_index(RESOURCE_A, corpus)
    for stem in ("paths", "errors", "log"):
        hits = _search(service, "demo", f"streamed_{stem}_marker", {RESOURCE_A})
        assert any(f"streamed_{stem}_marker" in h.uko_uri for h in hits)


def test_each_phase_is_announced_as_it_starts(service: RepoIndexingService, corpus: Path) -> None:
    """A big run writes for tens of seconds once every file is analysed: the CLI's bar
    says which phase it is in, from what ``on_phase`` is told."""
    seen: list[str] = []
    result = service.index_resource(RESOURCE_A, corpus, project="demo", on_phase=seen.append)
    assert result.run is not None
    assert list(dict.fromkeys(seen)) == list(result.run.phases)
    assert seen.index("analyse") < seen.index("resolve") < seen.index("finish")
    # the listener is the run's own: a later run without one tells it nothing
    service.refresh_index(RESOURCE_A, corpus)
    assert seen.count("finish") == 1


def test_a_node_moved_by_an_edit_above_it_gets_its_new_lines_everywhere(
    service: RepoIndexingService, corpus: Path
) -> None:
    """Lines added at the top of a file move every node below: the node store, the graph
    and the text index give their new lines, and the old lines stay in the history."""
    service.index_resource(RESOURCE_A, corpus, project="demo")
    target = corpus / "cleveragents" / "paths.py"
    target.write_text("# one\n# two\n# three\n" + target.read_text())
    run = service.refresh_index(RESOURCE_A, corpus).run
    assert run is not None and run.nodes_revised >= 2
    line = next(
        number
        for number, text in enumerate(target.read_text().splitlines(), start=1)
        if text.startswith("def home(")
    )
    index = ProjectIndex.open("demo", service.registry, service.config, create=False)
    try:
        home = next(
            n
            for n in index.nodes.iter_current([RESOURCE_A])
            if n.path == "cleveragents/paths.py" and n.name == "home"
        )
        assert home.start_line == line
        assert [v.node.start_line for v in index.nodes.history(home.uri)] == [line - 3, line]
        ranges = [
            o
            for _, p, o in index.graph.get_triples(home.uri, scope=frozenset({RESOURCE_A})).triples
            if p.endswith("#sourceRange")
        ]
        assert [r.split(":")[0] for r in ranges] == [str(line)]
    finally:
        index.close()
    hits = _search(service, "demo", "home", {RESOURCE_A})
    assert any(h.uko_uri == home.uri and h.metadata.get("start_line") == str(line) for h in hits)


def test_a_refresh_rewrites_only_the_text_documents_that_changed(
    service: RepoIndexingService, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every file analysed again after an analyzer changed, with the same nodes, replaces
    no text document (Tantivy would go on counting the replaced ones in BM25); an edit
    replaces the documents of the nodes it changed, and only those."""
    from cleveragents_acms.indexing import service as service_module

    first = service.index_resource(RESOURCE_A, corpus, project="demo")
    built_with = first.metadata.analyzers or ""
    python = next(t for t in built_with.split() if t.startswith("python@"))
    upgraded = built_with.replace(python, "python@99")
    monkeypatch.setattr(service_module, "analyzer_versions", lambda specs: upgraded)
    again = service.refresh_index(RESOURCE_A, corpus).run
    assert again is not None and first.run is not None
    assert again.files_analyzed > 50
    index = ProjectIndex.open("demo", service.registry, service.config, create=False)
    try:
        assert index.text.replaced_count() == 0
        count = index.text.count(RESOURCE_A)
    finally:
        index.close()

    target = corpus / "cleveragents" / "paths.py"
    target.write_text(target.read_text() + "\n\ndef appended_helper() -> int:\n    return 42\n")
    edited = service.refresh_index(RESOURCE_A, corpus).run
    assert edited is not None and edited.files_analyzed == 1
    index = ProjectIndex.open("demo", service.registry, service.config, create=False)
    try:
        # The module's own document changed (its source grew); the functions above did not.
        assert index.text.replaced_count() == edited.nodes_revised == 1
        assert index.text.count(RESOURCE_A) == count + 1
    finally:
        index.close()
    assert _search(service, "demo", "appended_helper", {RESOURCE_A})


def test_the_text_index_is_written_anew_once_replaced_documents_weigh_too_much(
    service: RepoIndexingService, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past a share of replaced documents, a refresh writes the project's text index anew
    from the node store and says so; interrupted, it leaves the old index searchable."""
    from cleveragents_acms.indexing import service as service_module
    from cleveragents_acms.indexing.store import NodeStore

    service.index_resource(RESOURCE_A, corpus, project="demo")
    monkeypatch.setattr(service_module, "_MAX_REPLACED_SHARE", 0.0)
    target = corpus / "cleveragents" / "paths.py"

    original = NodeStore.iter_current_files

    def first_file_only(self: NodeStore, resource_id: str) -> Iterator[list[Any]]:
        yield next(original(self, resource_id))
        raise KeyboardInterrupt

    monkeypatch.setattr(NodeStore, "iter_current_files", first_file_only)
    target.write_text(target.read_text() + "\n\ndef compacted_marker() -> int:\n    return 1\n")
    with pytest.raises(KeyboardInterrupt):
        service.refresh_index(RESOURCE_A, corpus)
    assert _search(service, "demo", "PluginHost", {RESOURCE_A})

    monkeypatch.setattr(NodeStore, "iter_current_files", original)
    target.write_text(target.read_text() + "\n\ndef compacted_again() -> int:\n    return 2\n")
    run = service.refresh_index(RESOURCE_A, corpus).run
    assert run is not None
    _assert_text_written_anew(service, run)
    for name in ("compacted_marker", "compacted_again", "PluginHost"):
        assert _search(service, "demo", name, {RESOURCE_A})


def test_fingerprints_stored_by_an_earlier_version_are_brought_up_to_date_in_place(
    service: RepoIndexingService, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index from before lines counted in fingerprints, analysed again (as after an
    upgrade): a node at the same lines is not revised, its fingerprint is rehashed; a
    node that moved is revised with its new lines."""
    from cleveragents_acms.indexing import service as service_module
    from cleveragents_acms.indexing import store as store_module

    def earlier_fingerprint(node: Any) -> str:
        span = store_module._span_digest(node, store_module._encoded(node))
        return store_module._edges_digest(node, span).hexdigest()

    first = service.index_resource(RESOURCE_A, corpus, project="demo")
    index = ProjectIndex.open("demo", service.registry, service.config, create=False)
    try:
        earlier = [(n.uri, earlier_fingerprint(n)) for n in index.nodes.iter_current([RESOURCE_A])]
        index.nodes.begin()
        index.nodes.set_fingerprints(earlier)
        index.nodes.commit()
    finally:
        index.close()
    target = corpus / "cleveragents" / "paths.py"
    target.write_text("# moved\n" + target.read_text())
    built_with = first.metadata.analyzers or ""
    python = next(t for t in built_with.split() if t.startswith("python@"))
    upgraded = built_with.replace(python, "python@99")
    monkeypatch.setattr(service_module, "analyzer_versions", lambda specs: upgraded)

    run = service.refresh_index(RESOURCE_A, corpus).run
    # The Python files are most of the tree: the others are read again too.
    assert run is not None and run.files_analyzed == run.files_seen
    index = ProjectIndex.open("demo", service.registry, service.config, create=False)
    try:
        current = list(index.nodes.iter_current([RESOURCE_A]))
        fingerprints = index.nodes.current_fingerprints(RESOURCE_A, {n.path for n in current})
    finally:
        index.close()
    moved = [n for n in current if n.path == "cleveragents/paths.py"]
    assert {len(f.fingerprint) for f in fingerprints.values()} == {64}
    assert (run.nodes_revised, run.nodes_added) == (len(moved), 0)
    assert run.nodes_unchanged == len(current) - len(moved)


def _vector_entries(service: RepoIndexingService, project: str) -> dict[str, Any]:
    """Every vector's URI -> (content, metadata), and the vector store's stats."""
    index = ProjectIndex.open(
        project, service.registry, service.config, create=False, with_vectors=True
    )
    try:
        assert index.vectors is not None
        backend = index.vectors.backend
        entries = {}
        for vector_id in list(backend._entries):
            entry = backend._entry(vector_id)
            entries[entry.uri] = (entry.content, entry.metadata)
        return {"entries": entries, "stats": backend.stats()}
    finally:
        index.close()


def test_a_node_an_edit_above_moved_keeps_its_vector_with_its_new_lines(
    service: RepoIndexingService, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line added at the top of a file moves every node in it: their vectors are not
    embedded and written again, only their lines change (in the vector store's delta);
    a node whose text changed gets a new vector. The vectors then say what a cold index's
    say."""
    pytest.importorskip("cleveragents_backend_faiss")
    service.index_resource(RESOURCE_A, corpus, project="demo")
    package = corpus / "cleveragents"
    registry = package / "registry.py"
    registry.write_text("# a line above everything\n" + registry.read_text())
    paths = package / "paths.py"
    paths.write_text(paths.read_text().replace('"""', '"""Changed: ', 1))  # the module's text
    run = service.index_resource(RESOURCE_A, corpus, project="demo").run
    assert run is not None and run.files_analyzed == 2
    after = _vector_entries(service, "demo")
    moved = {
        uri
        for uri, (_, metadata) in after["entries"].items()
        if metadata["path"] == "cleveragents/registry.py" and "#" in uri
    }
    assert len(moved) > 10
    assert after["stats"]["updated"] == len(moved)
    assert after["stats"]["delta"] == 2  # the two modules: their text changed
    cold = _cold_edges(service, corpus, "demo", tmp_path / "cold", monkeypatch, _vector_entries)
    assert after["entries"] == cold["entries"]


def _implements(service: RepoIndexingService, project: str) -> set[tuple[str, str]]:
    """The current ``uko-oo:implements`` edges, (type, interface) by qualified name."""
    index = ProjectIndex.open(project, service.registry, service.config, create=False)
    try:
        return {
            (n.qualname, target.rpartition("#")[2])
            for n in index.nodes.iter_current([RESOURCE_A])
            for predicate, target in n.edges
            if predicate == "uko-oo:implements"
        }
    finally:
        index.close()


def test_go_types_implement_interfaces_as_their_package_s_files_change(
    service: RepoIndexingService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Go type implements an interface of its package once it has its methods, wherever
    in the package they and the interface are declared (an interface embedding another
    of another file asks for its methods too). A refresh that changes what the package
    declares analyses its other files again, so their types' edges follow; one that
    changes only a function's body does not. Each step gives a cold index's edges."""
    root = tmp_path / "goshapes"
    (root / "shapes").mkdir(parents=True)
    (root / "shapes" / "shape.go").write_text(
        "package shapes\n\ntype Shape interface {\n\tArea() float64\n\tPerimeter() float64\n}\n"
    )
    (root / "shapes" / "solid.go").write_text(
        "package shapes\n\ntype Solid interface {\n\tShape\n\tVolume() float64\n}\n"
    )
    square = root / "shapes" / "square.go"
    square.write_text(
        "package shapes\n\ntype Square struct{ side float64 }\n\n"
        "func (s Square) Area() float64 { return s.side * s.side }\n\n"
        "type Cube struct {\n\tSquare\n}\n"
    )
    extra = root / "shapes" / "extra.go"
    extra.write_text("package shapes\n\nfunc (s Square) Volume() float64 { return 0 }\n")
    service.index_resource(RESOURCE_A, root, project="go")
    assert _implements(service, "go") == set()  # Solid asks for Shape's methods too

    def refresh() -> IndexRun:
        run = service.index_resource(RESOURCE_A, root, project="go").run
        assert run is not None
        return run

    def cold() -> set[tuple[str, str]]:
        home = tmp_path / f"cold-{len(list(tmp_path.glob('cold-*')))}"
        return _cold_edges(service, root, "go", home, monkeypatch, _implements)

    # Square's missing method, declared in another file: square.go, whose types now
    # implement more, is analysed again (Cube has Square's methods); solid.go is not.
    extra.write_text(extra.read_text() + "\nfunc (s *Square) Perimeter() float64 { return 4 }\n")
    run = refresh()
    assert (run.files_analyzed, run.files_dependent) == (2, 1)
    both = {("Square", "Shape"), ("Square", "Solid"), ("Cube", "Shape"), ("Cube", "Solid")}
    assert _implements(service, "go") == both == cold()
    # Bodies changed (in a file with an embedding too): what the package declares did
    # not, nothing else is analysed.
    extra.write_text(extra.read_text().replace("return 4 }", "return 4 * s.side }"))
    square.write_text(square.read_text().replace("s.side * s.side", "s.side * 2"))
    run = refresh()
    assert (run.files_analyzed, run.files_dependent) == (2, 0)
    assert _implements(service, "go") == both
    # A method no interface asks for: the package declares more, no type implements more.
    extra.write_text(extra.read_text() + '\nfunc (s Square) Name() string { return "" }\n')
    run = refresh()
    assert (run.files_analyzed, run.files_dependent) == (1, 0)
    # A new interface that asks for less, in a new file; then the two methods go again.
    (root / "shapes" / "areas.go").write_text(
        "package shapes\n\ntype Areas interface {\n\tArea() float64\n}\n"
    )
    run = refresh()
    assert (run.files_analyzed, run.files_dependent) == (2, 1)
    assert _implements(service, "go") == {*both, ("Square", "Areas"), ("Cube", "Areas")} == cold()
    extra.unlink()
    run = refresh()
    assert run.files_removed == 1 and run.files_dependent == 1
    assert _implements(service, "go") == {("Square", "Areas"), ("Cube", "Areas")} == cold()


@pytest.mark.parametrize("in_background", [True, False])
def test_the_graph_store_opens_in_a_thread_of_its_own_when_its_backend_says_so(
    service: RepoIndexingService,
    corpus: Path,
    monkeypatch: pytest.MonkeyPatch,
    in_background: bool,
) -> None:
    """Oxigraph's store opens beside the text index and the vectors, from a thread of its
    own, and is used from the indexer's thread after; a backend that does not say
    ``opens_in_background`` opens in the indexer's thread. The index is the same."""
    import threading

    from cleveragents_acms.backends.graph import OxigraphGraphBackend

    opened_in: list[str] = []
    init = OxigraphGraphBackend.__init__

    def noted(self: OxigraphGraphBackend, *args: Any, **kwargs: Any) -> None:
        opened_in.append(threading.current_thread().name)
        init(self, *args, **kwargs)

    monkeypatch.setattr(OxigraphGraphBackend, "__init__", noted)
    monkeypatch.setattr(OxigraphGraphBackend, "opens_in_background", in_background)
    service.index_resource(RESOURCE_A, corpus, project="demo")
    paths = corpus / "cleveragents" / "paths.py"
    paths.write_text(paths.read_text() + "\n\ndef moved_here():\n    return 1\n")
    run = service.index_resource(RESOURCE_A, corpus, project="demo").run
    assert run is not None and run.files_analyzed == 1
    main = threading.current_thread().name
    assert opened_in == ["open-graph" if in_background else main] * 2
    index = ProjectIndex.open("demo", service.registry, service.config, create=False)
    try:
        found = index.graph.select(
            f'SELECT ?n WHERE {{ ?n <{UKO}name> "moved_here" }}', scope=frozenset({RESOURCE_A})
        )
        assert [row["n"] for row in found] == [
            node_uri(RESOURCE_A, "cleveragents/paths.py", "moved_here")
        ]
    finally:
        index.close()


def test_a_store_that_fails_to_open_closes_the_graph_opened_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the text index cannot be opened, the graph store opened in the background is
    closed (its lock released) before the error is raised."""
    from cleveragents.errors import ConfigurationError
    from cleveragents_acms.backends.graph import OxigraphGraphBackend
    from cleveragents_acms.backends.text import TantivyTextBackend

    monkeypatch.setenv("CLEVERAGENTS_HOME", str(tmp_path / "home"))
    host = PluginHost.load(env={})
    config = load_config(cwd=tmp_path, env={})
    closed: list[bool] = []
    close = OxigraphGraphBackend.close

    def noted(self: OxigraphGraphBackend) -> None:
        closed.append(True)
        close(self)

    def broken(self: TantivyTextBackend, *args: Any, **kwargs: Any) -> None:
        raise ConfigurationError("no text index here")

    monkeypatch.setattr(OxigraphGraphBackend, "close", noted)
    monkeypatch.setattr(TantivyTextBackend, "__init__", broken)
    with pytest.raises(ConfigurationError, match="no text index"):
        ProjectIndex.open("demo", host.registry, config)
    assert closed == [True]
    monkeypatch.undo()
    monkeypatch.setenv("CLEVERAGENTS_HOME", str(tmp_path / "home"))
    ProjectIndex.open("demo", host.registry, config).close()  # the store's lock was released


def test_a_name_through_a_module_whose_package_comes_and_goes_resolves_as_cold(
    service: RepoIndexingService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``app/cli.py`` calls ``check_name`` imported from ``app.models.resources``, which
    imports it from its sibling ``names.py``. Without ``app/models/__init__.py`` the
    module is ``resources`` (no package above it), and a cold index leaves the call
    unresolved. ``resources.py`` is analysed again as the package went, its text
    unchanged; what it now says of itself sends ``cli.py``, which went through it, to be
    analysed again too (the random-edit test found it with seed 31, once the kernel's
    ``check_name`` had moved to ``models/names.py``). And back when the package returns."""
    root = tmp_path / "repo"
    _write_tree(
        root,
        {
            "app/__init__.py": "",
            "app/models/__init__.py": "",
            "app/models/names.py": "def check_name():\n    return 1\n",
            "app/models/resources.py": (
                "from app.models.names import check_name\n\n__all__ = ['check_name']\n"
            ),
            "app/cli.py": (
                "from app.models.resources import check_name\n\n\n"
                "def create():\n    return check_name()\n"
            ),
        },
    )
    service.index_resource(RESOURCE_A, root, project="pkg")
    caller, target = _APP + "cli.py#create", _APP + "models/names.py#check_name"
    assert target in _current_edges(service, "pkg", RESOURCE_A)[caller][1]
    package = root / "app" / "models" / "__init__.py"
    package.unlink()
    run, edges = _refreshed_as_cold(service, root, "pkg", tmp_path / "cold-gone", monkeypatch)
    assert target not in edges[caller][1]
    assert run.files_dependent >= 3  # names.py and resources.py, then cli.py
    package.write_text("")
    _, edges = _refreshed_as_cold(service, root, "pkg", tmp_path / "cold-back", monkeypatch)
    assert target in edges[caller][1]


def test_a_run_s_file_records_are_made_when_first_read(
    service: RepoIndexingService, corpus: Path
) -> None:
    """A run hands back its files' records by path, made from their rows when first read
    (a command printing the summary never reads them); they equal what ``get_index``
    reads back from the table, compare with plain tuples and pickle as one."""
    import pickle

    from cleveragents_acms.indexing.models import FileRecords

    result = service.index_resource(RESOURCE_A, corpus, project="demo")
    files = result.files
    assert isinstance(files, FileRecords) and files._records is None
    assert len(files) == result.metadata.file_count  # still not made
    assert files._records is None
    stored = service.get_index(RESOURCE_A, "demo")
    assert stored is not None
    assert files == tuple(sorted(stored.files, key=lambda f: f.path))
    assert [f.path for f in files] == sorted(f.path for f in files)
    assert files[0] == next(iter(files)) and files[-2:] == tuple(files)[-2:]
    assert pickle.loads(pickle.dumps(files)) == tuple(files)
    problems = [f.path for f in files if f.errors]  # a syntax error, a latin-1 file
    assert problems == ["broken.py", "latin1.py"] and result.metadata.error_count == 2
