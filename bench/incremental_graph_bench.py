"""Incremental call-graph builds against whole ones (graph.incremental): seconds per build after each
kind of change, and whether the two graphs are the same, on a copy of a real tree.

The tree (requests 2.32.3 or the whole Django 5.1.4 sdist, fetched by bench/corpora.py) is copied
into a temporary folder and indexed without embeddings. Then, round after round, one file chosen at
random (seeded) gets one change: a statement in a function body, a new function, a new method, an
import alias, a function renamed away, a class with a constructor (built whole), a new module, a
module deleted. Each time the holder the servers use (`GraphState(incremental=True)`) builds after
`Workspace.update`, and a fresh `GraphState` builds the same index whole; the two graphs are compared
(nodes, edges with their attributes and order, incoming sites, unresolved sites, outcome counts, the
symbol index's tables: `tests/unit/test_graph_incremental.facts`). Each build runs with the
collector paused, and what it made is frozen after it (`gc.freeze`), as in a server's refresh.
Prints medians per kind, the whole/incremental ratio, and "same" for each build; exits 1 when any
build differed.

    .venv/bin/python bench/incremental_graph_bench.py [--tree django-sdist] [--rounds 2] [--seed 1]
"""

from __future__ import annotations

import argparse
import gc
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.corpora import fetch_sdist  # noqa: E402
from indexing.gc_pause import paused_collection  # noqa: E402
from indexing.workspace import Workspace, WorkspaceOptions  # noqa: E402
from retrievers.engine.graph_state import GraphState  # noqa: E402
from tests.unit.test_graph_incremental import facts  # noqa: E402

TREES = {"requests": ("requests", "2.32.3"), "django-sdist": ("Django", "5.1.4")}
NEW_MODULE = ("from os import path\n\n\ndef get(x):\n    return path.join(x)\n\n\n"
              "class Ledger:\n    def save(self):\n        return get(1)\n")
EDITS: dict[str, Callable[[str], str]] = {
    "body": lambda s: s.replace("    return ", "    bench_x = 1\n    return ", 1),
    "function": lambda s: s + "\n\ndef get(self):\n    return rebuild_auth()\n",
    "method": lambda s: s.replace("    def ", "    def send(self):\n        return self.get()\n\n    def ",
                                  1),
    "import": lambda s: "from os.path import join as send\n" + s,
    "rename": lambda s: s.replace("\ndef ", "\ndef _bench_renamed_", 1),
    "class+ctor": lambda s: s + "\n\nclass BenchExtra(object):\n    def __init__(self):\n        pass\n",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", choices=sorted(TREES), default="django-sdist")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="codeseek-graph-bench-") as tmp:
        root = Path(tmp) / "tree"
        shutil.copytree(fetch_sdist(*TREES[args.tree]), root)
        with Workspace(root, WorkspaceOptions(index_dir=Path(tmp) / "index")) as ws:
            ws.update()
            holder = GraphState(ws, incremental=True)
            started = time.perf_counter()
            holder.build()
            gc.freeze()
            print(f"{args.tree}: first (whole) build {time.perf_counter() - started:.2f} s")
            files = sorted(p for p in root.rglob("*.py") if "tests" not in p.parts and p.stat().st_size)
            times: dict[str, list[tuple[float, float]]] = defaultdict(list)
            differed = 0
            for round_no in range(args.rounds):
                for kind, change in [*EDITS.items(), ("new module", None), ("module deleted", None)]:
                    path = rng.choice(files)
                    if change is not None:
                        text = path.read_text(encoding="utf-8", errors="replace")
                        if change(text) == text:
                            continue
                        path.write_text(change(text), encoding="utf-8")
                        ws.update(paths=[str(path.relative_to(root))])
                    elif kind == "new module":
                        path = path.parent / f"bench_module_{round_no}.py"
                        path.write_text(NEW_MODULE, encoding="utf-8")
                        ws.update()
                    else:
                        files.remove(path)
                        path.unlink()
                        ws.update()
                    before = holder._inputs.incremental_builds if holder._inputs else 0
                    started = time.perf_counter()
                    with paused_collection():
                        graph = holder.build()
                    incremental_s = time.perf_counter() - started
                    gc.freeze()
                    took = bool(holder._inputs and holder._inputs.incremental_builds == before + 1)
                    started = time.perf_counter()
                    with paused_collection():
                        whole = GraphState(ws).build()
                    whole_s = time.perf_counter() - started
                    gc.freeze()
                    same = facts(graph) == facts(whole)
                    differed += not same
                    times[kind].append((incremental_s, whole_s))
                    how = "incremental" if took else "whole      "
                    print(f"  {kind:15} {path.relative_to(root)}: {how} {incremental_s:.2f} s, "
                          f"whole build {whole_s:.2f} s, {'same' if same else 'DIFFERENT'}")
    print(f"\n{'change':15} {'builds':>6} {'this s':>8} {'whole s':>8} {'ratio':>6}  (medians)")
    for kind, pairs in times.items():
        mine = statistics.median(p[0] for p in pairs)
        whole_times = statistics.median(p[1] for p in pairs)
        print(f"{kind:15} {len(pairs):6} {mine:8.2f} {whole_times:8.2f} {whole_times / mine:6.1f}x")
    print(f"\n{differed} build(s) differed from a whole build" if differed
          else "\nevery build equal to a whole one")
    return 1 if differed else 0


if __name__ == "__main__":
    raise SystemExit(main())
