"""ACMS with the FAISS plugin: nodes are embedded while indexing; without it, ACMS degrades."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import cleveragents

pytest.importorskip("cleveragents_acms")
pytest.importorskip("cleveragents_backend_faiss")

CLI = str(Path(sys.executable).with_name("cleveragents"))


def _run(home: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "CLEVERAGENTS_HOME": str(home),
        "CLEVERAGENTS_INDEX__EMBEDDING__PROVIDER": "hashing-ngram",
    }
    done = subprocess.run([CLI, *args], env=env, capture_output=True, text=True, timeout=300)
    if check:
        assert done.returncode == 0, f"{args}: {done.stderr}"
    return done


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Path, Path]:
    """The kernel's sources indexed into project `demo`; returns (home, repository)."""
    repo = tmp_path / "repo"
    shutil.copytree(
        Path(cleveragents.__file__).parent,
        repo / "cleveragents",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    home = tmp_path / "home"
    _run(home, "index", str(repo), "--project", "demo")
    return home, repo


def _status(home: Path) -> dict:
    (status,) = json.loads(_run(home, "index", "status", "--json").stdout)
    return status


def test_every_node_is_embedded_and_changes_replace_vectors(indexed: tuple[Path, Path]) -> None:
    """One vector per function, class, module …; an edit replaces vectors instead of adding."""
    home, repo = indexed
    status = _status(home)
    assert 0 < status["vectors"]["count"] < status["node_count"]  # imports are not embedded
    assert status["vectors"]["embedder"] == "hashing-ngram"
    target = repo / "cleveragents" / "paths.py"
    target.write_text(target.read_text() + "\n\ndef vector_probe() -> None:\n    pass\n")
    _run(home, "index", str(repo), "--project", "demo")
    after = _status(home)
    assert after["node_count"] == status["node_count"] + 1
    assert after["vectors"]["count"] == status["vectors"]["count"] + 1


def _assemble_semantic(home: Path) -> subprocess.CompletedProcess[str]:
    """`context assemble --strategy semantic-embedding --json` in project demo, 3000 tokens."""
    question = "where are plugin entry points loaded"
    return _run(
        home, "context", "assemble", question, "--project", "demo", "--budget", "3000",
        "--strategy", "semantic-embedding", "--json",
    )  # fmt: skip


def test_semantic_strategy_runs_on_the_vectors(indexed: tuple[Path, Path]) -> None:
    """With vectors present, semantic-embedding contributes to an assembly."""
    home, _ = indexed
    out = _assemble_semantic(home)
    data = json.loads(out.stdout)
    assert "semantic-embedding" in data["strategies_used"]
    assert data["total_tokens"] + data["preamble_tokens"] <= 3000


def test_rebuild_restores_the_vector_index(indexed: tuple[Path, Path]) -> None:
    """`vector rebuild` re-embeds every node, e.g. after the index files were lost."""
    home, _ = indexed
    shutil.rmtree(home / "index" / "vector" / "demo")
    out = json.loads(_run(home, "vector", "rebuild", "--project", "demo", "--json").stdout)
    assert 0 < out["vectors"] < _status(home)["node_count"]
    assert _status(home)["vectors"]["count"] == out["vectors"]


def test_without_the_plugin_acms_degrades(indexed: tuple[Path, Path]) -> None:
    """With the FAISS plugin disabled, assembly still works on text and graph."""
    home, _ = indexed
    out = _run(
        home,
        "-p",
        "no:faiss",
        "context",
        "assemble",
        "plugin entry points",
        "--project",
        "demo",
        "--budget",
        "2000",
        "--json",
    )
    data = json.loads(out.stdout)
    assert data["fragments"]
    assert "semantic-embedding" not in data["strategies_used"]
    missing = _run(home, "-p", "no:faiss", "vector", "rebuild", "--project", "demo", check=False)
    assert missing.returncode != 0
    assert "no vector backend" in missing.stderr


def test_vectors_embedded_in_the_analysis_workers_match_the_embedder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A light embedder runs beside parsing in the worker processes; what it stores is
    exactly the embedder's vector of each node's chunk, found again by searching it."""
    from cleveragents.config import load_config
    from cleveragents.plugins import PluginHost
    from cleveragents.storage.database import Database
    from cleveragents_acms.indexing.service import RepoIndexingService
    from cleveragents_acms.indexing.store import NodeStore
    from cleveragents_acms.indexing.vectors import chunk_text, embeddable, open_vector_index

    repo = tmp_path / "repo"
    shutil.copytree(
        Path(cleveragents.__file__).parent,
        repo / "cleveragents",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    assert sum(1 for p in repo.rglob("*.py")) >= 64  # enough files for the worker pool
    monkeypatch.setenv("CLEVERAGENTS_HOME", str(tmp_path / "home"))
    host = PluginHost.load()
    config = load_config(cwd=tmp_path)
    database = Database.for_sqlite_file(tmp_path / "home" / "cleveragents.db")
    service = RepoIndexingService(database, host.registry, config, workers=2)
    assert service._light_embedder() is not None
    result = service.index_resource("01JTESTWORKERVECTORS000000", repo, project="w")
    assert result.run is not None and result.run.files_analyzed >= 64
    store = NodeStore(tmp_path / "home" / "index" / "graph" / "w" / "nodes.db")
    nodes = [n for n in store.iter_current(["01JTESTWORKERVECTORS000000"]) if embeddable(n)]
    store.close()
    vectors = open_vector_index(host.registry, config, "w")
    assert vectors is not None
    sample = nodes[:: max(1, len(nodes) // 25)]
    embedded = vectors.embedder.embed([chunk_text(n) for n in sample])
    for node, vector in zip(sample, embedded, strict=True):
        hits = vectors.backend.similarity_search(
            vector, scope=frozenset({"01JTESTWORKERVECTORS000000"}), top_k=5
        )
        assert any(h.uko_uri == node.uri and h.score > 0.999 for h in hits), node.uri
    vectors.close()
    database.dispose()


def _faiss_file(home: Path) -> Path:
    location = home / "index" / "vector" / "demo"
    manifest = json.loads((location / "manifest.json").read_text())
    return location / manifest["files"]["index"]["name"]


def test_a_truncated_vector_index_is_rebuilt_when_indexing(indexed: tuple[Path, Path]) -> None:
    """A truncated FAISS file is found on the next `index` run and rebuilt from the node store;
    the text and graph indexes are left as they were."""
    home, repo = indexed
    before = _status(home)
    target = _faiss_file(home)
    target.write_bytes(target.read_bytes()[: target.stat().st_size // 3])
    done = _run(home, "index", str(repo), "--project", "demo")
    assert "rebuilding it from the node store" in done.stderr
    after = _status(home)
    assert after["vectors"]["count"] == before["vectors"]["count"]
    assert after["node_count"] == before["node_count"]
    assert list(target.parent.glob("*.corrupt")), "the damaged files are kept aside"


def test_a_corrupt_vector_index_is_rebuilt_when_searching(indexed: tuple[Path, Path]) -> None:
    """A damaged FAISS file is found when a search opens it, rebuilt, and the search uses it."""
    home, _ = indexed
    before = _status(home)
    target = _faiss_file(home)
    raw = bytearray(target.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    target.write_bytes(bytes(raw))
    out = _assemble_semantic(home)
    assert "rebuilding it from the node store" in out.stderr
    assert "semantic-embedding" in json.loads(out.stdout)["strategies_used"]
    assert _status(home)["vectors"]["count"] == before["vectors"]["count"]
