"""File cards (issue 9): what building and searching them costs, in process.

    python bench/filecard_bench.py --repos curl,tokio,commons-lang [--runs 5] [--semble-dev-src DIR]

For each semble-dev repository (indexed under `$CODESEEK_EVAL_DIR/semble-dev/<repo>`, as
bench/eval_public.py lays them out; opened text-only) it prints the files and definitions, the time to
build the cards from scratch (a new process's first question), the rebuild after a refresh that
changed nothing (the term counts are reused), and the p50 of one card search over the repository's
annotated queries, `--runs` times each. The fused route pays the build once per index snapshot.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.corpora import cache_home  # noqa: E402
from bench.semble_dev import add_bench_arguments, bench_repos  # noqa: E402
from bench.timing import NOISY, stopwatch  # noqa: E402
from indexing.workspace import Workspace, WorkspaceOptions  # noqa: E402
from retrievers.sources.filecards import build_cards  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_bench_arguments(parser)
    args = parser.parse_args()
    base = Path(os.environ.get("CODESEEK_EVAL_DIR") or cache_home() / "codeseek-eval")
    for repo, root, queries, index in bench_repos(args.repos, args.semble_dev_src, base):
        with Workspace(root, WorkspaceOptions(index_dir=index)) as workspace:
            workspace.update()
            paths = {c.path for c in workspace.store.chunks()}  # the files a snapshot holds
            definitions = workspace.store.definitions()
            cold: list[float] = []
            warm: list[float] = []
            search: list[float] = []
            for _ in range(args.runs):
                with stopwatch(cold):
                    cards, counts = build_cards(paths, definitions)
                with stopwatch(warm):
                    build_cards(paths, definitions, counts)
                for query in queries:
                    with stopwatch(search):
                        cards.search(query, 3)
        print(f"{repo.name:16s} {len(paths):5d} files {len(definitions):6d} definitions: build "
              f"{statistics.median(cold):7.1f} ms, rebuild {statistics.median(warm):6.1f} ms, search p50 "
              f"{statistics.median(search):5.2f} ms")
    print(f"(in process, medians; {NOISY})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
