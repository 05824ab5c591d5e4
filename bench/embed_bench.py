"""Embedding throughput on a cold cache: chunks/s and chars/s over the requests 2.32.3 sdist.

`bench_embedding(workspace, ...)` embeds every chunk of an indexed workspace through the real
SemanticRetriever path (embed text, encode in length-sorted batches, float16 into a fresh store's
cache) and returns the median figures over `repeats` runs; the search bench imports it.

    .venv/bin/python bench/embed_bench.py                 # default batch size and threads
    .venv/bin/python bench/embed_bench.py --sweep         # batch sizes x torch threads
    .venv/bin/python bench/embed_bench.py --recall        # + Hamming prefilter recall on real vectors
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from indexing.records import Chunk  # noqa: E402
from indexing.store import IndexStore  # noqa: E402
from indexing.workspace import Workspace, WorkspaceOptions  # noqa: E402
from retrievers.embedded_text import embed_text  # noqa: E402
from retrievers.embedder import Embedder, EmbedderOptions, default_threads  # noqa: E402
from retrievers.semantic import SemanticRetriever  # noqa: E402
from retrievers.vectors import VectorIndex  # noqa: E402


@dataclass
class EmbedFigures:
    chunks: int
    chars: int  # characters of embed text (after normalization and truncation)
    seconds: float  # median wall time of one cold run
    chunks_per_s: float
    chars_per_s: float
    batch_size: int
    threads: int
    cpu_seconds: float  # median process CPU time of one run (all threads): honest on a shared machine
    load: float  # 1-minute load average when the runs ended


def bench_embedding(
    workspace: Workspace,
    embedder: Embedder | None = None,
    batch_size: int = 8,
    threads: int | None = None,
    repeats: int = 3,
    chunks: list[Chunk] | None = None,
    sample: int | None = None,
) -> EmbedFigures:
    """Median cold-cache embedding throughput of `workspace`'s chunks (the model is loaded first)."""
    import torch

    embedder = embedder or Embedder()
    embedder.options.batch_size = batch_size
    embedder.load()
    threads = threads or default_threads()
    torch.set_num_threads(threads)
    chunks = chunks if chunks is not None else workspace.store.chunks()
    if sample is not None and sample < len(chunks):  # every k-th chunk: all files, all sizes
        chunks = chunks[:: max(1, len(chunks) // sample)][:sample]
    chars = sum(len(embed_text(c, workspace.chunk_text(c))) for c in chunks)
    times, cpu = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            store = IndexStore(Path(tmp))  # a fresh cache: every chunk is a miss
            retriever = SemanticRetriever(store, workspace.chunk_text, embedder)
            start, start_cpu = time.perf_counter(), time.process_time()
            retriever.index(chunks)
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
            assert retriever.pending() == 0
            store.close()
    seconds = statistics.median(times)
    return EmbedFigures(len(chunks), chars, seconds, len(chunks) / seconds, chars / seconds, batch_size,
                        threads, statistics.median(cpu), os.getloadavg()[0])


def hamming_recall(vectors: VectorIndex, queries: np.ndarray, k: int = 10,
                   candidates: tuple[int, ...] = (25, 50, 100, 300)) -> dict[int, float]:
    """Mean recall@k of the Hamming prefilter + rescoring against exact search, per candidate count."""
    out = {}
    for c in candidates:
        recalls = []
        for q in queries:
            exact = {i for i, _ in vectors.search(q, k, exact=True)}
            approx = {i for i, _ in vectors.search(q, k, exact=False, candidates=c)}
            recalls.append(len(exact & approx) / max(1, len(exact)))
        out[c] = float(np.mean(recalls))
    return out


QUESTIONS = [
    "strip credentials on redirect", "how are cookies merged into a request", "retry a failed connection",
    "parse the content type header", "where are proxies chosen for a url", "encode multipart form data",
    "verify tls certificates", "stream the response body in chunks", "guess the text encoding",
    "build the user agent string",
]


def recall_report(ws: Workspace, embedder: Embedder) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = IndexStore(Path(tmp))
        retriever = SemanticRetriever(store, ws.chunk_text, embedder)
        retriever.index(ws.store.chunks())
        vectors = retriever._vectors
        assert vectors is not None
        ids = sorted(vectors.ids())[::8]
        as_queries = np.vstack([v for v in (vectors.vector(i) for i in ids) if v is not None])
        asked = np.vstack([embedder.encode_query(q) for q in QUESTIONS])
        for name, queries in (("chunk-as-query", as_queries), ("questions", asked)):
            recall = hamming_recall(vectors, queries)
            print(f"Hamming prefilter recall@10 vs exact over {len(vectors)} vectors, {len(queries)} {name}: "
                  + ", ".join(f"{c} candidates {r:.3f}" for c, r in recall.items()))
        store.close()


def requests_workspace() -> Workspace:
    from bench.corpora import fetch_sdist

    root = fetch_sdist("requests", "2.32.3")
    index_dir = Path(tempfile.mkdtemp(prefix="codeseek-embed-bench-"))
    ws = Workspace(Path(root), WorkspaceOptions(index_dir=index_dir))
    ws.update()
    return ws


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: half the CPUs)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sweep", action="store_true", help="batch sizes 8/16/32/64 x threads 1/2")
    parser.add_argument("--sample", type=int, default=None, help="embed every k-th chunk, N in all")
    parser.add_argument("--model", default=None)
    parser.add_argument("--recall", action="store_true", help="Hamming prefilter recall on real vectors")
    args = parser.parse_args(argv)
    ws = requests_workspace()
    embedder = Embedder(args.model, EmbedderOptions())
    grid = [(args.batch_size, args.threads)]
    if args.sweep:
        grid = [(b, t) for t in (1, 2) for b in (8, 16, 32, 64)]
    print(f"model {embedder.model_id}; requests 2.32.3; median of {args.repeats} cold runs")
    for batch, threads in grid:
        f = bench_embedding(ws, embedder, batch, threads, args.repeats, sample=args.sample)
        print(f"batch {f.batch_size:3d} threads {f.threads}: {f.chunks} chunks, {f.chars} chars in "
              f"{f.seconds:6.2f} s = {f.chunks_per_s:6.1f} chunks/s, {f.chars_per_s:8.0f} chars/s; "
              f"CPU {f.cpu_seconds:6.2f} s = {f.chunks / f.cpu_seconds:5.1f} chunks/CPU-s; "
              f"load {f.load:.1f}", flush=True)
    if args.recall:
        recall_report(ws, embedder)
    ws.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
