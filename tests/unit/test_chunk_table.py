"""Unit tests for indexing.chunk_table: chunks made from saved columns, as the store gave them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from indexing.chunk_table import ChunkTable, by_id, chunk_columns, open_chunk_table, save_chunk_table
from indexing.records import Chunk

CHUNKS = [
    Chunk("src/app.py", "python", 1, 40, 0, 900, "class", "App", ("source",), "a" * 64,
          header="", id=2),
    Chunk("src/app.py", "python", 5, 12, 80, 300, "method", "App.run", ("source",), "b" * 64,
          header="class App:", id=3),
    Chunk("README.md", "markdown", 1, 9, 0, 200, "section", None, ("doc",), "c" * 64, id=7),
    Chunk("tests/test_ünï.py", "python", 1, 3, 0, 40, "function", "test_x", ("test", "legacy"), "d" * 64,
          id=11),
    Chunk("notes.txt", None, 1, 2, 0, 10, "text", None, (), "e" * 64, id=12),
]


def test_every_field_comes_back_and_each_chunk_is_made_once() -> None:
    table = ChunkTable(chunk_columns(CHUNKS))
    assert [table[c.id] for c in CHUNKS] == CHUNKS and list(table) == [2, 3, 7, 11, 12] and len(table) == 5
    assert table[3] is table[3] and table.at(1) is table[3] and table.ids.tolist() == [2, 3, 7, 11, 12]
    assert table[12].language is None and table[7].symbol is None and table[12].labels == ()
    assert table[2].path is table[3].path and table[2].labels is table[3].labels  # one object per value
    assert 11 in table and 4 not in table and "11" not in table and table.get(4) is None
    with pytest.raises(KeyError):
        table[4]  # noqa: B018


def test_a_files_chunks_and_the_files() -> None:
    table = ChunkTable(chunk_columns(CHUNKS))
    assert [c.id for c in table.in_file("src/app.py")] == [2, 3] and table.in_file("nowhere.py") == []
    assert table.paths() == ["src/app.py", "README.md", "tests/test_ünï.py", "notes.txt"]


def test_saved_for_a_key_and_opened_only_for_it(tmp_path: Path) -> None:
    assert save_chunk_table(tmp_path, "rev-1", CHUNKS)
    opened = open_chunk_table(tmp_path, "rev-1")
    assert opened is not None and list(opened.values()) == CHUNKS
    assert open_chunk_table(tmp_path, "rev-2") is None
    assert save_chunk_table(tmp_path, "rev-2", CHUNKS[:2])  # the folder of the other key goes
    assert open_chunk_table(tmp_path, "rev-1") is None and len(open_chunk_table(tmp_path, "rev-2") or ()) == 2


def test_saving_removes_the_chunk_pickle_an_older_index_left(tmp_path: Path) -> None:
    (tmp_path / "chunks.pickle").write_bytes(b"an older version's chunks")
    (tmp_path / "structural.pickle").write_bytes(b"kept")
    assert save_chunk_table(tmp_path, "rev-1", CHUNKS)
    assert not (tmp_path / "chunks.pickle").exists() and (tmp_path / "structural.pickle").exists()


def test_columns_that_do_not_fit_are_refused(tmp_path: Path) -> None:
    arrays = chunk_columns(CHUNKS)
    with pytest.raises(ValueError):
        ChunkTable({**arrays, "ids": arrays["ids"][:-1]})
    with pytest.raises(ValueError):
        ChunkTable({**arrays, "codes": arrays["codes"] + 1000})
    assert save_chunk_table(tmp_path, "k", CHUNKS)
    (folder,) = tmp_path.glob("chunks-*")
    np.save(folder / "numbers.npy", np.zeros((2, 4), dtype=np.int64))
    assert open_chunk_table(tmp_path, "k") is None
    assert len(ChunkTable(chunk_columns([]))) == 0


def test_by_id_copies_lists_and_dicts_and_shares_tables() -> None:
    table = ChunkTable(chunk_columns(CHUNKS))
    assert by_id(table) is table
    given = {c.id: c for c in CHUNKS}
    made = by_id(given)
    assert made == given and made is not given and by_id(CHUNKS) == given


def test_a_snapshot_over_the_table_answers_as_over_the_list() -> None:
    """Nested chunks, chunks of one size holding one line, ids out of line order: the chunk at each
    line and each file's sorted chunks are the same whether the snapshot holds the list or the table."""
    from retrievers.snapshot import Snapshot

    def chunk(path: str, start: int, end: int, cid: int) -> Chunk:
        return Chunk(path, "python", start, end, start * 10, end * 10, "block", None, ("source",),
                     f"{cid:064}", id=cid)

    chunks = [chunk("a.py", 1, 30, 1), chunk("a.py", 5, 10, 2), chunk("a.py", 8, 13, 3),
              chunk("a.py", 5, 10, 4), chunk("a.py", 20, 30, 5), chunk("b.py", 3, 3, 6),
              chunk("a.py", 1, 30, 7), chunk("b.py", 1, 9, 8)]
    listed = Snapshot.build(chunks, [], None, 0)
    tabled = Snapshot.build(ChunkTable(chunk_columns(chunks)), [], None, 0)
    for path in ("a.py", "b.py", "c.py"):
        for line in range(0, 33):
            assert tabled.chunk_at(path, line) == listed.chunk_at(path, line), (path, line)
    assert listed.chunk_at("a.py", 9).id == 2  # type: ignore[union-attr]  # (of equals, the first in order)
    assert list(tabled.by_path) == list(listed.by_path) == ["a.py", "b.py"]
    assert [tabled.by_path[p] for p in tabled.by_path] == [listed.by_path[p] for p in listed.by_path]
    assert tabled.by_path.get("c.py") is None and len(tabled.by_path) == 2
