"""indexing.switch_interval and indexing.gc_pause: the setting inside, the old one back after the
last overlapping block (indexing.held_setting)."""

from __future__ import annotations

import gc
import sys
import threading

from indexing.gc_pause import paused_collection
from indexing.switch_interval import short_switch_interval


def test_collection_pauses_nest_and_resume_only_if_it_ran() -> None:
    was = gc.isenabled()
    try:
        gc.enable()
        with paused_collection():
            assert not gc.isenabled()
            with paused_collection():
                assert not gc.isenabled()
            assert not gc.isenabled()  # the outer pause still holds
        assert gc.isenabled()
        gc.disable()
        with paused_collection():
            pass
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        (gc.enable if was else gc.disable)()


def test_nested_blocks_restore_the_interval_after_the_last() -> None:
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.004)
        old = sys.getswitchinterval()
        with short_switch_interval(0.001):
            assert sys.getswitchinterval() == 0.001
            with short_switch_interval(0.0005):  # an inner block does not change it again
                assert sys.getswitchinterval() == 0.001
            assert sys.getswitchinterval() == 0.001
        assert sys.getswitchinterval() == old
    finally:
        sys.setswitchinterval(before)


def test_a_shorter_interval_already_set_is_kept() -> None:
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.0002)
        short = sys.getswitchinterval()  # (kept in microseconds: read it back)
        with short_switch_interval(0.001):
            assert sys.getswitchinterval() == short
        assert sys.getswitchinterval() == short
    finally:
        sys.setswitchinterval(before)


def test_overlapping_threads_restore_once_both_end() -> None:
    before = sys.getswitchinterval()
    entered, release = threading.Event(), threading.Event()

    def other() -> None:
        with short_switch_interval(0.001):
            entered.set()
            release.wait(5)

    try:
        sys.setswitchinterval(0.003)
        old = sys.getswitchinterval()
        thread = threading.Thread(target=other)
        thread.start()
        entered.wait(5)
        with short_switch_interval(0.001):
            pass
        assert sys.getswitchinterval() == 0.001  # the other thread's block still runs
        release.set()
        thread.join(5)
        assert sys.getswitchinterval() == old
    finally:
        sys.setswitchinterval(before)
