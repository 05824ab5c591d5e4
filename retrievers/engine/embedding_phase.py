"""Phase 2 of a refresh: embed the chunks that have no cached vector, inline or alongside phase 1.

A cold index spends about as long embedding as it does building the text index and the call graph.
The two use different halves of the machine: the static model's tokenizer (Rust) and its numpy
product release the GIL, the text index and the graph are Python and hold it. So a refresh that
embeds (`codeseek search`, `codeseek index`) starts this phase on its own thread as soon as phase 1
has registered the chunks with the semantic retriever, and joins it when phase 1 is done: on two
cores the embedding runs beside the graph and text index instead of after them. While phase 1's
thread then waits for it, it can do other work (`finish(meanwhile=...)`: a one-shot command writes
the structures it held back).

The semantic retriever guards its vectors with its own lock and the store serialises writes, which is
what the language server already relies on when it embeds on its worker thread while serving. A
phase 1 that fails stops the thread between batches (`stop`) before the error goes up.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

from retrievers.base import RetrieverError

if TYPE_CHECKING:
    from collections.abc import Callable

    from retrievers.engine.options import Progress, RefreshResult
    from retrievers.semantic.tiered import TieredSemantic

__all__ = ["STEP_ROOM_S", "EmbeddingPhase"]

STEP_ROOM_S = 1.0  # the embedding time left that other work in the wait may start a step in

log = logging.getLogger(__name__)


class EmbeddingPhase:
    """Embeds `semantic`'s pending chunks into `out` (embedded count, notes, seconds["embed"])."""

    def __init__(self, semantic: TieredSemantic, out: RefreshResult, progress: Progress | None) -> None:
        self.semantic = semantic
        self.out = out
        self.progress = progress
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._error: BaseException | None = None
        self._progress: tuple[int, int, float] | None = None  # (done, total, seconds) at the last report

    def remaining_s(self) -> float:
        """The seconds the embedding should still take at the rate reported so far (infinite before a
        first report: the model may still be loading)."""
        if self._progress is None:
            return float("inf")
        done, total, seconds = self._progress
        return (total - done) * seconds / done if done > 0 else float("inf")

    @property
    def started(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        """Run on a thread of its own (once; nothing to do when nothing is pending)."""
        if self._thread is None and self.semantic.pending():
            self._thread = threading.Thread(target=self._run_captured, name="codeseek-embed", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop between batches and wait (a failed phase 1); what was embedded stays cached."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def finish(self, meanwhile: Callable[[], bool] | None = None,
               beside: Callable[[float], object] | None = None) -> None:
        """Wait for the thread, or embed now if it never started; re-raise what the thread raised.
        `meanwhile`: one step of other work, taken while the thread is expected to run `STEP_ROOM_S`
        more (`remaining_s`) until it says False (none left); the wait then goes on. A step that
        outlasts the embedding delays what comes after the wait (a command's answer), and steps
        contend with the thread that stores the vectors for the interpreter. `beside(seconds)`: then
        once, with the seconds the embedding should still run, work that starts threads of its own and
        returns (the core this thread leaves idle: it decides whether its work fits)."""
        if self._thread is None:
            if self.semantic.pending():
                self.run()
            return
        try:
            while meanwhile is not None and self._thread.is_alive() and \
                    self.remaining_s() >= STEP_ROOM_S and meanwhile():
                pass
            if beside is not None and self._thread.is_alive():
                beside(self.remaining_s())
        finally:  # (the other work failing still waits for the thread: it writes to the index)
            self._thread.join()
        if self._error is not None:
            raise self._error

    def run(self) -> None:
        started = time.perf_counter()
        progress = self.progress

        def report(done: int, total: int) -> None:
            self._progress = (done, total, time.perf_counter() - started)
            if progress is not None:
                progress("embedding", done, total)

        try:
            prepare = getattr(self.semantic.embedder, "prepare", None)
            if prepare is not None:  # a first-use model build reports its own phase
                prepare(progress, self.semantic.pending())
            self.out.embedded = self.semantic.embed_pending(report, self._stop.is_set)
        except RetrieverError as exc:  # e.g. the model cannot load: search without it
            log.warning("embedding failed: %s", exc)
            self.out.notes.append(f"embeddings unavailable, searching without them: {exc}")
        self.out.seconds["embed"] = time.perf_counter() - started

    def _run_captured(self) -> None:
        try:
            self.run()
        except BaseException as exc:  # handed to the refresh's own thread by finish()
            self._error = exc
