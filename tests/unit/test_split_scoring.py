"""retrievers.sources.split_scoring: the numpy scoring gives the floats and the order of the Python loops it
replaced (kept here as the reference)."""

from __future__ import annotations

import random

import numpy as np

from retrievers.sources.split_scoring import ranked_matches, split_scores


def _loop_scores(term_parts: list[list[tuple[list[int], float]]], lengths: list[int], split: float,
                 span: float) -> dict[int, float]:
    out: dict[int, tuple[float, int]] = {}
    for parts in term_parts:
        per: dict[int, float] = {}
        for ids, weight in parts:
            for idx in ids:
                if per.get(idx, 0.0) < weight:
                    per[idx] = weight
        for idx, weight in per.items():
            credit, matched = out.get(idx, (0.0, 0))
            out[idx] = (credit + weight, matched + 1)
    count = len(term_parts)
    return {idx: split + span * credit / count + 5.0 * min(matched / max(lengths[idx], 1), 1.0)
            for idx, (credit, matched) in out.items()}


def test_split_scores_are_the_loops_floats() -> None:
    rng = random.Random(7)
    n = 300
    lengths = [rng.randint(0, 5) for _ in range(n)]
    for _ in range(50):
        term_parts = [[(rng.sample(range(n), rng.randint(0, 40)), rng.choice((1.0, 0.8)))
                       for _ in range(rng.randint(0, 4))] for _ in range(rng.randint(1, 5))]
        expected = _loop_scores(term_parts, lengths, 40.0, 30.0)
        ids, scores = split_scores([[(np.asarray(ids, dtype=np.int64), w) for ids, w in parts]
                                    for parts in term_parts], np.asarray(lengths), 40.0, 30.0)
        assert dict(zip(ids.tolist(), scores.tolist(), strict=True)) == expected
        assert ids.tolist() == sorted(expected)


def test_ranked_matches_sort_like_reversed_tuples() -> None:
    rng = random.Random(3)
    n = 200
    adjust = [rng.choice((0.0, 1.0, 2.0, -1.5, 0.5)) for _ in range(n)]
    order = rng.sample(range(n), n)
    for top in (None, 1, 5, 30, 500):
        ids = rng.sample(range(n), 120)
        scores = [rng.choice((40.0, 45.0, 70.0, 90.0)) for _ in ids]  # many ties
        kinds = [rng.choice(("split", "prefix", "exact")) for _ in ids]
        rows = zip(ids, scores, kinds, strict=True)
        scored = sorted(((s + adjust[i], -order[i], i, k) for i, s, k in rows), reverse=True)
        expected = [(i, s, k) for s, _, i, k in scored][:top]
        got = ranked_matches(np.asarray(ids, dtype=np.int64), np.asarray(scores), kinds, np.asarray(adjust),
                             np.asarray(order, dtype=np.int64), top)
        assert got == expected
    assert ranked_matches(np.empty(0, dtype=np.int64), np.empty(0), [], np.asarray(adjust),
                          np.asarray(order), 5) == []
