"""The registry: choosing components by name, by class and through the scope chain."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cleveragents import hookimpl
from cleveragents.errors import NotFoundError, PluginError, ValidationError
from cleveragents.models.context import ContextFragment
from cleveragents.plugins import PluginHost
from cleveragents.protocols import BackendSet, FragmentOrdererProtocol, TextBackend
from cleveragents.registry import Registration, Registry, protocol_violations
from cleveragents.slots import PIPELINE_SLOTS, SLOTS, SLOTS_BY_KEY


class ReverseOrderer:
    def order(self, fragments: list[ContextFragment]) -> list[ContextFragment]:
        return list(reversed(fragments))


class IdentityOrderer:
    def order(self, fragments: list[ContextFragment]) -> list[ContextFragment]:
        return list(fragments)


class GrepBackend:
    """A text backend class (backend slots register classes)."""

    def __init__(self, location: Path) -> None:
        self.location = location

    def search(self, query: str, *, scope: frozenset[str], max_results: int = 20) -> list[Any]:
        return []

    def index_document(self, project: str, doc_id: str, content: str, metadata: dict) -> None:
        pass

    def remove_document(self, project: str, doc_id: str) -> None:
        pass

    def rebuild_index(self, project: str) -> None:
        pass


class Components:
    @hookimpl
    def register_fragment_orderers(self, register: Any) -> None:
        register("reverse", ReverseOrderer())
        register("identity", f"{__name__}:IdentityOrderer")

    @hookimpl
    def register_text_backends(self, register: Any) -> None:
        register("grep", GrepBackend)


@pytest.fixture
def registry() -> Registry:
    host = PluginHost.load(env={}, entry_points=[])
    host.register(Components(), "components")
    return host.registry


def test_every_hook_has_one_slot() -> None:
    """The slot catalogue and the hookspecs describe the same extension points."""
    from cleveragents.plugins import _HOOK_NAMES

    slot_hooks = {slot.hook for slot in SLOTS}
    assert slot_hooks <= _HOOK_NAMES
    assert {h for h in _HOOK_NAMES if h.startswith("register_")} == slot_hooks
    assert len(PIPELINE_SLOTS) == 10


def test_resolve_by_name_builtin_class_and_module_reference(registry: Registry) -> None:
    """A component is chosen by name, "builtin:ClassName" or "module:ClassName"."""
    assert isinstance(registry.resolve("fragment-orderer", "reverse"), ReverseOrderer)
    assert isinstance(
        registry.resolve("fragment-orderer", "builtin:IdentityOrderer"), IdentityOrderer
    )
    adhoc = registry.resolve("fragment-orderer", f"{__name__}:ReverseOrderer")
    assert isinstance(adhoc, FragmentOrdererProtocol)
    assert registry.pipeline["fragment-orderer"]["identity"].order([]) == []


def test_asking_whether_a_name_is_registered_loads_nothing(registry: Registry) -> None:
    """``name in view`` answers from the registrations; a lazy component stays unloaded."""
    view = registry["fragment-orderer"]
    assert "identity" in view and "nope" not in view
    assert not view.registration("identity").is_resolved
    assert isinstance(view["identity"], IdentityOrderer)
    assert view.registration("identity").is_resolved


def test_unknown_names_list_the_valid_ones(registry: Registry) -> None:
    """An unknown component name fails with the list of registered names."""
    with pytest.raises(
        NotFoundError, match=r"unknown fragment-orderer 'nope' \(available: identity, reverse\)"
    ):
        registry.resolve("fragment-orderer", "nope")
    with pytest.raises(NotFoundError, match="implemented by class 'Missing'"):
        registry.resolve("fragment-orderer", "builtin:Missing")
    with pytest.raises(ValidationError, match="unknown slot"):
        registry["no-such-slot"]


def test_module_reference_that_breaks_the_protocol_is_rejected(registry: Registry) -> None:
    """A configured "module:Class" that is not an orderer raises PluginError."""
    with pytest.raises(PluginError, match="FragmentScorerProtocol: missing score"):
        registry.resolve("fragment-scorer", f"{__name__}:IdentityOrderer")
    with pytest.raises(PluginError, match="could not be loaded"):
        registry.resolve("fragment-orderer", "no_such_module:Thing")


def test_scope_chain_plan_over_project_over_global(registry: Registry) -> None:
    """resolve_scoped takes the first scope that names the slot."""
    plan = {"fragment-orderer": "reverse"}
    project = {"fragment-orderer": "identity"}
    global_ = {"fragment-orderer": "builtin:IdentityOrderer"}
    assert isinstance(
        registry.resolve_scoped("fragment-orderer", plan, project, global_), ReverseOrderer
    )
    assert isinstance(
        registry.resolve_scoped("fragment-orderer", None, project, global_), IdentityOrderer
    )
    assert isinstance(registry.resolve_scoped("fragment-orderer", {}, {}, global_), IdentityOrderer)
    with pytest.raises(ValidationError):
        registry.resolve_scoped("fragment-orderer", {}, None)


def test_backend_slots_take_classes_checked_structurally(registry: Registry) -> None:
    """Backend slots hold classes; an instance is refused."""
    backend_cls = registry.backends.text["grep"]
    assert backend_cls is GrepBackend
    assert isinstance(backend_cls(Path(".")), TextBackend)
    slot = SLOTS_BY_KEY["text-backend"]
    assert protocol_violations(GrepBackend(Path(".")), slot) == [
        "expected a class, got an instance of GrepBackend"
    ]
    assert BackendSet(text=backend_cls(Path("."))).available() == {"text"}


def test_vocabulary_slot_requires_an_existing_turtle_file(tmp_path: Path) -> None:
    """Vocabularies are .ttl files that exist."""
    slot = SLOTS_BY_KEY["vocabulary"]
    ttl = tmp_path / "tf.ttl"
    ttl.write_text("@prefix uko-tf: <https://example.org/tf#> .\n")
    assert protocol_violations(ttl, slot) == []
    assert "Turtle" in protocol_violations(tmp_path / "tf.txt", slot)[0]
    assert "does not exist" in protocol_violations(tmp_path / "missing.ttl", slot)[0]
    registration = Registration(slot, "tf", "terraform", str(ttl))
    assert registration.resolve() == str(ttl)
