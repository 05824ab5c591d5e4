"""The semantic retriever in two tiers: static vectors for every chunk, transformer vectors where made.

`TieredSemantic(fast, deep, blend)` is what the engine calls "semantic". The fast tier (the static
model) embeds every chunk in seconds and decides the index state ("ready" once it is complete). The
deep tier (all-MiniLM-L6-v2 on numpy by default) fills in behind it: the language server embeds in
the background, most valuable chunks first (`embed_deep(order=...)`), `codeseek index --transformer`
in the foreground; both persist in the embedding cache, so every process uses what any has made.

A query ranks each chunk with the best model that has embedded it: the transformer's ranking of the
chunks it covers and the static ranking of the others meet by weighted reciprocal rank (`TierBlend`). So
a complete transformer tier answers exactly as the transformer alone (no static blend beat it:
docs/tuning/2026-11-30-tier-figures.md), and a partial one is completed by static evidence. While the
deep model is loading on another thread, or when it has no vector yet, the fast tier answers alone.
`similar(chunk)` prefers the transformer's vector of the chunk when there is one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from indexing.records import Chunk
from retrievers.base import Hit, Query, SemanticDetail
from retrievers.scope import EVERYWHERE, Scope
from retrievers.semantic.retriever import Progress, SemanticRetriever
from retrievers.semantic.static_embedder import is_static_id


@dataclass(frozen=True)
class TierBlend:
    """Weighted RRF of the two tiers' rankings: weight / (k + rank), ranks from 1. Used only while the
    transformer tier is partly filled; equal weights, so a covered chunk outranks an uncovered one on
    its rank, not on its tier (0.3 / 0.7 put the transformer's 5th covered chunk above the static
    tier's best: docs/tuning/2026-12-02-fill-order.md)."""

    k: int = 10
    fast: float = 0.5
    deep: float = 0.5


class TieredSemantic:
    """Static + transformer semantic search behind the single-retriever interface; name "semantic"."""

    name = "semantic"

    def __init__(self, fast: SemanticRetriever, deep: SemanticRetriever | None,
                 blend: TierBlend | None = None) -> None:
        self.fast = fast
        self.deep = deep
        self.blend = blend or TierBlend()

    # -- what the engine reads of the main tier ---------------------------------------------------
    @property
    def embedder(self) -> Any:
        return self.fast.embedder

    @property
    def model_id(self) -> str:
        return self.fast.model_id

    @property
    def model_changed(self) -> bool:
        return self.fast.model_changed

    @property
    def previous_model(self) -> str | None:
        return self.fast.previous_model

    def ids(self) -> set[int]:
        return self.fast.ids()

    def pending(self) -> int:
        return self.fast.pending()

    def embedded(self) -> int:
        return self.fast.embedded()

    # -- keeping both tiers in step with the store -------------------------------------------------
    def index(self, chunks: Sequence[Chunk], *, embed: bool = True, progress: Progress | None = None,
              saved: Path | None = None, stamp: str = "") -> None:
        """Both tiers hold `chunks`; with `saved` (a folder), vectors `save()` wrote there are read."""
        self.fast.index(chunks, embed=embed, progress=progress, stamp=stamp,
                        saved=saved / "vectors-main.npz" if saved else None)
        if self.deep is not None:
            self.deep.index(chunks, embed=False, stamp=stamp,
                            saved=saved / "vectors-transformer.npz" if saved else None)

    def save(self, folder: Path, stamp: str) -> None:
        """Save both tiers' vectors for the next process (`index(saved=folder)`)."""
        self.fast.save(folder / "vectors-main.npz", stamp)
        if self.deep is not None:
            self.deep.save(folder / "vectors-transformer.npz", stamp)

    def update(self, added: Sequence[Chunk], removed_ids: Sequence[int], *, embed: bool = True,
               progress: Progress | None = None) -> None:
        self.fast.update(added, removed_ids, embed=embed, progress=progress)
        if self.deep is not None:
            self.deep.update(added, removed_ids, embed=False)

    def remove(self, ids: Sequence[int]) -> None:
        self.fast.remove(ids)
        if self.deep is not None:
            self.deep.remove(ids)

    def embed_pending(self, progress: Progress | None = None,
                      should_stop: Callable[[], bool] | None = None) -> int:
        """Embed the fast tier's pending chunks (every chunk gets a static vector)."""
        return self.fast.embed_pending(progress, should_stop)

    # -- the transformer tier ----------------------------------------------------------------------
    def deep_info(self) -> dict[str, Any] | None:
        """{"model", "embedded", "pending"} of the transformer tier; None without one."""
        if self.deep is None:
            return None
        return {"model": self.deep.model_id, "embedded": self.deep.embedded(), "pending": self.deep.pending()}

    def embed_deep(self, progress: Progress | None = None, should_stop: Callable[[], bool] | None = None,
                   order: Callable[[Chunk], Any] | None = None) -> int:
        """Embed the transformer tier's pending chunks in `order`; stops between batches when asked."""
        if self.deep is None:
            return 0
        return self.deep.embed_pending(progress, should_stop, order)

    def _deep_usable(self) -> bool:
        deep = self.deep
        return deep is not None and deep.embedded() > 0 and not deep.embedder.loading

    # -- search ------------------------------------------------------------------------------------
    def search(self, query: Query, limit: int, scope: Scope = EVERYWHERE) -> list[Hit]:
        """Each chunk is ranked by the best model that has embedded it: the transformer ranks the
        chunks it covers, the static model the others; the two rankings meet by weighted RRF. With
        the transformer complete this is the transformer's ranking, with none the static one."""
        if not self._deep_usable():
            tier = "static" if is_static_id(self.fast.model_id) else "transformer"
            return self.fast.search(query, limit, scope, tier=tier)
        deep_tier = self.deep
        assert deep_tier is not None
        deep = deep_tier.search(query, limit, scope)
        if deep_tier.pending() == 0 or self.blend.fast <= 0:
            return [Hit(h.chunk_id, h.score, _tiered(h, "transformer")) for h in deep]
        fast = self.fast.search(query, limit, scope, skip=deep_tier.has_vector)
        return blend_rankings(fast, deep, self.blend, limit)

    def similar(self, chunk_id: int, limit: int) -> list[Hit]:
        if self.deep is not None and self.deep.has_vector(chunk_id):
            return self.deep.similar(chunk_id, limit)
        return self.fast.similar(chunk_id, limit)


def _cosine(hit: Hit) -> float:
    return hit.detail.cosine if isinstance(hit.detail, SemanticDetail) else round(hit.score, 4)


def _tiered(hit: Hit, tier: str) -> SemanticDetail:
    """A tier's hit, its detail naming the tier."""
    if isinstance(hit.detail, SemanticDetail):
        return replace(hit.detail, tier=tier)
    return SemanticDetail(_cosine(hit), tier)


def blend_rankings(fast: list[Hit], deep: list[Hit], blend: TierBlend, limit: int) -> list[Hit]:
    """Weighted RRF of two rankings; each hit's detail keeps both cosines and ranks."""
    scores: dict[int, float] = {}
    ranks: dict[int, dict[str, tuple[int, float]]] = {}  # chunk -> tier -> (its rank there, cosine)
    for tier, hits, weight in (("static", fast, blend.fast), ("transformer", deep, blend.deep)):
        for rank, hit in enumerate(hits, start=1):
            scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + weight / (blend.k + rank)
            ranks.setdefault(hit.chunk_id, {})[tier] = (rank, _cosine(hit))
    order = sorted(scores, key=lambda cid: -scores[cid])[:limit]
    out = []
    for cid in order:
        static, transformer = ranks[cid].get("static"), ranks[cid].get("transformer")
        tier, (_, cosine) = ("transformer", transformer) if transformer else ("static", static or (0, 0.0))
        out.append(Hit(cid, scores[cid], SemanticDetail(
            cosine, tier, static_rank=static and static[0], static_cosine=static and static[1],
            transformer_rank=transformer and transformer[0],
            transformer_cosine=transformer and transformer[1])))
    return out
