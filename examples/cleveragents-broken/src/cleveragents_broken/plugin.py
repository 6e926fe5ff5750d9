"""Fails at import, as a plugin with a missing dependency or a bug would.

CleverAgents records the failure (``cleveragents plugins list`` shows it as
``error``), skips the plugin and keeps every other plugin working; with
``--strict-plugins`` the failure is fatal instead.
"""

raise RuntimeError("this plugin is broken on purpose")
