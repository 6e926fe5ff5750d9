"""File discovery: ignore rules, sniffing, limits, symlinks, reading, choosing analyzers."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cleveragents_acms.analyzers.files import (
    TOTAL_SIZE_GRACE,
    Discovery,
    SkipReason,
    choose_analyzer,
    discover,
    discover_changes,
    language_of,
    read_text,
)


def write(root: Path, relative: str, content: str | bytes = "x = 1\n") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def found(discovery: Discovery) -> list[str]:
    return [f.relative for f in discovery.files]


def reason(discovery: Discovery, relative: str) -> str:
    matches = [s.reason for s in discovery.skipped if s.relative == relative]
    assert matches, f"{relative} was not skipped: {discovery.skipped}"
    return matches[0]


def test_files_are_listed_sorted_with_posix_paths_sizes_and_mtimes(tmp_path: Path) -> None:
    """Every kept file has its path, relative posix path, size and mtime."""
    write(tmp_path, "b.py", "b = 2\n")
    write(tmp_path, "a/z.md", "# Z\n")
    write(tmp_path, "a/c/d.txt", "text\n")
    discovery = discover(tmp_path)
    assert found(discovery) == ["a/c/d.txt", "a/z.md", "b.py"]
    first = discovery.files[0]
    assert first.path == tmp_path / "a" / "c" / "d.txt"
    assert first.size == 5
    assert first.mtime_ns == os.stat(first.path).st_mtime_ns
    assert first.language == "text"
    assert discovery.skipped == []


def test_root_gitignore_with_negation_and_directories(tmp_path: Path) -> None:
    """``*.log`` ignores logs, ``!keep.log`` brings one back, ``build/`` prunes a folder."""
    write(tmp_path, ".gitignore", "# comment\n*.log\n!keep.log\nbuild/\n")
    write(tmp_path, "app.log", "noise\n")
    write(tmp_path, "keep.log", "kept\n")
    write(tmp_path, "build/out.py")
    write(tmp_path, "src/build.py")
    discovery = discover(tmp_path)
    assert found(discovery) == [".gitignore", "keep.log", "src/build.py"]
    assert reason(discovery, "app.log") == SkipReason.IGNORED
    assert reason(discovery, "build/") == SkipReason.IGNORED


def test_nested_gitignore_applies_below_its_folder_only(tmp_path: Path) -> None:
    """A nested ``.gitignore`` is relative to its folder and overrides the root's verdict."""
    write(tmp_path, ".gitignore", "*.secret\n")
    write(tmp_path, "pkg/.gitignore", "/local.txt\ngenerated/\n!allowed.secret\n")
    write(tmp_path, "pkg/local.txt", "ignored\n")
    write(tmp_path, "pkg/deep/local.txt", "kept: the pattern is anchored\n")
    write(tmp_path, "pkg/generated/x.py")
    write(tmp_path, "pkg/allowed.secret", "re-included\n")
    write(tmp_path, "pkg/other.secret", "ignored by the root\n")
    write(tmp_path, "local.txt", "kept: other folder\n")
    discovery = discover(tmp_path)
    assert found(discovery) == [
        ".gitignore",
        "local.txt",
        "pkg/.gitignore",
        "pkg/allowed.secret",
        "pkg/deep/local.txt",
    ]
    assert reason(discovery, "pkg/generated/") == SkipReason.IGNORED


def test_git_info_exclude_is_honoured(tmp_path: Path) -> None:
    """Patterns in ``.git/info/exclude`` ignore files like a root ``.gitignore``."""
    write(tmp_path, ".git/info/exclude", "scratch/\n")
    write(tmp_path, ".git/HEAD", "ref: refs/heads/main\n")
    write(tmp_path, "scratch/notes.md", "# notes\n")
    write(tmp_path, "main.py")
    discovery = discover(tmp_path)
    assert found(discovery) == ["main.py"]
    assert reason(discovery, ".git/") == SkipReason.EXCLUDED_DIR
    assert reason(discovery, "scratch/") == SkipReason.IGNORED


def test_ignore_rules_above_the_root_in_its_git_work_tree_apply(tmp_path: Path) -> None:
    """Indexing a folder of a repository honours the repository's ``info/exclude`` and the
    ``.gitignore`` files of the folders above it, each relative to its own folder, as git
    does (``*.egg-info/`` at the top keeps a package's build metadata out); the root's
    own ``.gitignore`` still overrides them."""
    repo = tmp_path / "repo"
    write(repo, ".git/HEAD", "ref: refs/heads/main\n")
    write(repo, ".git/info/exclude", "secret.py\n")
    write(repo, ".gitignore", "*.egg-info/\n*.log\n/top-only.py\n")
    write(repo, "mid/.gitignore", "generated/\n/pkg/local.py\n")
    write(repo, "mid/pkg/.gitignore", "!keep.log\n")
    for name in ("a.py", "local.py", "secret.py", "top-only.py", "run.log", "keep.log"):
        write(repo, f"mid/pkg/{name}")
    write(repo, "mid/pkg/a.egg-info/SOURCES.txt", "a.py\n")
    write(repo, "mid/pkg/generated/x.py")
    discovery = discover(repo / "mid" / "pkg")
    assert found(discovery) == [".gitignore", "a.py", "keep.log", "top-only.py"]
    assert reason(discovery, "a.egg-info/") == SkipReason.IGNORED
    assert reason(discovery, "generated/") == SkipReason.IGNORED
    assert reason(discovery, "secret.py") == SkipReason.IGNORED
    # a folder the repository ignores, indexed on purpose, is indexed whole
    assert found(discover(repo / "mid" / "pkg" / "generated")) == ["x.py"]
    # outside a git work tree, nothing above the root applies
    write(tmp_path, "plain/.gitignore", "*.py\n")
    write(tmp_path, "plain/src/b.py")
    assert found(discover(tmp_path / "plain" / "src")) == ["b.py"]


def test_tool_folders_and_virtualenvs_are_skipped(tmp_path: Path) -> None:
    """node_modules, __pycache__ and any folder holding ``pyvenv.cfg`` are never walked."""
    write(tmp_path, "node_modules/left-pad/index.js", "module.exports = 1;\n")
    write(tmp_path, "pkg/__pycache__/mod.cpython-311.pyc", b"\x00\x01")
    write(tmp_path, "env/pyvenv.cfg", "home = /usr/bin\n")
    write(tmp_path, "env/lib/site.py")
    write(tmp_path, "pkg/mod.py")
    discovery = discover(tmp_path)
    assert found(discovery) == ["pkg/mod.py"]
    assert reason(discovery, "node_modules/") == SkipReason.EXCLUDED_DIR
    assert reason(discovery, "pkg/__pycache__/") == SkipReason.EXCLUDED_DIR
    assert reason(discovery, "env/") == SkipReason.VIRTUALENV


def test_binary_files_are_skipped_and_legacy_text_is_kept(tmp_path: Path) -> None:
    """NUL bytes or a binary suffix mean binary; latin-1 prose is still text."""
    write(tmp_path, "blob.dat2", b"\x7fELF\x02\x01\x01\x00\x00\x00" * 20)
    write(tmp_path, "image.png", b"not really a png")
    write(tmp_path, "noise.bin2", bytes(range(1, 32)) * 50)
    write(tmp_path, "latin1.txt", "café crème, déjà vu\n".encode("latin-1"))
    # A gettext catalogue is binary by its suffix, its head unread, whatever it holds.
    write(tmp_path, "locale/fr/LC_MESSAGES/django.mo", b'msgid "text-like"\n')
    discovery = discover(tmp_path)
    assert found(discovery) == ["latin1.txt"]
    for name in ("blob.dat2", "image.png", "noise.bin2", "locale/fr/LC_MESSAGES/django.mo"):
        assert reason(discovery, name) == SkipReason.BINARY


def test_generated_and_minified_files_are_skipped(tmp_path: Path) -> None:
    """Generated-code markers in the first lines, ``.min.js`` and very long lines are skipped."""
    write(tmp_path, "api_pb2.py", "# Generated by the protocol buffer compiler.  DO NOT EDIT!\n")
    write(tmp_path, "zz_gen.go", "// Code generated by stringer; DO NOT EDIT.\n\npackage x\n")
    write(tmp_path, "schema.ts", "/* @generated */\nexport type A = 1;\n")
    write(tmp_path, "vendor.min.js", "var a=1;\n")
    write(tmp_path, "bundle.js", "var a=1;" * 1000)
    write(tmp_path, "version.py", '__version__ = "1.0"  # DO NOT EDIT THIS LINE MANUALLY\n')
    write(tmp_path, "notes.py", '"""Reports generated by the tool are kept."""\n')
    discovery = discover(tmp_path)
    assert found(discovery) == ["notes.py", "version.py"]
    for name in ("api_pb2.py", "zz_gen.go", "schema.ts"):
        assert reason(discovery, name) == SkipReason.GENERATED
    assert reason(discovery, "vendor.min.js") == SkipReason.MINIFIED
    assert reason(discovery, "bundle.js") == SkipReason.MINIFIED


def test_size_limits(tmp_path: Path) -> None:
    """Files over ``max_file_size`` are skipped; ``max_total_size`` stops adding files."""
    write(tmp_path, "big.txt", "x" * 100 + "\n")
    for name in ("a.txt", "b.txt", "c.txt"):
        write(tmp_path, name, "y" * 39 + "\n")
    discovery = discover(tmp_path, max_file_size=50, max_total_size=90)
    assert found(discovery) == ["a.txt", "b.txt"]
    assert reason(discovery, "big.txt").startswith(SkipReason.TOO_LARGE)
    assert reason(discovery, "c.txt").startswith(SkipReason.TOTAL_SIZE)
    assert discovery.total_size == 80


def test_files_indexed_before_keep_their_place_under_the_total_size(tmp_path: Path) -> None:
    """Under ``max_total_size`` an edit that grows one file does not push another
    indexed file out (nor let a left-out one in), until the files indexed before come to
    more than the grace over the limit; then they are cut back to the limit itself."""

    def files(**sizes: int) -> dict[str, tuple[int, int]]:
        for name, size in sizes.items():
            write(tmp_path, name, "x" * (size - 1) + "\n")
        return {
            f.relative: (f.size, f.mtime_ns)
            for f in discover(tmp_path, max_total_size=100, known=known).files
        }

    known: dict[str, tuple[int, int]] = {}
    known = files(**{"a.txt": 30, "b.txt": 60, "c.txt": 20})
    assert sorted(known) == ["a.txt", "b.txt"]  # c would make 110
    # a grows to 45: a first fit takes a and c and drops b; the files indexed before stay.
    assert sorted(files(**{"a.txt": 45})) == ["a.txt", "b.txt"]
    assert 100 * TOTAL_SIZE_GRACE >= 105
    # a grows to 60: 120 is past the grace, so they are cut back to 100, in walk order.
    known = files(**{"a.txt": 60})
    assert sorted(known) == ["a.txt", "c.txt"]
    # a shrinks: a new file is taken when it fits within the limit itself.
    assert sorted(files(**{"a.txt": 10})) == ["a.txt", "b.txt", "c.txt"]
    # Without what was indexed before (a cold index, ``--force``): first fit, walk order.
    assert [f.relative for f in discover(tmp_path, max_total_size=75).files] == [
        "a.txt",
        "b.txt",
    ]


def test_include_and_exclude_globs(tmp_path: Path) -> None:
    """Include globs keep only matching files; exclude globs drop files and prune folders."""
    write(tmp_path, "src/a.py")
    write(tmp_path, "src/b.md", "# b\n")
    write(tmp_path, "tests/test_a.py")
    write(tmp_path, "docs/guide.md", "# guide\n")
    discovery = discover(tmp_path, include_globs=["*.py", "docs/**"], exclude_globs=["tests/"])
    assert found(discovery) == ["docs/guide.md", "src/a.py"]
    assert reason(discovery, "tests/") == SkipReason.EXCLUDED
    assert reason(discovery, "src/b.md") == SkipReason.NOT_INCLUDED


def test_symlink_loops_end_and_links_leaving_the_root_are_not_followed(tmp_path: Path) -> None:
    """A link to an ancestor or outside the root is skipped; the walk terminates."""
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    write(outside, "secret.py")
    write(root, "pkg/mod.py")
    write(root, "real/util.py")
    os.symlink(root / "pkg", root / "pkg" / "loop")
    os.symlink(root, root / "pkg" / "to_root")
    os.symlink(outside, root / "escape")
    os.symlink(outside / "secret.py", root / "secret_link.py")
    os.symlink(root / "real", root / "alias")
    os.symlink(root / "real" / "util.py", root / "util_link.py")
    os.symlink(root / "missing.py", root / "dangling.py")
    started = time.monotonic()
    discovery = discover(root)
    assert time.monotonic() - started < 5
    assert found(discovery) == ["pkg/mod.py", "real/util.py", "util_link.py"]
    assert reason(discovery, "pkg/loop/").startswith(SkipReason.SYMLINK_LOOP)
    assert reason(discovery, "pkg/to_root/").startswith(SkipReason.SYMLINK_LOOP)
    assert reason(discovery, "escape") == SkipReason.SYMLINK_OUTSIDE
    assert reason(discovery, "secret_link.py") == SkipReason.SYMLINK_OUTSIDE
    assert reason(discovery, "alias/").startswith(SkipReason.SYMLINK_DUPLICATE)
    assert reason(discovery, "dangling.py") == SkipReason.BROKEN_SYMLINK


def test_symlinked_folder_to_an_unwalked_target_is_followed(tmp_path: Path) -> None:
    """A link to an ignored folder inside the root is walked once, under the link's name."""
    write(tmp_path, ".gitignore", "vendored/\n")
    write(tmp_path, "vendored/lib.py")
    os.symlink(tmp_path / "vendored", tmp_path / "lib")
    discovery = discover(tmp_path)
    assert found(discovery) == [".gitignore", "lib/lib.py"]


def test_special_files_do_not_block_and_are_skipped(tmp_path: Path) -> None:
    """A FIFO (which would block a reader) is reported as not a regular file."""
    write(tmp_path, "ok.py")
    os.mkfifo(tmp_path / "pipe.py")
    discovery = discover(tmp_path)
    assert found(discovery) == ["ok.py"]
    assert reason(discovery, "pipe.py") == SkipReason.NOT_REGULAR


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_entries_are_reported_not_raised(tmp_path: Path) -> None:
    """A folder or file without read permission is skipped with a reason."""
    write(tmp_path, "locked/a.py")
    write(tmp_path, "closed.py")
    (tmp_path / "locked").chmod(0)
    (tmp_path / "closed.py").chmod(0)
    try:
        discovery = discover(tmp_path)
    finally:
        (tmp_path / "locked").chmod(0o755)
        (tmp_path / "closed.py").chmod(0o644)
    assert found(discovery) == []
    assert reason(discovery, "locked/").startswith(SkipReason.UNREADABLE)
    assert reason(discovery, "closed.py").startswith(SkipReason.UNREADABLE)


def test_files_indexed_before_and_unchanged_are_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``known`` (size and mtime of what the last run indexed), only new or changed
    files have their head read and sniffed; the listing is the same."""
    for name in ("a.py", "b.py", "c.md"):
        write(tmp_path, name, f"# {name}\n")
    first = discover(tmp_path)
    known = {f.relative: (f.size, f.mtime_ns) for f in first.files}
    write(tmp_path, "b.py", "# b.py, changed\n")
    write(tmp_path, "d.py", "# new\n")
    opened: list[str] = []
    real_open = os.open

    def spy(path: str, *args: object, **kwargs: object) -> int:
        opened.append(os.path.basename(path))
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", spy)
    again = discover(tmp_path, known=known)
    assert [f.relative for f in again.files] == ["a.py", "b.py", "c.md", "d.py"]
    assert sorted(opened) == ["b.py", "d.py"]
    opened.clear()
    assert [f.relative for f in discover(tmp_path).files] == ["a.py", "b.py", "c.md", "d.py"]
    assert sorted(opened) == ["a.py", "b.py", "c.md", "d.py"]


def test_a_missing_root_is_reported(tmp_path: Path) -> None:
    """Discovering a path that is not a folder returns nothing and says why."""
    discovery = discover(tmp_path / "nope")
    assert discovery.files == []
    assert discovery.skipped[0].reason.startswith(SkipReason.UNREADABLE)


def test_ten_thousand_files_in_a_hundred_folders_are_all_discovered(tmp_path: Path) -> None:
    """10,000 files in 100 folders are walked, stat'ed and sniffed, sorted by path; the
    ignored one is left out with its reason (how fast: the indexing benchmark's
    ``discover`` phase)."""
    for folder in range(100):
        directory = tmp_path / f"pkg{folder:03d}"
        directory.mkdir()
        for index in range(100):
            (directory / f"mod{index:03d}.py").write_text(f"VALUE = {index}\n")
    write(tmp_path, ".gitignore", "*.tmp\n")
    write(tmp_path, "pkg000/scratch.tmp", "x\n")
    discovery = discover(tmp_path)
    relatives = [f.relative for f in discovery.files]
    assert len(relatives) == 10_001 and relatives == sorted(relatives)
    assert [(s.relative, s.reason) for s in discovery.skipped] == [
        ("pkg000/scratch.tmp", SkipReason.IGNORED)
    ]


def _as_walked(discovery: Discovery) -> list[tuple[str, str, int, int]]:
    return [(f.relative, f.location, f.size, f.mtime_ns) for f in discovery.files]


def test_the_changed_paths_alone_give_what_a_walk_finds(tmp_path: Path) -> None:
    """``discover_changes`` looks at the paths a watcher names only, through the folders
    above them and their ``.gitignore``, and takes every other file indexed before as it
    was: a file edited, added (in a new folder too), deleted, ignored by a folder's rules,
    binary, too large, excluded, or a new file the total size leaves out, give the files
    and sizes a walk gives. What it cannot tell without a walk it does not guess (None):
    a folder or an ignore file among the paths, a folder of indexed files gone, a symlink
    on the way."""
    root = tmp_path / "tree"
    write(root, ".gitignore", "*.log\nbuild/\n")
    write(root, "app/main.py", "x = 1\n" * 40)
    write(root, "app/util.py", "y = 2\n")
    write(root, "app/gen/.gitignore", "generated_*.py\n")
    write(root, "app/gen/keep.py", "k = 0\n")
    write(root, "docs/readme.md", "# Read me\n")
    limits = {"max_file_size": 4_000, "max_total_size": 900, "exclude_globs": ["*.tmp"]}
    known = {f.relative: (f.size, f.mtime_ns) for f in discover(root, **limits).files}
    assert "app/main.py" in known and "docs/readme.md" in known
    time.sleep(0.01)
    write(root, "app/util.py", "y = 3\nz = 4\n")
    write(root, "app/new/fresh.py", "f = 1\n")
    write(root, "app/gen/generated_a.py", "g = 1\n")
    write(root, "app/debug.log", "log\n")
    write(root, "build/out.py", "o = 1\n")
    write(root, "app/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00")
    write(root, "app/huge.py", "h = 1\n" * 1_000)
    write(root, "app/scratch.tmp", "t\n")
    write(root, "app/big_new.py", "b = 1\n" * 150)  # more than the total size leaves
    (root / "docs" / "readme.md").unlink()
    changed = [
        "app/util.py", "app/new/fresh.py", "app/gen/generated_a.py", "app/debug.log",
        "build/out.py", "app/logo.png", "app/huge.py", "app/scratch.tmp", "app/big_new.py",
        "docs/readme.md", "app/never_there.py",
    ]  # fmt: skip
    targeted = discover_changes(root, changed, known, **limits)
    walked = discover(root, known=known, **limits)
    assert targeted is not None
    assert _as_walked(targeted) == _as_walked(walked)
    assert "app/new/fresh.py" in found(targeted) and "app/big_new.py" not in found(targeted)
    reasons = {s.relative: s.reason for s in walked.skipped}
    left_out = ["app/debug.log", "app/logo.png", "app/huge.py", "app/scratch.tmp"]
    left_out += ["app/gen/generated_a.py", "app/big_new.py"]
    assert {s.relative: s.reason for s in targeted.skipped} == {p: reasons[p] for p in left_out}
    # Nothing changed but what the paths name: the same list as a walk.
    known = {f.relative: (f.size, f.mtime_ns) for f in walked.files}
    assert _as_walked(discover_changes(root, [], known, **limits)) == _as_walked(walked)  # type: ignore[arg-type]
    # What it cannot tell without a walk.
    write(root, "app/gen/.gitignore", "\n")
    assert discover_changes(root, ["app/gen/.gitignore"], known, **limits) is None
    assert discover_changes(root, ["app/new"], known, **limits) is None  # a folder
    (root / "app" / "new" / "fresh.py").unlink()
    (root / "app" / "new").rmdir()
    assert discover_changes(root, ["app/new"], known, **limits) is None  # a folder gone
    (root / "linked").symlink_to(root / "app", target_is_directory=True)
    assert discover_changes(root, ["linked/util.py"], known, **limits) is None


def test_a_python_file_is_read_in_the_encoding_its_coding_line_declares(
    tmp_path: Path,
) -> None:
    """PEP 263: ``# -*- coding: latin-1 -*-`` makes ``\\xe9`` an ``é``, with no problem;
    an unknown declared encoding, or the same bytes in a file that is not Python, are
    read as UTF-8 with the undecodable bytes replaced and reported."""
    from cleveragents_acms.analyzers.files import decode_text

    latin = b"# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n"
    assert decode_text("pkg/legacy.py", latin) == (latin.decode("latin-1"), [])
    unknown = b"# coding: no-such-codec\nname = 'caf\xe9'\n"
    text, errors = decode_text("pkg/odd.py", unknown)
    assert "caf\ufffd" in text and "invalid UTF-8" in errors[0]
    text, errors = decode_text("notes.txt", latin)
    assert "caf\ufffd" in text and "invalid UTF-8" in errors[0]


def test_read_text_reports_invalid_utf8_and_drops_a_bom(tmp_path: Path) -> None:
    """Undecodable bytes become U+FFFD with an error; a UTF-8 BOM is removed."""
    bad = write(tmp_path, "bad.py", b"name = 'caf\xe9'\n")
    text, errors = read_text(bad)
    assert text == "name = 'caf\ufffd'\n"
    assert len(errors) == 1 and "invalid UTF-8 at byte 11" in errors[0]
    bom = write(tmp_path, "bom.py", b"\xef\xbb\xbfx = 1\n")
    assert read_text(bom) == ("x = 1\n", [])
    missing_text, missing_errors = read_text(tmp_path / "missing.py")
    assert missing_text == "" and "cannot read" in missing_errors[0]


class _Analyzer:
    def __init__(self, name: str, specificity: int, suffix: str | None) -> None:
        self.name = name
        self.specificity = specificity
        self.suffix = suffix

    def supports(self, path: Path, head: bytes) -> bool:
        if self.suffix == "boom":
            raise RuntimeError("broken analyzer")
        return self.suffix is None or path.suffix == self.suffix


def test_choose_analyzer_prefers_the_most_specific_supporting_one() -> None:
    """The highest specificity among analyzers that support the file wins; errors are ignored."""
    generic = _Analyzer("text", 0, None)
    python = _Analyzer("python", 100, ".py")
    broken = _Analyzer("broken", 500, "boom")
    analyzers = [generic, broken, python]
    assert choose_analyzer(analyzers, Path("a.py"), b"") is python
    assert choose_analyzer(analyzers, Path("a.md"), b"") is generic
    assert choose_analyzer([broken], Path("a.py"), b"") is None


@pytest.mark.parametrize(
    ("name", "language"),
    [
        ("src/app.py", "python"),
        ("web/index.tsx", "typescript"),
        ("lib/x.mjs", "javascript"),
        ("main.go", "go"),
        ("src/lib.rs", "rust"),
        ("App.java", "java"),
        ("README.md", "markdown"),
        ("config/settings.yaml", "yaml"),
        ("pyproject.toml", "toml"),
        ("Dockerfile", "dockerfile"),
        ("build.Dockerfile", "dockerfile"),
        ("Makefile", "make"),
        (".env", "dotenv"),
        ("scripts/run.sh", "shell"),
        ("LICENSE", "text"),
        ("data.unknownext", "unknown"),
        ("bin/tool", "unknown"),
    ],
)
def test_language_of(name: str, language: str) -> None:
    """Languages come from suffixes and well-known file names."""
    assert language_of(name) == language
