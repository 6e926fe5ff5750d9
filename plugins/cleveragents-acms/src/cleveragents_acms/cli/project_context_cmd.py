"""``cleveragents project context``: a project's context policy, ACMS settings and state.

``set`` persists a view (``--view default|strategize|execute|apply``) and the
project's ACMS settings, including project-level pipeline overrides
(``--pipeline fragment-scorer=my_pkg.scorers:Scorer``); ``show`` prints every
phase's effective view and the effective configuration with where each value
comes from; ``inspect`` the tiers, their metrics and what each role sees;
``simulate`` a dry-run assembly with the project's configuration.
"""

from __future__ import annotations

from typing import Any

import click

from cleveragents.cli.context import App, pass_app
from cleveragents.cli.output import emit_json, emit_record, emit_table, success
from cleveragents_acms.cli._context_common import (
    AssemblyOptions,
    apply_settings,
    assembly_options,
    run_simulation,
    service_for,
)

__all__ = ["project_context"]

_VIEWS = ("default", "strategize", "execute", "apply")


@click.group("context")
def project_context() -> None:
    """A project's context policy (views per phase), ACMS settings and context state."""


def _check_project(app: App, project: str) -> None:
    from cleveragents.storage.repositories import ProjectRepository

    with app.database.session(write=False) as session:
        ProjectRepository(session).get(project)


def _pipeline_overrides(
    app: App, values: tuple[str, ...], current: dict[str, str]
) -> dict[str, str]:
    from cleveragents.errors import ValidationError
    from cleveragents_acms.pipeline.config import SLOT_FIELDS

    overrides = dict(current)
    for value in values:
        slot, sep, component = value.partition("=")
        slot, component = slot.strip(), component.strip()
        if not sep or not slot:
            raise ValidationError(f"--pipeline expects SLOT=COMPONENT, got {value!r}")
        if slot not in SLOT_FIELDS:
            raise ValidationError(
                f"unknown pipeline slot '{slot}' (slots: {', '.join(SLOT_FIELDS)})"
            )
        if not component:
            overrides.pop(slot, None)
            continue
        app.registry.resolve(slot, component)  # unknown names fail here, listing the valid ones
        overrides[slot] = component
    return overrides


@project_context.command("set")
@click.argument("project")
@click.option(
    "--view",
    type=click.Choice(_VIEWS),
    default="default",
    show_default=True,
    help="The phase view the view options apply to.",
)
@click.option("--include-resource", multiple=True, metavar="PATTERN")
@click.option("--exclude-resource", multiple=True, metavar="PATTERN")
@click.option("--include-path", multiple=True, metavar="GLOB")
@click.option("--exclude-path", multiple=True, metavar="GLOB")
@click.option("--max-file-size", type=int, default=None, help="Bytes.")
@click.option("--max-total-size", type=int, default=None, help="Bytes.")
@click.option("--clear-view", is_flag=True, help="Remove the view (it inherits again).")
@click.option("--hot-max-tokens", type=int, default=None)
@click.option("--warm-max-decisions", type=int, default=None)
@click.option("--cold-max-decisions", type=int, default=None)
@click.option(
    "--strategy",
    "strategies",
    multiple=True,
    metavar="S",
    help="Preferred strategy (repeatable; replaces the list).",
)
@click.option("--default-breadth", type=int, default=None)
@click.option("--default-depth", default=None, metavar="NAME|N")
@click.option("--skeleton-ratio", type=float, default=None, help="0.0-1.0.")
@click.option("--temporal-scope", type=click.Choice(("current", "recent", "all")), default=None)
@click.option(
    "--auto-refresh/--no-auto-refresh",
    default=None,
    help="Re-render fragments whose files changed since indexing (else flag them).",
)
@click.option(
    "--pipeline",
    "pipeline",
    multiple=True,
    metavar="SLOT=COMPONENT",
    help="Project-level pipeline override (SLOT= removes it).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the stored policy as JSON.")
@pass_app
def set_policy(
    app: App,
    project: str,
    view: str,
    include_resource: tuple[str, ...],
    exclude_resource: tuple[str, ...],
    include_path: tuple[str, ...],
    exclude_path: tuple[str, ...],
    max_file_size: int | None,
    max_total_size: int | None,
    clear_view: bool,
    hot_max_tokens: int | None,
    warm_max_decisions: int | None,
    cold_max_decisions: int | None,
    strategies: tuple[str, ...],
    default_breadth: int | None,
    default_depth: str | None,
    skeleton_ratio: float | None,
    temporal_scope: str | None,
    auto_refresh: bool | None,
    pipeline: tuple[str, ...],
    as_json: bool,
) -> None:
    """Persist a context view and ACMS settings for PROJECT."""
    from pydantic import ValidationError as PydanticError

    from cleveragents.errors import NotFoundError, ValidationError
    from cleveragents_acms.cli._context_common import parse_depth
    from cleveragents_acms.context.policy import ContextView

    _check_project(app, project)
    service = service_for(app)
    policy = service.policies.get(project)
    view_given = any((include_resource, exclude_resource, include_path, exclude_path)) or (
        max_file_size is not None or max_total_size is not None
    )
    if clear_view and view_given:
        raise ValidationError("--clear-view cannot be combined with view options")
    try:
        if clear_view:
            policy = policy.with_view(view, None)
        elif view_given:
            base = policy.views.get(view, ContextView())
            updated = ContextView(
                include_resources=include_resource or base.include_resources,
                exclude_resources=exclude_resource or base.exclude_resources,
                include_paths=include_path or base.include_paths,
                exclude_paths=exclude_path or base.exclude_paths,
                max_file_size=max_file_size if max_file_size is not None else base.max_file_size,
                max_total_size=(
                    max_total_size if max_total_size is not None else base.max_total_size
                ),
            )
            policy = policy.with_view(view, updated)
        for name in strategies:
            if name not in app.registry.strategies:
                valid = ", ".join(sorted(app.registry.strategies)) or "none installed"
                raise NotFoundError(f"unknown strategy '{name}' (available: {valid})")
        depth = parse_depth(default_depth)
        if isinstance(depth, str):
            service._depth_number(depth, None)
        changes: dict[str, Any] = {
            key: value
            for key, value in (
                ("hot_max_tokens", hot_max_tokens),
                ("warm_max_decisions", warm_max_decisions),
                ("cold_max_decisions", cold_max_decisions),
                ("default_breadth", default_breadth),
                ("default_depth", depth),
                ("skeleton_ratio", skeleton_ratio),
                ("temporal_scope", temporal_scope),
                ("auto_refresh", auto_refresh),
            )
            if value is not None
        }
        if strategies:
            changes["strategies"] = tuple(dict.fromkeys(strategies))
        if pipeline:
            changes["pipeline"] = _pipeline_overrides(app, pipeline, policy.settings.pipeline)
        if changes:
            policy = policy.with_settings(**changes)
    except PydanticError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error.get("loc", ())) or "value"
        option = "--" + where.rsplit(".", 1)[-1].replace("_", "-")
        raise ValidationError(f"{option}: {error.get('msg', 'invalid value')}") from None
    service.policies.save(policy)
    if as_json:
        emit_json(policy.model_dump(mode="json"))
    else:
        success(
            f"Saved the context policy of project {project}"
            + (f" (view {view})" if view_given or clear_view else "")
        )


def _effective_pipeline(app: App, policy: Any) -> list[dict[str, str]]:
    from cleveragents_acms.pipeline.config import PipelineConfigResolver

    config = PipelineConfigResolver(app.registry, app.config).resolve(
        project=policy.settings.pipeline or None
    )
    return [
        {
            "slot": slot,
            "component": type(config.component(slot)).__name__,
            "chosen by": spec,
            "scope": scope,
        }
        for slot, (scope, spec) in config.sources.items()
    ]


def _settings_payload(app: App, service: Any, policy: Any) -> dict[str, Any]:
    settings = policy.settings
    budget = service.tier_budget(policy.project_name)
    enabled = list(app.config.get("context.strategies.enabled") or [])
    return {
        "hot_max_tokens": budget.hot_max_tokens,
        "warm_max_decisions": budget.warm_max_decisions,
        "cold_max_decisions": budget.cold_max_decisions,
        "strategies_preferred": list(settings.strategies),
        "strategies_enabled": enabled,
        "strategies_installed": sorted(app.registry.strategies),
        "default_breadth": settings.default_breadth if settings.default_breadth is not None else 2,
        "default_depth": settings.default_depth if settings.default_depth is not None else 3,
        "skeleton_ratio": settings.skeleton_ratio
        if settings.skeleton_ratio is not None
        else app.config.get("context.budget.skeleton-ratio"),
        "temporal_scope": settings.temporal_scope or "current",
        "auto_refresh": settings.auto_refresh,
        "refresh_threshold": app.config.get("context.budget.refresh-threshold"),
        "pipeline_overrides": dict(settings.pipeline),
    }


@project_context.command("show")
@click.argument("project")
@click.option("--view", type=click.Choice(_VIEWS), default=None, help="Only this phase's view.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def show_policy(app: App, project: str, view: str | None, as_json: bool) -> None:
    """The views of PROJECT (set or inherited) and its effective ACMS configuration."""
    from cleveragents_acms.context.policy import views_payload

    _check_project(app, project)
    service = service_for(app)
    policy = service.policies.get(project)
    views = views_payload(policy)
    if view is not None:
        views = {view: views[view]}
    pipeline = _effective_pipeline(app, policy)
    settings = _settings_payload(app, service, policy)
    if as_json:
        emit_json({"project": project, "views": views, "settings": settings, "pipeline": pipeline})
        return
    click.echo(f"Context policy of project {project}")
    click.echo()
    rows = []
    for phase, data in views.items():
        source = data["inherits_from"]
        rows.append(
            {
                "view": phase,
                "from": "set" if data["set"] else (f"inherits {source}" if source else "(all)"),
                "resources": _filters(data["include_resources"], data["exclude_resources"]),
                "paths": _filters(data["include_paths"], data["exclude_paths"]),
                "max file": data["max_file_size"],
                "max total": data["max_total_size"],
            }
        )
    emit_table(rows, ["view", "from", "resources", "paths", "max file", "max total"])
    click.echo()
    emit_record(settings)
    click.echo()
    emit_table(pipeline, ["slot", "component", "chosen by", "scope"])


def _filters(include: list[str], exclude: list[str]) -> str:
    parts = [f"+{p}" for p in include] + [f"-{p}" for p in exclude]
    return " ".join(parts) or "all"


@project_context.command("inspect")
@click.argument("project")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def inspect_state(app: App, project: str, as_json: bool) -> None:
    """Tier metrics, fragment distribution and actor visibility of PROJECT."""
    from cleveragents_acms.context.tiers import ROLE_TIERS
    from cleveragents_acms.indexing.runner import service_for as indexing_for

    _check_project(app, project)
    service = service_for(app)
    tiers = service.tiers
    tiers.apply_retention()
    metrics = tiers.get_metrics(project)
    budget = service.tier_budget(project)
    entries = tiers.entries([project])
    visibility: dict[str, dict[str, Any]] = {}
    for role, visible in ROLE_TIERS.items():
        seen = [e for e in entries if e.tier in visible]
        visibility[role] = {
            "tiers": list(visible),
            "entries": len(seen),
            "tokens": sum(e.token_count for e in seen),
        }
    distribution: dict[str, dict[str, int]] = {}
    for entry in entries:
        key = entry.provenance.path or "(notes)"
        bucket = distribution.setdefault(key, {"hot": 0, "warm": 0, "cold": 0})
        bucket[entry.tier] += 1
    indexes = [m.to_dict() for m in indexing_for(app).list_indexes(project)]
    last = service.history.last(project)
    payload = {
        "project": project,
        "metrics": metrics.model_dump(),
        "capacity": budget.model_dump(),
        "visibility": visibility,
        "distribution": distribution,
        "indexes": indexes,
        "last_assembly": None
        if last is None
        else {
            "assembly_id": last.assembly_id,
            "created_at": last.created_at,
            "query": last.query,
            "tokens": last.totals.get("tokens"),
            "fragments": len(last.fragments),
            "dropped": len(last.dropped),
        },
    }
    if as_json:
        emit_json(payload)
        return
    click.echo(f"Context state of project {project}")
    click.echo()
    emit_table(
        [
            {
                "tier": tier,
                "entries": metrics.populations[tier],
                "tokens": metrics.tokens[tier],
                "capacity": _capacity(budget, tier),
                "hits": metrics.hits[tier],
            }
            for tier in ("hot", "warm", "cold")
        ],
        ["tier", "entries", "tokens", "capacity", "hits"],
    )
    click.echo(
        f"misses {metrics.misses}, promotions {metrics.promotions}, demotions "
        f"{metrics.demotions}, evictions {metrics.evictions} (this process)"
    )
    click.echo()
    emit_table(
        [
            {
                "role": role,
                "sees": ", ".join(v["tiers"]),
                "entries": v["entries"],
                "tokens": v["tokens"],
            }
            for role, v in visibility.items()
        ],
        ["role", "sees", "entries", "tokens"],
    )
    if distribution:
        click.echo()
        emit_table(
            [{"source": k, **v} for k, v in sorted(distribution.items())],
            ["source", "hot", "warm", "cold"],
        )
    click.echo()
    emit_table(
        [
            {
                "index": m["root_path"],
                "status": m["status"],
                "files": m["file_count"],
                "nodes": m["node_count"],
            }
            for m in indexes
        ],
        ["index", "status", "files", "nodes"],
        empty="No index: run `cleveragents index PATH --project " + project + "`.",
    )
    if last is not None:
        click.echo()
        click.echo(
            f"Last assembly {last.assembly_id} ({last.created_at}): "
            f"{len(last.fragments)} fragments, {last.totals.get('tokens')} tokens, "
            f"{len(last.dropped)} dropped; see `cleveragents context inspect --project "
            f"{project}`"
        )


def _capacity(budget: Any, tier: str) -> str:
    if tier == "hot":
        return f"{budget.hot_max_tokens} tokens"
    count = budget.warm_max_decisions if tier == "warm" else budget.cold_max_decisions
    return f"{count} entries"


@project_context.command("simulate")
@click.argument("project")
@click.argument("query", required=False, default="")
@assembly_options
@pass_app
def simulate(app: App, project: str, query: str, options: AssemblyOptions) -> None:
    """Dry-run assembly for PROJECT with its ACMS configuration (QUERY or --focus)."""
    options.request(query)
    apply_settings(app, options.settings)
    _check_project(app, project)
    run_simulation(app, project, query, options)
