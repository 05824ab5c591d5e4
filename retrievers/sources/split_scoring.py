"""The structural retriever's arithmetic over many definitions at once, in numpy.

A question's content words meet hundreds of definitions on a large repository (Django: 100-450 per
question), and scoring each in a Python loop was most of the structural retriever's time. These
functions give the floats and the order the loops gave: the same IEEE operations in the same order
(a term's credit is added in term order, a term that misses adds 0.0, which changes no sum), and ties
broken by the same keys.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["ranked_matches", "split_scores"]


def split_scores(term_parts: Sequence[Sequence[tuple[np.ndarray, float]]], name_lengths: np.ndarray,
                 split: float, span: float) -> tuple[np.ndarray, np.ndarray]:
    """(definition indexes ascending, scores) of the split tier. `term_parts[t]` holds, for query term
    t, the definitions of each name part it meets with that part's credit (1 for the term itself, the
    stem credit for a part sharing its prefix); a definition gets a term's best credit once. Score:
    split + span * summed credit / terms + 5 * min(terms met / the name's parts, 1)."""
    pieces = [ids for parts in term_parts for ids, _ in parts]
    if not pieces:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
    union, inverse = np.unique(np.concatenate(pieces), return_inverse=True)
    credit = np.zeros(len(union), dtype=np.float64)
    matched = np.zeros(len(union), dtype=np.int64)
    start = 0
    for parts in term_parts:
        best = np.zeros(len(union), dtype=np.float64)
        for ids, weight in parts:
            at = inverse[start:start + len(ids)]
            start += len(ids)
            best[at] = np.maximum(best[at], weight)  # (a part lists a definition once)
        credit += best
        matched += best > 0
    coverage = np.minimum(matched / np.maximum(name_lengths[union], 1), 1.0)
    keep = matched > 0
    scores = split + span * credit / len(term_parts) + 5.0 * coverage
    return union[keep], scores[keep]


def ranked_matches(ids: np.ndarray, scores: np.ndarray, kinds: Sequence[str], adjust: np.ndarray,
                   order: np.ndarray, top: int | None) -> list[tuple[int, float, str]]:
    """(definition index, score + its adjustment, kind), best first: by that score, then the smaller
    `order`, then the larger index (what sorting (score, -order, index) tuples in reverse gives); the
    first `top` only when given. `kinds[i]` names the match kind of `ids[i]`."""
    if len(ids) == 0:
        return []
    totals = scores + adjust[ids]
    picked = np.arange(len(ids))
    if top is not None and top < len(ids):
        if top <= 0:
            return []
        least = np.partition(totals, len(ids) - top)[len(ids) - top]  # the top-th best total
        picked = np.flatnonzero(totals >= least)  # (ties at the cut stay for the keys below)
    ranked = picked[np.lexsort((ids[picked], -order[ids[picked]], totals[picked]))[::-1]]
    if top is not None:
        ranked = ranked[:top]
    return [(idx, total, kinds[k]) for idx, total, k in
            zip(ids[ranked].tolist(), totals[ranked].tolist(), ranked.tolist(), strict=True)]
