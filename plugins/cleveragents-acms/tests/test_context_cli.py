"""`cleveragents context …` and `project context …` as a user runs them: the installed command."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cleveragents.models.context import ContextFragment, FragmentProvenance
from cleveragents_acms.cli._context_common import contiguous_runs, echo_run
from cleveragents_acms.pipeline.tokenizers import get_tokenizer

QUESTION = "How does the plugin host keep a failing plugin from taking the host down?"
CL100K = get_tokenizer("cl100k")
Run = Callable[..., Any]


def assemble_json(run: Run, *args: str) -> dict[str, Any]:
    return json.loads(
        run("context", "assemble", QUESTION, "--project", "demo", "--json", *args).stdout
    )


def arce_fragments(run: Run, question: str, root: Path, budget: int) -> list[dict[str, Any]]:
    """The fragments arce alone delivers for ``question`` about the code at ``root``."""
    done = run(
        "context", "assemble", question, "--path", str(root),
        "--budget", str(budget), "--strategy", "arce", "--json",
    )  # fmt: skip
    fragments: list[dict[str, Any]] = json.loads(done.stdout)["fragments"]
    return fragments


def cost(data: dict[str, Any]) -> int:
    return sum(CL100K.count(f["content"]) for f in data["fragments"]) + CL100K.count(
        data["preamble"] or ""
    )


@pytest.mark.parametrize("budget", [30, 300, 3000])
def test_assembled_json_stays_within_the_budget(ctx_cli: Run, budget: int) -> None:
    """The JSON context, preamble included, never exceeds --budget by the real tokenizer."""
    data = assemble_json(ctx_cli, "--budget", str(budget))
    assert cost(data) <= budget
    assert data["budget"]["max_tokens"] == budget
    assert data["budget_breakdown"]["source"] == "explicit"
    if budget >= 300:
        assert data["fragments"]


def test_an_installed_tokenizer_plugin_counts_for_its_models(ctx_cli: Run) -> None:
    """--model picks the installed tokenizer that claims it (the probe's word counter);
    a model no tokenizer claims is counted with cl100k, and the output says so."""
    data = assemble_json(ctx_cli, "--budget", "200", "--model", "probe-large")
    assert data["tokenizer"] == "words"
    words = sum(len(f["content"].split()) for f in data["fragments"])
    assert data["fragments"] and words + len((data["preamble"] or "").split()) <= 200
    assert cost(data) > 200  # counted in words, not in cl100k tokens
    shown = ctx_cli(
        "context", "assemble", QUESTION, "--project", "demo", "--budget", "300",
        "--model", "claude-opus-4",
    ).stdout  # fmt: skip
    assert ", cl100k); strategies:" in shown
    assert "no installed tokenizer counts tokens as model 'claude-opus-4' does" in shown


def test_the_same_question_gets_the_same_context_in_every_process(ctx_cli: Run) -> None:
    """Nothing depends on Python's per-process string hashing (set order, tie-breaks), nor
    on which strategy finished first: the fragments and the dropped list are the same."""

    def delivered(seed: str) -> tuple[list[tuple[str, int]], list[tuple[str, int | None]]]:
        data = json.loads(
            ctx_cli(
                "context", "assemble", QUESTION, "--project", "demo", "--json",
                "--budget", "1500", PYTHONHASHSEED=seed,
            ).stdout
        )  # fmt: skip
        left_out = [(d["uko_node"], d["delivered_depth"]) for d in data["dropped"]]
        return [(f["uko_node"], f["detail_depth"]) for f in data["fragments"]], left_out

    first = delivered("1")
    assert first[0] and first[1]
    assert delivered("2") == first


def test_assemble_prints_fragments_totals_and_dropped(ctx_cli: Run, ctx_corpus: Path) -> None:
    """Preamble, each fragment with path:start-end, depth, score and strategy, totals, dropped."""
    out = ctx_cli("context", "assemble", QUESTION, "--project", "demo", "--budget", "1200").stdout
    assert out.startswith("Context: ")
    # One header per fragment, or per run of short ones on consecutive lines: [first-last].
    headers = re.findall(
        r"^--- \[(\d+)(?:-(\d+))?\]  (\S+):(\d+)-(\d+)  depth (\d)  score (0\.\d+)  "
        r"probe-keyword  (\d+) tokens",
        out,
        flags=re.MULTILINE,
    )
    assert headers and headers[0][0] == "1"
    shown = 0
    for first, last, path, start, end, _depth, _score, _tokens in headers:
        assert int(first) == shown + 1
        shown = int(last or first)
        assert (ctx_corpus / path).is_file()
        assert 1 <= int(start) <= int(end) <= len((ctx_corpus / path).read_text().splitlines())
    total = re.search(
        r"^Total: (\d+) fragments, (\d+) tokens \+ (\d+) preamble = (\d+) of 1200",
        out,
        flags=re.MULTILINE,
    )
    assert total and int(total.group(4)) <= 1200 and int(total.group(1)) == shown
    assert re.search(
        r"^Dropped or downgraded: \d+ dropped, \d+ re-rendered shallower", out, flags=re.MULTILINE
    )
    assert "cleveragents context expand URI --project demo" in out


def _line_fragment(path: str, start: int, end: int, **kwargs: Any) -> ContextFragment:
    return ContextFragment(
        uko_node=f"https://cleveragents.ai/r/R/{path}#n{start}",
        content="\n".join(f"line {n}" for n in range(start, end + 1)),
        token_count=end - start + 1,
        detail_depth=kwargs.pop("depth", 9),
        provenance=FragmentProvenance(
            resource_id="R", path=path, start_line=start, end_line=end, strategy="arce"
        ),
        **kwargs,
    )


def test_short_fragments_on_consecutive_lines_share_one_header() -> None:
    """A file's imports come as a fragment each: printed as one run, they take one header.
    Not joined: a gap, another file or depth, a long fragment, or a flagged one."""
    imports = [_line_fragment("a.py", n, n) for n in (1, 2, 3)]
    gap = _line_fragment("a.py", 5, 5)
    other_file = _line_fragment("b.py", 6, 6)
    shallower = _line_fragment("b.py", 7, 7, depth=4)
    long_one = _line_fragment("b.py", 8, 30)
    after_long = _line_fragment("b.py", 31, 31)
    stale = _line_fragment("b.py", 32, 32, metadata={"stale": "true"})
    fragments = [*imports, gap, other_file, shallower, long_one, after_long, stale]

    runs = contiguous_runs(fragments)

    assert [len(run) for run in runs] == [3, 1, 1, 1, 1, 1, 1]
    assert runs[0] == imports and [f for run in runs for f in run] == fragments


def test_a_run_prints_its_span_every_uri_and_every_line(capsys: pytest.CaptureFixture[str]) -> None:
    run = [_line_fragment("a.py", n, n) for n in (4, 5, 6)]
    echo_run(4, run, "0.900")
    header, uris, *text = capsys.readouterr().out.splitlines()
    assert header == "--- [4-6]  a.py:4-6  depth 9  score 0.900  arce  3 tokens  (3 fragments)"
    assert uris.split() == ["https://cleveragents.ai/r/R/a.py", "#n4", "#n5", "#n6"]
    assert text == ["line 4", "line 5", "line 6", ""]


def test_expand_renders_a_dropped_node(ctx_cli: Run) -> None:
    """A URI from the dropped list renders with provenance, at full or at a given depth."""
    data = assemble_json(ctx_cli, "--budget", "400")
    dropped = next(d for d in data["dropped"] if d["delivered_depth"] is None)
    full = json.loads(
        ctx_cli("context", "expand", dropped["uko_node"], "--project", "demo", "--json").stdout
    )
    assert full["uko_node"] == dropped["uko_node"] and full["provenance"]["path"] == dropped["path"]
    assert full["detail_depth"] == dropped["detail_depth"] and full["content"].strip()
    text = ctx_cli(
        "context", "expand", dropped["uko_node"], "--project", "demo", "--depth", "0"
    ).stdout
    assert text.startswith("--- ") and f"{dropped['path']}:" in text.splitlines()[0]
    missing = ctx_cli(
        "context", "expand", dropped["uko_node"] + "x", "--project", "demo", check=False
    )
    assert missing.returncode == 1 and missing.stderr.startswith("Error [404] NOT_FOUND: no node")


def test_expand_takes_what_focus_takes(ctx_cli: Run) -> None:
    """PATH#QUALNAME, PATH:LINE (the innermost node there) and a unique name name one node;
    a name several nodes have is an error listing them."""

    def expanded(item: str) -> dict[str, Any]:
        out = ctx_cli("context", "expand", item, "--project", "demo", "--json", "--depth", "4")
        return json.loads(out.stdout)

    load = expanded("cleveragents/plugins.py#PluginHost.load")
    assert load["uko_node"].endswith("/cleveragents/plugins.py#PluginHost.load")
    assert "def load(" in load["content"]
    start = load["provenance"]["start_line"]
    assert expanded(f"cleveragents/plugins.py:{start + 1}")["uko_node"] == load["uko_node"]
    assert expanded("PluginHost")["uko_node"].endswith("/cleveragents/plugins.py#PluginHost")

    several = ctx_cli("context", "expand", "__init__", "--project", "demo", check=False)
    assert several.returncode == 1
    (line,) = several.stderr.strip().splitlines()  # one line, listing the URIs
    assert "'__init__' names" in line
    assert len([word for word in line.split() if word.endswith(".__init__")]) >= 2
    unknown = ctx_cli("context", "expand", "no_such_name_here", "--project", "demo", check=False)
    assert unknown.returncode == 1 and "PATH#QUALNAME, PATH:LINE" in unknown.stderr


def test_inspect_and_simulate(ctx_cli: Run) -> None:
    """inspect shows the last assembly's stages and scopes; simulate is a dry run without text."""
    assembled = assemble_json(ctx_cli, "--budget", "900")
    text = ctx_cli("context", "inspect", "--project", "demo").stdout
    assert f"Assembly {assembled['assembly_id']}" in text
    for slot in ("strategy-selector", "budget-packer", "skeleton-compressor"):
        assert re.search(
            rf"^{slot}\s+\w+\s+builtin:\w+\s+built-in\s+[\d.]+\s+ok$", text, flags=re.MULTILINE
        )
    report = json.loads(ctx_cli("context", "inspect", "--project", "demo", "--json").stdout)
    assert len(report["stages"]) == 10 and report["strategies"][0]["name"] == "probe-keyword"
    assert len(report["dropped"]) == len(assembled["dropped"])

    simulated = ctx_cli(
        "context", "simulate", QUESTION, "--project", "demo", "--budget", "900"
    ).stdout
    assert "Allocation per strategy:" in simulated and "probe-keyword" in simulated
    assert "def " not in simulated  # no content
    again = json.loads(ctx_cli("context", "inspect", "--project", "demo", "--json").stdout)
    assert again["assembly_id"] == assembled["assembly_id"]  # the dry run recorded nothing


def test_bad_input_is_one_line(ctx_cli: Run, tmp_path: Path) -> None:
    """Each mistake is one line on stderr and a non-zero exit, never a traceback."""
    cases = [
        (
            ("context", "assemble", "", "--project", "demo"),
            "Error [422] VALIDATION_FAILED: the request is empty: give a question or --focus",
        ),
        (
            ("context", "assemble", "x", "--project", "demo", "--budget", "0"),
            "Error [422] VALIDATION_FAILED: budget must be a positive number of tokens, got 0",
        ),
        (
            ("context", "assemble", "x", "--project", "demo", "--budget", "-3"),
            "Error [422] VALIDATION_FAILED: budget must be a positive number of tokens, got -3",
        ),
        (
            ("context", "assemble", "x", "--project", "demo", "--strategy", "nope"),
            "Error [404] NOT_FOUND: unknown strategy 'nope' (available: ",
        ),
        (
            ("context", "assemble", "x", "--project", "ghost"),
            "Error [404] NOT_FOUND: project 'ghost' not found",
        ),
        (
            ("context", "assemble", "x", "--project", "demo", "--depth", "HUGE"),
            "Error [422] VALIDATION_FAILED: unknown detail level 'HUGE'",
        ),
    ]
    for args, expected in cases:
        done = ctx_cli(*args, check=False)
        assert done.returncode == 1, args
        assert done.stderr.strip().startswith(expected), done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
        if "strategy" in expected:
            assert "probe-keyword" in done.stderr  # the valid names are listed
    ctx_cli("project", "create", "empty")
    missing = ctx_cli("context", "assemble", "x", "--project", "empty", check=False)
    assert missing.stderr.strip() == (
        "Error [404] NOT_FOUND: project 'empty' has no index: "
        "run `cleveragents index PATH --project empty`"
    )
    # indexed, but nothing in the folder could be indexed: said so, not "no index"
    nothing = tmp_path / "nothing"
    nothing.mkdir()
    (nothing / "blob.bin").write_bytes(bytes(range(256)) * 8)
    ctx_cli("index", str(nothing), "--project", "nothing")
    hollow = ctx_cli("context", "assemble", "x", "--project", "nothing", check=False)
    assert hollow.returncode == 1 and "Traceback" not in hollow.stderr
    assert hollow.stderr.strip() == (
        f"Error [404] NOT_FOUND: project 'nothing' is indexed but holds no files ({nothing}): "
        "nothing to assemble from (`cleveragents index PATH --project nothing` lists the "
        "files it skipped and why)"
    )


def test_path_indexes_first_and_fresh_text_is_delivered(ctx_cli: Run, tmp_path: Path) -> None:
    """--path indexes incrementally; an edit after indexing is re-rendered from disk."""
    root = tmp_path / "shop"
    (root / "shop").mkdir(parents=True)
    cart = root / "shop" / "cart.py"
    cart.write_text('"""Cart."""\n\n\ndef add_item_to_cart(cart, sku):\n    cart.append(sku)\n')
    first = ctx_cli("context", "assemble", "add item to cart", "--path", str(root), "--json")
    data = json.loads(first.stdout)
    assert "Indexed shop into project shop" in first.stderr
    assert data["project"] == "shop"
    # the function is delivered (alone, or inside its whole file)
    assert any("def add_item_to_cart(cart, sku)" in f["content"] for f in data["fragments"])
    cart.write_text(cart.read_text().replace("cart.append(sku)", "cart.insert(0, sku)  # newest"))
    text = ctx_cli("context", "assemble", "add item to cart", "--project", "shop").stdout
    assert "cart.insert(0, sku)  # newest" in text and "[refreshed]" in text
    again = ctx_cli("context", "assemble", "add item to cart", "--path", str(root), "--json")
    assert "1 analysed" in again.stderr


def test_an_implementation_too_long_to_show_comes_as_its_signature(
    ctx_cli: Run, tmp_path: Path
) -> None:
    """TypeScript: overload signatures, then an implementation whose JSDoc and body fit
    no small budget. The implementation comes as its signature, ranked above the overloads
    it implements, instead of being left out."""
    root = tmp_path / "streams"
    (root / "src").mkdir(parents=True)
    doc = "\n".join(
        f" * Paragraph {i}: switching to the newest inner stream unsubscribes the previous "
        "inner stream, so only the latest projection emits values."
        for i in range(12)
    )
    body = "\n".join(
        f"  const step{i} = inner.subscribe(value => emit(value, {i}));" for i in range(40)
    )
    (root / "src" / "switch.ts").write_text(
        "import { Stream } from './stream';\n\n"
        "export function switchTo<T>(project: (value: T) => Stream<T>): Stream<T>;\n"
        "export function switchTo<T, R>(project: (value: T) => Stream<R>, "
        "select: (value: R) => R): Stream<R>;\n"
        f"/**\n{doc}\n */\n"
        "export function switchTo<T, R>(project: (value: T) => Stream<R>, "
        "select?: (value: R) => R): Stream<R> {\n"
        f"  let inner: Stream<R> | null = null;\n{body}\n  return inner as Stream<R>;\n}}\n"
    )
    (root / "src" / "stream.ts").write_text(
        "export class Stream<T> {\n  subscribe(next: (value: T) => void): () => void {\n"
        "    return () => {};\n  }\n}\n"
    )
    question = "How does switchTo unsubscribe from the previous inner stream?"
    fragments = arce_fragments(ctx_cli, question, root, 250)
    score = {f["uko_node"].rsplit("#", 1)[-1]: f["relevance_score"] for f in fragments}
    implementation = next(f for f in fragments if f["uko_node"].endswith("#switchTo~3"))
    assert implementation["detail_depth"] < 9
    assert "select?: (value: R) => R): Stream<R> { ... }" in implementation["content"]
    assert score["switchTo~3"] > max(score.get("switchTo", 0.0), score.get("switchTo~2", 0.0))


def test_imports_take_a_tenth_of_a_small_budget_at_most(ctx_cli: Run, tmp_path: Path) -> None:
    """A file's imports come with it (a fix often adds one), but a small budget is for code."""
    root = tmp_path / "billing"
    root.mkdir()
    imports = "".join(f"import billing_helper_{i}\n" for i in range(30))
    (root / "invoice.py").write_text(
        f"{imports}\n\ndef total_invoice_amount(lines):\n"
        "    return sum(line.amount for line in lines)\n"
    )
    fragments = arce_fragments(ctx_cli, "How is the total invoice amount computed?", root, 200)
    assert any("def total_invoice_amount(lines)" in f["content"] for f in fragments)
    imported = [f for f in fragments if f["content"].startswith("import billing_helper_")]
    assert imported and sum(f["token_count"] for f in imported) <= 20


def test_an_index_built_by_other_analyzers_is_noted(ctx_cli: Run, ctx_home: Path) -> None:
    """After an upgrade, a context is still assembled from the index, with a note saying
    which analyzers changed and what re-analyses the files."""
    import sqlite3

    with sqlite3.connect(ctx_home / "cleveragents.db") as db:
        built_with = db.execute("SELECT analyzers FROM repo_indexes").fetchone()[0]
        assert built_with and "python@" in built_with
        older = " ".join(
            "python@0.0.1" if tag.startswith("python@") else tag for tag in built_with.split()
        )
        db.execute("UPDATE repo_indexes SET analyzers = ?", (older,))
    notes = assemble_json(ctx_cli, "--budget", "2000")["notes"]
    noted = [n for n in notes if "built by other analyzers" in n]
    assert noted and "python@0.0.1 -> python@" in noted[0]
    assert "cleveragents index PATH --project demo" in noted[0]


def test_failing_custom_stage_is_reported(ctx_cli: Run) -> None:
    """A configured stage that raises is replaced; notes, preamble and inspect say so."""
    env = {
        "CLEVERAGENTS_CONTEXT__PIPELINE__FRAGMENT_SCORER": "context_probe_strategy:RaisingScorer"
    }
    data = json.loads(
        ctx_cli(
            "context",
            "assemble",
            QUESTION,
            "--project",
            "demo",
            "--budget",
            "2000",
            "--json",
            **env,
        ).stdout
    )
    assert data["fragments"] and cost(data) <= 2000
    assert any(
        "fragment-scorer RaisingScorer raised RuntimeError: scorer exploded" in n
        for n in data["notes"]
    )
    assert data["preamble"].startswith("Warning: fragment-scorer RaisingScorer")
    text = ctx_cli("context", "inspect", "--project", "demo").stdout
    assert re.search(
        r"^fragment-scorer\s+RaisingScorer\s+context_probe_strategy:RaisingScorer"
        r"\s+global\s+[\d.]+\s+replaced$",
        text,
        flags=re.MULTILINE,
    )
    assert "! fragment-scorer RaisingScorer raised RuntimeError" in text


def test_project_context_set_show_simulate(ctx_cli: Run) -> None:
    """Views and settings persist; show resolves inheritance; simulate uses them."""
    ctx_cli(
        "project",
        "context",
        "set",
        "demo",
        "--view",
        "execute",
        "--exclude-path",
        "cleveragents/testing/",
        "--max-file-size",
        "200000",
    )
    ctx_cli(
        "project",
        "context",
        "set",
        "demo",
        "--hot-max-tokens",
        "4000",
        "--default-breadth",
        "1",
        "--default-depth",
        "SIGNATURES",
        "--skeleton-ratio",
        "0.2",
        "--pipeline",
        "fragment-orderer=relevance-coherence",
        "--no-auto-refresh",
    )
    shown = json.loads(ctx_cli("project", "context", "show", "demo", "--json").stdout)
    assert shown["views"]["apply"]["inherits_from"] == "execute"
    assert shown["views"]["apply"]["exclude_paths"] == ["cleveragents/testing/"]
    assert shown["views"]["strategize"]["inherits_from"] is None
    settings = shown["settings"]
    assert (settings["hot_max_tokens"], settings["default_depth"], settings["auto_refresh"]) == (
        4000,
        "SIGNATURES",
        False,
    )
    orderer = next(p for p in shown["pipeline"] if p["slot"] == "fragment-orderer")
    assert (orderer["scope"], orderer["chosen by"]) == ("project", "relevance-coherence")
    text = ctx_cli("project", "context", "show", "demo").stdout
    assert re.search(
        r"^apply\s+inherits execute\s+all\s+-cleveragents/testing/", text, flags=re.MULTILINE
    )
    report = json.loads(
        ctx_cli(
            "project",
            "context",
            "simulate",
            "demo",
            QUESTION,
            "--phase",
            "apply",
            "--budget",
            "3000",
            "--json",
        ).stdout
    )
    assert report["dry_run"] and report["fragments"]
    assert not any(f["path"].startswith("cleveragents/testing/") for f in report["fragments"])
    assert report["request"]["breadth"] == 1 and report["request"]["depth"] == "SIGNATURES"


def test_project_context_set_rejects_bad_values(ctx_cli: Run) -> None:
    """Zero sizes, unknown slots, components and strategies: one-line errors listing valid ones."""
    cases = [
        (("--max-file-size", "0"), "Error [422] VALIDATION_FAILED: --max-file-size:"),
        (("--max-total-size", "-1"), "Error [422] VALIDATION_FAILED: --max-total-size:"),
        (
            ("--pipeline", "nope=x"),
            "Error [422] VALIDATION_FAILED: unknown pipeline slot 'nope' (slots: strategy-selector",
        ),
        (
            ("--pipeline", "fragment-scorer=nope"),
            "Error [404] NOT_FOUND: unknown fragment-scorer 'nope' (available:",
        ),
        (("--strategy", "nope"), "Error [404] NOT_FOUND: unknown strategy 'nope' (available: "),
        (("--skeleton-ratio", "2"), "Error [422] VALIDATION_FAILED: --skeleton-ratio:"),
    ]
    for args, expected in cases:
        done = ctx_cli("project", "context", "set", "demo", *args, check=False)
        assert done.returncode == 1 and done.stderr.strip().startswith(expected), done.stderr
    missing = ctx_cli("project", "context", "show", "ghost", check=False)
    assert missing.stderr.strip() == "Error [404] NOT_FOUND: project 'ghost' not found"


def test_context_entries_through_the_cli(ctx_cli: Run, ctx_corpus: Path) -> None:
    """add (node, file range, note), list by tier and role, show, promote, demote, clear."""
    data = assemble_json(ctx_cli, "--budget", "600")
    uri = data["fragments"][0]["uko_node"]
    node = json.loads(
        ctx_cli("context", "add", uri, "--project", "demo", "--tier", "hot", "--json").stdout
    )
    assert node["tier"] == "hot" and node["uko_node"] == uri
    path = ctx_corpus / "cleveragents" / "paths.py"
    ranged = json.loads(
        ctx_cli("context", "add", f"{path}:1-3", "--project", "demo", "--json").stdout
    )
    assert ranged["provenance"]["path"] == "cleveragents/paths.py"
    assert ranged["content"] == "\n".join(path.read_text().splitlines()[:3])
    note = json.loads(
        ctx_cli(
            "context",
            "add",
            "--text",
            "Use async everywhere",
            "--project",
            "demo",
            "--tier",
            "cold",
            "--json",
        ).stdout
    )
    listed = json.loads(ctx_cli("context", "list", "--project", "demo", "--json").stdout)
    assert [e["tier"] for e in listed] == ["hot", "warm", "cold"]
    reviewer = json.loads(
        ctx_cli("context", "list", "--project", "demo", "--role", "reviewer", "--json").stdout
    )
    assert [e["fragment_id"] for e in reviewer] == [node["fragment_id"]]
    shown = ctx_cli("context", "show", note["fragment_id"]).stdout
    assert "Use async everywhere" in shown and "cold" in shown
    ctx_cli("context", "promote", note["fragment_id"])
    ctx_cli("context", "demote", node["fragment_id"])
    tiers = {
        e["fragment_id"]: e["tier"]
        for e in json.loads(ctx_cli("context", "list", "--project", "demo", "--json").stdout)
    }
    assert tiers[note["fragment_id"]] == "warm" and tiers[node["fragment_id"]] == "warm"
    state = json.loads(ctx_cli("project", "context", "inspect", "demo", "--json").stdout)
    assert state["metrics"]["populations"] == {"hot": 0, "warm": 3, "cold": 0}
    assert state["visibility"]["reviewer"]["entries"] == 0
    assert state["visibility"]["executor"]["entries"] == 3
    assert ctx_cli("context", "clear", "--project", "demo", "--yes").stdout.startswith(
        "Removed 3 context entries"
    )
    assert ctx_cli("context", "list", "--project", "demo").stdout.strip() == (
        "No context entries in project demo."
    )
    bad = ctx_cli("context", "add", "--project", "demo", check=False)
    assert bad.returncode == 1 and "give either" in bad.stderr


def test_context_add_takes_paths_of_the_project_and_names(ctx_cli: Run, tmp_path: Path) -> None:
    """From any folder: a path within a resource's root, PATH#QUALNAME or a unique name; a
    path that is neither a file nor a node says so."""

    def added(target: str) -> dict[str, Any]:
        done = ctx_cli("context", "add", target, "--project", "demo", "--json", cwd=tmp_path)
        return json.loads(done.stdout)

    ranged = added("cleveragents/paths.py:2-3")  # not under the working directory
    assert ranged["provenance"]["path"] == "cleveragents/paths.py"
    assert (ranged["provenance"]["start_line"], ranged["provenance"]["end_line"]) == (2, 3)
    load = added("cleveragents/plugins.py#PluginHost.load")
    assert load["uko_node"].endswith("/cleveragents/plugins.py#PluginHost.load")
    assert "def load(" in load["content"]
    assert added("PluginHost")["uko_node"].endswith("/cleveragents/plugins.py#PluginHost")
    missing = ctx_cli("context", "add", "cleveragents/nothing.py", "--project", "demo", check=False)
    assert missing.returncode == 1 and "no node, file or name" in missing.stderr


def test_strategy_option_runs_exactly_the_named_strategies(ctx_cli: Run) -> None:
    """--strategy X runs X alone although probe-keyword is enabled; simulate agrees."""
    only = assemble_json(ctx_cli, "--budget", "3000", "--strategy", "simple-keyword")
    assert only["strategies_used"] == ["simple-keyword"] and only["fragments"]
    assert {f["provenance"]["strategy"] for f in only["fragments"]} == {"simple-keyword"}
    both = assemble_json(
        ctx_cli, "--budget", "3000", "--strategy", "simple-keyword", "--strategy", "probe-keyword"
    )
    assert set(both["strategies_used"]) == {"simple-keyword", "probe-keyword"}
    enabled = assemble_json(ctx_cli, "--budget", "3000")
    assert enabled["strategies_used"] == ["probe-keyword"]
    simulated = json.loads(
        ctx_cli(
            "context", "simulate", QUESTION, "--project", "demo", "--json",
            "--strategy", "simple-keyword",
        ).stdout
    )  # fmt: skip
    assert [s["name"] for s in simulated["strategies"]] == ["simple-keyword"]


def test_strategy_settings_come_from_the_configuration_chain(ctx_cli: Run, ctx_home: Path) -> None:
    """max-hops from the global file, the environment or --set changes what the navigator finds."""

    def navigated(*args: str, **env: str) -> int:
        done = ctx_cli(
            "context", "assemble", QUESTION, "--project", "demo", "--json", "--budget", "6000",
            "--strategy", "breadth-depth-navigator", "--breadth", "3", *args, **env,
        )  # fmt: skip
        data = json.loads(done.stdout)
        assert data["strategies_used"] == ["breadth-depth-navigator"]
        return len(data["fragments"])

    key = "context.strategies.breadth-depth-navigator.max-hops"
    default = navigated()
    ctx_cli("config", "set", key, "0")
    from_file = navigated()
    assert from_file < default
    env = {"CLEVERAGENTS_CONTEXT__STRATEGIES__BREADTH_DEPTH_NAVIGATOR__MAX_HOPS": "3"}
    assert navigated(**env) == default  # the environment beats the global file
    assert navigated("--set", f"{key}=0", **env) == from_file  # --set beats the environment
    bad = ctx_cli("context", "assemble", QUESTION, "--project", "demo", "--set", "x", check=False)
    assert bad.returncode == 1 and "--set expects KEY=VALUE" in bad.stderr


def test_semantic_dedup_uses_the_projects_embedder(ctx_cli: Run, tmp_path: Path) -> None:
    """dedup-strategy semantic drops a copied function; without an embedder it says so."""
    import importlib.util

    root = tmp_path / "books"
    (root / "pkg").mkdir(parents=True)
    body = (
        "\n\ndef reconcile_ledger_entries(ledger, entries):\n"
        '    """Reconcile ledger entries against the bank statement."""\n'
        "    total = 0\n    for entry in entries:\n"
        "        if entry.account == ledger.account:\n"
        "            total += entry.amount\n    return total\n"
    )
    (root / "pkg" / "alpha.py").write_text('"""Alpha."""\n' + body)
    (root / "pkg" / "beta.py").write_text('"""Beta."""\n' + body)
    ctx_cli("index", str(root), "--project", "books")

    def functions(*args: str) -> tuple[list[str], list[str]]:
        done = ctx_cli(
            *args, "context", "assemble", "reconcile ledger entries", "--project", "books",
            "--json", "--strategy", "simple-keyword",
            "--set", "context.fusion.dedup-strategy=semantic",
        )  # fmt: skip
        data = json.loads(done.stdout)
        nodes = [f["uko_node"] for f in data["fragments"]]
        return [n for n in nodes if n.endswith("#reconcile_ledger_entries")], data["notes"]

    note = "semantic deduplication needs an embedder; using content-hash"
    if importlib.util.find_spec("cleveragents_backend_faiss") is not None:
        kept, notes = functions()
        assert len(kept) == 1 and note not in notes
    kept, notes = functions("-p", "no:faiss")
    assert len(kept) == 2 and note in notes


def test_custom_components_that_misbehave_are_replaced_and_reported(
    ctx_cli: Run, ctx_probe_path: Path, tmp_path: Path
) -> None:
    """A wrong return type, or an object that is no component: replaced, and reported."""
    (tmp_path / "odd_stages.py").write_text(
        "class WrongOrderer:\n"
        "    def order(self, fragments):\n"
        "        return 'not a list'\n\n\n"
        "class NotAScorer:\n"
        "    pass\n"
    )
    env = {"PYTHONPATH": f"{tmp_path}:{ctx_probe_path}"}
    data = json.loads(
        ctx_cli(
            "context", "assemble", QUESTION, "--project", "demo", "--json", "--budget", "3000",
            "--set", "context.pipeline.fragment-orderer=odd_stages:WrongOrderer",
            "--set", "context.pipeline.fragment-scorer=odd_stages:NotAScorer",
            **env,
        ).stdout
    )  # fmt: skip
    assert data["fragments"] and cost(data) <= 3000
    orderer = "fragment-orderer WrongOrderer returned str, not a list of fragments"
    scorer = "fragment-scorer odd_stages:NotAScorer could not be used"
    assert any(n.startswith(orderer) for n in data["notes"])
    assert any(n.startswith(scorer) and "WeightedCompositeScorer" in n for n in data["notes"])
    assert f"Warning: {scorer}" in data["preamble"] and f"Warning: {orderer}" in data["preamble"]
    text = ctx_cli("context", "inspect", "--project", "demo", **env).stdout
    for slot, spec in (("fragment-orderer", "WrongOrderer"), ("fragment-scorer", "NotAScorer")):
        assert re.search(
            rf"^{slot}\s+\S+\s+odd_stages:{spec}\s+global\s+[\d.]+\s+replaced$",
            text,
            flags=re.MULTILINE,
        ), text
    unknown = ctx_cli(
        "context", "assemble", QUESTION, "--project", "demo",
        "--set", "context.pipeline.fragment-scorer=nope", check=False,
    )  # fmt: skip
    assert unknown.stderr.strip() == (
        "Error [404] NOT_FOUND: unknown fragment-scorer 'nope' "
        "(available: raising, weighted-composite)"
    )


def test_a_missing_text_index_is_reported_with_the_fix(ctx_cli: Run, ctx_home: Path) -> None:
    """Without its text index a project still assembles from the graph, and says what to run."""
    import shutil

    shutil.rmtree(ctx_home / "index" / "text" / "demo")
    data = assemble_json(ctx_cli, "--budget", "2000")
    assert (
        "the text index of project 'demo' is missing; text search unavailable: "
        "run `cleveragents index PATH --project demo --force`"
    ) in data["notes"]
    assert not (ctx_home / "index" / "text" / "demo").exists()  # reading creates nothing


def test_simulate_and_inspect_name_the_strategies_standing_by(ctx_cli: Run) -> None:
    """With arce and simple-keyword enabled, arce runs and both commands say that
    simple-keyword stood by for it, and why."""
    env = {"CLEVERAGENTS_CONTEXT__STRATEGIES__ENABLED": '["arce", "simple-keyword"]'}
    line = "  not selected: simple-keyword (stands by for arce on the fallback path)"
    simulated = ctx_cli(
        "context", "simulate", QUESTION, "--project", "demo", "--budget", "2000", **env
    ).stdout
    assert re.search(r"^arce\s", simulated, flags=re.MULTILINE) and line in simulated
    ctx_cli("context", "assemble", QUESTION, "--project", "demo", "--budget", "2000", **env)
    inspected = ctx_cli("context", "inspect", "--project", "demo", **env).stdout
    assert line in inspected
    report = json.loads(ctx_cli("context", "inspect", "--project", "demo", "--json").stdout)
    assert report["not_selected"] == {"simple-keyword": line.split("(", 1)[1][:-1]}


def test_the_verb_a_task_opens_with_says_what_to_do_not_where(ctx_cli: Run, tmp_path: Path) -> None:
    """ "Add …" and "Allow …" are what a task asks for, not where: the ``add_*`` and
    ``allow_*`` names of the project do not outrank the code the task is about."""
    root = tmp_path / "client"
    root.mkdir()
    (root / "session.py").write_text(
        "".join(
            f"def allow_{name}(request):\n    request.flags.add({name!r})\n\n\n"
            for name in ("redirects", "cookies", "insecure", "compression")
        )
    )
    (root / "transport.py").write_text(
        "def send(request, connection, attempts=1):\n"
        '    """Send the request; a failed connection is tried again up to attempts times."""\n'
        "    for attempt in range(attempts):\n"
        "        try:\n            return connection.send(request)\n"
        "        except ConnectionError:\n            connection.reconnect()\n"
        "    raise ConnectionError(request)\n"
    )
    fragments = arce_fragments(
        ctx_cli, "Allow a request to be sent again when its connection fails", root, 400
    )
    assert fragments[0]["provenance"]["path"] == "transport.py"


def test_a_near_copy_of_a_delivered_function_is_named_not_repeated(
    ctx_cli: Run, tmp_path: Path
) -> None:
    """httpx-style clients: one method per HTTP verb, each the same but for the verb, and an
    async twin of each. One comes in full; each copy is listed among what was left out, with
    the method it repeats, and `context expand` renders it."""
    root = tmp_path / "webclient"
    root.mkdir()
    verbs = ("get", "head", "options", "delete")

    def method(verb: str, twin: bool) -> str:
        wait = "await " if twin else ""
        return (
            f"    {'async ' if twin else ''}def {verb}(self, url, *, params=None, headers=None,\n"
            "            follow_redirects=True, timeout=None):\n"
            f'        """Send a `{verb.upper()}` request; redirects are followed by default."""\n'
            f"        return {wait}self.request(\n"
            f'            "{verb.upper()}",\n            url,\n            params=params,\n'
            "            headers=headers,\n            follow_redirects=follow_redirects,\n"
            "            timeout=timeout,\n        )\n\n"
        )

    (root / "client.py").write_text(
        "class Client:\n"
        + "".join(method(v, False) for v in verbs)
        + "\nclass AsyncClient:\n"
        + "".join(method(v, True) for v in verbs)
    )
    done = ctx_cli(
        "context", "assemble", "Which requests follow redirects by default?",
        "--path", str(root), "--budget", "800", "--strategy", "arce", "--json",
    )  # fmt: skip
    data = json.loads(done.stdout)  # the whole file does not fit: its methods are offered
    full = [f["uko_node"].rsplit("#", 1)[1] for f in data["fragments"] if f["detail_depth"] == 9]
    copies = [d for d in data["dropped"] if "near copy of" in d["reason"]]
    assert len(full) == 1 and len(copies) == 2 * len(verbs) - 1
    assert all(f"near copy of {full[0]}, delivered in full" in d["reason"] for d in copies)
    assert {d["uko_node"].rsplit("#", 1)[1] for d in copies} | set(full) == {
        f"{cls}.{verb}" for cls in ("Client", "AsyncClient") for verb in verbs
    }
    expanded = json.loads(
        ctx_cli("context", "expand", copies[0]["uko_node"], "--json", cwd=root).stdout
    )
    assert "follow_redirects=follow_redirects" in expanded["content"]
    # the context itself names them, for a reader that sees only the preamble and the code
    original = next(f for f in data["fragments"] if f["detail_depth"] == 9)
    named = original["metadata"]["near_copies"].split(", ")
    assert sorted(named) == sorted(d["uko_node"].rsplit("#", 1)[1] for d in copies)
    assert f"{full[0]} (+7 near copies)" in data["preamble"]
    text = ctx_cli(
        "context", "assemble", "Which requests follow redirects by default?",
        "--path", str(root), "--budget", "800", "--strategy", "arce",
    ).stdout  # fmt: skip
    assert f"    near copies, left out: {original['metadata']['near_copies']}\n" in text
