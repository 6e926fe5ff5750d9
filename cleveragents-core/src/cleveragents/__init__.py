"""CleverAgents kernel: the plugin host every capability plugs into.

Plugin authors need three names from here: :data:`hookimpl` to mark hook
implementations, the Protocols in :mod:`cleveragents.protocols`, and the
domain models in :mod:`cleveragents.models`. See ``docs/plugins.md``.
"""

from __future__ import annotations

import pluggy

__all__ = ["PROJECT_NAME", "__version__", "hookimpl", "hookspec"]

__version__ = "0.1.0"

#: pluggy project name and entry-point group of every plugin.
PROJECT_NAME = "cleveragents"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
