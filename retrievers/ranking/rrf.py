"""Weighted Reciprocal Rank Fusion of the retrievers' lists, per-file dedupe, and the whole pipeline.

The pipeline (docs/design.md "Ranking signals"):

1. `rrf`: each modality's list contributes weight / (k + rank + 1) (rank 0-based) to a chunk's score.
2. `apply_priors` (ranking.rescoring): additive bonuses in units of the top fused score (definition
   match, path keywords, file coherence), then multiplicative factors (PageRank, label demotion,
   re-export/declaration files, path depth).
3. `dedupe_by_file`: one result per file, the file's other hits folded under it. The engine uses it
   only with `file_decay = 0`; by default `grouping.saturate` lists a file again at x0.85 per further
   result instead.

`fuse` runs 1 and 2. The weights, k and every prior's constant come from the preset's `RankingProfile`
(ranking.profile), so tuning needs no code edits; every factor is a named function in
retrievers.ranking.priors whose name appears in the result's `explain` record.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from indexing.records import Chunk
from retrievers.base import Hit, QueryError
from retrievers.ranking.candidate import Entry, Fused, best_first
from retrievers.ranking.rescoring import FACTOR_NAMES, PriorOptions, PriorQuery, apply_priors

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["FACTOR_NAMES", "Fused", "PriorOptions", "PriorQuery", "apply_priors", "best_first", "best_sums",
           "dedupe_by_file", "fuse", "rrf", "rrf_sums"]


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
# Dedupe, and the whole pipeline


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


def fuse(ranked: Mapping[str, Sequence[Hit]], weights: Mapping[str, float], k: int, *,
         chunks: Mapping[int, Chunk] | None = None, pagerank_for_chunk: Mapping[int, float] | None = None,
         **options: Unpack[PriorOptions]) -> list[Fused]:
    """rrf, then apply_priors when the chunks are given (no dedupe: see dedupe_by_file)."""
    fused = rrf(ranked, weights, k)
    if chunks is None:
        return fused
    ranks = {} if pagerank_for_chunk is None else pagerank_for_chunk  # (lazy: no truth test, no len)
    return apply_priors(fused, chunks, ranks, in_place=True, **options)
