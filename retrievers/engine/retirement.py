"""Letting a replaced view go without stalling the searches that run meanwhile.

A refresh publishes a new snapshot; the old one, with its call graph (on the Django sdist ~1.2M
objects: every node's adjacency dicts, edge data, caches), dies at once when nothing else holds it.
Freeing it is one chain of C deallocations that holds the GIL for 45-110 ms, and every search asked
meanwhile waits that long. `Retirement` takes the old view instead, and a thread of its own takes it
apart in small steps (`dismantle`, ~1 ms each) while no search runs (`reading`): a search that starts
meanwhile waits for at most one step.

Taking apart in a plain Python loop beside a running search would not do: a search releases the GIL
in every larger numpy call, and each time the loop would take it for a whole switch interval (a
search during the teardown took 70-190 ms). So the steps pause while a search reads, for at most
`MAX_PAUSE` seconds at a time (under searches without end, the teardown still moves on).

Only what nothing else refers to is taken apart: each container's reference count is checked when
it is reached (an object shared with the new view, or still read by a search, is merely let go of). A
view a search still holds when it is retired waits, and is tried again every `RETRY_SECONDS`.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["Retirement", "dismantle"]

RETRY_SECONDS = 0.2  # how soon a view still in use is tried again
MAX_TRIES = 50  # then it is simply let go of (something keeps it: its owner frees it)
MAX_PAUSE = 2.0  # seconds a step waits for searches to finish before it goes ahead anyway
_DEPTH = 16  # levels of containers taken apart at most (below, each entry is freed whole)
_SMALL = 16  # a dict, list or tuple of at most this many entries is freed whole
_STEP = 2000  # entries removed between two pauses (about 1 ms)
_BATCH = 256  # list items removed at a time


def _exclusive_count() -> int:
    """What `sys.getrefcount` reports for an object held only by the local it was popped into (the
    count differs between interpreter versions, so it is measured, in the shape `dismantle` uses)."""
    stack: list[Any] = [[]]
    item = stack.pop()
    return sys.getrefcount(item)


_ALONE = _exclusive_count()


def dismantle(stack: list[Any], pause: Callable[[], None] = lambda: None) -> None:
    """Free what `stack` holds (the caller keeps no other reference to it), container by container,
    calling `pause` every `_STEP` entries: a dict, list, tuple or object that nothing else refers to is
    emptied entry by entry, its big entries (`_is_part`) taken apart in turn, the others freed whole
    as they leave it; a container someone else refers to is only let go of."""
    work: list[tuple[Any, int]] = [(item, 0) for item in stack]
    stack.clear()
    budget = _STEP
    while work:
        item, depth = work.pop()
        if sys.getrefcount(item) != _ALONE:
            del item  # (shared: only let go of)
            continue
        below = depth + 1 < _DEPTH  # whether the entries are taken apart too, or freed whole
        if isinstance(item, dict):
            pop = item.popitem
            while item:
                step = min(budget, len(item))
                for _ in range(step):
                    value = pop()[1]
                    if below and _is_part(value):
                        work.append((value, depth + 1))
                    del value
                budget = _spent(budget, step, pause)
        elif isinstance(item, list):
            while item:
                if below:
                    work.extend((value, depth + 1) for value in item[-_BATCH:] if _is_part(value))
                del item[-_BATCH:]
                budget = _spent(budget, _BATCH, pause)
        elif isinstance(item, tuple):
            if below:
                work.extend((value, depth + 1) for value in item if _is_part(value))
        else:
            attrs = getattr(item, "__dict__", None)
            if isinstance(attrs, dict) and below:
                work.append((attrs, depth + 1))  # (alone once `item` dies, just below)
            del attrs
        del item
        budget = _spent(budget, 1, pause)


def _spent(budget: int, used: int, pause: Callable[[], None]) -> int:
    """The budget left after `used` entries; a pause and a new budget when it runs out."""
    budget -= used
    if budget > 0:
        return budget
    pause()
    return _STEP


def _is_part(value: Any) -> bool:
    """Whether `value` is worth taking apart (a big container, or an object with attributes), rather
    than freed whole (small containers, strings, numbers, arrays, slotted records)."""
    if isinstance(value, (dict, list, tuple)):
        return len(value) > _SMALL
    return hasattr(value, "__dict__")


class Retirement:
    """Views replaced by a refresh, taken apart on a thread of its own while no search reads
    (module docstring)."""

    def __init__(self, retry_seconds: float = RETRY_SECONDS) -> None:
        self.retry_seconds = retry_seconds
        self._lock = threading.Lock()
        self._held: list[list[Any]] = []  # [the view, tries]
        self._readers = 0
        self._worker: threading.Thread | None = None
        self._closed = False

    @contextmanager
    def reading(self) -> Iterator[None]:
        """A search runs for the block: the teardown waits."""
        with self._lock:
            self._readers += 1
        try:
            yield
        finally:
            with self._lock:
                self._readers -= 1

    def hold(self, view: Any) -> None:
        """Take `view` (the caller drops its own reference right after, then calls `sweep`)."""
        if view is not None:
            with self._lock:
                self._held.append([view, 0])

    def sweep(self) -> None:
        """Start the thread that takes the held views apart (if it is not running)."""
        with self._lock:
            if self._worker is not None or not self._held or self._closed:
                return
            self._worker = threading.Thread(target=self._work, name="codeseek-retirement", daemon=True)
            self._worker.start()

    def sweep_now(self) -> None:
        """Take apart, on this thread and without pauses, every held view no one else refers to."""
        self._take_apart(wait=False)

    def _work(self) -> None:
        try:
            while self._take_apart(wait=True):
                time.sleep(self.retry_seconds)
        finally:
            with self._lock:
                self._worker = None
                again = bool(self._held) and not self._closed
            if again:  # (a view held while the thread was finishing)
                self.sweep()

    def _take_apart(self, wait: bool) -> bool:
        """One pass over the held views; whether some are still in use."""
        with self._lock:
            held, self._held = self._held, []
        waiting: list[list[Any]] = []
        while held:
            entry = held.pop()
            view, tries = entry
            entry.clear()
            if sys.getrefcount(view) == _ALONE or tries >= MAX_TRIES:
                box = [view]
                del view
                dismantle(box, self._pause if wait else (lambda: None))
            else:
                waiting.append([view, tries + 1])
                del view
        with self._lock:
            if self._closed:
                return False
            self._held.extend(waiting)
            return bool(self._held)

    def _pause(self) -> None:
        time.sleep(0)  # (whoever waits for the GIL takes it)
        deadline = time.monotonic() + MAX_PAUSE
        while self._readers and not self._closed and time.monotonic() < deadline:
            time.sleep(0.002)

    def close(self) -> None:
        """Let go of every held view now (the engine closes); a teardown under way ends its pauses."""
        with self._lock:
            self._closed = True
            self._held.clear()
