"""The error taxonomy shared by the CLI, the A2A server and every plugin.

Every user-facing failure is a :class:`CleverAgentsError` subclass carrying an
HTTP-like ``code`` and a ``category`` name, so the CLI prints
``Error [422] VALIDATION_FAILED: name is required`` and the A2A layer maps the
same exception to a JSON-RPC error code. Classification walks the MRO, so a
plugin's own subclass inherits the code of the nearest known ancestor.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AlreadyExistsError",
    "AuthenticationError",
    "AuthorizationError",
    "BudgetExceededError",
    "BusinessRuleViolation",
    "CleverAgentsError",
    "ConfigurationError",
    "DatabaseError",
    "DatabaseLockedError",
    "NetworkError",
    "NotFoundError",
    "PluginError",
    "ProviderError",
    "RateLimitError",
    "ValidationError",
    "classify_error",
    "format_error",
    "jsonrpc_code",
    "wrap_unexpected",
]


class CleverAgentsError(Exception):
    """Base of every error the project raises on purpose.

    :param message: one line for the user; it is redacted before display.
    :param details: structured context for logs and ``--json`` output; redacted.
    """

    code: int = 500
    category: str = "INTERNAL"
    jsonrpc: int = -32603

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = dict(details or {})

    def to_dict(self) -> dict[str, Any]:
        """The redacted, JSON-serialisable form used by ``--json`` and A2A."""
        from cleveragents.redaction import redact

        return {
            "code": self.code,
            "category": self.category,
            "message": redact(self.message),
            "details": redact(self.details),
        }


class ValidationError(CleverAgentsError):
    """Bad input: a missing or malformed argument, option or value."""

    code, category, jsonrpc = 422, "VALIDATION_FAILED", -32602


class NotFoundError(CleverAgentsError):
    """A named entity (project, resource, plugin, index …) does not exist."""

    code, category, jsonrpc = 404, "NOT_FOUND", -32001


class AlreadyExistsError(CleverAgentsError):
    """An entity with the same unique name already exists."""

    code, category, jsonrpc = 409, "ALREADY_EXISTS", -32005


class AuthenticationError(CleverAgentsError):
    code, category, jsonrpc = 401, "AUTHENTICATION_REQUIRED", -32002


class AuthorizationError(CleverAgentsError):
    code, category, jsonrpc = 403, "FORBIDDEN", -32003


class RateLimitError(CleverAgentsError):
    code, category, jsonrpc = 429, "RATE_LIMITED", -32603


class BusinessRuleViolation(CleverAgentsError):
    """The request is well-formed but not allowed in the current state."""

    code, category, jsonrpc = 409, "INVALID_STATE", -32004


class BudgetExceededError(CleverAgentsError):
    code, category, jsonrpc = 413, "BUDGET_EXCEEDED", -32006


class ProviderError(CleverAgentsError):
    code, category, jsonrpc = 520, "PROVIDER_ERROR", -32603


class DatabaseError(CleverAgentsError):
    code, category, jsonrpc = 522, "DATABASE_ERROR", -32603


class DatabaseLockedError(DatabaseError):
    """Another process held the database past the busy timeout."""

    code, category = 523, "DATABASE_LOCKED"


class NetworkError(CleverAgentsError):
    code, category, jsonrpc = 524, "NETWORK_ERROR", -32603


class ConfigurationError(CleverAgentsError):
    """A configuration file or value is invalid; the message names file and line."""

    code, category, jsonrpc = 525, "CONFIGURATION_ERROR", -32603


class PluginError(CleverAgentsError):
    """A plugin failed to load, broke a Protocol, or clashed with another plugin."""

    code, category, jsonrpc = 526, "PLUGIN_ERROR", -32603


def wrap_unexpected(exc: BaseException, **context: Any) -> CleverAgentsError:
    """Turn any exception into a CleverAgentsError with a user-safe message.

    A CleverAgentsError is returned as is (with ``context`` merged into a copy of
    its details); anything else becomes ``INTERNAL`` and keeps its type and text
    only in ``details`` for diagnostics.
    """
    if isinstance(exc, CleverAgentsError):
        if context:
            merged = type(exc).__new__(type(exc))
            merged.__dict__.update(exc.__dict__)
            merged.args = exc.args
            merged.details = {**exc.details, **context}
            return merged
        return exc
    return CleverAgentsError(
        "An unexpected error occurred",
        details={"exception": type(exc).__name__, "text": str(exc), **context},
    )


def classify_error(exc: BaseException) -> tuple[int, str]:
    """``(code, category)`` of the most specific known class in ``exc``'s MRO."""
    for klass in type(exc).__mro__:
        if issubclass(klass, CleverAgentsError) and "code" in klass.__dict__:
            return klass.code, klass.category
    return CleverAgentsError.code, CleverAgentsError.category


def jsonrpc_code(exc: BaseException) -> int:
    """The JSON-RPC 2.0 error code the A2A layer sends for ``exc``."""
    return exc.jsonrpc if isinstance(exc, CleverAgentsError) else -32603


def format_error(exc: BaseException) -> str:
    """The one-line, redacted CLI form: ``Error [422] VALIDATION_FAILED: …``."""
    from cleveragents.redaction import redact

    err = wrap_unexpected(exc)
    code, category = classify_error(err)
    return f"Error [{code}] {category}: {redact(err.message)}"
