"""A process-wide interpreter setting held while any of several overlapping blocks runs.

Indexing changes settings that belong to the whole process (the cyclic collector, the GIL switch
interval) for as long as it runs, and refreshes, index loads and CLI searches overlap on different
threads. `HeldSetting.hold(apply)` nests and is shared by threads: `apply()` runs when the first block
begins and returns how to undo what it did (None: nothing to undo), which runs when the last one ends.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["HeldSetting", "Undo"]

Undo = Callable[[], None]


class HeldSetting:
    """One setting's holders: applied by the first block, undone after the last."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._undo: Undo | None = None

    @contextmanager
    def hold(self, apply: Callable[[], Undo | None]) -> Iterator[None]:
        with self._lock:
            if self._depth == 0:
                self._undo = apply()
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0 and self._undo is not None:
                    undo, self._undo = self._undo, None
                    undo()
