"""Signed pickles beside the index (indexing/persist.py): a round trip, and a file that was altered,
written under another key or by another user's secret is ignored; write-behind queues the writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexing.persist import MAGIC, TAG_BYTES, SignedCache, WriteBehind


@pytest.fixture(autouse=True)
def _own_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the signing key lives there


def test_round_trip_and_key(tmp_path: Path) -> None:
    cache = SignedCache(tmp_path / "index")
    value = {"graph": list(range(1000)), "name": "callgraph"}
    assert cache.save("callgraph", "rev-1", value)
    assert cache.holds("callgraph", "rev-1") and not cache.holds("callgraph", "rev-2")
    assert cache.load("callgraph", "rev-1") == value
    assert cache.load("callgraph", "rev-2") is None  # another revision: rebuilt by the caller
    assert cache.load("structural", "rev-1") is None  # never saved


def test_an_altered_or_foreign_file_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = SignedCache(tmp_path / "index")
    cache.save("callgraph", "rev-1", [1, 2, 3])
    path = tmp_path / "index" / "derived" / "callgraph.pickle"
    data = path.read_bytes()
    head = MAGIC + b"rev-1\n"
    assert data.startswith(head) and len(data) > len(head) + TAG_BYTES
    path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # one bit of the body flipped
    assert cache.load("callgraph", "rev-1") is None
    path.write_bytes(data)
    assert cache.load("callgraph", "rev-1") == [1, 2, 3]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "other-user"))  # another user's secret
    assert cache.load("callgraph", "rev-1") is None


def test_write_behind_writes_only_when_flushed(tmp_path: Path) -> None:
    queue = WriteBehind()
    later = SignedCache(tmp_path / "index", later=queue.writes)
    assert later.save("structural", "rev-1", {"a": 1}) and later.save("filecards", "rev-1", ("cards",))
    now = SignedCache(tmp_path / "index")
    assert now.load("structural", "rev-1") is None and len(queue.writes) == 2
    assert queue.flush() == 2 and queue.flush() == 0
    assert now.load("structural", "rev-1") == {"a": 1} and now.load("filecards", "rev-1") == ("cards",)


def test_an_object_that_cannot_be_pickled_is_not_saved(tmp_path: Path) -> None:
    cache = SignedCache(tmp_path / "index")
    assert not cache.save("callgraph", "rev-1", lambda: None)
    assert cache.load("callgraph", "rev-1") is None
