"""One answer per definition, and per file at a discount: the steps between retrieval and results.

- `collapse_definitions`: before fusion, each retriever's list keeps a definition split into several
  chunks once, at its best part's rank, under the chunk holding its first line.
- `saturate`: the best `limit` results, a file's further results scored x decay**n, the rest of a
  listed file's hits folded under its first result (`also`).
"""

from __future__ import annotations

import heapq
from dataclasses import replace

from retrievers.base import Detail, Hit
from retrievers.ranking import rrf
from retrievers.snapshot import Snapshot

GROUPED_KINDS = frozenset({"function", "method", "class"})


def collapse_definitions(ranked: dict[str, list[Hit]], snap: Snapshot) -> dict[str, list[Hit]]:
    """One entry per definition in each retriever's list, before rrf.

    A function or class split into several chunks is one answer: its rank in a list is the rank of its
    best part, and every part is reported under the chunk holding the definition's first line (so the
    semantic evidence of one part and the text evidence of another add up in RRF). The hit's detail
    gains `parts` (the chunk ids that matched) when more than one did.
    """
    canonical = snap.head_of  # kept with the snapshot: later searches meet the same chunks

    def head_of(chunk_id: int) -> int:  # (a chunk the cache does not hold yet)
        chunk = snap.chunks.get(chunk_id)
        target = chunk_id
        d = snap.named_definition(chunk) if chunk is not None and chunk.kind in GROUPED_KINDS else None
        if d is not None:
            head = snap.chunk_at(d.path, d.name_line)
            if head is not None and head.symbol == d.qualified_name:
                target = head.id
        canonical[chunk_id] = target
        return target

    out: dict[str, list[Hit]] = {}
    for modality, hits in ranked.items():
        seen: dict[int, int] = {}  # definition's chunk id -> its place in `collapsed`
        collapsed: list[Hit] = []
        for hit in hits:
            target = canonical.get(hit.chunk_id)
            if target is None:
                target = head_of(hit.chunk_id)
            place = seen.get(target)
            if place is None:
                if target != hit.chunk_id:  # a later part speaks for the definition
                    hit = Hit(target, hit.score, _with_parts(hit.detail, (hit.chunk_id,)))
                seen[target] = len(collapsed)
                collapsed.append(hit)
            elif hit.chunk_id != target:  # a new hit: the retriever's own hits stay as they were
                first = collapsed[place]
                parts = (*first.detail.parts, hit.chunk_id) if first.detail is not None else (hit.chunk_id,)
                collapsed[place] = Hit(target, first.score, _with_parts(first.detail, parts))
        out[modality] = collapsed
    return out


def _with_parts(detail: Detail | None, parts: tuple[int, ...]) -> Detail | None:
    """`detail` naming the parts that matched (a hit without detail has none to name them in)."""
    return replace(detail, parts=parts) if detail is not None else None


def saturate(items: list[rrf.Fused], limit: int, decay: float) -> list[rrf.Fused]:
    """The best `limit` results, each further chunk of an already listed file scored x decay**n.

    decay 0 keeps one result per file (`rrf.dedupe_by_file`); 1 is no saturation. A file's chunks
    that are not listed are folded under its first result (`also`, best first).
    """
    if decay <= 0:
        return rrf.dedupe_by_file(items, limit)
    pending = [(-f.score, f.chunk_id, f) for f in items]
    heapq.heapify(pending)
    listed: dict[str, int] = {}
    kept: list[rrf.Fused] = []
    leaders: dict[str, rrf.Fused] = {}
    while pending and len(kept) < limit:
        neg, chunk_id, item = heapq.heappop(pending)
        n = listed.get(item.path, 0) if item.path is not None else 0
        effective = item.score * decay ** n
        if -neg > effective + 1e-15:  # scored before this file gained a result: look again
            heapq.heappush(pending, (-effective, chunk_id, item))
            continue
        copy = rrf.Fused(item.chunk_id, effective, dict(item.explain), item.path, list(item.also))
        if n:
            copy.explain["saturation"] = decay ** n
        kept.append(copy)
        if item.path is not None:
            listed[item.path] = n + 1
            leaders.setdefault(item.path, copy)
    # The list is full and the counts final: the rest of a listed file's hits fold under its first
    # result in the order their saturated scores give (what popping them all would give).
    rest = sorted((-(item.score * decay ** listed[item.path]), chunk_id, item.path, item.score)
                  for _, chunk_id, item in pending if item.path is not None and item.path in leaders)
    for _, chunk_id, path, score in rest:
        leaders[path].also.append({"chunk_id": chunk_id, "score": score})
    return kept
