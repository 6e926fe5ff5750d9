"""The conformance suites themselves: they pass correct components and fail broken ones.

The first half runs every suite on a small correct implementation
(``reference_components``). The second half writes a test module that
subclasses a suite for a deliberately broken component, runs it with
``pytester`` and checks that exactly the broken contract is reported.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import pytest

from cleveragents import hookimpl
from cleveragents.hookspecs import Register
from cleveragents.models.context import DetailLevelMap
from cleveragents.registry import protocol_violations
from cleveragents.slots import SLOTS
from cleveragents.testing import conformance as c
from cleveragents.testing.memory import (
    InMemoryGraphBackend,
    InMemoryTextBackend,
    InMemoryVectorBackend,
)

pytest_plugins = ["pytester"]


def _load_sibling(name: str) -> ModuleType:
    """Import ``name``.py from this folder (the suite runs with --import-mode=importlib)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


ref = _load_sibling("reference_components")


# -- correct components pass ------------------------------------------------------------


class TestReferenceTokenizer(c.TokenizerConformance):
    def make_component(self) -> ref.ByteTripletTokenizer:
        return ref.ByteTripletTokenizer()


class TestReferenceEmbedder(c.EmbedderConformance):
    def make_component(self) -> ref.HashingEmbedder:
        return ref.HashingEmbedder()


class TestReferenceStrategy(c.ContextStrategyConformance):
    def make_component(self) -> ref.KeywordStrategy:
        return ref.KeywordStrategy()


class TestReferenceSelector(c.StrategySelectorConformance):
    def make_component(self) -> ref.Selector:
        return ref.Selector()


class TestReferenceAllocator(c.BudgetAllocatorConformance):
    def make_component(self) -> ref.Allocator:
        return ref.Allocator()


class TestReferenceExecutor(c.StrategyExecutorConformance):
    def make_component(self) -> ref.Executor:
        return ref.Executor()


class TestReferenceDeduplicator(c.FragmentDeduplicatorConformance):
    def make_component(self) -> ref.Deduplicator:
        return ref.Deduplicator()


class TestReferenceDepthResolver(c.DetailDepthResolverConformance):
    def make_component(self) -> ref.DepthResolver:
        return ref.DepthResolver()


class TestReferenceScorer(c.FragmentScorerConformance):
    def make_component(self) -> ref.Scorer:
        return ref.Scorer()


class TestReferencePacker(c.BudgetPackerConformance):
    def make_component(self) -> ref.Packer:
        return ref.Packer()


class TestReferenceOrderer(c.FragmentOrdererConformance):
    def make_component(self) -> ref.Orderer:
        return ref.Orderer()


class TestReferencePreamble(c.PreambleGeneratorConformance):
    def make_component(self) -> ref.Preamble:
        return ref.Preamble()


class TestReferenceCompressor(c.SkeletonCompressorConformance):
    def make_component(self) -> ref.Compressor:
        return ref.Compressor()


class TestReferenceTool(c.ToolConformance):
    valid_arguments: ClassVar[dict[str, Any]] = {"text": "hi"}

    def make_component(self) -> ref.EchoTool:
        return ref.EchoTool()


class TestReferenceLSPServer(c.LSPServerSpecConformance):
    def make_component(self) -> ref.PyrightSpec:
        return ref.PyrightSpec()


class TestReferenceProvider(c.LLMProviderConformance):
    def make_component(self) -> ref.OfflineProvider:
        return ref.OfflineProvider()


class TestReferenceAnalyzer(c.AnalyzerConformance):
    sample_file = ("pkg/config.py", "class Config:\n    pass\n\ndef load():\n    return Config()\n")
    malformed_file = ("pkg/broken.py", "def broken(:\n")

    def make_component(self) -> ref.PythonDefinitionsAnalyzer:
        return ref.PythonDefinitionsAnalyzer()


def test_every_slot_with_components_has_a_suite() -> None:
    """Each registration slot except vocabularies (files) has a conformance suite."""
    from cleveragents.slots import SLOTS

    expected = {s.key for s in SLOTS if s.is_registration and s.check is None}
    assert set(c.SUITES_BY_SLOT) == expected


def test_a_suite_without_make_component_says_what_is_missing(pytester: pytest.Pytester) -> None:
    """Forgetting make_component is one clear error, not a wall of AttributeErrors."""
    pytester.makepyfile(
        """
        from cleveragents.testing.conformance import TokenizerConformance

        class TestForgot(TokenizerConformance):
            pass
        """
    )
    result = pytester.runpytest("-q", "-k", "empty_text")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*TestForgot must define make_component()*"])


# -- broken components fail --------------------------------------------------------------


def _failures(pytester: pytest.Pytester, source: str) -> dict[str, str]:
    """Run ``source`` as a test module; map each failed test (without parameters) to its report."""
    pytester.makepyfile(test_broken=textwrap.dedent(source))
    recorder = pytester.inline_run("-p", "no:cacheprovider")
    failures: dict[str, str] = {}
    for report in recorder.getfailures():
        name = report.nodeid.split("::")[-1].split("[")[0]
        failures[name] = failures.get(name, "") + report.longreprtext
    passed = [r for r in recorder.getreports("pytest_runtest_logreport") if r.passed]
    assert passed, "the broken component passed no test at all: the run itself is broken"
    return failures


def test_text_backend_suite_catches_scope_leaks_and_bad_ranking(pytester: pytest.Pytester) -> None:
    """A backend that ignores scope, ranks ascending and accepts empty queries fails."""
    failed = _failures(
        pytester,
        """
        from cleveragents.protocols.backends import TextResult
        from cleveragents.testing.conformance import TextBackendConformance

        class LeakyTextBackend:
            def __init__(self, location, **options):
                self.docs = {}

            def index_document(self, project, doc_id, content, metadata):
                self.docs[doc_id] = content

            def remove_document(self, project, doc_id):
                self.docs.pop(doc_id, None)

            def rebuild_index(self, project):
                pass

            def search(self, query, *, scope, max_results=20):
                hits = [
                    TextResult(d, c, c.count(query) / 10)
                    for d, c in self.docs.items() if query in c
                ]
                return sorted(hits, key=lambda r: r.score)[:max_results]

        class TestLeaky(TextBackendConformance):
            backend_class = LeakyTextBackend
        """,
    )
    assert {
        "test_scope_hides_other_resources",
        "test_empty_query_is_rejected",
        "test_non_positive_max_results_is_rejected",
        "test_results_are_ranked_by_descending_score_in_unit_range",
    } <= failed.keys()
    assert "test_satisfies_slot_protocols" not in failed
    assert "test_removed_documents_are_not_found" not in failed


def test_sandbox_suite_catches_writes_to_the_original(pytester: pytest.Pytester) -> None:
    """A 'sandbox' that writes through to the original and follows ../ fails."""
    failed = _failures(
        pytester,
        """
        from pathlib import Path

        from cleveragents.models.sandbox import Change, DiffView, SandboxRef
        from cleveragents.testing.conformance import SandboxStrategyConformance

        class LeakySandbox:
            def create(self, plan_id, resource):
                return SandboxRef(plan_id=plan_id, resource_id=resource.resource_id,
                                  strategy="leaky", path=resource.location,
                                  source=resource.location)

            def read(self, ref, path):
                return (Path(ref.path) / path).read_bytes()

            def write(self, ref, path, content):
                target = Path(ref.path) / path
                existed = target.exists()
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content)
                return Change(path=path, kind="modified" if existed else "added")

            def diff(self, ref):
                return DiffView()

            def commit(self, ref):
                pass

            def rollback(self, ref):
                pass

            def checkpoint(self, ref, checkpoint_id):
                pass

            def restore_checkpoint(self, ref, checkpoint_id):
                pass

            def cleanup(self, ref):
                pass

        class TestLeaky(SandboxStrategyConformance):
            def make_component(self):
                return LeakySandbox()
        """,
    )
    assert {
        "test_original_is_untouched_before_commit",
        "test_paths_outside_the_sandbox_are_refused",
        "test_rollback_discards_uncommitted_changes",
        "test_diff_lists_every_change",
        "test_restore_checkpoint_returns_to_the_checkpointed_state",
        "test_two_plans_do_not_see_each_other",
    } <= failed.keys()
    assert "test_read_returns_the_original_content" not in failed


def test_tokenizer_suite_catches_miscounting(pytester: pytest.Pytester) -> None:
    """A tokenizer whose count disagrees with encode and that loses spaces fails."""
    failed = _failures(
        pytester,
        """
        from cleveragents.testing.conformance import TokenizerConformance

        class WordTokenizer:
            name = "words"
            vocabulary = {}

            def encode(self, text):
                return [self.vocabulary.setdefault(w, len(self.vocabulary)) for w in text.split()]

            def decode(self, tokens):
                words = {v: k for k, v in self.vocabulary.items()}
                return " ".join(words[t] for t in tokens)

            def count(self, text):
                return len(text) // 4

        class TestWords(TokenizerConformance):
            def make_component(self):
                return WordTokenizer()
        """,
    )
    assert {"test_count_equals_the_encoded_length", "test_ascii_text_round_trips"} <= failed.keys()
    assert "test_empty_text_has_no_tokens" not in failed


def test_packer_and_deduplicator_suites_catch_contract_breaks(pytester: pytest.Pytester) -> None:
    """A packer that overfills and a deduplicator that keeps the first duplicate fail."""
    failed = _failures(
        pytester,
        """
        from cleveragents.testing.conformance import (
            BudgetPackerConformance,
            FragmentDeduplicatorConformance,
        )

        class OverfillingPacker:
            def pack(self, scored_fragments, budget, detail_level_maps):
                packed, used = [], 0
                for item in sorted(scored_fragments, key=lambda s: -s.composite_score):
                    if used <= budget:  # checks before adding: overshoots by one fragment
                        packed.append(item.fragment)
                        used += item.fragment.token_count
                return packed

        class FirstWinsDeduplicator:
            def deduplicate(self, fragments):
                seen, kept = set(), []
                for f in fragments:
                    if (f.uko_node, f.content) not in seen:
                        seen.add((f.uko_node, f.content))
                        kept.append(f)
                return kept

        class TestPacker(BudgetPackerConformance):
            def make_component(self):
                return OverfillingPacker()

        class TestDeduplicator(FragmentDeduplicatorConformance):
            def make_component(self):
                return FirstWinsDeduplicator()
        """,
    )
    assert {
        "test_never_exceeds_the_budget_and_returns_a_subset",
        "test_a_zero_budget_packs_nothing",
        "test_duplicates_keep_the_highest_relevance",
    } <= failed.keys()
    assert "test_distinct_fragments_are_all_kept" not in failed


def test_protocol_check_names_the_missing_methods(pytester: pytest.Pytester) -> None:
    """A component missing a Protocol method fails the protocol test with its name."""
    failed = _failures(
        pytester,
        """
        from cleveragents.testing.conformance import FragmentOrdererConformance

        class NotAnOrderer:
            def sort(self, fragments):
                return fragments

        class TestNotAnOrderer(FragmentOrdererConformance):
            def make_component(self):
                return NotAnOrderer()
        """,
    )
    assert (
        "does not satisfy FragmentOrdererProtocol: missing order"
        in failed["test_satisfies_slot_protocols"]
    )


# -- every registration hook carries a conforming component into the registry --------------


class EveryHookPlugin:
    """One reference component in every slot, each registered through its own hook."""

    def __init__(self, vocabulary: Path) -> None:
        self.vocabulary = vocabulary

    @hookimpl
    def register_strategy_selectors(self, register: Register) -> None:
        register("reference", ref.Selector())

    @hookimpl
    def register_budget_allocators(self, register: Register) -> None:
        register("reference", ref.Allocator())

    @hookimpl
    def register_strategy_executors(self, register: Register) -> None:
        register("reference", ref.Executor())

    @hookimpl
    def register_fragment_deduplicators(self, register: Register) -> None:
        register("reference", ref.Deduplicator())

    @hookimpl
    def register_detail_depth_resolvers(self, register: Register) -> None:
        register("reference", ref.DepthResolver())

    @hookimpl
    def register_fragment_scorers(self, register: Register) -> None:
        register("reference", ref.Scorer())

    @hookimpl
    def register_budget_packers(self, register: Register) -> None:
        register("reference", ref.Packer())

    @hookimpl
    def register_fragment_orderers(self, register: Register) -> None:
        register("reference", ref.Orderer())

    @hookimpl
    def register_preamble_generators(self, register: Register) -> None:
        register("reference", ref.Preamble())

    @hookimpl
    def register_skeleton_compressors(self, register: Register) -> None:
        register("reference", ref.Compressor())

    @hookimpl
    def register_context_strategies(self, register: Register) -> None:
        register("reference", "reference_components:KeywordStrategy")

    @hookimpl
    def register_analyzers(self, register: Register) -> None:
        register("reference", ref.PythonDefinitionsAnalyzer())

    @hookimpl
    def register_vocabularies(self, register: Register) -> None:
        register("reference", self.vocabulary)

    @hookimpl
    def register_detail_level_maps(self, register: Register) -> None:
        register("reference", DetailLevelMap(domain="uko-ref", levels={"NAME_ONLY": 0}))

    @hookimpl
    def register_text_backends(self, register: Register) -> None:
        register("reference", "cleveragents.testing.memory:InMemoryTextBackend")

    @hookimpl
    def register_vector_backends(self, register: Register) -> None:
        register("reference", InMemoryVectorBackend)

    @hookimpl
    def register_graph_backends(self, register: Register) -> None:
        register("reference", InMemoryGraphBackend)

    @hookimpl
    def register_embedders(self, register: Register) -> None:
        register("reference", ref.HashingEmbedder())

    @hookimpl
    def register_tokenizers(self, register: Register) -> None:
        register("reference", ref.ByteTripletTokenizer())

    @hookimpl
    def register_sandbox_strategies(self, register: Register) -> None:
        register("reference", "cleveragents.sandboxes:DirectSandbox")

    @hookimpl
    def register_llm_providers(self, register: Register) -> None:
        register("reference", ref.OfflineProvider())

    @hookimpl
    def register_tools(self, register: Register) -> None:
        register("reference", ref.EchoTool())

    @hookimpl
    def register_lsp_servers(self, register: Register) -> None:
        register("reference", ref.PyrightSpec())


def test_every_registration_hook_fills_its_slot(
    plugin_host: Any, register_plugin: Any, tmp_path: Path
) -> None:
    """Each register_* hook puts its component in its slot, where it resolves and conforms."""
    vocabulary = tmp_path / "uko-ref.ttl"
    vocabulary.write_text("@prefix uko-ref: <https://example.org/uko-ref#> .\n")
    record = register_plugin(EveryHookPlugin(vocabulary), name="every-hook")
    registration_slots = [s for s in SLOTS if s.is_registration]
    assert sorted(record.hooks) == sorted(s.hook for s in registration_slots)
    provided = plugin_host.registry.provided_by("every-hook")
    assert record.status == "loaded", record.error
    assert provided == {s.key: ["reference"] for s in registration_slots}
    for slot in registration_slots:
        component = plugin_host.registry[slot.key]["reference"]
        assert not protocol_violations(component, slot), slot.key
    assert plugin_host.registry.backends.text["reference"] is InMemoryTextBackend
