"""Phase 1 of a refresh, step by step: the workspace update, the chunks registered with the semantic
retriever, the call graph, the text index in step with the store, and the new snapshot with the
retrievers built over it. `SearchEngine._phase1` runs these in order; phase 2 (vectors) is
`retrievers.engine.embedding_phase`, and what a one-shot command does while it waits for it
(`wait_work`).

The first refresh in a process reconciles the text index and the vectors with the store's chunk ids
(a killed run leaves them behind or ahead); later refreshes apply the update's added and removed
chunks.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING

from indexing.chunk_table import ChunkTable, open_chunk_table, save_chunk_table
from indexing.integrity import is_disk_full
from indexing.records import Chunk, Definition
from indexing.workspace import StoreError, UpdateResult, Workspace
from retrievers.engine import derived as derived_structures
from retrievers.engine.graph_state import GraphState
from retrievers.engine.options import Progress, RefreshResult
from retrievers.snapshot import Snapshot
from retrievers.sources.graph_retriever import GraphRetriever
from retrievers.sources.structural import StructuralRetriever
from retrievers.sources.text import TextRetriever

if TYPE_CHECKING:
    from graph.callgraph import CallGraph
    from indexing.file_feed import FileFeed
    from indexing.persist import WriteBehind
    from indexing.store import IndexStore
    from retrievers.semantic.tiered import TieredSemantic

__all__ = ["build_graph", "build_view", "read_chunks", "register_chunks", "sync_text", "update_workspace",
           "wait_work"]



log = logging.getLogger(__name__)


def update_workspace(workspace: Workspace, out: RefreshResult, progress: Progress | None,
                     paths: Iterable[str] | None, feed: FileFeed | None = None,
                     graphs: GraphState | None = None) -> None:
    """Scan and parse (every file, or `paths`; `paths=[]`: nothing) into `out.update`, `feed` following
    the stored files (`indexing.file_feed`), the records a cold update kept handed to `graphs`
    (`indexing.record_log`); on a full disk, leave `out.update` None and tell the store's notices
    (every file is committed whole)."""
    wanted = None if paths is None else list(paths)
    if wanted is not None and not wanted:
        return

    def report(done: int, total: int, _path: str) -> None:
        if progress is not None:
            progress("indexing", done, total)

    try:
        out.update = workspace.update(progress=report, paths=wanted, feed=feed)
        if graphs is not None and out.update.records is not None:
            graphs.hand_over(out.update.records)
            out.update.records = None  # (held by the graph once built, not by the result)
    except (sqlite3.OperationalError, OSError, StoreError) as exc:
        if not is_disk_full(exc) and not is_disk_full(exc.__cause__ or exc):
            raise
        # Every file is committed whole: search what the index holds (issue 32).
        where = workspace.index_dir
        workspace.store.notice(f"no space left to update the index at {where}: answering "
                               "from the index as it is (free some space)")


SPLICE_MAX_FILES = 500  # more changed files than this: read every chunk again


def read_chunks(store: IndexStore, index_dir: Path, key: str | None,
                later: list[Callable[[], object]] | None, previous: Sequence[Chunk] | None = None,
                changed: Collection[str] = (), count: int | None = None) -> list[Chunk] | ChunkTable:
    """The store's chunks (in a `store.snapshot()`): the columns saved beside the index for `key` (the
    engine's derived key: this index revision and the code of its records) when an earlier process
    saved them, each chunk made when first read (`indexing.chunk_table`); else the list read from
    SQLite, whose columns are then saved for `key` (queued on `later`). Without `key` (a server's later
    refresh), `previous` (the last list read, when it was one) and the files that have `changed` since,
    the `previous` chunks of the other files with the changed files' read again, when that makes the
    store's `count` (else every chunk is read): on the Django sdist 0.05 s instead of 0.2 s."""
    derived = index_dir / "derived"
    if key:
        table = open_chunk_table(derived, key)
        if table is not None:
            return table
    elif isinstance(previous, list) and changed and len(changed) <= SPLICE_MAX_FILES:
        paths = set(changed)
        spliced = [c for c in previous if c.path not in paths] + store.chunks_in(sorted(paths))
        if len(spliced) == count:
            spliced.sort(key=attrgetter("id"))
            return spliced
    chunks = store.chunks()
    if key and not store.read_only:
        def save() -> None:
            save_chunk_table(derived, key, chunks)
        if later is not None:
            later.append(save)
        else:
            save()
    return chunks


def register_chunks(semantic: TieredSemantic, chunks: list[Chunk] | ChunkTable, update: UpdateResult | None,
                    synced: bool,
                    derived: Path, synced_key: str | None) -> None:
    """Tell the semantic retriever which chunks exist (no embedding yet): all of them on a first
    refresh (with the vectors saved under `derived` for `synced_key`), else the update's changes."""
    if not synced:
        semantic.index(chunks, embed=False, saved=derived if synced_key else None, stamp=synced_key or "")
    elif update is not None and update.changed:
        semantic.update(update.added, update.removed_ids, embed=False)


def build_graph(graphs: GraphState, store: IndexStore, root: Path, progress: Progress | None
                ) -> tuple[CallGraph | None, Mapping[int, Definition] | list[Definition]]:
    """The call graph (None when building it failed: search works without it) and the definitions it
    was built from, by id (a saved graph's are made as they are read: `indexing.definition_table`); the
    store's list when there is no graph."""
    graph = None
    if progress is not None:  # (outside the try: a progress callback may stop the refresh)
        progress("graph", 0, 1)
    try:
        # Built from the store's current definitions (cached per index generation): its
        # definitions serve the snapshot too, so they are read from SQLite once per refresh.
        graph = graphs.build()
    except sqlite3.DatabaseError:  # a damaged index: the caller rebuilds it (issue 13)
        raise
    except Exception:  # the graph serves references and priors: search works without it
        log.exception("building the call graph of %s failed", root)
    if progress is not None:
        progress("graph", 1, 1)
    if graph is not None:
        by_id = getattr(graph, "definition_map", None)  # (a saved graph's: graph.flat.SavedCallGraph)
        return graph, by_id() if by_id is not None else {d.id: d for d in graph.definitions()}
    with store.snapshot():
        return None, store.definitions()


def sync_text(text: TextRetriever, store: IndexStore, chunks: list[Chunk] | ChunkTable,
              update: UpdateResult | None, synced: bool, synced_key: str | None, owner: str) -> bool:
    """Bring the text index in step with the store; True when this reconciled it (a first refresh).
    `owner`: the store's identity, named by the text index's marker."""
    reconciled = False
    if not synced:
        # First refresh in this process: make the on-disk text index and the loaded vectors hold
        # exactly the store's chunks (index() re-adds only what differs). A text index that an
        # earlier process synced to this very revision, and whose identity marker says so, is
        # taken as it is; one from another index is rebuilt (retrievers.sources.text_identity).
        if synced_key is not None and store.get_meta("text.synced") == synced_key:
            text.adopt(chunks, owner, synced_key)
        else:
            text.index(chunks, owner)
        reconciled = True
    elif update is not None and update.changed:
        text.update(update.added, update.removed_ids)
    elif synced_key is None:
        owner = ""  # nothing written: the marker keeps the last sync it names
    if owner:
        text.mark(owner, synced_key or "")
    if synced_key is not None and not store.read_only and store.get_meta("text.synced") != synced_key:
        try:
            store.set_meta("text.synced", synced_key)
        except sqlite3.OperationalError as exc:  # a full disk: the next process reconciles instead
            if not is_disk_full(exc):
                raise
    return reconciled


def build_view(index_dir: Path, chunks: Sequence[Chunk] | ChunkTable,
               definitions: Mapping[int, Definition] | Iterable[Definition],
               graph: CallGraph | None, files: int, synced_key: str | None, file_cards: bool,
               later: list[Callable[[], object]] | None, previous: Snapshot | None = None
               ) -> tuple[Snapshot, StructuralRetriever, GraphRetriever | None]:
    """The new snapshot (built after `previous`, the one it replaces: its file cards' term counts seed
    the new cards) and the retrievers of its own: structural (its tables loaded or built,
    `retrievers.engine.derived`) and graph (None without a graph)."""
    snap = Snapshot.build(chunks, definitions, graph, files, previous)
    structural = StructuralRetriever(snap.definition_rows, snap.chunk_for_definition)
    derived_structures.load_or_build(index_dir, snap, structural, chunks, synced_key, file_cards, later)
    graph_retriever = None
    if graph is not None:
        held = graph
        graph_retriever = GraphRetriever(lambda: held, snap.chunk_id_at, snap.chunks.get)
    return snap, structural, graph_retriever


def wait_work(writes: WriteBehind | None, text: TextRetriever
              ) -> tuple[Callable[[], bool] | None, Callable[[float], object] | None]:
    """What a refresh does while it waits for its embedding (`EmbeddingPhase.finish`'s `meanwhile` and
    `beside`): a one-shot command (`writes`) writes the saves it held back that run on its own thread,
    then starts the text index's file documents on the core it leaves idle if the embedding should
    outlast them (`DeferredFiles.start_files_within`); anything else, nothing."""
    return (None, None) if writes is None else (writes.flush_alone, text.start_files_within)
