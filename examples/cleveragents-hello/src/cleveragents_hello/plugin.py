"""The module named by the ``cleveragents`` entry point: only hook implementations.

The host imports this module on every ``cleveragents`` run, so it stays cheap:
the strategy is registered as a ``"module:Class"`` string and imported only
when the context system first asks for it, and the command imports nothing
beyond click.
"""

from __future__ import annotations

import click

from cleveragents import hookimpl
from cleveragents.hookspecs import Register


@hookimpl
def register_context_strategies(register: Register) -> None:
    register("hello-keyword", "cleveragents_hello.strategy:HelloKeywordStrategy")


@hookimpl
def register_commands(cli: click.Group) -> None:
    cli.add_command(hello)


@click.command()
@click.argument("name", default="World")
def hello(name: str) -> None:
    """Print a greeting for NAME (default: World)."""
    click.echo(f"Hello, {name}!")
