"""indexing.array_folder: a folder of .npy arrays written whole, opened memory-mapped."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from indexing.array_folder import map_arrays, save_arrays


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
