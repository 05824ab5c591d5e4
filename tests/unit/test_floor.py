"""The relevance floor on fused results: semantic-only weak matches go, any other evidence stays."""

from __future__ import annotations

from retrievers.base import GraphDetail, SemanticDetail
from retrievers.ranking import floor
from retrievers.ranking.rrf import Fused


def item(chunk_id: int, **explain: object) -> Fused:
    return Fused(chunk_id, 1.0 / chunk_id, dict(explain))


def test_weak_semantic_only_matches_are_dropped_with_a_note() -> None:
    items = [item(1, semantic={"raw": 0.62}), item(2, semantic={"raw": 0.18}),
             item(3, text={"raw": 4.2}, semantic={"raw": 0.05}), item(4, graph={"raw": 1.0}),
             item(5, semantic={"raw": 0.2499})]
    notes: list[str] = []
    kept = floor.apply(items, notes)
    assert [f.chunk_id for f in kept] == [1, 3, 4]
    assert notes == ["relevance floor: 2 weak semantic-only matches left out (cosine < 0.25)"]


def test_graph_neighbours_count_only_through_a_kept_seed() -> None:
    seed_strong = item(1, semantic={"raw": 0.7})
    seed_weak = item(2, semantic={"raw": 0.1})
    weak = {"raw": 0.05}
    via_strong = item(3, graph={"raw": 0.25, "detail": GraphDetail("callee", "a.py", 1, via=1)},
                      semantic=weak)
    via_weak = item(4, graph={"raw": 0.25, "detail": GraphDetail("caller", "a.py", 1, via=2)}, semantic=weak)
    direct = item(5, graph={"raw": 1.0, "detail": GraphDetail("call", "a.py", 3)})
    notes: list[str] = []
    kept = floor.apply([seed_strong, seed_weak, via_strong, via_weak, direct], notes)
    assert [f.chunk_id for f in kept] == [1, 3, 5]


def test_nothing_dropped_means_no_note_and_an_explicit_floor_wins() -> None:
    notes: list[str] = []
    items = [item(1, semantic={"raw": 0.3}), item(2, structural={"raw": 1.0})]
    assert floor.apply(items, notes) == items and notes == []
    assert [f.chunk_id for f in floor.apply(items, notes, floor=0.5)] == [2]


def test_static_semantic_hits_need_a_query_word_in_the_workspace() -> None:
    static = item(7, semantic={"rank": 1, "raw": 0.9, "detail": SemanticDetail(0.9, "static")})
    lexical = item(8, text={"rank": 1})
    notes: list[str] = []
    assert floor.apply([static], notes, lexical=True) == [static] and notes == []
    assert floor.apply([static], notes, lexical=None) == [static]  # no text retriever ran: kept
    assert floor.apply([static, lexical], notes, lexical=False) == [lexical]
    assert notes == [floor.NOTE_STATIC.format(n=1)]
