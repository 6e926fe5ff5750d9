"""What agents use: LLM providers, tools and language servers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

__all__ = ["AIProviderInterface", "LSPServerSpec", "ProviderCapabilities", "Tool"]


@runtime_checkable
class ProviderCapabilities(Protocol):
    supports_streaming: bool
    supports_tools: bool
    supports_embeddings: bool
    max_context_tokens: int


@runtime_checkable
class AIProviderInterface(Protocol):
    """An LLM provider (spec 000, Extensibility); returns LangChain models."""

    @property
    def provider_name(self) -> str: ...

    @property
    def capabilities(self) -> ProviderCapabilities: ...

    def create_chat_model(self, model: str, temperature: float = 0.7, **kwargs: Any) -> Any: ...

    def create_embedding_model(self, model: str, **kwargs: Any) -> Any: ...


@runtime_checkable
class Tool(Protocol):
    """A tool an actor can call; ``input_schema`` is a JSON Schema object."""

    name: str
    description: str
    input_schema: Mapping[str, Any]

    def invoke(self, arguments: Mapping[str, Any]) -> Any: ...


@runtime_checkable
class LSPServerSpec(Protocol):
    """How to start one language server process and which languages it serves."""

    name: str
    languages: Sequence[str]
    command: Sequence[str]
