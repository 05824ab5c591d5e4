"""The two routes a search can take: direct (one retriever answers) and fused (weighted RRF + priors).

Direct route, taken when the intent's confidence is >= 0.85 (or the request names the intent):
- exact_match -> text exact search: one result per matching line (like `rg -F`), case-sensitive
  matches first, source before tests/docs, then path and line;
- find_definition -> structural: the definitions the symbol names (exact, case-folded, qualified,
  last-part or prefix tiers; a route that only finds loose word matches counts as empty), each result
  spanning the definition;
- find_references -> graph: one result per call site (its line; the enclosing definition as symbol),
  then subclasses;
- impact_analysis -> graph: each affected definition with its depth, nearest first.
An empty direct route falls back to the fused route.

Fused route: each of the preset's retrievers over-fetches, the graph expands the top seeds of the
others (callers and callees), `fusion.fuse` applies weighted RRF and the priors, and `grouping.saturate`
scores a file's further results x file_decay per result already listed (the rest fold under `also`).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from indexing.records import Chunk
from retrievers import fusion
from retrievers.base import Hit, Query, QueryError, RetrieverError
from retrievers.graph_retriever import GraphRetriever
from retrievers.grouping import GROUPED_KINDS, collapse_definitions, group_after_fusion, saturate
from retrievers.intent import Intent
from retrievers.priors import RankingConfig, label_factor, wanted_labels
from retrievers.request import CheckedRequest
from retrievers.results import Located
from retrievers.semantic import SemanticRetriever
from retrievers.snapshot import Snapshot
from retrievers.structural import StructuralRetriever
from retrievers.text import TextRetriever

log = logging.getLogger(__name__)
DIRECT_CONFIDENCE = 0.85
NAME_TIERS = frozenset({"exact", "exact_folded", "qualified", "last_part", "prefix"})
EXPAND_INTENTS = frozenset({"understand_code", "find_similar", "find_definition"})
MAX_DIRECT_FETCH = 1000
MODEL_LOADING = "the embedding model is still loading: this answer is ranked without semantic search"


@dataclass
class Retrievers:
    """The engine's four retrievers; `semantic` is None when embeddings are off or absent."""

    text: TextRetriever
    structural: StructuralRetriever
    graph: GraphRetriever | None  # None when the call graph could not be built
    semantic: SemanticRetriever | None


@dataclass
class RouteContext:
    """Everything one search needs."""

    checked: CheckedRequest
    intent: Intent
    query: Query
    snap: Snapshot
    retrievers: Retrievers
    config: RankingConfig
    identifier_query: bool
    file_decay: float = 0.85  # score factor per result already listed from the same file (0: one per file)
    # Chunks of one split definition: "before" fusion each list keeps the definition once (its best
    # part's rank); "after": fused separately, the best part kept; "off": separate results.
    definition_grouping: str = "before"
    rrf_k: int | None = None  # one k for every preset; None: preset_k, then fusion.PRESETS' k
    weights: dict[str, dict[str, float]] | None = None  # per-intent overrides of fusion.WEIGHTS
    timings: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # modality -> why it gave no answer
    notes: list[str] = field(default_factory=list)  # e.g. semantic left out while the model loads
    preset_k: dict[str, int] = field(default_factory=dict)  # per-preset overrides of fusion.PRESETS' k

    def timed(self, name: str, run: Callable[[], list[Hit]]) -> list[Hit]:
        """Run one retriever, timing it; a failing retriever answers nothing (and says why)."""
        started = time.perf_counter()
        try:
            return run()
        except QueryError:
            raise
        except RetrieverError as exc:
            self.errors[name] = str(exc)
            return []
        except Exception as exc:  # a retriever bug must not take the whole search down
            log.exception("retriever %s failed", name)
            self.errors[name] = f"{type(exc).__name__}: {exc}"
            return []
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + (time.perf_counter() - started) * 1000

    def admits(self, chunk_id: int) -> bool:
        chunk = self.snap.chunks.get(chunk_id)
        return chunk is not None and self.checked.scope.admits(chunk.path)

    def wanted(self) -> frozenset[str]:
        return wanted_labels(self.checked.text, self.checked.scope)

    def label_rank(self, chunk: Chunk) -> float:
        return label_factor(chunk.labels, self.wanted(), self.config)[0]


def _structural(ctx: RouteContext, query: Query, limit: int) -> list[Hit]:
    return ctx.retrievers.structural.search(query, limit)


def _graph_search(ctx: RouteContext, query: Query, limit: int) -> list[Hit]:
    graph = ctx.retrievers.graph
    return graph.search(query, limit) if graph is not None else []


# ---------------------------------------------------------------------------------------------------
# Direct route


def direct(ctx: RouteContext) -> tuple[str, list[Located]] | None:
    """(modality, results) when the intent has a direct retriever that finds something, else None."""
    name = ctx.intent.name
    if name == "exact_match" and ctx.intent.exact:
        return "text", _direct_exact(ctx)
    if name == "find_definition" and ctx.query.symbol:
        return "structural", _direct_definition(ctx)
    if name in ("find_references", "impact_analysis") and ctx.query.symbol:
        return "graph", _direct_graph(ctx)
    return None


def _explain(modality: str, rank: int, hit: Hit) -> dict[str, Any]:
    entry: dict[str, Any] = {"rank": rank, "weight": 1.0, "raw": hit.score}
    if hit.detail:
        entry["detail"] = hit.detail
    return {"route": "direct", modality: entry}


def _direct_exact(ctx: RouteContext) -> list[Located]:
    needle = ctx.intent.exact or ""
    span = needle.count("\n")
    hits = ctx.timed("text", lambda: ctx.retrievers.text.exact(needle, MAX_DIRECT_FETCH, ctx.admits))
    rows: list[tuple[tuple[float, float, str, int], Located]] = []
    for rank, hit in enumerate(hits, 1):
        chunk = ctx.snap.chunks.get(hit.chunk_id)
        if chunk is None:
            continue
        lines = [int(n) for n in hit.detail.get("lines", [])] or [chunk.start_line]
        starts = [n for n in lines if n - 1 not in lines] if span else lines
        for line in starts:
            key = (-hit.score, -ctx.label_rank(chunk), chunk.path, line)
            rows.append((key, Located(chunk, hit.score * ctx.label_rank(chunk), _explain("text", rank, hit),
                                      line, min(line + span, chunk.end_line))))
    rows.sort(key=lambda r: r[0])
    return [located for _, located in rows[: ctx.checked.limit]]


def _direct_definition(ctx: RouteContext) -> list[Located]:
    symbol = ctx.query.symbol or ""
    query = Query(symbol, ctx.query.intent, symbol, None, ctx.query.include, ctx.query.exclude)
    fetch = max(ctx.checked.limit * 3, 30)
    hits = ctx.timed("structural", lambda: _structural(ctx, query, fetch))
    hits = [h for h in hits if h.detail.get("match") in NAME_TIERS]
    out: list[Located] = []
    for rank, hit in enumerate(hits, 1):
        chunk = ctx.snap.chunks.get(hit.chunk_id)
        d = ctx.snap.definitions.get(int(hit.detail.get("def_id", -1)))
        if chunk is None:
            continue
        located = Located(chunk, hit.score, _explain("structural", rank, hit))
        if d is not None:
            located.start_line, located.end_line = d.start_line, d.end_line
            located.symbol, located.kind = d.qualified_name, d.kind
        out.append(located)
    return out[: ctx.checked.limit]


def _direct_graph(ctx: RouteContext) -> list[Located]:
    query = ctx.query
    hits = ctx.timed("graph", lambda: _graph_search(ctx, query, MAX_DIRECT_FETCH))
    rows: list[tuple[tuple[Any, ...], Located]] = []
    for rank, hit in enumerate(hits, 1):
        chunk = ctx.snap.chunks.get(hit.chunk_id)
        if chunk is None or not ctx.checked.scope.admits(chunk.path):
            continue
        located = _graph_located(ctx, chunk, hit, _explain("graph", rank, hit))
        depth = located.depth or 0
        rows.append(((depth, -ctx.label_rank(chunk), rank), located))
    rows.sort(key=lambda r: r[0])
    return [located for _, located in rows[: ctx.checked.limit]]


def _graph_located(ctx: RouteContext, chunk: Chunk, hit: Hit, explain: dict[str, Any]) -> Located:
    """A graph hit as a result: a call site's line, an inheriting class, or an affected definition."""
    detail = hit.detail
    located = Located(chunk, hit.score, explain)
    relation = detail.get("relation")
    if relation == "call" and isinstance(detail.get("line"), int):
        located.start_line = located.end_line = int(detail["line"])
        caller = detail.get("caller")
        located.symbol = caller if isinstance(caller, str) else chunk.symbol
        return located
    def_id = detail.get("def_id", detail.get("caller_def_id"))
    d = ctx.snap.definitions.get(def_id) if isinstance(def_id, int) else None
    if d is not None:
        located.start_line, located.end_line = d.start_line, d.end_line
        located.symbol, located.kind = d.qualified_name, d.kind
    if relation == "impact" and isinstance(detail.get("depth"), int):
        located.depth = int(detail["depth"])
    return located


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
        ranked["structural"] = ctx.timed("structural", lambda: _structural(ctx, query, fetch))
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
    kept = saturate(fused_list, checked.limit, ctx.file_decay)
    results = [_fused_located(ctx, item) for item in kept if item.chunk_id in snap.chunks]
    ctx.timings["fuse"] = (time.perf_counter() - started) * 1000
    return list(ranked), results


def model_loading(semantic: SemanticRetriever | None) -> bool:
    """True while another thread is loading the semantic retriever's model (a query would wait)."""
    if semantic is None or semantic.embedder.loaded:
        return False
    # Embedder.load holds its lock for the whole load; a query encoding now would block on it.
    return semantic.embedder._load_lock.locked()


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
            located = _graph_located(ctx, chunk, Hit(item.chunk_id, item.score, detail), item.explain)
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
        hits = ctx.timed("structural", lambda: _structural(ctx, query, limit))
    elif modality == "graph":
        hits = ctx.timed("graph", lambda: _graph_search(ctx, query, limit))
    else:
        raise QueryError(f"unknown modality {modality!r}")
    out = []
    for rank, hit in enumerate(hits, 1):
        chunk = ctx.snap.chunks.get(hit.chunk_id)
        if chunk is not None:
            out.append(Located(chunk, hit.score, {modality: {"rank": rank, "raw": hit.score}}))
    return out
