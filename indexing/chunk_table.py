"""Chunks by id, read from columns saved per index revision instead of one object each.

A warm CLI search on the whole Django sdist made all 45,000 chunks as objects (~23 MiB, and the maps
each retriever keeps of them) to rank a few hundred. `chunk_columns` writes the store's chunks as
arrays (`indexing.columns`): ids, their numbers (lines, bytes) as an (n, 4) int64 array, and their
strings (path, language, kind, symbol, labels joined by commas, content hash, header) as an (n, 7)
int32 array of codes into one table of distinct strings. `ChunkTable` over them is a
`Mapping[int, Chunk]` in the store's (id) order: a chunk is made from its row when first asked for
and kept, so it is the same object every time; `in_file(path)` gives one file's chunks without making
the others, and `paths()` the files. `save_chunk_table` / `open_chunk_table` keep one folder of them per
key beside the index (`indexing.array_folder`: `.npy` read with `allow_pickle=False`, mapped).

`by_id(chunks)` takes any form a caller may hold (a list of chunks, a dict or a table by id) to a mapping.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from indexing.array_folder import open_keyed, save_keyed
from indexing.columns import RecordTable, StringCodes, Strings
from indexing.records import Chunk

__all__ = ["ChunkTable", "by_id", "chunk_columns", "open_chunk_table", "save_chunk_table"]

STRINGS = ("path", "language", "kind", "symbol", "labels", "content_hash", "header")
ARRAYS = ("ids", "numbers", "codes", "strings", "string_offsets")
PREFIX = "chunks-"
_PATH = STRINGS.index("path")


def chunk_columns(chunks: Sequence[Chunk]) -> dict[str, np.ndarray]:
    """The arrays a `ChunkTable` reads (module docstring), for `chunks` in their order."""
    strings = StringCodes()
    code = strings.code
    numbers = np.zeros((len(chunks), 4), dtype=np.int64)
    codes = np.zeros((len(chunks), len(STRINGS)), dtype=np.int32)
    for k, c in enumerate(chunks):
        numbers[k] = (c.start_line, c.end_line, c.start_byte, c.end_byte)
        codes[k] = (code(c.path), code(c.language), code(c.kind), code(c.symbol), code(",".join(c.labels)),
                    code(c.content_hash), code(c.header))
    return {"ids": np.asarray([c.id for c in chunks], dtype=np.int64), "numbers": numbers, "codes": codes,
            **strings.saved("")}


RETIRED = "chunks.pickle"  # what these columns replaced (an index written before 2026-12-02 has it)


def save_chunk_table(derived: Path, key: str, chunks: Sequence[Chunk]) -> bool:
    """Write the columns of `chunks` for `key` into `derived` (the folders of other keys go, and the
    chunk pickle they replaced, which nothing reads)."""
    saved = save_keyed(derived, PREFIX, key, chunk_columns(chunks))
    if saved:
        with contextlib.suppress(OSError):
            (derived / RETIRED).unlink(missing_ok=True)
    return saved


def open_chunk_table(derived: Path, key: str) -> ChunkTable | None:
    """The chunks saved for `key`, mapped; None when absent, of another key or not fitting together."""
    arrays = open_keyed(derived, PREFIX, key, ARRAYS)
    if arrays is None:
        return None
    try:
        return ChunkTable(arrays)
    except ValueError:
        return None


def by_id(chunks: Sequence[Chunk] | Mapping[int, Chunk]) -> Mapping[int, Chunk]:
    """`chunks` by id: a saved table as it is (read-only, shared), a list or a dict as a new dict (the
    caller's own to change)."""
    if isinstance(chunks, ChunkTable):
        return chunks
    return dict(chunks) if isinstance(chunks, Mapping) else {c.id: c for c in chunks}


class ChunkTable(RecordTable[Chunk]):
    """Chunks by id over saved columns (module docstring)."""

    def __init__(self, arrays: Mapping[str, np.ndarray]) -> None:
        ids, numbers, codes = (np.asarray(arrays[name]) for name in ("ids", "numbers", "codes"))
        if ids.ndim != 1 or numbers.shape != (len(ids), 4) or codes.shape != (len(ids), len(STRINGS)):
            raise ValueError("the saved chunk columns do not fit together")
        super().__init__(ids, numbers, codes, Strings(arrays, "", codes), _PATH)
        self._labels: dict[int, tuple[str, ...]] = {}  # labels code -> the tuple, made once

    def _make(self, row: int) -> Chunk:
        start_line, end_line, start_byte, end_byte = self._numbers[row].tolist()
        path, language, kind, symbol, labels, digest, header = self._codes[row].tolist()
        text = self._text
        return Chunk(text(path), None if language < 0 else text(language), start_line, end_line, start_byte,
                     end_byte, text(kind), None if symbol < 0 else text(symbol), self._labels_of(labels),
                     text(digest), text(header), int(self.ids[row]))

    def _labels_of(self, code: int) -> tuple[str, ...]:
        labels = self._labels.get(code)
        if labels is None:
            joined = self._text(code)
            labels = self._labels[code] = tuple(joined.split(",")) if joined else ()
        return labels

    def paths(self) -> list[str]:
        """The files that have chunks, in order of their first chunk."""
        rows, codes = self._by_file()
        return sorted(codes, key=lambda path: rows.first(codes[path]))

    def lines(self, rows: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """(start lines, end lines) of `rows`, read from the columns (no chunk is made)."""
        numbers = self._numbers[rows]
        return numbers[:, 0], numbers[:, 1]
