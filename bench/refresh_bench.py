"""A server's refresh after an edit, in process (issue 29): where its seconds go, and what searches
asked meanwhile wait.

    python bench/refresh_bench.py --tree django-sdist --edits 5
    python bench/refresh_bench.py --tree django-sdist --base /tmp/wt-before --rounds 2

An `IndexKeeper` with the MCP server's engine options (persist once, incremental call graph, freeze
after refresh, `release_memory` after each job) indexes a copy of the tree, then `--edits` times
appends a function to the longest non-test Python file and asks for a refresh of it, while a thread
searches every 20 ms (four queries in turn: a question, a name, a question, a dotted name). Printed:
the refresh's medians (whole, and the steps of phase 1: read chunks, call graph, view with its
structural tables and file cards) and the searches' p50, slowest and count over 50 ms. `--base` is
another checkout of codeseek (`git worktree add /tmp/wt-before REV`): each round runs it, then this
one, each in its own process (`--code`), and the figures are printed side by side with the ratio.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TREES = {"requests": ("requests", "2.32.3"), "django-sdist": ("Django", "5.1.4")}
QUERIES = ["how are results evaluated lazily", "get_or_create", "where is the session cookie signed",
           "QuerySet.filter"]
STEPS = (("retrievers.engine.index_phase", "read_chunks", "read chunks"),
         ("retrievers.engine.index_phase", "build_graph", "call graph"),
         ("retrievers.engine.index_phase", "build_view", "view"),
         ("retrievers.sources.structural", "StructuralRetriever._build", "  structural tables"),
         ("retrievers.sources.filecards", "_build", "  file cards"))


def _timed_steps(spans: dict[str, list[float]]) -> None:
    """Wrap each of `STEPS` so its seconds go to `spans[label]` (steps missing from this checkout are
    left out)."""
    import importlib

    for module_name, qualified, label in STEPS:
        owner: Any = importlib.import_module(module_name)
        *path, name = qualified.split(".")
        for part in path:
            owner = getattr(owner, part)
        real = getattr(owner, name, None)
        if real is None:
            continue

        def timed(*args: Any, _real: Any = real, _label: str = label, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return _real(*args, **kwargs)
            finally:
                spans[_label].append(time.perf_counter() - started)
        setattr(owner, name, functools.wraps(real)(timed))


def measure(tree: Path, edits: int) -> dict[str, Any]:
    """One run in this process (the module docstring): the figures as a dict."""
    from indexing.workspace import WorkspaceOptions
    from lsp_server.process_tuning import release_memory
    from retrievers.engine.keeper import IndexKeeper, KeeperOptions
    from retrievers.engine.options import EngineOptions
    from retrievers.engine.request import SearchRequest

    spans: dict[str, list[float]] = defaultdict(list)
    _timed_steps(spans)
    with tempfile.TemporaryDirectory(prefix="codeseek-refresh-bench-") as tmp:
        root = Path(tmp) / "tree"
        shutil.copytree(tree, root)
        sources = (p for p in root.rglob("*.py") if "test" not in str(p.relative_to(root)))
        target = max(sources, key=lambda p: p.stat().st_size)
        rel = target.relative_to(root).as_posix()
        keeper = IndexKeeper.open(
            root, WorkspaceOptions(index_dir=Path(tmp) / "index", parse_workers=None),
            EngineOptions(embeddings=False, persist_once=True, freeze_after_refresh=True,
                          incremental_graph=True),
            KeeperOptions(after_work=release_memory))
        keeper.start()
        try:
            keeper.indexed.wait(900)
            keeper.wait_idle(900)
            spans.clear()
            waits: list[float] = []
            stop = threading.Event()

            def searcher() -> None:
                n = 0
                while not stop.is_set():
                    started = time.perf_counter()
                    keeper.engine.search(SearchRequest(QUERIES[n % len(QUERIES)], limit=5))
                    waits.append(time.perf_counter() - started)
                    n += 1
                    time.sleep(0.02)
            thread = threading.Thread(target=searcher, daemon=True)
            thread.start()
            time.sleep(0.5)
            refreshes = []
            for n in range(edits):
                with target.open("a", encoding="utf-8") as fh:
                    fh.write(f"\n\ndef refresh_bench_probe_{n}(count):\n    return count + {n}\n")
                jobs = keeper.jobs
                started = time.perf_counter()
                keeper.request_paths([rel])
                while keeper.jobs == jobs or not keeper.idle():
                    time.sleep(0.005)
                refreshes.append(time.perf_counter() - started)
                time.sleep(0.5)
            stop.set()
            thread.join()
        finally:
            keeper.stop()
    ms = [1000 * w for w in waits]
    return {"file": rel, "refresh_s": statistics.median(refreshes),
            "steps_s": {label: statistics.median(v) for label, v in spans.items()},
            "search_p50_ms": statistics.median(ms), "search_max_ms": max(ms),
            "searches_over_50ms": sum(m > 50 for m in ms), "searches": len(ms)}


def _child(code: Path, tree: Path, edits: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(code), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, str(REPO / "bench" / "refresh_bench.py"), "--child", str(tree),
                          "--code", str(code), "--edits", str(edits)],
                         env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", choices=sorted(TREES), default="requests")
    parser.add_argument("--edits", type=int, default=5, help="edits (refreshes) per run (default 5)")
    parser.add_argument("--rounds", type=int, default=1, help="runs per side (default 1)")
    parser.add_argument("--base", help="another checkout to run beside this one, round by round")
    parser.add_argument("--code", help=argparse.SUPPRESS)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        sys.path.insert(0, args.code)
        print(json.dumps(measure(Path(args.child), args.edits)))
        return 0
    sys.path.insert(0, str(REPO))
    from bench.corpora import fetch_sdist

    tree = fetch_sdist(*TREES[args.tree])
    sides = {"now": REPO} if not args.base else {"base": Path(args.base).resolve(), "now": REPO}
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    for _ in range(args.rounds):
        for side, code in sides.items():
            runs[side].append(_child(code, tree, args.edits))
    print(f"refresh after an edit of {runs['now'][0]['file']} ({args.tree}), {args.edits} edits a run, "
          f"medians of {args.rounds} run(s): " + ", ".join(f"{s} {c}" for s, c in sides.items()))

    def row(label: str, values: dict[str, float], unit: str) -> None:
        cells = "  ".join(f"{side} {values[side]:8.3f} {unit}" for side in sides)
        ratio = f"  x{values['now'] / values['base']:.2f}" if "base" in values and values["base"] else ""
        print(f"  {label:24s} {cells}{ratio}")
    row("refresh", {s: statistics.median(r["refresh_s"] for r in runs[s]) for s in sides}, "s")
    labels = [label for _, _, label in STEPS]
    for label in labels:
        if all(label in r["steps_s"] for s in sides for r in runs[s]):
            row(label, {s: statistics.median(r["steps_s"][label] for r in runs[s]) for s in sides}, "s")
    for key, unit in (("search_p50_ms", "ms"), ("search_max_ms", "ms"), ("searches_over_50ms", "")):
        row(key, {s: statistics.median(r[key] for r in runs[s]) for s in sides}, unit)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
