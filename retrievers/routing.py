"""How a search is routed: direct (one retriever answers) or fused (weighted RRF + priors).

Direct route (`retrievers.direct_route`), taken when the intent's confidence is >= 0.85 (or the
request names the intent): exact_match -> text, find_definition -> structural, find_references and
impact_analysis -> graph. An empty direct route falls back to the fused route.

Fused route (this module): each of the preset's retrievers over-fetches, the graph expands the top
seeds of the others (callers and callees), `fusion.fuse` applies weighted RRF and the priors, and
`exact_case.prefer_exact_case` puts exact-case definitions of an identifier query above different-case
ones, `grouping.saturate` scores a file's further results x file_decay per result already listed (the rest
fold under `also`), then `floor.apply` drops weak semantic-only matches from the ranked list. While
another thread loads the embedding model, semantic is left out (`notes`).
`raw` gives one retriever's own ranking (evaluation). The names the engine uses from the other two
modules (`RouteContext`, `Retrievers`, `direct`, `DIRECT_CONFIDENCE`) are re-exported here.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from retrievers import floor, fusion
from retrievers.base import Hit, QueryError
from retrievers.direct_route import DIRECT_CONFIDENCE, MAX_DIRECT_FETCH, direct
from retrievers.exact_case import prefer_exact_case
from retrievers.grouping import GROUPED_KINDS, collapse_definitions, group_after_fusion, saturate
from retrievers.literals import line_groups
from retrievers.results import Located
from retrievers.route_context import (
    NAME_TIERS,
    Retrievers,
    RouteContext,
    graph_located,
    graph_search,
    structural_hits,
)
from retrievers.tiered import TieredSemantic

__all__ = ["DIRECT_CONFIDENCE", "EXPAND_INTENTS", "MAX_DIRECT_FETCH", "MODEL_LOADING", "NAME_TIERS",
           "Retrievers", "RouteContext", "direct", "fused", "model_loading", "raw"]

EXPAND_INTENTS = frozenset({"understand_code", "find_similar", "find_definition"})
MODEL_LOADING = "the embedding model is still loading: this answer is ranked without semantic search"


# ---------------------------------------------------------------------------------------------------
# Fused route


def fused(ctx: RouteContext) -> tuple[list[str], list[Located]]:
    """(modalities run, results) by weighted RRF over the preset's retrievers plus priors."""
    checked, intent, snap = ctx.checked, ctx.intent, ctx.snap
    chosen = fusion.preset(checked.preset)
    k = ctx.rrf_k if ctx.rrf_k is not None else ctx.preset_k.get(chosen.name)
    if k is not None:
        chosen = dataclasses.replace(chosen, k=k)
    weights = fusion.weights_for(intent.name, chosen)
    if ctx.weights and intent.name in ctx.weights:
        weights = {m: ctx.weights[intent.name].get(m, 0.0) for m in chosen.modalities}
    if checked.modalities:  # restrict to the asked retrievers, keeping the intent's weights
        table = (ctx.weights or {}).get(intent.name) or fusion.WEIGHTS.get(intent.name, {})
        weights = {m: table.get(m, 0.0) for m in checked.modalities}
        if not any(w > 0 for w in weights.values()):
            weights = {m: 1.0 for m in checked.modalities}
    if ctx.retrievers.semantic is None or ctx.retrievers.semantic.embedded() == 0:
        weights.pop("semantic", None)
    weights = {m: w for m, w in weights.items() if w > 0}
    if "semantic" in weights and len(weights) > 1 and model_loading(ctx.retrievers.semantic):
        # A warm restart has the vectors at once, but the model loads in the background for seconds:
        # rank with the other retrievers now (their weights as the intent gives them) and say so.
        del weights["semantic"]
        ctx.notes.append(MODEL_LOADING)
    fetch = chosen.fetch_limit(checked.limit)
    query = ctx.query
    ranked: dict[str, list[Hit]] = {}
    if "structural" in weights:
        ranked["structural"] = ctx.timed("structural", lambda: structural_hits(ctx, query, fetch))
    if "text" in weights:
        ranked["text"] = ctx.timed("text", lambda: ctx.retrievers.text.search(query, fetch, ctx.admits))
    semantic = ctx.retrievers.semantic
    if "semantic" in weights and semantic is not None:
        ranked["semantic"] = ctx.timed("semantic", lambda: semantic.search(query, fetch, ctx.admits))
    if "graph" in weights and ctx.retrievers.graph is not None:
        ranked["graph"] = ctx.timed("graph", lambda: _graph_hits(ctx, ranked, weights, chosen, fetch))
    started = time.perf_counter()
    if ctx.definition_grouping == "before":
        ranked = collapse_definitions(ranked, snap)
    fused_list = fusion.fuse(
        ranked, weights, chosen.k, chunks=snap.chunks, pagerank_for_chunk=snap.pagerank,
        wanted=ctx.wanted(), symbol=intent.symbol, identifier_query=ctx.identifier_query,
        query_text=checked.text, config=ctx.config)
    fused_list = [f for f in fused_list if f.path is None or checked.scope.admits(f.path)]
    if ctx.definition_grouping == "after":
        fused_list = group_after_fusion(fused_list, snap)
    fused_list = prefer_exact_case(fused_list, checked.text, snap.chunks.get)
    kept = saturate(fused_list, checked.limit, ctx.file_decay)
    lexical = bool(ranked["text"]) if "text" in ranked else None  # did any query word occur at all?
    kept = floor.apply(kept, ctx.notes, among=fused_list, lexical=lexical)  # survivors keep their order
    results = [_fused_located(ctx, item) for item in kept if item.chunk_id in snap.chunks]
    ctx.timings["fuse"] = (time.perf_counter() - started) * 1000
    return list(ranked), results


def model_loading(semantic: TieredSemantic | None) -> bool:
    """True while another thread is loading the semantic retriever's model (a query would wait)."""
    return semantic is not None and semantic.embedder.loading


def _graph_hits(ctx: RouteContext, ranked: dict[str, list[Hit]], weights: dict[str, float],
                chosen: fusion.Preset, fetch: int) -> list[Hit]:
    graph = ctx.retrievers.graph
    if graph is None:
        return []
    hits = graph.search(ctx.query, fetch)
    if chosen.expand_seeds and ctx.intent.name in EXPAND_INTENTS:
        others = {m: h for m, h in ranked.items() if m != "graph"}
        seeds = fusion.rrf(others, weights, chosen.k)[: chosen.expand_seeds]
        seen = {h.chunk_id for h in hits}
        expanded = graph.expand([Hit(f.chunk_id, f.score) for f in seeds], fetch)
        hits += [h for h in expanded if h.chunk_id not in seen]
    return [h for h in hits if ctx.admits(h.chunk_id)]


def _fused_located(ctx: RouteContext, item: fusion.Fused) -> Located:
    chunk = ctx.snap.chunks[item.chunk_id]
    located = Located(chunk, item.score, item.explain)
    d = ctx.snap.named_definition(chunk) if chunk.kind in GROUPED_KINDS else None
    if d is not None and d.start_line <= chunk.end_line and chunk.start_line <= d.end_line:
        # A definition split into several chunks is one answer: show it whole, from its first line.
        located.start_line = min(d.start_line, chunk.start_line)
        located.end_line = max(d.end_line, chunk.end_line)
    graph_entry = item.explain.get("graph")
    detail = graph_entry.get("detail") if isinstance(graph_entry, dict) else None
    if isinstance(detail, dict) and ctx.intent.name in ("find_references", "impact_analysis"):
        relation = detail.get("relation")
        if relation in ("call", "impact"):
            located = graph_located(ctx, chunk, Hit(item.chunk_id, item.score, detail), item.explain)
    structural_entry = item.explain.get("structural")
    structural_detail = structural_entry.get("detail") if isinstance(structural_entry, dict) else None
    if ctx.intent.name == "find_definition" and isinstance(structural_detail, dict) \
            and structural_detail.get("match") in NAME_TIERS:
        d = ctx.snap.definitions.get(structural_detail.get("def_id", -1))
        if d is not None:  # the definition itself, not the whole chunk around it
            located.start_line, located.end_line = d.start_line, d.end_line
            located.symbol, located.kind = d.qualified_name, d.kind
    text_entry = item.explain.get("text")
    text_detail = text_entry.get("detail") if isinstance(text_entry, dict) else None
    if ctx.intent.name == "exact_match" and isinstance(text_detail, dict) and text_detail.get("lines"):
        line = int(text_detail["lines"][0])
        located.start_line = located.end_line = line
        if text_detail.get("split_literals"):  # a split message: all the lines of its literals
            located.end_line = line_groups([int(n) for n in text_detail["lines"]])[0][1]
    if item.also:
        located.also = _also(ctx, item.also)
    return located


def _also(ctx: RouteContext, also: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for entry in also[:5]:
        chunk = ctx.snap.chunks.get(int(entry.get("chunk_id", -1)))
        if chunk is not None:
            out.append({"start_line": chunk.start_line, "end_line": chunk.end_line, "symbol": chunk.symbol,
                        "kind": chunk.kind, "score": entry.get("score", 0.0)})
    return out



# ---------------------------------------------------------------------------------------------------
# One retriever alone (evaluation)


def raw(ctx: RouteContext, modality: str, limit: int) -> list[Located]:
    """A retriever's own ranking, chunk by chunk, with no fusion, priors or dedupe."""
    query = ctx.query
    semantic = ctx.retrievers.semantic
    if modality == "text":
        hits = ctx.timed("text", lambda: ctx.retrievers.text.search(query, limit, ctx.admits))
    elif modality == "semantic":
        hits = ctx.timed("semantic", lambda: semantic.search(query, limit, ctx.admits)) if semantic else []
    elif modality == "structural":
        hits = ctx.timed("structural", lambda: structural_hits(ctx, query, limit))
    elif modality == "graph":
        hits = ctx.timed("graph", lambda: graph_search(ctx, query, limit))
    else:
        raise QueryError(f"unknown modality {modality!r}")
    out = []
    for rank, hit in enumerate(hits, 1):
        chunk = ctx.snap.chunks.get(hit.chunk_id)
        if chunk is not None:
            out.append(Located(chunk, hit.score, {modality: {"rank": rank, "raw": hit.score}}))
    return out
