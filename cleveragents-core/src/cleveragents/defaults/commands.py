"""The core command groups, added through ``register_commands`` like any plugin's."""

from __future__ import annotations

import click

from cleveragents import hookimpl


@hookimpl
def register_commands(cli: click.Group) -> None:
    from cleveragents.cli.config_cmd import config
    from cleveragents.cli.diagnostics_cmd import diagnostics
    from cleveragents.cli.init_cmd import init
    from cleveragents.cli.plugins_cmd import plugins
    from cleveragents.cli.project_cmd import project
    from cleveragents.cli.resource_cmd import resource

    for command in (init, config, plugins, project, resource, diagnostics):
        cli.add_command(command)
