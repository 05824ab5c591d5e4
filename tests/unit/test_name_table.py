"""Unit tests for indexing.name_table: lookups, prefix scans and the round trip through plain arrays."""

from __future__ import annotations

import numpy as np
import pytest

from indexing.name_table import NameTable

TABLE = {"get": [7, 2], "get_or_create": [5], "getattr": [1, 9, 3], "set": [4], "": [0]}


def test_members_keep_their_listed_order_unless_sorted() -> None:
    table = NameTable.build(TABLE)
    assert table.get("getattr") == [1, 9, 3]
    assert NameTable.build(TABLE, sort_members=True).get("getattr") == [1, 3, 9]
    assert table.ids("get").dtype == np.int64 and table.ids("get").tolist() == [7, 2]


def test_names_not_in_the_table_have_no_members() -> None:
    table = NameTable.build(TABLE)
    assert table.get("ge") == [] and table.get("zzz") == [] and len(table.ids("aaa")) == 0
    assert "get" in table and "" in table and "ge" not in table and 3 not in table
    assert len(table) == 5


def test_prefix_scans_go_in_name_order_and_stop_at_the_limit() -> None:
    table = NameTable.build(TABLE, sort_members=True)
    assert list(table.starting_with("get", 10)) == [
        ("get", 2), ("get", 7), ("get_or_create", 5), ("getattr", 1), ("getattr", 3), ("getattr", 9)]
    assert list(table.starting_with("get", 3)) == [("get", 2), ("get", 7), ("get_or_create", 5)]
    assert list(table.starting_with("s", 10)) == [("set", 4)]
    assert list(table.names_from("get_")) == ["get_or_create"]
    assert list(table.names_from("x")) == []


def test_the_plain_arrays_give_the_same_table_back() -> None:
    table = NameTable.build({**TABLE, "ünïcode": [11]})
    again = NameTable.from_arrays(table.to_arrays("q_"), "q_")
    assert again.keys == table.keys and again.members.tolist() == table.members.tolist()
    assert again.get("ünïcode") == [11] and again.get("") == [0]
    empty = NameTable.from_arrays(NameTable.build({}).to_arrays(""), "")
    assert len(empty) == 0 and empty.get("a") == []


def test_arrays_that_do_not_fit_are_refused() -> None:
    arrays = NameTable.build(TABLE).to_arrays("")
    with pytest.raises(ValueError):
        NameTable.from_arrays({**arrays, "ptr": arrays["ptr"][:-1]}, "")
    with pytest.raises(ValueError):  # names out of order
        NameTable.from_arrays({**arrays, "names": np.frombuffer(b"b\0a\0c\0d\0e", dtype=np.uint8)}, "")
    with pytest.raises(ValueError):
        NameTable.build({"a\0b": [1]}).to_arrays("")


def test_a_table_grouped_from_coded_pairs_is_the_table_built_from_lists() -> None:
    names = ["set", "getattr", "unused", "get", "", "get_or_create"]  # any order; one never coded
    pairs = [(n, m) for n, members in TABLE.items() for m in members]
    pairs = pairs[1::2] + pairs[::2]  # interleaved: each name's members keep their listed order
    codes = np.asarray([names.index(n) for n, _ in pairs], dtype=np.int64)
    members = np.asarray([m for _, m in pairs], dtype=np.int64)
    grouped = NameTable.grouped(names, codes, members)
    built = NameTable.build({n: [m for k, m in pairs if k == n] for n in TABLE})
    assert grouped.keys == built.keys and "unused" not in grouped
    assert grouped.ptr.tolist() == built.ptr.tolist() and grouped.members.tolist() == built.members.tolist()
    with pytest.raises(ValueError, match="codes"):
        NameTable.grouped(names, codes[:-1], members)
