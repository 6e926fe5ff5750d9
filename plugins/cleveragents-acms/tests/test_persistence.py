"""UKOGraphPersistence: atomic N-Quads snapshots, restore, revision chain, temporal queries."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cleveragents.errors import ValidationError
from cleveragents.models.uko import UKONode, node_uri
from cleveragents.testing.memory import InMemoryGraphBackend
from cleveragents_acms.backends.graph import OxigraphGraphBackend, revision_iri
from cleveragents_acms.ontology.namespaces import expand
from cleveragents_acms.uko.persistence import SNAPSHOT_NAME, UKOGraphPersistence

RES = "01J00000000000000000000RES"
T1 = datetime(2026, 1, 10, tzinfo=UTC)
T2 = datetime(2026, 1, 15, tzinfo=UTC)
SIGNATURE = expand("uko-code:signature")


def function(signature: str) -> UKONode:
    """Version of one function node with the given signature."""
    return UKONode(
        node_uri(RES, "m.py", "f"),
        "uko-py:Function",
        "f",
        "m.py",
        1,
        3,
        RES,
        qualname="f",
        properties={"signature": signature},
    )


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[OxigraphGraphBackend]:
    backend = OxigraphGraphBackend(tmp_path / "graph")
    backend.add_nodes([function("def f()")], valid_from=T1)
    backend.add_nodes([function("def f(x)")], valid_from=T2)
    backend.add_triple("local/app", "https://example.org/shared", "uko:name", 'a "quoted"\nvalue')
    yield backend
    backend.close()


def test_constructor_checks_its_arguments(graph: OxigraphGraphBackend) -> None:
    """A non-GraphIndexBackend is a TypeError, an empty project a ValueError."""
    with pytest.raises(TypeError):
        UKOGraphPersistence(object(), "local/app")
    with pytest.raises(ValueError):
        UKOGraphPersistence(graph, "  ")


def test_default_path_is_in_the_project_index(
    graph: OxigraphGraphBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without persist_path the snapshot lives in the project's graph index folder."""
    monkeypatch.setenv("CLEVERAGENTS_HOME", str(tmp_path / "home"))
    persistence = UKOGraphPersistence(graph, "local/app")
    assert persistence.persist_path.name == SNAPSHOT_NAME
    assert str(tmp_path / "home") in str(persistence.persist_path)


def test_save_and_load_round_trip(graph: OxigraphGraphBackend, tmp_path: Path) -> None:
    """A snapshot restores every quad, history and shared triples included."""
    persistence = UKOGraphPersistence(graph, "local/app", tmp_path / "snap" / "uko.nq")
    assert persistence.load() is False
    before = graph.count()
    path = persistence.save()
    assert path.read_text(encoding="utf-8").startswith("# cleveragents uko snapshot v1")
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    graph.delete_resource(RES)
    assert graph.count() < before
    assert persistence.load() is True
    assert graph.count() == before
    uri = node_uri(RES, "m.py", "f")
    assert (uri, SIGNATURE, "def f(x)") in graph.get_triples(uri).triples
    assert graph.get_triples(revision_iri(uri, T1)).triples
    shared = graph.get_triples("https://example.org/shared").triples
    assert shared[0][2] == 'a "quoted"\nvalue'


def test_restore_into_a_fresh_store(graph: OxigraphGraphBackend, tmp_path: Path) -> None:
    """A snapshot moves the graph to another store, scoped queries included."""
    snapshot = UKOGraphPersistence(graph, "local/app", tmp_path / "uko.nq").snapshot()
    fresh = OxigraphGraphBackend(tmp_path / "fresh")
    try:
        assert UKOGraphPersistence(fresh, "local/app", snapshot).restore() is True
        rows = fresh.select(
            "SELECT ?sig WHERE { ?f uko-code:signature ?sig }", scope=frozenset({RES})
        )
        assert rows == [{"sig": "def f(x)"}]
    finally:
        fresh.close()


def test_a_failed_save_leaves_the_old_snapshot(
    graph: OxigraphGraphBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writing is atomic: an error mid-way keeps the previous file and no temp file."""
    persistence = UKOGraphPersistence(graph, "local/app", tmp_path / "uko.nq")
    persistence.save()
    original = persistence.persist_path.read_bytes()

    def broken(output: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(graph, "export_nquads", broken)
    with pytest.raises(OSError, match="disk full"):
        persistence.save()
    assert persistence.persist_path.read_bytes() == original
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_foreign_file_is_not_loaded(graph: OxigraphGraphBackend, tmp_path: Path) -> None:
    """Only files written by save() are restored."""
    foreign = tmp_path / "other.nq"
    foreign.write_text("<a:b> <a:c> <a:d> .\n", encoding="utf-8")
    with pytest.raises(ValidationError):
        UKOGraphPersistence(graph, "local/app", foreign).load()


def test_backends_without_snapshots_are_refused(tmp_path: Path) -> None:
    """A backend that cannot export its quads gets a clear error."""
    persistence = UKOGraphPersistence(InMemoryGraphBackend(), "local/app", tmp_path / "x.nq")
    with pytest.raises(ValidationError, match="export"):
        persistence.save()
    with pytest.raises(ValidationError, match="revisions"):
        persistence.query_at_time(T1)


def test_revision_chain_links_indexing_runs(graph: OxigraphGraphBackend, tmp_path: Path) -> None:
    """Each run links to the previous one; revision_at finds the run in force at T."""
    persistence = UKOGraphPersistence(graph, "local/app", tmp_path / "uko.nq")
    assert persistence.revisions() == [] and persistence.latest_revision() is None
    first = persistence.record_revision(timestamp=T1, summary={"files": 3})
    second = persistence.record_revision(timestamp=T2, summary={"files": 1})
    assert first.previous_id is None
    assert second.previous_id == first.revision_id
    assert second.triple_count == graph.count()
    assert second.summary == {"files": "1"}
    reread = UKOGraphPersistence(graph, "local/app", tmp_path / "uko.nq").revisions()
    assert [e.revision_id for e in reread] == [first.revision_id, second.revision_id]
    assert persistence.revision_at(T1 - timedelta(days=1)) is None
    assert persistence.revision_at(T1 + timedelta(days=1)) == first
    assert persistence.latest_revision() == second


def test_query_at_time_delegates_to_the_backend(
    graph: OxigraphGraphBackend, tmp_path: Path
) -> None:
    """Triples valid at T come from the backend's revision-aware store."""
    persistence = UKOGraphPersistence(graph, "local/app", tmp_path / "uko.nq")
    uri = node_uri(RES, "m.py", "f")

    def signatures(moment: datetime) -> list[str]:
        return [
            o
            for s, p, o in persistence.query_at_time(moment).triples
            if s == uri and p == SIGNATURE
        ]

    assert signatures(T1 + timedelta(hours=1)) == ["def f()"]
    assert signatures(T2 + timedelta(hours=1)) == ["def f(x)"]
    naive = datetime(2026, 1, 12)
    assert signatures(naive) == ["def f()"]
    scoped = persistence.query_at_time(T2, frozenset({"01J0000000000000000000OTHER"}))
    assert scoped.triples == []
