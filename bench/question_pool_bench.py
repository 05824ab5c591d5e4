"""What the question pool costs (issue 28): natural-language questions in process on a cold index.

    python bench/question_pool_bench.py                   # Django's django/ package
    python bench/question_pool_bench.py --tree requests --runs 3

One engine per setting over a fresh index of the tree (static vectors only, the transformer tier
empty, as a first `codeseek search` finds it). Each question runs once in order ("first": its pool is
embedded then, up to `question_pool` chunks), then `--runs` more times ("covered": nothing left to
embed); the same questions with the pool off (`question_pool` 0, the static ranking) are the baseline.
Prints p50/p95 per pass, the transformer vectors each first pass made, and the ratios to the baseline.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.corpora import fetch_sdist  # noqa: E402
from bench.search_bench import percentile  # noqa: E402
from indexing.workspace import Workspace, WorkspaceOptions  # noqa: E402
from retrievers.engine.search_engine import EngineOptions, SearchEngine, SearchRequest  # noqa: E402
from retrievers.semantic.tiered import TierBlend  # noqa: E402

TREES = {"requests": ("requests", "2.32.3", "src/requests"), "django": ("Django", "5.1.4", "django")}
QUESTIONS = {
    "requests": ["how are cookies merged into a prepared request",
                 "where do we decide which proxy to use for a url",
                 "what happens when a connection times out",
                 "drop the login header when we are sent to another site",
                 "guess the text encoding of a reply body"],
    "django": ["how is the csrf token checked on a form post",
               "where are database migrations applied in order",
               "turn a url path into the view that handles it",
               "keep a user logged in between page loads",
               "escape html in template output so scripts cannot run",
               "send an email to the site admins when a page crashes",
               "pick which database a model is read from",
               "make a thumbnail sized copy of an uploaded picture",
               "retry a transaction that lost a lock",
               "translate the words on a page into the visitor's language"],
}


def run(root: Path, questions: list[str], pool: int, runs: int) -> tuple[list[float], list[float], list[int]]:
    """(first-pass ms, covered-pass ms, transformer vectors made per first pass) on a fresh index."""
    with tempfile.TemporaryDirectory(prefix="cs-pool-") as tmp, \
            Workspace(root, WorkspaceOptions(index_dir=Path(tmp) / "idx")) as ws:
        engine = SearchEngine(ws, EngineOptions(tier_blend=TierBlend(question_pool=pool)))
        try:
            engine.refresh()
            engine.search(SearchRequest("warm up the models for a question"))  # loads both readers
            semantic = engine.semantic
            assert semantic is not None and semantic.deep is not None
            first, made = [], []
            for q in questions:
                before = semantic.deep.embedded()
                started = time.perf_counter()
                engine.search(SearchRequest(q))
                first.append((time.perf_counter() - started) * 1000)
                made.append(semantic.deep.embedded() - before)
            covered = []
            for _ in range(runs):
                for q in questions:
                    started = time.perf_counter()
                    engine.search(SearchRequest(q))
                    covered.append((time.perf_counter() - started) * 1000)
            return first, covered, made
        finally:
            engine.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", choices=sorted(TREES), default="django")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pool", type=int, default=TierBlend().question_pool)
    args = parser.parse_args(argv)
    name, version, sub = TREES[args.tree]
    root = fetch_sdist(name, version) / sub
    questions = QUESTIONS[args.tree]
    print(f"{args.tree}: {root}, {len(questions)} questions, pool {args.pool}, {args.runs} covered runs")
    rows = {}
    for label, pool in (("static (pool 0)", 0), (f"pool {args.pool}", args.pool)):
        first, covered, made = run(root, questions, pool, args.runs)
        rows[label] = (first, covered)
        print(f"{label:16s} first p50 {statistics.median(first):8.1f} ms"
              f"  p95 {percentile(first, 0.95):8.1f} ms   covered p50 {statistics.median(covered):7.1f} ms"
              f"  p95 {percentile(covered, 0.95):7.1f} ms"
              f"   vectors made per question {made}")
    (b_first, b_cov), (p_first, p_cov) = rows.values()
    print(f"ratio pool/static: first p50 x{statistics.median(p_first) / statistics.median(b_first):.1f}, "
          f"covered p50 x{statistics.median(p_cov) / statistics.median(b_cov):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
