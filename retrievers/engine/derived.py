"""Structures a search derives from one index revision, loaded when an earlier process saved them.

The call graph has its own holder (`retrievers.engine.graph_state`); the structural retriever's definition
tables and the file cards are built here per snapshot, or read from `<index dir>/derived/` (signed
pickles, `indexing.persist.SignedCache`) when the revision and the code that builds them are the same
as when they were saved. `key` is the engine's derived key (None: nothing is loaded or saved, e.g.
while unsaved buffers are open); `later` queues the saves (`indexing.persist.WriteBehind`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from indexing import name_table, records
from indexing.persist import SignedCache, code_fingerprint
from indexing.records import Chunk
from retrievers.ranking import copies
from retrievers.sources import filecards, tokenize
from retrievers.sources import structural as structural_module
from retrievers.sources.structural import StructuralRetriever

__all__ = ["load_or_build"]


def load_or_build(index_dir: Path, snapshot: Any, structural: StructuralRetriever, chunks: Sequence[Chunk],
                  key: str | None, file_cards: bool, later: list[Callable[[], object]] | None = None) -> None:
    """Fill `structural`'s tables and (with `file_cards`) the snapshot's file cards."""
    cache = SignedCache(index_dir, later)
    # (the tables hold Definitions and name tables)
    code = code_fingerprint(structural_module, tokenize, copies, records, name_table)
    tables_key = f"{key}:{code}" if key is not None else None
    if tables_key is None or not structural.import_state(cache.load("structural", tables_key) or {}):
        structural.index(chunks)
        if tables_key is not None:
            cache.save("structural", tables_key, structural.export_state())
    if key is not None and file_cards:
        filecards.load_or_build(snapshot, cache, key)
