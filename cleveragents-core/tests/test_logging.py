"""Logging: a lazily created JSON log file, short stderr lines, and redaction everywhere."""

from __future__ import annotations

import json
import logging
import stat
import subprocess
import sys
from collections.abc import Iterator
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Any

import pytest

from cleveragents.errors import ValidationError
from cleveragents.log import (
    BACKUP_COUNT,
    MAX_BYTES,
    configure_logging,
    get_logger,
    log_file,
    reset_logging,
)

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz123456"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh ``$CLEVERAGENTS_HOME``; logging is reset afterwards."""
    path = tmp_path / "home"
    monkeypatch.setenv("CLEVERAGENTS_HOME", str(path))
    root = logging.getLogger()
    level = root.level
    yield path
    reset_logging()
    root.setLevel(level)


def _records(home: Path) -> list[dict[str, Any]]:
    lines = (home / "logs" / "cleveragents.log").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _ours() -> list[logging.Handler]:
    return [h for h in logging.getLogger().handlers if getattr(h, "_cleveragents_handler", False)]


def test_nothing_is_created_before_the_first_record(home: Path) -> None:
    """Configuring logging creates neither the logs folder nor the file."""
    configure_logging()
    assert log_file() == home / "logs" / "cleveragents.log"
    assert not (home / "logs").exists()
    get_logger("cleveragents.test").debug("below the file level")
    assert not (home / "logs").exists()


def test_records_are_json_lines_with_context(home: Path) -> None:
    """Each record is one JSON object with timestamp, level, logger, event and fields."""
    configure_logging()
    get_logger("cleveragents.test").info("resource indexed", resource="docs", files=3)
    (record,) = _records(home)
    assert list(record)[:4] == ["timestamp", "level", "logger", "event"]
    assert record["event"] == "resource indexed"
    assert record["level"] == "info"
    assert record["logger"] == "cleveragents.test"
    assert (record["resource"], record["files"]) == ("docs", 3)
    assert record["timestamp"].endswith("Z")
    assert stat.S_IMODE((home / "logs" / "cleveragents.log").stat().st_mode) == 0o600


def test_secrets_are_redacted_in_the_file(home: Path) -> None:
    """Secret keys, secret-looking values and URL passwords never reach the file."""
    configure_logging()
    log = get_logger("cleveragents.test")
    log.warning(
        f"calling with {SECRET}",
        api_key="plain-value",
        url="postgresql://bob:hunter2@db/app",
        nested={"token": "abc", "ok": 1},
        obj=Path("/tmp/x"),
    )
    text = (home / "logs" / "cleveragents.log").read_text()
    for leaked in (SECRET, "plain-value", "hunter2", '"abc"'):
        assert leaked not in text
    (record,) = _records(home)
    assert record["api_key"] == "***REDACTED***"
    assert record["url"] == "postgresql://bob:***@db/app"
    assert record["nested"] == {"token": "***REDACTED***", "ok": 1}
    assert record["obj"] == "/tmp/x"


def test_exceptions_are_logged_and_redacted(home: Path) -> None:
    """``log.exception`` writes the traceback, with secrets from the message removed."""
    configure_logging()
    try:
        raise RuntimeError(f"provider refused {SECRET}")
    except RuntimeError:
        get_logger("cleveragents.test").exception("call failed")
    (record,) = _records(home)
    assert "RuntimeError: provider refused ***REDACTED***" in record["exception"]
    assert SECRET not in json.dumps(record)


def test_standard_library_records_are_formatted_and_redacted(home: Path) -> None:
    """Third-party libraries logging through ``logging`` get the same treatment."""
    configure_logging()
    logging.getLogger("some.library").warning("auth header was %s", f"Bearer {SECRET}")
    (record,) = _records(home)
    assert record["logger"] == "some.library"
    assert record["event"] == "auth header was Bearer ***REDACTED***"


def test_stderr_shows_warnings_in_short_form(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """stderr gets ``level: event (fields)`` from WARNING up; info goes to the file only."""
    configure_logging()
    log = get_logger("cleveragents.test")
    log.info("quiet")
    log.warning("plugin failed", plugin="acme", password="x")
    err = capsys.readouterr().err
    assert "quiet" not in err
    assert "warning: plugin failed (plugin=acme, password=***REDACTED***)" in err
    assert [r["event"] for r in _records(home)] == ["quiet", "plugin failed"]


def test_debug_shows_everything(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``debug=True`` lowers both stderr and the file to DEBUG."""
    configure_logging(debug=True)
    get_logger("cleveragents.test").debug("details", step=1)
    assert "debug [cleveragents.test]: details (step=1)" in capsys.readouterr().err
    assert _records(home)[0]["level"] == "debug"


def test_level_sets_the_file_level(home: Path) -> None:
    """``level`` (``core.log.level``) filters what the file receives."""
    configure_logging(level="error")
    log = get_logger("cleveragents.test")
    log.warning("dropped")
    log.error("kept")
    assert [r["event"] for r in _records(home)] == ["kept"]


def test_unknown_level_is_a_validation_error(home: Path) -> None:
    """A misspelt level is reported, not ignored."""
    with pytest.raises(ValidationError, match="unknown log level 'loud'"):
        configure_logging(level="loud")


def test_file_rotates_at_ten_megabytes(home: Path) -> None:
    """The file handler rotates at 10 MB and keeps five backups."""
    configure_logging()
    (handler,) = [h for h in _ours() if isinstance(h, RotatingFileHandler)]
    assert (handler.maxBytes, handler.backupCount) == (MAX_BYTES, BACKUP_COUNT)
    assert (MAX_BYTES, BACKUP_COUNT) == (10 * 1024 * 1024, 5)


def test_configure_twice_and_reset(home: Path) -> None:
    """Configuring again replaces the handlers; reset removes them."""
    configure_logging()
    configure_logging()
    assert len(_ours()) == 2
    reset_logging()
    assert _ours() == []


def test_logger_made_before_configuration_follows_it(home: Path) -> None:
    """A module-level logger created early writes through the later configuration."""
    log = get_logger("cleveragents.early")
    configure_logging()
    log.warning("after configure")
    assert _records(home)[0]["logger"] == "cleveragents.early"


def test_unconfigured_logger_never_prints_to_stdout(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before configure_logging, warnings go to stderr (redacted) and stdout stays clean."""
    reset_logging()
    get_logger("cleveragents.test").warning("early warning", token="abc")
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "abc" not in captured.err
    assert not (home / "logs").exists()


def test_unconfigured_exception_is_one_redacted_line(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before configure_logging, ``log.exception`` prints ``Type: message``, not a traceback."""
    reset_logging()
    try:
        raise RuntimeError(f"refused {SECRET}")
    except RuntimeError:
        get_logger("cleveragents.cli").exception("unexpected error")
    err = capsys.readouterr().err
    assert err == "error: unexpected error (error=RuntimeError: refused ***REDACTED***)\n"


def test_import_is_cheap() -> None:
    """Importing the module (and making a logger) does not import structlog yet."""
    code = (
        "import sys; import cleveragents.log as l; l.get_logger('x'); "
        "print([m for m in ('structlog', 'logging.handlers', 'rich') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
