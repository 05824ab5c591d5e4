"""Unit tests for indexing.definition_table: definitions made from saved columns, as they were saved."""

from __future__ import annotations

import numpy as np
import pytest

from indexing.columns import Positions
from indexing.definition_table import DefinitionTable, definition_columns
from indexing.records import Definition

DEFS = [
    Definition("Session", "Session", "class", "src/sessions.py", 10, 90, 200, 2400, 10, 6,
               "class Session(SessionRedirectMixin):", doc="A session.", bases=("SessionRedirectMixin",),
               id=3),
    Definition("send", "Session.send", "method", "src/sessions.py", 40, 60, 900, 1500, 40, 8,
               "def send(self, request):", parent="Session", id=5),
    Definition("send", "Session.send", "method", "src/sessions.py", 30, 35, 700, 800, 30, 8,
               "def send(self):", parent="Session", id=9),
    Definition("naïve_ü", "naïve_ü", "function", "src/ünï.py", 1, 2, 0, 30, 1, 4, "def naïve_ü():", id=12),
    Definition("CONST", "CONST", "variable", "src/sessions.py", 1, 1, 0, 10, 1, 0, "CONST = 1", id=20),
]


def table_of(defs: list[Definition]) -> DefinitionTable:
    ids = np.asarray([d.id for d in defs], dtype=np.int64)
    return DefinitionTable(ids, definition_columns(defs))


def test_every_field_comes_back_and_each_definition_is_made_once() -> None:
    table = table_of(DEFS)
    assert [table[d.id] for d in DEFS] == DEFS and list(table) == [3, 5, 9, 12, 20] and len(table) == 5
    assert table[5] is table[5] and table.at(1) is table[5]
    assert table[5].parent == "Session" and table[3].parent is None
    assert table[3].bases == ("SessionRedirectMixin",) and table[5].bases == ()
    assert table[3].path is table[20].path  # one string per distinct value
    assert 9 in table and 4 not in table and "9" not in table and table.get(4) is None
    with pytest.raises(KeyError):
        table[4]  # noqa: B018


def test_a_files_definitions_and_a_named_one() -> None:
    table = table_of(DEFS)
    assert [d.id for d in table.in_file("src/sessions.py")] == [3, 5, 9, 20]
    assert [d.id for d in table.in_file("src/ünï.py")] == [12] and table.in_file("nowhere.py") == []
    # of two with one qualified name, the first by start line (as the snapshot's dict kept it)
    assert table.named("src/sessions.py", "Session.send").id == 9  # type: ignore[union-attr]
    assert table.named("src/sessions.py", "Nope") is None and table.named("x.py", "Session") is None


def test_rows_are_a_sequence_by_position() -> None:
    rows = table_of(DEFS).rows()
    assert len(rows) == 5 and rows[0].id == 3 and rows[-1].id == 20 and [d.id for d in rows[1:3]] == [5, 9]
    assert rows.ids.tolist() == [3, 5, 9, 12, 20]
    with pytest.raises(IndexError):
        rows[5]  # noqa: B018


def test_ids_out_of_order_are_found_too() -> None:
    shuffled = [DEFS[3], DEFS[0], DEFS[4], DEFS[1]]
    table = table_of(shuffled)
    assert [table[d.id] for d in shuffled] == shuffled and list(table) == [12, 3, 20, 5]
    assert Positions(np.asarray([12, 3, 20, 5])).get(20) == 2


def test_positions_of_ids_with_and_without_gaps_agree_with_a_search() -> None:
    for ids in ([3, 4, 5, 6], [1, 2, 4, 9], [7], []):
        positions = Positions(np.asarray(ids, dtype=np.int64))
        for wanted in range(0, 12):
            assert positions.get(wanted) == (ids.index(wanted) if wanted in ids else None), (ids, wanted)
        assert (np.int64(ids[0]) in positions) if ids else (0 not in positions)


def test_columns_that_do_not_fit_are_refused() -> None:
    arrays = definition_columns(DEFS)
    ids = np.asarray([d.id for d in DEFS], dtype=np.int64)
    with pytest.raises(ValueError):
        DefinitionTable(ids[:-1], arrays)
    with pytest.raises(ValueError):
        DefinitionTable(ids, {**arrays, "def_codes": arrays["def_codes"] + 10_000})
    with pytest.raises(ValueError):
        DefinitionTable(ids, {**arrays, "def_string_offsets": arrays["def_string_offsets"][:-1]})
    assert len(DefinitionTable(np.zeros(0, dtype=np.int64), definition_columns([]))) == 0


def test_the_definitions_around_a_line_are_the_files_that_hold_it() -> None:
    table = table_of(DEFS)
    assert [d.id for d in table.around("src/sessions.py", 33)] == [3, 9]
    assert [d.id for d in table.around("src/sessions.py", 1)] == [20] and table.around("x.py", 1) == []
    assert table.around("src/sessions.py", 95) == []
