"""The index keeper: one root's index kept up to date, the same way for every front end (the language
server's `lsp_server.lsp.indexer`, the MCP server's `lsp_server.mcp.service`, the CLI), which only
translate what it reports into their protocol.

`IndexKeeper.open(root, workspace_options, engine_options)` opens a root's `Workspace` and
`SearchEngine` (`IndexKeeper(engine)` keeps one already open). Two ways to run it:

- `refresh(paths)`: one refresh on the caller's thread (a command the user waits on): phases 1 and 2
  in one engine refresh, the embedding beside phase 1 (`EngineOptions.embed_alongside`);
  `fill_transformer()` then fills the transformer tier there too (`codeseek index --transformer`).
- `start()`: a worker thread runs jobs; `request_full()`, `request_paths(paths)` and
  `request_repair(exc)` ask for one, and whatever is asked while a job runs is merged into the next.
  A job runs the phases in order:
  1. indexing: scan, parse, chunks, definitions, call graph, text index (`engine.refresh(embed=False)`);
     searches answer from the new snapshot after it (`indexed` is set);
  2. embedding: vectors for the chunks whose content has none (`engine.refresh(embed=True, paths=[])`),
     so an edit to one function embeds that one chunk; the model loaded, so the first query does not
     wait for it (searches rank without it until then: `fused_route`); if phase 1 loaded the saved
     graph, once searches pause (`quiet_gate`), an incremental build's inputs (`GraphState.prime`);
  3. transformer (`transformer_background`): the transformer tier in `retrievers.engine.fill_order`
     (the editor's open files first), at low priority, yielding to any new request between batches.
     Without it the transformer's query side is loaded when its tier has vectors.
  When idle it looks every `poll_s` seconds for changes other processes committed to the index
  (`codeseek index`, another server) and reloads them. A damaged index is rebuilt, then indexed again.

Progress reaches one typed listener: `StepBegun`, `StepAdvanced`, `StepEnded` per step, `Notice` for
what the user should read (notes, a repair, a failed job). A listener that raises `KeeperStopped` (or
a `stop()`) abandons the job between files: each file is committed whole. State for status: `state`
(`retrievers.engine.lifecycle.WORKER_STATES`), `error`, `last` (a `JobReport`), `jobs`, `idle()`,
`model_loaded()`, the events `indexed` (a phase 1 done) and `attempted` (one ended, done or failed).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from indexing.integrity import describe, is_corruption
from indexing.workspace import Workspace, WorkspaceOptions
from retrievers.engine import keeper_events as events
from retrievers.engine.lifecycle import EMBEDDING, ERROR, INDEXING, READY, STARTING, STOPPED, IndexState
from retrievers.engine.options import EngineOptions, Progress, RefreshResult
from retrievers.engine.quiet_gate import prime_when_quiet
from retrievers.engine.search_engine import SearchEngine

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

__all__ = ["IndexKeeper", "KeeperOptions"]  # what it reports: retrievers.engine.keeper_events

log = logging.getLogger(__name__)


@dataclass
class KeeperOptions:
    """How the worker runs; the hooks are the host process's tuning (`lsp_server.process_tuning`)."""

    transformer_background: bool = False  # phase 3: fill in the transformer tier while idle
    poll_s: float | None = None  # when idle, look this often for other processes' commits (None: never)
    after_work: Callable[[], None] | None = None  # after a job changed the indexes (release memory)
    low_priority: Callable[[], AbstractContextManager[object]] | None = None  # around phase 3
    prime_quiet_s: float = 1.5  # the graph's prime waits for this long without a search (quiet_gate),
    prime_wait_s: float = 30.0  # but no longer than this


@dataclass
class _Pending:
    full: bool = False
    paths: set[str] = field(default_factory=set)
    sync: bool = False  # another process changed the index: reload it (no scan)
    damaged: BaseException | None = None  # a query met a corruption error: check and rebuild first

    def empty(self) -> bool:
        return not (self.full or self.paths or self.sync or self.damaged)


class IndexKeeper:
    """One root's engine, its upkeep (phases, worker, repairs) and the state status reports."""

    def __init__(self, engine: SearchEngine, options: KeeperOptions | None = None,
                 listener: events.Listener | None = None) -> None:
        self.engine = engine
        self.workspace = engine.workspace
        self.root = self.workspace.root
        self.options = options or KeeperOptions()
        self.listener = listener
        self.state: IndexState = STARTING
        self.error: str | None = None
        self.last: events.JobReport | None = None
        self.jobs = 0  # jobs run (one refresh per batch of changes)
        self.indexed = threading.Event()  # set once a phase 1 has finished
        self.attempted = threading.Event()  # set once a phase 1 has ended, done or failed
        self.phase1_runs = 0  # phase 1 ends (done or failed) so far
        self.finished_at = 0.0  # time.monotonic() when the last job ended
        self._cond = threading.Condition()
        self._pending = _Pending()
        self._busy = False
        self._gated = False  # the busy worker only waits at the quiet gate: refresh_if_stale may ask
        self._stop = False
        self._thread: threading.Thread | None = None

    @classmethod
    def open(cls, root: Path, workspace: WorkspaceOptions, engine: EngineOptions,
             options: KeeperOptions | None = None, listener: events.Listener | None = None) -> IndexKeeper:
        """Open `root`'s workspace (its index) and an engine over it."""
        ws = Workspace(root, workspace)
        try:
            return cls(SearchEngine(ws, engine), options, listener)
        except BaseException:
            ws.close()
            raise

    # -- control -------------------------------------------------------------------------------------
    def refresh(self, paths: Iterable[str] | None = None) -> RefreshResult:
        """One refresh on this thread (module docstring); progress goes to the listener."""
        return self.engine.refresh(embed=self.engine.semantic is not None, progress=self._reporter(None),
                                   paths=paths)

    def fill_transformer(self) -> int:
        """The transformer tier filled on the caller's thread, in the fill order; how many it embedded."""
        return self.engine.embed_transformer(self._reporter("transformer"), first=self.workspace.overlays())

    def start(self) -> None:
        """Start the worker and queue the first full refresh."""
        self.request_full()
        name = f"codeseek-index:{self.root.name}"
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> bool:
        """Stop the worker (after the file it is on) and close the engine and the workspace. False when
        the worker is still stuck in one long step (a model load) after `timeout`: both stay open."""
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if (thread := self._thread) is not None and thread.is_alive():
            thread.join(timeout)
        self.state = STOPPED
        if thread is not None and thread.is_alive():
            log.warning("the indexing of %s did not stop within %.1f s", self.root, timeout)
            return False
        try:
            self.engine.close()
            self.workspace.close()
        except Exception:  # closing a cache must not fail shutdown
            log.exception("closing the index of %s", self.root)
        return True

    stopping = property(lambda self: self._stop)

    def request_full(self) -> None:
        self._request(full=True)

    def request_paths(self, paths: Iterable[str]) -> None:
        self._request(paths=set(paths))

    def request_repair(self, exc: BaseException) -> None:
        """A query met a corruption error: check the database (rebuild it if damaged), then re-index."""
        self._request(full=True, damaged=exc)

    def _request(self, full: bool = False, paths: set[str] | None = None,
                 damaged: BaseException | None = None) -> None:
        with self._cond:
            self._pending.full |= full
            self._pending.paths |= paths or set()
            self._pending.damaged = damaged or self._pending.damaged
            self._cond.notify_all()

    def refresh_if_stale(self, age: float, wait: float) -> bool:
        """Ask for a full refresh when none runs (or the worker waits at the quiet gate) or waits and the
        last job ended `age` seconds ago or more (never before the first phase 1 has ended), and wait up
        to `wait` seconds for its phase 1. True when one was asked for."""
        with self._cond:
            busy = self._busy and not self._gated
            if busy or not self._pending.empty() or not self.attempted.is_set() or \
                    time.monotonic() - self.finished_at < age:
                return False
            self._pending.full = True
            self._cond.notify_all()
            target = self.phase1_runs + 1
            self._cond.wait_for(lambda: self.phase1_runs >= target or self._stop, wait)
        return True

    # -- state ---------------------------------------------------------------------------------------
    def idle(self) -> bool:
        """True when no job runs or waits."""
        with self._cond:
            return not self._busy and self._pending.empty()

    def wait_idle(self, timeout: float) -> bool:
        """Block until idle; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._busy and self._pending.empty(), timeout)

    def model_loaded(self) -> bool:
        """Whether the main embedding model is loaded (False without embeddings)."""
        semantic = self.engine.semantic
        return semantic is not None and semantic.embedder.loaded

    def warm_up(self) -> None:
        """Load the models now so the first query does not wait: the main tier's, and the transformer's
        query side when its tier has vectors."""
        self._load_main()
        self._load_deep()

    # -- worker --------------------------------------------------------------------------------------
    def _take(self) -> _Pending | None:
        with self._cond:
            while self._pending.empty() and not self._stop:
                self._busy = False
                self._cond.notify_all()
                if not self._cond.wait(self.options.poll_s) and self._changed_elsewhere():
                    self._pending.sync = True
            if self._stop:
                return None
            job, self._pending = self._pending, _Pending()
            self._busy = True
            return job

    def _changed_elsewhere(self) -> bool:
        """Whether another process (`codeseek index`, another server) committed to this index."""
        if self.state not in (READY, ERROR):
            return False
        try:
            return self.workspace.changed_elsewhere(consume=False)
        except Exception as exc:  # a damaged or vanished database: the next job finds out
            log.info("cannot read the index stamp of %s: %s", self.root, exc)
            return False

    def _run(self) -> None:
        try:
            while (job := self._take()) is not None:
                runs = self.phase1_runs
                try:
                    self._job(job)
                except events.KeeperStopped:
                    return
                except Exception as exc:
                    if self._stop:
                        return
                    self._failed(exc, runs)
                finally:
                    with self._cond:
                        self.finished_at = time.monotonic()
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()

    def _failed(self, exc: Exception, runs: int) -> None:
        """A job failed: rebuild a damaged index and index again, else keep serving the last snapshot
        and say what failed (`error`)."""
        store = self.workspace.store
        if is_corruption(exc):
            store.rebuild_if_damaged(exc)
            self._tell(store.take_notices())
            self._phase1_failed(runs)
            self.request_full()
            return
        described = describe(exc, self.workspace.index_dir)
        if described is None:
            log.exception("indexing %s failed", self.root)
        self.state = ERROR
        self.error = described or f"{type(exc).__name__}: {exc}"
        self._phase1_failed(runs)
        self._tell([f"indexing {self.root.name} failed: {self.error}"])

    def _phase1_failed(self, runs: int) -> None:
        if self.phase1_runs == runs:  # failed in phase 1: its waiters stop waiting
            self._phase1_ended()

    def _phase1_ended(self) -> None:
        self.attempted.set()  # a failed first refresh answers from what exists, not never
        with self._cond:
            self.phase1_runs += 1
            self._cond.notify_all()

    def _job(self, job: _Pending) -> None:
        started, self._gated = time.perf_counter(), False
        self.jobs += 1
        store = self.workspace.store
        if job.damaged is not None:
            # The query may have read another root's index: rebuild this one only if it is damaged.
            store.rebuild_if_damaged(job.damaged, force=False)
            self._tell(store.take_notices())
        paths = None if job.full else sorted(job.paths)
        result = self._index(paths)
        phase1 = time.perf_counter() - started
        report = self.last = events.JobReport(None if paths is None else len(paths), result.parsed,
                                              result.unchanged, round(phase1, 3), result.notes)
        self._tell([*result.notes, *store.take_notices()])
        changed = result.changed
        semantic = self.engine.semantic
        if semantic is not None and not self._stop:
            changed = self._embed(report) or changed
            self.state = READY
            self._load_main()
        self._gated = True  # (reset when the next job starts, also after a failed prime)
        primed = not self._stop and prime_when_quiet(self.engine, self._cond, self._yield_requested,
                                                     self.options)  # (released and frozen with the rest)
        self._gated = False
        if (changed or primed) and not self._stop:
            self._after_work()
        if semantic is not None and not self._stop:
            report.phase2_s = round(time.perf_counter() - started - phase1, 3)
            self._transformer_phase(report)
        self.state = READY
        self.error = None

    def _index(self, paths: list[str] | None) -> RefreshResult:
        """Phase 1."""
        self.state = INDEXING
        self._emit(events.StepBegun("indexing", paths=None if paths is None else len(paths)))
        try:
            result = self.engine.refresh(embed=False, progress=self._reporter("indexing"), paths=paths)
            self.indexed.set()
            self._phase1_ended()
        finally:
            self._emit(events.StepEnded("indexing", self.workspace.store.counts().get("chunks", 0)))
        return result

    def _embed(self, report: events.JobReport) -> bool:
        """Phase 2: vectors for the chunks that have none; whether it made any."""
        semantic = self.engine.semantic
        if semantic is None or not semantic.pending():
            return False
        self.state = EMBEDDING
        self._emit(events.StepBegun("embedding", pending=semantic.pending()))
        try:
            done = self.engine.refresh(embed=True, progress=self._reporter("embedding"), paths=[])
        finally:
            self._emit(events.StepEnded("embedding", semantic.embedded()))
        report.embedded, report.embed_notes = done.embedded, done.notes
        return done.embedded > 0

    def _transformer_phase(self, report: events.JobReport) -> None:
        """Phase 3 (module docstring); without it, load the transformer's query side when there are
        vectors for it (an earlier run, `codeseek index --transformer`)."""
        semantic = self.engine.semantic
        deep = semantic.deep if semantic is not None else None
        if deep is None or not deep.pending() or self._stop or not self.options.transformer_background:
            self._load_deep()
            return
        self._emit(events.StepBegun("transformer", pending=deep.pending()))
        started = time.perf_counter()
        done = 0
        low = self.options.low_priority
        try:
            with low() if low is not None else contextlib.nullcontext():
                done = self.engine.embed_transformer(self._reporter("transformer"),
                                                     should_stop=self._yield_requested,
                                                     first=self.workspace.overlays())
                deep.embedder.load()
        finally:
            self._emit(events.StepEnded("transformer", deep.embedded()))
            self._after_work()
        report.transformer_embedded = done
        report.phase3_s = round(time.perf_counter() - started, 3)

    def _yield_requested(self) -> bool:
        with self._cond:
            return self._stop or not self._pending.empty()

    def _load_main(self) -> None:
        semantic = self.engine.semantic
        if semantic is not None:
            semantic.embedder.load()

    def _load_deep(self) -> None:
        semantic = self.engine.semantic
        deep = semantic.deep if semantic is not None else None
        if deep is not None and deep.embedded() and not deep.embedder.loaded:
            deep.embedder.load()

    def _after_work(self) -> None:
        if self.options.after_work is not None:
            self.options.after_work()

    # -- reports -------------------------------------------------------------------------------------
    def _reporter(self, step: events.Step | None) -> Progress:
        """The engine's progress callback for `step` (None: by the engine's phase word)."""
        def report(phase: str, done: int, total: int) -> None:
            if self._stop:
                raise events.KeeperStopped()  # each file is committed atomically: stopping here loses nothing
            self._emit(events.StepAdvanced(step or events.step_of(phase), phase, done, total))
        return report

    def _emit(self, event: events.KeeperEvent) -> None:
        if self.listener is not None:
            self.listener(event)

    def _tell(self, messages: list[str]) -> None:
        for message in messages:
            self._emit(events.Notice(message))
