"""Timing for the in-process benches: a stopwatch that adds a block's milliseconds to a list."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

NOISY = "the machine is shared, figures are noisy"  # what an in-process bench's report ends with


@contextmanager
def stopwatch(times: list[float]) -> Iterator[None]:
    """Appends to times the milliseconds the with-block took (nothing when it raises)."""
    start = time.perf_counter()
    yield
    times.append((time.perf_counter() - start) * 1000)
