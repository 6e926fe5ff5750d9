"""``python -m cleveragents`` is the ``cleveragents`` command."""

from cleveragents.cli.main import run

run()
