"""retrievers.engine.lifecycle:
one state vocabulary; how one root's and several roots' states are reported."""

from __future__ import annotations

from typing import get_args

from retrievers.engine.lifecycle import (
    EMBEDDING,
    EMPTY,
    ENGINE_STATES,
    ERROR,
    INDEXING,
    PROGRESS_ORDER,
    READY,
    STARTING,
    STOPPED,
    TEXT_ONLY,
    WORKER_STATES,
    IndexState,
    least_advanced,
    reported,
)


def test_one_vocabulary() -> None:
    words = set(get_args(IndexState))
    assert words == {STARTING, INDEXING, EMBEDDING, TEXT_ONLY, READY, EMPTY, ERROR, STOPPED}
    assert set(ENGINE_STATES) | set(WORKER_STATES) == words and set(PROGRESS_ORDER) <= words


def test_worker_wins_until_ready_then_the_engine_says_what_it_has() -> None:
    for worker in (STARTING, INDEXING, EMBEDDING, ERROR, STOPPED):
        assert reported(worker, READY) == worker
    assert [reported(READY, s) for s in (READY, TEXT_ONLY, EMPTY, None)] == [READY, TEXT_ONLY, EMPTY, READY]


def test_several_roots_report_the_least_advanced() -> None:
    assert least_advanced([READY, TEXT_ONLY]) == TEXT_ONLY
    assert least_advanced([READY, EMBEDDING, INDEXING]) == INDEXING
    assert least_advanced([READY, ERROR, STARTING]) == ERROR
    assert least_advanced([]) == EMPTY
