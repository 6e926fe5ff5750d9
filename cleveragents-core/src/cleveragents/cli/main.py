"""Entry point of the ``cleveragents`` command.

Global options that decide which plugins load (``-p``, ``--strict-plugins``)
must be known before the command tree exists, because plugins add commands;
they are read from the leading arguments first, as pytest does, and declared
again on the root group so ``--help`` documents them.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

import click

from cleveragents import __version__

__all__ = ["build_cli", "main"]

#: Allocations between two young-generation collections in the command's process.
_YOUNG_COLLECTION_THRESHOLD = 10_000


@dataclass
class GlobalOptions:
    plugins: list[str] = field(default_factory=list)
    strict: bool = False
    debug: bool = False


def parse_global_options(args: Sequence[str]) -> GlobalOptions:
    """Read ``-p NAME``, ``--strict-plugins`` and ``--debug`` before the subcommand."""
    options = GlobalOptions()
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-p" and i + 1 < len(args):
            options.plugins.append(args[i + 1])
            i += 2
            continue
        if arg.startswith("-p") and len(arg) > 2:
            options.plugins.append(arg[2:].lstrip("="))
        elif arg == "--strict-plugins":
            options.strict = True
        elif arg == "--debug":
            options.debug = True
        elif not arg.startswith("-"):
            break
        i += 1
    return options


def build_cli() -> click.Group:
    """The root group; plugins (core's own included) add the subcommands."""

    @click.group(
        name="cleveragents",
        context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    )
    @click.option(
        "-p",
        "plugin_options",
        multiple=True,
        metavar="NAME",
        help="Load plugin NAME (with autoload disabled), or skip it with no:NAME.",
    )
    @click.option("--strict-plugins", is_flag=True, help="Fail if any plugin fails to load.")
    @click.option("--debug", is_flag=True, help="Show tracebacks and debug logs.")
    @click.version_option(__version__, prog_name="cleveragents")
    def cli(plugin_options: tuple[str, ...], strict_plugins: bool, debug: bool) -> None:
        """CleverAgents: a plugin host and context engine for coding agents.

        Run `cleveragents plugins list` to see what is installed.
        """

    return cli


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code (user errors never show a traceback)."""
    from cleveragents.errors import CleverAgentsError, format_error, wrap_unexpected

    args = list(sys.argv[1:] if argv is None else argv)
    options = parse_global_options(args)
    host = None
    try:
        from cleveragents.cli.context import App
        from cleveragents.plugins import PluginHost

        _configure_logging(options)
        host = PluginHost.load(options.plugins, strict=options.strict)
        cli = build_cli()
        host.add_commands(cli)
        overrides = {"plugins.strict": True} if options.strict else {}
        app = App(host=host, debug=options.debug, overrides=overrides)
        result = cli.main(args, prog_name="cleveragents", standalone_mode=False, obj=app)
        return result if isinstance(result, int) else 0
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("Aborted.", err=True)
        return 130
    except CleverAgentsError as exc:
        _report(exc, options.debug, format_error(exc))
        return 1
    except Exception as exc:
        _report(exc, options.debug, format_error(wrap_unexpected(exc)), unexpected=True)
        return 1
    finally:
        if host is not None:
            host.unconfigure()


def _configure_logging(options: GlobalOptions) -> None:
    """File and terminal logging; the level comes from the environment, not the (lazy) config."""
    import os

    from cleveragents.log import configure_logging, defer_logging

    level = os.environ.get("CLEVERAGENTS_CORE__LOG__LEVEL")
    if options.debug:
        configure_logging(debug=True, level=level)
    else:
        defer_logging(level=level)


def _report(exc: BaseException, debug: bool, line: str, *, unexpected: bool = False) -> None:
    if debug:
        import traceback

        from cleveragents.redaction import redact

        click.echo(redact("".join(traceback.format_exception(exc))), err=True)
    click.echo(line, err=True)
    if unexpected:
        try:
            from cleveragents.log import FILE_ONLY_LOGGER, get_logger

            get_logger(FILE_ONLY_LOGGER).error("unexpected error", exc_info=exc)
        except Exception:
            pass
        if not debug:
            click.echo("Run again with --debug to see the traceback.", err=True)


def run() -> None:
    """Console-script wrapper: exit with :func:`main`'s code."""
    # A command's imports leave some 400,000 long-lived objects with hardly a cycle
    # among them; at the default threshold (700) the young collections promote them
    # until a full collection walks them all: 0.05-0.08 s of a one-file refresh through
    # this command. Young collections every 10,000 allocations still collect cycles in a
    # long command (`index --watch`, a server); the index runs hold the collector off.
    gc.set_threshold(_YOUNG_COLLECTION_THRESHOLD)
    code = main()
    # The process ends here: the interpreter's shutdown would walk every object still
    # alive in cyclic garbage collections (0.15-0.25 s after an index refresh, a sixth of
    # a one-file refresh through this command). Frozen objects are left to the
    # process's end; their files are already closed and their stores committed.
    gc.freeze()
    sys.exit(code)
