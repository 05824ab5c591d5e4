"""Embedding from the command line: `codeseek model`, the vectors of `codeseek index`, labelled progress.

- `run_model(args)`: `codeseek model` builds the static model when it is missing (the one-time
  distillation and training on the standard library's code, ~8 min on 2 cores) and prints where it
  is; `--path` prints only the directory (scripts, `make setup`).
- `embed_index(ws, transformer, show)`: the vectors `codeseek index` makes after parsing: the static
  tier for every chunk (seconds), and with `--transformer` the transformer tier too (minutes on a
  large repository; the language server otherwise fills it in while idle).
- `progress_bar(show)`: one labelled bar per phase (scan/parse, model, vectors, transformer) with
  counts and an ETA on stderr when it is a terminal; nothing otherwise.
- `process_ms()`: wall time since this process started (so printed timings include start-up).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from indexing.workspace import Workspace

if TYPE_CHECKING:
    from retrievers.engine.keeper_events import Listener

PHASE_LABELS = {
    "indexing": "parse", "graph": "call graph", "distilling": "model", "distilled": "model", "model": "model",
    "embedding": "vectors", "transformer": "transformer",
}
_FALLBACK_START = time.time()


def process_ms() -> float:
    """Milliseconds since this process started (/proc on Linux; else since this module loaded)."""
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime", encoding="ascii") as fh:
            uptime = float(fh.read().split()[0])
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        return max(0.0, (uptime - started) * 1000)
    except (OSError, ValueError, IndexError):
        return (time.time() - _FALLBACK_START) * 1000


class PlainProgress:
    """Progress as plain lines on stderr, for a run whose stderr is not a terminal (a log, a CI job, an
    agent): silent for the first `quiet_s` seconds (a quick run prints nothing), then a line when a
    phase starts and at most one every `every_s` seconds ("codeseek: parse 1,200/14,896 (8%)")."""

    def __init__(self, stream: Any = None, quiet_s: float = 3.0, every_s: float = 2.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.quiet_s, self.every_s, self.clock = quiet_s, every_s, clock
        self.started = clock()
        self.label: str | None = None
        self.printed_at = float("-inf")

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = self.clock()
        if now - self.started < self.quiet_s:
            return
        label = PHASE_LABELS.get(phase, phase)
        if label == self.label and now - self.printed_at < self.every_s:
            return
        self.label, self.printed_at = label, now
        share = f" ({100 * done // total}%)" if total else ""
        count = f"{done:,}/{total:,}" if total else f"{done:,}"
        try:
            print(f"codeseek: {label} {count}{share}", file=self.stream, flush=True)
        except (OSError, ValueError):  # stderr closed: progress is not worth failing for
            pass


@contextlib.contextmanager
def progress_bar(show: bool, plain: bool = False) -> Iterator[Callable[[str, int, int], None]]:
    """A (phase, done, total) callback drawing one labelled bar per phase, with an ETA; with `plain`
    (stderr not a terminal) plain lines once the run is slow enough to need them (`PlainProgress`)."""
    if not show:
        yield PlainProgress() if plain else (lambda phase, done, total: None)
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (TextColumn("{task.description:<11}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("eta"), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        tasks: dict[str, Any] = {}

        def progress(phase: str, done: int, total: int) -> None:
            label = PHASE_LABELS.get(phase, phase)
            if label not in tasks:
                tasks[label] = bar.add_task(label, total=total or None)
            bar.update(tasks[label], completed=done, total=total or None)

        yield progress


def progress_events(progress: Callable[[str, int, int], None]) -> Listener:
    """The keeper's progress events as the progress bars' (phase, done, total) calls."""
    from retrievers.engine.keeper_events import KeeperEvent, StepAdvanced

    def listen(event: KeeperEvent) -> None:
        if isinstance(event, StepAdvanced):
            progress(event.phase, event.done, event.total)
    return listen


def embed_index(ws: Workspace, transformer: bool, show: bool, plain: bool = False) -> dict[str, Any]:
    """Static vectors for every chunk (and transformer vectors with `transformer`); a summary dict."""
    from lsp_server.cli.index_commands import record_call_edges
    from retrievers.engine.keeper import IndexKeeper
    from retrievers.engine.search_engine import EngineOptions, SearchEngine
    from retrievers.semantic.embedder import foreground_options
    from retrievers.semantic.models import make_embedder

    started = time.perf_counter()
    options = EngineOptions(embedder=make_embedder(None, foreground_options()),
                            transformer_embedder=make_embedder("minilm", foreground_options()))
    engine = SearchEngine(ws, options)
    try:
        with progress_bar(show, plain) as progress:
            keeper = IndexKeeper(engine, listener=progress_events(progress))
            result = keeper.refresh(paths=[])
            graph = engine.call_graph()
            if graph is not None and not engine.graphs.loaded:  # built now (a saved one would load whole)
                record_call_edges(ws, graph)
            made = keeper.fill_transformer() if transformer else 0
        info = engine.index_info()
    finally:
        engine.close()
    deep = info.get("transformer") or {}
    return {"model": info.get("model"), "embedded": info.get("embedded", 0),
            "newly_embedded": result.embedded,
            "transformer_model": deep.get("model"), "transformer_embedded": deep.get("embedded", 0),
            "transformer_newly_embedded": made, "notes": result.notes,
            "seconds": round(time.perf_counter() - started, 3)}


def run_model(args: argparse.Namespace) -> int:
    """`codeseek model [--path]`: build the static model if needed; print its directory."""
    from retrievers.base import RetrieverError
    from retrievers.semantic.static_model import (
        DistillSettings,
        ensure_static_model,
        is_complete,
        packaged_source,
        shipped_model,
        static_model_dir,
    )

    try:
        shipped = shipped_model(packaged_source(), DistillSettings()) is not None
        existed = shipped or is_complete(static_model_dir())
        started = time.perf_counter()
        show = sys.stderr.isatty() and not args.path
        if not existed and not args.path:
            print("codeseek: distilling the static embedding model from all-MiniLM-L6-v2 "
                  "and training it on code (one time, several minutes)", file=sys.stderr)
        with progress_bar(show) as progress:
            directory = ensure_static_model(progress)
    except RetrieverError as exc:
        print(f"codeseek: error: {exc}", file=sys.stderr)
        return 2
    if args.path:
        print(directory)
        return 0
    size = sum(p.stat().st_size for p in directory.iterdir() if p.is_file())
    state = ("shipped with codeseek" if shipped else "cached") if existed else \
        f"built in {time.perf_counter() - started:.1f} s"
    print(f"static model  {directory}\n  size        {size / 1e6:.1f} MB\n  state       {state}")
    return 0
