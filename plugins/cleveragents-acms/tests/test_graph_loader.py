"""The background graph loader's framing: the parent's chunks read back as one stream."""

from __future__ import annotations

import io

import pytest

from cleveragents_acms.backends.graph_loader import _LENGTH, _Chunks


def _framed(*chunks: bytes, end: bool = True) -> io.BytesIO:
    body = b"".join(_LENGTH.pack(len(c)) + c for c in chunks)
    return io.BytesIO(body + (_LENGTH.pack(0) if end else b""))


def test_chunks_read_as_one_stream_whatever_the_read_size() -> None:
    chunks = [b"<urn:a> <urn:p> 1 .\n", b"x" * 100, b"<urn:b> <urn:p> 2 .\n"]
    for size in (1, 3, 64, 1 << 16):
        stream = _Chunks(_framed(*chunks))
        read = b""
        while part := stream.read(size):
            read += part
        assert read == b"".join(chunks)
        assert stream.read(10) == b""  # stays at the end


def test_a_sender_that_stops_mid_stream_is_an_error_not_a_short_load() -> None:
    with pytest.raises(EOFError, match="stopped sending"):
        _Chunks(_framed(b"abc", end=False)).read()
    cut = _framed(b"abcdef").getvalue()[: _LENGTH.size + 3]
    with pytest.raises(EOFError, match="stopped sending"):
        _Chunks(io.BytesIO(cut)).read()
