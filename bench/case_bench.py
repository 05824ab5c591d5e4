"""Exact-case identifier lookups (issue 9): does a name typed with its exact case find that definition
first when another definition differs from it only in case (`Session` / `session`, `getUser` / `GetUser`)?

    python bench/case_bench.py [--repos quick] [--own] [--no-embed] [--per-repo 60]

The queries are generated, not hand-picked: in each corpus every definition name that has a case
variant among the definitions is typed as it is written (at most `--per-repo` names per corpus, in
sorted order), and the answer counts when the first result's symbol (its last dotted part) equals the
name exactly; hit@3 likewise. Corpora: our own sets' corpora (`--own`) and semble-dev repositories
(`--repos`), read from the indexes bench/eval_public.py leaves under `$CODESEEK_EVAL_DIR` (run it
first); `--no-embed` answers text-only, else with the static tier.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.corpora import cache_home, corpora_dir  # noqa: E402
from bench.semble_dev import load_repos, select, source_dir  # noqa: E402
from indexing.workspace import Workspace, WorkspaceOptions  # noqa: E402
from retrievers.engine.search_engine import EngineOptions, SearchEngine, SearchRequest  # noqa: E402

OWN = {"requests-2.32.3": "requests-2.32.3", "flask-3.1.0": "flask-3.1.0", "click-8.1.8": "click-8.1.8",
       "express-4.21.2": "npm-express-4.21.2", "pydantic-2.14.4-pydantic": "pydantic-2.14.4/pydantic",
       "model2vec-0.10.0-model2vec": "model2vec-0.10.0/model2vec"}


def case_names(engine: SearchEngine) -> list[str]:
    """Definition names that have a different-case twin among the definitions."""
    by_folded: dict[str, set[str]] = defaultdict(set)
    for d in engine.workspace.store.definitions():
        if len(d.name) >= 2 and d.name.isidentifier():
            by_folded[d.name.lower()].add(d.name)
    return sorted(n for names in by_folded.values() if len(names) > 1 for n in names)


def run_corpus(label: str, root: Path, index: Path, embed: bool, per_repo: int) -> tuple[int, int, int]:
    if not (index / "index.sqlite3").exists() or not root.is_dir():
        print(f"{label:22s} (no index at {index} or no sources: run bench/eval_public.py first)")
        return 0, 0, 0
    options = EngineOptions(embeddings=embed, transformer=None)
    workspace = Workspace(root, WorkspaceOptions(index_dir=index))
    engine = SearchEngine(workspace, options)
    try:
        engine.refresh(embed=embed)
        names = case_names(engine)[:per_repo]
        top1 = top3 = 0
        for name in names:
            results = engine.search(SearchRequest(name, limit=3)).to_json()["results"]
            lasts = [str(r.get("symbol") or "").replace("::", ".").rsplit(".", 1)[-1] for r in results]
            top1 += bool(lasts) and lasts[0] == name
            top3 += name in lasts
        print(f"{label:22s} names {len(names):3d}  exact case hit@1 {top1:3d}  hit@3 {top3:3d}")
        return len(names), top1, top3
    finally:
        engine.close()
        workspace.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", default=None, help="semble-dev repositories (quick, all, a,b)")
    parser.add_argument("--own", action="store_true", help="our own sets' corpora")
    parser.add_argument("--no-embed", action="store_true")
    parser.add_argument("--per-repo", type=int, default=60)
    parser.add_argument("--semble-dev-src", default=None)
    args = parser.parse_args()
    base = Path(os.environ.get("CODESEEK_EVAL_DIR") or cache_home() / "codeseek-eval")
    total = [0, 0, 0]
    if args.own:
        for index_name, src in OWN.items():
            got = run_corpus(index_name, corpora_dir() / src, base / index_name, not args.no_embed,
                             args.per_repo)
            total = [a + b for a, b in zip(total, got, strict=True)]
    if args.repos:
        src_dir = source_dir(args.semble_dev_src)
        for repo in select(load_repos(), args.repos):
            root = src_dir / repo.name / repo.root if repo.root else src_dir / repo.name
            got = run_corpus(repo.name, root, base / "semble-dev" / repo.name, not args.no_embed,
                             args.per_repo)
            total = [a + b for a, b in zip(total, got, strict=True)]
    print(f"{'total':22s} names {total[0]:3d}  exact case hit@1 {total[1]:3d}  hit@3 {total[2]:3d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
