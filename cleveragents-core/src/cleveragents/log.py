"""Structured logging: JSON lines in the log file, short readable lines on stderr.

Every event, from our loggers and from third-party libraries logging through
the standard :mod:`logging` module alike, passes through
:func:`cleveragents.redaction.redact` before it is written anywhere.

The log file is ``$CLEVERAGENTS_HOME/logs/cleveragents.log`` (rotated at 10 MB,
five backups). It and its folder are created by the first record written, so a
command that logs nothing leaves no trace. :mod:`structlog` is imported on the
first log call, not when this module is imported::

    from cleveragents.log import get_logger

    log = get_logger(__name__)
    log.info("resource indexed", resource=name, files=count)
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from cleveragents import paths
from cleveragents.errors import ValidationError
from cleveragents.redaction import redact

if TYPE_CHECKING:
    from collections.abc import MutableMapping

    from structlog.stdlib import BoundLogger
    from structlog.typing import Processor

__all__ = [
    "BACKUP_COUNT",
    "LOG_FILE_NAME",
    "MAX_BYTES",
    "configure_logging",
    "get_logger",
    "log_file",
    "reset_logging",
]

LOG_FILE_NAME = "cleveragents.log"
MAX_BYTES = 10 * 1024 * 1024
BACKUP_COUNT = 5
_OWNED = "_cleveragents_handler"  # marks the handlers configure_logging installed
_JSON_NATIVE = (str, int, float, bool, type(None))


#: Records of this logger (and its children) go to the log file, never to stderr.
FILE_ONLY_LOGGER = "cleveragents.reported"


def log_file() -> Path:
    """Where :func:`configure_logging` writes: ``$CLEVERAGENTS_HOME/logs/cleveragents.log``."""
    return paths.logs_dir() / LOG_FILE_NAME


def _plain(value: Any) -> Any:
    """JSON-native data, so that nothing is turned into text after redaction."""
    if isinstance(value, _JSON_NATIVE):
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    return str(value)


def redact_event(
    logger: Any, method_name: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """structlog processor: the event with secrets hidden (see :mod:`cleveragents.redaction`)."""
    return cast("MutableMapping[str, Any]", redact(_plain(dict(event_dict))))


def _leading_fields(
    logger: Any, method_name: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """Put ``timestamp, level, logger, event`` first in each JSON line."""
    first = {k: event_dict[k] for k in ("timestamp", "level", "logger", "event") if k in event_dict}
    return {**first, **event_dict}


def render_console(logger: Any, method_name: str, event_dict: MutableMapping[str, Any]) -> str:
    """structlog renderer for a terminal: ``warning: plugin failed (plugin=acms)``."""
    event = dict(event_dict)
    level = event.pop("level", method_name)
    message = str(event.pop("event", ""))
    name = event.pop("logger", None)
    exception = event.pop("exception", None)
    event.pop("timestamp", None)
    line = f"{level} [{name}]: {message}" if name and level == "debug" else f"{level}: {message}"
    if event:
        line += " (" + ", ".join(f"{key}={value}" for key, value in event.items()) + ")"
    return f"{line}\n{exception}" if exception else line


def _short_exc_info(
    logger: Any, method_name: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """Before :func:`configure_logging`: an exception as one ``Type: message`` field."""
    exc_info = event_dict.pop("exc_info", None)
    if exc_info is True:
        exc_info = sys.exc_info()
    exc = exc_info[1] if isinstance(exc_info, tuple) else exc_info
    if isinstance(exc, BaseException):
        event_dict["error"] = f"{type(exc).__name__}: {exc}"
    return event_dict


def _level(name: str) -> int:
    value = logging.getLevelName(name.upper())
    if not isinstance(value, int):
        raise ValidationError(
            f"unknown log level {name!r} (use debug, info, warning, error or critical)"
        )
    return value


def _shared_processors() -> list[Processor]:
    import structlog

    return [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.filter_by_level,
        structlog.stdlib.add_logger_name,
        structlog.stdlib.add_log_level,
        structlog.stdlib.PositionalArgumentsFormatter(),
    ]


class _StderrLogger:
    """Before :func:`configure_logging`: one line per event on the current ``sys.stderr``."""

    def __init__(self, name: str | None = None, *args: Any) -> None:
        self.name = name or ""

    def msg(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    log = debug = info = warning = warn = error = critical = fatal = exception = failure = msg


def _configure_fallback() -> None:
    """Warnings and errors to stderr, redacted, in short form; nothing written to disk."""
    import structlog

    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.stdlib.add_logger_name,
            structlog.processors.add_log_level,
            _short_exc_info,
            redact_event,
            render_console,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        logger_factory=_StderrLogger,
        cache_logger_on_first_use=False,
    )


def _configure_structlog(final: list[Processor]) -> None:
    import structlog

    structlog.configure(
        processors=[*_shared_processors(), *final],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        # Loggers made at import time must follow a later configure_logging().
        cache_logger_on_first_use=False,
    )


def _file_handler(path: Path) -> logging.Handler:
    from logging.handlers import RotatingFileHandler

    class _LazyRotatingFileHandler(RotatingFileHandler):
        """Creates the log folder, and a private file, when the first record arrives."""

        def _open(self) -> Any:
            log_path = Path(self.baseFilename)
            log_path.parent.mkdir(parents=True, exist_ok=True)
            stream = super()._open()
            log_path.chmod(0o600)
            return stream

    return _LazyRotatingFileHandler(
        path, maxBytes=MAX_BYTES, backupCount=BACKUP_COUNT, encoding="utf-8", delay=True
    )


def configure_logging(*, debug: bool = False, level: str | None = None) -> None:
    """Send logs to the rotating JSON file and to stderr; safe to call again.

    :param debug: show everything on stderr, with logger names, and log
        everything to the file.
    :param level: the file's level (``core.log.level``); ``None`` means ``info``.
        stderr shows warnings and above unless ``debug``.
    """
    import structlog

    file_level = logging.DEBUG if debug else _level(level or "info")
    console_level = logging.DEBUG if debug else max(logging.WARNING, file_level)
    reset_logging()

    timestamper = structlog.processors.TimeStamper(fmt="iso", utc=True)
    foreign: list[Processor] = [
        structlog.stdlib.add_logger_name,
        structlog.stdlib.add_log_level,
        structlog.stdlib.ExtraAdder(),
        timestamper,
    ]
    _configure_structlog(
        [
            timestamper,
            structlog.processors.StackInfoRenderer(),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ]
    )

    def formatter(*renderers: Processor) -> logging.Formatter:
        return structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=foreign,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                redact_event,
                *renderers,
            ],
        )

    file_handler = _file_handler(log_file())
    file_handler.setLevel(file_level)
    file_handler.setFormatter(formatter(_leading_fields, structlog.processors.JSONRenderer()))
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(console_level)
    console.setFormatter(formatter(render_console))
    # The CLI prints its own one-line error; its log record is for the file only.
    console.addFilter(lambda record: not record.name.startswith(FILE_ONLY_LOGGER))

    root = logging.getLogger()
    for handler in (file_handler, console):
        setattr(handler, _OWNED, True)
        root.addHandler(handler)
    root.setLevel(min(file_level, console_level))


def reset_logging() -> None:
    """Close and remove the handlers :func:`configure_logging` installed."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, _OWNED, False):
            root.removeHandler(handler)
            handler.close()
    if "structlog" in sys.modules:
        # Loggers already handed out must not fall back to structlog's stdout printer.
        _configure_fallback()


class _LazyLogger:
    """Stands in for a structlog logger until the first call, keeping imports cheap."""

    __slots__ = ("_name", "_proxy")

    def __init__(self, name: str | None) -> None:
        self._name = name
        self._proxy: Any = None

    def __getattr__(self, attribute: str) -> Any:
        if self._proxy is None:
            import structlog

            if _PENDING:
                configure_logging(**_PENDING.pop())
            elif not structlog.is_configured():
                _configure_fallback()
            self._proxy = structlog.get_logger(self._name)
        return getattr(self._proxy, attribute)

    def __repr__(self) -> str:
        return f"<cleveragents logger {self._name!r}>"


#: Arguments of a configure_logging() deferred until something logs.
_PENDING: list[dict[str, Any]] = []


def defer_logging(*, debug: bool = False, level: str | None = None) -> None:
    """Configure logging at the first log call, so commands that log nothing skip structlog."""
    _PENDING[:] = [{"debug": debug, "level": level}]


def get_logger(name: str | None = None) -> BoundLogger:
    """A structlog logger for ``name`` (use ``__name__``), cheap to create at import time."""
    return cast("BoundLogger", _LazyLogger(name))
