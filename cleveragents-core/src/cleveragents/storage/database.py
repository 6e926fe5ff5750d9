"""The database handle: SQLite (WAL) by default, PostgreSQL in server mode.

A :class:`Database` is cheap to build; the engine is created on first use and
the schema is migrated to the newest revision at the same moment, so a fresh
``$CLEVERAGENTS_HOME`` just works. Every SQLAlchemy or driver failure leaves
this module as a :class:`~cleveragents.errors.DatabaseError` with a one-line
message; a lock held by another process past the busy timeout becomes
:class:`~cleveragents.errors.DatabaseLockedError`.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy import create_engine, event, inspect, text
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, OperationalError, SQLAlchemyError

from cleveragents.errors import (
    CleverAgentsError,
    ConfigurationError,
    DatabaseError,
    DatabaseLockedError,
)

if TYPE_CHECKING:
    from sqlmodel import Session

__all__ = ["MIGRATIONS_DIR", "Database", "head_revision", "known_revisions"]

#: The Alembic environment shipped with the package.
MIGRATIONS_DIR = Path(__file__).with_name("migrations")

_REVISION_FILE = re.compile(r"^(\d{4})_\w+\.py$")
_BEGIN = "cleveragents_sqlite_begin"
_LOCKED_MESSAGES = ("database is locked", "database table is locked", "database schema is locked")
#: PostgreSQL SQLSTATE ``lock_not_available`` (raised when ``lock_timeout`` expires).
_PG_LOCK_NOT_AVAILABLE = "55P03"
#: Key of the advisory lock that serialises concurrent migrations on PostgreSQL.
_PG_MIGRATION_LOCK = 0x436C65766572


class _ConfigLike(Protocol):
    def get(self, key: str, default: Any = None) -> Any: ...


def known_revisions() -> list[str]:
    """Revision ids of the shipped migrations, oldest first.

    Revisions are linear and their files are named ``NNNN_slug.py`` with
    revision id ``NNNN`` (a test holds Alembic to this), which lets every
    process check the schema without importing Alembic.
    """
    names = (p.name for p in (MIGRATIONS_DIR / "versions").glob("*.py"))
    return sorted(m.group(1) for m in map(_REVISION_FILE.match, names) if m)


def head_revision() -> str:
    """The newest schema revision this version of the package knows."""
    return known_revisions()[-1]


def _current_revision(connection: Connection) -> str | None:
    if not inspect(connection).has_table("alembic_version"):
        return None
    return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _use_wal(cursor: Any, timeout: float) -> None:
    """Switch the file to WAL, retrying within ``timeout`` seconds.

    The switch needs an exclusive lock, and SQLite answers "database is locked" at
    once, without its busy wait, when connections to a new file try it together.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.02)


class Database:
    """A lazily connected database with migrations applied on first use.

    :param url: a SQLAlchemy URL (``sqlite:///…`` or ``postgresql+psycopg://…``).
    :param busy_timeout: seconds to wait for a lock held by another process
        before giving up with :class:`~cleveragents.errors.DatabaseLockedError`.
    """

    def __init__(self, url: str | URL, *, busy_timeout: float = 5.0) -> None:
        try:
            self.url: URL = make_url(url)
        except ArgumentError as exc:
            raise ConfigurationError(
                f"invalid database URL: {_first_line(exc)}", details={"key": "core.database-url"}
            ) from exc
        if busy_timeout < 0:
            raise ConfigurationError("core.database-busy-timeout must not be negative")
        self.busy_timeout = float(busy_timeout)
        self._engine: Engine | None = None
        self._migrated = False
        self._lock = threading.RLock()

    # -- construction -----------------------------------------------------------------

    @classmethod
    def from_config(cls, config: _ConfigLike) -> Database:
        """Build from ``core.database-url`` and ``core.database-busy-timeout``.

        Without a URL the database is ``$CLEVERAGENTS_HOME/cleveragents.db``.
        """
        url = config.get("core.database-url")
        raw_timeout = config.get("core.database-busy-timeout", 5.0)
        try:
            busy_timeout = float(5.0 if raw_timeout is None else raw_timeout)
        except (TypeError, ValueError):
            raise ConfigurationError(
                f"core.database-busy-timeout must be a number of seconds, got {raw_timeout!r}"
            ) from None
        if not url:
            from cleveragents.paths import home

            return cls.for_sqlite_file(home() / "cleveragents.db", busy_timeout=busy_timeout)
        return cls(str(url), busy_timeout=busy_timeout)

    @classmethod
    def for_sqlite_file(cls, path: Path | str, *, busy_timeout: float = 5.0) -> Database:
        """A SQLite database in ``path`` (its folder is created on first use)."""
        return cls(
            URL.create("sqlite", database=str(Path(path).expanduser())),
            busy_timeout=busy_timeout,
        )

    # -- description ------------------------------------------------------------------

    @property
    def backend(self) -> str:
        """``"sqlite"`` or ``"postgresql"`` (the dialect name)."""
        return self.url.get_backend_name()

    @property
    def path(self) -> Path | None:
        """The SQLite file, or ``None`` (server databases, in-memory SQLite)."""
        if self.backend != "sqlite":
            return None
        database = self.url.database
        if not database or database == ":memory:" or database.startswith("file:"):
            return None
        return Path(database).absolute()

    @property
    def safe_url(self) -> str:
        """The URL with any password masked, for messages and diagnostics."""
        return self.url.render_as_string(hide_password=True)

    @property
    def location(self) -> str:
        """What to name in a message: the file for SQLite, the masked URL otherwise."""
        return str(self.path) if self.path is not None else self.safe_url

    def __repr__(self) -> str:
        return f"Database({self.safe_url!r})"

    # -- engine -----------------------------------------------------------------------

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine, created on first access (without migrating)."""
        with self._lock:
            if self._engine is None:
                self._engine = self._create_engine()
            return self._engine

    def _create_engine(self) -> Engine:
        if self.backend == "sqlite":
            return self._create_sqlite_engine()
        connect_args: dict[str, Any] = {}
        if self.backend == "postgresql" and self.url.get_driver_name() in {"psycopg", "psycopg2"}:
            milliseconds = max(1, int(self.busy_timeout * 1000))
            connect_args["options"] = f"-c lock_timeout={milliseconds}"
            connect_args.setdefault("connect_timeout", max(2, int(self.busy_timeout) + 1))
        with self._errors():
            return create_engine(self.url, pool_pre_ping=True, connect_args=connect_args)

    def _create_sqlite_engine(self) -> Engine:
        if self.path is not None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise DatabaseError(
                    f"cannot create the database folder {self.path.parent}: {exc.strerror or exc}"
                ) from exc
        busy_ms = int(self.busy_timeout * 1000)
        engine = create_engine(
            self.url, connect_args={"timeout": self.busy_timeout, "check_same_thread": False}
        )

        @event.listens_for(engine, "connect")
        def _configure(dbapi_connection: Any, _record: Any) -> None:
            # Let SQLAlchemy, not the sqlite3 module, decide when transactions
            # begin, so DDL is transactional and writers can BEGIN IMMEDIATE.
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            try:
                cursor.execute(f"PRAGMA busy_timeout = {busy_ms}")
                cursor.execute("PRAGMA foreign_keys = ON")
                if self.path is not None:
                    _use_wal(cursor, self.busy_timeout)
                    cursor.execute("PRAGMA synchronous = NORMAL")
            finally:
                cursor.close()

        @event.listens_for(engine, "begin")
        def _begin(connection: Connection) -> None:
            connection.exec_driver_sql(connection.get_execution_options().get(_BEGIN, "BEGIN"))

        return engine

    def _bind(self, *, write: bool) -> Engine:
        engine = self.engine
        if write and self.backend == "sqlite":
            # Take the write lock up front: a deferred transaction that later
            # writes can fail at once instead of waiting for the busy timeout.
            return engine.execution_options(**{_BEGIN: "BEGIN IMMEDIATE"})
        return engine

    def dispose(self) -> None:
        """Close pooled connections (the engine is rebuilt on next use)."""
        with self._lock:
            if self._engine is not None:
                self._engine.dispose()
                self._engine = None

    # -- sessions ---------------------------------------------------------------------

    @contextmanager
    def session(self, *, write: bool = True) -> Iterator[Session]:
        """A session that commits on success and rolls back on any error.

        :param write: on SQLite, take the write lock when the transaction
            begins; pass ``False`` for read-only work so it never waits on writers.
        """
        # Here, not at the top: a command that reads and writes through SQLAlchemy's core
        # alone (an index refresh) does not import the ORM.
        from sqlmodel import Session

        self.ensure_schema()
        with (
            self._errors(),
            Session(bind=self._bind(write=write), expire_on_commit=False) as session,
        ):
            try:
                yield session
                session.commit()
            except BaseException:
                session.rollback()
                raise

    # -- schema -----------------------------------------------------------------------

    def ensure_schema(self) -> None:
        """Migrate to the newest revision unless this handle already did."""
        if not self._migrated:
            with self._lock:
                if not self._migrated:
                    self.migrate()

    def migrate(self) -> str:
        """Apply pending migrations (``alembic upgrade head``); return the new revision.

        Concurrent processes are serialised (SQLite write lock, PostgreSQL
        advisory lock); the second one finds the work done.
        """
        head = head_revision()
        with self._errors():
            with self.engine.connect() as connection:
                current = _current_revision(connection)
            if current != head:
                self._check_known(current)
                with self._bind(write=True).connect() as connection, connection.begin():
                    if self.backend == "postgresql":
                        connection.execute(
                            text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK}
                        )
                    self._upgrade(connection)
                    current = _current_revision(connection)
        self._migrated = True
        return current or head

    def _check_known(self, current: str | None) -> None:
        if current is not None and current not in known_revisions():
            raise DatabaseError(
                f"database schema version {current} is newer than this cleveragents "
                f"(which knows up to {head_revision()}); upgrade cleveragents-core: "
                f"{self.location}",
                details={"schema_version": current, "head_revision": head_revision()},
            )

    @staticmethod
    def _upgrade(connection: Connection) -> None:
        from alembic import command
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS_DIR).replace("%", "%%"))
        config.attributes["connection"] = connection
        command.upgrade(config, "head")

    def schema_version(self) -> str | None:
        """The schema revision stored in the database, ``None`` before the first use."""
        if self.path is not None and not self.path.exists():
            return None
        with self._errors(), self.engine.connect() as connection:
            return _current_revision(connection)

    def check(self) -> dict[str, Any]:
        """A health report for ``cleveragents diagnostics`` (never raises).

        Keys: ``ok``, ``error``, ``backend``, ``url`` (password masked), ``path``,
        ``exists``, ``schema_version``, ``head_revision``, ``up_to_date``, and
        ``journal_mode`` (SQLite) or ``server_version`` (PostgreSQL).
        """
        report: dict[str, Any] = {
            "ok": False,
            "error": None,
            "backend": self.backend,
            "url": self.safe_url,
            "path": str(self.path) if self.path is not None else None,
            "exists": None,
            "schema_version": None,
            "head_revision": head_revision(),
            "up_to_date": False,
        }
        try:
            if self.path is not None and not self.path.exists():
                report.update(ok=True, exists=False)
                return report
            with self._errors(), self.engine.connect() as connection:
                version = _current_revision(connection)
                if self.backend == "sqlite":
                    report["journal_mode"] = connection.exec_driver_sql(
                        "PRAGMA journal_mode"
                    ).scalar()
                else:
                    info = connection.dialect.server_version_info or ()
                    report["server_version"] = ".".join(str(part) for part in info) or None
            report.update(
                ok=True, exists=True, schema_version=version, up_to_date=version == head_revision()
            )
        except CleverAgentsError as exc:
            report["error"] = exc.message
        return report

    # -- errors -----------------------------------------------------------------------

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except CleverAgentsError:
            raise
        except (SQLAlchemyError, sqlite3.Error) as exc:
            raise self._translate(exc) from exc

    def _translate(self, exc: BaseException) -> DatabaseError:
        cause = getattr(exc, "orig", None) or exc
        message = _first_line(cause)
        details = {"database": self.location, "exception": type(cause).__name__}
        if self._is_locked(cause):
            return DatabaseLockedError(
                f"database is locked by another process: {self.location}", details=details
            )
        if isinstance(exc, OperationalError | sqlite3.OperationalError):
            if self.backend == "sqlite" and "unable to open" in message:
                return DatabaseError(
                    f"cannot open database {self.location}: {message}", details=details
                )
            if self.backend != "sqlite" and getattr(cause, "sqlstate", None) is None:
                return DatabaseError(
                    f"cannot connect to database {self.location}: {message}", details=details
                )
        return DatabaseError(f"database error: {message}", details=details)

    @staticmethod
    def _is_locked(cause: BaseException) -> bool:
        if isinstance(cause, sqlite3.OperationalError):
            text_ = str(cause).lower()
            return any(m in text_ for m in _LOCKED_MESSAGES)
        return getattr(cause, "sqlstate", None) == _PG_LOCK_NOT_AVAILABLE
