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
definitions without making the others. The column pieces are `indexing.columns`'.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import numpy as np

from indexing.columns import RecordTable, StringCodes, Strings
from indexing.records import Definition

__all__ = ["COLUMNS", "DefinitionTable", "definition_columns"]

NUMBERS = ("start_line", "end_line", "start_byte", "end_byte", "name_line", "name_column")
STRINGS = ("name", "qualified_name", "kind", "path", "signature", "doc", "parent", "bases")
COLUMNS = ("def_numbers", "def_codes", "def_strings", "def_string_offsets")  # the arrays' names
_PATH, _QUALIFIED = STRINGS.index("path"), STRINGS.index("qualified_name")


def definition_columns(definitions: Sequence[Definition]) -> dict[str, np.ndarray]:
    """The arrays a `DefinitionTable` reads (module docstring), for `definitions` in their order."""
    strings = StringCodes()
    code = strings.code
    numbers = np.zeros((len(definitions), len(NUMBERS)), dtype=np.int64)
    string_codes = np.zeros((len(definitions), len(STRINGS)), dtype=np.int32)
    for k, d in enumerate(definitions):
        numbers[k] = (d.start_line, d.end_line, d.start_byte, d.end_byte, d.name_line, d.name_column)
        string_codes[k] = (code(d.name), code(d.qualified_name), code(d.kind), code(d.path),
                           code(d.signature), code(d.doc), code(d.parent),
                           code(json.dumps(list(d.bases)) if d.bases else ""))
    return {"def_numbers": numbers, "def_codes": string_codes, **strings.saved("def_")}


class DefinitionTable(RecordTable[Definition]):
    """Definitions by id over saved columns (module docstring); `rows()` gives them by position."""

    def __init__(self, ids: np.ndarray, arrays: Mapping[str, np.ndarray]) -> None:
        numbers, codes = np.asarray(arrays["def_numbers"]), np.asarray(arrays["def_codes"])
        if numbers.shape != (len(ids), len(NUMBERS)) or codes.shape != (len(ids), len(STRINGS)):
            raise ValueError("the saved definition columns do not fit together")
        super().__init__(ids, numbers, codes, Strings(arrays, "def_", codes), _PATH)

    def _make(self, row: int) -> Definition:
        start_line, end_line, start_byte, end_byte, name_line, column = self._numbers[row].tolist()
        name, qualified, kind, path, signature, doc, parent, bases = self._codes[row].tolist()
        text = self._text
        base_text = text(bases)
        return Definition(text(name), text(qualified), text(kind), text(path), start_line, end_line,
                          start_byte, end_byte, name_line, column, text(signature), text(doc),
                          None if parent < 0 else text(parent),
                          tuple(json.loads(base_text)) if base_text else (), int(self.ids[row]))

    def rows(self) -> _Rows:
        """The definitions by position (a sequence; each made when first read)."""
        return _Rows(self)

    def around(self, path: str, line: int) -> list[Definition]:
        """The definitions of `path` whose lines hold `line`, in row order (only those are made)."""
        rows = self.file_rows(path)
        if not rows:
            return []
        numbers = self._numbers[rows]
        inside = np.flatnonzero((numbers[:, 0] <= line) & (numbers[:, 1] >= line)).tolist()
        return [self.at(rows[k]) for k in inside]

    def named(self, path: str, qualified: str) -> Definition | None:
        """The definition of `path` with this qualified name (of several, the first by start line, then
        the last in row order: what a dict filled in descending start-line order keeps); only the
        matching ones are made."""
        rows = self.file_rows(path)
        found = [self.at(row) for row in rows if self._text(int(self._codes[row, _QUALIFIED])) == qualified]
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
