"""Bulk-load new nodes into the graph store from a child process.

pyoxigraph holds the GIL while it loads, and a cold index of 100k nodes is
over a million quads: loading them in this process would stall the other
stores' writes for tens of seconds. A :class:`BackgroundLoad` hands the store
to a child process (RocksDB allows one writer, so the parent lets go of it),
appends the TriG to an unlinked file the child follows as it grows (what the
child has not read yet waits there, not in the indexer's memory, and no thread
has to feed a pipe), marks its end as soon as the last node is sent, and takes
the store back in :meth:`BackgroundLoad.finish`. Meanwhile the indexer writes
the text index, node store and vectors, and the child ends its load. Told the
end only by ``finish()``, it sat idle with every quad read and 5 s of sorting
and writing left, which the 10k-file benchmark then waited for.

The child reads the chunks as one stream, for a single bulk load (one load per
chunk writes a set of index files each time). On the 10k-file benchmark that
ended sooner (when the end was told late, the wait for it was 7-8 s against
10 s chunk by chunk) and leaves a smaller store until RocksDB next compacts it
(Django's: 182 MB against 344 MB; both 372 MB once compacted). The price is
memory: pyoxigraph's loader sorts up to a million quads per thread at a time,
so the child peaks at about 1.8 GB on that corpus (0.14 GB chunk by chunk);
that bound does not grow with the corpus, and a machine with less than 4 GB
free gets the chunk-by-chunk load. Like the in-process bulk loader, the load
is not transactional: the indexer repairs a partial one on its next run (see
``RepoIndexingService._write_graph``). On Linux the child runs with mimalloc
preloaded (the ``cmeel-mimalloc`` wheel, a dependency there), unless the
backend's ``loader_allocator`` is ``"system"`` or the user preloads a library
of their own.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import io
import os
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from cleveragents.errors import CleverAgentsError
from cleveragents.models.uko import UKONode

if TYPE_CHECKING:
    from cleveragents_acms.backends.graph import OxigraphGraphBackend

__all__ = ["BackgroundLoad"]

#: Each chunk goes down the child's stdin as an 8-byte length and the bytes; 0 ends.
_LENGTH = struct.Struct("<Q")
#: Memory the machine must have free for one bulk load of every chunk (the loader's
#: peak is about 2 GB); with less, each chunk is loaded on its own (0.2 GB, a slower end).
_ONE_LOAD_MEMORY = 4 << 30


#: How long mimalloc keeps freed memory before returning it to the system. Its default
#: (10 ms) hands back each batch's sort buffers just before the next batch needs them
#: again: twice the system time for page faults.
_MIMALLOC_PURGE_DELAY_MS = "1000"


@functools.cache
def mimalloc_library() -> Path | None:
    """The shared library of the ``cmeel-mimalloc`` wheel, if it is installed."""
    try:
        distribution = importlib.metadata.distribution("cmeel-mimalloc")
    except importlib.metadata.PackageNotFoundError:
        return None
    names = sorted(
        (f for f in distribution.files or () if f.name.startswith("libmimalloc.so")),
        key=lambda f: len(f.name),
    )
    for name in names:
        path = Path(str(distribution.locate_file(name)))
        if path.is_file():
            return path
    return None


def loader_environment(allocator: str) -> dict[str, str] | None:
    """The loader process's environment: with mimalloc preloaded when ``allocator`` asks
    for it and it can be (Linux, the wheel installed, no other library preloaded); None
    to inherit this process's.

    pyoxigraph's bulk loader allocates a key for every quad in each of its orderings;
    under glibc's allocator a quarter of its time went to ``malloc`` and ``free``. With
    mimalloc a load of Django's 1.2 million quads took 9.9-10.0 CPU-s instead of
    11.2-11.6 (alternating runs).
    """
    if allocator != "mimalloc" or not sys.platform.startswith("linux"):
        return None
    if os.environ.get("LD_PRELOAD"):
        return None  # the user's choice, and two allocators cannot both be preloaded
    library = mimalloc_library()
    if library is None or any(c in str(library) for c in " :"):
        return None  # LD_PRELOAD separates its entries by spaces and colons
    environment = dict(os.environ, LD_PRELOAD=str(library))
    environment.setdefault("MIMALLOC_PURGE_DELAY", _MIMALLOC_PURGE_DELAY_MS)
    return environment


#: How long the child waits for the parent to append more before it looks again.
_FOLLOW_POLL_SECONDS = 0.005


class _Followed:
    """The chunk file, read while the parent still appends to it: a read waits until it
    has ``size`` bytes (the parent appends whole chunks), or returns short once the parent
    is gone (a crash: ``_Chunks`` then says the indexer stopped sending)."""

    def __init__(self, fd: int, parent: int) -> None:
        self._fd = fd
        self._parent = parent

    def read(self, size: int) -> bytes:
        parts: list[bytes] = []
        while size:
            data = os.read(self._fd, size)
            if data:
                parts.append(data)
                size -= len(data)
            elif os.getppid() != self._parent:
                break
            else:
                time.sleep(_FOLLOW_POLL_SECONDS)
        return b"".join(parts)


def _read_exactly(stream: BinaryIO, size: int) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise EOFError("the indexer stopped sending")
    return data


class _Chunks(io.RawIOBase):
    """The chunks the parent sends, read as one stream (one bulk load for them all), or,
    with ``whole=False``, only up to the end of the next chunk."""

    def __init__(self, stream: BinaryIO, *, whole: bool = True) -> None:
        self._stream = stream
        self._whole = whole
        self._started = False  # a chunk of this stream was begun
        self._left = 0  # bytes of the current chunk not read yet
        self.ended = False  # the parent's end marker was read

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._left:
            if self.ended or (self._started and not self._whole):
                return 0
            self._left = _LENGTH.unpack(_read_exactly(self._stream, _LENGTH.size))[0]
            self.ended = not self._left
            self._started = True
        data = self._stream.read(min(self._left, len(buffer)))
        if not data:
            raise EOFError("the indexer stopped sending")
        buffer[: len(data)] = data
        self._left -= len(data)
        return len(data)


def _memory_available() -> int | None:
    """Bytes the kernel says can be used without swapping (``MemAvailable``), if known."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _load(location: str, stream: BinaryIO, report: BinaryIO) -> None:
    """Child process: bulk-load the chunks received (as one stream when memory allows);
    report ``ok`` or the error."""
    import pyoxigraph as ox

    try:
        store = ox.Store(location)
        available = _memory_available()
        whole = available is None or available >= _ONE_LOAD_MEMORY
        segment = None
        while segment is None or not segment.ended:
            segment = _Chunks(stream, whole=whole)
            # A raw binary stream, which is what an IO[bytes] is read as.
            stream_in = cast(BinaryIO, segment)
            store.bulk_load(input=stream_in, format=ox.RdfFormat.TRIG, lenient=True)
        store.flush()
        del store
        report.write(b"ok\n")
    except BaseException as exc:  # reported to the parent, which raises
        report.write(f"{type(exc).__name__}: {exc}".replace("\n", " ").encode() + b"\n")
    report.flush()


class BackgroundLoad:
    """One bulk load running in a child process; ``finish()`` waits and reopens the store."""

    def __init__(self, backend: OxigraphGraphBackend) -> None:
        self.backend = backend
        self.quads = 0
        # Beside the store (the index's disk, not a small /tmp); unlinked at once, so
        # nothing is left behind whatever happens. The child reads it through a
        # descriptor of its own (its own offset) while this process appends.
        fd, name = tempfile.mkstemp(prefix=".graph-load-", dir=Path(backend.location).parent)
        try:
            reader = os.open(name, os.O_RDONLY)
        except BaseException:
            os.close(fd)
            raise
        finally:
            os.unlink(name)
        self._out: BinaryIO = os.fdopen(fd, "wb")
        backend.close()  # the child needs the store's lock
        try:
            self._process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    __name__,
                    str(backend.location),
                    str(reader),
                    str(os.getpid()),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                pass_fds=(reader,),
                env=loader_environment(backend.loader_allocator),
            )
        except BaseException:
            self._out.close()
            backend.reopen()
            raise
        finally:
            os.close(reader)

    def _append(self, chunk: bytes) -> None:
        self._out.write(_LENGTH.pack(len(chunk)))
        self._out.write(chunk)
        self._out.flush()

    def add_nodes(self, nodes: Iterable[UKONode], *, valid_from: datetime) -> int:
        """Append the current version of ``nodes`` (none of them may be current already)."""
        parts: list[str] = []
        quads = self.backend.node_trig(nodes, valid_from, parts)
        if quads:
            self._append("".join(parts).encode("utf-8", "replace"))
            self.quads += quads
        return quads

    def end(self) -> None:
        """Tell the child every node is sent. It then ends its load (sorts and writes the
        last quads, about 5 s of the 10k-file benchmark) while the indexer writes the
        other stores, instead of waiting for :meth:`finish` to tell it."""
        if not self._out.closed:
            self._append(b"")
            self._out.close()

    def finish(self) -> int:
        """Wait for the child, take the store back; raises if the load failed."""
        try:
            self.end()
        except BaseException:
            self.abort()  # the child still holds the store
            raise
        try:
            assert self._process.stdout is not None
            report = self._process.stdout.read().decode(errors="replace").strip()
            self._process.wait()
        finally:
            self.backend.reopen()
        if report != "ok":
            raise CleverAgentsError(
                f"loading the graph store failed: {report or 'the loader process died'}"
            )
        return self.quads

    def abort(self) -> None:
        """Stop the child without waiting for the rest (the store keeps what it loaded)."""
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        with contextlib.suppress(OSError):  # a full disk failed the last write already
            self._out.close()
        self.backend.reopen()


if __name__ == "__main__":
    _load(
        sys.argv[1],
        cast(BinaryIO, _Followed(int(sys.argv[2]), int(sys.argv[3]))),
        sys.stdout.buffer,
    )
