"""The direct route: one retriever answers an intent it can answer alone, in milliseconds.

Taken when the intent's confidence is >= the profile's `direct_confidence` (or the request names the
intent) and the request does not restrict the retrievers:
- exact_match -> text exact search: one result per matching line (like `rg -F`; a message split over
  adjacent string literals: one result over its lines), case-sensitive matches first, source before
  tests/docs, then path and line;
- find_definition -> structural: the definitions the symbol names (exact, case-folded, qualified,
  last-part or prefix tiers; a route that only finds loose word matches counts as empty), each result
  spanning the definition;
- find_references -> graph: one result per call site (its line; the enclosing definition as symbol),
  then subclasses;
- impact_analysis -> graph: each affected definition with its depth, nearest first.
`direct` answers None when the intent has no direct retriever; the engine falls back to the fused
route (`retrievers.engine.fused_route.fused`) then, and when the direct answer is empty. Each lookup records
whether it found its subject (`ctx.matched`: a matching line, a definition of the name itself, a call
site or affected definition) and how many results it ranked before the cut (`ctx.total`).
"""

from __future__ import annotations

from typing import Any

from retrievers.base import Hit, Query, StructuralDetail, TextDetail
from retrievers.engine.results import Located
from retrievers.engine.route_context import DEFINING_MATCHES, NAME_TIERS, RouteContext, graph_located
from retrievers.sources.literals import line_groups

MAX_DIRECT_FETCH = 1000


def applies(ctx: RouteContext) -> bool:
    """Whether the request may take the direct route: a sure enough intent, all retrievers allowed."""
    return not ctx.checked.modalities and ctx.intent.confidence >= ctx.profile.direct_confidence


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
    if hit.detail is not None:
        entry["detail"] = hit.detail
    return {"route": "direct", modality: entry}


def _direct_exact(ctx: RouteContext) -> list[Located]:
    needle = ctx.intent.exact or ""
    span = needle.count("\n")
    text = ctx.retrievers.text
    hits = ctx.timed("text", lambda: text.exact(needle, MAX_DIRECT_FETCH, ctx.scope))
    rows: list[tuple[tuple[float, float, str, int], Located]] = []
    for rank, hit in enumerate(hits, 1):
        chunk = ctx.snap.chunks.get(hit.chunk_id)
        if chunk is None:
            continue
        detail = hit.detail
        found = detail.lines if isinstance(detail, TextDetail) else None
        lines = list(found) if found else [chunk.start_line]
        starts = [n for n in lines if n - 1 not in lines] if span else lines
        pairs = line_groups(lines) if isinstance(detail, TextDetail) and detail.split_literals else \
            [(n, min(n + span, chunk.end_line)) for n in starts]
        for line, end in pairs:
            key = (-hit.score, -ctx.label_rank(chunk), chunk.path, line)
            rows.append((key, Located(chunk, hit.score * ctx.label_rank(chunk), _explain("text", rank, hit),
                                      line, end)))
    rows.sort(key=lambda r: r[0])
    ctx.matched, ctx.total = bool(rows), len(rows)
    return [located for _, located in rows[: ctx.checked.limit]]


def _direct_definition(ctx: RouteContext) -> list[Located]:
    symbol = ctx.query.symbol or ""
    query = Query(symbol, ctx.query.intent, symbol, None)
    hits = ctx.search("structural", query, MAX_DIRECT_FETCH)
    ctx.matched = any(_match(h) in DEFINING_MATCHES for h in hits)
    hits = [h for h in hits if _match(h) in NAME_TIERS]
    out: list[Located] = []
    for rank, hit in enumerate(hits, 1):
        chunk = ctx.snap.chunks.get(hit.chunk_id)
        detail = hit.detail
        d = ctx.snap.definitions.get(detail.def_id) if isinstance(detail, StructuralDetail) else None
        if chunk is None:
            continue
        located = Located(chunk, hit.score, _explain("structural", rank, hit))
        if d is not None:
            located.start_line, located.end_line = d.start_line, d.end_line
            located.symbol, located.kind = d.qualified_name, d.kind
        out.append(located)
    ctx.total = len(out)
    return out[: ctx.checked.limit]


def _match(hit: Hit) -> str | None:
    """How a structural hit's name matched the query."""
    return hit.detail.match if isinstance(hit.detail, StructuralDetail) else None


def _direct_graph(ctx: RouteContext) -> list[Located]:
    hits = ctx.search("graph", ctx.query, MAX_DIRECT_FETCH)
    rows: list[tuple[tuple[Any, ...], Located]] = []
    for rank, hit in enumerate(hits, 1):
        chunk = ctx.snap.chunks.get(hit.chunk_id)
        if chunk is None:
            continue
        located = graph_located(ctx, chunk, hit, _explain("graph", rank, hit))
        depth = located.depth or 0
        rows.append(((depth, -ctx.label_rank(chunk), rank), located))
    rows.sort(key=lambda r: r[0])
    ctx.matched, ctx.total = bool(rows), len(rows)
    return [located for _, located in rows[: ctx.checked.limit]]
