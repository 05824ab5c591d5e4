"""The ranking does not depend on the limit (issue 30): for every query and every k <= 30, the first k
results at `limit` k are the first k at `limit` 30, entry for entry (path, lines, symbol, score,
snippet, explain, what is folded under `also`), and `total` is the same.

The fast test asks `codeseek search --batch` (one process, the real front end) over a copy of
tests/workspace/engine_sample; the slow one runs the click and flask eval sets' queries
(`bench/queries`) over their corpora (fetched from PyPI) with the semantic retriever on.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tests" / "workspace" / "engine_sample"
DEPTH = 30
QUERIES = [
    "apply_discount", "def apply_discount", "who calls charge_card", "impact of tax_for_region",
    '"amount"', '"card declined"', '"this string appears nowhere"', "def frobnicate_widget",
    "how is the money given back to the customer", "compute the total of a cart", "total",
    "xyzzy plugh frobnicate", "validate cart items", "Cart", "cart empty error",
]


def differences(ranked: dict[int, dict[str, Any]], query: str) -> list[str]:
    """Where a limit's answer differs from the first results at DEPTH (an empty list: none)."""
    deep = ranked[DEPTH]
    out = []
    for k, doc in ranked.items():
        if doc["results"] != deep["results"][:k]:
            got = [(r["path"], r["line"]) for r in doc["results"]]
            want = [(r["path"], r["line"]) for r in deep["results"][:k]]
            out.append(f"{query!r} at limit {k}: {got} != {want}")
        elif doc["total"] != deep["total"]:
            out.append(f"{query!r} at limit {k}: total {doc['total']} != {deep['total']}")
    return out


def test_the_first_k_results_are_the_same_at_every_limit(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    shutil.copytree(SAMPLE, root)
    lines = [json.dumps({"id": f"{n}:{k}", "query": q, "limit": k})
             for n, q in enumerate(QUERIES) for k in range(1, DEPTH + 1)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [sys.executable, "-m", "lsp_server.cli", "search", "--batch", "-", "--no-embed", "--root", str(root),
         "--index-dir", str(tmp_path / "index")],
        input="\n".join(lines), capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    answers: dict[int, dict[int, dict[str, Any]]] = {}
    for line in proc.stdout.splitlines():
        doc = json.loads(line)
        n, k = (int(x) for x in doc["id"].split(":"))
        answers.setdefault(n, {})[k] = doc
    assert len(answers) == len(QUERIES)
    assert sum(len(a[DEPTH]["results"]) for a in answers.values()) > 3 * len(QUERIES)  # lists to cut
    problems = [p for n, ranked in answers.items() for p in differences(ranked, QUERIES[n])]
    assert not problems, "\n".join(problems[:10])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["click-8.1.8", "flask-3.1.0"])
def test_the_eval_sets_rank_the_same_at_every_limit(name: str, tmp_path: Path) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from bench.corpora import fetch_sdist
    from bench.evalsets import load_set
    from indexing.workspace import Workspace, WorkspaceOptions
    from retrievers.engine.search_engine import EngineOptions, SearchEngine, SearchRequest

    queries = load_set(REPO / "bench" / "queries" / f"{name}.json")
    corpus = queries.corpus
    root = fetch_sdist(corpus["name"], corpus["version"]) / corpus.get("root", "")
    engine = SearchEngine(Workspace(root, WorkspaceOptions(index_base=tmp_path / "index")), EngineOptions())
    try:
        engine.refresh(embed=True)
        problems: list[str] = []
        for q in queries.queries:
            ranked = {}
            for k in range(1, DEPTH + 1):
                doc = engine.search(SearchRequest(q.query, limit=k)).to_json()
                ranked[k] = doc
            problems += differences(ranked, q.query)
        assert not problems, "\n".join(problems[:10])
    finally:
        engine.close()
        engine.workspace.close()
