"""ContextService on a real indexed code base: budgets, provenance, freshness, errors, plans."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from cleveragents.errors import NotFoundError, ValidationError
from cleveragents.models.context import AssembledContext, ContextRequest
from cleveragents.models.plans import Plan
from cleveragents.registry import import_reference
from cleveragents_acms.context.policy import ContextView
from cleveragents_acms.pipeline.tokenizers import get_tokenizer

QUESTION = "How does the plugin host keep a failing plugin from taking the host down?"
CL100K = get_tokenizer("cl100k")


def request(query: str = QUESTION, **fields: Any) -> ContextRequest:
    return ContextRequest(query=query, **fields)


def cost(context: AssembledContext, tokenizer: Any = CL100K) -> int:
    """What the context costs by the real tokenizer, preamble included."""
    return sum(tokenizer.count(f.content) for f in context.fragments) + tokenizer.count(
        context.preamble or ""
    )


@pytest.mark.parametrize("budget", [1, 8, 40, 150, 600, 2500, 8000, 30000])
def test_never_over_budget(ctx_service: Any, budget: int) -> None:
    """At every budget, tiny ones included, the real token count stays within it."""
    context = ctx_service.assemble(request(), project="demo", budget=budget)
    assert cost(context) <= budget
    assert context.total_tokens + context.preamble_tokens <= budget
    assert context.is_within_budget
    if budget >= 600:
        assert context.fragments


def test_fragments_match_the_files_they_cite(ctx_service: Any, ctx_corpus: Path) -> None:
    """``path:start-end`` provenance points at exactly the delivered lines (full source)."""
    context = ctx_service.assemble(request(), project="demo", budget=6000)
    full = [f for f in context.fragments if f.detail_depth == 9 and f.provenance.start_line]
    assert full
    for fragment in full:
        provenance = fragment.provenance
        lines = (ctx_corpus / provenance.path).read_text().splitlines()
        cited = "\n".join(lines[provenance.start_line - 1 : provenance.end_line])
        assert fragment.content.strip() in cited or cited.strip() == fragment.content.strip()
        assert (
            provenance.location
            == f"{provenance.path}:{provenance.start_line}-{provenance.end_line}"
        )
        assert provenance.source_hash and provenance.indexed_at is not None
        assert fragment.token_count == CL100K.count(fragment.content)


def test_fragments_carry_what_the_stages_read(ctx_service: Any) -> None:
    """uko_type, is_current, valid_from and parent metadata; resolved depends_on URIs."""
    source_fragments = ctx_service.assemble(request(), project="demo", budget=8000).fragments
    assert all(f.metadata["is_current"] == "true" for f in source_fragments)
    assert all(f.metadata["uko_type"].startswith("uko") for f in source_fragments)
    assert all("valid_from" in f.metadata for f in source_fragments)
    assert any(f.metadata.get("parent") for f in source_fragments)
    depends = [u for f in source_fragments for u in f.metadata.get("depends_on", "").split()]
    assert depends and all(u.startswith("https://cleveragents.ai/r/") for u in depends)


def test_dropped_fragments_are_listed_and_expandable(ctx_service: Any) -> None:
    """What the budget left out is listed (URI, path, depth, why) and can be rendered."""
    context = ctx_service.assemble(request(), project="demo", budget=500)
    assert context.dropped
    reasons = {d.reason for d in context.dropped}
    assert reasons & {"over budget at every depth", "re-rendered shallower to fit"}
    left_out = next(d for d in context.dropped if d.delivered_depth is None)
    assert left_out.path and left_out.detail_depth == 9
    expanded = ctx_service.expand(left_out.uko_node, project="demo")
    assert expanded.uko_node == left_out.uko_node
    assert expanded.provenance.path == left_out.path
    assert expanded.detail_depth == 9 and expanded.content.strip()
    signature = ctx_service.expand(left_out.uko_node, project="demo", depth="SIGNATURES")
    assert signature.detail_depth <= 4
    with pytest.raises(NotFoundError):
        ctx_service.expand(left_out.uko_node + "-missing", project="demo")


@pytest.mark.parametrize("strategy", ["arce", "simple-keyword", "breadth-depth-navigator"])
def test_what_a_real_strategy_left_out_is_listed(ctx_service: Any, strategy: str) -> None:
    """Real strategies fill their share themselves (the packer has nothing to drop): what
    they wanted but could not fit is listed, is not in the context at that depth, and
    expands."""
    context = ctx_service.assemble(
        request(preferred_strategies=(strategy,)), project="demo", budget=600
    )
    assert context.fragments and context.dropped
    delivered = {f.uko_node: f.detail_depth for f in context.fragments}
    for left in context.dropped:
        assert left.reason.startswith("did not fit ") and "'s share (" in left.reason
        assert delivered.get(left.uko_node, -1) < left.detail_depth
        assert left.delivered_depth == delivered.get(left.uko_node)
    assert any(strategy in d.reason for d in context.dropped)
    first = context.dropped[0]
    expanded = ctx_service.expand(first.uko_node, project="demo", depth=first.detail_depth)
    assert expanded.uko_node == first.uko_node and expanded.provenance.path == first.path


def test_history_records_each_assembly(ctx_service: Any) -> None:
    """Each assembly is recorded with its stages, strategies, fragments and dropped list."""
    outcome = ctx_service.run(request(), project="demo", budget=900)
    last = ctx_service.history.last("demo")
    assert last is not None and last.assembly_id == outcome.report.assembly_id
    assert last.stages[0].slot == "strategy-selector" and len(last.stages) == 10
    assert last.strategies[0].name == "probe-keyword" and last.strategies[0].tokens > 0
    assert len(last.fragments) == len(outcome.context.fragments)
    assert len(last.dropped) == len(outcome.context.dropped)
    dry = ctx_service.run(request(), project="demo", budget=900, dry_run=True, reuse=False)
    assert dry.report.dry_run
    assert ctx_service.history.last("demo").assembly_id == outcome.report.assembly_id


def test_bad_input(ctx_service: Any) -> None:
    """Empty request, budget <= 0, unknown strategy or project, no index: clear errors; a
    focus item that names nothing is noted."""
    with pytest.raises(ValidationError, match="give a question or --focus"):
        ctx_service.assemble(ContextRequest(query="  "), project="demo")
    for budget in (0, -5):
        with pytest.raises(ValidationError, match="budget"):
            ctx_service.assemble(request(), project="demo", budget=budget)
    with pytest.raises(
        NotFoundError, match=r"unknown strategy 'nope' \(available: .*probe-keyword"
    ):
        ctx_service.assemble(request(preferred_strategies=("nope",)), project="demo")
    with pytest.raises(NotFoundError, match="project 'ghost' not found"):
        ctx_service.assemble(request(), project="ghost")
    from cleveragents.storage.repositories import ProjectRepository

    with ctx_service.database.session() as session:
        ProjectRepository(session).create("empty")
    with pytest.raises(NotFoundError, match=r"run `cleveragents index PATH --project empty`"):
        ctx_service.assemble(request(), project="empty")
    with pytest.raises(ValidationError, match="unknown detail level"):
        ctx_service.assemble(request(depth="NO_SUCH_LEVEL"), project="demo")
    focused = ctx_service.assemble(
        request(focus=("PluginHost", "cleveragents/registry.py", "no_such_symbol", "nope/x.py")),
        project="demo",
        budget=2000,
    )
    assert focused.fragments
    missing = [n for n in focused.notes if n.startswith("focus '")]
    assert missing == [
        f"focus '{item}' matches no node, file or name in project 'demo'"
        for item in ("no_such_symbol", "nope/x.py")
    ]


def test_a_raising_custom_stage_is_replaced_and_reported(ctx_service: Any) -> None:
    """A project-level scorer that raises is replaced by the default; notes and report say so."""
    policy = ctx_service.policies.get("demo").with_settings(pipeline={"fragment-scorer": "raising"})
    ctx_service.policies.save(policy)
    outcome = ctx_service.run(request(), project="demo", budget=3000)
    assert outcome.context.fragments
    assert any(
        "fragment-scorer RaisingScorer raised RuntimeError" in n for n in outcome.context.notes
    )
    assert "Warning: fragment-scorer RaisingScorer" in (outcome.context.preamble or "")
    stage = next(s for s in outcome.report.stages if s.slot == "fragment-scorer")
    assert (stage.component, stage.scope, stage.replaced) == ("RaisingScorer", "project", True)
    assert cost(outcome.context) <= 3000


def test_a_projects_preferred_strategies_run_as_if_named(ctx_service: Any) -> None:
    """`project context set --strategy S`: a request that names none runs the project's
    strategies, never left standing by on the fallback path; a request's own names win."""
    policy = ctx_service.policies.get("demo")
    ctx_service.policies.save(
        policy.with_settings(strategies=("simple-keyword", "breadth-depth-navigator"))
    )
    try:
        context = ctx_service.assemble(request(), project="demo", budget=3000)
        assert set(context.strategies_used) == {"simple-keyword", "breadth-depth-navigator"}
        named = ctx_service.assemble(
            request(preferred_strategies=("arce",)), project="demo", budget=3000
        )
        assert named.strategies_used == ("arce",)
    finally:
        ctx_service.policies.save(policy)


def test_policy_views_scope_the_assembly(ctx_service: Any) -> None:
    """Path exclusions remove files; a phase inherits the nearest view set above it."""
    base = ctx_service.assemble(request(), project="demo", budget=8000)
    assert any(f.provenance.path.startswith("cleveragents/testing/") for f in base.fragments)
    policy = ctx_service.policies.get("demo").with_view(
        "execute", ContextView(exclude_paths=("cleveragents/testing/",))
    )
    ctx_service.policies.save(policy)
    for phase in ("execute", "apply"):  # apply inherits execute's view
        context = ctx_service.assemble(request(), project="demo", budget=8000, phase=phase)
        assert context.fragments
        assert not any(
            f.provenance.path.startswith("cleveragents/testing/") for f in context.fragments
        )
    unchanged = ctx_service.assemble(request(), project="demo", budget=8000, phase="strategize")
    assert any(f.provenance.path.startswith("cleveragents/testing/") for f in unchanged.fragments)
    only = ContextView(include_paths=("cleveragents/plugins.py",), exclude_paths=("*.py",))
    ctx_service.policies.save(policy.with_view("default", only))
    empty = ctx_service.assemble(request(), project="demo", budget=8000)
    assert empty.fragments == ()  # exclusions beat inclusions


def test_max_total_size_is_enforced(ctx_service: Any) -> None:
    """The view's max_total_size (bytes) caps the delivered text; the rest is listed as dropped."""
    ctx_service.policies.save(
        ctx_service.policies.get("demo").with_view("default", ContextView(max_total_size=1500))
    )
    context = ctx_service.assemble(request(), project="demo", budget=8000)
    assert sum(len(f.content.encode()) for f in context.fragments) <= 1500
    assert any("max_total_size" in d.reason for d in context.dropped)
    assert cost(context) <= 8000


def test_budget_from_the_model(ctx_service: Any) -> None:
    """Without a budget, the model's window minus the response reserve and tool definitions."""
    outcome = ctx_service.run(request(), project="demo", model="gpt-4o")
    breakdown = outcome.budget
    assert breakdown.source == "model" and breakdown.context_window == 128_000
    assert breakdown.response_reserve == 4096 and breakdown.tool_definitions > 0
    assert breakdown.budget == 128_000 - 4096 - breakdown.tool_definitions
    assert outcome.report.tokenizer == "o200k"
    assert cost(outcome.context, get_tokenizer("o200k")) <= breakdown.budget
    unknown = ctx_service.run(request(), project="demo", model="my-local-model")
    assert unknown.budget.budget == 8000
    assert any("unknown" in n for n in unknown.context.notes)


def test_a_tokenizer_plugin_counts_for_the_models_it_claims(ctx_service: Any) -> None:
    """A registered tokenizer's ``models`` prefixes pick it per model; the longest claim wins;
    a model nobody claims, or whose tokenizer fails to load, is counted with cl100k and noted."""
    openai = ctx_service.run(request(), project="demo", budget=2000, model="openai/gpt-4o")
    assert openai.report.tokenizer == "o200k"
    words = import_reference("context_probe_strategy:WordTokenizer")
    assert words.loaded == 0, "choosing by model loads no other tokenizer"

    claimed = ctx_service.run(request(), project="demo", budget=300, model="probe-large")
    assert claimed.report.tokenizer == "words"
    delivered = claimed.context
    assert delivered.fragments
    assert (
        sum(len(f.content.split()) for f in delivered.fragments)
        + len((delivered.preamble or "").split())
        <= 300
    )
    assert CL100K.count("".join(f.content for f in delivered.fragments)) > 300  # words, not BPE
    assert not any("tokenizer" in n for n in delivered.notes)
    assert words.loaded == 1

    for model, why in [
        ("mystery-7b", "no installed tokenizer counts tokens as model 'mystery-7b' does"),
        ("broken-1", "tokenizer broken-words for model 'broken-1' could not be loaded"),
    ]:
        outcome = ctx_service.run(request(), project="demo", budget=2000, model=model)
        assert outcome.report.tokenizer == "cl100k"
        assert any(why in n and "counted with cl100k instead" in n for n in outcome.context.notes)
        assert cost(outcome.context) <= 2000


def test_reassembly_only_past_the_refresh_threshold(ctx_service: Any) -> None:
    """A budget within 30% reuses the last assembly (if it fits); beyond that it re-assembles."""
    first = ctx_service.run(request(), project="demo", budget=4000)
    close = ctx_service.run(request(), project="demo", budget=4600)
    assert close.report.cached and close.context.fragments == first.context.fragments
    assert close.context.budget.available_tokens == 4600
    used = first.context.total_tokens + first.context.preamble_tokens
    tighter = ctx_service.run(request(), project="demo", budget=used - 1)  # within 30%, no fit
    assert not tighter.report.cached and cost(tighter.context) < used
    far = ctx_service.run(request(), project="demo", budget=1500)
    assert not far.report.cached
    assert cost(far.context) <= 1500
    assert ctx_service.adaptive.reuses == 1


def test_child_plan_inherits_a_skeleton(ctx_service: Any) -> None:
    """A child plan gets its parent's context as a depth 0-1 skeleton within its budget."""
    parent = Plan(title="parent", project_names=("demo",))
    ctx_service.assemble(request(), project="demo", budget=4000, plan=parent)
    child = Plan(title="child", project_names=("demo",), parent_plan_id=parent.plan_id)
    context = ctx_service.assemble(
        request("registry resolve component by name"), project="demo", budget=3000, plan=child
    )
    skeleton = [f for f in context.fragments if f.metadata.get("skeleton") == "true"]
    assert skeleton and all(f.detail_depth <= 1 for f in skeleton)
    assert sum(f.token_count for f in skeleton) <= int(3000 * 0.15)
    assert cost(context) <= 3000


def _small_repo(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "billing.py").write_text(
        '"""Billing."""\n\n\ndef compute_invoice_total(items):\n'
        '    """Sum the invoice items."""\n    return sum(items)\n\n\n'
        "def refund_invoice(invoice):\n    return -invoice\n"
    )
    return root


def _index(service: Any, root: Path, project: str) -> str:
    """Register ``root`` as a resource of a new ``project``, index it; its resource ULID."""
    from cleveragents.models.resources import Resource
    from cleveragents.storage.repositories import ProjectRepository, ResourceRepository
    from cleveragents_acms.indexing.service import RepoIndexingService

    resource = Resource(name=project, resource_type_name="filesystem/directory", location=str(root))
    with service.database.session() as session:
        ProjectRepository(session).create(project)
        ResourceRepository(session).add(resource)
        ResourceRepository(session).link_to_project(project, resource.resource_id)
    indexer = RepoIndexingService(service.database, service.registry, service.config, workers=1)
    indexer.index_resource(resource.resource_id, root, project=project)
    return resource.resource_id


def test_changed_files_are_rerendered_or_flagged(ctx_service: Any, tmp_path: Path) -> None:
    """Edited after indexing: the current text is delivered, or the fragment is flagged stale."""
    root = _small_repo(tmp_path / "billing")
    _index(ctx_service, root, "billing")
    target = root / "pkg" / "billing.py"
    target.write_text(
        target.read_text().replace("return sum(items)", "return sum(items) * 2  # v2")
    )
    context = ctx_service.assemble(request("compute invoice total"), project="billing", budget=2000)
    # the function alone, or inside its whole file
    fragment = next(f for f in context.fragments if "def compute_invoice_total" in f.content)
    assert "* 2  # v2" in fragment.content and fragment.metadata.get("refreshed") == "true"
    assert any("re-rendered from disk" in n for n in context.notes)

    ctx_service.policies.save(ctx_service.policies.get("billing").with_settings(auto_refresh=False))
    flagged = ctx_service.assemble(request("compute invoice total"), project="billing", budget=2000)
    stale = next(f for f in flagged.fragments if "def compute_invoice_total" in f.content)
    assert stale.metadata.get("stale") == "true" and "* 2" not in stale.content
    assert any("stale" in n for n in flagged.notes)

    shutil.rmtree(root / "pkg")
    gone = ctx_service.assemble(request("compute invoice total"), project="billing", budget=2000)
    assert gone.fragments and all(f.metadata.get("stale") == "true" for f in gone.fragments)
    assert any("no longer exists" in n for n in gone.notes)


def test_an_earlier_version_expands_by_its_revision_iri(ctx_service: Any, tmp_path: Path) -> None:
    """``<uri>@<validFrom>`` (as temporal fragments and the graph name old versions, with
    either way of writing UTC) renders that version; the current URI the current text."""
    from cleveragents_acms.indexing.service import RepoIndexingService

    root = _small_repo(tmp_path / "billing")
    resource_id = _index(ctx_service, root, "billing")
    target = root / "pkg" / "billing.py"
    target.write_text(target.read_text().replace("return sum(items)", "return sum(items) + 1"))
    indexer = RepoIndexingService(
        ctx_service.database, ctx_service.registry, ctx_service.config, workers=1
    )
    indexer.index_resource(resource_id, root, project="billing")
    uri = f"https://cleveragents.ai/r/{resource_id}/pkg/billing.py#compute_invoice_total"
    current = ctx_service.expand(uri, project="billing")
    assert "sum(items) + 1" in current.content and current.metadata["is_current"] == "true"
    stamp = current.metadata["valid_from"]
    assert stamp.endswith("+00:00")
    old = [v for v in _versions(ctx_service, uri) if v != stamp]
    assert len(old) == 1
    for written in (old[0], old[0].replace("+00:00", "Z")):
        earlier = ctx_service.expand(f"{uri}@{written}", project="billing")
        assert earlier.uko_node == f"{uri}@{written}"
        assert "return sum(items)\n" in earlier.content + "\n" and "+ 1" not in earlier.content
        assert earlier.metadata["is_current"] == "false" and earlier.metadata["valid_until"]
    with pytest.raises(NotFoundError):
        ctx_service.expand(f"{uri}@2001-01-01T00:00:00Z", project="billing")


def _versions(service: Any, uri: str) -> list[str]:
    """The ``valid_from`` of every stored version of ``uri``."""
    from cleveragents_acms.indexing.project_index import ProjectIndex

    index = ProjectIndex.open("billing", service.registry, service.config, create=False)
    try:
        return [v.valid_from for v in index.nodes.history(uri)]
    finally:
        index.close()


def test_plan_decisions_reach_the_strategies(ctx_service: Any) -> None:
    """Decisions given with a plan are published to the plan-decision-context strategy."""
    from cleveragents.models.plans import Decision

    if "plan-decision-context" not in ctx_service.registry.strategies:
        pytest.skip("the plan-decision-context strategy is not installed")
    plan = Plan(title="hardening", project_names=("demo",))
    decision = Decision(
        plan_id=plan.plan_id,
        decision_type="design",
        summary="A failing plugin is recorded and skipped; the host keeps running",
        rationale="one bad plugin must never take the host down",
    )
    context = ctx_service.assemble(
        request(preferred_strategies=("plan-decision-context",)),
        project="demo",
        budget=3000,
        plan=plan,
        decisions=[decision],
    )
    assert f"urn:cleveragents:decision:{decision.decision_id}" in {
        f.uko_node for f in context.fragments
    }
    assert cost(context) <= 3000


def test_a_child_plan_sees_its_parents_decisions_without_naming_the_strategy(
    ctx_service: Any,
) -> None:
    """Assemblies for a plan offer plan-decision-context; a child reads its ancestors' records."""
    from cleveragents.models.plans import Decision

    parent = Plan(title="hardening", project_names=("demo",))
    decision = Decision(
        plan_id=parent.plan_id,
        decision_type="design",
        summary="A failing plugin is recorded and skipped; the host keeps running",
        rationale="one bad plugin must never take the host down",
    )
    uri = f"urn:cleveragents:decision:{decision.decision_id}"
    first = ctx_service.run(
        request(), project="demo", budget=4000, plan=parent, decisions=[decision]
    )
    assert "plan-decision-context" in first.context.strategies_used
    assert uri in {f.uko_node for f in first.context.fragments}

    child = Plan(title="child", project_names=("demo",), parent_plan_id=parent.plan_id)
    inherited = ctx_service.run(request(), project="demo", budget=4000, plan=child)
    assert "plan-decision-context" in inherited.context.strategies_used
    fragment = next(f for f in inherited.context.fragments if f.uko_node == uri)
    assert "never take the host down" in fragment.content
    assert cost(inherited.context) <= 4000

    plain = ctx_service.assemble(request(), project="demo", budget=4000)
    assert "plan-decision-context" not in plain.strategies_used


def test_a_vector_index_stays_open_between_assemblies_until_it_is_rewritten(
    ctx_service: Any, tmp_path: Path
) -> None:
    """The service lends the same vector backend to each assembly; a re-index replaces it."""
    from cleveragents_acms.indexing.service import RepoIndexingService

    if not len(ctx_service.registry.backends.vector):
        pytest.skip("no vector plugin installed")
    root = _small_repo(tmp_path / "repo")
    resource_id = _index(ctx_service, root, "vec")

    def ask(query: str) -> AssembledContext:
        return ctx_service.run(
            request(query, preferred_strategies=("semantic-embedding",)),
            project="vec",
            budget=2000,
            reuse=False,
        ).context

    assert any("compute_invoice_total" in f.content for f in ask("invoice total").fragments)
    held = ctx_service._vectors._held["vec"][1]
    ask("refund an invoice")
    assert ctx_service._vectors._held["vec"][1] is held
    billing = root / "pkg" / "billing.py"
    billing.write_text(
        billing.read_text() + "\n\ndef schedule_dunning_letters(overdue):\n    return overdue\n"
    )
    indexer = RepoIndexingService(
        ctx_service.database, ctx_service.registry, ctx_service.config, workers=1
    )
    indexer.refresh_index(resource_id, root)
    fresh = ask("schedule dunning letters")
    assert ctx_service._vectors._held["vec"][1] is not held
    assert any("schedule_dunning_letters" in f.content for f in fresh.fragments)
    ctx_service.close()
    assert not ctx_service._vectors._held


def test_open_vector_indexes_hold_a_few_projects_and_reopen_changed_ones(tmp_path: Path) -> None:
    """Unchanged files: the same handle; changed files or an evicted project: a new one."""
    from cleveragents_acms.context.scope import OpenVectorIndexes

    held = OpenVectorIndexes(max_open=2)
    folders = {name: tmp_path / name for name in ("a", "b", "c")}
    for folder in folders.values():
        folder.mkdir()
        (folder / "manifest.json").write_text("{}")
    opened: list[str] = []

    def opener(name: str) -> Any:
        def make() -> object:
            opened.append(name)
            return object()

        return make

    first = held.open("a", folders["a"], opener("a"))
    assert held.open("a", folders["a"], opener("a")) is first
    (folders["a"] / "manifest.json").write_text('{"version": 2}')
    assert held.open("a", folders["a"], opener("a")) is not first
    held.open("b", folders["b"], opener("b"))
    held.open("c", folders["c"], opener("c"))  # evicts "a", the least recently used
    held.open("a", folders["a"], opener("a"))
    assert opened == ["a", "a", "b", "c", "a"]
