"""lsp_server.process_tuning: what a burst of work leaves behind is collected, then frozen."""

from __future__ import annotations

import gc
import weakref

from lsp_server.process_tuning import FULL_EVERY, TRIM_GROWTH, release_memory, resident_bytes, trim_heap


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_release_memory_freezes_survivors_and_a_full_call_thaws_them() -> None:
    try:
        cycle = _Cycle()
        alive = weakref.ref(cycle)
        release_memory()
        assert gc.get_freeze_count() > 0  # the survivors left the generations a collection walks
        del cycle  # cyclic garbage among frozen objects ...
        gc.collect()
        assert alive() is not None  # ... is out of a plain collection's reach ...
        release_memory(full=True)
        assert alive() is None  # ... and collected by a full call, which thaws first
    finally:
        gc.unfreeze()


def test_most_calls_only_freeze_and_one_in_sixteen_collects_everything() -> None:
    try:
        cycle = _Cycle()
        alive = weakref.ref(cycle)
        del cycle  # cyclic garbage ...
        release_memory(full=False)
        assert alive() is not None and gc.get_freeze_count() > 0  # ... frozen, not collected ...
        calls = 0
        while alive() is not None and calls < FULL_EVERY:
            release_memory()
            calls += 1
        assert alive() is None  # ... until the next full call, at most FULL_EVERY calls away
    finally:
        gc.unfreeze()


def test_the_heap_is_trimmed_when_the_process_grew_since_the_last_trim() -> None:
    rss = resident_bytes()
    assert rss is not None and rss > 0
    assert trim_heap(force=True)  # (glibc here)
    assert not trim_heap()  # nothing grew since: a trim would walk the heap for nothing
    grown = bytearray(TRIM_GROWTH + (8 << 20))  # resident once written
    grown[::4096] = b"x" * len(grown[::4096])
    try:
        assert trim_heap()
    finally:
        del grown
