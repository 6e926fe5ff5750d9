"""The node store's lookups: right answers, and the index SQLite uses to find them."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

from cleveragents.models.uko import UKONode
from cleveragents_acms.indexing.store import NodeStore

RESOURCE = "01JNODESTORE00000000000000"


def _node(path: str, name: str) -> UKONode:
    uri = f"https://cleveragents.ai/r/{RESOURCE}/{path}#{name}"
    node = UKONode(uri, "uko-py:Function", name, path, 1, 2, RESOURCE, qualname=name)
    node.properties["fqname"] = f"{path[:-3].replace('/', '.')}.{name}"
    return node


def test_nodes_named_reads_only_the_named_rows(tmp_path: Path) -> None:
    """With one resource (a project's usual case) the lookup goes through the name index,
    not through every node of the resource: a refresh resolves one file's names in
    milliseconds, whatever the size of the project."""
    store = NodeStore(tmp_path / "nodes.db")
    nodes = [_node(f"pkg/module_{i}.py", f"function_{i % 500}") for i in range(3000)]
    store.insert([(n, "fp", None) for n in nodes], valid_from="2026-01-01T00:00:00Z")
    # No ANALYZE, as in a real store: the planner guesses from the indexes' shapes.

    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    found = store.nodes_named([RESOURCE], ["function_7", "function_8", "missing"])
    store._db.set_trace_callback(None)

    assert sorted({n.name for n in found}) == ["function_7", "function_8"]
    assert len(found) == 12 and all(n.properties["fqname"].endswith(n.name) for n in found)
    lookup = next(s for s in statements if s.lstrip().startswith("SELECT"))
    plan = " ".join(row[3] for row in store._db.execute(f"EXPLAIN QUERY PLAN {lookup}"))
    assert "nodes_current_name" in plan, plan
    store.close()


def test_renderings_round_trip_and_rows_of_the_older_zlib_format_still_read(
    tmp_path: Path,
) -> None:
    """Renderings are stored Zstandard-compressed; a store written before the switch keeps
    zlib rows, which must read back the same (a refresh rewrites only changed nodes)."""
    store = NodeStore(tmp_path / "nodes.db")
    new, old = _node("pkg/new.py", "fresh"), _node("pkg/old.py", "legacy")
    for node in (new, old):
        node.renderings = {0: node.name, 9: f"def {node.name}():\n    return 'é' * 2\n"}
    store.insert([(n, "fp", None) for n in (new, old)], valid_from="2026-01-01T00:00:00Z")
    legacy = zlib.compress(json.dumps(old.renderings).encode(), 1)
    store._db.execute("UPDATE nodes SET renderings = ? WHERE uri = ?", (legacy, old.uri))

    blobs = dict(store._db.execute("SELECT uri, renderings FROM nodes"))
    assert blobs[new.uri].startswith(b"\x28\xb5\x2f\xfd")  # a Zstandard frame
    assert blobs[old.uri] == legacy
    for node in (new, old):
        stored = store.get(node.uri)
        assert stored is not None and stored.node.renderings == node.renderings
    store.close()


def test_the_nodes_a_refresh_lists_by_type_come_from_their_own_index(tmp_path: Path) -> None:
    """Rust ``use``, ``impl`` and crate roots and TypeScript ``export … from`` nodes,
    which a refresh reads all of, are read through an index of theirs alone (a scan of
    the resource's nodes took 0.2 s on a 260k-node index), and a store made before that
    index gains it when next written, and loses the ones it had before crates, then
    ``impl`` blocks, then Python's re-exports were listed."""
    store = NodeStore(tmp_path / "nodes.db")
    nodes = [_node(f"pkg/module_{i}.py", f"function_{i}") for i in range(2000)]
    for node in nodes[:3]:
        node.uko_type = "uko-ts:Export"
    nodes[5].uko_type = "uko-py:ReExport"
    for node in nodes[3:5]:  # an ``impl Trait for Type`` block, and one of the type's own
        node.uko_type = "uko-rs:Impl"
        node.edges = [("uko-rs:implFor", "symbol:Type")]
    nodes[3].edges.append(("uko-rs:implementsTrait", "symbol:Trait"))
    store.begin()
    store.insert([(n, "fp", None) for n in nodes], valid_from="2026-01-01T00:00:00Z")
    store.commit()
    store._db.execute("DROP INDEX nodes_current_listed_4")  # as earlier versions made it
    rust = "'uko-rs:Crate', 'uko-rs:Impl', 'uko-rs:Module', 'uko-rs:Use'"
    for name, listed in (
        ("nodes_current_listed", "'uko-rs:Use', 'uko-ts:Export'"),
        ("nodes_current_listed_types", "'uko-rs:Crate', 'uko-rs:Use', 'uko-ts:Export'"),
        ("nodes_current_of_listed_types", f"{rust}, 'uko-ts:Export'"),
    ):
        store._db.execute(
            f"CREATE INDEX {name} ON nodes(resource_id, uko_type) WHERE is_current = 1"
            f" AND uko_type IN ({listed})"
        )
    store.close()

    store = NodeStore(tmp_path / "nodes.db")
    assert len(store.nodes_of_type(RESOURCE, "uko-ts:Export")) == 3  # without: a scan
    store.begin()
    store.commit()
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    found = store.nodes_of_type(RESOURCE, "uko-ts:Export")
    impls = store.rust_trait_impls(RESOURCE)
    reexports = store.nodes_of_type(RESOURCE, "uko-py:ReExport")
    store._db.set_trace_callback(None)
    assert sorted(n.name for n in found) == ["function_0", "function_1", "function_2"]
    assert [(n.name, n.edges) for n in impls] == [("function_3", nodes[3].edges)]
    assert [n.name for n in reexports] == ["function_5"]
    lookups = [s for s in statements if s.lstrip().startswith("SELECT")]
    assert len(lookups) == 3
    for lookup in lookups:
        plan = " ".join(row[3] for row in store._db.execute(f"EXPLAIN QUERY PLAN {lookup}"))
        assert "nodes_current_listed_4" in plan, plan
    indexes = {row[0] for row in store._db.execute("SELECT name FROM sqlite_master")}
    retired = {
        "nodes_current_listed",
        "nodes_current_listed_types",
        "nodes_current_of_listed_types",
    }
    assert not indexes & retired  # dropped
    assert len(store.nodes_of_type(RESOURCE, "uko-py:Function")) == 1994  # any other type
    store.close()


def test_a_bulk_insert_into_an_empty_store_builds_its_indexes_after_the_rows(
    tmp_path: Path,
) -> None:
    """A cold index inserts every node at once into an empty table: the lookups' indexes
    are dropped and built again after the rows, in the same transaction, so they are
    there once it commits and gone with it if it rolls back."""
    store = NodeStore(tmp_path / "nodes.db")
    indexes = "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'nodes_current%'"
    before = sorted(row[0] for row in store._db.execute(indexes))
    nodes = [_node(f"pkg/module_{i}.py", f"function_{i % 700}") for i in range(12_000)]

    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    store.begin()
    store.insert([(n, "fp", None) for n in nodes], valid_from="2026-01-01T00:00:00Z")
    store.commit()
    store._db.set_trace_callback(None)

    assert any(s.startswith("DROP INDEX") for s in statements)
    assert sorted(row[0] for row in store._db.execute(indexes)) == before
    assert len(store.nodes_named([RESOURCE], ["function_3"])) == 18  # 12,000 / 700, rounded up

    # Not empty any more: the next big batch goes row by row, the indexes untouched.
    statements.clear()
    store._db.set_trace_callback(statements.append)
    store.begin()
    more = [_node(f"pkg/extra_{i}.py", "function_3") for i in range(12_000)]
    store.insert([(n, "fp", None) for n in more], valid_from="2026-01-01T00:00:00Z")
    store.rollback()
    store._db.set_trace_callback(None)
    assert not any(s.startswith("DROP INDEX") for s in statements)
    assert len(store.nodes_named([RESOURCE], ["function_3"])) == 18
    store.close()


def test_a_rolled_back_bulk_insert_leaves_the_indexes(tmp_path: Path) -> None:
    store = NodeStore(tmp_path / "nodes.db")
    store.begin()
    nodes = [_node(f"pkg/module_{i}.py", "f") for i in range(10_000)]
    store.insert([(n, "fp", None) for n in nodes], valid_from="2026-01-01T00:00:00Z")
    store.rollback()
    rows = store._db.execute("SELECT count(*) FROM nodes").fetchone()[0]
    indexes = store._db.execute(
        "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name LIKE 'nodes_current%'"
    ).fetchone()[0]
    assert (rows, indexes) == (0, 5)
    store.close()


def test_has_resource_counts_retired_versions_and_no_other_resource(tmp_path: Path) -> None:
    """A resource with current nodes is found by its index; one whose nodes were all
    retired still counts (it was committed here); another resource's rows do not."""
    store = NodeStore(tmp_path / "nodes.db")
    other = "01JNODESTOREOTHER000000000"
    nodes = [_node(f"m{i}.py", f"function_{i}") for i in range(3)]
    store.begin()
    store.insert([(n, "fp", None) for n in nodes], valid_from="2026-01-01T00:00:00Z")
    store.commit()
    assert store.has_resource(RESOURCE)
    assert not store.has_resource(other)
    store.begin()
    store.retire([n.uri for n in nodes], valid_until="2026-01-02T00:00:00Z")
    store.commit()
    assert store.has_resource(RESOURCE)  # only retired versions left
    assert not store.has_resource(other)
    store.close()


def test_edge_counts_are_of_current_nodes_and_tell_the_ones_reaching_a_node(
    tmp_path: Path,
) -> None:
    """What the benchmark reports: the current nodes' edges of one resource, and how many
    reach a node rather than a name nothing answers (``symbol:…``); a retired version's
    edges do not count."""
    store = NodeStore(tmp_path / "nodes.db")
    caller, callee, gone = (_node("pkg/a.py", name) for name in ("caller", "callee", "gone"))
    caller.edges = [("uko:dependsOn", callee.uri), ("uko:dependsOn", "symbol:os.path.join")]
    gone.edges = [("uko:dependsOn", callee.uri)]
    store.insert([(n, "fp", None) for n in (caller, callee, gone)], valid_from="2026-01-01")
    store.retire([gone.uri], valid_until="2026-01-02")
    assert store.edge_counts(RESOURCE) == (2, 1)
    assert store.edge_counts("01JNODESTOREOTHER000000000") == (0, 0)
    store.close()


def test_nodes_in_folders_takes_a_folder_s_own_files_with_their_edges(tmp_path: Path) -> None:
    """What the Go packages are read from: the files right in each folder (the resource's
    root is ``""``), not those of the folders below, nor a folder whose name merely starts
    the same; each node with its edges; only the UKO types asked for."""
    store = NodeStore(tmp_path / "nodes.db")
    paths = ["a.go", "b.txt.go", "lib/x.go", "lib/sub/y.go", "lib2/z.go", "lib/w.py"]
    nodes = [_node(path, "Thing") for path in paths]
    for node in nodes:
        node.uko_type = "uko-proc:Struct"
        node.edges = [("uko-oo:inheritsFrom", f"symbol:go:{node.path}.Base")]
    other = _node("lib/v.go", "run")  # a function: another UKO type
    store.insert([(n, "fp", None) for n in [*nodes, other]], valid_from="2026-01-01T00:00:00Z")

    def found(folders: list[str]) -> list[str]:
        return sorted(
            n.path for n in store.nodes_in_folders(RESOURCE, folders, ".go", {"uko-proc:Struct"})
        )

    assert found([""]) == ["a.go", "b.txt.go"]
    assert found(["lib"]) == ["lib/x.go"]
    assert found(["lib", "lib/sub"]) == ["lib/sub/y.go", "lib/x.go"]
    (x,) = store.nodes_in_folders(RESOURCE, ["lib"], ".go", {"uko-proc:Struct"})
    assert x.edges == [("uko-oo:inheritsFrom", "symbol:go:lib/x.go.Base")]
    by_file = store.nodes_in_files(RESOURCE, ["lib/x.go", "lib/v.go"], {"uko-proc:Struct"})
    assert [(n.path, n.edges) for n in by_file] == [(x.path, x.edges)]
    store.close()


def test_a_note_of_writes_in_flight_says_whether_another_store_agrees(tmp_path: Path) -> None:
    """A store that never kept notes cannot vouch for the graph; a note taken back in the
    committing transaction can; one left by a run that stopped, or rolled back, cannot;
    deleting the resource drops its note."""
    path = tmp_path / "nodes.db"
    store = NodeStore(path)
    assert store.begin_writing("graph", "R1") is False  # no notes kept before
    store.begin()
    store.end_writing("graph", "R1")
    store.commit()
    assert store.begin_writing("graph", "R1") is True
    store.begin()
    store.end_writing("graph", "R1")
    store.rollback()  # the run failed: its note stays
    store.close()
    store = NodeStore(path)  # and outlives the process
    assert store.begin_writing("graph", "R1") is False
    assert store.begin_writing("graph", "R2") is True  # another resource's writes agree
    store.delete_resource("R1")
    assert store.begin_writing("graph", "R1") is True
    store.begin()
    try:
        with pytest.raises(RuntimeError, match="outside a transaction"):
            store.begin_writing("graph", "R1")
    finally:
        store.rollback()
        store.close()


def test_edges_are_stored_as_json_dumps_writes_them_and_read_back(tmp_path: Path) -> None:
    """The edges column holds exactly ``json.dumps(edges)`` (the writer builds the text
    itself, for speed), whatever the names hold: quotes, backslashes, control
    characters, non-ASCII; no edges is ``[]``."""
    store = NodeStore(tmp_path / "nodes.db")
    odd, plain = _node("pkg/a.py", "odd"), _node("pkg/a.py", "plain")
    odd.edges = [
        ("uko:dependsOn", 'symbol:a."quoted"\\back'),
        ("uko:references", "symbol:tab\there\nnewline\x00nul"),
        ("uko:dependsOn", "symbol:café.naïve.𝔘"),
    ]
    store.insert([(n, "fp", None) for n in (odd, plain)], valid_from="2026-01-01")
    stored = dict(store._db.execute("SELECT uri, edges FROM nodes"))
    assert stored == {odd.uri: json.dumps(odd.edges), plain.uri: "[]"}
    back = store.nodes_in_files(RESOURCE, ["pkg/a.py"], ["uko-py:Function"])
    assert {n.uri: [tuple(e) for e in n.edges] for n in back} == {
        odd.uri: odd.edges,
        plain.uri: [],
    }
    store.close()


def test_imports_from_a_module_are_read_by_their_own_index_or_in_one_pass(
    tmp_path: Path,
) -> None:
    """A refresh asks which import statements import from some modules (``from m import
    a``: qualified name ``import.m``, ``import.m~2`` for a file's second one). A few
    modules go through the import statements' index, one query each; a store made
    before that index (it comes with the store's next write) and many modules at once
    are read in one pass instead of a scan per module. Not a module whose name merely
    starts the same (``import.kit.routings``)."""
    store = NodeStore(tmp_path / "nodes.db")
    imports = []
    for i, qualname in enumerate(
        [
            "import.kit.routing",
            "import.kit.routing~2",
            "import.kit.routings",
            "import.kit",
            "import.kit.routing.rules",
        ]
    ):
        node = _node(f"pkg/user_{i}.py", f"from x import y{i}")
        node.uko_type, node.qualname = "uko-py:Import", qualname
        node.uri += f"-{i}"
        imports.append(node)
    others = [_node(f"pkg/module_{i}.py", f"function_{i}") for i in range(50)]
    store.insert([(n, "fp", None) for n in [*imports, *others]], valid_from="2026-01-01")
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    found = store.imports_from(RESOURCE, ["kit.routing"])
    store._db.set_trace_callback(None)
    assert sorted(n.qualname for n in found) == ["import.kit.routing", "import.kit.routing~2"]
    (lookup,) = [s for s in statements if "FROM nodes" in s]
    plan = " ".join(row[3] for row in store._db.execute(f"EXPLAIN QUERY PLAN {lookup}"))
    # The statement itself and those after it in their files: not every import from
    # below the module (``import.kit.routing.rules`` sorts between the two).
    assert "nodes_current_imports (resource_id=? AND qualname=?)" in plan, plan
    assert "nodes_current_imports (resource_id=? AND qualname>? AND qualname<?)" in plan, plan
    many = {f"kit.other_{i}" for i in range(3000)} | {"kit"}
    assert [n.qualname for n in store.imports_from(RESOURCE, many)] == ["import.kit"]
    store._db.execute("DROP INDEX nodes_current_imports")  # as earlier versions made it
    store.close()

    store = NodeStore(tmp_path / "nodes.db")
    found = store.imports_from(RESOURCE, ["kit.routing", "kit"])
    assert sorted(n.qualname for n in found) == [
        "import.kit",
        "import.kit.routing",
        "import.kit.routing~2",
    ]
    assert store.imports_from(RESOURCE, []) == []
    store.close()
