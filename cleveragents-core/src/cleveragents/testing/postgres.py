"""A throw-away PostgreSQL server for tests, from the locally installed binaries.

:func:`start_postgres` runs ``initdb`` and ``pg_ctl`` into a temporary folder,
listening on a free localhost port, and returns a SQLAlchemy URL plus a
function that stops the server and deletes its files. PostgreSQL refuses to
run as root, so under root the server runs as the ``postgres`` system user
(Debian's packages create it). When something is missing the functions raise
:class:`PostgresUnavailable` with a reason a test can pass to ``pytest.skip``::

    @pytest.fixture(scope="session")
    def postgres_url(tmp_path_factory):
        try:
            url, stop = start_postgres(tmp_path_factory.mktemp("pg"))
        except PostgresUnavailable as exc:
            pytest.skip(str(exc))
        yield url
        stop()
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = [
    "PostgresUnavailable",
    "create_database",
    "find_postgres_bin",
    "running_postgres",
    "start_postgres",
]

#: The database superuser ``initdb`` creates; it authenticates by ``trust``.
SUPERUSER = "cleveragents"
_SERVICE_USER = "postgres"
_START_TIMEOUT_S = 60


class PostgresUnavailable(RuntimeError):
    """PostgreSQL binaries are missing or the server would not start."""


def find_postgres_bin() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``, newest version first.

    ``$CLEVERAGENTS_POSTGRES_BIN`` wins; then Debian's ``/usr/lib/postgresql/*/bin``;
    then whatever ``initdb`` is on ``PATH``.
    """
    configured = os.environ.get("CLEVERAGENTS_POSTGRES_BIN")
    candidates = [Path(configured)] if configured else []

    def version(path: str) -> tuple[int, ...]:
        part = Path(path).parent.name
        return tuple(int(p) for p in part.split(".") if p.isdigit())

    candidates += [
        Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version, reverse=True)
    ]
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).parent)
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _service_account() -> tuple[int, int] | None:
    """``(uid, gid)`` to run the server as, or ``None`` to run as ourselves."""
    if os.geteuid() != 0:
        return None
    import pwd

    try:
        entry = pwd.getpwnam(_SERVICE_USER)
    except KeyError:
        raise PostgresUnavailable(
            f"running as root and there is no '{_SERVICE_USER}' user to run PostgreSQL as"
        ) from None
    return entry.pw_uid, entry.pw_gid


def _runner(account: tuple[int, int] | None, workdir: Path) -> Callable[..., str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LC_ALL": "C",
        "LANG": "C",
        "HOME": str(workdir),
        "TZ": "UTC",
    }

    def run(*command: str | Path, timeout: float = _START_TIMEOUT_S) -> str:
        try:
            done = subprocess.run(
                [str(part) for part in command],
                cwd=workdir,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                user=account[0] if account else None,
                group=account[1] if account else None,
                extra_groups=[] if account else None,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise PostgresUnavailable(f"{Path(str(command[0])).name} failed: {exc}") from exc
        if done.returncode != 0:
            output = (done.stderr or done.stdout).strip().splitlines()
            reason = output[-1] if output else f"exit status {done.returncode}"
            raise PostgresUnavailable(f"{Path(str(command[0])).name} failed: {reason}")
        return done.stdout

    return run


def start_postgres(base_dir: Path | None = None) -> tuple[str, Callable[[], None]]:
    """Start a private server; return ``(url, stop)``.

    :param base_dir: where to keep the cluster. Under root a fresh folder in the
        system temp dir is used instead, since per-user test folders are closed
        to the ``postgres`` user. ``stop()`` shuts the server down and deletes it.
    :raises PostgresUnavailable: binaries missing, or the server did not start.
    """
    bin_dir = find_postgres_bin()
    if bin_dir is None:
        raise PostgresUnavailable("PostgreSQL binaries (initdb, pg_ctl) not found")
    account = _service_account()
    parent = None if account is not None or base_dir is None else base_dir
    workdir = Path(tempfile.mkdtemp(prefix="cleveragents-pg-", dir=parent))
    if account is not None:
        os.chown(workdir, *account)
    data_dir, log_file = workdir / "data", workdir / "server.log"
    run = _runner(account, workdir)
    port = _free_port()
    started = False

    def stop() -> None:
        if started:
            with contextlib.suppress(PostgresUnavailable):
                run(bin_dir / "pg_ctl", "-D", data_dir, "-m", "fast", "-w", "stop", timeout=30)
        shutil.rmtree(workdir, ignore_errors=True)

    try:
        run(
            bin_dir / "initdb",
            "-D",
            data_dir,
            "-U",
            SUPERUSER,
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        )
        options = (
            f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={workdir} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        started = True
        try:
            run(
                bin_dir / "pg_ctl",
                "-D",
                data_dir,
                "-l",
                log_file,
                "-w",
                "-t",
                str(_START_TIMEOUT_S),
                "-o",
                options,
                "start",
            )
        except PostgresUnavailable as exc:
            log = (
                log_file.read_text(errors="replace").strip().splitlines()
                if log_file.exists()
                else []
            )
            raise PostgresUnavailable(f"{exc}; {log[-1] if log else 'no server log'}") from exc
    except BaseException:
        stop()
        raise
    return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{port}/postgres", stop


@contextlib.contextmanager
def running_postgres(base_dir: Path | None = None) -> Iterator[str]:
    """:func:`start_postgres` as a context manager yielding the URL."""
    url, stop = start_postgres(base_dir)
    try:
        yield url
    finally:
        stop()


def create_database(server_url: str, name: str) -> str:
    """Create an empty database ``name`` on the server; return its URL."""
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(server_url)
    conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    return url.set(database=name).render_as_string(hide_password=False)
