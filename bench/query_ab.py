"""Warm query latency of this checkout against another, interleaved, and whether their answers are
the same: the A/B for a change meant to make search faster and nothing else.

    python bench/query_ab.py --base ../old-checkout                    # flask 3.0.3, 3 rounds
    python bench/query_ab.py --base ../old --corpus django --rounds 5 --passes 20
    python bench/query_ab.py --base ../old --corpus requests --same-only

Each round runs one process per checkout, alternating which goes first: the process imports that
checkout (its folder first on `sys.path`), opens the corpus index under the bench cache dir (built on
first use, shared by both: the index format must be the same), runs the peer bench's queries for the
corpus (`bench.peer_bench.QUERIES`) once untimed and `--passes` times timed, and reports the wall
p50. The report prints each round's p50 for both and the median of the per-round ratios (this/base):
the VM's speed drifts between minutes, so only ratios from one run mean anything.

Before timing, each checkout answers the same queries (the bench's plus those of the evaluation's
default sets: the public ones in the shared eval folder and `bench/queries`) and the result documents, without
`timings_ms`, are compared as JSON text (keys in their order, so byte for byte): "same answers for N of M
queries" and the first that differ.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CORPORA = {"requests": ("requests", "2.32.3", ""), "flask": ("flask", "3.0.3", ""),
           "django": ("Django", "5.1.4", "django")}


def _query_sets() -> list[str]:
    """Query texts of the evaluation's default sets (`bench.eval_public.default_sets`)."""
    from bench.eval_public import default_sets
    from bench.evalsets import load_set

    return list(dict.fromkeys(q.query for path in default_sets() for q in load_set(path).queries))


def child(checkout: Path, root: Path, index_base: Path, queries: list[str], passes: int,
          dump: Path | None) -> dict[str, Any]:
    """In the child process: this checkout's engine over `root`; answers and/or latencies."""
    sys.path.insert(0, str(checkout))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from indexing.workspace import Workspace, WorkspaceOptions
    try:
        from retrievers.engine.search_engine import EngineOptions, SearchEngine, SearchRequest
    except ImportError:  # a checkout from before retrievers/ had sub-packages (issue 31)
        from retrievers.engine import EngineOptions, SearchEngine, SearchRequest  # type: ignore[no-redef,attr-defined]

    engine = SearchEngine(Workspace(root, WorkspaceOptions(index_base=index_base)), EngineOptions())
    engine.refresh(embed=True)
    if dump is not None:
        answers = {}
        for q in queries:
            answer = engine.search(SearchRequest(q, limit=10))
            doc = answer.to_json() if hasattr(answer, "to_json") else answer  # a dict before issue 31
            doc.pop("timings_ms", None)
            answers[q] = json.dumps(doc, ensure_ascii=False, default=str)
        dump.write_text(json.dumps(answers))
    if passes:  # one untimed pass first
        for q in queries:
            engine.search(SearchRequest(q, limit=10))
    latencies = []
    for _ in range(passes):
        for q in queries:
            started = time.perf_counter()
            engine.search(SearchRequest(q, limit=10))
            latencies.append((time.perf_counter() - started) * 1000)
    return {"p50_ms": statistics.median(latencies) if latencies else None}


def _run_child(checkout: Path, root: Path, index_base: Path, queries: list[str], passes: int,
               dump: Path | None) -> dict[str, Any]:
    spec = json.dumps({"checkout": str(checkout), "root": str(root), "index_base": str(index_base),
                       "queries": queries, "passes": passes, "dump": str(dump) if dump else None})
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", spec], cwd=checkout,
                          env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: the child failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="warm query latency and answers of two checkouts")
    parser.add_argument("--base", type=Path, help="the other checkout (a git worktree of the old commit)")
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="flask")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--passes", type=int, default=20)
    parser.add_argument("--same-only", action="store_true", help="compare the answers, time nothing")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        spec = json.loads(args.child)
        out = child(Path(spec["checkout"]), Path(spec["root"]), Path(spec["index_base"]), spec["queries"],
                    spec["passes"], Path(spec["dump"]) if spec["dump"] else None)
        print(json.dumps(out))
        return 0
    if args.base is None:
        parser.error("--base is required")
    sys.path.insert(0, str(REPO))
    from bench.corpora import cache_home, fetch_sdist
    from bench.peer_bench import QUERIES

    package, version, sub = CORPORA[args.corpus]
    root = fetch_sdist(package, version) / sub if sub else fetch_sdist(package, version)
    index_base = cache_home() / "codeseek-bench" / "query-ab" / args.corpus
    this, base = REPO, args.base.resolve()
    bench_queries = QUERIES[args.corpus]
    with tempfile.TemporaryDirectory(prefix="query-ab-") as scratch:
        answers = {}
        for name, checkout in (("base", base), ("this", this)):
            dump = Path(scratch) / f"{name}.json"
            _run_child(checkout, root, index_base, [*bench_queries, *_query_sets()], 0, dump)
            answers[name] = json.loads(dump.read_text())
        differ = [q for q in answers["this"] if answers["this"][q] != answers["base"].get(q)]
        print(f"{args.corpus}: same answers for {len(answers['this']) - len(differ)} of "
              f"{len(answers['this'])} queries" + ("" if not differ else "; first that differ:"))
        for q in differ[:10]:
            print(f"  {q}")
    if args.same_only:
        return 1 if differ else 0
    ratios = []
    print(f"warm query p50 over {args.passes} passes of {len(bench_queries)} queries (ms):")
    for n in range(args.rounds):
        order = (("this", this), ("base", base)) if n % 2 == 0 else (("base", base), ("this", this))
        got = {name: _run_child(checkout, root, index_base, bench_queries, args.passes, None)["p50_ms"]
               for name, checkout in order}
        ratios.append(got["this"] / got["base"])
        print(f"  round {n + 1}: this {got['this']:.2f}  base {got['base']:.2f}  ratio {ratios[-1]:.2f}")
    print(f"median ratio this/base: {statistics.median(ratios):.2f}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
