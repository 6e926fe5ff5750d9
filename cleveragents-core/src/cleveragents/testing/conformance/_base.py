"""The base every conformance suite shares: building the component and checking its Protocol."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from cleveragents.errors import ValidationError
from cleveragents.registry import protocol_violations
from cleveragents.slots import SLOTS_BY_KEY, Slot

__all__ = ["INVALID_ARGUMENT", "ComponentConformance"]

#: What a component may raise for an invalid argument: the project's
#: ValidationError or a plain ValueError (ValidationError is not one).
INVALID_ARGUMENT: tuple[type[Exception], ...] = (ValidationError, ValueError)


class ComponentConformance:
    """Base of the conformance suites: subclass one and define :meth:`make_component`.

    The suite's class name does not start with ``Test``, so pytest collects it
    only through your subclass::

        class TestMyTokenizer(TokenizerConformance):
            def make_component(self):
                return MyTokenizer()

    ``make_component`` may take a ``tmp_path`` argument: a fresh, empty
    directory the component may write to. ``$CLEVERAGENTS_HOME`` points to a
    temporary directory while the component exists. A component with a
    ``close()`` method is closed after each test.
    """

    #: The slot key (``"sandbox"``, ``"text-backend"`` …) whose Protocols apply.
    slot_key: ClassVar[str] = ""

    def make_component(self) -> Any:
        """Build the component under test (a fresh one for each test)."""
        raise NotImplementedError(f"{type(self).__name__} must define make_component()")

    @property
    def slot(self) -> Slot:
        return SLOTS_BY_KEY[self.slot_key]

    @pytest.fixture
    def component(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
        """The component under test, built by :meth:`make_component`."""
        monkeypatch.setenv("CLEVERAGENTS_HOME", str(tmp_path / "cleveragents-home"))
        workdir = tmp_path / "component"
        workdir.mkdir()
        make = self.make_component
        if "tmp_path" in inspect.signature(make).parameters:
            built = make(tmp_path=workdir)  # type: ignore[call-arg]
        else:
            built = make()
        yield built
        close = getattr(built, "close", None)
        if callable(close):
            close()

    def test_satisfies_slot_protocols(self, component: Any) -> None:
        """The component passes the registry's load-time check for its slot."""
        checked = type(component) if self.slot.registers_classes else component
        problems = protocol_violations(checked, self.slot)
        assert not problems, f"{type(component).__name__}: " + "; ".join(problems)
        for protocol in self.slot.protocols:
            assert isinstance(component, protocol), (
                f"{type(component).__name__} is not a {protocol.__name__}"
            )
