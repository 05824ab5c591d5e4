"""Background indexing for one workspace folder, as the language server sees it.

A `RootIndex` is one folder's `retrievers.engine.keeper.IndexKeeper` (the workspace, its engine and
the worker thread that keeps them up to date: phase 1, then embeddings, then the transformer tier)
plus what the language server adds: the domain facade every request handler asks (`codebase`, a
`retrievers.codebase.Codebase`), the server's own file watcher, and the translation of the keeper's
reports into `$/progress` (a `ProgressSink`, at most ~10 reports a second) and user messages. Requests
read the store through per-thread SQLite connections (WAL) and the graph through immutable snapshots,
so they never wait for the worker.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from indexing.progress import ProgressRate
from indexing.scan import ScanOptions
from indexing.workspace import WorkspaceOptions
from lsp_server.engine_share import share_engine
from lsp_server.engine_socket import EngineListener
from lsp_server.file_watch import RootWatcher
from lsp_server.lsp.options import ServerOptions
from lsp_server.process_tuning import lower_priority, release_memory
from retrievers.codebase import Codebase, StoreClosed
from retrievers.engine import keeper_events as events
from retrievers.engine.keeper import IndexKeeper, KeeperOptions
from retrievers.engine.lifecycle import READY, IndexState, reported
from retrievers.engine.options import EngineOptions
from retrievers.semantic.models import shared_embedder
from retrievers.semantic.tiered import TierBlend

REPORT_INTERVAL = 0.1  # seconds between two progress reports of one step
SYNC_POLL_S = 1.0  # when idle, look this often for changes other processes committed to the index
NOUNS = {"indexing": "files", "embedding": "chunks", "transformer": "chunks"}


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


class RootIndex:
    """One workspace folder: its keeper (workspace, engine, worker), facade, watcher and progress."""

    def __init__(self, root: Path, options: ServerOptions, sink: ProgressSink | None = None,
                 on_error: Callable[[str], None] | None = None) -> None:
        self.options = options
        scan = ScanOptions(max_file_size=options.max_file_size, excludes=tuple(options.excludes))
        # The `indexDir` option is a base folder, as the CLI's --index-dir (indexing.location).
        base = Path(options.index_dir) if options.index_dir else None
        engine = EngineOptions(
            model=options.model, embeddings=options.embeddings,
            embedder=shared_embedder(options.model) if options.embeddings else None,
            transformer=options.transformer,
            transformer_embedder=shared_embedder(options.transformer) if options.transformer else None,
            tier_blend=TierBlend(question_pool=options.question_pool),
            freeze_after_refresh=True,  # (with release_memory after each job)
            persist_once=True,  # a restart loads what the last process saved; edits stay in memory
            incremental_graph=True)
        reports = _ProgressReports(sink or NullSink(), on_error)
        self.keeper = IndexKeeper.open(
            root, WorkspaceOptions(index_base=base, scan=scan, parse_workers=None), engine,
            KeeperOptions(transformer_background=options.transformer_background, poll_s=SYNC_POLL_S,
                          after_work=release_memory, low_priority=lower_priority), reports)
        self.workspace = self.keeper.workspace
        self.engine = self.keeper.engine
        self.root = reports.root = self.workspace.root
        self.codebase = Codebase.of(self.engine)  # what the request handlers ask
        self.phase1_done = self.keeper.indexed  # set once the first phase 1 has finished
        self.watcher: RootWatcher | None = None  # the server's own watcher, when the client has none
        self.shared: EngineListener | None = None  # `codeseek search` answered by this engine

    # -- control -------------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the worker and queue the initial full update; share the engine (`shareEngine`)."""
        self.keeper.start()
        if self.options.share_engine:
            self.shared = share_engine(self.keeper, self.codebase, "lsp")

    def watch(self, notify: Callable[[str], None] | None = None) -> None:
        """Watch the root for changes made outside the editor (`lsp_server.file_watch`), once."""
        if self.watcher is None and not self.keeper.stopping:
            self.watcher = RootWatcher(self.keeper, self.codebase, notify)
            self.watcher.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the watcher, the shared engine's socket and the worker (after the file it is on) and
        close the store."""
        if self.watcher is not None:
            self.watcher.stop()
        if self.shared is not None:
            self.shared.close()
        self.keeper.stop(timeout)

    @property
    def stopping(self) -> bool:
        return self.keeper.stopping

    @property
    def state(self) -> IndexState:
        """The worker's state (retrievers.engine.lifecycle.WORKER_STATES)."""
        return self.keeper.state

    def request_full(self) -> None:
        self.keeper.request_full()

    def request_paths(self, paths: Iterable[str]) -> None:
        self.keeper.request_paths(paths)

    def request_repair(self, exc: BaseException) -> None:
        """A query met a corruption error: check the database (rebuild it if damaged), then re-index."""
        self.keeper.request_repair(exc)

    def idle(self) -> bool:
        """True when no job runs or waits."""
        return self.keeper.idle()

    def wait_idle(self, timeout: float) -> bool:
        """Block until idle (tests, `codeseek.reindex` with wait); False on timeout."""
        return self.keeper.wait_idle(timeout)

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
        if self.keeper.state == READY and engine_state is None:
            engine_state = self.engine.index_info().get("state")
        return reported(self.keeper.state, engine_state)

    def status(self) -> dict[str, Any]:
        """Index state and counts for `codeseek.status` (zero counts once the root stopped)."""
        try:
            info = self.codebase.status()
        except StoreClosed:  # stopped (a restart) since the caller picked this root
            info = {"files": 0, "chunks": 0, "definitions": 0, "embedded": 0, "model": None,
                    "transformer": None}
        keeper = self.keeper
        return {
            "root": str(self.root),
            "state": self.current_state(),
            "idle": self.idle(),
            "files": info["files"],
            "chunks": info["chunks"],
            "definitions": info["definitions"],
            "embedded": info["embedded"],
            "model": info["model"],
            "model_loaded": keeper.model_loaded(),
            "transformer": info["transformer"],  # {model, embedded, pending}; None without the tier
            "index_dir": str(self.workspace.index_dir),
            "overlays": len(self.workspace.overlays()),
            "error": keeper.error,
            "last_job": last_job(keeper.last),
            "jobs": keeper.jobs,
            "watch": self.watcher.status() if self.watcher is not None else None,
        }


def last_job(report: events.JobReport | None) -> dict[str, Any]:
    """The `last_job` of `codeseek.status`: what the last job did, phase by phase ({} before one)."""
    if report is None:
        return {}
    out: dict[str, Any] = {"paths": "all" if report.paths is None else report.paths,
                           "phase1_s": report.phase1_s, "parsed": report.parsed,
                           "unchanged": report.unchanged, "notes": report.notes}
    for key in ("embedded", "phase2_s", "transformer_embedded", "phase3_s"):
        value = getattr(report, key)
        if value is not None:
            out[key] = value
    return out


class _ProgressReports:
    """The keeper's reports as the language server shows them: each step one `$/progress` (begun,
    at most ~10 reports a second, ended), notices as user messages."""

    def __init__(self, sink: ProgressSink, on_error: Callable[[str], None] | None) -> None:
        self.sink, self.on_error = sink, on_error
        self.root = Path()  # its name titles the reports
        self.handle: ProgressHandle = NoProgress()
        self.throttled: _Throttled | None = None

    def __call__(self, event: events.KeeperEvent) -> None:
        if isinstance(event, events.StepAdvanced):
            if self.throttled is not None:
                self.throttled(event.phase, event.done, event.total)
        elif isinstance(event, events.StepBegun):
            self.handle = self.sink.begin(*self._title(event))
            self.throttled = _Throttled(self.handle, NOUNS[event.step])
        elif isinstance(event, events.StepEnded):
            self.handle.end(self._ended(event))
            self.handle, self.throttled = NoProgress(), None
        elif self.on_error is not None:
            self.on_error(f"codeseek: {event.message}")

    def _title(self, event: events.StepBegun) -> tuple[str, str]:
        if event.step == "indexing":
            return (f"codeseek: indexing {self.root.name}",
                    "scanning" if event.paths is None else f"{event.paths} changed file(s)")
        if event.step == "embedding":
            return f"codeseek: embedding {self.root.name}", f"{event.pending} chunks"
        return (f"codeseek: transformer vectors {self.root.name}",
                f"{event.pending} chunks (static search is ready)")

    @staticmethod
    def _ended(event: events.StepEnded) -> str:
        if event.step == "indexing":
            return f"{event.count} chunks indexed"
        if event.step == "embedding":
            return f"{event.count} chunks embedded"
        return f"{event.count} chunks have transformer vectors"


class _Throttled:
    """Turns engine progress into at most ~10 `$/progress` reports a second."""

    def __init__(self, handle: ProgressHandle, noun: str) -> None:
        self.handle, self.noun = handle, noun
        self.last = 0.0
        self.rate = ProgressRate()

    def __call__(self, phase: str, done: int, total: int) -> None:
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
