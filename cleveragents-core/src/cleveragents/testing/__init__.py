"""The testing kit for plugin authors: fixtures, conformance suites and test doubles.

Install ``cleveragents-core`` (and ``pytest``) in your plugin's test
environment; nothing else is needed. The kit has four parts:

:mod:`cleveragents.testing.fixtures`
    A pytest plugin, loaded automatically through the ``pytest11`` entry point
    ``cleveragents``. Fixtures: ``cleveragents_home`` (a temporary
    ``$CLEVERAGENTS_HOME``), ``plugin_host`` (a host loaded from the installed
    entry points), ``register_plugin`` (add a plugin object for one test) and
    ``run_cli`` (run the installed ``cleveragents`` command in a subprocess).

:mod:`cleveragents.testing.conformance`
    One base test class per slot (``SandboxStrategyConformance``,
    ``TextBackendConformance``, ``BudgetPackerConformance`` …). Subclass it in
    your tests and say how to build your component; the suite checks the
    slot's Protocol and the contract behind it::

        class TestMyPacker(BudgetPackerConformance):
            def make_component(self):
                return MyPacker()

:mod:`cleveragents.testing.factories`
    Builders for fragments, requests and assembled contexts, and
    :class:`~cleveragents.testing.factories.StubStrategy`.

:mod:`cleveragents.testing.memory`
    In-memory text, vector and graph backends that keep every backend
    contract, for testing strategies without Tantivy, FAISS or rdflib.

:mod:`cleveragents.testing.postgres`
    A throw-away PostgreSQL server from the locally installed binaries, for
    tests of the server-mode database.

The guide is ``docs/testing-kit.md``.
"""
