"""retrievers.engine.quiet_gate: a long background step held back until searches pause, for at most a
cap, and given up when new work is asked for; and the keeper's graph prime behind it, on a real engine
restarted on its saved index (tests/workspace/engine_sample)."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

from indexing.workspace import WorkspaceOptions
from retrievers.engine.keeper import IndexKeeper, KeeperOptions
from retrievers.engine.options import EngineOptions
from retrievers.engine.quiet_gate import wait_for_quiet
from retrievers.engine.request import SearchRequest

SAMPLE = Path(__file__).resolve().parents[1] / "workspace" / "engine_sample"


def test_nothing_searched_yet_passes_at_once() -> None:
    started = time.monotonic()
    assert wait_for_quiet(lambda: 0.0, threading.Condition(), lambda: False, quiet_s=5.0, cap_s=5.0)
    assert time.monotonic() - started < 1.0


def test_it_waits_until_the_last_search_is_quiet_s_back() -> None:
    last = time.monotonic()
    started = time.monotonic()
    assert wait_for_quiet(lambda: last, threading.Condition(), lambda: False, quiet_s=0.3, cap_s=10.0)
    assert time.monotonic() - last >= 0.3
    assert time.monotonic() - started < 5.0


def test_searches_without_pause_wait_no_longer_than_the_cap() -> None:
    started = time.monotonic()
    assert wait_for_quiet(time.monotonic, threading.Condition(), lambda: False, quiet_s=60.0, cap_s=0.3)
    assert 0.3 <= time.monotonic() - started < 5.0


def test_work_asked_for_while_waiting_gives_the_step_up() -> None:
    cond = threading.Condition()
    asked: list[bool] = []

    def ask() -> None:
        time.sleep(0.2)
        with cond:
            asked.append(True)
            cond.notify_all()
    threading.Thread(target=ask).start()
    started = time.monotonic()
    assert not wait_for_quiet(time.monotonic, cond, lambda: bool(asked), quiet_s=60.0, cap_s=60.0)
    assert time.monotonic() - started < 5.0


def _keeper(root: Path, index: Path) -> IndexKeeper:
    options = EngineOptions(embeddings=False, transformer=None, persist_once=True, incremental_graph=True)
    return IndexKeeper.open(root, WorkspaceOptions(index_dir=index), options,
                            KeeperOptions(prime_quiet_s=0.5, prime_wait_s=60.0))


def test_a_restarted_server_primes_its_graph_only_after_its_searches_pause(tmp_path: Path) -> None:
    """The second server opens the saved index (the graph loaded, not built): while a thread searches
    every 50 ms the prime waits; once the searches stop it runs within the quiet time (the cap is far
    off). The stamp is set before the start too: a search asked as phase 1 ends, before the thread's."""
    root, index = tmp_path / "ws", tmp_path / "index"
    shutil.copytree(SAMPLE, root)
    first = _keeper(root, index)
    first.start()
    try:
        assert first.wait_idle(60) and not first.engine.graphs.loaded  # built here: nothing to prime
    finally:
        first.stop()
    keeper = _keeper(root, index)
    stop = threading.Event()

    def search() -> None:
        keeper.indexed.wait(60)
        while not stop.wait(0.05):
            keeper.engine.search(SearchRequest("where are totals computed"))
    searcher = threading.Thread(target=search)
    try:
        keeper.engine.searched_at = time.monotonic()
        searcher.start()
        keeper.start()
        assert keeper.indexed.wait(60)
        graphs = keeper.engine.graphs
        assert graphs.loaded and not keeper.wait_idle(1.5)  # the searches hold the prime back
        assert graphs.primable
        stopped = time.monotonic()
        stop.set()
        searcher.join()
        assert keeper.engine.searched_at > stopped - 1.0  # (its searches ran)
        assert keeper.wait_idle(30) and graphs._inputs is not None and not graphs.primable
        assert time.monotonic() - stopped < 20
    finally:
        stop.set()
        keeper.stop()


def test_a_stale_refresh_is_asked_past_a_prime_waiting_at_the_gate(tmp_path: Path) -> None:
    """An MCP server asks for a refresh when the last job is old and none runs: a worker that only waits
    at the gate counts as none, so the refresh runs (and the prime is given up for its job)."""
    root, index = tmp_path / "ws", tmp_path / "index"
    shutil.copytree(SAMPLE, root)
    first = _keeper(root, index)
    first.start()
    try:
        assert first.wait_idle(60)
    finally:
        first.stop()
    keeper = _keeper(root, index)
    try:
        keeper.engine.searched_at = time.monotonic() + 3600.0  # "a search just now" for the next hour
        keeper.start()
        assert keeper.indexed.wait(60) and not keeper.wait_idle(1.0)  # waiting at the gate
        assert keeper.refresh_if_stale(0.0, 30) and keeper.jobs == 2
    finally:
        keeper.stop()
