"""Definitions by id, read from columns of numbers and string codes instead of one object each.

A warm process on a large tree used to unpickle every definition (42,000 on the whole Django sdist:
~30 MiB of objects and ~40 ms) to answer a query that reads a few hundred of them. `definition_columns`
turns the definitions into four arrays saved with the flat call graph (`graph.flat`, `.npy` files
read with `allow_pickle=False`, memory-mapped): their numbers (lines, bytes, name position) as an
(n, 6) int64 array, their strings (name, qualified name, kind, path, signature, doc, parent, bases as
JSON) as an (n, 8) int32 array of codes into one table of distinct strings (a UTF-8 blob and its
offsets; -1 for a missing parent). A `DefinitionTable` over them is a `Mapping[int, Definition]`
whose ids are the graph's, in its order: a definition is made from its row when first asked for and
kept, so it is the same object every time, and each distinct string is decoded once (a file's
definitions share one path string). `in_file(path)` and `named(path, qualified)` look up a file's
definitions without making the others.

`Positions` maps ids to rows: a binary search when the ids increase (the store's order), else a dict.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from indexing.records import Definition

__all__ = ["COLUMNS", "DefinitionTable", "Positions", "definition_columns"]

NUMBERS = ("start_line", "end_line", "start_byte", "end_byte", "name_line", "name_column")
STRINGS = ("name", "qualified_name", "kind", "path", "signature", "doc", "parent", "bases")
COLUMNS = ("def_numbers", "def_codes", "def_strings", "def_string_offsets")  # the arrays' names
_PATH = STRINGS.index("path")


def definition_columns(definitions: Sequence[Definition]) -> dict[str, np.ndarray]:
    """The arrays a `DefinitionTable` reads (module docstring), for `definitions` in their order."""
    codes: dict[str, int] = {}
    texts: list[str] = []

    def code(text: str | None) -> int:
        if text is None:
            return -1
        found = codes.get(text)
        if found is None:
            found = codes[text] = len(texts)
            texts.append(text)
        return found

    numbers = np.zeros((len(definitions), len(NUMBERS)), dtype=np.int64)
    string_codes = np.zeros((len(definitions), len(STRINGS)), dtype=np.int32)
    for k, d in enumerate(definitions):
        numbers[k] = (d.start_line, d.end_line, d.start_byte, d.end_byte, d.name_line, d.name_column)
        string_codes[k] = (code(d.name), code(d.qualified_name), code(d.kind), code(d.path),
                           code(d.signature), code(d.doc), code(d.parent),
                           code(json.dumps(list(d.bases)) if d.bases else ""))
    encoded = [t.encode("utf-8", "surrogatepass") for t in texts]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return {"def_numbers": numbers, "def_codes": string_codes,
            "def_strings": np.frombuffer(b"".join(encoded), dtype=np.uint8),
            "def_string_offsets": offsets}


class Positions:
    """Id -> row: a binary search over ids in increasing order, else a dict (module docstring)."""

    def __init__(self, ids: np.ndarray) -> None:
        self.ids = ids
        ordered = len(ids) < 2 or bool(np.all(ids[1:] > ids[:-1]))
        self._table = None if ordered else {i: k for k, i in enumerate(ids.tolist())}

    def get(self, def_id: int) -> int | None:
        if self._table is not None:
            return self._table.get(def_id)
        k = int(np.searchsorted(self.ids, def_id))
        return k if k < len(self.ids) and int(self.ids[k]) == def_id else None

    def __contains__(self, def_id: object) -> bool:
        return isinstance(def_id, (int, np.integer)) and self.get(int(def_id)) is not None

    def __len__(self) -> int:
        return len(self.ids)


class DefinitionTable(Mapping[int, Definition]):
    """Definitions by id over saved columns (module docstring); `rows()` gives them by position."""

    def __init__(self, ids: np.ndarray, arrays: Mapping[str, np.ndarray]) -> None:
        numbers, codes = arrays["def_numbers"], arrays["def_codes"]
        offsets, blob = arrays["def_string_offsets"], arrays["def_strings"]
        n = len(ids)
        if numbers.shape != (n, len(NUMBERS)) or codes.shape != (n, len(STRINGS)) or offsets.ndim != 1 \
                or len(offsets) == 0 or int(offsets[-1]) != len(blob) or \
                (n and (int(codes.max()) >= len(offsets) - 1 or int(codes.min()) < -1)):
            raise ValueError("the saved definition columns do not fit together")
        self.positions = Positions(ids)
        self._numbers, self._codes, self._offsets, self._blob = numbers, codes, offsets, blob
        self._made: dict[int, Definition] = {}  # row -> its definition, made once
        self._texts: dict[int, str] = {}  # string code -> its text, decoded once
        self._files: dict[str, tuple[int, int]] | None = None  # path -> its rows' slice of _by_path
        self._by_path: np.ndarray | None = None  # rows ordered by path code, then row
        self._lock = threading.Lock()

    def _text(self, code: int) -> str:
        text = self._texts.get(code)
        if text is None:
            start, stop = self._offsets[code:code + 2].tolist()
            text = self._texts[code] = self._blob[start:stop].tobytes().decode("utf-8", "surrogatepass")
        return text

    def at(self, row: int) -> Definition:
        """The definition of row `row` (0 <= row < len)."""
        made = self._made.get(row)
        if made is not None:
            return made
        with self._lock:
            made = self._made.get(row)
            if made is None:
                start_line, end_line, start_byte, end_byte, name_line, column = self._numbers[row].tolist()
                name, qualified, kind, path, signature, doc, parent, bases = self._codes[row].tolist()
                base_text = self._text(bases)
                made = self._made[row] = Definition(
                    self._text(name), self._text(qualified), self._text(kind), self._text(path), start_line,
                    end_line, start_byte, end_byte, name_line, column, self._text(signature), self._text(doc),
                    None if parent < 0 else self._text(parent),
                    tuple(json.loads(base_text)) if base_text else (), int(self.positions.ids[row]))
        return made

    def rows(self) -> _Rows:
        """The definitions by position (a sequence; each made when first read)."""
        return _Rows(self)

    def __getitem__(self, def_id: int) -> Definition:
        row = self.positions.get(def_id) if isinstance(def_id, (int, np.integer)) else None
        if row is None:
            raise KeyError(def_id)
        return self.at(row)

    def __contains__(self, def_id: object) -> bool:
        return def_id in self.positions

    def __iter__(self) -> Iterator[int]:
        return iter(self.positions.ids.tolist())

    def __len__(self) -> int:
        return len(self.positions)

    def in_file(self, path: str) -> list[Definition]:
        """The definitions of `path`, in row order (empty for a path that has none)."""
        if self._files is None:
            with self._lock:
                if self._files is None:
                    path_codes = self._codes[:, _PATH]
                    order = np.argsort(path_codes, kind="stable")
                    ordered = path_codes[order]
                    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(order) else order
                    stops = np.r_[starts[1:], len(order)] if len(order) else order
                    self._by_path = order
                    self._files = {self._text(int(ordered[a])): (int(a), int(b))
                                   for a, b in zip(starts.tolist(), stops.tolist(), strict=True)}
        span = self._files.get(path)
        if span is None or self._by_path is None:
            return []
        return [self.at(row) for row in self._by_path[span[0]:span[1]].tolist()]

    def named(self, path: str, qualified: str) -> Definition | None:
        """The definition of `path` with this qualified name (of several, the first by start line, then
        the last in row order: what a dict filled in descending start-line order keeps)."""
        found = [d for d in self.in_file(path) if d.qualified_name == qualified]
        if not found:
            return None
        first = min(d.start_line for d in found)
        return [d for d in found if d.start_line == first][-1]


class _Rows(Sequence[Definition]):
    """A `DefinitionTable`'s definitions by position, made on first read."""

    def __init__(self, table: DefinitionTable) -> None:
        self._table = table
        self.ids = table.positions.ids

    def __len__(self) -> int:
        return len(self._table)

    def __getitem__(self, row):  # type: ignore[no-untyped-def,override]
        if isinstance(row, slice):
            return [self._table.at(k) for k in range(*row.indices(len(self)))]
        if row < 0:
            row += len(self)
        if not 0 <= row < len(self):
            raise IndexError(row)
        return self._table.at(row)
