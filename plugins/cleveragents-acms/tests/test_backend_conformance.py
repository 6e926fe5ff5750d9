"""The kernel's backend conformance suites, run against the ACMS backends and their registration."""

from __future__ import annotations

import subprocess
import sys

from cleveragents.plugins import PluginHost
from cleveragents.testing.conformance import GraphBackendConformance, TextBackendConformance
from cleveragents_acms.backends.graph import OxigraphGraphBackend
from cleveragents_acms.backends.text import TantivyTextBackend


class TestTantivyTextBackend(TextBackendConformance):
    backend_class = TantivyTextBackend


class TestOxigraphGraphBackend(GraphBackendConformance):
    backend_class = OxigraphGraphBackend


def test_backends_are_registered_under_their_names() -> None:
    """The plugin registers the classes as text backend "tantivy" and graph backend "oxigraph"."""
    host = PluginHost.load(env={"CLEVERAGENTS_DISABLE_PLUGIN_AUTOLOAD": ""})
    assert host.registry.backends.text["tantivy"] is TantivyTextBackend
    assert host.registry.backends.graph["oxigraph"] is OxigraphGraphBackend


def test_listing_plugins_does_not_import_the_engines() -> None:
    """Registrations are lazy: loading the plugin imports neither tantivy nor pyoxigraph."""
    code = (
        "import sys\n"
        "from cleveragents.plugins import PluginHost\n"
        "host = PluginHost.load(env={})\n"
        "assert 'acms' in host.records, list(host.records)\n"
        "print(sorted(m for m in ('tantivy', 'pyoxigraph') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
