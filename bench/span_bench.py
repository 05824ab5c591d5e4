"""Readable spans (issue 9): how long results are, and what cutting them costs per query, in process.

    python bench/span_bench.py --repos curl,tokio,commons-lang [--runs 5] [--semble-dev-src DIR]

For each semble-dev repository (indexed text-only under `$CODESEEK_EVAL_DIR/semble-dev/<repo>`, as
bench/eval_public.py lays them out) every annotated query is answered with `max_span_lines=0` (whole
spans, the old behaviour) and with the default (60), interleaved, `--runs` times each. Printed: the
results over 60 and over 200 lines with whole spans, how many a 60-line cut shortens, and the p50/p95
of the whole search and of its snippet step for both settings (the cut's cost is their difference).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from contextlib import closing
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.corpora import cache_home  # noqa: E402
from bench.semble_dev import add_bench_arguments, bench_repos  # noqa: E402
from bench.timing import NOISY, stopwatch  # noqa: E402
from indexing.workspace import Workspace, WorkspaceOptions  # noqa: E402
from retrievers.engine.search_engine import EngineOptions, SearchEngine, SearchRequest  # noqa: E402
from retrievers.engine.spans import MAX_SPAN_LINES  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def spread(values: list[float], spec: str) -> str:
    """`p50 … ms  p95 … ms` of values, each number formatted by spec."""
    return f"p50 {statistics.median(values):{spec}} ms  p95 {pct(values, 0.95):{spec}} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_bench_arguments(parser)
    args = parser.parse_args()
    base = Path(os.environ.get("CODESEEK_EVAL_DIR") or cache_home() / "codeseek-eval")
    times: dict[int, list[float]] = {0: [], MAX_SPAN_LINES: []}
    snippets: dict[int, list[float]] = {0: [], MAX_SPAN_LINES: []}
    results = over60 = over200 = cut = 0
    for _repo, root, queries, index in bench_repos(args.repos, args.semble_dev_src, base):
        with Workspace(root, WorkspaceOptions(index_dir=index)) as workspace, \
                closing(SearchEngine(workspace, EngineOptions(embeddings=False))) as engine:
            engine.refresh(embed=False)
            for query in queries:  # warm-up, and the span counts with whole spans
                engine.options.max_span_lines = 0
                for r in engine.search(SearchRequest(query)).to_json()["results"]:
                    length = r["end_line"] - r["start_line"] + 1
                    results += 1
                    over60 += length > MAX_SPAN_LINES
                    over200 += length > 200
                engine.options.max_span_lines = MAX_SPAN_LINES
                cut += sum(r["lines_total"] != r["end_line"] - r["start_line"] + 1
                           for r in engine.search(SearchRequest(query)).to_json()["results"])
            for _ in range(args.runs):
                for query in queries:
                    for setting in (0, MAX_SPAN_LINES):
                        engine.options.max_span_lines = setting
                        with stopwatch(times[setting]):
                            doc = engine.search(SearchRequest(query)).to_json()
                        snippets[setting].append(float(doc["timings_ms"].get("snippets", 0.0)))
    print(f"repositories {args.repos}: {results} results; whole spans over {MAX_SPAN_LINES} lines: "
          f"{over60}, over 200: {over200}; cut to {MAX_SPAN_LINES}: {cut}")
    for setting in (0, MAX_SPAN_LINES):
        label = "whole spans" if setting == 0 else f"cut to {setting}"
        print(f"  {label:12s} search {spread(times[setting], '7.2f')}   "
              f"snippets {spread(snippets[setting], '6.3f')}")
    print(f"  (in process, text-only engine; {NOISY})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
