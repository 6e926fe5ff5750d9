"""From a question to an AssembledContext: the service, node source, policies, tiers and tools.

* :mod:`.service`: :class:`ContextService` (scope, backends, pipeline, history);
* :mod:`.nodes`: :class:`NodeStoreSource` / :class:`NodeRenderer` (fragments with
  provenance, freshness against the files on disk);
* :mod:`.policy`: :class:`ProjectContextPolicy`, :class:`ContextView`,
  :class:`ContextBudgetEnforcer`;
* :mod:`.tiers`: :class:`ContextTierService` (hot, warm, cold);
* :mod:`.budget`: budgets per model and :class:`AdaptiveAssembler`;
* :mod:`.history`: the assembly reports ``context inspect`` shows;
* :mod:`.tools`: the ``builtin/context`` tools.

Import from the submodules; this package imports nothing on its own so that
loading the plugin stays cheap.
"""
