"""Conformance suite for context strategies (slot ``strategy``)."""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any, ClassVar

import pytest

from cleveragents.models.context import ContextFragment, ContextRequest
from cleveragents.protocols.backends import BackendSet
from cleveragents.testing.conformance._base import ComponentConformance
from cleveragents.testing.factories import RESOURCE_A, RESOURCE_B, make_request
from cleveragents.testing.memory import (
    RESOURCE_METADATA_KEY,
    UKO_SOURCE_PATH,
    UKO_SOURCE_RESOURCE,
    InMemoryGraphBackend,
    InMemoryTextBackend,
    InMemoryVectorBackend,
)

__all__ = ["CORPUS", "ContextStrategyConformance", "hashed_embedding"]

#: ``(uko_uri, resource ULID, path, content)`` indexed into every backend.
CORPUS: tuple[tuple[str, str, str, str], ...] = (
    (
        "uko://a/config.py#parse_config",
        RESOURCE_A,
        "config.py",
        'def parse_config(path):\n    """Parse the TOML config file at path."""\n'
        "    return toml.loads(open(path).read())\n",
    ),
    (
        "uko://a/config.py#Config",
        RESOURCE_A,
        "config.py",
        'class Config:\n    """Settings read from the config file."""\n    debug = False\n',
    ),
    (
        "uko://a/cli.py#main",
        RESOURCE_A,
        "cli.py",
        "def main(argv):\n    config = parse_config(argv[1])\n    run(config)\n",
    ),
    (
        "uko://a/report.py#render",
        RESOURCE_A,
        "report.py",
        'def render(rows):\n    """Render rows as an HTML table."""\n',
    ),
    (
        "uko://b/secret.py#parse_config",
        RESOURCE_B,
        "secret.py",
        "def parse_config(): # resource B must stay out of scope: config file parse\n",
    ),
)
EMBEDDING_DIMENSION = 64
_WORD = re.compile(r"\w+")


def hashed_embedding(text: str, dimension: int = EMBEDDING_DIMENSION) -> list[float]:
    """A deterministic bag-of-words vector (L2-normalised) for test corpora."""
    vector = [0.0] * dimension
    for word in _WORD.findall(text.lower()):
        vector[int(hashlib.blake2b(word.encode(), digest_size=4).hexdigest(), 16) % dimension] += 1
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


class ContextStrategyConformance(ComponentConformance):
    """Confidence in [0, 1], fragments within budget and scope, graceful without backends.

    The ``backends`` fixture offers in-memory text, vector and graph backends
    holding :data:`CORPUS`, scoped to resource A only; override
    :meth:`make_backends` to give the strategy other ones. Set
    :attr:`finds_corpus_matches` to ``False`` if the strategy cannot be expected
    to find anything in that corpus for :attr:`query`.
    """

    slot_key = "strategy"
    query: ClassVar[str] = "parse config file"
    finds_corpus_matches: ClassVar[bool] = True
    budgets: ClassVar[tuple[int, ...]] = (1, 10, 50, 200, 4000)

    def make_backends(self) -> BackendSet:
        text, vector, graph = InMemoryTextBackend(), InMemoryVectorBackend(), InMemoryGraphBackend()
        for uri, resource, path, content in CORPUS:
            metadata = {RESOURCE_METADATA_KEY: resource, "path": path, "content": content}
            text.index_document("conformance", uri, content, metadata)
            vector.index_embedding("conformance", uri, hashed_embedding(content), metadata)
            graph.add_triple("conformance", uri, UKO_SOURCE_RESOURCE, resource)
            graph.add_triple("conformance", uri, UKO_SOURCE_PATH, path)
        return BackendSet(text=text, vector=vector, graph=graph, scope=frozenset({RESOURCE_A}))

    @pytest.fixture
    def backends(self) -> BackendSet:
        return self.make_backends()

    @pytest.fixture
    def request_(self) -> ContextRequest:
        return make_request(self.query, max_tokens=4000)

    def _assemble(
        self, component: Any, request: ContextRequest, backends: BackendSet, budget: int
    ) -> list[ContextFragment]:
        fragments = component.assemble(request, backends, budget, None)
        assert isinstance(fragments, list), f"assemble returned {type(fragments).__name__}"
        assert all(isinstance(f, ContextFragment) for f in fragments)
        return fragments

    def test_name_and_capabilities(self, component: Any) -> None:
        assert isinstance(component.name, str) and component.name.strip()
        capabilities = component.capabilities
        assert 0.0 <= float(capabilities.quality_score) <= 1.0
        for flag in ("uses_text", "uses_vector", "uses_graph", "uses_temporal"):
            assert isinstance(getattr(capabilities, flag), bool), f"capabilities.{flag}"

    @pytest.mark.parametrize(
        "request_fields",
        [
            {},
            {"query": None},
            {"query": None, "focus": ("uko://a/cli.py#main",)},
            {"priority": 1.0},
        ],
        ids=["query", "empty", "focus", "critical"],
    )
    def test_confidence_is_a_number_in_unit_range(
        self, component: Any, backends: BackendSet, request_fields: dict[str, Any]
    ) -> None:
        request = make_request(**{"query": self.query, **request_fields})
        for available in (backends, BackendSet(scope=backends.scope)):
            confidence = component.can_handle(request, available)
            assert isinstance(confidence, (int, float)) and not isinstance(confidence, bool)
            assert 0.0 <= confidence <= 1.0, confidence

    def test_fragments_fit_the_budget(
        self, component: Any, backends: BackendSet, request_: ContextRequest
    ) -> None:
        for budget in self.budgets:
            fragments = self._assemble(component, request_, backends, budget)
            used = sum(f.token_count for f in fragments)
            assert used <= budget, f"{used} tokens for a budget of {budget}"

    def test_fragments_stay_in_scope_and_carry_provenance(
        self, component: Any, backends: BackendSet, request_: ContextRequest
    ) -> None:
        for fragment in self._assemble(component, request_, backends, 4000):
            assert fragment.provenance.resource_id in backends.scope, fragment.uko_node
            assert fragment.provenance.path
            assert fragment.uko_node

    def test_finds_matches_when_confident(
        self, component: Any, backends: BackendSet, request_: ContextRequest
    ) -> None:
        if not self.finds_corpus_matches or component.can_handle(request_, backends) == 0:
            pytest.skip("the strategy does not claim this request")
        assert self._assemble(component, request_, backends, 4000), "no fragment for a match"

    def test_degrades_without_backends(self, component: Any, request_: ContextRequest) -> None:
        self._assemble(component, request_, BackendSet(scope=frozenset({RESOURCE_A})), 1000)

    def test_an_empty_request_does_not_raise(self, component: Any, backends: BackendSet) -> None:
        self._assemble(component, make_request(None), backends, 1000)
