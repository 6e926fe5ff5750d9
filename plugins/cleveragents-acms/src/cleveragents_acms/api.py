"""The Python API: one call from a folder and a question to a budgeted context.

::

    from cleveragents_acms.api import assemble

    context = assemble("Where are plugins loaded?", path="~/src/myproject", budget=8000)
    print(context.preamble)
    for fragment in context.fragments:
        print(fragment.provenance.location, fragment.detail_depth, fragment.token_count)
        print(fragment.content)
    for left_out in context.dropped:  # what the budget dropped or downgraded
        print(left_out.uko_node, left_out.reason)

``assemble(question, *, path=None, project=None, budget=8000, model=None,
strategies=(), focus=(), depth=None, breadth=None) -> AssembledContext``:
with ``path`` the folder is indexed first (incrementally: only files that
changed since the last call are analysed again) into ``project``, which
defaults to the folder's name; without it ``project`` must name an indexed
project. ``model`` picks the tokenizer (and, with ``budget=None``, the budget
the model's context window leaves). The result never exceeds ``budget``
tokens, preamble included.

``open_context(home=None) -> ContextService`` gives the service behind it,
for repeated assemblies (it re-assembles only when the budget moved by more
than ``context.budget.refresh-threshold``), ``expand(uri, project=…)``,
``search(query, project=…)`` (the text index), ``sparql(query, project=…, at=None)``
(the graph; ``at``, a datetime: the graph as it stood then),
policies (``service.policies``), tiers (``service.tiers``) and the history
(``service.history``). ``home`` sets ``$CLEVERAGENTS_HOME`` for the process.

Errors are :mod:`cleveragents.errors` exceptions: ``ValidationError`` for an
empty question or a budget <= 0, ``NotFoundError`` for an unknown project,
strategy or a missing index.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cleveragents.models.context import AssembledContext
    from cleveragents_acms.context.service import ContextService

__all__ = ["assemble", "open_context"]

_lock = threading.Lock()
_apps: dict[str, Any] = {}


def _app(home: str | os.PathLike[str] | None = None) -> Any:
    """The CLI's App object (host, configuration, database) for this process, built once."""
    if home is not None:
        os.environ["CLEVERAGENTS_HOME"] = str(Path(home).expanduser())
    key = os.environ.get("CLEVERAGENTS_HOME", "")
    with _lock:
        app = _apps.get(key)
        if app is not None and _home_gone(app):
            app.database.dispose()
            app = None
        if app is None:
            from cleveragents.cli.context import App
            from cleveragents.plugins import PluginHost

            app = _apps[key] = App(host=PluginHost.load())
        return app


def _home_gone(app: Any) -> bool:
    """True when the SQLite database the app opened was deleted since (the home removed
    and perhaps made again): its handle, and the services over it, would serve a file
    that no longer exists, with none of the tables a new one needs."""
    database = app.__dict__.get("database")  # a cached property, not opened yet: None
    path = getattr(database, "path", None)
    return path is not None and not Path(path).exists()


def open_context(home: str | os.PathLike[str] | None = None) -> ContextService:
    """The context service of ``home`` (default ``$CLEVERAGENTS_HOME`` or ``~/.cleveragents``)."""
    app = _app(home)
    with _lock:
        service = getattr(app, "_context_service", None)
        if service is None:
            from cleveragents_acms.context.service import ContextService

            app.host.configure(app.config)
            service = ContextService(app.database, app.registry, app.config)
            app._context_service = service
        return service


def assemble(
    question: str,
    *,
    path: str | os.PathLike[str] | None = None,
    project: str | None = None,
    budget: int | None = 8000,
    model: str | None = None,
    strategies: Sequence[str] = (),
    focus: Sequence[str] = (),
    depth: int | str | None = None,
    breadth: int | None = None,
) -> AssembledContext:
    """A context for ``question`` from the code base at ``path`` (or an indexed ``project``)."""
    from cleveragents.errors import ValidationError
    from cleveragents.models.context import ContextRequest

    fields: dict[str, Any] = {"query": (question or "").strip() or None}
    if focus:
        fields["focus"] = tuple(focus)
    if strategies:
        fields["preferred_strategies"] = tuple(strategies)
    if depth is not None:
        fields["depth"] = depth
    if breadth is not None:
        fields["breadth"] = breadth
    request = ContextRequest(**fields)
    if request.is_empty:
        raise ValidationError("the request is empty: give a question or focus")
    if budget is not None and (isinstance(budget, bool) or budget <= 0):
        raise ValidationError(f"budget must be a positive number of tokens, got {budget!r}")
    service = open_context()
    if path is not None:
        from cleveragents_acms.indexing.runner import index_path

        _, result = index_path(_app(), Path(path).expanduser(), project, show_progress=False)
        project = result.metadata.project_name
    if project is None:
        raise ValidationError("give path= (a folder to index) or project= (an indexed project)")
    return service.assemble(request, project=project, budget=budget, model=model)
