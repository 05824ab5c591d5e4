"""retrievers.engine.keeper: one root's index kept up to date for every front end. A copy of
tests/workspace/engine_sample with a real engine (no embeddings unless said): the one-call refresh, the
worker's steps as typed events, requests merged while a job runs, stopping from a listener, a failed
job, and a refresh asked for when the last one is old."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest

from indexing.workspace import WorkspaceOptions
from retrievers.engine.keeper import IndexKeeper, KeeperOptions
from retrievers.engine.keeper_events import (
    KeeperEvent,
    KeeperStopped,
    Notice,
    StepAdvanced,
    StepBegun,
    StepEnded,
    step_of,
)
from retrievers.engine.lifecycle import ERROR, READY, STARTING, STOPPED
from retrievers.engine.options import EngineOptions

SAMPLE = Path(__file__).resolve().parents[1] / "workspace" / "engine_sample"


def _keeper(tmp_path: Path, events: list[KeeperEvent] | None = None, embeddings: bool = False,
            **options: object) -> IndexKeeper:
    root = tmp_path / "ws"
    if not root.exists():
        shutil.copytree(SAMPLE, root)
    listener = events.append if events is not None else None
    return IndexKeeper.open(root, WorkspaceOptions(index_dir=tmp_path / "index"),
                            EngineOptions(embeddings=embeddings, transformer=None),
                            KeeperOptions(**options), listener)  # type: ignore[arg-type]


def test_the_one_call_refresh_reports_the_engines_phases(tmp_path: Path) -> None:
    events: list[KeeperEvent] = []
    keeper = _keeper(tmp_path, events)
    try:
        result = keeper.refresh()
        assert result.chunks > 0 and result.reconciled and result.changed
        assert all(isinstance(e, StepAdvanced) and e.step == "indexing" for e in events)
        assert {e.phase for e in events if isinstance(e, StepAdvanced)} == {"indexing", "graph"}
        assert keeper.state == STARTING and keeper.jobs == 0  # no worker ran
    finally:
        assert keeper.stop()
    assert keeper.state == STOPPED


def test_a_job_reports_each_step_and_what_it_did(tmp_path: Path) -> None:
    events: list[KeeperEvent] = []
    keeper = _keeper(tmp_path, events)
    keeper.start()
    try:
        assert keeper.indexed.wait(60) and keeper.wait_idle(60)
        assert keeper.state == READY and keeper.error is None and keeper.jobs == 1
        assert isinstance(events[0], StepBegun) and (events[0].step, events[0].paths) == ("indexing", None)
        ended = [e for e in events if isinstance(e, StepEnded)]
        assert [(e.step, e.count) for e in ended] == [("indexing", keeper.engine.index_info()["chunks"])]
        assert not [e for e in events if isinstance(e, StepBegun) and e.step != "indexing"]  # no vectors
        report = keeper.last
        assert report is not None and report.paths is None and report.parsed == 9 and report.embedded is None
        assert keeper.attempted.is_set() and keeper.phase1_runs == 1 and not keeper.model_loaded()
    finally:
        keeper.stop()


def test_requests_made_while_a_job_runs_are_merged_into_the_next(tmp_path: Path) -> None:
    gate, started = threading.Event(), threading.Event()

    def hold(event: KeeperEvent) -> None:
        if isinstance(event, StepBegun) and event.paths is None:
            started.set()
            gate.wait(30)

    keeper = _keeper(tmp_path)
    keeper.listener = hold
    keeper.start()
    try:
        assert started.wait(30)
        for name in ("shop/cart.py", "shop/pricing.py", "shop/cart.py"):
            keeper.request_paths([name])
        assert not keeper.idle()
        gate.set()
        assert keeper.wait_idle(60)
        assert keeper.jobs == 2  # the first full scan, then one job for the three requests
        assert keeper.last is not None and keeper.last.paths == 2 and keeper.last.parsed == 0
    finally:
        keeper.stop()


def test_a_listener_that_stops_the_job_ends_the_worker_quietly(tmp_path: Path) -> None:
    def stop(event: KeeperEvent) -> None:
        if isinstance(event, StepAdvanced):
            raise KeeperStopped()

    keeper = _keeper(tmp_path)
    keeper.listener = stop
    keeper.start()
    try:
        assert keeper.wait_idle(60)  # the worker ended: nothing runs, nothing waits
        assert keeper.error is None and not keeper.indexed.is_set()
    finally:
        keeper.stop()


def test_a_failed_job_says_what_failed_and_wakes_those_waiting(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[KeeperEvent] = []
    keeper = _keeper(tmp_path, events)

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("no index today")

    monkeypatch.setattr(keeper.engine, "refresh", broken)
    keeper.start()
    try:
        assert keeper.attempted.wait(30) and keeper.wait_idle(30)
        assert keeper.state == ERROR and keeper.error == "RuntimeError: no index today"
        assert not keeper.indexed.is_set() and keeper.last is None
        assert Notice(f"indexing {keeper.root.name} failed: RuntimeError: no index today") in events
    finally:
        keeper.stop()


def test_a_refresh_is_asked_for_only_when_the_last_is_old(tmp_path: Path) -> None:
    keeper = _keeper(tmp_path)
    assert not keeper.refresh_if_stale(0.0, 0.1)  # never before the first phase 1
    keeper.start()
    try:
        assert keeper.attempted.wait(60) and keeper.wait_idle(60)
        assert not keeper.refresh_if_stale(3600.0, 0.1)  # the last job ended just now
        time.sleep(0.05)
        assert keeper.refresh_if_stale(0.01, 30.0)  # waits for that refresh's phase 1
        assert keeper.phase1_runs == 2
        assert keeper.wait_idle(60) and keeper.jobs == 2
    finally:
        keeper.stop()


def test_the_engines_phase_words_name_a_step() -> None:
    assert [step_of(p) for p in ("indexing", "graph", "embedding", "distilling", "transformer")] == [
        "indexing", "indexing", "embedding", "embedding", "transformer"]


@pytest.mark.slow
def test_phase_two_embeds_then_loads_the_model(tmp_path: Path) -> None:
    events: list[KeeperEvent] = []
    after: list[str] = []
    keeper = _keeper(tmp_path, events, embeddings=True, after_work=lambda: after.append("tidy"))
    keeper.start()
    try:
        assert keeper.indexed.wait(120) and keeper.wait_idle(300)
        chunks = keeper.engine.index_info()["chunks"]
        steps = [(type(e).__name__, e.step) for e in events if isinstance(e, (StepBegun, StepEnded))]
        assert steps == [("StepBegun", "indexing"), ("StepEnded", "indexing"),
                         ("StepBegun", "embedding"), ("StepEnded", "embedding")]
        assert [e.count for e in events if isinstance(e, StepEnded)] == [chunks, chunks]
        report = keeper.last
        assert report is not None and report.embedded == chunks and report.phase2_s is not None
        assert keeper.model_loaded() and keeper.state == READY and after == ["tidy"]
    finally:
        keeper.stop()


def test_a_server_restarted_on_its_saved_index_primes_the_graph_for_the_first_edit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server's engine (persist once, incremental graph) on an index an earlier one saved loads the
    call graph; its job then primes the inputs of an incremental build, so its first edit is one."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the signing key lives there
    root = tmp_path / "ws"
    shutil.copytree(SAMPLE, root)
    options = EngineOptions(embeddings=False, transformer=None, persist_once=True, incremental_graph=True)
    for run in range(2):
        keeper = IndexKeeper.open(root, WorkspaceOptions(index_dir=tmp_path / "index"), options)
        keeper.start()
        try:
            assert keeper.indexed.wait(60) and keeper.wait_idle(60)
            graphs = keeper.engine.graphs
            assert graphs.loaded == (run == 1) and graphs._inputs is not None
            if run == 1:
                target = next(p for p in sorted(root.rglob("*.py")))
                target.write_text(target.read_text() + "\n\ndef primed_probe():\n    return 1\n")
                keeper.request_paths([target.relative_to(root).as_posix()])
                assert keeper.wait_idle(60) and keeper.jobs == 2
                assert graphs._inputs is not None and graphs._inputs.incremental_builds == 1
        finally:
            keeper.stop()
