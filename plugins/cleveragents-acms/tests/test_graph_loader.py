"""The background graph loader: the parent's chunks, read back as one stream for a single
bulk load, or chunk by chunk when the machine has little memory free."""

from __future__ import annotations

import io
from pathlib import Path

import pyoxigraph as ox
import pytest

from cleveragents_acms.backends import graph_loader
from cleveragents_acms.backends.graph_loader import _LENGTH, _Chunks, _load


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
