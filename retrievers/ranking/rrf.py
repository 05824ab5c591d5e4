"""Weighted Reciprocal Rank Fusion of the retrievers' lists, ranking priors, and per-file dedupe.

The pipeline (docs/design.md "Ranking signals"):

1. `rrf`: each modality's list contributes weight / (k + rank + 1) (rank 0-based) to a chunk's score.
2. `apply_priors`: additive bonuses in units of the top fused score (definition match, path keywords,
   file coherence), then multiplicative factors (PageRank, label demotion, re-export/declaration files,
   path depth).
3. `dedupe_by_file`: one result per file, the file's other hits folded under it. The engine uses it
   only with `file_decay = 0`; by default `grouping.saturate` lists a file again at x0.85 per further
   result instead.

The weights, k and every prior's constant come from the preset's `RankingProfile` (ranking.profile),
so tuning needs no code edits; every factor is a named function in retrievers.ranking.priors whose name
appears in the result's `explain` record.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from operator import attrgetter
from typing import Any

from indexing.records import Chunk
from retrievers.base import Hit, QueryError
from retrievers.ranking.candidate import BOOST, PATH_KEYWORD, Entry, Fused
from retrievers.ranking.contracts import contract_factors
from retrievers.ranking.copies import share_definition_bonus, tree_factors
from retrievers.ranking.priors import (
    PRIVATE_ASKING_WORDS,
    coherence_bonuses,
    declaration_factor,
    definition_bonus,
    depth_factors,
    label_factor,
    module_bonuses,
    pagerank_factor,
    path_keyword_shares,
    private_factor,
    reexport_factor,
)
from retrievers.ranking.profile import DEFAULT_CONFIG, RankingConfig
from retrievers.snapshot import kept_per_chunk
from retrievers.sources.tokenize import split_identifier
from retrievers.sources.words import query_keywords, short_words, split_words

__all__ = ["FACTOR_NAMES", "Fused", "apply_priors", "best_sums", "dedupe_by_file", "fuse", "rrf",
           "rrf_sums"]

# The multiplicative priors in the order `apply_priors` multiplies them (explain's `factors` keys).
FACTOR_NAMES = ("pagerank", "label", "reexport", "declaration", "private", "copy", "contract", "depth")


# ---------------------------------------------------------------------------------------------------
# Fusion


def rrf(ranked: Mapping[str, Sequence[Hit]], weights: Mapping[str, float], k: int) -> list[Fused]:
    """Weighted Reciprocal Rank Fusion, best first (ties broken by chunk id).

    A modality's contribution to a chunk is weight / (k + rank + 1), rank 0-based among the distinct
    chunks of its list (a chunk listed twice, e.g. two call sites in one function, keeps its first
    rank). Modalities without a positive weight are ignored. explain[modality] holds the 1-based rank,
    the weight, the contribution (`score`) and the retriever's own score (`raw`).
    """
    _check_weights(weights, k)
    by_id: dict[int, Fused] = {}
    for modality, hits in ranked.items():
        weight = weights.get(modality, 0.0)
        if weight <= 0:
            continue
        rank = 0
        for hit in hits:
            chunk_id = hit.chunk_id
            fused = by_id.get(chunk_id)
            entries: dict[str, Entry] | None
            if fused is None:  # (not setdefault: that builds a Fused for every hit)
                fused = by_id[chunk_id] = Fused(chunk_id, 0.0)
                entries = fused.entries = {}
            else:
                entries = fused.entries
                assert entries is not None  # (pending: nothing has read the record yet)
                if modality in entries:
                    counts = fused.counts
                    if counts is None:
                        counts = fused.counts = {}
                    counts[modality] = counts.get(modality, 1) + 1
                    continue
            contribution = weight / (k + rank + 1)
            fused.score += contribution
            rank += 1
            entries[modality] = (rank, weight, contribution, hit.score, hit.detail)
    return best_first(by_id.values())


def best_first(items: Iterable[Fused]) -> list[Fused]:
    """Highest score first, equal scores by chunk id (two stable sorts on C-level keys: the order of
    `sorted(key=lambda f: (-f.score, f.chunk_id))` without a tuple per item)."""
    ordered = sorted(items, key=_CHUNK_ID)
    ordered.sort(key=_SCORE, reverse=True)
    return ordered


_CHUNK_ID = attrgetter("chunk_id")
_SCORE = attrgetter("score")


def rrf_sums(ranked: Mapping[str, Sequence[Hit]], weights: Mapping[str, float], k: int,
             start: Mapping[int, float] | None = None) -> dict[int, float]:
    """Each chunk's weighted RRF sum over the lists, added to a copy of `start` (the sums of lists
    that come before these: the same additions in the same order as summing them all at once)."""
    _check_weights(weights, k)
    scores: dict[int, float] = dict(start) if start else {}
    for modality, hits in ranked.items():
        weight = weights.get(modality, 0.0)
        if weight <= 0:
            continue
        seen: set[int] = set()
        for hit in hits:
            chunk_id = hit.chunk_id
            if chunk_id in seen:
                continue
            seen.add(chunk_id)
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (k + len(seen))
    return scores


def best_sums(scores: Mapping[int, float], top: int | None = None) -> list[tuple[int, float]]:
    """(chunk id, sum) pairs, best first (ties: the smaller id); the first `top` only when given."""
    if top is not None:
        if top <= 0:
            return []
        if top < len(scores):  # only the sums at least the top-th largest can be among the first `top`
            least = heapq.nlargest(top, scores.values())[-1]
            scores = {chunk_id: value for chunk_id, value in scores.items() if value >= least}
        return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:top]
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def _check_weights(weights: Mapping[str, float], k: int) -> None:
    if k < 0:
        raise QueryError(f"RRF k must be >= 0, got {k}")
    for name, weight in weights.items():
        if not math.isfinite(weight) or weight < 0:
            raise QueryError(f"weight for {name!r} must be a finite number >= 0, got {weight}")


# ---------------------------------------------------------------------------------------------------
# Priors, dedupe, and the whole pipeline

def apply_priors(
    fused: Sequence[Fused],
    chunks: Mapping[int, Chunk],
    pagerank_for_chunk: Mapping[int, float],
    query_wants_tests: bool = False,
    query_wants_docs: bool = False,
    *,
    wanted: Collection[str] = (),
    symbol: str | None = None,
    identifier_query: bool = False,
    query_text: str = "",
    config: RankingConfig = DEFAULT_CONFIG,
    copy_trees: Mapping[str, str] | None = None,
    contracts: Collection[str] = (),
    c_headers: Collection[str] = (),
    root_parts: Sequence[str] = (),
    in_place: bool = False,
) -> list[Fused]:
    """Rescore fused results with the ranking priors; best first. Chunks missing from `chunks` drop.
    `in_place` rescores the given objects instead of copies (`fuse`: they are its own).

    final = (rrf + top_rrf * (definition + path_keyword + coherence)) * pagerank * label * reexport
    * declaration * private * copy * contract * depth; same-named definitions share the definition bonus
    (retrievers.ranking.copies).
    explain gains `rrf`, `bonus` (non-zero additive terms, in top-score units), `factors`
    (multiplicative terms other than 1), `boost` (their product) and `labels`.
    """
    items: list[Fused] = []
    item_chunks: list[Chunk] = []  # each item's chunk, looked up once
    for f in fused:
        if (found := chunks.get(f.chunk_id)) is not None:
            if in_place:
                f.path = found.path
            else:
                f = Fused(f.chunk_id, f.score, dict(f.explain), found.path, list(f.also))
            items.append(f)
            item_chunks.append(found)
    if not items:
        return []
    want = set(wanted) | ({"test"} if query_wants_tests else set()) | ({"doc"} if query_wants_docs else set())
    top = max(item.score for item in items)
    paths = {item.path for item in items if item.path}
    shares = path_keyword_shares(query_keywords(query_text, config.path_keyword_min_prefix), paths, config,
                                 short_words(query_text, config.path_keyword_min_prefix)
                                 if config.path_keyword_short else ())
    coherence = coherence_bonuses([(i.chunk_id, i.path, i.score) for i in items if i.path], config)
    depths = depth_factors(paths, config)
    definitions: dict[int, float] = {}
    if symbol:  # (without a symbol every definition bonus is 0)
        matched = {i.chunk_id: _structural_match(i, symbol) for i in items}
        definitions = share_definition_bonus(
            {i.chunk_id: definition_bonus(chunks[i.chunk_id], symbol, identifier_query, config,
                                          matched[i.chunk_id]) for i in items},
            chunks, lambda cid: pagerank_for_chunk.get(cid, 0.0), {i.chunk_id: i.score for i in items},
            config)
        if "." in symbol:
            definitions = module_bonuses(
                [(i.chunk_id, chunks[i.chunk_id], i.score, matched[i.chunk_id]) for i in items], symbol,
                definitions, identifier_query, config, root_parts)
    words = split_words(query_text)
    candidates = [chunks[i.chunk_id] for i in items] if copy_trees or contracts else []
    copies = tree_factors(candidates, copy_trees or {}, query_text, config)
    contract = contract_factors(candidates, contracts, words, identifier_query, config)
    # a lookup of a private name, or a question about internals, wants the private modules too
    publics_only = not identifier_query and PRIVATE_ASKING_WORDS.isdisjoint(words)
    headers = () if identifier_query else c_headers  # an identifier lookup may want the header's struct
    path_bonus = config.path_keyword_bonus
    statics = _chunk_statics(pagerank_for_chunk, config, want, publics_only, headers)
    # (a few hundred candidates per search: their explain records are written when read)
    for item, chunk in zip(items, item_chunks, strict=True):
        chunk_id = item.chunk_id
        definition = definitions.get(chunk_id, 0.0) if definitions else 0.0
        coherent = coherence.get(chunk_id, 0.0)
        static = statics.get(chunk_id)
        if static is None:
            static = statics[chunk_id] = _chunk_static(chunk, pagerank_for_chunk, config, want, publics_only,
                                                       headers)
        boost, pairs, demoted_by = static
        copy = copies.get(chunk_id, 1.0) if copies else 1.0
        if copy != 1.0:
            boost *= copy
        contracted = contract.get(chunk_id, 1.0) if contract else 1.0
        if contracted != 1.0:
            boost *= contracted
        depth = depths.get(chunk.path, 1.0)
        if depth != 1.0:
            boost *= depth
        base = item.score
        item.score = (base + top * (definition + coherent)) * boost
        item.priors = [base, definition, coherent, 0.0, pairs, copy, contracted, depth, boost, chunk.labels,
                       demoted_by]  # (fused.PriorTerms)
    if shares and path_bonus:
        _add_path_bonus(items, shares, top, path_bonus, config.path_keyword_rest,
                        config.path_keyword_rest_max)
    return best_first(items)


_STATIC_NAMES = FACTOR_NAMES[:5]  # the factors fixed per chunk (the others depend on the candidates)


def _chunk_statics(pagerank_for_chunk: Mapping[int, float], config: RankingConfig, want: Collection[str],
                   publics_only: bool, headers: Collection[str]) -> dict[int, Any]:
    """Where `_chunk_static`'s answers are kept: with a snapshot's ranks per setting they depend on
    (`snapshot.kept_per_chunk`: its chunks and their labels never change)."""
    return kept_per_chunk(pagerank_for_chunk, (
        "static", config.pagerank_coef, config.pagerank_cap, tuple(config.label_factors.items()),
        config.reexport_factor, config.reexport_names, config.declaration_factor, config.c_header_factor,
        config.private_module_factor, frozenset(want), publics_only, frozenset(headers)))


def _chunk_static(chunk: Chunk, pagerank_for_chunk: Mapping[int, float], config: RankingConfig,
                  want: Collection[str], publics_only: bool, headers: Collection[str]
                  ) -> tuple[float, tuple[tuple[str, float], ...], str | None]:
    """A chunk's priors that the other candidates do not change: the product pagerank x label x
    reexport x declaration x private (in that order: `apply_priors` multiplies the rest on), those
    other than 1 as (name, value) pairs, and the label that demoted it."""
    path = chunk.path
    labels, demoted_by = label_factor(chunk.labels, want, config)
    terms = (pagerank_factor(pagerank_for_chunk.get(chunk.id, 0.0), config), labels,
             reexport_factor(path, chunk.kind, config), declaration_factor(path, config, headers),
             private_factor(path, config) if publics_only else 1.0)
    product = terms[0] * terms[1] * terms[2] * terms[3] * terms[4]
    return product, tuple((n, v) for n, v in zip(_STATIC_NAMES, terms, strict=True) if v != 1.0), demoted_by


def _add_path_bonus(items: Sequence[Fused], shares: Mapping[str, float], top: float, bonus: float,
                    rest: float, rest_max: float = math.inf) -> None:
    """The path-keyword bonus names a file: in full for its best chunk (by the score of every other
    prior), x `rest` and at most `rest_max` for its other chunks. A file named by much of the question
    stands for it through its best chunk, and its weaker chunks do not crowd out the best chunks of other
    files; one named by a word of a longer question keeps (about) the whole bonus on every chunk, as the
    answer may be any of them."""
    best: dict[str, Fused] = {}  # (every item carries its chunk's path: apply_priors set it)
    for item in items:
        path = item.path
        if path is not None and path in shares and (path not in best or (item.score, -item.chunk_id) >
                               (best[path].score, -best[path].chunk_id)):
            best[path] = item
    for item in items:
        path = item.path
        if path is None or path not in shares:
            continue
        value = bonus * shares[path]
        if best[path] is not item:
            value = min(value * rest, rest_max)
        if value:
            priors = item.priors
            assert priors is not None  # (pending: apply_priors has just set them and nothing read them)
            priors[PATH_KEYWORD] = value
            item.score += top * value * priors[BOOST]


def _structural_match(item: Fused, symbol: str | None = None) -> str | None:
    """The structural retriever's match kind for the item; `folded_apart` for a case-folded match whose
    words differ from the queried symbol's (`LaTeX` and `latex`), not just their case (`urlSession`)."""
    detail = item.detail_of("structural") or {}
    match = detail.get("match")
    if match == "exact_folded" and symbol and isinstance(name := detail.get("name"), str):
        last = name.replace("::", ".").split(".")[-1]
        if split_identifier(last) != split_identifier(symbol.replace("::", ".").split(".")[-1]):
            return "folded_apart"
    return match if isinstance(match, str) else None


def dedupe_by_file(results: Sequence[Fused], limit: int) -> list[Fused]:
    """The best result per file, up to `limit` files; the file's other hits go to `also`, best first.

    Results without a path (not passed through apply_priors) are kept as their own entries.
    """
    kept: list[Fused] = []
    by_path: dict[str, Fused] = {}
    for item in best_first(results):
        leader = by_path.get(item.path) if item.path is not None else None
        if leader is not None:
            leader.also.append({"chunk_id": item.chunk_id, "score": item.score})
            continue
        if len(kept) >= max(limit, 0):
            continue
        copy = Fused(item.chunk_id, item.score, dict(item.explain), item.path, list(item.also))
        kept.append(copy)
        if item.path is not None:
            by_path[item.path] = copy
    return kept


def fuse(
    ranked: Mapping[str, Sequence[Hit]],
    weights: Mapping[str, float],
    k: int,
    *,
    chunks: Mapping[int, Chunk] | None = None,
    pagerank_for_chunk: Mapping[int, float] | None = None,
    wanted: Collection[str] = (),
    symbol: str | None = None,
    identifier_query: bool = False,
    query_text: str = "",
    config: RankingConfig = DEFAULT_CONFIG,
    copy_trees: Mapping[str, str] | None = None,
    contracts: Collection[str] = (),
    c_headers: Collection[str] = (),
    root_parts: Sequence[str] = (),
) -> list[Fused]:
    """rrf, then apply_priors when the chunks are given (no dedupe: see dedupe_by_file)."""
    fused = rrf(ranked, weights, k)
    if chunks is None:
        return fused
    ranks = {} if pagerank_for_chunk is None else pagerank_for_chunk  # (lazy: no truth test, no len)
    return apply_priors(fused, chunks, ranks, wanted=wanted, symbol=symbol,
                        identifier_query=identifier_query, query_text=query_text, config=config,
                        copy_trees=copy_trees, contracts=contracts, c_headers=c_headers,
                        root_parts=root_parts, in_place=True)
