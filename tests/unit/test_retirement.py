"""retrievers.engine.retirement: a replaced view is taken apart only where nothing else refers to it, and
a view a search still reads stays whole until the search lets it go."""

from __future__ import annotations

import gc
import time
import weakref
from pathlib import Path
from typing import Any

from retrievers.engine.retirement import Retirement, dismantle
from tests.unit.engine_sample import copy_sample, opened


class _Node:
    table: Any

    def __init__(self, **attrs: object) -> None:
        self.__dict__.update(attrs)


def _gone_soon(ref: weakref.ref[Any], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while ref() is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    return ref() is None


def test_dismantle_frees_what_it_alone_holds_and_leaves_shared_parts_whole() -> None:
    shared = {"kept": [1, 2, 3]}
    inner = _Node(name="inner")
    view = (_Node(table={k: {"edge": [k]} for k in range(3000)}, shared=shared, inner=inner), [inner])
    probe = weakref.ref(view[0])
    box = [view]
    del view
    dismantle(box)
    assert probe() is None and box == []
    assert shared == {"kept": [1, 2, 3]}  # (referred to from here: let go of, not emptied)
    assert inner.__dict__ == {"name": "inner"}


def test_a_held_view_waits_until_its_reader_lets_go() -> None:
    """Held by a reader, a view stays whole and held (not freed whole by the reader's thread when it
    lets go); the next sweep takes it apart."""
    retirement = Retirement(retry_seconds=3600.0)
    table = {k: [k] for k in range(100)}
    reader = _Node(table=table)
    probe = weakref.ref(reader)
    retirement.hold(reader)
    retirement.sweep_now()  # (the test's own `reader` still reads it)
    assert reader.table == {k: [k] for k in range(100)}
    del reader, table
    assert probe() is not None
    retirement.sweep_now()
    assert probe() is None
    retirement.close()


def test_the_retry_timer_sweeps_a_view_let_go_of_later() -> None:
    retirement = Retirement(retry_seconds=0.05)
    reader = _Node(table={1: [1]})
    probe = weakref.ref(reader)
    retirement.hold(reader)
    retirement.sweep()
    del reader
    assert _gone_soon(probe)
    retirement.close()


def test_the_teardown_waits_while_a_search_reads() -> None:
    """Steps of the teardown pause while `reading`: the last entry of a big table outlives the block's
    start, and goes once the block ends."""
    retirement = Retirement()
    last = _Node()
    probe = weakref.ref(last)
    table: dict[int, Any] = {0: last}
    table.update((k, [k]) for k in range(1, 10_000))
    retirement.hold(_Node(table=table))
    del table, last
    with retirement.reading():
        retirement.sweep()
        time.sleep(0.2)
        assert probe() is not None  # (popped last: the teardown waits some 8,000 entries before it)
    assert _gone_soon(probe)
    retirement.close()


def test_a_refresh_keeps_the_view_a_search_holds_whole(tmp_path: Path) -> None:
    """The engine retires the old view at a refresh; one still held (a search running on it) keeps every
    graph edge and chunk until it is let go, then it is freed."""
    root = copy_sample(tmp_path)
    with opened(root, tmp_path / "index") as (_, engine):
        engine.refresh()
        old = engine._view
        assert old is not None and old[0].graph is not None
        edges = {u: dict(targets) for u, targets in old[0].graph.succ.items()}
        chunks = dict(old[0].chunks)
        target = next(p for p in sorted(root.rglob("*.py")) if "def " in p.read_text())
        target.write_text(target.read_text() + "\n\ndef retirement_probe():\n    return 1\n")
        engine.refresh(paths=[str(target.relative_to(root))])
        assert engine._view is not old
        time.sleep(0.5)  # (a retry or two of the retirement's timer)
        assert {u: dict(t) for u, t in old[0].graph.succ.items()} == edges and dict(old[0].chunks) == chunks
        probe = weakref.ref(old[0])
        del old
        gc.collect()
        assert _gone_soon(probe)
