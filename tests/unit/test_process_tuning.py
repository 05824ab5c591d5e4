"""lsp_server.process_tuning: what a burst of work leaves behind is collected, then frozen."""

from __future__ import annotations

import gc
import weakref

from lsp_server.process_tuning import release_memory


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_release_memory_freezes_survivors_and_thaws_them_next_time() -> None:
    try:
        cycle = _Cycle()
        alive = weakref.ref(cycle)
        release_memory()
        assert gc.get_freeze_count() > 0  # the survivors left the generations a collection walks
        del cycle  # cyclic garbage among frozen objects ...
        gc.collect()
        assert alive() is not None  # ... is out of a plain collection's reach ...
        release_memory()
        assert alive() is None  # ... and collected by the next call, which thaws first
    finally:
        gc.unfreeze()
