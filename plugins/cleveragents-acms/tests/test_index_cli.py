"""`cleveragents index` as a user runs it: the installed command, a real repository, real files."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

CLI = str(Path(sys.executable).with_name("cleveragents"))


def _run(home: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [CLI, *args],
        env={**os.environ, "CLEVERAGENTS_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    if check:
        assert done.returncode == 0, f"{args}: {done.stderr}"
    return done


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A small git checkout with Python and Markdown files."""
    root = tmp_path / "shop"
    (root / "shop").mkdir(parents=True)
    (root / "shop" / "__init__.py").write_text("")
    (root / "shop" / "cart.py").write_text(
        '"""Shopping cart."""\n\n\nclass Cart:\n    """Holds items."""\n\n'
        "    def add_item(self, sku: str, quantity: int = 1) -> None:\n"
        "        self.items[sku] = quantity\n"
    )
    (root / "README.md").write_text("# Shop\n\nA tiny shop.\n")
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build" / "generated.py").write_text("def should_not_be_indexed():\n    pass\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_index_creates_project_and_reports_json(tmp_path: Path, repo: Path) -> None:
    """`index PATH --json` registers resource and project, and honours .gitignore."""
    home = tmp_path / "home"
    out = _run(home, "index", str(repo), "--project", "shop", "--json")
    data = json.loads(out.stdout)
    assert data["index"]["status"] == "ready"
    assert data["index"]["file_count"] == 4  # __init__, cart, README, .gitignore
    assert data["resource"]["resource_type_name"] == "git/checkout"
    assert data["run"]["files_analyzed"] == 4
    status = json.loads(_run(home, "index", "status", "--json").stdout)
    assert [(s["project_name"], s["status"]) for s in status] == [("shop", "ready")]
    projects = json.loads(_run(home, "project", "list", "--json").stdout)
    assert any(p["name"] == "shop" for p in projects)
    again = json.loads(_run(home, "index", str(repo), "--project", "shop", "--json").stdout)
    assert again["run"]["files_analyzed"] == 0
    forced = _run(home, "index", str(repo), "--project", "shop", "--force").stdout
    nodes = data["index"]["node_count"]
    assert "files 4 analysed, 0 unchanged, 0 removed" in forced
    assert f"nodes 0 new, 0 revised, 0 retired, {nodes} unchanged" in forced


def test_files_left_out_by_the_total_size_limit_are_named(tmp_path: Path, repo: Path) -> None:
    """A run that hits ``context.file.max-total-size`` says how many files it left out."""
    home = tmp_path / "home"
    (repo / "shop" / "big.py").write_text("VALUE = 1\n" * 400)
    _run(home, "config", "set", "context.file.max-total-size", "1000")
    done = _run(home, "index", str(repo), "--project", "shop")
    assert "total-size-limit" in done.stdout
    assert "left out because the index reached its total-size limit" in done.stdout
    data = json.loads(_run(home, "index", str(repo), "--project", "shop", "--json").stdout)
    assert data["run"]["skipped_reasons"]["total-size-limit"] >= 1


def test_index_bad_input_is_one_line(tmp_path: Path) -> None:
    """A missing path is a one-line error, a non-zero exit, and nothing written."""
    home = tmp_path / "home"
    done = _run(home, "index", str(tmp_path / "missing"), check=False)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        f"Error [422] VALIDATION_FAILED: path does not exist: {tmp_path / 'missing'}"
    ]
    assert "Traceback" not in done.stderr


def test_backend_options_that_do_not_fit_are_a_clear_error(tmp_path: Path, repo: Path) -> None:
    """``index.<kind>.options`` must be a table the backend takes: JSON where TOML is read,
    or an option the backend does not have, is a configuration error naming the key (it
    was an internal error, or a typo passed silently); a right one is used."""

    def index(kind: str, options: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [CLI, "index", str(repo), "--project", "shop"],
            env={
                **os.environ,
                "CLEVERAGENTS_HOME": str(tmp_path / "home"),
                f"CLEVERAGENTS_INDEX__{kind.upper()}__OPTIONS": options,
            },
            capture_output=True,
            text=True,
            timeout=300,
        )

    not_a_table = index("text", '{"num_threads": 1}')
    assert not_a_table.returncode != 0 and "Traceback" not in not_a_table.stderr
    assert "index.text.options must be a table" in not_a_table.stderr
    for kind, backend in (("text", "TantivyTextBackend"), ("graph", "OxigraphGraphBackend")):
        typo = index(kind, "{num_thread = 1}")
        assert typo.returncode != 0 and "Traceback" not in typo.stderr
        assert f"index.{kind}.options do not suit the {kind} backend {backend}" in typo.stderr
        assert "num_thread" in typo.stderr
    assert index("text", "{num_threads = 1}").returncode == 0


def test_resource_add_indexes_immediately(tmp_path: Path, repo: Path) -> None:
    """`resource add` hands the new resource to the indexer through the event hook."""
    home = tmp_path / "home"
    _run(home, "project", "create", "shop")
    out = _run(home, "resource", "add", str(repo), "--project", "shop")
    assert "Indexed shop into project shop" in out.stdout
    status = json.loads(_run(home, "index", "status", "--project", "shop", "--json").stdout)
    assert status and status[0]["file_count"] == 4
    _run(home, "resource", "remove", "shop", "--yes")
    assert json.loads(_run(home, "index", "status", "--json").stdout) == []


def _search(home: Path, query: str, project: str = "shop") -> list[str]:
    """Search the project's text index from a separate process, as another reader would."""
    code = (
        "import sys, json\n"
        "from cleveragents.config import load_config\n"
        "from cleveragents.plugins import PluginHost\n"
        "from cleveragents_acms.indexing.project_index import ProjectIndex\n"
        "host = PluginHost.load()\n"
        "index = ProjectIndex.open(sys.argv[2], host.registry, load_config(), create=False)\n"
        "hits = index.text.search(sys.argv[1], scope=frozenset(sys.argv[3:]), max_results=5)\n"
        "print(json.dumps([h.uko_uri for h in hits]))\n"
    )
    status = json.loads(_run(home, "index", "status", "--json").stdout)
    done = subprocess.run(
        [sys.executable, "-c", code, query, project, status[0]["resource_id"]],
        env={**os.environ, "CLEVERAGENTS_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    return json.loads(done.stdout) if done.returncode == 0 else []


def test_watch_makes_a_saved_file_searchable(tmp_path: Path, repo: Path) -> None:
    """With --watch, a newly saved function is searchable within two seconds."""
    home = tmp_path / "home"
    # stderr goes to a file: nothing can block on a full pipe, and it is kept for the report.
    errors = (tmp_path / "watch.err").open("w+")
    watcher = subprocess.Popen(
        [CLI, "index", str(repo), "--project", "shop", "--watch"],
        env={**os.environ, "CLEVERAGENTS_HOME": str(home), "PYTHONFAULTHANDLER": "1"},
        stdout=subprocess.PIPE,
        stderr=errors,
        text=True,
        # A test run started in the background (`cmd &` in a script) ignores SIGINT, and a
        # child that inherits that ignores Ctrl-C by design: give the watcher the default.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert watcher.stdout is not None
        deadline = time.monotonic() + 60
        while "watching" not in (line := watcher.stdout.readline()):
            assert time.monotonic() < deadline and line, "the watcher never started"
        time.sleep(0.3)
        (repo / "shop" / "pricing.py").write_text(
            "def apply_discount_code(code):\n    return 0.1\n"
        )
        saved = time.monotonic()
        found = False
        while time.monotonic() - saved < 10 and not found:
            found = any(
                "apply_discount_code" in uri for uri in _search(home, "apply_discount_code")
            )
        elapsed = time.monotonic() - saved
        assert found, "the saved file never became searchable"
        print(f"saved file searchable after {elapsed:.2f}s")
    finally:
        watcher.send_signal(signal.SIGINT)
        try:
            watcher.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            watcher.send_signal(signal.SIGABRT)  # the fault handler prints every stack
            watcher.communicate(timeout=30)
            errors.seek(0)
            pytest.fail(f"the watcher did not stop on Ctrl-C:\n{errors.read()[-8000:]}")
        finally:
            errors.close()


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found.update(int(c) for c in (task / "children").read_text().split())
        except OSError:
            continue
    return found


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting to be reaped (a container's init may never reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads child processes in /proc")
@pytest.mark.parametrize("how", ["kill -9", "Ctrl-C"])
def test_a_stopped_run_leaves_the_old_index_and_no_process_behind(tmp_path: Path, how: str) -> None:
    """`cleveragents index` killed (kill -9) or interrupted (Ctrl-C: SIGINT to its process
    group, as a terminal sends it) during a refresh of pip's sources (450 files): its
    analysis workers end too, the old index still answers, the status says the run was
    interrupted (not `indexing` for ever), and the next run does the work."""
    import pip

    corpus = tmp_path / "pip"
    shutil.copytree(Path(pip.__file__).parent, corpus, ignore=shutil.ignore_patterns("*.pyc"))
    home = tmp_path / "home"
    _run(home, "index", str(corpus), "--project", "pip")
    for source in corpus.rglob("*.py"):
        with source.open("a") as out:
            out.write("\n\ndef killed_run_marker():\n    pass\n")
    run = subprocess.Popen(
        [CLI, "index", str(corpus), "--project", "pip"],
        env={**os.environ, "CLEVERAGENTS_HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while not (workers := _children(run.pid)):  # the analysis pool is up: mid-refresh
        assert run.poll() is None and time.monotonic() < deadline, "no workers were started"
        time.sleep(0.02)
    time.sleep(0.5)
    if how == "kill -9":
        run.kill()
        run.wait()
    else:
        os.killpg(run.pid, signal.SIGINT)
        _, errors = run.communicate(timeout=60)
        assert run.returncode == 130
        assert "Interrupted: the index of" in errors and "Traceback" not in errors
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in workers), "workers outlived the killed run"

    (status,) = json.loads(_run(home, "index", "status", "--json").stdout)
    assert status["status"] == "stale" and "interrupted" in status["error_message"]
    assert any("PackageFinder" in uri for uri in _search(home, "PackageFinder", "pip"))
    assert not any("killed_run_marker" in uri for uri in _search(home, "killed_run_marker", "pip"))

    finished = json.loads(_run(home, "index", str(corpus), "--project", "pip", "--json").stdout)
    assert finished["index"]["status"] == "ready"
    assert any("killed_run_marker" in uri for uri in _search(home, "killed_run_marker", "pip"))


def test_the_progress_bar_names_the_writing_phase_after_the_files(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Once every file is analysed the bar stays full while the stores are written: it
    says what is being written instead of the last file's name."""
    import click

    from cleveragents_acms.indexing import runner

    shown: list[str] = []

    class Bar:
        def __init__(self, **options: object) -> None:
            self.show = options["item_show_func"]
            self.current_item: str | None = None

        def __enter__(self) -> Bar:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def update(self, steps: int, current_item: str | None = None) -> None:
            self.current_item = current_item
            self.render_progress()

        def render_progress(self) -> None:
            shown.append(self.show(self.current_item))  # type: ignore[operator]

    monkeypatch.setattr(click, "progressbar", Bar)
    with runner._progress("indexing demo", True) as (progress, on_phase):
        on_phase("discover")  # before any file: no bar yet, nothing to say
        progress(1, 2, "pkg/a.py")
        progress(2, 2, "pkg/" + "deep/" * 20 + "b.py")
        on_phase("resolve")
        on_phase("graph-wait")
    assert shown[0] == "pkg/a.py"
    assert shown[1].startswith("…") and shown[1].endswith("deep/b.py") and len(shown[1]) == 48
    assert shown[2:] == ["resolving names…", "waiting for the graph load…"]
