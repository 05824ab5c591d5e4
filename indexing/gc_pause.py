"""Cyclic garbage collection paused while bulk work allocates long-lived objects.

Indexing and loading an index create hundreds of thousands of objects that live on (chunks,
definitions, the call graph). Each young-generation collection traverses the ones made since the
last, so a bulk phase spends a real share of its time in the collector (figures:
docs/tuning/2026-12-02-module-docstrings.md). Reference counting still frees everything acyclic at
once, so pausing the collector for such a phase costs only the cycles it makes, which the first
collection after it reclaims.

`paused_collection()` nests and is shared by threads: the collector resumes when the last pause
ends, and only if it was running when the first began.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from indexing.held_setting import HeldSetting, Undo

__all__ = ["paused_collection"]

_collector = HeldSetting()


def _pause() -> Undo | None:
    if not gc.isenabled():
        return None
    gc.disable()
    return gc.enable


@contextmanager
def paused_collection() -> Iterator[None]:
    """Collector off for the block (and any pause that overlaps it), back as it was after the last."""
    with _collector.hold(_pause):
        yield
