"""Records as columns: the pieces `indexing.definition_table` and `indexing.chunk_table` are made of.

A warm process on a large tree reads a few hundred of its tens of thousands of chunks and definitions;
holding each as an object cost tens of MiB and tens of ms before the first answer. Saved as columns
(`.npy`, read with `allow_pickle=False` and memory-mapped), a record is made from its row only when
asked for:
- `StringCodes` gives each distinct string one code (in order of first use; -1 stands for None; `codes`
  a column at a time), and `saved()` the table of them as one UTF-8 blob and its offsets;
- `Strings` decodes a code once and keeps the text, so records share one string per value;
- `Positions` maps an id to its row: arithmetic over ids without gaps, a binary search over ids in
  increasing order (the store's order), else a dict;
- `RowsByCode` finds the rows of one code of a column (a file's rows, by its path's code);
- `RecordTable` is a `Mapping[int, R]` over such columns whose subclass says how a row is made
  (`_make`): each record is made once and kept, so it is the same object every time.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import TypeVar

import numpy as np

__all__ = ["Positions", "RecordTable", "RowsByCode", "StringCodes", "Strings"]

R = TypeVar("R")


class StringCodes:
    """One code per distinct string, in order of first use (`code`); -1 for None."""

    def __init__(self) -> None:
        self._codes: dict[str, int] = {}
        self._texts: list[str] = []

    def code(self, text: str | None) -> int:
        if text is None:
            return -1
        found = self._codes.get(text)
        if found is None:
            found = self._codes[text] = len(self._texts)
            self._texts.append(text)
        return found

    def codes(self, texts: Iterable[str | None]) -> list[int]:
        """`code` of each text, in one loop (a column of hundreds of thousands of call sites)."""
        known, strings = self._codes, self._texts
        out: list[int] = []
        for text in texts:
            if text is None:
                out.append(-1)
                continue
            found = known.get(text)
            if found is None:
                found = known[text] = len(strings)
                strings.append(text)
            out.append(found)
        return out

    def saved(self, prefix: str) -> dict[str, np.ndarray]:
        """The strings as `<prefix>strings` (UTF-8 bytes, one after another) and `<prefix>string_offsets`."""
        encoded = [t.encode("utf-8", "surrogatepass") for t in self._texts]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in encoded], out=offsets[1:])
        return {f"{prefix}strings": np.frombuffer(b"".join(encoded), dtype=np.uint8),
                f"{prefix}string_offsets": offsets}


class Strings:
    """The strings `StringCodes.saved` wrote, each decoded when first asked for and kept."""

    def __init__(self, arrays: Mapping[str, np.ndarray], prefix: str, codes: np.ndarray) -> None:
        """`codes`: the code columns that name these strings (ValueError when one names none)."""
        # (plain views of mapped arrays: a memmap's own indexing costs several times a view's)
        self._blob = np.asarray(arrays[f"{prefix}strings"])
        self._offsets = np.asarray(arrays[f"{prefix}string_offsets"])
        offsets = self._offsets
        if offsets.ndim != 1 or len(offsets) == 0 or int(offsets[-1]) != len(self._blob) or \
                (codes.size and (int(codes.max()) >= len(offsets) - 1 or int(codes.min()) < -1)):
            raise ValueError("saved string columns do not fit together")
        self._texts: dict[int, str] = {}

    def __call__(self, code: int) -> str:
        text = self._texts.get(code)
        if text is None:
            start, stop = self._offsets[code:code + 2].tolist()
            text = self._texts[code] = self._blob[start:stop].tobytes().decode("utf-8", "surrogatepass")
        return text


class Positions:
    """Id -> row: arithmetic over ids that run without gaps (a fresh build's), a binary search over
    other ids in increasing order, else a dict."""

    def __init__(self, ids: np.ndarray) -> None:
        self.ids = ids = np.asarray(ids)
        ordered = len(ids) < 2 or bool(np.all(ids[1:] > ids[:-1]))
        self._table = None if ordered else {i: k for k, i in enumerate(ids.tolist())}
        dense = ordered and len(ids) > 0 and int(ids[-1]) - int(ids[0]) == len(ids) - 1
        self._first = int(ids[0]) if dense else None  # (a scalar searchsorted costs ~2 us a lookup)
        self._count = len(ids)

    def get(self, record_id: int) -> int | None:
        if self._first is not None:
            k = int(record_id) - self._first
            return k if 0 <= k < self._count else None
        if self._table is not None:
            return self._table.get(record_id)
        k = int(np.searchsorted(self.ids, record_id))
        return k if k < len(self.ids) and int(self.ids[k]) == record_id else None

    def __contains__(self, record_id: object) -> bool:
        return isinstance(record_id, (int, np.integer)) and self.get(int(record_id)) is not None

    def __len__(self) -> int:
        return len(self.ids)


class RowsByCode:
    """The rows of each code of one column, in row order (worked out on first use)."""

    def __init__(self, column: np.ndarray) -> None:
        order = np.argsort(column, kind="stable")
        ordered = column[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(order) else order
        stops = np.r_[starts[1:], len(order)] if len(order) else order
        self._order = order
        self.spans = {int(ordered[a]): (int(a), int(b)) for a, b in zip(starts.tolist(), stops.tolist(),
                                                                         strict=True)}

    def first(self, code: int) -> int:
        """The first row of `code` (which must be a code of the column)."""
        return int(self._order[self.spans[code][0]])

    def rows(self, code: int) -> list[int]:
        span = self.spans.get(code)
        return self._order[span[0]:span[1]].tolist() if span is not None else []  # type: ignore[no-any-return]


class RecordTable(Mapping[int, R]):
    """Records by id over an id column, a numbers array and a string-code array (one code column of it
    the records' path: `file_rows`, `in_file`); `_make(row)` makes one."""

    def __init__(self, ids: np.ndarray, numbers: np.ndarray, codes: np.ndarray, text: Strings,
                 path_column: int) -> None:
        self.positions = Positions(ids)
        self.ids = self.positions.ids
        self._numbers, self._codes, self._text, self._path_column = numbers, codes, text, path_column
        self._made: dict[int, R] = {}  # row -> its record, made once
        self._files: tuple[RowsByCode, dict[str, int]] | None = None  # rows by path code, path -> code
        self._lock = threading.Lock()

    def _make(self, row: int) -> R:
        raise NotImplementedError

    def at(self, row: int) -> R:
        """The record of row `row` (0 <= row < len)."""
        made = self._made.get(row, None)
        if made is not None:
            return made
        with self._lock:
            made = self._made.get(row, None)
            if made is None:
                made = self._made[row] = self._make(row)
        return made

    def __getitem__(self, record_id: int) -> R:
        row = self.positions.get(record_id) if isinstance(record_id, (int, np.integer)) else None
        if row is None:
            raise KeyError(record_id)
        return self.at(row)

    def __contains__(self, record_id: object) -> bool:
        return record_id in self.positions

    def __iter__(self) -> Iterator[int]:
        return iter(self.ids.tolist())

    def __len__(self) -> int:
        return len(self.positions)

    def _by_file(self) -> tuple[RowsByCode, dict[str, int]]:
        files = self._files
        if files is None:
            with self._lock:
                rows = RowsByCode(self._codes[:, self._path_column])
                files = self._files = (rows, {self._text(code): code for code in rows.spans})
        return files

    def file_rows(self, path: str) -> list[int]:
        """The rows of `path`'s records, in row order (empty for a path that has none)."""
        rows, codes = self._by_file()
        code = codes.get(path)
        return rows.rows(code) if code is not None else []

    def in_file(self, path: str) -> list[R]:
        """The records of `path`, in row order."""
        return [self.at(row) for row in self.file_rows(path)]
