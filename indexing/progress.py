"""Progress arithmetic shared by the CLI's stderr bar and the server's `$/progress`: rates and ETAs.

`ProgressRate().eta(phase, done, total)` measures each phase from its first report and answers a
short remaining-time text ("40 s", "3 min") once a second of that phase has passed, else None.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def format_duration(seconds: float) -> str:
    """A rounded duration a person reads at a glance: "8 s", "40 s", "3 min", "1 h 5 min"."""
    if seconds < 10:
        return f"{max(1, round(seconds))} s"
    if seconds < 60:
        return f"{round(seconds / 5) * 5} s"
    if seconds < 3600:
        return f"{round(seconds / 60)} min"
    hours, rest = divmod(round(seconds / 60), 60)
    return f"{hours} h {rest} min" if rest else f"{hours} h"


class ProgressRate:
    """Remaining time per phase, from the rate since the phase's first report."""

    def __init__(self, clock: Callable[[], float] | None = None) -> None:
        self._clock = clock or time.monotonic
        self._start: dict[str, tuple[float, int]] = {}

    def eta(self, phase: str, done: int, total: int) -> str | None:
        now = self._clock()
        if phase not in self._start:
            self._start[phase] = (now, done)
            return None
        began, first = self._start[phase]
        elapsed, progressed = now - began, done - first
        if elapsed < 1.0 or progressed <= 0 or total <= done:
            return None
        return format_duration((total - done) * elapsed / progressed)
