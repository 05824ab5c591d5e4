"""How good are answers while the transformer tier is partly filled, by the order it is filled in?

    python bench/fill_order_bench.py                      # every set, every order, p in 0 .1 .25 .5 1
    python bench/fill_order_bench.py --set gap-httpx --order current,chosen --p 0.1,0.25
    python bench/fill_order_bench.py --budget chars       # p of the embedding work, not of the chunks
    python bench/fill_order_bench.py --json out.json

For each query set (the vocabulary-gap sets bench/queries/gap-*.json; the public ones: the requests
seed set, the dev sets and click/flask/express), the engine opens the set's evaluation index as
`bench/eval_public.py` does (the indexes under ~/.cache/codeseek-eval/ hold every transformer vector
already, so nothing is embedded; a set whose tier is incomplete is reported). Then, for each candidate
order and fill fraction p, only the first p of the chunks in that order keep their transformer vector
(the rest are masked out of the deep tier in process, as if not yet embedded: the static tier ranks
them), and the set is run: hit@10 and MRR (over the top 10) of the fused result, per set and pooled
(gap sets pooled, public sets pooled; micro-averaged over queries). The summary ranks the orders by the
mean over p in (0.1, 0.25, 0.5) of the gap and public pools' hit@10 and MRR, the two pools weighted
alike (neither alone).

`--blend K,FAST,DEEP` ranks with another tier blend (the weighted RRF of `retrievers.semantic.tiered`).
`--budget chars` counts p in estimated embedding work (a chunk's bytes, clipped where the transformer
stops reading, plus a fixed cost per chunk) instead of chunks, so orders by size compete fairly.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.eval_public import (  # noqa: E402
    SHARED_EVAL,
    open_engine,
    resolve_targets,
)
from bench.evalsets import QuerySet, Totals, first_rank, load_set  # noqa: E402
from indexing.records import Chunk  # noqa: E402
from retrievers.engine.fill_order import DEFINITION_KINDS, fill_key, label_tier, word_rarity  # noqa: E402
from retrievers.engine.search_engine import SearchEngine, SearchRequest  # noqa: E402
from retrievers.semantic.tiered import TierBlend  # noqa: E402
from retrievers.semantic.vectors import VectorIndex  # noqa: E402

FRACTIONS = (0.0, 0.1, 0.25, 0.5, 1.0)
PARTIAL = (0.1, 0.25, 0.5)  # the fractions the summary averages (0 and 1 do not depend on the order)
RANDOM_SEEDS = (0, 1, 2)
CHUNK_COST = 64  # bytes-equivalent fixed cost of a chunk (--budget chars)
READ_BYTES = 1500  # SemanticOptions.max_chars: what the transformer reads of a chunk at most


def gap_sets() -> list[Path]:
    return sorted((HERE / "queries").glob("gap-*.json"))


def public_sets() -> list[Path]:
    shared = [SHARED_EVAL / "requests-seed.json", *sorted(SHARED_EVAL.glob("dev-*.json"))]
    ours = [p for name in ("click", "flask", "express")
            for p in sorted((HERE / "queries").glob(f"{name}*.json"))]
    return [p for p in shared if p.exists()] + ours


@dataclass
class Features:
    """What the candidate orders read of each chunk of one index."""

    tier: dict[int, int] = field(default_factory=dict)
    definition: dict[int, bool] = field(default_factory=dict)
    doc: dict[int, bool] = field(default_factory=dict)  # a definition whose doc comment is not empty
    pagerank: dict[int, float] = field(default_factory=dict)
    size: dict[int, int] = field(default_factory=dict)  # bytes
    rarity: dict[int, float] = field(default_factory=dict)  # mean IDF of the chunk's distinct words


def features(engine: SearchEngine, chunks: Sequence[Chunk]) -> Features:
    view = engine._view  # the bench reads the engine's current snapshot (PageRank, definitions)
    assert view is not None
    snap = view[0]
    out = Features()
    for c in chunks:
        out.tier[c.id] = label_tier(c)
        out.definition[c.id] = c.kind in DEFINITION_KINDS
        d = snap.named_in(c.path, c.symbol) if c.symbol else None
        out.doc[c.id] = out.definition[c.id] and d is not None and bool(d.doc.strip())
        out.pagerank[c.id] = snap.pagerank.get(c.id, 0.0) or 0.0
        out.size[c.id] = c.end_byte - c.start_byte
    out.rarity = word_rarity(chunks, engine.workspace.chunk_text)
    return out


OrderKey = Callable[[Chunk], Any]


def candidates(f: Features, engine: SearchEngine) -> dict[str, OrderKey]:
    """The candidate orders (smaller key first); "chosen" is `retrievers.engine.fill_order.fill_key`."""
    view = engine._view
    assert view is not None
    snap = view[0]

    def kind3(c: Chunk) -> int:
        return 0 if f.doc[c.id] else 1 if f.definition[c.id] else 2

    orders: dict[str, OrderKey] = {
        "current": lambda c: (f.tier[c.id], -f.pagerank[c.id], c.path, c.start_line),
        "doc-first": lambda c: (f.tier[c.id], not f.doc[c.id], -f.pagerank[c.id], c.path, c.start_line),
        "defs-first": lambda c: (f.tier[c.id], not f.definition[c.id], -f.pagerank[c.id], c.path,
                                 c.start_line),
        "doc>defs>rest": lambda c: (f.tier[c.id], kind3(c), -f.pagerank[c.id], c.path, c.start_line),
        "defs-any-tier": lambda c: (not f.definition[c.id], f.tier[c.id], -f.pagerank[c.id], c.path,
                                    c.start_line),
        "pagerank": lambda c: (-f.pagerank[c.id], c.path, c.start_line),
        "rare-words": lambda c: (f.tier[c.id], -f.rarity[c.id], c.path, c.start_line),
        "defs+rare": lambda c: (f.tier[c.id], not f.definition[c.id], -f.rarity[c.id], c.path, c.start_line),
        "doc>defs+rare": lambda c: (f.tier[c.id], kind3(c), -f.rarity[c.id], c.path, c.start_line),
        "defs+rare-any-tier": lambda c: (not f.definition[c.id], f.tier[c.id], -f.rarity[c.id], c.path,
                                         c.start_line),
        "short-first": lambda c: (f.tier[c.id], f.size[c.id], c.path, c.start_line),
        "long-first": lambda c: (f.tier[c.id], -f.size[c.id], c.path, c.start_line),
        "chosen": fill_key(snap, engine.workspace.chunk_text),
    }
    for seed in RANDOM_SEEDS:
        rng = random.Random(seed)
        shuffled = {cid: rng.random() for cid in sorted(f.tier)}
        orders[f"random-{seed}"] = lambda c, s=shuffled: s[c.id]  # type: ignore[misc]
    return orders


def cost(c: Chunk, budget: str) -> int:
    return 1 if budget == "chunks" else min(c.end_byte - c.start_byte, READ_BYTES) + CHUNK_COST


def prefix_ids(ordered: Sequence[Chunk], p: float, budget: str) -> set[int]:
    """The ids of the first `p` of `ordered` (of the chunks, or of their embedding cost)."""
    if p >= 1.0:
        return {c.id for c in ordered}
    total = sum(cost(c, budget) for c in ordered)
    limit, spent, out = p * total, 0, set()
    for c in ordered:
        spent += cost(c, budget)
        if spent > limit:
            break
        out.add(c.id)
    return out


class DeepMask:
    """Shows the engine's transformer tier with only some of its vectors (as if the rest were pending)."""

    def __init__(self, engine: SearchEngine) -> None:
        assert engine.semantic is not None and engine.semantic.deep is not None
        self.deep = engine.semantic.deep
        vectors = self.deep._vectors
        assert vectors is not None, "the transformer tier holds no vectors: run bench/eval_public.py first"
        self.full = vectors
        self.state = vectors.export_state()
        self.all_ids = set(self.deep.ids())
        self.pending = set(self.deep._pending)

    def keep(self, ids: set[int]) -> None:
        keep = np.isin(self.state["ids"], np.fromiter(ids, dtype=np.int64, count=len(ids)))
        index = None
        if keep.any():
            index = VectorIndex(self.full.dims, self.full.options)
            index.restore(self.state, keep)
        held = set(self.state["ids"][keep].tolist())
        with self.deep._lock:
            self.deep._vectors = index
            self.deep._pending = self.all_ids - held

    def restore(self) -> None:
        with self.deep._lock:
            self.deep._vectors, self.deep._pending = self.full, self.pending


def run_queries(engine: SearchEngine, qs: QuerySet) -> Totals:
    totals = Totals()
    for q in qs.queries:
        results = engine.search(SearchRequest(q.query, limit=10)).to_json()["results"]
        totals.add(first_rank(results, q.targets + q.secondary, qs.prefix, suffix=qs.metric == "ndcg"))
    return totals


Cell = dict[str, float]


def measure_set(path: Path, embedder: Any, orders_wanted: Sequence[str] | None, fractions: Sequence[float],
                budget: str, blend: TierBlend | None = None) -> dict[str, Any]:
    """{"set", "queries", "chunks", "vectors", "cells": {order: {p: {"hit10", "rr", "n"}}}}."""
    qs = load_set(path)
    engine = open_engine(qs, True, embedder)
    try:
        if blend is not None and engine.semantic is not None:
            engine.semantic.blend = blend
        for q in qs.queries:
            q.targets = resolve_targets(engine, qs, q.targets)
        mask = DeepMask(engine)
        view = engine._view
        assert view is not None
        chunks = [view[0].chunks[i] for i in sorted(mask.all_ids) if i in view[0].chunks]
        feats = features(engine, chunks)
        orders = candidates(feats, engine)
        names = [n for n in orders if orders_wanted is None or n in orders_wanted
                 or (n.startswith("random") and "random" in orders_wanted)]
        cells: dict[str, dict[str, Cell]] = {}
        edge: dict[float, Cell] = {}
        try:
            for name in names:
                ordered = sorted(chunks, key=orders[name])
                row = cells.setdefault(name, {})
                for p in fractions:
                    if p in (0.0, 1.0) and p in edge:  # the same for every order
                        row[str(p)] = edge[p]
                        continue
                    mask.keep(prefix_ids(ordered, p, budget))
                    t = run_queries(engine, qs)
                    row[str(p)] = {"hit10": t.hit10, "rr": t.rr, "n": t.n}
                    if p in (0.0, 1.0):
                        edge[p] = row[str(p)]
        finally:
            mask.restore()
        return {"set": qs.name, "queries": len(qs.queries), "chunks": len(chunks),
                "vectors": len(mask.state["ids"]), "incomplete": len(mask.pending), "cells": cells}
    finally:
        engine.close()
        engine.workspace.close()


def with_random_mean(cells: dict[str, dict[str, Cell]]) -> dict[str, dict[str, Cell]]:
    """The random orders' cells averaged into one "random" row (a floor)."""
    seeds = [n for n in cells if n.startswith("random-")]
    if not seeds:
        return cells
    out = {n: v for n, v in cells.items() if n not in seeds}
    out["random"] = {p: {k: sum(cells[s][p][k] for s in seeds) / len(seeds) for k in ("hit10", "rr", "n")}
                     for p in cells[seeds[0]]}
    return out


def pooled(reports: Sequence[dict[str, Any]]) -> dict[str, dict[str, Cell]]:
    out: dict[str, dict[str, Cell]] = {}
    for report in reports:
        for name, row in with_random_mean(report["cells"]).items():
            for p, cell in row.items():
                acc = out.setdefault(name, {}).setdefault(p, {"hit10": 0.0, "rr": 0.0, "n": 0.0})
                for k in acc:
                    acc[k] += cell[k]
    return out


def _fmt(cell: Cell) -> str:
    n = cell["n"] or 1
    return f"{cell['hit10'] / n:.2f}/{cell['rr'] / n:.3f}"


def print_table(title: str, cells: dict[str, dict[str, Cell]], fractions: Sequence[float]) -> None:
    print(f"\n{title} (hit@10 / MRR)")
    print(f"| order | {' | '.join(f'p={p:g}' for p in fractions)} |")
    print("|---|" + "---|" * len(fractions))
    for name, row in cells.items():
        print(f"| {name} | {' | '.join(_fmt(row[str(p)]) for p in fractions)} |")


def partial_mean(row: dict[str, Cell]) -> tuple[float, float]:
    """Mean hit@10 and MRR over the partial fractions present in `row`."""
    ps = [str(p) for p in PARTIAL if str(p) in row]
    if not ps:
        return 0.0, 0.0
    h = sum(row[p]["hit10"] / (row[p]["n"] or 1) for p in ps) / len(ps)
    m = sum(row[p]["rr"] / (row[p]["n"] or 1) for p in ps) / len(ps)
    return h, m


def print_summary(gap: dict[str, dict[str, Cell]], public: dict[str, dict[str, Cell]]) -> None:
    print(f"\nsummary: mean over p in {PARTIAL} (gap and public pools weighted alike)")
    print("| order | gap hit@10 | gap MRR | public hit@10 | public MRR | score |")
    print("|---|---|---|---|---|---|")
    rows = []
    for name in gap.keys() | public.keys():
        gh, gm = partial_mean(gap.get(name, {}))
        ph, pm = partial_mean(public.get(name, {}))
        rows.append((((gh + ph) / 2 + (gm + pm) / 2) / 2, name, gh, gm, ph, pm))
    for score, name, gh, gm, ph, pm in sorted(rows, reverse=True):
        print(f"| {name} | {gh:.3f} | {gm:.3f} | {ph:.3f} | {pm:.3f} | {score:.3f} |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", default=[], help="a set whose file name holds this")
    parser.add_argument("--order",
                        help="candidate orders, comma-separated (default: all; 'random': its seeds)")
    parser.add_argument("--p", help="comma-separated fill fractions (default: 0,0.1,0.25,0.5,1)")
    parser.add_argument("--budget", choices=("chunks", "chars"), default="chunks")
    parser.add_argument("--blend", metavar="K,FAST,DEEP",
                        help="the tier blend of a partly filled tier (default: TierBlend's)")
    parser.add_argument("--per-set", action="store_true", help="also print each set's table")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    fractions = [float(x) for x in args.p.split(",")] if args.p else list(FRACTIONS)
    wanted = args.order.split(",") if args.order else None
    blend = None
    if args.blend:
        k, fast, deep = args.blend.split(",")
        blend = TierBlend(int(k), float(fast), float(deep))
    groups = {"gap": gap_sets(), "public": public_sets()}
    if args.set:
        groups = {g: [p for p in paths if any(s in p.stem for s in args.set)] for g, paths in groups.items()}
    from retrievers.semantic.embedder import foreground_options
    from retrievers.semantic.models import make_embedder

    embedder = make_embedder(None, foreground_options())
    reports: dict[str, list[dict[str, Any]]] = {}
    for group, paths in groups.items():
        for path in paths:
            report = measure_set(path, embedder, wanted, fractions, args.budget, blend)
            reports.setdefault(group, []).append(report)
            note = f", {report['incomplete']} chunks without a vector" if report["incomplete"] else ""
            print(f"  {group} {report['set']}: {report['queries']} queries, {report['chunks']} chunks{note}",
                  file=sys.stderr, flush=True)
            if args.per_set:
                print_table(report["set"], with_random_mean(report["cells"]), fractions)
    pools = {group: pooled(items) for group, items in reports.items()}
    for group, cells in pools.items():
        n = sum(r["queries"] for r in reports[group])
        print_table(f"{group} sets pooled ({len(reports[group])} sets, {n} queries, budget {args.budget})",
                    cells, fractions)
    print_summary(pools.get("gap", {}), pools.get("public", {}))
    if args.json:
        Path(args.json).write_text(json.dumps({"budget": args.budget, "reports": reports}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
