"""A short GIL switch interval while an index builds on two threads of one interpreter.

A cold index builds the call graph and the text index on its main thread (pure Python: it holds the
GIL) while its embedding thread feeds the tokenizer or the embedding worker process
(`retrievers.semantic.embed_worker`) and stores vectors in SQLite. Every SQLite row and every wait on the
worker releases the GIL, and taking it back from a busy thread waits out the switch interval (5 ms by
default): with the default, the embedding thread gets the GIL only a few times per batch and the
worker idles while the graph is built. A short interval keeps the worker fed (figures:
docs/tuning/2026-12-02-module-docstrings.md); the language server's request threads get the GIL
sooner during indexing too.

`short_switch_interval()` nests and is shared by threads: the interval is restored when the last
block ends, to what it was when the first began.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from indexing.held_setting import HeldSetting, Undo

__all__ = ["INDEXING_SWITCH_INTERVAL", "short_switch_interval"]

INDEXING_SWITCH_INTERVAL = 0.0005  # seconds

_interval = HeldSetting()


@contextmanager
def short_switch_interval(seconds: float = INDEXING_SWITCH_INTERVAL) -> Iterator[None]:
    """`sys.setswitchinterval(seconds)` for the block (unless it is shorter already), restored after
    the last overlapping block."""

    def shorten() -> Undo | None:
        before = sys.getswitchinterval()
        if seconds >= before:
            return None
        sys.setswitchinterval(seconds)
        return lambda: sys.setswitchinterval(before)

    with _interval.hold(shorten):
        yield
