"""Every component core ships runs its slot's conformance suite, as third-party ones do."""

from __future__ import annotations

from pathlib import Path

from cleveragents.models.context import DetailLevelMap
from cleveragents.sandboxes import DirectSandbox, FilesystemCopySandbox
from cleveragents.testing.conformance import (
    DetailLevelMapConformance,
    GraphBackendConformance,
    SandboxStrategyConformance,
    TextBackendConformance,
    VectorBackendConformance,
)
from cleveragents.testing.memory import (
    InMemoryGraphBackend,
    InMemoryTextBackend,
    InMemoryVectorBackend,
)


class TestFilesystemCopySandbox(SandboxStrategyConformance):
    def make_component(self, tmp_path: Path) -> FilesystemCopySandbox:
        return FilesystemCopySandbox(root=tmp_path)


class TestFilesystemCopySandboxUnderHome(SandboxStrategyConformance):
    """Without a root, the copies go to ``$CLEVERAGENTS_HOME/sandboxes``."""

    def make_component(self) -> FilesystemCopySandbox:
        return FilesystemCopySandbox()


class TestDirectSandbox(SandboxStrategyConformance):
    isolated = False

    def make_component(self) -> DirectSandbox:
        return DirectSandbox()


class TestInMemoryTextBackend(TextBackendConformance):
    backend_class = InMemoryTextBackend


class TestInMemoryVectorBackend(VectorBackendConformance):
    backend_class = InMemoryVectorBackend


class TestInMemoryGraphBackend(GraphBackendConformance):
    backend_class = InMemoryGraphBackend


class TestDetailLevelMapModel(DetailLevelMapConformance):
    def make_component(self) -> DetailLevelMap:
        return DetailLevelMap(
            domain="uko-tf", parent="uko-infra", levels={"RESOURCE_LISTING": 0, "FULL_HCL": 9}
        )
