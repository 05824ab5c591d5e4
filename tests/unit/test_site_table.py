"""indexing.site_table: call sites saved as columns come back equal, each made once, strings shared;
columns that do not fit are refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from indexing.array_folder import map_arrays, save_arrays
from indexing.records import CallSite
from indexing.site_table import SITE_COLUMNS, SiteTable, site_columns

SITES = [
    CallSite("pkg/a.py", 3, 4, 18, "rebuild_auth", "self", "Session.send", "S"),
    CallSite("pkg/a.py", 9, 0, 5, "print", None, None, None),
    CallSite("pkg/ünï.py", 1, 2, 9, "größe", "wert.x", "Größe.f", "T:Wert"),
    CallSite("pkg/b.py", 12, 8, 30, "rebuild_auth", "session", "Session.send", "C:make\udcff"),
]


def test_sites_round_trip_through_saved_columns(tmp_path: Path) -> None:
    assert save_arrays(tmp_path / "cols", site_columns(SITES))
    table = SiteTable(map_arrays(tmp_path / "cols", SITE_COLUMNS))
    assert [table.at(row) for row in range(len(SITES))] == SITES and len(table) == len(SITES)
    assert table.at(0) is table.at(0)  # made once
    assert table.at(0).callee is table.at(3).callee and table.at(0).path is table.at(1).path  # shared
    empty = SiteTable(site_columns([]))
    assert len(empty) == 0


def test_columns_that_do_not_fit_are_refused() -> None:
    arrays = site_columns(SITES)
    with pytest.raises(ValueError):
        SiteTable({**arrays, "site_codes": arrays["site_codes"][:-1]})
    with pytest.raises(ValueError):
        SiteTable({**arrays, "site_codes": np.full_like(arrays["site_codes"], 10**6)})
