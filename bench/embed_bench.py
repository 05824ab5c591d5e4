"""Embedding throughput on a cold cache: chunks/s and chars/s over the requests 2.32.3 sdist.

`bench_embedding(workspace, ...)` embeds every chunk of an indexed workspace through the real
SemanticRetriever path (embed text, encode in length-sorted batches, float16 into a fresh store's
cache) and returns the median figures over `repeats` runs; the search bench imports it.

    .venv/bin/python bench/embed_bench.py                 # default batch size and threads
    .venv/bin/python bench/embed_bench.py --sweep         # batch sizes x torch threads
    .venv/bin/python bench/embed_bench.py --recall        # + Hamming prefilter recall on real vectors
    nice .venv/bin/python bench/embed_bench.py --backends  # numpy now/before, onnxruntime, torch side by side

`--backends` embeds the same `--sample` chunks' texts (default 200) with each backend and thread count
(`--threads-list`), the rounds interleaved so that each backend sees the same load, and prints the
median chunks/s, the ratio to the first, a query's median latency and the smallest cosine to the
first backend's vectors. "numpy-before" is the numpy encoder of `--before REV`, run as it was (a
BLAS pool around each batch); "onnxruntime" exports the packaged model with torch.onnx into a
temporary folder (needs the onnx and onnxruntime packages; left out, with the reason, without them).
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
from retrievers.semantic.embedded_text import embed_text  # noqa: E402
from retrievers.semantic.embedder import Embedder, EmbedderOptions, default_threads  # noqa: E402
from retrievers.semantic.retriever import SemanticRetriever  # noqa: E402
from retrievers.semantic.vectors import VectorIndex  # noqa: E402


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


# ----- backends side by side (--backends) --------------------------------------------------------------

class _Before:
    """The numpy encoder of an earlier commit (`git show REV:retrievers/semantic/bert_numpy.py`), run as that
    commit's embedder ran it: a BLAS pool of `threads` threads around each batch."""

    def __init__(self, rev: str, threads: int) -> None:
        import subprocess
        import types

        from threadpoolctl import ThreadpoolController

        path = "retrievers/semantic/bert_numpy.py"
        source = subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True,
                                text=True, check=True, cwd=Path(__file__).resolve().parents[1]).stdout
        module = types.ModuleType(f"bert_numpy_{rev}")
        sys.modules[module.__name__] = module  # (a dataclass looks its module up while it is made)
        exec(compile(source, f"{rev}:retrievers/semantic/bert_numpy.py", "exec"), module.__dict__)
        from retrievers.semantic.embedder import default_model_path

        self._encoder = module.NumpyBertEncoder(default_model_path(), 256)
        self._blas, self.threads = ThreadpoolController(), threads
        self.dims, self.max_tokens = self._encoder.dims, self._encoder.max_tokens

    def encode(self, texts: list[str], threads: int | None = None) -> np.ndarray:
        with self._blas.limit(limits=threads or self.threads, user_api="blas"):
            return np.asarray(self._encoder.encode(texts))

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]


def export_onnx(folder: Path) -> Path:
    """The packaged MiniLM (BertModel + mean pooling + normalization) exported with torch.onnx."""
    import torch
    from transformers import BertModel

    from retrievers.semantic.embedder import default_model_path

    bert = BertModel.from_pretrained(str(default_model_path()), local_files_only=True).eval()

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert  # a submodule: its weights export as initializers

        def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            out = self.bert(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids))
            h = out.last_hidden_state
            m = mask.unsqueeze(-1).to(h.dtype)
            return torch.nn.functional.normalize((h * m).sum(1) / m.sum(1).clamp(min=1.0), dim=-1)

    path = folder / "minilm.onnx"
    sample = torch.ones((2, 16), dtype=torch.int64)
    axes = {0: "batch", 1: "tokens"}
    with torch.no_grad():
        torch.onnx.export(Pooled(), (sample, sample), str(path), input_names=["ids", "mask"],
                          output_names=["vectors"],
                          dynamic_axes={"ids": axes, "mask": axes, "vectors": {0: "batch"}},
                          opset_version=17, dynamo=False)
    return path


class _Onnx:
    """onnxruntime on the exported model, `threads` intra-op threads, batches padded to their longest."""

    def __init__(self, path: Path, threads: int) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        from retrievers.semantic.embedder import default_model_path

        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._tokenizer = Tokenizer.from_file(str(default_model_path() / "tokenizer.json"))
        self._tokenizer.enable_truncation(256)
        self._tokenizer.enable_padding()
        self.dims, self.max_tokens = 384, 256

    def encode(self, texts: list[str], threads: int | None = None) -> np.ndarray:
        found = self._tokenizer.encode_batch(texts)  # (`threads`: the session's, set when it was made)
        ids = np.array([e.ids for e in found], dtype=np.int64)
        mask = np.array([e.attention_mask for e in found], dtype=np.int64)
        return np.asarray(self._session.run(None, {"ids": ids, "mask": mask})[0])

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]


def _embedder_for(backend: str, threads: int, before: str, onnx: Path | None) -> Embedder:
    _select((backend, threads))
    kind = "torch" if backend == "torch" else "numpy"
    embedder = Embedder(None, EmbedderOptions(threads=threads, backend=kind))
    embedder.load()
    if backend == "numpy-before":
        embedder._model = _Before(before, threads)
    elif backend == "onnxruntime":
        assert onnx is not None
        embedder._model = _Onnx(onnx, threads)
    return embedder


def compare_backends(texts: list[str], backends: list[str], threads: list[int], repeats: int,
                     before: str) -> None:
    """chunks/s of each backend x threads on the same texts, rounds interleaved (alternate rounds in
    reverse order); medians; ratios to the first."""
    onnx = None
    folder = tempfile.TemporaryDirectory(prefix="codeseek-onnx-")  # the export: 90 MB, removed at exit
    if "onnxruntime" in backends:
        try:
            import onnxruntime  # noqa: F401

            onnx = export_onnx(Path(folder.name))
        except Exception as exc:  # not installed, or the export needs the onnx package
            print(f"onnxruntime left out: {type(exc).__name__}: {exc}")
            backends = [b for b in backends if b != "onnxruntime"]
    runs = [(b, t) for b in backends for t in threads]
    embedders = {run: _embedder_for(*run, before, onnx) for run in runs}
    seconds: dict[tuple[str, int], list[float]] = {run: [] for run in runs}
    first = embedders[runs[0]].encode_documents(texts)
    cosine = {}
    for run, embedder in embedders.items():
        cosine[run] = float((embedder.encode_documents(texts[:40]) * first[:40]).sum(axis=1).min())
    for round_ in range(repeats):  # every other round backwards: a load that drifts hits all alike
        for run in runs if round_ % 2 == 0 else runs[::-1]:
            embedder = embedders[run]
            _select(run)
            start = time.perf_counter()
            embedder.encode_documents(texts)
            seconds[run].append(time.perf_counter() - start)
    chars = sum(len(t) for t in texts)
    print(f"{len(texts)} chunks ({chars} chars), batch 8, median of {repeats} interleaved rounds, "
          f"load {os.getloadavg()[0]:.1f} at the end")
    base = len(texts) / statistics.median(seconds[runs[0]])
    for run in runs:
        rate = len(texts) / statistics.median(seconds[run])
        spread = " ".join(f"{len(texts) / s:.1f}" for s in seconds[run])
        _select(run)
        query = _query_ms(embedders[run])
        print(f"{run[0]:>13} threads {run[1]}: {rate:6.1f} chunks/s ({rate / base:4.2f}x {runs[0][0]} "
              f"{runs[0][1]}; runs {spread}); query p50 {query:5.1f} ms; min cosine vs "
              f"{runs[0][0]} {cosine[run]:.6f}", flush=True)
    folder.cleanup()


def _select(run: tuple[str, int]) -> None:
    if run[0] == "torch":  # torch's thread count is process-wide
        import torch

        torch.set_num_threads(run[1])


def _query_ms(embedder: Embedder) -> float:
    embedder.encode_query(QUESTIONS[0])
    times = []
    for question in QUESTIONS * 3:
        start = time.perf_counter()
        embedder.encode_query(question)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


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
    parser.add_argument("--backends", nargs="?", const="numpy,numpy-before,onnxruntime,torch", default=None,
                        help="compare backends (comma list; default: numpy,numpy-before,onnxruntime,torch)")
    parser.add_argument("--threads-list", default="1,2", help="with --backends: thread counts")
    parser.add_argument("--before", default="c072d3f", help="with --backends: the commit of numpy-before")
    args = parser.parse_args(argv)
    ws = requests_workspace()
    if args.backends:
        chunks = ws.store.chunks()
        sample = args.sample or 200
        chunks = chunks[:: max(1, len(chunks) // sample)][:sample]
        texts = [embed_text(c, ws.chunk_text(c)) for c in chunks]
        compare_backends(texts, args.backends.split(","), [int(t) for t in args.threads_list.split(",")],
                         args.repeats, args.before)
        ws.close()
        return 0
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
