"""Conformance suites for tokenizers and embedders."""

from __future__ import annotations

import math
import random
import string
from typing import Any, ClassVar

import pytest

from cleveragents.testing.conformance._base import ComponentConformance

__all__ = ["EmbedderConformance", "TokenizerConformance"]

SAMPLE_TEXTS: tuple[str, ...] = (
    "hello world",
    "def parse_config(path: str) -> dict:\n    return toml.load(path)\n",
    "  leading and trailing spaces  ",
    "CamelCaseIdentifiersAndsnake_case_ones",
    "numbers 1234567890 and symbols !@#$%^&*()",
    "tabs\tand\nnewlines\r\n",
    "naïve café — ünïcödé ✓ 日本語",
    "a" * 500,
)


def _random_ascii(rng: random.Random, count: int) -> list[str]:
    alphabet = string.printable
    return ["".join(rng.choices(alphabet, k=rng.randint(1, 300))) for _ in range(count)]


class TokenizerConformance(ComponentConformance):
    """Counting agrees with encoding, encoding round-trips, the empty text is free."""

    slot_key = "tokenizer"
    #: How many random ASCII texts the property checks try.
    random_examples: ClassVar[int] = 200

    def test_name_is_a_non_empty_string(self, component: Any) -> None:
        assert isinstance(component.name, str) and component.name.strip()

    def test_claimed_models_are_name_prefixes(self, component: Any) -> None:
        """``models``, when given, is a tuple of non-empty model-name prefixes."""
        models = getattr(component, "models", ())
        assert isinstance(models, tuple | list), "models must be a tuple of strings"
        assert all(isinstance(m, str) and m.strip() for m in models)

    def test_empty_text_has_no_tokens(self, component: Any) -> None:
        assert component.count("") == 0
        assert list(component.encode("")) == []
        assert component.decode([]) == ""

    @pytest.mark.parametrize("text", SAMPLE_TEXTS)
    def test_count_equals_the_encoded_length(self, component: Any, text: str) -> None:
        tokens = component.encode(text)
        assert all(isinstance(t, int) and not isinstance(t, bool) for t in tokens)
        assert component.count(text) == len(tokens)
        assert component.count(text) > 0

    def test_ascii_text_round_trips(self, component: Any) -> None:
        rng = random.Random(20240601)
        for text in [*SAMPLE_TEXTS[:6], *_random_ascii(rng, self.random_examples)]:
            tokens = component.encode(text)
            assert component.decode(tokens) == text, f"round trip changed {text!r}"
            assert component.count(text) == len(tokens), f"count != len(encode) for {text!r}"

    def test_counting_is_deterministic(self, component: Any) -> None:
        text = SAMPLE_TEXTS[1] * 20
        assert component.count(text) == component.count(text)
        assert list(component.encode(text)) == list(component.encode(text))

    def test_longer_text_never_counts_fewer_tokens(self, component: Any) -> None:
        base = "tokens grow with text. "
        counts = [component.count(base * n) for n in (1, 2, 8, 32)]
        assert counts == sorted(counts)
        assert counts[-1] > counts[0]


class EmbedderConformance(ComponentConformance):
    """Vectors of the declared dimension, L2-normalised, deterministic, one per input."""

    slot_key = "embedder"
    #: Tolerance on norms and on repeated embeddings.
    tolerance: ClassVar[float] = 1e-4

    def test_name_and_dimension(self, component: Any) -> None:
        assert isinstance(component.name, str) and component.name.strip()
        assert isinstance(component.dimension, int) and component.dimension > 0

    def test_no_texts_give_no_vectors(self, component: Any) -> None:
        assert list(component.embed([])) == []

    def test_one_vector_of_the_declared_dimension_per_text(self, component: Any) -> None:
        vectors = component.embed(list(SAMPLE_TEXTS))
        assert len(vectors) == len(SAMPLE_TEXTS)
        for vector in vectors:
            assert len(vector) == component.dimension
            assert all(isinstance(x, float) and math.isfinite(x) for x in vector)

    def test_vectors_are_l2_normalised(self, component: Any) -> None:
        for vector in component.embed(list(SAMPLE_TEXTS)):
            norm = math.sqrt(sum(x * x for x in vector))
            assert norm == pytest.approx(1.0, abs=1e-3)

    def test_embedding_is_deterministic_and_batch_independent(self, component: Any) -> None:
        texts = list(SAMPLE_TEXTS[:4])
        batch = component.embed(texts)
        again = component.embed(texts)
        singles = [component.embed([text])[0] for text in texts]
        for first, second, single in zip(batch, again, singles, strict=True):
            assert list(first) == pytest.approx(list(second), abs=self.tolerance)
            assert list(first) == pytest.approx(list(single), abs=self.tolerance)

    def test_different_texts_get_different_vectors(self, component: Any) -> None:
        first, second = component.embed(["parse the configuration file", "render a bar chart"])
        assert list(first) != pytest.approx(list(second), abs=self.tolerance)
