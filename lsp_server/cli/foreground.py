"""The engine of a command the user waits on (`codeseek search`, bench/demo.py): opened over the root's
index, refreshed on the caller's thread with progress bars.

The engine's modules are imported inside the functions: `codeseek search` imports this module before
it knows whether a running server answers for it (`lsp_server.cli.served`), and then needs none of them.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from retrievers.engine.options import EngineOptions, RefreshResult
    from retrievers.engine.search_engine import SearchEngine


def open_engine(root: Path, args: argparse.Namespace) -> SearchEngine:
    """`root`'s engine as `codeseek search` runs it (`--index-dir`, `--no-embed`, `--max-lines`). A
    first search (no index yet) of a tree large enough for parse workers starts their fork server
    first (`indexing.parse_pool.start_fork_server`), to import the parser beside the engine's imports
    and the scan."""
    from indexing.location import DB_NAME, index_dir_for

    base = Path(args.index_dir).expanduser() if getattr(args, "index_dir", None) else None
    if not (index_dir_for(root, base) / DB_NAME).exists():
        from indexing.parse_pool import start_fork_server, worth_a_pool

        if worth_a_pool(root):
            start_fork_server()
    from indexing.workspace import Workspace, WorkspaceOptions
    from retrievers.engine.search_engine import SearchEngine

    # --index-dir: a base (indexing.location)
    workspace = Workspace(root, WorkspaceOptions(index_base=base, parse_workers=None))
    options = foreground_engine_options(embeddings=not args.no_embed)
    options.max_span_lines = max_lines(args, options.max_span_lines)
    blend = options.tier_blend
    options.tier_blend = replace(blend, question_pool=question_pool(args, blend.question_pool))
    return SearchEngine(workspace, options)


def question_pool(args: argparse.Namespace, default: int) -> int:
    """`--question-pool` (0: off); `default` when the command has no such option."""
    return int(getattr(args, "question_pool", default))


def max_lines(args: argparse.Namespace, default: int) -> int:
    """`--max-lines` (0: never cut a long result)."""
    return max(0, int(getattr(args, "max_lines", default)))


def foreground_engine_options(embeddings: bool) -> EngineOptions:
    """Engine options for a command the user waits on: embedding uses every CPU, and the structures
    saved beside the index are written after the answer, when the engine closes (`write_behind`)."""
    from retrievers.engine.options import EngineOptions
    from retrievers.semantic.embedder import foreground_options
    from retrievers.semantic.models import make_embedder

    if not embeddings:
        return EngineOptions(embeddings=False, write_behind=True)
    return EngineOptions(embedder=make_embedder(None, foreground_options()), write_behind=True)


@contextmanager
def no_collection() -> Iterator[None]:
    """No cyclic garbage collection while an index loads: its ~10^6 long-lived objects (chunks, the
    call graph) would be traversed again and again (~0.3 s of a warm Django search). What is loaded is
    then frozen out of later collections (`gc.freeze`), and collection resumes."""
    from indexing.gc_pause import paused_collection

    with paused_collection():
        try:
            yield
        finally:
            gc.freeze()


def refresh(engine: SearchEngine, show_progress: bool, plain: bool = False) -> RefreshResult:
    """Refresh (the index keeper's one-call refresh: `retrievers.engine.keeper`) with labelled progress
    bars (counts, ETA) on stderr when it is a terminal, else (`plain`) plain lines once the refresh has
    run for a few seconds. The parse and embedding pools' fork server is stopped after it (the
    command starts no other worker; one that did would start a new fork server)."""
    from lsp_server.cli.embed import progress_bar, progress_events
    from lsp_server.process_tuning import reap_worker_processes
    from retrievers.engine.keeper import IndexKeeper

    with progress_bar(show_progress, plain) as progress, no_collection():
        result = IndexKeeper(engine, listener=progress_events(progress)).refresh()
    reap_worker_processes()  # the pools are done: their fork server (~33 MiB) goes before the question
    for note in result.notes:
        print(f"codeseek: note: {note}", file=sys.stderr)
    return result
