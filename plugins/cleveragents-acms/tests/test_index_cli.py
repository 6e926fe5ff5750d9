"""`cleveragents index` as a user runs it: the installed command, a real repository, real files."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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
    # Found as it was registered (without the ORM: ``storage.lookups``), not made again;
    # indexed into another project, the same resource is linked there too.
    assert again["resource"] == data["resource"]
    other = json.loads(_run(home, "index", str(repo), "--project", "shop2", "--json").stdout)
    assert other["resource"] == data["resource"]
    resources = json.loads(_run(home, "resource", "list", "--json").stdout)
    assert [sorted(p["project"] for p in r["projects"]) for r in resources] == [["shop", "shop2"]]
    forced = _run(home, "index", str(repo), "--project", "shop", "--force").stdout
    nodes = data["index"]["node_count"]
    assert "files 4 analysed, 0 unchanged, 0 removed" in forced
    assert f"nodes 0 new, 0 revised, 0 retired, {nodes} unchanged" in forced


_INDEXED_PROBE = """
import json
import os

from cleveragents import hookimpl


@hookimpl
def cleveragents_resource_indexed(resource, stats):
    with open(os.environ["INDEXED_PROBE_OUT"], "a") as out:
        dumped = resource.model_dump(mode="json")
        out.write(json.dumps([type(resource).__name__, dumped, stats["files"]]) + "\\n")
"""


def test_a_plugin_told_of_an_indexed_resource_gets_the_model_on_every_run(
    tmp_path: Path, repo: Path
) -> None:
    """A refresh reads the registered resource as stored, without building its pydantic
    model (``storage.lookups``); a plugin implementing ``cleveragents_resource_indexed``
    still gets the :class:`Resource` model each run, the one ``--json`` prints."""
    probe = tmp_path / "probe"
    dist = probe / "indexed_probe-0.1.dist-info"
    dist.mkdir(parents=True)
    (probe / "indexed_probe.py").write_text(_INDEXED_PROBE)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: indexed-probe\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[cleveragents]\nindexed-probe = indexed_probe\n")
    told = tmp_path / "told.jsonl"
    env = {
        **os.environ,
        "CLEVERAGENTS_HOME": str(tmp_path / "home"),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(probe), os.environ.get("PYTHONPATH")])),
        "INDEXED_PROBE_OUT": str(told),
    }
    printed = []
    for _ in range(2):
        done = subprocess.run(
            [CLI, "index", str(repo), "--project", "shop", "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        printed.append(json.loads(done.stdout)["resource"])
    calls = [json.loads(line) for line in told.read_text().splitlines()]
    assert calls == [["Resource", printed[0], 4], ["Resource", printed[1], 4]]
    assert printed[0] == printed[1]


def test_index_path_help_and_errors_read_as_the_command_is_typed(
    tmp_path: Path, repo: Path
) -> None:
    """`index PATH --help` and a wrong option show `cleveragents index [OPTIONS] PATH`
    (not the hidden command it runs) and point to `cleveragents index PATH --help`."""
    home = tmp_path / "home"
    shown = _run(home, "index", str(repo), "--help").stdout
    assert shown.startswith("Usage: cleveragents index [OPTIONS] PATH\n")
    assert "--no-wait" in shown
    wrong = _run(home, "index", str(repo), "--bogus", check=False)
    assert wrong.returncode == 2
    assert "Usage: cleveragents index [OPTIONS] PATH" in wrong.stderr
    assert "Try 'cleveragents index PATH --help' for help." in wrong.stderr
    assert "build" not in wrong.stderr


def test_a_run_waits_for_another_process_indexing_the_same_resource(
    tmp_path: Path, repo: Path
) -> None:
    """While another live process indexes the resource (its row says so), `index PATH`
    says which process it waits for and runs once that one ended; `--no-wait` fails at
    once, naming it. The other process lives until the waiting run has said so (no
    race with how long a run takes to start on a busy machine)."""
    import sqlite3
    import threading

    home = tmp_path / "home"
    _run(home, "index", str(repo), "--project", "shop")
    other = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    with sqlite3.connect(home / "cleveragents.db") as db:
        db.execute("UPDATE repo_indexes SET status = 'indexing', worker_pid = ?", (other.pid,))
    refused = _run(home, "index", str(repo), "--project", "shop", "--no-wait", check=False)
    assert refused.returncode != 0
    assert f"is being indexed by another process (pid {other.pid})" in refused.stderr
    assert other.poll() is None
    waiting = subprocess.Popen(
        [CLI, "index", str(repo), "--project", "shop", "--json"],
        env={**os.environ, "CLEVERAGENTS_HOME": str(home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    said = f"waiting for process {other.pid}, which is indexing"
    stderr: list[str] = []
    heard = threading.Event()

    def listen() -> None:
        assert waiting.stderr is not None
        for line in waiting.stderr:
            stderr.append(line)
            if said in line:
                heard.set()

    listener = threading.Thread(target=listen)
    listener.start()
    try:
        assert heard.wait(timeout=120), "".join(stderr)
        assert waiting.poll() is None  # it waits while the other one lives
    finally:
        assert other.stdin is not None
        other.stdin.close()  # the other process ends
        other.wait()
    assert waiting.stdout is not None
    stdout = waiting.stdout.read()  # the listener has stderr
    waiting.wait(timeout=300)
    listener.join()
    assert waiting.returncode == 0, "".join(stderr)
    assert json.loads(stdout)["index"]["status"] == "ready"


def test_index_status_names_the_files_with_problems(tmp_path: Path, repo: Path) -> None:
    """A file with a syntax error is indexed as far as it goes; the run's summary points
    to ``index status``, which names it with its error (``--json``: ``file_problems``),
    and a Python file in the encoding its coding line declares is no problem. Fixed,
    the problem is gone."""
    broken = repo / "shop" / "broken.py"
    broken.write_text("def ok():\n    return 1\n\ndef broken(:\n    pass\n")
    (repo / "shop" / "legacy.py").write_bytes(b"# -*- coding: latin-1 -*-\nGREETING = 'caf\xe9'\n")
    home = tmp_path / "home"
    out = _run(home, "index", str(repo), "--project", "shop").stdout
    assert "1 file problem(s), e.g. shop/broken.py" in out
    assert "(all of them: `cleveragents index status`)" in out
    table = _run(home, "index", "status").stdout
    assert "Files with problems in shop" in table and "shop/broken.py: " in table
    assert "SyntaxError" in table and "legacy.py" not in table
    status = json.loads(_run(home, "index", "status", "--json").stdout)
    assert list(status[0]["file_problems"]) == ["shop/broken.py"]
    found = _run(home, "index", "search", "café", "--project", "shop").stdout
    assert "legacy.py" in found
    broken.write_text("def ok():\n    return 1\n")
    _run(home, "index", str(repo), "--project", "shop")
    status = json.loads(_run(home, "index", "status", "--json").stdout)
    assert status[0]["file_problems"] == {} and status[0]["error_count"] == 0


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


def test_a_size_limit_of_zero_is_no_limit(tmp_path: Path, repo: Path) -> None:
    """``context.file.max-size`` and ``max-total-size`` set to 0 lift the limits instead of
    leaving every file with content out."""
    home = tmp_path / "home"
    (repo / "notes.txt").write_text("a line of notes, one of many\n" * 45_000)  # 1.3 MB
    default = json.loads(_run(home, "index", str(repo), "--project", "shop", "--json").stdout)
    assert default["run"]["skipped_reasons"].get("too-large") == 1
    _run(home, "config", "set", "context.file.max-size", "0")
    _run(home, "config", "set", "context.file.max-total-size", "0")
    lifted = json.loads(_run(home, "index", str(repo), "--project", "shop", "--json").stdout)
    assert "too-large" not in lifted["run"]["skipped_reasons"]
    assert "total-size-limit" not in lifted["run"]["skipped_reasons"]
    assert lifted["index"]["file_count"] == default["index"]["file_count"] + 1
    hits = json.loads(_run(home, "index", "search", "notes", "--project", "shop", "--json").stdout)
    assert any(hit["path"] == "notes.txt" for hit in hits["results"])


def test_an_edit_under_the_total_size_limit_leaves_the_other_files_indexed(
    tmp_path: Path, repo: Path
) -> None:
    """Files taken under ``context.file.max-total-size`` stay when an edit grows one of
    them past the limit by a little: the file walked last is not dropped for it."""
    home = tmp_path / "home"
    _run(home, "config", "set", "context.file.max-total-size", "1000")
    (repo / "shop" / "big.py").write_text("VALUE = 1\n" * 400)  # never fits
    taken = sum(p.stat().st_size for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts)
    taken -= (repo / "shop" / "big.py").stat().st_size + (
        repo / "build" / "generated.py"
    ).stat().st_size
    (repo / "shop" / "zz_last.py").write_text("X = 1\n" + "#" * (1000 - taken - 20) + "\n")
    first = json.loads(_run(home, "index", str(repo), "--project", "shop", "--json").stdout)
    assert first["run"]["skipped_reasons"]["total-size-limit"] == 1  # big.py
    with (repo / "README.md").open("a") as readme:
        readme.write("More about the shop, forty bytes of it.\n")
    again = json.loads(_run(home, "index", str(repo), "--project", "shop", "--json").stdout)
    assert (again["run"]["files_analyzed"], again["run"]["files_removed"]) == (1, 0)
    assert again["index"]["file_count"] == first["index"]["file_count"]


def test_skipped_source_files_are_named(tmp_path: Path, repo: Path) -> None:
    """A source file left out as generated is named in the summary and in ``--json``;
    expected skips (tool folders) are only counted."""
    home = tmp_path / "home"
    (repo / "shop" / "tables.py").write_text("# Auto-generated by make_tables.py\nT = 1\n")
    (repo / ".git").mkdir(exist_ok=True)
    (repo / "shop" / "gone.py").symlink_to(repo / "shop" / "missing.py")
    done = _run(home, "index", str(repo), "--project", "shop").stdout
    assert "    generated: shop/tables.py" in done
    assert "    broken-symlink: shop/gone.py" in done
    assert ".git/" not in done
    data = json.loads(_run(home, "index", str(repo), "--project", "shop", "--json").stdout)
    skipped = {s["path"]: s["reason"] for s in data["run"]["skipped"]}
    assert skipped["shop/tables.py"].startswith("generated")
    assert skipped[".git/"] == "excluded-dir"
    assert data["run"]["files_skipped"] == len(data["run"]["skipped"])


def test_a_folder_with_nothing_to_index_says_so(tmp_path: Path, repo: Path) -> None:
    """Indexing a folder of nothing but ignored or binary files warns, instead of a bare
    "0 files" a user could take for success; a folder with files does not warn."""
    home = tmp_path / "home"
    assets = tmp_path / "assets"
    assets.mkdir()
    (assets / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    done = _run(home, "index", str(assets), "--project", "assets").stdout
    assert "0 files" in done and "skipped: 1 binary" in done
    assert f"warning: nothing to index under {assets}" in done
    assert "warning: nothing to index" not in _run(home, "index", str(repo)).stdout


def test_a_revised_node_expands_as_it_was(tmp_path: Path, repo: Path) -> None:
    """After an edit and a re-index, ``context expand <uri>@<validFrom>`` prints the
    earlier version, marked as such, and the plain URI the current one."""
    home = tmp_path / "home"
    first = json.loads(_run(home, "index", str(repo), "--project", "shop", "--json").stdout)
    cart = repo / "shop" / "cart.py"
    cart.write_text(cart.read_text().replace("= quantity", "= quantity + 0"))
    _run(home, "index", str(repo), "--project", "shop")
    uri = f"https://cleveragents.ai/r/{first['resource']['resource_id']}/shop/cart.py#Cart.add_item"
    now = json.loads(_run(home, "context", "expand", uri, "--project", "shop", "--json").stdout)
    assert "quantity + 0" in now["content"]
    stamp = now["metadata"]["valid_from"]
    versions = json.loads(
        _run(home, "context", "assemble", "add_item history", "--project", "shop", "--json",
             "--strategy", "temporal-archaeology").stdout
    )  # fmt: skip
    earlier = [f["uko_node"] for f in versions["fragments"] if "@" in f["uko_node"]]
    assert earlier and not earlier[0].endswith(stamp)
    shown = _run(home, "context", "expand", earlier[0], "--project", "shop").stdout
    assert "[earlier version, until " in shown.splitlines()[0]
    assert "= quantity\n" in shown and "quantity + 0" not in shown


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


def _graph_facts(home: Path, project: str = "shop") -> set[tuple[str, str, str]]:
    """The project's current graph as (subject, predicate, object), stamps left out."""
    code = (
        "import sys, json\n"
        "import pyoxigraph as ox\n"
        "store = ox.Store.read_only(sys.argv[1])\n"
        "print(json.dumps([[str(q.subject), str(q.predicate), str(q.object)] for q in store\n"
        "    if not str(q.predicate).endswith('validFrom>')]))\n"
    )
    location = home / "index" / "graph" / project / "store"
    done = subprocess.run(
        [sys.executable, "-c", code, str(location)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return {tuple(fact) for fact in json.loads(done.stdout)}


def test_the_graph_and_the_vectors_can_be_added_later(tmp_path: Path, repo: Path) -> None:
    """The spec's progressive enhancement: ``index.graph.backend = "none"`` and
    ``index.vector.backend = "none"`` index text alone (context falls back to keyword
    search and says why); turned back on, the next run builds both from the node store,
    changes made while they were off included, as a cold index would have."""
    off = {
        "CLEVERAGENTS_INDEX__GRAPH__BACKEND": "none",
        "CLEVERAGENTS_INDEX__VECTOR__BACKEND": "none",
    }

    def run(home: Path, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            [CLI, *args],
            env={**os.environ, "CLEVERAGENTS_HOME": str(home), **(env or {})},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"{args}: {done.stderr}"
        return done.stdout

    home = tmp_path / "home"
    question = "How does the cart add an item?"
    run(home, "index", str(repo), "--project", "shop", env=off)
    assert not (home / "index" / "graph" / "shop" / "store").exists()
    assert not (home / "index" / "vector" / "shop").exists() or not any(
        (home / "index" / "vector" / "shop").iterdir()
    )
    text_only = run(home, "context", "assemble", question, "--project", "shop", env=off)
    assert "Cart.add_item" in text_only
    assert "arce needs graph; falling back to simple-keyword" in text_only
    no_graph = subprocess.run(
        [CLI, "index", "sparql", "ASK { ?s ?p ?o }", "--project", "shop"],
        env={**os.environ, "CLEVERAGENTS_HOME": str(home), **off},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert no_graph.returncode != 0
    assert no_graph.stderr.strip() == (
        "Error [404] NOT_FOUND: project 'shop' has no knowledge graph "
        '(index.graph.backend is "none")'
    )
    # A change while the graph is off reaches it later.
    cart = repo / "shop" / "cart.py"
    cart.write_text(
        cart.read_text()
        + "\n    def remove_item(self, sku: str) -> None:\n        del self.items[sku]\n"
    )
    run(home, "index", str(repo), "--project", "shop", env=off)

    def state(env: dict[str, str] | None = None) -> tuple[str, Any]:
        shown = json.loads(run(home, "index", "status", "--json", env=env))[0]
        return shown["graph"], shown["vectors"]

    assert state(off) == ("off", {"off": True})
    assert state() == ("behind", {"behind": True})  # on again, not yet built
    back = run(home, "index", str(repo), "--project", "shop")
    assert "files 0 analysed, 4 unchanged" in back
    assert "rebuilt graph: 10 current nodes loaded from the node store" in back
    assert "rebuilt vectors:" in back
    assert "rebuilt" not in run(home, "index", str(repo), "--project", "shop")
    graph, vectors = state()
    assert graph == "on" and vectors["count"] == 10
    full = run(home, "context", "assemble", question, "--project", "shop")
    assert "  - arce" in full and "falling back" not in full

    def same_as_cold(name: str) -> set[tuple[str, ...]]:
        """The graph's facts, checked against a cold index of the same files."""
        cold = tmp_path / name
        run(cold, "index", str(repo), "--project", "shop")
        resource_of = {
            h: json.loads(run(h, "index", "status", "--json"))[0]["resource_id"]
            for h in (home, cold)
        }
        facts = {
            tuple(t.replace(resource_of[home], "R") for t in fact) for fact in _graph_facts(home)
        }
        assert facts == {
            tuple(t.replace(resource_of[cold], "R") for t in fact) for fact in _graph_facts(cold)
        }
        return facts

    assert any("remove_item" in fact[0] for fact in same_as_cold("cold"))
    # Off again while a method goes, then on: the stale graph is replaced.
    cart.write_text(cart.read_text().split("\n    def remove_item")[0] + "\n")
    run(home, "index", str(repo), "--project", "shop", env=off)
    assert "rebuilt graph" in run(home, "index", str(repo), "--project", "shop")
    assert not any("remove_item" in fact[0] for fact in same_as_cold("cold-again"))


def test_the_text_index_cannot_be_turned_off(tmp_path: Path, repo: Path) -> None:
    """``none`` is for the graph and the vectors only; an unknown graph backend's error
    offers it."""

    def index(key: str, value: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [CLI, "index", str(repo), "--project", "shop"],
            env={**os.environ, "CLEVERAGENTS_HOME": str(tmp_path / "home"), key: value},
            capture_output=True,
            text=True,
            timeout=300,
        )

    done = index("CLEVERAGENTS_INDEX__TEXT__BACKEND", "none")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert 'index.text.backend cannot be "none"' in done.stderr
    typo = index("CLEVERAGENTS_INDEX__GRAPH__BACKEND", "oxigrap")
    assert typo.returncode != 0 and "Traceback" not in typo.stderr
    assert 'available: oxigraph, or "none" to index without it' in typo.stderr


def test_resource_add_indexes_immediately(tmp_path: Path, repo: Path) -> None:
    """`resource add` hands the new resource to the indexer through the event hook."""
    home = tmp_path / "home"
    _run(home, "project", "create", "shop")
    out = _run(home, "resource", "add", str(repo), "--project", "shop")
    assert "Indexed shop into project shop" in out.stdout
    assert "this run: files 4 analysed" in out.stdout  # the summary `index` prints
    status = json.loads(_run(home, "index", "status", "--project", "shop", "--json").stdout)
    assert status and status[0]["file_count"] == 4
    _run(home, "resource", "remove", "shop", "--yes")
    assert json.loads(_run(home, "index", "status", "--json").stdout) == []


def _search(home: Path, query: str, project: str = "shop") -> list[str]:
    """The URIs `index search` finds, as a user in another terminal would run it."""
    done = _run(home, "index", "search", query, "--project", project, "--json", check=False)
    return [r["uri"] for r in json.loads(done.stdout)["results"]] if done.returncode == 0 else []


def test_search_finds_code_by_any_spelling_of_its_name(tmp_path: Path, repo: Path) -> None:
    """`index search` ranks the node a query names first, whatever the identifier's
    spelling, and a table names its file and lines."""
    home = tmp_path / "home"
    _run(home, "index", str(repo), "--project", "shop")
    for query in ("add_item", "addItem", "add item"):
        found = json.loads(
            _run(home, "index", "search", query, "--project", "shop", "--json").stdout
        )
        best = found["results"][0]
        assert (best["path"], best["name"], best["lines"]) == (
            "shop/cart.py",
            "Cart.add_item",
            "7-8",
        )
        assert best["snippet"].startswith("def add_item(self, sku: str")
    table = _run(home, "index", "search", "cart", "--project", "shop", "--limit", "2").stdout
    lines = table.splitlines()
    assert lines[0].split() == ["SCORE", "LOCATION", "TYPE", "NAME"] and len(lines) == 3
    assert "shop/cart.py:4-8" in table
    # The apply phase's view leaves shop/ out: its search does not see it either.
    _run(home, "project", "context", "set", "shop", "--view", "apply", "--exclude-path", "shop/")
    applied = _run(home, "index", "search", "cart", "--project", "shop", "--phase", "apply")
    assert "shop/cart.py" not in applied.stdout and "shop/cart.py" in table
    nothing = _run(home, "index", "search", "zzyzx", "--project", "shop").stdout
    assert nothing.strip() == "Nothing in project shop matches 'zzyzx'."
    empty = _run(home, "index", "search", " ", "--project", "shop", check=False)
    assert empty.returncode != 0
    assert empty.stderr.strip() == "Error [422] VALIDATION_FAILED: give words to search for"


def test_search_and_sparql_see_only_their_project(tmp_path: Path, repo: Path) -> None:
    """Two projects' indexes answer only for their own resources."""
    home = tmp_path / "home"
    other = tmp_path / "depot"
    other.mkdir()
    (other / "stock.py").write_text("def add_item_to_stock(sku):\n    return sku\n")
    _run(home, "index", str(repo), "--project", "shop")
    _run(home, "index", str(other), "--project", "depot")
    in_shop = [u.rsplit("/", 1)[1] for u in _search(home, "add item")]
    assert in_shop[0] == "cart.py#Cart.add_item"
    assert not any(u.startswith("stock.py") for u in in_shop)
    in_depot = [u.rsplit("/", 1)[1] for u in _search(home, "add item", "depot")]
    assert in_depot == ["stock.py#add_item_to_stock", "stock.py"]
    names = "SELECT ?name WHERE { ?f a uko-py:Function ; uko:name ?name }"
    for project, expected in (("shop", []), ("depot", [{"name": "add_item_to_stock"}])):
        rows = json.loads(
            _run(home, "index", "sparql", names, "--project", project, "--json").stdout
        )
        assert rows == {"variables": ["name"], "rows": expected}


def test_sparql_answers_each_query_form(tmp_path: Path, repo: Path) -> None:
    """SELECT prints a table, ASK true or false, CONSTRUCT its triples; `-` reads the
    query from stdin; --history also matches retired versions; a bad query is one line."""
    home = tmp_path / "home"
    _run(home, "index", str(repo), "--project", "shop")
    select = "SELECT ?m ?name WHERE { ?m a uko-py:Method ; uko:name ?name }"
    table = _run(home, "index", "sparql", select, "--project", "shop").stdout.splitlines()
    assert table[0].split() == ["M", "NAME"]
    assert table[1].endswith("add_item") and "shop/cart.py#Cart.add_item" in table[1]
    ask = _run(home, "index", "sparql", "ASK { ?c a uko-py:Class ; uko:name 'Cart' }",
               "--project", "shop").stdout  # fmt: skip
    assert ask.strip() == "true"
    construct = "CONSTRUCT { ?c uko:contains ?m } WHERE { ?c a uko-py:Class ; uko:contains ?m }"
    triples = json.loads(
        _run(home, "index", "sparql", construct, "--project", "shop", "--json").stdout
    )["triples"]
    assert [(s.rsplit("#", 1)[1], o.rsplit("#", 1)[1]) for s, _, o in triples] == [
        ("Cart", "Cart.add_item")
    ]
    from_stdin = subprocess.run(
        [CLI, "index", "sparql", "-", "--project", "shop", "--json"],
        input="ASK { ?m uko:name 'add_item' }",
        env={**os.environ, "CLEVERAGENTS_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(from_stdin.stdout) == {"boolean": True}
    before = datetime.now(UTC).isoformat()
    cart = repo / "shop" / "cart.py"
    cart.write_text(cart.read_text().replace("add_item", "put_item"))
    _run(home, "index", str(repo), "--project", "shop")
    gone = "ASK { ?m uko:name 'add_item' }"
    assert _run(home, "index", "sparql", gone, "--project", "shop").stdout.strip() == "false"
    kept = _run(home, "index", "sparql", gone, "--project", "shop", "--history").stdout
    assert kept.strip() == "true"
    # --at: the graph as it stood before the rename, each version under its node's URI
    named = "SELECT ?m ?name WHERE { ?m a uko-py:Method ; uko:name ?name }"
    then = json.loads(
        _run(home, "index", "sparql", named, "--project", "shop", "--at", before, "--json").stdout
    )
    assert then["at"] == before
    assert [(r["m"].rsplit("/", 1)[1], r["name"]) for r in then["rows"]] == [
        ("cart.py#Cart.add_item", "add_item")
    ]
    now = _run(home, "index", "sparql", named, "--project", "shop", "--json").stdout
    assert [r["name"] for r in json.loads(now)["rows"]] == ["put_item"]
    vague = _run(home, "index", "sparql", gone, "--project", "shop", "--at", "last week",
                 check=False)  # fmt: skip
    assert vague.returncode == 2 and "is not an ISO 8601 time" in vague.stderr
    both = _run(home, "index", "sparql", gone, "--project", "shop", "--at", before, "--history",
                check=False)  # fmt: skip
    assert both.returncode == 2 and "--at and --history" in both.stderr
    bad = _run(home, "index", "sparql", "SELEC ?x", "--project", "shop", check=False)
    assert bad.returncode != 0 and len(bad.stderr.strip().splitlines()) == 1
    assert bad.stderr.startswith("Error [422] VALIDATION_FAILED: invalid SPARQL query")


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
def test_resource_add_interrupted_says_how_to_finish(tmp_path: Path) -> None:
    """Ctrl-C during the indexing `resource add` starts: the resource stays registered,
    the status says the run was interrupted, the message says how to finish (no
    traceback, no bare "Aborted!"), and `cleveragents index` finishes it."""
    import pip

    corpus = tmp_path / "pip"
    shutil.copytree(Path(pip.__file__).parent, corpus, ignore=shutil.ignore_patterns("*.pyc"))
    home = tmp_path / "home"
    _run(home, "project", "create", "pip")
    run = subprocess.Popen(
        [CLI, "resource", "add", str(corpus), "--project", "pip"],
        env={**os.environ, "CLEVERAGENTS_HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while not _children(run.pid):  # the analysis pool is up
        assert run.poll() is None and time.monotonic() < deadline, "no workers were started"
        time.sleep(0.02)
    os.killpg(run.pid, signal.SIGINT)
    _, errors = run.communicate(timeout=60)
    assert run.returncode == 130
    assert "Interrupted: the index of" in errors
    assert "Traceback" not in errors and "Aborted" not in errors
    (status,) = json.loads(_run(home, "index", "status", "--json").stdout)
    assert "interrupted" in status["error_message"]
    out = _run(home, "index", str(corpus), "--project", "pip").stdout
    assert "Indexed pip into project pip" in out
    (status,) = json.loads(_run(home, "index", "status", "--json").stdout)
    assert status["status"] == "ready" and status["file_count"] > 400


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
    says what is being written instead of the last file's name, and how many nodes the
    graph phase wrote. A run that only removed files has a bar of the graph's nodes."""
    import click

    from cleveragents_acms.indexing import runner

    shown: list[str] = []
    bars: list[Bar] = []

    class Bar:
        def __init__(self, **options: object) -> None:
            self.show = options["item_show_func"]
            self.length = options["length"]
            self.pos = 0
            self.current_item: str | None = None
            bars.append(self)

        def __enter__(self) -> Bar:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def update(self, steps: int, current_item: str | None = None) -> None:
            self.pos += steps
            self.current_item = current_item
            self.render_progress()

        def render_progress(self) -> None:
            shown.append(self.show(self.current_item))  # type: ignore[operator]

    monkeypatch.setattr(click, "progressbar", Bar)
    with runner._progress("indexing demo", True) as (progress, on_phase, on_phase_progress):
        on_phase("discover")  # before any file: no bar yet, nothing to say
        progress(1, 2, "pkg/a.py")
        progress(2, 2, "pkg/" + "deep/" * 20 + "b.py")
        on_phase("resolve")
        on_phase("graph")
        on_phase_progress("graph", 5000, 125412)
        on_phase("graph-wait")
    assert shown[0] == "pkg/a.py"
    assert shown[1].startswith("…") and shown[1].endswith("deep/b.py") and len(shown[1]) == 48
    assert shown[2:] == [
        "resolving names…",
        "writing the graph…",
        "writing the graph (5,000 of 125,412 nodes)…",
        "waiting for the graph load…",
    ]
    shown.clear()
    with runner._progress("indexing demo", True) as (progress, on_phase, on_phase_progress):
        on_phase("graph")  # no file analysed: no bar yet
        on_phase_progress("graph", 5000, 125412)
        on_phase_progress("graph", 10000, 125412)
        on_phase("commit")
    assert (bars[-1].length, bars[-1].pos) == (125412, 10000)
    assert shown == ["writing the graph (nodes)…"] * 2 + ["committing…"]


def test_index_compact_writes_the_text_index_anew_without_replaced_documents(
    tmp_path: Path, repo: Path
) -> None:
    """`index compact` drops the documents an edit replaced, says what it did, leaves the
    search answering as before, and has nothing to do a second time."""
    home = tmp_path / "home"
    _run(home, "index", str(repo), "--project", "shop")
    cart = repo / "shop" / "cart.py"
    cart.write_text("# moved down\n" + cart.read_text())
    _run(home, "index", str(repo), "--project", "shop")
    first = json.loads(_run(home, "index", "compact", "--project", "shop", "--json").stdout)
    assert len(first) == 1 and first[0]["project"] == "shop" and first[0]["compacted"]
    assert first[0]["replaced"] >= 3  # the module, the class and its method moved
    found = _run(home, "index", "search", "add item", "--project", "shop", "--json").stdout
    hits = json.loads(found)["results"]
    assert hits[0]["name"] == "Cart.add_item" and hits[0]["lines"] == "8-9"
    again = _run(home, "index", "compact").stdout
    assert "shop: no replaced document; nothing to do" in again
    unknown = _run(home, "index", "compact", "--project", "nowhere", check=False)
    assert unknown.returncode == 2 and "has no index" in unknown.stderr
