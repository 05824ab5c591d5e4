"""Cyclic garbage collection paused while bulk work allocates long-lived objects.

Indexing and loading an index create hundreds of thousands of objects that live on (chunks,
definitions, the call graph). Each young-generation collection traverses the ones made since the
last; a cold index of the Django sdist spent ~10% of its main thread in the collector. Reference
counting still frees everything acyclic at once, so pausing the collector for such a phase costs
only the cycles it makes, which the first collection after it reclaims.

`paused_collection()` nests and is shared by threads: the collector resumes when the last pause
ends, and only if it was running when the first began.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_collection"]

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def paused_collection() -> Iterator[None]:
    """Collector off for the block (and any pause that overlaps it), back as it was after the last."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
