"""lsp_server.process_tuning: what a burst of work leaves behind is collected, then frozen; a periodic
full collection waits for a pause in the requests."""

from __future__ import annotations

import gc
import time
import weakref
from pathlib import Path
from typing import Any

import pytest

from lsp_server import process_tuning
from lsp_server.process_tuning import (
    FULL_EVERY,
    TRIM_GROWTH,
    reap_worker_processes,
    release_memory,
    resident_bytes,
    serving,
    trim_heap,
)


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


def test_a_due_full_collection_waits_for_a_pause_in_the_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process_tuning, "QUIET_S", 0.3)
    monkeypatch.setattr(process_tuning, "QUIET_POLL_S", 0.02)
    try:
        release_memory()  # (the first call of a process collects at once: make sure it was made)
        cycle = _Cycle()
        alive = weakref.ref(cycle)
        del cycle  # cyclic garbage ...
        release_memory(full=False)
        assert alive() is not None and gc.get_freeze_count() > 0  # ... frozen, not collected ...
        with serving():  # ... and while a request is answered ...
            for _ in range(FULL_EVERY):
                release_memory()
            time.sleep(0.5)
            assert alive() is not None  # ... a due full collection waits ...
        deadline = time.monotonic() + 10
        while alive() is not None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert alive() is None  # ... until no request came for QUIET_S
        assert process_tuning.quiet_for() > 0
        while process_tuning._Gc.waiter is not None and time.monotonic() < deadline:
            time.sleep(0.02)  # (its heap trim, after the collection, is done too: no other test sees it)
        assert process_tuning._Gc.waiter is None
    finally:
        gc.unfreeze()


def test_libc_is_loaded_once() -> None:
    # each CDLL object sat in a reference cycle: one per call was garbage only a full collection freed
    assert process_tuning._libc() is process_tuning._libc()


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


def test_a_commands_refresh_stops_the_pools_fork_server_before_the_question(tmp_path: Path) -> None:
    """`codeseek search` refreshes through `lsp_server.cli.foreground.refresh`: the parse and embedding
    pools are done by then, so their fork server (~33 MiB) is stopped before the question loads its
    model, not at exit; a later pool starts a new one."""
    import multiprocessing
    from multiprocessing import forkserver

    from lsp_server.cli.foreground import refresh
    from tests.unit.engine_sample import copy_sample, opened

    multiprocessing.get_context("forkserver")
    forkserver.ensure_running()  # as the parse pool of a large tree starts it
    server: Any = forkserver._forkserver  # (its pid: a private attribute, as reap_worker_processes reads it)
    assert server._forkserver_pid is not None
    with opened(copy_sample(tmp_path), tmp_path / "index") as (_, engine):
        assert refresh(engine, show_progress=False).update is not None
        assert server._forkserver_pid is None
    forkserver.ensure_running()
    assert server._forkserver_pid is not None
    reap_worker_processes()
