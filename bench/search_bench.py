"""Search latency per intent and route on requests 2.32.3, exact strings against ripgrep (or grep), and
the embedding throughput of a cold index.

    python bench/search_bench.py                  # warm latency, rg/grep ratio, cold embedding (1 run)
    python bench/search_bench.py --runs 9 --no-embed-bench

Warm latency: the index is built and embedded first, the model loaded and every query run once; then
each query runs `--runs` times and p50/p95 are taken over all runs of an intent. Times include the
query embedding (fused route), the snippets and the result document. The comparison for exact strings
runs `rg -F -n` (or `grep -rFn` when ripgrep is not installed; the report says which) as a subprocess
over the same tree, so it includes process start, as a user typing it would pay.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.corpora import cache_home  # noqa: E402
from indexing.workspace import Workspace, WorkspaceOptions  # noqa: E402
from retrievers.engine.search_engine import EngineOptions, SearchEngine, SearchRequest  # noqa: E402

QUERIES: dict[str, list[str]] = {
    "find_definition (direct)": ["def super_len", "class Session", "where is merge_setting defined"],
    "find_definition (fused)": ["raise_for_status", "HTTPAdapter", "get_encoding_from_headers"],
    "find_references (direct)": ["who calls rebuild_auth", "usages of super_len",
                                 "callers of to_key_val_list"],
    "impact_analysis (direct)": ["what breaks if I change to_key_val_list", "impact of get_netrc_auth"],
    "exact_match (direct)": ['"Missing dependencies for SOCKS support."', '"Invalid percent-escape sequence"',
                             '"redirects."'],
    "understand_code (fused)": ["how are cookies merged into a prepared request",
                                "where do we decide which proxy to use for a url",
                                "what happens when a connection times out"],
    "understand_code (quick)": ["how are cookies merged into a prepared request",
                                "where do we decide which proxy to use for a url"],
}
EXACT = ["Missing dependencies for SOCKS support.", "Invalid percent-escape sequence", "redirects."]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def open_requests(index_dir: Path | None) -> SearchEngine:
    from bench.corpora import fetch_sdist

    root = fetch_sdist("requests", "2.32.3")
    base = Path(os.environ.get("CODESEEK_EVAL_DIR") or cache_home() / "codeseek-eval")
    ws = Workspace(root, WorkspaceOptions(index_dir=index_dir or base / "requests-2.32.3"))
    engine = SearchEngine(ws, EngineOptions())
    started = time.perf_counter()
    result = engine.refresh()
    print(f"index: {result.chunks} chunks, {result.embedded} newly embedded, "
          f"{time.perf_counter() - started:.1f} s; state {result.state}")
    return engine


def latency(engine: SearchEngine, runs: int) -> dict[str, dict[str, Any]]:
    """p50/p95 (ms) per intent/route over `runs` warm runs of each query."""
    times: dict[str, list[float]] = defaultdict(list)
    routes: dict[str, set[str]] = defaultdict(set)
    stages: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for label, queries in QUERIES.items():
        preset = "quick" if "(quick)" in label else "default"
        for query in queries:
            engine.search(SearchRequest(query, preset=preset))  # warm (model, caches)
            for _ in range(runs):
                started = time.perf_counter()
                result = engine.search(SearchRequest(query, preset=preset))
                times[label].append((time.perf_counter() - started) * 1000)
                routes[label].add(result["strategy"])
                for stage, ms in result["timings_ms"].items():
                    stages[label][stage].append(ms)
    out = {}
    for label, values in times.items():
        out[label] = {"p50": statistics.median(values), "p95": percentile(values, 0.95), "n": len(values),
                      "routes": sorted(routes[label]),
                      "stages": {s: statistics.median(v) for s, v in stages[label].items() if s != "total"}}
    return out


def exact_vs_grep(engine: SearchEngine, runs: int) -> dict[str, Any]:
    """Median ms of the engine's exact route and of `rg -F` (or `grep -rF`) for the same strings."""
    root = engine.workspace.root
    rg = shutil.which("rg")
    tool = "rg -F" if rg else "grep -rF"
    ours, theirs = [], []
    for needle in EXACT:
        request = SearchRequest(f'"{needle}"', limit=50)
        engine.search(request)
        for _ in range(runs):
            started = time.perf_counter()
            engine.search(request)
            ours.append((time.perf_counter() - started) * 1000)
            cmd = [rg, "-F", "-n", "--", needle, str(root)] if rg else \
                ["grep", "-rFn", "--", needle, str(root)]
            started = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            theirs.append((time.perf_counter() - started) * 1000)
    return {"tool": tool, "engine_ms": statistics.median(ours), "tool_ms": statistics.median(theirs),
            "ratio": statistics.median(theirs) / max(statistics.median(ours), 1e-9)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="warm runs per query")
    parser.add_argument("--index-dir", type=Path, default=None)
    parser.add_argument("--no-embed-bench", action="store_true", help="skip the cold embedding figure")
    parser.add_argument("--embed-sample", type=int, default=None, help="embed only N chunks (cold figure)")
    args = parser.parse_args(argv)
    engine = open_requests(args.index_dir)
    try:
        print(f"\nwarm latency, requests 2.32.3, {args.runs} runs per query (ms; includes the query "
              "embedding on the fused route)")
        print(f"{'intent (route)':<28} {'p50':>8} {'p95':>8} {'n':>4}  stages (median ms)")
        for label, f in latency(engine, args.runs).items():
            stages = ", ".join(f"{k} {v:.1f}" for k, v in f["stages"].items() if v >= 0.05)
            print(f"{label:<28} {f['p50']:8.1f} {f['p95']:8.1f} {f['n']:4d}  {stages}")
        cmp = exact_vs_grep(engine, args.runs)
        print(f"\nexact strings: codeseek {cmp['engine_ms']:.1f} ms vs {cmp['tool']} {cmp['tool_ms']:.1f} ms "
              f"(median; {cmp['tool']} / codeseek = {cmp['ratio']:.1f}x)"
              + ("" if cmp["tool"] == "rg -F" else "  [ripgrep is not installed: compared with grep]"))
    finally:
        engine.close()
        engine.workspace.close()
    if not args.no_embed_bench:
        from bench.embed_bench import bench_embedding, requests_workspace

        ws = requests_workspace()
        try:
            figures = bench_embedding(ws, repeats=1, sample=args.embed_sample)
        finally:
            ws.close()
        print(f"\ncold embedding ({figures.chunks} chunks, batch {figures.batch_size}, {figures.threads} "
              f"threads): {figures.seconds:.1f} s = {figures.chunks_per_s:.1f} chunks/s, "
              f"{figures.chars_per_s:.0f} chars/s (load average {figures.load:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
