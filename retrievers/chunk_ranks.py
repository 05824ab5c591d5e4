"""Chunk PageRank: the rank of the definition a chunk stands for.

`Snapshot.chunk_pagerank` and `Snapshot.chunk_ranks_in` apply one rule (`ranks_of`): a chunk counts
the rank of the definition its symbol names in its file (`first_by_name` picks among several), else
the best rank of the definitions whose name lines lie inside it (a block of small definitions).
`ChunkPageRank` is a snapshot's chunk id -> rank mapping, worked out a chunk at a time on first use
(the file cards work out whole files), and `kept_per_chunk` the per-chunk caches ranking keeps beside
it.
"""

from __future__ import annotations

import bisect
import weakref
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from indexing.records import Chunk, Definition

if TYPE_CHECKING:
    from retrievers.snapshot import Snapshot

__all__ = ["ChunkPageRank", "first_by_name", "kept_per_chunk", "ranks_of"]


def first_by_name(definitions: Iterable[Definition]) -> dict[tuple[str, str], Definition]:
    """(path, qualified name) -> its definition; of several, the first by start line, then the last
    listed (the rule `DefinitionTable.named` follows too)."""
    keyed: dict[tuple[str, str], Definition] = {}
    for d in sorted(definitions, key=lambda d: -d.start_line):  # the first one wins
        keyed[(d.path, d.qualified_name)] = d
    return keyed


def ranks_of(chunks: Iterable[Chunk], definitions: Sequence[Definition], named: Mapping[str, Definition],
              rank: Mapping[int, float]) -> dict[int, float | None]:
    """Each chunk's rank from its file's definitions (`named`: by qualified name, `first_by_name`): the
    rank of the definition named by its symbol, else the best of those whose name line lies inside it
    (None for none)."""
    by_line = sorted((d.name_line, d.id) for d in definitions if d.id in rank)
    lines = [line for line, _ in by_line]
    ranks: dict[int, float | None] = {}
    for chunk in chunks:
        held = named.get(chunk.symbol) if chunk.symbol else None
        if held is not None:
            ranks[chunk.id] = rank.get(held.id)
        else:
            inside = by_line[bisect.bisect_left(lines, chunk.start_line):
                             bisect.bisect_right(lines, chunk.end_line)]
            ranks[chunk.id] = max((rank[i] for _, i in inside), default=None)
    return ranks


class ChunkPageRank(Mapping[int, float]):
    """Chunk id -> PageRank of its definition (`Snapshot.chunk_pagerank`), worked out per chunk on
    first use: a search reads a few hundred candidates, and working out all of them up front cost a
    warm CLI start ~0.1 s on Django. It holds its snapshot weakly: a strong reference made the
    snapshot (and with it the call graph, ~1.2M objects on the Django sdist) cyclic garbage that only
    a full collection frees, and that collection held the GIL ~2.4 s after each refresh of a server."""

    def __init__(self, snapshot: Snapshot) -> None:
        self._of = weakref.ref(snapshot)
        self._known: dict[int, float | None] = {}
        self._derived: dict[Hashable, dict[int, Any]] = {}

    def derived(self, key: Hashable) -> dict[int, Any]:
        """A cache, one per `key`, of values worked out per chunk from these ranks and the snapshot's
        chunks (`fusion.apply_priors` keeps each chunk's fixed priors here per ranking setting, the file
        cards each chunk's card prior): neither ever changes."""
        derived = self._derived.get(key)
        if derived is None:
            derived = self._derived.setdefault(key, {})
        return derived

    def learn(self, known: Mapping[int, float | None]) -> None:
        """Take chunks' ranks worked out elsewhere (`filecards.central_ranks`), None for none."""
        self._known.update(known)

    def get(self, chunk_id: int, default: float | None = None) -> float | None:  # type: ignore[override]
        value = self._known[chunk_id] if chunk_id in self._known else self._work_out(chunk_id)
        return default if value is None else value

    def __getitem__(self, chunk_id: int) -> float:
        value = self._known[chunk_id] if chunk_id in self._known else self._work_out(chunk_id)
        if value is None:
            raise KeyError(chunk_id)
        return value

    @property
    def _snapshot(self) -> Snapshot:
        snapshot = self._of()
        if snapshot is None:  # (a snapshot's ranks are read through it, while it is in use)
            raise ReferenceError("the snapshot of these ranks is gone")
        return snapshot

    def _work_out(self, chunk_id: int) -> float | None:
        """The chunk's rank alone: a cold process reads a few hundred candidates in ~50 files, and
        working out each candidate's whole file made every chunk and definition of those files (0.13 s
        of a warm CLI search on the Django sdist, against 0.014 s)."""
        chunk = self._snapshot.chunks.get(chunk_id)
        value = self._snapshot.chunk_pagerank(chunk) if chunk is not None else None
        self._known[chunk_id] = value
        return value

    def __iter__(self) -> Iterator[int]:
        return (cid for cid in self._snapshot.chunks if cid in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, chunk_id: object) -> bool:
        if not isinstance(chunk_id, int):
            return False
        known = self._known[chunk_id] if chunk_id in self._known else self._work_out(chunk_id)
        return known is not None


def kept_per_chunk(ranks: Mapping[int, float], key: Hashable) -> dict[int, Any]:
    """Where values worked out per chunk for one ranking setting `key` are kept: with a snapshot's
    ranks (`ChunkPageRank.derived`), else in a dict for this search only (plain ranks, as in tests)."""
    derived = getattr(ranks, "derived", None)
    return derived(key) if callable(derived) else {}  # type: ignore[no-any-return]
