"""Index health and sharing (issue 13): unclean-close detection, corruption rebuilt, missing tables
refilled, the store stamp, the inter-process writer lock, and actionable error descriptions."""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from indexing.integrity import MARKER_PREFIX, OpenMarker, describe, is_corruption
from indexing.locking import LockTimeout, WriterLock
from indexing.records import FileInfo, ParseResult
from indexing.store import IndexStore


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _fill(store: IndexStore, n: int = 50) -> None:
    with store.transaction():
        for i in range(n):
            store.replace_file(FileInfo(f"f{i}.py", "python", 10, 1, ()), f"h{i}", ParseResult())


def test_a_marker_left_by_a_dead_process_means_unclean(tmp_path: Path) -> None:
    (tmp_path / f"{MARKER_PREFIX}{_dead_pid()}").write_text("")
    (tmp_path / f"{MARKER_PREFIX}{os.getppid()}").write_text("")  # alive: still open elsewhere
    marker = OpenMarker(tmp_path)
    assert marker.unclean() is True
    assert marker.unclean() is False  # the dead marker was removed; the live one stays
    assert (tmp_path / f"{MARKER_PREFIX}{os.getppid()}").exists()


def test_store_close_removes_its_marker(tmp_path: Path) -> None:
    store = IndexStore(tmp_path)
    assert (tmp_path / f"{MARKER_PREFIX}{os.getpid()}").exists()
    store.close()
    assert not any(n.startswith(MARKER_PREFIX) for n in os.listdir(tmp_path))


def test_unclean_close_runs_quick_check_and_rebuilds_damage(tmp_path: Path) -> None:
    store = IndexStore(tmp_path)
    _fill(store, 400)
    store.close()
    db = tmp_path / "index.sqlite3"
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    for start in range(page, len(data), page):  # every b-tree page header but the schema page's
        data[start:start + 64] = b"\xab" * 64
    db.write_bytes(bytes(data))
    (tmp_path / f"{MARKER_PREFIX}{_dead_pid()}").write_text("")
    reopened = IndexStore(tmp_path)
    try:
        assert [n for n in reopened.take_notices() if "was damaged" in n]
        assert reopened.counts()["files"] == 0 and reopened.check() == "ok"
        assert (tmp_path / "index.sqlite3.corrupt").exists()
    finally:
        reopened.close()


def _reopened_without(tmp_path: Path, table: str, model: str, vector: bytes) -> IndexStore:
    """A store of two files and one cached vector, opened again after `table` was dropped by hand (the
    notice of the rebuild checked)."""
    store = IndexStore(tmp_path)
    _fill(store, 2)
    store.put_embeddings(model, {"k": vector})
    store.close()
    db = sqlite3.connect(tmp_path / "index.sqlite3")
    db.execute(f"DROP TABLE {table}")
    db.commit()
    db.close()
    again = IndexStore(tmp_path)
    assert again.take_notices() == [f"the index at {tmp_path} lacks table(s) {table}; rebuilding it"]
    return again


def test_a_missing_table_rebuilds_the_records_and_keeps_embeddings(tmp_path: Path) -> None:
    again = _reopened_without(tmp_path, "definitions", "m", b"v")
    try:
        assert again.counts()["files"] == 0  # every file is parsed again by the next update
        assert again.get_embeddings("m", ["k"]) == {"k": b"v"}
    finally:
        again.close()


def test_a_lost_models_table_takes_the_cache_with_it(tmp_path: Path) -> None:
    """A cached vector names its model by a number only the `models` table resolves: without it the
    rows could be read as another model's (made first in a new table, it would get number 1)."""
    again = _reopened_without(tmp_path, "models", "static", b"static vector")
    try:
        again.put_embeddings("transformer", {"j": b"transformer vector"})  # (model number 1 again)
        assert again.get_embeddings("transformer", ["k", "j"]) == {"j": b"transformer vector"}
        assert again.counts()["embeddings"] == 1 and again.counts()["files"] == 0
    finally:
        again.close()


def test_stamp_changes_when_another_connection_commits(tmp_path: Path) -> None:
    one, two = IndexStore(tmp_path), IndexStore(tmp_path)
    try:
        before = one.stamp()
        two.set_meta("revision", "7")
        assert one.stamp() != before and one.stamp().endswith(":7")
    finally:
        one.close()
        two.close()


def test_corruption_errors_are_told_apart() -> None:
    assert is_corruption(sqlite3.DatabaseError("database disk image is malformed"))
    assert is_corruption(sqlite3.DatabaseError("file is not a database"))
    assert not is_corruption(sqlite3.OperationalError("database is locked"))
    assert not is_corruption(OSError("database disk image is malformed"))


HOLD = """
import sys, time
from indexing.locking import WriterLock
with WriterLock(sys.argv[1]).hold():
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def test_a_second_writer_waits_and_says_so_once(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path), "1.5"], stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONPATH": str(Path.cwd())})
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    said: list[str] = []
    lock = WriterLock(tmp_path, on_wait=said.append, notice_after=0.2)
    started = time.monotonic()
    with lock.hold():
        waited = time.monotonic() - started
    holder.wait()
    assert waited > 1.0  # we got it only once the other process let go
    assert len(said) == 1 and f"pid {holder.pid}" in said[0]
    with lock.hold(), lock.hold():  # re-entrant within a process
        pass


def test_a_writer_gives_up_after_its_timeout(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path), "5"], stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONPATH": str(Path.cwd())})
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with pytest.raises(LockTimeout, match="being written by another codeseek process"):
            with WriterLock(tmp_path, timeout=0.3).hold():
                pass
        assert time.monotonic() - started < 4
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize(("exc", "words"), [
    (OSError(errno.ENOSPC, "No space left on device"), "no space left"),
    (sqlite3.OperationalError("database or disk is full"), "no space left"),
    (sqlite3.OperationalError("disk I/O error"), "no space left"),
    (OSError(errno.EROFS, "Read-only file system"), "not writable"),
    (sqlite3.OperationalError("attempt to write a readonly database"), "not writable"),
    (OSError(errno.ENAMETOOLONG, "File name too long"), "too long"),
    (FileExistsError(errno.EEXIST, "File exists", "/i/tantivy"), "a file stands where the index needs"),
    (NotADirectoryError(errno.ENOTDIR, "Not a directory"), "a file stands where"),
])
def test_environment_errors_are_described_in_one_line(exc: BaseException, words: str) -> None:
    text = describe(exc, "/i")
    assert text is not None and words in text and "\n" not in text


def test_other_errors_are_not_described() -> None:
    assert describe(ValueError("bug"), "/i") is None
