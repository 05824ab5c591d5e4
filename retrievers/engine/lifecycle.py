"""The index lifecycle: one vocabulary for every front end (search results, `$/progress`, the LSP
`codeseek.status` command, the MCP `status` tool).

A root's index goes `starting` (opened, nothing indexed yet in this process) -> `indexing` (scan,
parse, text index, call graph) -> `embedding` (vectors for new chunks) -> `ready` (every chunk has a
vector) or `text-only` (no vectors: embeddings off, none yet, or some missing); `empty` when there is
nothing to index, `error` when the last job failed, `stopped` once the root is closed.

Two owners report it, with these words only: `SearchEngine.index_info()` (what the engine has
finished: `ENGINE_STATES`) and the index keeper's worker (`retrievers.engine.keeper.IndexKeeper`, one
per root, which knows what is running: `WORKER_STATES`). `reported` combines them for one root and
`least_advanced` for several roots.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Literal

IndexState = Literal["starting", "indexing", "embedding", "text-only", "ready", "empty", "error", "stopped"]

STARTING: Final = "starting"
INDEXING: Final = "indexing"
EMBEDDING: Final = "embedding"
TEXT_ONLY: Final = "text-only"
READY: Final = "ready"
EMPTY: Final = "empty"
ERROR: Final = "error"
STOPPED: Final = "stopped"

ENGINE_STATES: tuple[IndexState, ...] = (EMPTY, INDEXING, TEXT_ONLY, EMBEDDING, READY)  # index_info()
WORKER_STATES: tuple[IndexState, ...] = (STARTING, INDEXING, EMBEDDING, READY, ERROR, STOPPED)  # IndexKeeper
# Least advanced first: several roots report the first of their states in this order (others count
# as the least advanced).
PROGRESS_ORDER: tuple[IndexState, ...] = (ERROR, STARTING, INDEXING, EMBEDDING, TEXT_ONLY, READY)


def reported(worker: IndexState, engine: IndexState | None) -> IndexState:
    """One root's state: the worker's while it is not `ready` (a job runs, failed, or the root is
    starting or stopped), else what the engine has (`ready`, `text-only`, `empty`)."""
    if worker != READY:
        return worker
    return engine or READY


def least_advanced(states: Iterable[IndexState]) -> IndexState:
    """The state of several roots together: the least advanced one (`PROGRESS_ORDER`)."""
    rank = {s: i for i, s in enumerate(PROGRESS_ORDER)}
    return min(states, key=lambda s: rank.get(s, 0), default=EMPTY)
