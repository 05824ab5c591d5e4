"""A read-only table from names to lists of integers, held as two arrays and one sorted list of names.

The structural retriever's tables (a definition's name, its case-folded name and its name parts, each
to the definitions that have it) and the call graph's name tables were dictionaries of lists: on the
whole Django sdist (42,000 definitions) they held over a million Python objects, 42 MiB, read from a
pickle by every warm CLI call. A `NameTable` holds the same data as the sorted distinct names, a CSR
offset array (`ptr`: the members of name k are `members[ptr[k]:ptr[k+1]]`) and the members, in the
order they were listed (or ascending, with `sort_members`): a few MiB, unpickled in milliseconds.

`to_arrays` / `from_arrays` give it as plain arrays (the names as one UTF-8 blob joined by NUL characters,
which no name read from source contains) for an `.npy` folder (`indexing.array_folder`), where no code can run
from what is read.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np

__all__ = ["NameTable"]

_EMPTY = np.empty(0, dtype=np.int64)
_SEPARATOR = "\0"


class NameTable:
    """Names (sorted, distinct) -> members (module docstring)."""

    __slots__ = ("keys", "members", "ptr")

    def __init__(self, keys: list[str], ptr: np.ndarray, members: np.ndarray) -> None:
        if len(ptr) != len(keys) + 1 or (len(keys) and int(ptr[-1]) != len(members)):
            raise ValueError(f"a name table of {len(keys)} names needs {len(keys) + 1} offsets ending at "
                             f"{len(members)}, got {len(ptr)}")
        self.keys = keys
        self.ptr = ptr
        self.members = members

    @classmethod
    def build(cls, table: Mapping[str, Iterable[int]], sort_members: bool = False) -> NameTable:
        """The table of `table` (each name's members in its order, or ascending with `sort_members`)."""
        keys = sorted(table)
        ptr = np.zeros(len(keys) + 1, dtype=np.int64)
        rows: list[int] = []
        for k, key in enumerate(keys):
            row = sorted(table[key]) if sort_members else list(table[key])
            rows.extend(row)
            ptr[k + 1] = len(rows)
        return cls(keys, ptr, np.asarray(rows, dtype=np.int64))

    @classmethod
    def grouped(cls, names: Sequence[str], codes: np.ndarray, members: np.ndarray) -> NameTable:
        """The table of the pairs (`names[codes[i]]`, `members[i]`), each name's members in the order
        listed (`names` distinct; a name no code points at is left out): `build` over arrays, for
        tables of tens of thousands of names made on every refresh (the structural retriever's)."""
        if len(codes) != len(members):
            raise ValueError(f"{len(codes)} codes for {len(members)} members")
        alphabetical = sorted(range(len(names)), key=names.__getitem__)
        rank = np.empty(len(names), dtype=np.int64)
        rank[alphabetical] = np.arange(len(names), dtype=np.int64)
        ranked = rank[codes]
        counts = np.bincount(ranked, minlength=len(names))
        ptr = np.zeros(int(np.count_nonzero(counts)) + 1, dtype=np.int64)
        np.cumsum(counts[counts > 0], out=ptr[1:])
        keys = [names[code] for code, count in zip(alphabetical, counts.tolist(), strict=True) if count]
        return cls(keys, ptr, np.asarray(members, dtype=np.int64)[np.argsort(ranked, kind="stable")])

    def _position(self, key: str) -> int:
        k = bisect.bisect_left(self.keys, key)
        return k if k < len(self.keys) and self.keys[k] == key else -1

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._position(key) >= 0

    def __len__(self) -> int:
        return len(self.keys)

    def ids(self, key: str) -> np.ndarray:
        """The members of `key` as an int64 array (empty when it is not a name of the table)."""
        k = self._position(key)
        return self.members[int(self.ptr[k]):int(self.ptr[k + 1])] if k >= 0 else _EMPTY

    def get(self, key: str) -> list[int]:
        """The members of `key` (empty when it is not a name of the table)."""
        return self.ids(key).tolist()  # type: ignore[no-any-return]

    def starting_with(self, prefix: str, limit: int) -> Iterator[tuple[str, int]]:
        """(name, member) for the names that start with `prefix`, in name order then the members' order,
        at most `limit` pairs."""
        k = bisect.bisect_left(self.keys, prefix)
        given = 0
        while k < len(self.keys) and given < limit and self.keys[k].startswith(prefix):
            name = self.keys[k]
            for member in self.members[int(self.ptr[k]):int(self.ptr[k + 1])][:limit - given].tolist():
                yield name, member
                given += 1
            k += 1

    def names_from(self, prefix: str) -> Iterator[str]:
        """The names that start with `prefix`, in order."""
        k = bisect.bisect_left(self.keys, prefix)
        while k < len(self.keys) and self.keys[k].startswith(prefix):
            yield self.keys[k]
            k += 1

    def to_arrays(self, prefix: str) -> dict[str, np.ndarray]:
        """The table as plain arrays named `<prefix>names`, `<prefix>ptr`, `<prefix>members`."""
        if any(_SEPARATOR in key for key in self.keys):
            raise ValueError("a name holds a NUL character: the table cannot be saved as arrays")
        blob = _SEPARATOR.join(self.keys).encode("utf-8")
        return {f"{prefix}names": np.frombuffer(blob, dtype=np.uint8), f"{prefix}ptr": self.ptr,
                f"{prefix}members": self.members}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], prefix: str) -> NameTable:
        """The table `to_arrays(prefix)` gave (ValueError when the arrays do not fit together)."""
        ptr, members = np.asarray(arrays[f"{prefix}ptr"]), np.asarray(arrays[f"{prefix}members"])
        blob = np.asarray(arrays[f"{prefix}names"]).tobytes().decode("utf-8")
        keys = blob.split(_SEPARATOR) if len(ptr) > 1 else []
        if any(a >= b for a, b in zip(keys, keys[1:], strict=False)):
            raise ValueError("the names of a saved name table are not in order")
        return cls(keys, ptr, members)
