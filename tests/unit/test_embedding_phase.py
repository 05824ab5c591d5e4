"""retrievers.engine.embedding_phase:
a refresh that embeds does it on a thread beside the call graph and the text
index, with the same index as embedding afterwards; a failing phase 1 stops that thread; the wait for
it does other work meanwhile. The real
engine_sample workspace, store, grammars and the default static model."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import pytest

from retrievers.engine.embedding_phase import STEP_ROOM_S, EmbeddingPhase
from retrievers.engine.options import RefreshResult
from retrievers.engine.search_engine import EngineOptions, SearchRequest
from tests.unit.engine_sample import copy_sample, opened


@pytest.mark.slow
def test_embedding_beside_phase_one_gives_the_same_index(tmp_path: Path) -> None:
    answers: dict[bool, list[tuple[str, int]]] = {}
    for alongside in (True, False):
        root = copy_sample(tmp_path, f"ws-{alongside}")
        options = EngineOptions(transformer=None, embed_alongside=alongside)
        with opened(root, tmp_path / f"idx-{alongside}", options) as (_, engine):
            seen: list[tuple[str, str]] = []

            def note(phase: str, done: int, total: int, seen: list[tuple[str, str]] = seen) -> None:
                seen.append((phase, threading.current_thread().name))

            result = engine.refresh(progress=note)
            assert result.embedded == result.chunks > 0 and result.pending == 0
            assert result.state == "ready" and "embed" in result.seconds
            embedding_threads = {name for phase, name in seen if phase == "embedding"}
            assert embedding_threads == ({"codeseek-embed"} if alongside else {"MainThread"})
            assert {name for phase, name in seen if phase == "graph"} == {"MainThread"}
            found = engine.search(SearchRequest("apply a discount to a price", limit=5)).results
            answers[alongside] = [(r.path, r.start_line) for r in found]
    assert answers[True] == answers[False] and answers[True]


@pytest.mark.slow
def test_a_failing_phase_one_stops_the_embedding(tmp_path: Path) -> None:
    with opened(copy_sample(tmp_path), tmp_path / "idx", EngineOptions(transformer=None)) as (_, engine):
        def damaged() -> NoReturn:  # what a damaged index raises mid-refresh (the caller rebuilds it)
            raise sqlite3.DatabaseError("database disk image is malformed")

        engine.graphs.build = damaged  # type: ignore[method-assign]
        with pytest.raises(sqlite3.DatabaseError):
            engine.refresh()
        assert not [t for t in threading.enumerate() if t.name == "codeseek-embed"]
        assert engine.index_info()["state"] != "embedding"


class _WaitingSemantic:
    """A semantic tier whose one pending chunk is embedded once `go` is set (the wait is the subject)."""

    embedder = None

    def __init__(self) -> None:
        self.go = threading.Event()

    def pending(self) -> int:
        return 0 if self.go.is_set() else 1

    def embed_pending(self, report: object, should_stop: object) -> int:
        assert self.go.wait(10)
        return 1


def _started() -> tuple[_WaitingSemantic, RefreshResult, EmbeddingPhase]:
    """A phase embedding on its thread until its semantic tier's `go` is set."""
    semantic = _WaitingSemantic()
    out = RefreshResult(update=None)
    phase = EmbeddingPhase(semantic, out, None)  # type: ignore[arg-type]
    phase.start()
    return semantic, out, phase


def _embedding_thread_alive() -> bool:
    return any(t.name == "codeseek-embed" and t.is_alive() for t in threading.enumerate())


def test_finish_does_other_work_while_the_thread_embeds_and_stops_when_it_is_done() -> None:
    semantic, out, phase = _started()
    steps: list[int] = []

    def step() -> bool:
        steps.append(len(steps))
        if len(steps) == 3:
            semantic.go.set()  # the embedding ends after the third step ...
            deadline = time.monotonic() + 10
            while _embedding_thread_alive() and time.monotonic() < deadline:
                time.sleep(0.01)
        return True  # (more work would be there)
    phase.finish(step)
    assert len(steps) == 3 and out.embedded == 1  # ... and no step is taken after it


def test_the_wait_writes_the_saves_that_run_on_its_own_thread_and_leaves_the_rest_queued() -> None:
    from indexing.persist import WriteBehind, uses_other_cores

    semantic, out, phase = _started()
    queue, ran = WriteBehind(), []

    @uses_other_cores
    def start_indexing_on_other_threads() -> None:  # (the text index's file documents)
        ran.append("other cores")
    def save() -> None:
        ran.append("save")

    def last_save() -> None:  # (the embedding ends once it is written)
        ran.append("last save")
        semantic.go.set()
    queue.writes += [start_indexing_on_other_threads, save, last_save]
    phase.finish(queue.flush_alone)
    assert ran == ["save", "last save"] and out.embedded == 1
    assert queue.writes == [start_indexing_on_other_threads]  # left for after the answer
    assert queue.flush() == 1 and ran[-1] == "other cores"


def test_finish_waits_on_once_the_other_work_is_done() -> None:
    semantic, out, phase = _started()
    steps: list[int] = []

    def step() -> bool:
        steps.append(1)
        return False  # nothing (left) to do
    threading.Timer(0.2, semantic.go.set).start()
    phase.finish(step)
    assert steps == [1] and out.embedded == 1


def test_other_work_that_fails_still_waits_for_the_thread() -> None:
    semantic, out, phase = _started()

    def step() -> bool:
        threading.Timer(0.2, semantic.go.set).start()
        raise OSError("no space left on device")
    with pytest.raises(OSError):
        phase.finish(step)
    assert not _embedding_thread_alive() and out.embedded == 1


class _NearlyDoneSemantic(_WaitingSemantic):
    """Reports 99 of 100 chunks embedded at once, then waits for `go`: an embedding about to end."""

    def embed_pending(self, report: Callable[[int, int], None], should_stop: object) -> int:
        report(99, 100)
        self.reported.set()
        assert self.go.wait(10)
        return 1

    def __init__(self) -> None:
        super().__init__()
        self.reported = threading.Event()


def test_no_step_starts_when_the_embedding_is_about_to_end() -> None:
    semantic = _NearlyDoneSemantic()
    out = RefreshResult(update=None)
    phase = EmbeddingPhase(semantic, out, None)  # type: ignore[arg-type]
    phase.start()
    assert semantic.reported.wait(10)
    assert phase.remaining_s() < STEP_ROOM_S  # (one chunk at the rate of 99 in a moment)
    steps: list[int] = []

    def step() -> bool:
        steps.append(1)
        return True
    threading.Timer(0.2, semantic.go.set).start()
    phase.finish(step)
    assert steps == [] and out.embedded == 1


def test_work_beside_is_offered_the_time_left_once_the_saves_are_written() -> None:
    """After the saves of its own thread, the wait offers the seconds the embedding should still run
    to work that starts threads of its own (the text index's file documents), once."""
    semantic, out, phase = _started()
    ran: list[object] = []

    def save() -> bool:
        ran.append("save")
        return len(ran) < 2  # (two saves, then none left)

    def beside(seconds: float) -> bool:
        ran.append(seconds)
        semantic.go.set()
        return True
    phase.finish(save, beside)
    assert ran[:2] == ["save", "save"] and len(ran) == 3 and isinstance(ran[2], float)
    assert out.embedded == 1
