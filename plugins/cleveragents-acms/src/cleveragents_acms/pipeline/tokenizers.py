"""Token counting for budgets: OpenAI's cl100k and o200k vocabularies through ``bpe-openai``.

``bpe-openai`` compiles both vocabularies into its native extension, so nothing
is read from disk or downloaded at run time. Its Python package, however,
parses every gzipped vocabulary it ships when it is imported (about 0.6 s); we
only need the native tokenizer, so :func:`_bindings` loads the extension module
by itself and falls back to the ordinary import when that is not possible.
Counting is fast: about 46k tokens of source code in 6 ms.

A tokenizer names the models it counts for in ``models`` (prefixes of model
names); the context service counts a ``--model`` with the registered tokenizer
whose prefix matches longest (:func:`claimed_tokenizer`).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

__all__ = [
    "ENCODINGS",
    "BPETokenizer",
    "Cl100kTokenizer",
    "O200kTokenizer",
    "claimed_tokenizer",
    "get_tokenizer",
    "tokenizer_for_model",
]

#: Our tokenizer names -> the encodings of ``bpe-openai``.
ENCODINGS: dict[str, str] = {"cl100k": "cl100k_base", "o200k": "o200k_base"}

_BINDINGS = "bpe_openai._bindings"
_lock = threading.Lock()
_native: dict[str, Any] = {}


def _bindings() -> ModuleType:
    """The native module of ``bpe-openai``, without running the package's slow ``__init__``."""
    module = sys.modules.get(_BINDINGS)
    if module is not None:
        return module
    if "bpe_openai" not in sys.modules:
        spec = importlib.util.find_spec("bpe_openai")
        folders = list(spec.submodule_search_locations or []) if spec else []
        suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
        for folder in folders:
            candidates = sorted(
                p for p in Path(folder).glob("_bindings.*") if p.name.endswith(suffixes)
            )
            if not candidates:
                continue
            loader = importlib.machinery.ExtensionFileLoader(_BINDINGS, str(candidates[0]))
            ext_spec = importlib.util.spec_from_file_location(
                _BINDINGS, candidates[0], loader=loader
            )
            if ext_spec is None:
                break
            module = importlib.util.module_from_spec(ext_spec)
            loader.exec_module(module)
            sys.modules[_BINDINGS] = module
            return module
    return importlib.import_module(_BINDINGS)


def _native_tokenizer(encoding: str) -> Any:
    with _lock:
        if encoding not in _native:
            _native[encoding] = _bindings().tokenizer_for_encoding(encoding)
        return _native[encoding]


class BPETokenizer:
    """A byte-pair tokenizer of one OpenAI encoding; satisfies ``cleveragents.protocols.Tokenizer``.

    Special-token text such as ``<|endoftext|>`` is counted as ordinary text,
    which is what a prompt containing it costs.
    """

    name: str = ""
    encoding: ClassVar[str] = ""
    #: Prefixes of the model names it counts for (see :func:`claimed_tokenizer`).
    models: ClassVar[tuple[str, ...]] = ()

    def __init__(self, name: str | None = None) -> None:
        if name is not None:
            if name not in ENCODINGS:
                raise ValueError(f"unknown tokenizer {name!r} (known: {', '.join(ENCODINGS)})")
            self.name = name
        if not self.name:
            raise ValueError("a tokenizer needs a name: cl100k or o200k")
        self._tokenizer = _native_tokenizer(ENCODINGS[self.name])

    def count(self, text: str) -> int:
        return int(self._tokenizer.count(text)) if text else 0

    def encode(self, text: str) -> list[int]:
        return list(self._tokenizer.encode(text)) if text else []

    def decode(self, tokens: Sequence[int]) -> str:
        """The text of ``tokens``; bytes that are not valid UTF-8 become U+FFFD."""
        tokens = list(tokens)
        if not tokens:
            return ""
        try:
            return str(self._tokenizer.decode(tokens))
        except ValueError:  # a character split across the sequence's edges
            return "".join(self._decode_one(token) for token in tokens)

    def _decode_one(self, token: int) -> str:
        try:
            return str(self._tokenizer.decode([token]))
        except ValueError:
            return "\ufffd"

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of ``text`` with at most ``max_tokens`` tokens, cut between tokens."""
        if max_tokens <= 0:
            return ""
        tokens = self.encode(text)
        if len(tokens) <= max_tokens:
            return text
        for end in range(max_tokens, max(0, max_tokens - 4), -1):
            try:
                return str(self._tokenizer.decode(tokens[:end]))
            except ValueError:  # do not cut inside a multi-byte character
                continue
        return ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


_O200K_PREFIXES = ("gpt-4o", "gpt-4.1", "gpt-5", "o1", "o3", "o4", "chatgpt-4o")
_CL100K_PREFIXES = ("gpt-4", "gpt-3.5", "gpt-35", "text-embedding-3", "text-embedding-ada-002")


class Cl100kTokenizer(BPETokenizer):
    """GPT-4, GPT-3.5 and text-embedding-3 models."""

    name = "cl100k"
    models = _CL100K_PREFIXES


class O200kTokenizer(BPETokenizer):
    """GPT-4o, GPT-4.1 and the o-series models."""

    name = "o200k"
    models = _O200K_PREFIXES


def _model_name(model: str) -> str:
    return model.strip().lower().rsplit("/", 1)[-1]


def claimed_tokenizer(model: str, claims: Mapping[str, Iterable[str]]) -> str | None:
    """The tokenizer whose claimed model-name prefix matches ``model`` longest, else None.

    ``claims`` maps tokenizer names to the model-name prefixes they count for
    (a tokenizer's ``models``); provider prefixes (``openai/gpt-4o``) are ignored,
    and ties go to the first name in alphabetical order.
    """
    name = _model_name(model)
    matches = [
        (len(prefix), tokenizer)
        for tokenizer, prefixes in claims.items()
        for prefix in prefixes
        if prefix and name.startswith(prefix.lower())
    ]
    if not matches:
        return None
    longest = max(length for length, _ in matches)
    return min(tokenizer for length, tokenizer in matches if length == longest)


def tokenizer_for_model(model: str) -> str:
    """The built-in tokenizer that counts like ``model`` (``cl100k`` when unknown).

    Provider prefixes (``openai/gpt-4o``) are ignored.
    """
    claims = {"cl100k": Cl100kTokenizer.models, "o200k": O200kTokenizer.models}
    return claimed_tokenizer(model, claims) or "cl100k"


_shared: dict[str, BPETokenizer] = {}


def get_tokenizer(name: str = "cl100k") -> BPETokenizer:
    """A shared tokenizer by name (``cl100k`` or ``o200k``)."""
    if name not in _shared:
        _shared[name] = {"cl100k": Cl100kTokenizer, "o200k": O200kTokenizer}.get(
            name, BPETokenizer
        )(name)
    return _shared[name]
