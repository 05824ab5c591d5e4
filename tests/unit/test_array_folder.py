"""indexing.array_folder: a folder of .npy arrays written whole, opened memory-mapped."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from indexing.array_folder import RowReader, map_arrays, rows_of, save_arrays


def test_saved_arrays_map_back_equal_and_read_only(tmp_path: Path) -> None:
    arrays = {"ids": np.arange(5, dtype=np.int64), "weight": np.linspace(0, 1, 5)}
    assert save_arrays(tmp_path / "f", arrays, texts={"key": "k1"}, durable=True)
    mapped = map_arrays(tmp_path / "f", ["ids", "weight"])
    assert mapped is not None and all(np.array_equal(mapped[k], arrays[k]) for k in arrays)
    assert not mapped["ids"].flags.writeable and (tmp_path / "f" / "key").read_text() == "k1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]  # no temporary folder left


def test_a_folder_already_there_stays_and_a_missing_array_maps_to_none(tmp_path: Path) -> None:
    assert save_arrays(tmp_path / "f", {"a": np.zeros(2)})
    assert save_arrays(tmp_path / "f", {"a": np.ones(2)})  # another writer got there first: kept
    mapped = map_arrays(tmp_path / "f", ["a"])
    assert mapped is not None and mapped["a"].tolist() == [0.0, 0.0]
    assert map_arrays(tmp_path / "f", ["a", "b"]) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]


def test_an_unwritable_place_says_false(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert not save_arrays(blocker / "f", {"a": np.zeros(1)})


def test_row_reader_reads_what_indexing_would_and_refuses_what_is_not_a_whole_file(tmp_path: Path) -> None:
    rows = np.arange(40, dtype=np.float16).reshape(10, 4)
    assert save_arrays(tmp_path / "f", {"rows": rows, "flat": np.arange(6, dtype=np.int64)})
    mapped = map_arrays(tmp_path / "f", ["rows", "flat"])
    assert mapped is not None
    reader = RowReader.of(mapped["rows"])
    assert reader is not None
    picked = np.array([7, 0, 7, 9])
    taken = reader.take(picked)
    assert np.array_equal(taken, mapped["rows"][picked]) and taken.dtype == np.float16
    taken += 1  # a new array, not a view of the file
    assert np.array_equal(rows_of(mapped["rows"], picked, None), rows_of(mapped["rows"], picked, reader))
    assert reader.take(np.array([], dtype=np.int64)).shape == (0, 4)
    with pytest.raises(IndexError):
        reader.take(np.array([10]))
    assert RowReader.of(mapped["rows"][2:5]) is None  # a slice: its rows are not the file's rows
    assert RowReader.of(mapped["flat"]) is None and RowReader.of(rows) is None  # 1-D; not mapped


def test_row_reader_reads_the_same_rows_without_preadv(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import indexing.array_folder as array_folder

    rows = np.arange(24, dtype=np.float32).reshape(6, 4)
    assert save_arrays(tmp_path / "f", {"rows": rows})
    mapped = map_arrays(tmp_path / "f", ["rows"])
    assert mapped is not None
    reader = RowReader.of(mapped["rows"])
    assert reader is not None
    with_preadv = reader.take(np.array([5, 1]))
    monkeypatch.setattr(array_folder, "_PREADV", False)
    assert np.array_equal(reader.take(np.array([5, 1])), with_preadv)
    assert np.array_equal(with_preadv, rows[[5, 1]])
