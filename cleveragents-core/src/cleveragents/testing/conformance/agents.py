"""Conformance suites for what agents use: tools, language servers and LLM providers."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from cleveragents.testing.conformance._base import ComponentConformance

__all__ = ["LLMProviderConformance", "LSPServerSpecConformance", "ToolConformance"]

_JSON_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}


def schema_problems(schema: Any, where: str = "input_schema") -> list[str]:
    """Structural problems of a JSON Schema *object* schema (no validator needed)."""
    if not isinstance(schema, Mapping):
        return [f"{where} is a {type(schema).__name__}, not a mapping"]
    problems = []
    if schema.get("type") != "object":
        problems.append(f"{where}.type is {schema.get('type')!r}, expected 'object'")
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping):
        problems.append(f"{where}.properties is not a mapping")
        properties = {}
    for name, prop in properties.items():
        if not isinstance(prop, Mapping):
            problems.append(f"{where}.properties.{name} is not a schema")
        elif "type" in prop and not (
            (isinstance(prop["type"], str) and prop["type"] in _JSON_TYPES)
            or (isinstance(prop["type"], list) and set(prop["type"]) <= _JSON_TYPES)
        ):
            problems.append(f"{where}.properties.{name}.type {prop['type']!r} is not a JSON type")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        problems.append(f"{where}.required must be a list of property names")
    else:
        problems += [
            f"{where}.required names '{r}', which is not in properties"
            for r in required
            if r not in properties
        ]
    try:
        json.dumps(schema)
    except (TypeError, ValueError) as exc:
        problems.append(f"{where} is not JSON-serialisable: {exc}")
    return problems


class ToolConformance(ComponentConformance):
    """Name, description, a JSON-Schema object for input, and an ``invoke`` that returns.

    Set :attr:`valid_arguments` to arguments the tool accepts without side
    effects outside the test's temporary directory.
    """

    slot_key = "tool"
    valid_arguments: ClassVar[dict[str, Any]] = {}

    def test_name_and_description(self, component: Any) -> None:
        assert isinstance(component.name, str) and component.name.strip()
        assert " " not in component.name, "tool names are identifiers, without spaces"
        assert isinstance(component.description, str) and component.description.strip()

    def test_input_schema_is_a_json_schema_object(self, component: Any) -> None:
        problems = schema_problems(component.input_schema)
        assert not problems, "; ".join(problems)

    def test_valid_arguments_match_the_schema(self, component: Any) -> None:
        schema = component.input_schema
        missing = [r for r in schema.get("required", []) if r not in self.valid_arguments]
        assert not missing, f"valid_arguments lacks required {missing}"
        unknown = set(self.valid_arguments) - set(schema.get("properties", {}))
        if schema.get("additionalProperties") is False:
            assert not unknown, f"valid_arguments has properties the schema forbids: {unknown}"

    def test_invoke_returns(self, component: Any) -> None:
        component.invoke(dict(self.valid_arguments))


class LSPServerSpecConformance(ComponentConformance):
    """A name, the languages served, and a non-empty command."""

    slot_key = "lsp-server"

    def test_fields(self, component: Any) -> None:
        assert isinstance(component.name, str) and component.name.strip()
        languages = list(component.languages)
        assert languages and all(isinstance(lang, str) and lang for lang in languages)
        command = list(component.command)
        assert command and all(isinstance(part, str) for part in command)
        assert command[0].strip(), "the command starts with the program to run"


class LLMProviderConformance(ComponentConformance):
    """Provider name and capabilities; creating models is left to the provider's own tests."""

    slot_key = "llm-provider"

    def test_provider_name_and_capabilities(self, component: Any) -> None:
        assert isinstance(component.provider_name, str) and component.provider_name.strip()
        capabilities = component.capabilities
        for flag in ("supports_streaming", "supports_tools", "supports_embeddings"):
            assert isinstance(getattr(capabilities, flag), bool), flag
        assert isinstance(capabilities.max_context_tokens, int)
        assert capabilities.max_context_tokens > 0
