"""The background graph loader: the parent's chunks, read back as one stream for a single
bulk load, or chunk by chunk when the machine has little memory free."""

from __future__ import annotations

import io
import os
import platform
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest

from cleveragents_acms.backends import graph_loader
from cleveragents_acms.backends.graph_loader import _LENGTH, _Chunks, _Followed, _load


def _framed(*chunks: bytes, end: bool = True) -> io.BytesIO:
    body = b"".join(_LENGTH.pack(len(c)) + c for c in chunks)
    return io.BytesIO(body + (_LENGTH.pack(0) if end else b""))


def _read_all(stream: _Chunks, size: int) -> bytes:
    read = b""
    while part := stream.read(size):
        read += part
    return read


def test_chunks_read_as_one_stream_whatever_the_read_size() -> None:
    chunks = [b"<urn:a> <urn:p> 1 .\n", b"x" * 100, b"<urn:b> <urn:p> 2 .\n"]
    for size in (1, 3, 64, 1 << 16):
        stream = _Chunks(_framed(*chunks))
        assert _read_all(stream, size) == b"".join(chunks)
        assert stream.ended
        assert stream.read(10) == b""  # stays at the end


def test_chunks_read_one_at_a_time_when_not_whole() -> None:
    framed = _framed(b"first", b"second")
    streams = [_Chunks(framed, whole=False)]
    pieces = [_read_all(streams[-1], 4)]
    while not streams[-1].ended:
        streams.append(_Chunks(framed, whole=False))
        pieces.append(_read_all(streams[-1], 4))
    assert pieces == [b"first", b"second", b""]


def test_a_sender_that_stops_mid_stream_is_an_error_not_a_short_load() -> None:
    with pytest.raises(EOFError, match="stopped sending"):
        _Chunks(_framed(b"abc", end=False)).read()
    cut = _framed(b"abcdef").getvalue()[: _LENGTH.size + 3]
    with pytest.raises(EOFError, match="stopped sending"):
        _Chunks(io.BytesIO(cut)).read()


def test_the_chunk_file_is_read_as_the_parent_appends_to_it(tmp_path: Path) -> None:
    """The child follows a file the parent is still writing: a read waits for the bytes
    appended later, whole chunks or a header first and its chunk after."""
    path = tmp_path / "chunks"
    chunks = [b"first", b"x" * 100_000, b"third"]
    framed = _framed(*chunks).getvalue()
    with path.open("wb") as out:
        out.write(framed[:3])  # a header cut short
        out.flush()
        reader = os.open(path, os.O_RDONLY)

        def append_the_rest() -> None:
            for start in range(3, len(framed), 7_000):
                time.sleep(0.002)
                out.write(framed[start : start + 7_000])
                out.flush()

        writer = threading.Thread(target=append_the_rest)
        writer.start()
        try:
            stream = _Chunks(_Followed(reader, os.getppid()))  # type: ignore[arg-type]
            assert _read_all(stream, 4096) == b"".join(chunks)
            assert stream.ended
        finally:
            writer.join()
            os.close(reader)


def test_a_parent_gone_before_the_end_marker_is_an_error_not_a_wait(tmp_path: Path) -> None:
    path = tmp_path / "chunks"
    path.write_bytes(_framed(b"abc", end=False).getvalue())
    reader = os.open(path, os.O_RDONLY)
    try:
        not_the_parent = os.getppid() + 1  # what the parent's pid was, before it died
        stream = _Chunks(_Followed(reader, not_the_parent))  # type: ignore[arg-type]
        with pytest.raises(EOFError, match="stopped sending"):
            _read_all(stream, 64)
    finally:
        os.close(reader)


@pytest.mark.parametrize("free_gb", [1, 16])
def test_the_child_loads_every_chunk_with_little_memory_or_plenty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, free_gb: int
) -> None:
    monkeypatch.setattr(graph_loader, "_memory_available", lambda: free_gb << 30)
    loads: list[_Chunks] = []

    class Counted(_Chunks):
        def __init__(self, *args: object, **kwargs: bool) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            loads.append(self)

    monkeypatch.setattr(graph_loader, "_Chunks", Counted)
    chunks = [
        f"<urn:g> {{ <urn:n{i}> <urn:p> <urn:n{i + 1}> ; <urn:q> {i} . }}\n".encode()
        for i in range(5)
    ]
    report = io.BytesIO()
    _load(str(tmp_path / "store"), _framed(*chunks), report)
    assert report.getvalue() == b"ok\n"
    # one bulk load, or one per chunk (and an empty one that reads the end marker)
    assert len(loads) == (1 if free_gb >= 4 else len(chunks) + 1)
    store = ox.Store.read_only(str(tmp_path / "store"))
    assert len(list(store.quads_for_pattern(None, None, None, ox.NamedNode("urn:g")))) == 10


def _nodes(count: int) -> list[Any]:
    from cleveragents.models.uko import UKONode, node_uri

    resource = "01J00000000000000000000RSA"
    return [
        UKONode(
            uri=node_uri(resource, "pkg/mod.py", f"f{i}"),
            uko_type="uko-py:Function",
            name=f"f{i}",
            path="pkg/mod.py",
            start_line=i + 1,
            end_line=i + 1,
            resource_id=resource,
            qualname=f"f{i}",
            language="python",
        )
        for i in range(count)
    ]


def _mapped_libraries(pid: int) -> str:
    """The child's memory map once it runs the loader (it has imported pyoxigraph): just
    after the exec, the dynamic linker may not have mapped the preloaded library yet."""
    deadline = time.monotonic() + 30
    while True:
        maps = Path(f"/proc/{pid}/maps").read_text()
        if "pyoxigraph" in maps or time.monotonic() > deadline:
            return maps
        time.sleep(0.05)


_MIMALLOC_WHEEL = sys.platform.startswith("linux") and platform.machine() in ("x86_64", "aarch64")


@pytest.mark.skipif(not _MIMALLOC_WHEEL, reason="cmeel-mimalloc has wheels for Linux only")
def test_the_loader_runs_with_mimalloc_and_loads_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The declared ``cmeel-mimalloc`` dependency is installed and preloaded into the
    loader's process (a quarter of a bulk load went to glibc's allocator); the load is
    the same."""
    from datetime import UTC, datetime

    from cleveragents_acms.backends.graph import OxigraphGraphBackend

    monkeypatch.delenv("LD_PRELOAD", raising=False)
    library = graph_loader.mimalloc_library()
    assert library is not None and library.is_file()
    backend = OxigraphGraphBackend(tmp_path / "graph")
    load = backend.load_in_background()
    try:
        assert str(library) in _mapped_libraries(load._process.pid)
        assert load.add_nodes(_nodes(50), valid_from=datetime(2026, 1, 1, tzinfo=UTC)) > 0
        quads = load.finish()
    except BaseException:
        load.abort()
        raise
    assert len(backend.store) == quads
    backend.close()


def test_the_system_allocator_on_request_or_when_the_user_preloads_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cleveragents.errors import ConfigurationError
    from cleveragents_acms.backends.graph import OxigraphGraphBackend

    monkeypatch.delenv("LD_PRELOAD", raising=False)
    assert graph_loader.loader_environment("system") is None
    backend = OxigraphGraphBackend(tmp_path / "graph", loader_allocator="system")
    load = backend.load_in_background()
    try:
        assert "libmimalloc" not in _mapped_libraries(load._process.pid)
    finally:
        load.abort()
        backend.close()
    monkeypatch.setenv("LD_PRELOAD", "/opt/other/libjemalloc.so")
    assert graph_loader.loader_environment("mimalloc") is None  # theirs is left alone
    with pytest.raises(ConfigurationError, match="available: mimalloc, system"):
        OxigraphGraphBackend(tmp_path / "other", loader_allocator="tcmalloc")


def test_a_library_path_ld_preload_cannot_carry_is_not_preloaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``LD_PRELOAD`` splits at spaces and colons: a virtual environment under
    ``My Projects/`` keeps the system allocator rather than a broken preload."""
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    monkeypatch.setattr(
        graph_loader, "mimalloc_library", lambda: Path("/My Projects/libmimalloc.so")
    )
    assert graph_loader.loader_environment("mimalloc") is None
    monkeypatch.setattr(graph_loader, "mimalloc_library", lambda: Path("/venv/libmimalloc.so"))
    environment = graph_loader.loader_environment("mimalloc")
    if sys.platform.startswith("linux"):
        assert environment is not None and environment["LD_PRELOAD"] == "/venv/libmimalloc.so"
