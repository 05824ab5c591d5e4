"""Background work that holds the interpreter for seconds, started only once searches pause.

A language server restarted on a saved index answers its first questions while its worker still has
one long pure-Python step left: `GraphState.prime` (transformers 4.46.3: ~3 s holding the GIL). Run
beside the first questions, it made them wait (first answer 3.6-7.7 s, one question pool 3.4 s
instead of ~1 s). `wait_for_quiet` holds such a step back until no search has run for `quiet_s`
seconds, for at most `cap_s` (an editor asking without pause still gets it done), and gives it up when
new work is asked for first (an edit's own job does what the step prepared for).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from retrievers.engine.keeper import KeeperOptions
    from retrievers.engine.search_engine import SearchEngine

__all__ = ["prime_when_quiet", "wait_for_quiet"]


def wait_for_quiet(last_activity: Callable[[], float], cond: threading.Condition,
                   interrupted: Callable[[], bool], quiet_s: float, cap_s: float) -> bool:
    """Block until `last_activity()` (a `time.monotonic()` stamp; 0.0: never) lies `quiet_s` seconds
    back, or `cap_s` seconds have passed: True. False as soon as `interrupted()` (called with `cond`
    held; whoever makes it true notifies `cond`)."""
    deadline = time.monotonic() + max(0.0, cap_s)
    with cond:
        while not interrupted():
            now = time.monotonic()
            quiet_for = now - last_activity()
            if quiet_for >= quiet_s or now >= deadline:
                return True
            cond.wait(max(0.001, min(quiet_s - quiet_for, deadline - now)))
    return False


def prime_when_quiet(engine: SearchEngine, cond: threading.Condition, interrupted: Callable[[], bool],
                     options: KeeperOptions) -> bool:
    """`engine.graphs.prime()` once the engine's searches pause (`SearchEngine.searched_at`) for
    `options.prime_quiet_s`, or after `options.prime_wait_s`; False without waiting when there is
    nothing to prime, and False when `interrupted()` first: the job of the work asked for builds the
    graph whole, as the prime would have. Whether it primed."""
    graphs = engine.graphs
    return graphs.primable and wait_for_quiet(lambda: engine.searched_at, cond, interrupted,
                                              options.prime_quiet_s, options.prime_wait_s) and graphs.prime()
