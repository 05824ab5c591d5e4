"""Structures a search derives from one index revision, loaded when an earlier process saved them.

The call graph has its own holder (`retrievers.engine.graph_state`); the structural retriever's definition
tables and the file cards are built here per snapshot, or read from `<index dir>/derived/` (signed
pickles, `indexing.persist.SignedCache`) when the revision and the code that builds them are the same
as when they were saved. `key` is the engine's derived key (None: nothing is loaded or saved, e.g.
while unsaved buffers are open); `later` queues the saves (`indexing.persist.WriteBehind`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

from indexing import name_table, records
from indexing.persist import SignedCache, code_fingerprint
from indexing.records import Chunk
from retrievers import snapshot as snapshot_module
from retrievers.ranking import contracts, copies, headers
from retrievers.sources import filecards, tokenize
from retrievers.sources import structural as structural_module
from retrievers.sources.structural import StructuralRetriever

__all__ = ["SavedMemos", "load_or_build"]

MEMOS = "snapshot-memos"  # the memos a snapshot builds with `saved=True` (`SavedMemos`)


def load_or_build(index_dir: Path, snapshot: Any, structural: StructuralRetriever,
                  chunks: Sequence[Chunk] | Mapping[int, Chunk],
                  key: str | None, file_cards: bool, later: list[Callable[[], object]] | None = None) -> None:
    """Fill `structural`'s tables and (with `file_cards`) the snapshot's file cards."""
    cache = SignedCache(index_dir, later)
    # (the tables hold Definitions and name tables)
    code = code_fingerprint(structural_module, tokenize, copies, records, name_table)
    tables_key = f"{key}:{code}" if key is not None else None
    if tables_key is None or not structural.import_state(cache.load("structural", tables_key) or {}):
        structural.index(chunks)  # (built from the definitions: a chunk table's chunks are not made)
        if tables_key is not None:
            cache.save("structural", tables_key, structural.export_state())
    if key is not None:
        memo_code = code_fingerprint(copies, contracts, headers, snapshot_module)
        snapshot.keep_memos_in(SavedMemos(cache, f"{key}:{memo_code}"))
    if file_cards:  # before the view is published: no first search on it waits for them (~0.5 s on
        # the Django sdist, the graph's PageRank with them); saved per revision, else built (a
        # server's later refreshes save nothing)
        if key is not None:
            filecards.load_or_build(snapshot, cache, key)
        else:
            filecards.file_cards_of(snapshot)


class SavedMemos:
    """The memos of one revision's snapshot saved beside the index (`Snapshot.memo(saved=True)`): one
    signed pickle of a dict, read on the first lookup; each value built after that is added and the
    dict saved again (queued on the cache's `later`: the values are small, and a warm process that
    found them all saves nothing)."""

    def __init__(self, cache: SignedCache, key: str) -> None:
        self._cache, self._key = cache, key
        self._values: dict[Hashable, Any] | None = None
        self._lock = threading.Lock()

    def _read(self) -> dict[Hashable, Any]:
        if self._values is None:
            saved = self._cache.load(MEMOS, self._key)
            self._values = saved if isinstance(saved, dict) else {}
        return self._values

    def get(self, key: Hashable, default: Any) -> Any:
        with self._lock:
            return self._read().get(key, default)

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            values = self._read()
            values[key] = value
            kept = dict(values)
        self._cache.save(MEMOS, self._key, kept)
