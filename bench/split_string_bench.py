"""Split string literals (issue 9): are messages written as adjacent literals found by an exact-string
query of the whole message, and do ordinary exact strings stay as they were?

    python bench/split_string_bench.py [--own] [--repos quick] [--per-repo 40] [--semble-dev-src DIR]

Queries are generated from each corpus (the indexes bench/eval_public.py leaves under
`$CODESEEK_EVAL_DIR`; run it first): `split` takes every run of adjacent literals
(`retrievers.sources.literals.runs`) whose joined message is 24-100 characters of words (no quotes or
backslashes) and asks for it quoted; a hit is a first result in that file whose lines overlap the
run's, "exact" when the exact-string route answered (not the fused fallback's whole chunk). `plain`
takes single literals of the same kind (no run) as the control. At most `--per-repo` of each per
corpus, in file order. Printed per corpus and in total: hits at rank 1 and the search p50.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.case_bench import OWN  # noqa: E402
from bench.corpora import cache_home, corpora_dir  # noqa: E402
from bench.semble_dev import load_repos, select, source_dir  # noqa: E402
from bench.timing import stopwatch  # noqa: E402
from indexing.workspace import Workspace, WorkspaceOptions  # noqa: E402
from retrievers.engine.search_engine import EngineOptions, SearchEngine, SearchRequest  # noqa: E402
from retrievers.sources.literals import runs  # noqa: E402

_WORDY = re.compile(r"^[A-Za-z][A-Za-z0-9 ,.:;!?%()/-]{22,98}[A-Za-z0-9.!?)]$")
_SINGLE = re.compile(r'"([^"\\\n]{24,100})"')


def targets(engine: SearchEngine, per_repo: int) -> tuple[list[tuple[str, str, int, int]],
                                                           list[tuple[str, str, int, int]]]:
    """(message, path, first line, last line) for split runs and for plain single literals."""
    split: list[tuple[str, str, int, int]] = []
    plain: list[tuple[str, str, int, int]] = []
    seen: set[str] = set()
    for path in sorted(engine.workspace.store.files()):
        try:
            text = engine.workspace.read_bytes(path).decode("utf-8", "replace")
        except OSError:
            continue
        run_lines: set[int] = set()
        for run in runs(text):
            message = run.joined.strip()
            first = text.count("\n", 0, run.pieces[0][0]) + 1
            last = text.count("\n", 0, run.pieces[-1][0]) + 1
            run_lines.update(range(first, last + 1))
            if len(split) < per_repo and _WORDY.match(message) and message not in seen:
                seen.add(message)
                split.append((message, path, first, last))
        for match in _SINGLE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            message = match.group(1).strip()
            if len(plain) < per_repo and line not in run_lines and _WORDY.match(message) \
                    and message not in seen:
                seen.add(message)
                plain.append((message, path, line, line))
    return split, plain


def score(engine: SearchEngine, items: list[tuple[str, str, int, int]],
          times: list[float]) -> tuple[int, int]:
    """(hits at rank 1, of them answered as exact matches: the direct route)."""
    hits = exact = 0
    for message, path, first, last in items:
        with stopwatch(times):
            doc = engine.search(SearchRequest(f'"{message}"', limit=5)).to_json()
        top = doc["results"][0] if doc["results"] else None
        hit = bool(top and top["path"] == path and top["start_line"] <= last and first <= top["end_line"])
        hits += hit
        exact += hit and doc["strategy"] == "direct"
    return hits, exact


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--own", action="store_true")
    parser.add_argument("--repos", default=None)
    parser.add_argument("--per-repo", type=int, default=40)
    parser.add_argument("--semble-dev-src", default=None)
    args = parser.parse_args()
    base = Path(os.environ.get("CODESEEK_EVAL_DIR") or cache_home() / "codeseek-eval")
    corpora: list[tuple[str, Path, Path]] = []
    if args.own:
        corpora += [(name, corpora_dir() / src, base / name) for name, src in OWN.items()]
    if args.repos:
        src_dir = source_dir(args.semble_dev_src)
        for repo in select(load_repos(), args.repos):
            root = src_dir / repo.name / repo.root if repo.root else src_dir / repo.name
            corpora.append((repo.name, root, base / "semble-dev" / repo.name))
    totals = [0] * 6
    times: list[float] = []
    for name, root, index in corpora:
        if not (index / "index.sqlite3").exists() or not root.is_dir():
            print(f"{name:22s} (no index or sources: run bench/eval_public.py first)")
            continue
        workspace = Workspace(root, WorkspaceOptions(index_dir=index))
        engine = SearchEngine(workspace, EngineOptions(embeddings=False))
        try:
            engine.refresh(embed=False)
            split, plain = targets(engine, args.per_repo)
            got = [len(split), *score(engine, split, times), len(plain), *score(engine, plain, times)]
        finally:
            engine.close()
            workspace.close()
        totals = [a + b for a, b in zip(totals, got, strict=True)]
        print(f"{name:26s} split {got[1]:3d} ({got[2]:3d} exact)/{got[0]:3d}   "
              f"plain {got[4]:3d} ({got[5]:3d} exact)/{got[3]:3d}")
    print(f"{'total':26s} split {totals[1]:3d} ({totals[2]:3d} exact)/{totals[0]:3d}   "
          f"plain {totals[4]:3d} ({totals[5]:3d} exact)/{totals[3]:3d}   "
          f"exact-string search p50 {statistics.median(times) if times else 0:.2f} ms (text-only, "
          "in process)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
