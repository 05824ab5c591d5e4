"""The semantic retriever in two tiers: static vectors for every chunk, transformer vectors where made.

`TieredSemantic(fast, deep, blend)` is what the engine calls "semantic". The fast tier (the static
model) embeds every chunk in seconds and decides the index state ("ready" once it is complete). The
deep tier (all-MiniLM-L6-v2 on numpy by default) fills in behind it: the language server embeds in
the background, most valuable chunks first (`embed_deep(order=...)`), `codeseek index --transformer`
in the foreground; both persist in the embedding cache, so every process uses what any has made.

A query ranks each chunk with the best model that has embedded it: the transformer's ranking of the
chunks it covers and the static ranking of the others meet by weighted reciprocal rank (`TierBlend`). So
a complete transformer tier answers exactly as the transformer alone (no static blend beat it:
docs/tuning/2026-11-30-tier-figures.md), and a partial one is completed by static evidence. A question
the transformer reads first has it embed the chunks it lacks of the static top `question_pool` and of
BM25's first (each once, kept in the tier and its cache), so even a cold index ranks a question's
candidates by the transformer; a name or lookup waits for a complete tier.
While the deep model is loading on another thread, or when it has no vector yet, the fast tier answers
alone.
`similar(chunk)` prefers the transformer's vector of the chunk when there is one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from indexing.records import Chunk
from retrievers.base import Hit, Query, SemanticDetail
from retrievers.scope import EVERYWHERE, Scope
from retrievers.semantic.embedder import EmbedderError
from retrievers.semantic.retriever import Progress, SemanticRetriever
from retrievers.semantic.static_embedder import is_question, is_static_id

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TierBlend:
    """Weighted RRF of the two tiers' rankings: weight / (k + rank), ranks from 1. Used only while the
    transformer tier is partly filled; equal weights, so a covered chunk outranks an uncovered one on
    its rank, not on its tier (0.3 / 0.7 put the transformer's 5th covered chunk above the static
    tier's best: docs/tuning/2026-12-02-fill-order.md)."""

    k: int = 10
    fast: float = 0.5
    deep: float = 0.5
    # A question the transformer reads has the transformer embed, there and then, the chunks of the
    # static tier's top `question_pool` (and of `Query.candidates`: BM25's first) it has no vector of
    # (each once: they join the tier and its cache), so it ranks that pool; the chunks below keep their
    # static ranks. 0: off. With BM25's 10, 40 recovered all 12 hits the static tier missed against a
    # full transformer tier on the 124 vocabulary-gap questions (docs/tuning/2026-12-02-question-pool.md);
    # 20 recovered fewer, 80 no more.
    question_pool: int = 40


class TieredSemantic:
    """Static + transformer semantic search behind the single-retriever interface; name "semantic"."""

    name = "semantic"

    def __init__(self, fast: SemanticRetriever, deep: SemanticRetriever | None,
                 blend: TierBlend | None = None) -> None:
        self.fast = fast
        self.deep = deep
        self.blend = blend or TierBlend()
        self._pooled_unsaved = False  # a question's pool added transformer vectors since the last save

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
    def index(self, chunks: Sequence[Chunk] | Mapping[int, Chunk], *, embed: bool = True,
              progress: Progress | None = None, saved: Path | None = None, stamp: str = "") -> None:
        """Both tiers hold `chunks`; with `saved` (a folder), vectors `save()` wrote there are read."""
        self.fast.index(chunks, embed=embed, progress=progress, stamp=stamp,
                        saved=saved / "vectors-main" if saved else None)
        if self.deep is not None:
            self.deep.index(chunks, embed=False, stamp=stamp,
                            saved=saved / "vectors-transformer" if saved else None)

    def save(self, folder: Path, stamp: str) -> None:
        """Save both tiers' vectors for the next process (`index(saved=folder)`)."""
        self.fast.save(folder / "vectors-main", stamp)
        self.save_deep(folder, stamp)

    def save_deep(self, folder: Path, stamp: str) -> None:
        """Save the transformer tier's vectors only (what questions' pools added)."""
        if self.deep is not None:
            self._pooled_unsaved = False
            self.deep.save(folder / "vectors-transformer", stamp)

    @property
    def pooled_unsaved(self) -> bool:
        """True when a question's pool embedded chunks that no save has written since."""
        return self._pooled_unsaved

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
        static = self._complete_pool(query, limit, scope)
        # A name or a lookup is ranked by the transformer only once it covers every chunk: the few
        # vectors questions' pools left would otherwise load it (~90 MiB) to rank a handful of chunks.
        partial = self.deep is not None and self.deep.pending() > 0 \
            and not is_question(query.text, query.intent)
        if partial or not self._deep_usable():
            tier = "static" if is_static_id(self.fast.model_id) else "transformer"
            return self.fast.search(query, limit, scope, tier=tier)
        deep_tier = self.deep
        assert deep_tier is not None
        deep = deep_tier.search(query, limit, scope)
        if deep_tier.pending() == 0 or self.blend.fast <= 0:
            return [Hit(h.chunk_id, h.score, _tiered(h, "transformer")) for h in deep]
        if static is None:
            fast = self.fast.search(query, limit, scope, skip=deep_tier.has_vector)
            return blend_rankings(fast, deep, self.blend, limit)
        # The pool is the static top: the chunks outside it keep their place in the static ranking.
        kept = [(rank, hit) for rank, hit in enumerate(static, start=1)
                if not deep_tier.has_vector(hit.chunk_id)]
        return blend_rankings([h for _, h in kept], deep, self.blend, limit, [r for r, _ in kept])

    def _complete_pool(self, query: Query, limit: int, scope: Scope) -> list[Hit] | None:
        """For a question the transformer reads (`TierBlend.question_pool`), embed with the transformer
        the chunks it has no vector of among the static top and `query.candidates` (other retrievers'
        first hits). Returns the static ranking (`limit` past the pool) once that pool is covered,
        else None."""
        deep_tier, size = self.deep, self.blend.question_pool
        if deep_tier is None or size <= 0 or not is_question(query.text, query.intent) \
                or deep_tier.embedder.loading:
            return None
        static = self.fast.search(query, limit + size, scope, tier="static")
        first = static[0].detail if static else None
        if not isinstance(first, SemanticDetail) or first.query != "transformer":
            return None
        wanted = [h.chunk_id for h in static[:size]]
        wanted += [c for c in query.candidates if c not in query.exclude]
        missing = [c for c in dict.fromkeys(wanted) if not deep_tier.has_vector(c)]
        if missing:
            try:
                if deep_tier.embed_now(missing):
                    self._pooled_unsaved = True
            except EmbedderError as exc:
                log.warning("the transformer cannot rank this question's chunks: %s", exc)
                return None
        return static

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


def blend_rankings(fast: list[Hit], deep: list[Hit], blend: TierBlend, limit: int,
                   fast_ranks: Sequence[int] | None = None) -> list[Hit]:
    """Weighted RRF of two rankings (ranks from 1, or `fast_ranks` for the static hits); each hit's
    detail keeps both cosines and ranks."""
    scores: dict[int, float] = {}
    ranks: dict[int, dict[str, tuple[int, float]]] = {}  # chunk -> tier -> (its rank there, cosine)
    static_ranks = list(fast_ranks) if fast_ranks is not None else list(range(1, len(fast) + 1))
    deep_ranks = list(range(1, len(deep) + 1))
    for tier, hits, weight, numbers in (("static", fast, blend.fast, static_ranks),
                                        ("transformer", deep, blend.deep, deep_ranks)):
        for rank, hit in zip(numbers, hits, strict=True):
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
