"""The fused route: every retriever of the profile over-fetches, weighted RRF and the priors rank.

Taken when the direct route (`retrievers.engine.direct_route`) does not apply or finds nothing. Each of the
profile's retrievers fetches `profile.fetch_limit(limit)` hits within the request's scope, the graph
expands the top seeds of the others (callers and callees), `grouping.collapse_definitions` keeps a
split definition once per list, `rrf.fuse` applies weighted RRF (for questions with one more list:
the files whose card matches best, `retrievers.sources.filecards`) and the priors,
`exact_case.prefer_exact_case` puts exact-case definitions of an identifier query above different-case
ones, `grouping.saturate` scores a file's further results x file_decay per result already listed (the
rest fold under `also`), then `floor.apply` drops weak semantic-only matches from the ranked list.
While another thread loads the embedding model, semantic is left out (`notes`). Blocks repeated
verbatim across files (licence headers: `Snapshot.boilerplate`) are left out by the retrievers
themselves (`Query.exclude`: each list is still `fetch` long), except for exact strings and
similar-code queries, and for a retriever that finds nothing else.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from indexing.records import Chunk
from retrievers.base import GraphDetail, Hit, StructuralDetail, TextDetail
from retrievers.chunk_ranks import kept_per_chunk
from retrievers.engine.results import Located
from retrievers.engine.route_context import DEFINING_MATCHES, NAME_TIERS, RouteContext, graph_located
from retrievers.ranking import floor, rrf
from retrievers.ranking.contracts import contract_files_of
from retrievers.ranking.copies import copy_trees_of
from retrievers.ranking.exact_case import prefer_exact_case
from retrievers.ranking.grouping import GROUPED_KINDS, collapse_definitions, saturate
from retrievers.ranking.headers import interface_headers_of
from retrievers.ranking.priors import chunk_prior
from retrievers.ranking.profile import RankingConfig, RankingProfile
from retrievers.semantic.tiered import TieredSemantic
from retrievers.snapshot import Snapshot
from retrievers.sources.filecards import best_candidates, card_hits, file_cards_of, strong_cards
from retrievers.sources.literals import line_groups

__all__ = ["MODEL_LOADING", "fused", "model_loading"]

MODEL_LOADING = "the embedding model is still loading: this answer is ranked without semantic search"


# ---------------------------------------------------------------------------------------------------
# Fused route


POOL_FROM_TEXT = 10  # BM25's first chunks a question's pool adds to the static tier's (semantic.tiered)


def fused(ctx: RouteContext) -> tuple[list[str], list[Located]]:
    """(modalities run, results) by weighted RRF over the profile's retrievers plus priors."""
    checked, intent, snap, profile = ctx.checked, ctx.intent, ctx.snap, ctx.profile
    weights = profile.weights_for(intent.name, checked.modalities)
    if ctx.retrievers.semantic is None or ctx.retrievers.semantic.embedded() == 0:
        weights.pop("semantic", None)
    weights = {m: w for m, w in weights.items() if w > 0}
    if "semantic" in weights and len(weights) > 1 and model_loading(ctx.retrievers.semantic):
        # A warm restart has the vectors at once, but the model loads in the background for seconds:
        # rank with the other retrievers now (their weights as the intent gives them) and say so.
        del weights["semantic"]
        ctx.notes.append(MODEL_LOADING)
    fetch = ctx.fetch  # the same pool for every limit up to RANK_DEPTH, ranked to ctx.depth, then cut
    boiler = snap.boilerplate(profile.boilerplate_min_files) if intent.name not in KEEP_BOILERPLATE \
        else frozenset()
    query = replace(ctx.query, exclude=boiler) if boiler else ctx.query
    ranked: dict[str, list[Hit]] = {}
    for modality in ("structural", "text", "semantic"):
        if modality in weights and ctx.retrievers.get(modality) is not None:
            if modality == "semantic" and ranked.get("text"):  # the question pool reads these too
                query = replace(query, candidates=tuple(h.chunk_id for h in ranked["text"][:POOL_FROM_TEXT]))
            hits = ctx.search(modality, query, fetch)
            if not hits and boiler:  # nothing but boilerplate matches (a licence line): keep it then
                hits = ctx.search(modality, ctx.query, fetch)
            ranked[modality] = hits
    if intent.name == "find_definition" and profile.priors.undefined_as_question \
            and "structural" in ranked and not _names_a_definition(ranked["structural"]):
        # No definition has the name asked for (a renamed symbol): the structural list holds only names
        # that contain its words, so the lookup is ranked as the question it has become.
        weights = {m: w for m, w in profile.weights_for("understand_code", checked.modalities).items()
                   if m in weights}
    seeded: list[dict[int, float]] = []  # the retrievers' RRF sums, when the graph's seeds came from them
    if "graph" in weights and ctx.retrievers.graph is not None:
        ranked["graph"] = ctx.timed("graph", lambda: _graph_hits(ctx, ranked, weights, fetch, seeded))
    run = list(ranked)  # the retrievers; the file-card list below is not one of them
    card_weight = profile.priors.file_card_weight
    if card_weight > 0 and intent.name in profile.priors.file_card_intents and ranked \
            and not checked.modalities:  # a request that names its retrievers gets only those
        ranked["file"] = ctx.timed("file", lambda: _file_hits(ctx, ranked, weights, fetch, seeded))
        weights["file"] = card_weight * sum(weights.values())  # a share of the evidence, whatever ran
    started = time.perf_counter()
    ranked = collapse_definitions(ranked, snap)
    fused_list = rrf.fuse(
        ranked, weights, profile.k, chunks=snap.chunks, pagerank_for_chunk=snap.pagerank,
        wanted=ctx.wanted(), symbol=intent.symbol, identifier_query=ctx.identifier_query,
        query_text=checked.text, config=profile.priors, **file_sets(snap, profile.priors),
        root_parts=ctx.root_parts)
    fused_list = prefer_exact_case(fused_list, checked.text, snap.chunks.get)
    kept = saturate(fused_list, ctx.depth, profile.file_decay)
    lexical = bool(ranked["text"]) if "text" in ranked else None  # did any query word occur at all?
    kept = floor.apply(kept, ctx.notes, among=fused_list, lexical=lexical)  # survivors keep their order
    kept = [item for item in kept if item.chunk_id in snap.chunks]
    ctx.total = max(len(kept), floor.surviving(fused_list, lexical=lexical, present=snap.chunks))
    if ctx.matched is None:
        ctx.matched = _lookup_found(ctx, ranked)
    results = [_fused_located(ctx, item) for item in kept[: checked.limit]]
    ctx.timings["fuse"] = (time.perf_counter() - started) * 1000
    return run, results


def file_sets(snap: Snapshot, priors: RankingConfig) -> dict[str, Any]:
    """The snapshot's file sets fusion's priors read under `priors` (copy trees, contract files, C
    interface headers; each built once per snapshot), as `rrf.fuse`'s keyword arguments."""
    return {"copy_trees": copy_trees_of(snap, priors.copy_tree_min_share) if priors.copy_tree_factor < 1.0
            else None,
            "contracts": contract_files_of(snap, priors.contract_type_only) if priors.contract_factor < 1.0
            else (),
            "c_headers": interface_headers_of(snap) if priors.c_header_factor < 1.0 else ()}


def prepare(snap: Snapshot, profiles: Iterable[RankingProfile]) -> None:
    """Build what a fused search reads of a new snapshot (`file_sets`, the boilerplate chunks) under
    each ranking profile, before the snapshot is published: the first search on a server's new
    snapshot otherwise built them (~80 ms on the Django sdist, after every refresh)."""
    for profile in profiles:
        snap.boilerplate(profile.boilerplate_min_files)
        file_sets(snap, profile.priors)


def _names_a_definition(hits: list[Hit]) -> bool:
    """True when the structural retriever found a definition of the queried name itself (any case,
    or its last part), not only names that contain its words."""
    return any(isinstance(h.detail, StructuralDetail) and h.detail.match in DEFINING_MATCHES for h in hits)


def _lookup_found(ctx: RouteContext, ranked: dict[str, list[Hit]]) -> bool | None:
    """Whether a lookup query found its subject in the lists that ran: a verified exact string (text),
    a definition of the name itself (structural), a call site or affected definition (graph, not one
    it reached from another list's seed); None when the query is no lookup or its retriever did not run."""
    intent = ctx.intent
    if intent.name == "exact_match" and intent.exact and "text" in ranked:
        return any(isinstance(h.detail, TextDetail) and h.detail.match == "exact" for h in ranked["text"])
    if intent.name == "find_definition" and intent.symbol and "structural" in ranked:
        return _names_a_definition(ranked["structural"])
    if intent.name in ("find_references", "impact_analysis") and intent.symbol and "graph" in ranked:
        return any(isinstance(h.detail, GraphDetail) and h.detail.relation in ("call", "inherits", "impact")
                   for h in ranked["graph"])
    return None


KEEP_BOILERPLATE = frozenset({"exact_match", "find_similar"})  # a quoted licence line, its copies


def model_loading(semantic: TieredSemantic | None) -> bool:
    """True while another thread is loading the semantic retriever's model (a query would wait)."""
    return semantic is not None and semantic.embedder.loading


def _graph_hits(ctx: RouteContext, ranked: dict[str, list[Hit]], weights: dict[str, float],
                fetch: int, seeded: list[dict[int, float]]) -> list[Hit]:
    """The graph's own hits, then the callers and callees of the top seeds by RRF over the other
    lists (whose sums go to `seeded`, for the file cards to add the graph's list to)."""
    graph, profile = ctx.retrievers.graph, ctx.profile
    if graph is None:
        return []
    hits = graph.search(ctx.query, fetch, ctx.scope)
    if profile.expand_seeds and ctx.intent.name in profile.expand_intents:
        others = {m: h for m, h in ranked.items() if m != "graph"}
        sums = rrf.rrf_sums(others, weights, profile.k)
        seeded.append(sums)
        seeds = rrf.best_sums(sums, profile.expand_seeds)
        seen = {h.chunk_id for h in hits}
        expanded = graph.expand([Hit(chunk_id, score) for chunk_id, score in seeds], fetch, ctx.scope)
        hits += [h for h in expanded if h.chunk_id not in seen]
    return hits


def _file_hits(ctx: RouteContext, ranked: dict[str, list[Hit]], weights: dict[str, float],
               fetch: int, seeded: list[dict[int, float]]) -> list[Hit]:
    """The files whose cards match the question (`filecards.strong_cards`), each as its
    best candidate chunk (retrievers.sources.filecards): by RRF, times its chunk priors with
    `file_card_chunk_priors`. The RRF adds the graph's list to the sums its seeds were ranked by
    (`seeded`: the other lists have not changed since), else sums every list; the sums are not
    sorted (`best_candidates` ranks the carded files' candidates only)."""
    snap, priors = ctx.snap, ctx.profile.priors
    wanted = ctx.wanted()
    prior = _card_prior(snap, wanted, priors) if priors.file_card_chunk_priors else None
    files = file_cards_of(snap).search(ctx.checked.text, min(fetch, priors.file_card_top), ctx.scope,
                                       priors.file_card_b, priors.file_card_pagerank)
    files = strong_cards(files, priors.file_card_min_score, priors.file_card_lead_ratio)
    if not files:
        return []
    k = ctx.profile.k
    sums = rrf.rrf_sums({"graph": ranked["graph"]}, weights, k, start=seeded[0]) if seeded \
        else rrf.rrf_sums(ranked, weights, k)
    best = best_candidates(sums.items(), snap.chunks, prior, {path for path, _ in files})
    return card_hits(files, best, snap.by_path, lambda cid: snap.pagerank.get(cid, 0.0))


def _card_prior(snap: Snapshot, wanted: frozenset[str], config: RankingConfig
                ) -> Callable[[Chunk, int], float]:
    """`priors.chunk_prior` of a chunk, kept with the snapshot's ranks per setting it depends on
    (`chunk_ranks.kept_per_chunk`): it is fixed per chunk, and the carded files' candidates are asked
    search after search."""
    ranks = snap.pagerank
    kept: dict[int, float] = kept_per_chunk(ranks, (
        "card_prior", config.pagerank_coef, config.pagerank_cap, tuple(config.label_factors.items()),
        config.reexport_factor, config.reexport_names, wanted))

    def prior(chunk: Chunk, chunk_id: int) -> float:
        value = kept.get(chunk_id)
        if value is None:
            value = kept[chunk_id] = chunk_prior(chunk, ranks.get(chunk_id, 0.0), wanted, config)
        return value

    return prior


def _fused_located(ctx: RouteContext, item: rrf.Fused) -> Located:
    chunk = ctx.snap.chunks[item.chunk_id]
    located = Located(chunk, item.score, item.explain)
    d = ctx.snap.named_definition(chunk) if chunk.kind in GROUPED_KINDS else None
    if d is not None and d.start_line <= chunk.end_line and chunk.start_line <= d.end_line:
        # A definition split into several chunks is one answer: show it whole, from its first line.
        located.start_line = min(d.start_line, chunk.start_line)
        located.end_line = max(d.end_line, chunk.end_line)
    detail = item.detail_of("graph")
    if isinstance(detail, GraphDetail) and ctx.intent.name in ("find_references", "impact_analysis") \
            and detail.relation in ("call", "impact"):
        located = graph_located(ctx, chunk, Hit(item.chunk_id, item.score, detail), item.explain)
    structural = item.detail_of("structural")
    if ctx.intent.name == "find_definition" and isinstance(structural, StructuralDetail) \
            and structural.match in NAME_TIERS:
        d = ctx.snap.definitions.get(structural.def_id)
        if d is not None:  # the definition itself, not the whole chunk around it
            located.start_line, located.end_line = d.start_line, d.end_line
            located.symbol, located.kind = d.qualified_name, d.kind
    text = item.detail_of("text")
    if ctx.intent.name == "exact_match" and isinstance(text, TextDetail) and text.lines:
        line = text.lines[0]
        located.start_line = located.end_line = line
        if text.split_literals:  # a split message: all the lines of its literals
            located.end_line = line_groups(list(text.lines))[0][1]
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
