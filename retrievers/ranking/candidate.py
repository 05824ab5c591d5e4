"""One fused candidate (`Fused`) whose explain record is written out only when it is read.

A search fuses a few hundred candidates and shows ten. `fusion.rrf` notes each list's contribution as
a tuple and `fusion.apply_priors` its terms as one list; `Fused.explain` turns them into the record
(the same keys, in the same order, as writing it at once) the first time it is asked for, so only the
results kept, and the few candidates the floor looks up, ever build one. Steps that need a list's
detail before that read it with `detail_of`, which builds nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from operator import attrgetter
from typing import Any

from retrievers.base import DETAILS, Detail

__all__ = ["BOOST", "PATH_KEYWORD", "Entry", "Fused", "PriorTerms", "best_first", "detail_in", "write_priors"]

# A list's contribution, pending: (rank 1-based, weight, contribution, the retriever's score, detail).
Entry = tuple[int, float, float, float, Detail | None]


# `fusion.apply_priors`'s terms for one candidate, pending, as a list (made per candidate: a list
# display is cheaper than an object's __init__): the RRF sum it started from, the additive bonuses
# (0.0: none; the path keyword's is set later), the fixed factors other than 1 as (name, value) pairs,
# the per-search factors (1.0: none), their product, the chunk's labels, the label that demoted it.
RRF, DEFINITION, COHERENCE, PATH_KEYWORD, FIXED, COPY, CONTRACT, DEPTH, BOOST, LABELS, DEMOTED_BY = range(11)
PriorTerms = list[Any]


def detail_in(explain: Mapping[str, Any], modality: str) -> Detail | None:
    """The detail of the hit a list found a result by, in a written explain record (None when the
    list did not find it, or gave no detail). The record holds the retriever's own detail record
    (`retrievers.base`), written out as JSON with the result (`retrievers.engine.results`)."""
    entry = explain.get(modality)
    detail = entry.get("detail") if isinstance(entry, dict) else None
    return detail if isinstance(detail, DETAILS) else None


def write_priors(terms: PriorTerms, explain: dict[str, Any]) -> None:
    """Add `rrf`, `bonus`, `factors`, `boost`, `labels` (and `demoted_as`) to an explain record."""
    bonus: dict[str, float] = {}
    if terms[DEFINITION]:
        bonus["definition"] = terms[DEFINITION]
    if terms[COHERENCE]:
        bonus["coherence"] = terms[COHERENCE]
    if terms[PATH_KEYWORD]:
        bonus["path_keyword"] = terms[PATH_KEYWORD]
    factors = dict(terms[FIXED])
    if terms[COPY] != 1.0:
        factors["copy"] = terms[COPY]
    if terms[CONTRACT] != 1.0:
        factors["contract"] = terms[CONTRACT]
    if terms[DEPTH] != 1.0:
        factors["depth"] = terms[DEPTH]
    explain["rrf"] = terms[RRF]
    explain["bonus"] = bonus
    explain["factors"] = factors
    explain["boost"] = terms[BOOST]
    explain["labels"] = list(terms[LABELS])
    if terms[DEMOTED_BY]:
        explain["demoted_as"] = terms[DEMOTED_BY]


class Fused:
    """One fused result: chunk id, score, the explain record, the path (set by apply_priors; dedupe
    and saturation group on it), and hits folded under it (`also`)."""

    __slots__ = ("chunk_id", "score", "path", "also", "_explain", "entries", "counts", "priors")

    def __init__(self, chunk_id: int, score: float, explain: dict[str, Any] | None = None,
                 path: str | None = None, also: list[dict[str, Any]] | None = None) -> None:
        self.chunk_id = chunk_id
        self.score = score
        self.path = path
        self.also = [] if also is None else also
        self._explain = {} if explain is None else explain
        self.entries: dict[str, Entry] | None = None  # pending per-list contributions (fusion.rrf)
        self.counts: dict[str, int] | None = None  # lists that name the chunk more than once
        self.priors: PriorTerms | None = None  # pending prior terms (fusion.apply_priors)

    @property
    def explain(self) -> dict[str, Any]:
        """The explain record: each list's rank, weight, contribution, raw score and detail (and
        `count` when it named the chunk more than once), then the prior terms."""
        if self.entries is not None or self.priors is not None:
            self._write_pending()
        return self._explain

    def detail_of(self, modality: str) -> Detail | None:
        """The detail of the hit a list found this chunk by (None when it did not, or gave none),
        without building the explain record."""
        if self.entries is not None:
            entry = self.entries.get(modality)
            return entry[4] if entry is not None else None
        return detail_in(self._explain, modality)

    def _write_pending(self) -> None:
        explain = self._explain
        if self.entries is not None:
            counts = self.counts
            for modality, (rank, weight, contribution, raw, detail) in self.entries.items():
                entry: dict[str, Any] = {"rank": rank, "weight": weight, "score": contribution, "raw": raw}
                if detail is not None:
                    entry["detail"] = detail
                if counts is not None and modality in counts:
                    entry["count"] = counts[modality]
                explain[modality] = entry
            self.entries = self.counts = None
        if self.priors is not None:
            write_priors(self.priors, explain)
            self.priors = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Fused):
            return NotImplemented
        return (self.chunk_id, self.score, self.explain, self.path, self.also) == \
            (other.chunk_id, other.score, other.explain, other.path, other.also)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value (as the dataclass was)

    def __repr__(self) -> str:
        return f"Fused(chunk_id={self.chunk_id}, score={self.score}, path={self.path!r})"


def best_first(items: Iterable[Fused]) -> list[Fused]:
    """Highest score first, equal scores by chunk id (two stable sorts on C-level keys: the order of
    `sorted(key=lambda f: (-f.score, f.chunk_id))` without a tuple per item)."""
    ordered = sorted(items, key=_CHUNK_ID)
    ordered.sort(key=_SCORE, reverse=True)
    return ordered


_CHUNK_ID = attrgetter("chunk_id")
_SCORE = attrgetter("score")
