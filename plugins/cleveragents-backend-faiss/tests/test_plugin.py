"""The plugin as the host sees it: entry point, lazy registrations, conformance, CLI."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from cleveragents.testing.conformance import VectorBackendConformance
from cleveragents.testing.fixtures import CliResult

pytest.importorskip(
    "cleveragents_backend_faiss", reason="cleveragents-backend-faiss is not installed"
)
from cleveragents_backend_faiss.backend import FaissVectorBackend
from cleveragents_backend_faiss.embedders import (
    HashingNgramEmbedder,
    MiniLMEmbedder,
    minilm_installed,
)

EXPECTED_EMBEDDERS = ["hashing-ngram", "minilm"] if minilm_installed() else ["hashing-ngram"]


class TestFaissConformance(VectorBackendConformance):
    backend_class = FaissVectorBackend


class TestFaissHNSWConformance(VectorBackendConformance):
    """The same contract through the HNSW index and its in-search scope filter."""

    backend_class = FaissVectorBackend
    backend_options: ClassVar[dict[str, Any]] = {"index_type": "hnsw", "exact_scope_limit": 0}


class TestFaissFlatSelectorConformance(VectorBackendConformance):
    """The same contract through the flat index with FAISS's IDSelector."""

    backend_class = FaissVectorBackend
    backend_options: ClassVar[dict[str, Any]] = {"index_type": "flat", "exact_scope_limit": 0}


class TestFaissPersistedConformance(VectorBackendConformance):
    """The contract still holds when every batch is committed and the index reopened."""

    backend_class = FaissVectorBackend

    def make_component(self, tmp_path: Path) -> Any:
        self._location = tmp_path / "index"
        return FaissVectorBackend(self._location)

    def after_indexing(self, backend: Any) -> None:
        backend.commit()
        reopened = FaissVectorBackend(self._location)
        assert reopened.count() == backend.count()


def test_the_host_registers_the_backend_and_embedders_lazily(plugin_host: Any) -> None:
    """The registry holds import strings until first use, then the real classes."""
    registry = plugin_host.registry
    assert plugin_host.records["faiss"].status == "loaded"
    registration = registry.backends.vector.registration("faiss")
    assert registration.plugin == "faiss"
    assert registration.target == "cleveragents_backend_faiss.backend:FaissVectorBackend"
    assert not registration.is_resolved
    assert registry.backends.vector["faiss"] is FaissVectorBackend
    ours = [n for n in registry.embedders if registry.embedders.registration(n).plugin == "faiss"]
    assert sorted(ours) == EXPECTED_EMBEDDERS
    assert isinstance(registry.embedders["hashing-ngram"], HashingNgramEmbedder)
    if minilm_installed():
        assert not registry.embedders.registration("minilm").is_resolved
        assert isinstance(registry.embedders["minilm"], MiniLMEmbedder)


def test_the_configured_backend_name_resolves(plugin_host: Any, tmp_path: Path) -> None:
    """``index.vector.backend = "faiss"`` (the default) opens this backend per project."""
    backend_class = plugin_host.registry.resolve("vector-backend", "faiss")
    backend = backend_class(tmp_path / "project", embedder="hashing-ngram", dimension=512)
    assert backend.similarity_search([1.0] * 512, scope=frozenset({"r"})) == []


def test_plugins_list_shows_the_vector_backend_and_embedder_slots(
    run_cli: Callable[..., CliResult],
) -> None:
    """``cleveragents plugins list --json`` reports what faiss provides."""
    result = run_cli("plugins", "list", "--json")
    assert result.exit_code == 0, result
    faiss = {entry["name"]: entry for entry in result.json()}["faiss"]
    assert faiss["distribution"] == "cleveragents-backend-faiss"
    assert faiss["status"] == "loaded"
    assert faiss["provides"] == {"vector-backend": ["faiss"], "embedder": EXPECTED_EMBEDDERS}


def test_plugins_check_resolves_every_component(run_cli: Callable[..., CliResult]) -> None:
    """``cleveragents plugins check`` imports our lazy registrations and finds no fault."""
    result = run_cli("plugins", "check")
    failures = [line for line in (result.stdout + result.stderr).splitlines() if "'faiss'" in line]
    assert not failures, result
    assert result.exit_code in (0, 1), result  # 1: another installed plugin failed its check


def test_loading_the_plugin_imports_nothing_heavy() -> None:
    """The entry-point module leaves faiss, numpy and torch unimported."""
    script = (
        "import sys, cleveragents_backend_faiss.plugin;"
        "print(sorted(m for m in ('faiss', 'numpy', 'torch') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
