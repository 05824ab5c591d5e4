"""Call sites by row, read from columns of numbers and string codes instead of one object each.

The saved call graph's caller arrays (`graph.caller_arrays`) name every call site they list by its row
in one table. `site_columns` turns the sites into the arrays saved with them (`.npy`, read with
`allow_pickle=False`, memory-mapped): their numbers (line, column, end column) as an (n, 3) int64
array and their strings (path, callee, receiver, caller, receiver evidence) as an (n, 5) int32 array
of codes into one table of distinct strings (-1 for None). A `SiteTable` over them is a
`Mapping[int, CallSite]` by row: a site is made when first asked for and kept, so the same row is the
same object every time, and each distinct string is decoded once. The column pieces are
`indexing.columns`'.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import attrgetter

import numpy as np

from indexing.columns import RecordTable, StringCodes, Strings
from indexing.records import CallSite

__all__ = ["SITE_COLUMNS", "SiteTable", "site_columns"]

NUMBERS = ("line", "column", "end_column")
STRINGS = ("path", "callee", "receiver", "caller", "receiver_type")
SITE_COLUMNS = ("site_numbers", "site_codes", "site_strings", "site_string_offsets")  # the arrays' names


def site_columns(sites: Sequence[CallSite]) -> dict[str, np.ndarray]:
    """The arrays a `SiteTable` reads (module docstring), for `sites` in their order (row = place)."""
    strings = StringCodes()
    numbers = np.empty((len(sites), len(NUMBERS)), dtype=np.int64)  # (a column at a time: no tuple a site)
    for k, name in enumerate(NUMBERS):
        numbers[:, k] = np.fromiter(map(attrgetter(name), sites), dtype=np.int64, count=len(sites))
    string_codes = np.empty((len(sites), len(STRINGS)), dtype=np.int32)
    for k, name in enumerate(STRINGS):
        string_codes[:, k] = strings.codes(map(attrgetter(name), sites))
    return {"site_numbers": numbers, "site_codes": string_codes, **strings.saved("site_")}


class SiteTable(RecordTable[CallSite]):
    """Call sites by row over saved columns (module docstring)."""

    def __init__(self, arrays: Mapping[str, np.ndarray]) -> None:
        numbers, codes = np.asarray(arrays["site_numbers"]), np.asarray(arrays["site_codes"])
        if numbers.ndim != 2 or numbers.shape[1:] != (len(NUMBERS),) or \
                codes.shape != (len(numbers), len(STRINGS)):
            raise ValueError("the saved call site columns do not fit together")
        super().__init__(np.arange(len(numbers), dtype=np.int64), numbers, codes,
                         Strings(arrays, "site_", codes), 0)

    def _make(self, row: int) -> CallSite:
        line, column, end_column = self._numbers[row].tolist()
        path, callee, receiver, caller, evidence = self._codes[row].tolist()
        text = self._text
        return CallSite(text(path), line, column, end_column, text(callee),
                        None if receiver < 0 else text(receiver), None if caller < 0 else text(caller),
                        None if evidence < 0 else text(evidence))
