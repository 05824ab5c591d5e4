"""The relevance floor: a fused result whose only evidence is a weak embedding match is left out.

Semantic search always answers with the nearest chunks, however far they are, so a nonsense query
("xyzzy plugh frobnicate") used to return a full page. A fused result is kept when the text or structural
retriever found it, or the graph directly (a neighbour the graph added from a seed counts only when
that seed is kept); one found by the semantic retriever alone is kept only when its cosine reaches
`SEMANTIC_FLOOR`, set between the cosines nonsense queries reach and those of relevant
semantic-only answers (the figures it was set from: docs/tuning/2026-12-02-module-docstrings.md).
A query whose every candidate falls below the floor answers with no results and a note that says so.
The floor applies to the final ranked list, so survivors keep their order.

The cosine floor is the transformer's: it reads the cosine of the tier that ranked the hit
(`detail.tier`, `detail.cosine`). The static model's cosines do not separate nonsense from answers,
so a static-ranked hit is judged by the words instead: a static model is a smoothed bag of tokens,
and when the text retriever found no query word anywhere in the workspace (`lexical` False) its
nearest chunks are noise, so static semantic-only hits are left out; otherwise they are kept.
A static model trained in the transformer's space (the shipped one) is different: the transformer
reads the query and the static vectors approximate the transformer's, so its hits carry
`detail.query == "transformer"` and meet a cosine floor (`STATIC_QUERY_FLOOR`) whatever the words:
a question that shares no word with the workspace is the one semantic search exists for.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from typing import Any

from retrievers.base import GraphDetail, SemanticDetail
from retrievers.ranking.candidate import detail_in

SEMANTIC_FLOOR = 0.25
# A static hit whose query the transformer read (a model trained in MiniLM's space, its projection
# shipped beside it) has a cosine on MiniLM's scale: it is judged by a floor like the transformer's.
# Measured with the shipped model on the requests seed, click, flask and express sets: the nearest
# chunk of seven nonsense queries sits at 0.15-0.30 (median ~0.2; one at 0.40 on click), every real
# question's first hit at 0.31 or more.
STATIC_QUERY_FLOOR = 0.2
NOTE = "relevance floor: {n} weak semantic-only matches left out (cosine < {floor})"
NOTE_STATIC = "relevance floor: {n} semantic-only matches left out (no query word occurs in the workspace)"


def _own_evidence(explain: dict[str, Any], floor: float, lexical: bool | None = None) -> bool:
    """Found by a lexical or structural retriever, by the graph directly, or semantically above `floor`."""
    if "text" in explain or "structural" in explain:
        return True
    if isinstance(explain.get("graph"), dict) and _via(explain) is None:
        return True
    semantic = explain.get("semantic")
    if not isinstance(semantic, dict):
        return False
    hit = detail_in(explain, "semantic")
    if not isinstance(hit, SemanticDetail):
        cosine = semantic.get("raw")
        return isinstance(cosine, (int, float)) and cosine >= floor
    cosine = hit.cosine
    if hit.tier == "static":
        if hit.query == "transformer":
            return isinstance(cosine, (int, float)) and cosine >= STATIC_QUERY_FLOOR
        return lexical is not False  # no cosine floor for the static model (module docstring)
    return isinstance(cosine, (int, float)) and cosine >= floor


def _static_reader(explain: dict[str, Any]) -> str | None:
    """Which model read the question of a hit the static vectors ranked: "transformer" (its cosine
    meets `STATIC_QUERY_FLOOR`) or "static" (the words rule); None for any other hit."""
    detail = detail_in(explain, "semantic")
    if not isinstance(detail, SemanticDetail) or detail.tier != "static":
        return None
    return "transformer" if detail.query == "transformer" else "static"


def _via(explain: dict[str, Any]) -> int | None:
    """The seed a graph neighbour was reached from (its chunk id), else None."""
    detail = detail_in(explain, "graph")
    return detail.via if isinstance(detail, GraphDetail) else None


def apply(items: Sequence[Any], notes: list[str], floor: float | None = None,
          among: Sequence[Any] | None = None, lexical: bool | None = None) -> list[Any]:
    """`items` (with `chunk_id` and an `explain` dict) without those below the floor, in their order;
    a note when any are left out. A graph neighbour of a seed (`via`) counts only when that seed has
    evidence of its own; seeds are looked up in `among` (all fused candidates; default `items`).

    Applied to the final ranked list, it only removes entries: every survivor keeps its order, so no
    relevant result ranks lower than without the floor (a list may come back shorter than `limit`)."""
    floor = SEMANTIC_FLOOR if floor is None else floor
    pool: dict[int, list[Any]] = {}  # chunk id -> its candidates (one, unless a caller repeats ids)
    for item in among if among is not None else items:
        pool.setdefault(item.chunk_id, []).append(item)
    known: dict[int, bool] = {}

    def own(chunk_id: Any) -> bool:  # (asked for the listed items and their seeds only, not every candidate)
        found = known.get(chunk_id)
        if found is None:
            found = known[chunk_id] = any(_own_evidence(candidate.explain, floor, lexical)
                                          for candidate in pool.get(chunk_id, ()))
        return found

    kept = [item for item in items if own(item.chunk_id) or own(_via(item.explain))]
    dropped = len(items) - len(kept)
    if dropped:
        readers = {_static_reader(item.explain) for item in items if not own(item.chunk_id)}
        static = lexical is False and "static" in readers
        shown = STATIC_QUERY_FLOOR if "transformer" in readers and floor == SEMANTIC_FLOOR else floor
        notes.append((NOTE_STATIC if static else NOTE).format(n=dropped, floor=shown))
    return kept


def surviving(items: Sequence[Any], floor: float | None = None, lexical: bool | None = None,
              present: Container[int] | None = None) -> int:
    """How many of `items` (all fused candidates) the floor keeps, counting only ids in `present`: the
    `total` a result document reports (what a limit as large as the list would show)."""
    kept = apply(items, [], floor, lexical=lexical)
    return sum(1 for item in kept if present is None or item.chunk_id in present)
