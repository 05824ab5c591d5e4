"""Background indexing for one workspace folder: a worker thread that never blocks requests.

A `RootIndex` owns one folder's `Workspace` (store + overlays) and `SearchEngine`, and the domain
facade over them (`codebase`, a `retrievers.codebase.Codebase`) that every request handler asks: it is
the one place the server builds them. Its worker thread runs jobs in two phases:

1. scan, parse, chunks, definitions, call graph, text index (`engine.refresh(embed=False)`): after it
   search, references, call hierarchy, hover and symbols answer from the new index;
2. embeddings (`engine.refresh(embed=True)`): only chunks whose content hash has no cached vector are
   embedded, so an edit to one function re-embeds that one chunk.

Jobs coalesce: while a job runs, further requests (a full rescan, changed paths) are merged into the
next one. Progress goes to a `ProgressSink` (the server turns it into `$/progress`). Requests read the
store through per-thread SQLite connections (WAL) and the graph through immutable snapshots, so they
never wait for the worker.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from indexing.integrity import describe, is_corruption
from indexing.progress import ProgressRate
from indexing.scan import ScanOptions
from indexing.workspace import Workspace, WorkspaceOptions
from lsp_server.lsp.file_watch import RootWatcher
from lsp_server.lsp.options import ServerOptions
from lsp_server.process_tuning import lower_priority, release_memory
from lsp_server.worker import StoppableWorker
from retrievers.codebase import Codebase, StoreClosed
from retrievers.engine.lifecycle import (
    EMBEDDING,
    ERROR,
    INDEXING,
    READY,
    STARTING,
    STOPPED,
    IndexState,
    reported,
)
from retrievers.engine.search_engine import EngineOptions, SearchEngine
from retrievers.semantic.models import shared_embedder

log = logging.getLogger(__name__)

REPORT_INTERVAL = 0.1  # seconds between two progress reports of one job
SYNC_POLL_S = 1.0  # when idle, look this often for changes other processes committed to the index


class IndexingStopped(Exception):
    """Raised from a progress callback to abandon a job when the root is being stopped."""


class ProgressHandle(Protocol):
    def report(self, percentage: int, message: str) -> None: ...

    def end(self, message: str) -> None: ...


class ProgressSink(Protocol):
    def begin(self, title: str, message: str) -> ProgressHandle: ...


class NoProgress:
    def report(self, percentage: int, message: str) -> None:
        pass

    def end(self, message: str) -> None:
        pass


class NullSink:
    """Progress that goes nowhere (tests, clients without workDoneProgress)."""

    def begin(self, title: str, message: str) -> ProgressHandle:
        return NoProgress()


@dataclass
class _Pending:
    full: bool = False
    paths: set[str] = field(default_factory=set)
    embed: bool = False
    sync: bool = False  # another process changed the index: reload it (no scan)
    damaged: BaseException | None = None  # a query met a corruption error: check and rebuild first

    def empty(self) -> bool:
        return not (self.full or self.paths or self.embed or self.sync or self.damaged)


class RootIndex(StoppableWorker):
    """One workspace folder: its workspace, engine, state and worker thread."""

    def __init__(self, root: Path, options: ServerOptions, sink: ProgressSink | None = None,
                 on_error: Callable[[str], None] | None = None) -> None:
        self.options = options
        scan = ScanOptions(max_file_size=options.max_file_size, excludes=tuple(options.excludes))
        # The `indexDir` option is a base folder, as the CLI's --index-dir (indexing.location).
        base = Path(options.index_dir) if options.index_dir else None
        self.workspace = Workspace(root, WorkspaceOptions(index_base=base, scan=scan, parse_workers=None))
        self.root = self.workspace.root
        embedder = shared_embedder(options.model) if options.embeddings else None
        self.engine = SearchEngine(self.workspace, EngineOptions(
            model=options.model, embeddings=options.embeddings, embedder=embedder,
            transformer=options.transformer,
            transformer_embedder=shared_embedder(options.transformer) if options.transformer else None,
            persist_once=True))  # a restart loads what the last process saved; edits stay in memory
        self.codebase = Codebase.of(self.engine)  # what the request handlers ask
        self.sink: ProgressSink = sink or NullSink()
        self.on_error = on_error
        self.state: IndexState = STARTING  # the worker's (retrievers.engine.lifecycle.WORKER_STATES)
        self.error: str | None = None
        self.phase1_done = threading.Event()  # set once the first phase 1 has finished
        self.last_job: dict[str, Any] = {}
        self.jobs = 0  # jobs run (a status figure: one refresh per batch of changes)
        self.watcher: RootWatcher | None = None  # the server's own watcher, when the client has none
        self._cond = threading.Condition()
        self._pending = _Pending()
        self._busy = False
        self._stop = False
        self._thread = threading.Thread(target=self._run, name=f"codeseek-index:{self.root.name}",
                                        daemon=True)

    # -- control -------------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the worker and queue the initial full update."""
        self.request_full()
        self._thread.start()

    def watch(self, notify: Callable[[str], None] | None = None) -> None:
        """Watch the root for changes made outside the editor (`lsp_server.lsp.file_watch`), once."""
        if self.watcher is None and not self._stop:
            self.watcher = RootWatcher(self, notify)
            self.watcher.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the watcher and the worker (after the file it is on) and close the store."""
        if self.watcher is not None:
            self.watcher.stop()
        stopped = self._halt(timeout)
        self.state = STOPPED
        if not stopped:  # stuck in one long step (a model load): leave the store open
            log.warning("indexer of %s did not stop within %.1f s", self.root, timeout)
            return
        try:
            self.engine.close()
            self.workspace.close()
        except Exception:  # closing a cache must not fail shutdown
            log.exception("closing the index of %s", self.root)

    @property
    def stopping(self) -> bool:
        return self._stop

    def request_full(self) -> None:
        self._request(full=True)

    def request_paths(self, paths: Iterable[str]) -> None:
        self._request(paths=set(paths))

    def _request(self, full: bool = False, paths: set[str] | None = None) -> None:
        with self._cond:
            self._pending.full |= full
            self._pending.paths |= paths or set()
            self._cond.notify_all()

    def request_repair(self, exc: BaseException) -> None:
        """A query met a corruption error: check the database (rebuild it if damaged), then re-index."""
        with self._cond:
            self._pending.damaged = exc
            self._pending.full = True
            self._cond.notify_all()

    def idle(self) -> bool:
        """True when no job runs or waits."""
        with self._cond:
            return not self._busy and self._pending.empty()

    def wait_idle(self, timeout: float) -> bool:
        """Block until idle (tests, `codeseek.reindex` with wait); False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._busy or not self._pending.empty():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    # -- reads ---------------------------------------------------------------------------------------
    def relpath(self, path: Path) -> str | None:
        try:
            rel = self.workspace.relpath(path)
        except Exception:
            return None
        if rel.startswith("../") or not self.workspace.stays_inside(rel):  # no reads through symlinks out
            return None
        return rel

    def current_state(self, engine_state: IndexState | None = None) -> IndexState:
        """starting / indexing / embedding / error / stopped while that holds, else the engine's state
        (ready, text-only when there are no vectors, empty when there is nothing to index); the
        engine's is read unless given (from a search answer)."""
        if self.state == READY and engine_state is None:
            engine_state = self.engine.index_info().get("state")
        return reported(self.state, engine_state)

    def model_loaded(self) -> bool:
        semantic = self.engine.semantic
        return semantic is not None and semantic.embedder.loaded

    def status(self) -> dict[str, Any]:
        """Index state and counts for `codeseek.status` (zero counts once the root stopped)."""
        try:
            info = self.codebase.status()
        except StoreClosed:  # stopped (a restart) since the caller picked this root
            info = {"files": 0, "chunks": 0, "definitions": 0, "embedded": 0, "model": None,
                    "transformer": None}
        return {
            "root": str(self.root),
            "state": self.current_state(),
            "idle": self.idle(),
            "files": info["files"],
            "chunks": info["chunks"],
            "definitions": info["definitions"],
            "embedded": info["embedded"],
            "model": info["model"],
            "model_loaded": self.model_loaded(),
            "transformer": info["transformer"],  # {model, embedded, pending}; None without the tier
            "index_dir": str(self.workspace.index_dir),
            "overlays": len(self.workspace.overlays()),
            "error": self.error,
            "last_job": dict(self.last_job),
            "jobs": self.jobs,
            "watch": self.watcher.status() if self.watcher is not None else None,
        }

    # -- worker --------------------------------------------------------------------------------------
    def _take(self) -> _Pending | None:
        with self._cond:
            while self._pending.empty() and not self._stop:
                self._busy = False
                self._cond.notify_all()
                if not self._cond.wait(SYNC_POLL_S) and self._changed_elsewhere():
                    self._pending.sync = True
            if self._stop:
                self._busy = False
                self._cond.notify_all()
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
        while (job := self._take()) is not None:
            try:
                self._job(job)
            except IndexingStopped:
                return
            except Exception as exc:
                if self._stop:
                    return
                if is_corruption(exc):  # rebuild a damaged index, then index again
                    self.workspace.store.rebuild_if_damaged(exc)
                    self._tell(self.workspace.store.take_notices())
                    self.request_full()
                    continue
                described = describe(exc, self.workspace.index_dir)
                if described is None:
                    log.exception("indexing %s failed", self.root)
                self.state = ERROR
                self.error = described or f"{type(exc).__name__}: {exc}"
                self._tell([f"indexing {self.root.name} failed: {self.error}"])

    def _tell(self, messages: list[str]) -> None:
        for message in messages:
            if self.on_error is not None:
                self.on_error(f"codeseek: {message}")

    def _job(self, job: _Pending) -> None:
        started = time.perf_counter()
        self.jobs += 1
        if job.damaged is not None:
            # The query may have read another root's index: rebuild this one only if it is damaged.
            self.workspace.store.rebuild_if_damaged(job.damaged, force=False)
            self._tell(self.workspace.store.take_notices())
        paths = None if job.full else sorted(job.paths)
        self.state = INDEXING
        name = self.root.name
        handle = self.sink.begin(f"codeseek: indexing {name}",
                                 "scanning" if paths is None else f"{len(paths)} changed file(s)")
        try:
            result = self.engine.refresh(embed=False, progress=_Throttled(self, handle, "files"), paths=paths)
            self.phase1_done.set()
        finally:
            handle.end(f"{self.workspace.store.counts().get('chunks', 0)} chunks indexed")
        phase1 = time.perf_counter() - started
        self.last_job = {"paths": "all" if paths is None else len(paths), "phase1_s": round(phase1, 3),
                         "parsed": result.parsed, "unchanged": result.unchanged, "notes": result.notes}
        self._tell([*result.notes, *self.workspace.store.take_notices()])
        semantic = self.engine.semantic
        if semantic is not None and not self._stop:
            if semantic.pending():
                self.state = EMBEDDING
                handle = self.sink.begin(f"codeseek: embedding {name}", f"{semantic.pending()} chunks")
                try:
                    done = self.engine.refresh(embed=True, progress=_Throttled(self, handle, "chunks"),
                                               paths=[])
                finally:
                    handle.end(f"{semantic.embedded()} chunks embedded")
                self.last_job["embedded"] = done.embedded
            self.state = READY
            # Load the model now (a warm restart embeds nothing) so the first query does not wait;
            # until it has loaded, searches rank without it (fused_route.model_loading).
            semantic.embedder.load()
            release_memory()
            self.last_job["phase2_s"] = round(time.perf_counter() - started - phase1, 3)
            self._transformer_phase(semantic)
        self.state = READY
        self.error = None

    def _transformer_phase(self, semantic: Any) -> None:
        """Phase 3: fill in the transformer tier behind the static one, most valuable chunks first, at
        low CPU priority; it yields to any new job (an edit) between batches and resumes after it."""
        deep = semantic.deep
        if deep is None or not deep.pending() or self._stop or not self.options.transformer_background:
            if deep is not None and deep.embedded() and not deep.embedder.loaded:
                deep.embedder.load()  # vectors from an earlier run: the query side loads now
            return
        handle = self.sink.begin(f"codeseek: transformer vectors {self.root.name}",
                                 f"{deep.pending()} chunks (static search is ready)")
        started = time.perf_counter()
        done = 0
        try:
            with lower_priority():
                done = self.engine.embed_transformer(_Throttled(self, handle, "chunks"),
                                                     should_stop=self._yield_requested)
                deep.embedder.load()
        finally:
            handle.end(f"{deep.embedded()} chunks have transformer vectors")
            release_memory()
        self.last_job["transformer_embedded"] = done
        self.last_job["phase3_s"] = round(time.perf_counter() - started, 3)

    def _yield_requested(self) -> bool:
        with self._cond:
            return self._stop or not self._pending.empty()


class _Throttled:
    """Turns engine progress callbacks into at most ~10 `$/progress` reports a second."""

    def __init__(self, root: RootIndex, handle: ProgressHandle, noun: str) -> None:
        self.root, self.handle, self.noun = root, handle, noun
        self.last = 0.0
        self.rate = ProgressRate()

    def __call__(self, phase: str, done: int, total: int) -> None:
        if self.root.stopping:
            raise IndexingStopped()  # each file is committed atomically: stopping here loses nothing
        now = time.monotonic()
        if done < total and now - self.last < REPORT_INTERVAL:
            return
        self.last = now
        percentage = min(max(int(100 * done / total) if total else 100, 0), 100)
        eta = self.rate.eta(phase, done, total)
        left = f", ~{eta} left" if eta else ""
        if phase in ("graph", "distilling", "distilled"):  # one step, or the model's token count
            label = "call graph" if phase == "graph" else "distilling the static model (once)"
            self.handle.report(percentage, f"{label}{left}")
            return
        self.handle.report(percentage, f"{phase} {done}/{total} {self.noun}{left}")
