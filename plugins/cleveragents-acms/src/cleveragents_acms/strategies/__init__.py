"""The built-in context strategies (spec 000, "Built-in Strategy Catalogue"), one module each.

=========================  ========================  =======  =====================
name                       class                     quality  backends
=========================  ========================  =======  =====================
simple-keyword             SimpleKeywordStrategy     0.3      text
semantic-embedding         SemanticEmbeddingStrategy 0.6      vector (+ embedder)
breadth-depth-navigator    BreadthDepthNavigator…    0.85     graph (text seeds)
arce                       ArceStrategy              0.95     text + graph (+ vector)
temporal-archaeology       TemporalArchaeology…      0.5      graph + history
plan-decision-context      PlanDecisionContext…      0.7      plan context
=========================  ========================  =======  =====================

They are registered by name through ``register_context_strategies`` (see
``cleveragents_acms.plugin``) as lazy ``"module:Class"`` references; nothing
here is imported until a strategy is used. The selector's fallback path
(``arce -> breadth-depth-navigator -> semantic-embedding -> simple-keyword``)
finds them by these names.
"""

from __future__ import annotations
