"""Embedders and tokenizers: turning text into vectors and counting tokens."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

__all__ = ["Embedder", "Tokenizer"]


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to fixed-size, L2-normalised vectors; must work offline."""

    name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


@runtime_checkable
class Tokenizer(Protocol):
    """Counts tokens as a target model does; budgets are enforced with it.

    It may name the models it counts for in a ``models`` attribute (prefixes of
    model names); the context system then chooses it for those models.
    """

    name: str

    def count(self, text: str) -> int: ...

    def encode(self, text: str) -> list[int]: ...

    def decode(self, tokens: Sequence[int]) -> str: ...
