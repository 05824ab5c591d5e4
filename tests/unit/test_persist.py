"""Signed pickles beside the index (indexing/persist.py): a round trip, and a file that was altered,
written under another key or by another user's secret is ignored; write-behind queues the writes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from indexing.persist import MAGIC, TAG_BYTES, SignedCache, WriteBehind, holds_memory, uses_other_cores


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


class _Named:
    def __init__(self, key: int) -> None:
        self.key = key


class _Other:
    def __init__(self, value: object) -> None:
        self.value = value


def test_objects_named_by_refs_are_saved_as_names_and_shared_on_load(tmp_path: Path) -> None:
    cache = SignedCache(tmp_path / "index")
    held = {k: _Named(k) for k in range(3)}
    value = {"edges": [(held[0], held[1], list(range(500)), "site")] * 4, "other": _Other(held[2]),
             "counts": {str(n): n for n in range(500)}}
    asked: list[object] = []

    def name_of(obj: object) -> int | None:
        asked.append(obj)
        return obj.key if isinstance(obj, _Named) else None
    assert cache.save("callgraph", "rev-1", value, refs=name_of)
    # asked about objects of other than the built-in types (and classes), once each: never about
    # the ints, strings, lists and tuples that make up most of a call graph
    assert not [obj for obj in asked if type(obj) in (int, str, list, tuple, dict)]
    assert [sum(obj is named for obj in asked) for named in held.values()] == [1, 1, 1]
    loaded = cache.load("callgraph", "rev-1", refs=held.__getitem__)
    assert loaded["edges"][0][0] is held[0] and loaded["edges"][3][1] is held[1]
    assert loaded["other"].value is held[2] and loaded["counts"] == value["counts"]
    assert cache.load("callgraph", "rev-1") is None  # names without `refs` to read them: rebuilt


def test_a_name_refs_cannot_read_makes_the_load_fail_cleanly(tmp_path: Path) -> None:
    cache = SignedCache(tmp_path / "index")
    cache.save("callgraph", "rev-1", [_Named(7)],
               refs=lambda obj: obj.key if isinstance(obj, _Named) else None)

    def unknown(key: int) -> object:
        raise KeyError(key)
    assert cache.load("callgraph", "rev-1", refs=unknown) is None


def test_write_behind_writes_one_at_a_time_oldest_first(tmp_path: Path) -> None:
    queue = WriteBehind()
    later = SignedCache(tmp_path / "index", later=queue.writes)
    later.save("structural", "rev-1", 1)
    later.save("filecards", "rev-1", 2)
    now = SignedCache(tmp_path / "index")
    assert queue.flush_one() and now.load("structural", "rev-1") == 1
    assert now.load("filecards", "rev-1") is None
    assert queue.flush_one() and now.load("filecards", "rev-1") == 2
    assert not queue.flush_one()  # none left


@pytest.mark.parametrize("mark", [uses_other_cores, holds_memory])
def test_flush_alone_leaves_marked_writes_for_flush(tmp_path: Path, mark: Callable[[Any], Any]) -> None:
    """Writes whose work runs on threads of their own or that make large arrays wait for `flush`."""
    queue = WriteBehind()
    ran: list[str] = []

    @mark
    def start_indexing() -> None:
        ran.append("indexing")
    queue.writes.append(start_indexing)
    SignedCache(tmp_path / "index", later=queue.writes).save("structural", "rev-1", 1)
    assert queue.flush_alone() and ran == []  # the save behind it ran first
    assert SignedCache(tmp_path / "index").load("structural", "rev-1") == 1
    assert not queue.flush_alone() and queue.writes == [start_indexing]
    assert queue.flush() == 1 and ran == ["indexing"]
