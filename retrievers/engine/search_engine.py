"""The search engine: the one entry point the CLI and the LSP server call.

`SearchEngine(workspace, options)` owns the four retrievers and keeps them in step with the store:

- `refresh(embed, progress, paths)`: phase 1 runs `workspace.update` and brings the text index, the
  structural index and the call graph (its one holder: `self.graphs`, `retrievers.engine.graph_state`) up
  to date (searches answer from then on, without semantic: `retrievers.engine.index_phase`); phase 2
  embeds the chunks that have no cached vector (when one refresh does both, on a thread beside phase 1:
  `retrievers.engine.embedding_phase`). Who runs refreshes, and when: `retrievers.engine.keeper`.
- `search(request) -> SearchAnswer`: validate (the scope is built once, here, unless the front end
  did so already with `retrievers.engine.request.validate`), classify the intent (or take the
  request's), take the preset's `RankingProfile` (`retrievers.ranking.profile`), route direct
  (`retrievers.engine.direct_route`) or fused (`retrievers.engine.fused_route`), and build the answer
  (`retrievers.engine.results`; its records, which write the result schema: `retrievers.engine.answer`).

Thread-safety: the LSP server searches from request handlers while `refresh` runs on a worker thread.
Each refresh builds a new `Snapshot` (chunks, definitions, graph, PageRank) with a structural index
and a graph retriever of its own, and swaps them in under a lock; a search takes the current view
once and reads only it. The text and semantic retrievers are long-lived and guard themselves (tantivy
readers see the last commit; the vector index has its own lock). While vectors are missing, results
say so in `index.state`; while another thread loads the embedding model (the LSP server after a warm
restart), fused searches rank without semantic instead of waiting, and say so in `index.notes`.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indexing.gc_pause import paused_collection
from indexing.persist import WriteBehind
from indexing.switch_interval import short_switch_interval
from indexing.workspace import Workspace
from retrievers.base import Query, QueryError, RetrieverError
from retrievers.engine import direct_route, fused_route, index_phase
from retrievers.engine.answer import SearchAnswer
from retrievers.engine.embedding_phase import EmbeddingPhase
from retrievers.engine.fill_order import fill_key
from retrievers.engine.graph_state import GraphState
from retrievers.engine.lifecycle import EMBEDDING, EMPTY, INDEXING, READY, TEXT_ONLY, IndexState
from retrievers.engine.options import EngineOptions, Progress, RefreshResult
from retrievers.engine.request import CheckedRequest, SearchRequest, validate
from retrievers.engine.results import Located, SourceCache, build_answer, lookup_match, result_entry
from retrievers.engine.retirement import Retirement
from retrievers.engine.route_context import Retrievers, RouteContext, identifier_query
from retrievers.engine.spans import query_terms
from retrievers.ranking.intent import Intent, classify, override
from retrievers.ranking.profile import PROFILES, profile, with_overrides
from retrievers.semantic.retriever import SemanticRetriever
from retrievers.semantic.tiered import TieredSemantic
from retrievers.snapshot import Snapshot
from retrievers.sources.text import TextRetriever
from retrievers.sources.text_feed import TextFeed

if TYPE_CHECKING:
    from graph.callgraph import CallGraph
    from indexing.records import Chunk

__all__ = ["EngineOptions", "QueryError", "RefreshResult", "RetrieverError", "SearchAnswer", "SearchEngine",
           "SearchRequest"]

log = logging.getLogger(__name__)


class SearchEngine:
    """Retrievers kept in step with one workspace's index; `search` answers with the result schema."""

    def __init__(self, workspace: Workspace, options: EngineOptions | None = None) -> None:
        self.workspace = workspace
        self.options = options or EngineOptions()
        self.profiles = {name: with_overrides(p, self.options.ranking) for name, p in PROFILES.items()}
        self._refresh_lock = threading.Lock()
        self._lock = threading.Lock()  # guards _view and _running
        self._view: tuple[Snapshot, Retrievers] | None = None  # one refresh's snapshot and retrievers
        self._running: IndexState | None = None  # INDEXING (a first refresh) / EMBEDDING while it runs
        self._synced = False
        self._chunks_read: list[Chunk] | None = None  # the last refresh's chunks, when read as a list
        self._retired = Retirement()  # views a refresh replaced, until taken apart
        self.searched_at = 0.0  # time.monotonic() when a search last began or ended (0.0: none yet)
        self._writes = WriteBehind() if self.options.write_behind else None
        later = self._writes.writes if self._writes is not None else None
        self.graphs = GraphState(workspace, self.options.persist_graph, later,  # the call graph's holder
                                  self.options.incremental_graph)
        self.text = TextRetriever(workspace.index_dir, workspace.chunk_text, read_file=workspace.read_bytes)
        self.text.defer_files(later)  # (a one-shot command's cold build writes the exact-string index last)
        self.semantic: TieredSemantic | None = None
        if self.options.embeddings:
            self.semantic = self._semantic(workspace)

    def _semantic(self, workspace: Workspace) -> TieredSemantic:
        from retrievers.semantic.models import make_embedder
        from retrievers.semantic.static_embedder import is_static_id

        opts = self.options
        fast = SemanticRetriever(workspace.store, workspace.chunk_text, opts.embedder or opts.model,
                                 files=workspace)
        deep = None
        if is_static_id(fast.model_id) and (opts.transformer or opts.transformer_embedder is not None):
            embedder = opts.transformer_embedder or make_embedder(opts.transformer)
            deep = SemanticRetriever(workspace.store, workspace.chunk_text, embedder,
                                     meta_prefix="embedding.deep")
            share = getattr(fast.embedder, "read_questions_with", None)
            if share is not None:  # one MiniLM reads questions and embeds the transformer tier
                share(embedder)
        return TieredSemantic(fast, deep, opts.tier_blend)

    def close(self) -> None:
        """Done with this engine: write what `write_behind` held back, and release the text index's
        writer. With writes held back, the view and the vectors are let go first (pickling the call
        graph needs ~100 MB of its own on the Django sdist), and the models the options' embedders loaded
        (reloaded if asked again); a search after that answers as one before the first refresh does."""
        self._save_pooled()
        if self._writes is not None and self._writes.writes:
            with self._lock:
                self._view = None
            self.semantic = None
        if self._writes is not None:  # (a one-shot command: the options keep the embedders, ~40 MiB)
            for embedder in (self.options.embedder, self.options.transformer_embedder):
                release = getattr(embedder, "release", None)
                if release is not None:
                    release()
        self.flush_writes()
        self.text.close()
        self._retired.close()

    def _save_pooled(self) -> None:
        """Save the transformer vectors questions' pools added (`TierBlend.question_pool`), so the next
        process reads them with the rest instead of from the cache."""
        if self.semantic is not None and self.semantic.pooled_unsaved:
            self._save_vectors(transformer_only=True)

    def flush_writes(self) -> int:
        """Write the saved structures `write_behind` queued (how many files); 0 without it."""
        return self._writes.flush() if self._writes is not None else 0

    def embed_transformer(self, progress: Progress | None = None,
                          should_stop: Callable[[], bool] | None = None, first: Collection[str] = ()) -> int:
        """Fill in the transformer tier, most valuable chunks first (`retrievers.engine.fill_order`: the
        files in `first`, the editor's open ones, then source before tests, docs and vendored code,
        definitions before module code, rare words first). Returns how many chunks were embedded."""
        semantic = self.semantic
        if semantic is None or semantic.deep is None or not semantic.deep.pending():
            return 0
        with self._lock:
            view = self._view
        snap = view[0] if view is not None else None
        order = fill_key(snap, self.workspace.chunk_text, first)

        def report(done: int, total: int) -> None:
            if progress is not None:
                progress("transformer", done, total)

        try:
            made = semantic.embed_deep(report, should_stop, order)
        except RetrieverError as exc:  # the transformer cannot load: the static tier carries on
            log.warning("transformer embedding failed: %s", exc)
            return 0
        if made:
            self._save_vectors()
        return made

    # -- refresh -------------------------------------------------------------------------------------
    def refresh(self, embed: bool = True, progress: Progress | None = None,
                paths: Iterable[str] | None = None) -> RefreshResult:
        """Update the index (all files, or `paths`; `paths=[]`: none), then embed new chunks if `embed`.
        The cyclic collector pauses meanwhile (`indexing.gc_pause`), and threads switch more often
        (`indexing.switch_interval`)."""
        with self._refresh_lock, paused_collection(), short_switch_interval():
            self.flush_writes()  # what an earlier refresh held back (write_behind) goes first
            out = RefreshResult(update=None)
            if self.semantic is not None and self.semantic.model_changed and not self._synced:
                out.notes.append(f"embedding model changed from {self.semantic.previous_model} to "
                                 f"{self.semantic.model_id}: every chunk is embedded again")
            if self._view is None:
                self._set_running(INDEXING)
            # A read-only index is searched with the vectors it holds: embedding more would write.
            semantic = self.semantic if embed and not self.workspace.store.read_only else None
            phase = EmbeddingPhase(semantic, out, progress) if semantic is not None else None
            try:
                with self.workspace.store.writer.hold():  # one writing process per index (issue 13)
                    if self.workspace.changed_elsewhere():  # another process committed: resync all
                        self._synced = False
                    try:
                        self._phase1(out, progress, paths, phase)
                    except BaseException:
                        if phase is not None:
                            phase.stop()
                        raise
                if phase is not None and (phase.started or phase.semantic.pending()):
                    self._set_running(EMBEDDING)
                    # (a one-shot command writes what it held back while the vectors are made)
                    phase.finish(*index_phase.wait_work(self._writes, self.text))
            finally:
                self._set_running(None)
            out.pending = self.semantic.pending() if self.semantic is not None else 0
            if out.embedded or (out.reconciled and self.semantic is not None
                                and not self.semantic.fast.loaded_saved):
                self._save_vectors()
            out.state = self.index_info()["state"]
            if self.options.persist_once:  # later refreshes keep their graphs in memory only
                self.graphs.persist = False
            if self.options.freeze_after_refresh:
                gc.freeze()  # (still inside the pause: EngineOptions.freeze_after_refresh)
            return out

    def _save_vectors(self, transformer_only: bool = False) -> None:
        """Save the tiers' vectors (or the transformer tier's only) beside the index so the next
        process reads them in one go."""
        key = self.graphs.derived_key() if self.graphs.persist else ""
        if key and self.semantic is not None:
            save = self.semantic.save_deep if transformer_only else self.semantic.save
            save(self.workspace.index_dir / "derived", key)

    def _set_running(self, state: IndexState | None) -> None:
        with self._lock:
            self._running = state

    def _phase1(self, out: RefreshResult, progress: Progress | None, paths: Iterable[str] | None,
                embedding: EmbeddingPhase | None = None) -> None:
        """The workspace update, then the indexes and a new view in step with the store
        (`retrievers.engine.index_phase`); with `embedding`, phase 2 starts beside the graph."""
        started = time.perf_counter()
        # (the chunks last read, spliced with the changed files' by `read_chunks`: not after an update
        # that failed, whose files committed before it failed no later update names)
        previous, self._chunks_read = self._chunks_read, None
        # (a first refresh builds an empty text index as the files are stored: `sources.text_feed`)
        owner = self.workspace.store.get_meta("generation") or ""
        feed = None if self._synced else TextFeed(self.text, owner)
        index_phase.update_workspace(self.workspace, out, progress, paths, feed, self.graphs)
        out.seconds["update"] = time.perf_counter() - started
        unchanged = out.update is None or not out.update.changed
        if unchanged and self._synced and self._view is not None:  # the view in step with the store stays
            self._chunks_read = previous
            out.chunks, out.definitions = len(self._view[0].chunks), len(self._view[0].definitions)
            return
        started = time.perf_counter()
        store = self.workspace.store
        # (the writer lock is held: the revision the key names is the one read here)
        synced_key = (self.graphs.derived_key() or None) if self.graphs.persist else None
        update = out.update
        changed = [*update.changed_paths, *update.removed_paths] \
            if update is not None and self._synced else []
        with store.snapshot():
            counts = store.counts()
            chunks = index_phase.read_chunks(store, self.workspace.index_dir, synced_key, self.graphs.later,
                                             previous, changed, counts.get("chunks"))
            files = counts.get("files", 0)
        self._chunks_read = chunks if isinstance(chunks, list) else None  # (the next refresh splices them)
        owner = store.get_meta("generation") or ""  # the store's identity, named by the text index's marker
        if self.semantic is not None:  # (the text index is reconciled below, after the graph)
            index_phase.register_chunks(self.semantic, chunks, out.update, self._synced,
                                        self.workspace.index_dir / "derived", synced_key)
        if embedding is not None and self.options.embed_alongside:
            embedding.start()  # beside the graph and the text index (retrievers.engine.embedding_phase)
        graph_started = time.perf_counter()
        graph, definitions = index_phase.build_graph(self.graphs, store, self.workspace.root, progress)
        graph_seconds = time.perf_counter() - graph_started
        out.chunks, out.definitions = len(chunks), len(definitions)
        out.reconciled = index_phase.sync_text(self.text, store, chunks, out.update, self._synced, synced_key,
                                               owner)
        out.seconds["sync"] = time.perf_counter() - started
        started = time.perf_counter()
        file_cards = any(p.priors.file_card_weight > 0 for p in self.profiles.values())
        snap, structural, graph_retriever = index_phase.build_view(
            self.workspace.index_dir, chunks, definitions, graph, files, synced_key, file_cards,
            self.graphs.later, self._view[0] if self._view else None)
        fused_route.prepare(snap, self.profiles.values())  # (no first search on it waits for them)
        out.seconds["graph"] = graph_seconds + time.perf_counter() - started
        with self._lock:  # (the old view is taken apart in small steps: searches meanwhile wait ms)
            self._retired.hold(self._view)
            self._view = (snap, Retrievers(self.text, structural, graph_retriever, self.semantic))
        self._synced = True
        self._retired.sweep()

    # -- state ---------------------------------------------------------------------------------------
    def index_info(self) -> dict[str, Any]:
        """The `index` part of a result: state (`retrievers.engine.lifecycle.ENGINE_STATES`), files, chunks,
        embedded, model."""
        with self._lock:
            view, running = self._view, self._running
        semantic = self.semantic
        embedded = semantic.embedded() if semantic is not None else 0
        state: IndexState
        if view is None:
            state = INDEXING if running == INDEXING else EMPTY
        elif running == EMBEDDING:
            state = EMBEDDING
        elif semantic is None or embedded == 0 or semantic.pending():
            state = TEXT_ONLY if view[0].chunks else EMPTY
        else:
            state = READY
        snap = view[0] if view is not None else None
        info: dict[str, Any] = {
            "state": state, "files": snap.files if snap else 0, "chunks": len(snap.chunks) if snap else 0,
            "embedded": embedded, "model": semantic.model_id if semantic is not None else None}
        deep = semantic.deep_info() if semantic is not None else None
        if deep is not None:
            info["transformer"] = deep
        return info

    def call_graph(self) -> CallGraph | None:
        """The call graph of the last refresh that built one (None before the first)."""
        return self.graphs.current

    # -- search --------------------------------------------------------------------------------------
    def classify(self, text: str, intent_name: str | None) -> Intent:
        return override(intent_name, text) if intent_name else classify(text)

    def search(self, request: SearchRequest | CheckedRequest) -> SearchAnswer:
        """Answer one request (`SearchAnswer.to_json()`: the result schema, README.md "Result schema");
        QueryError if invalid. A `CheckedRequest` (a front end validated it) is not checked again.

        The cyclic collector waits while it runs (`gc_pause`): a search makes thousands of short-lived
        objects, which reference counting frees, and the collections they would trigger walk the young
        generations, now and then the whole index (Django `django/`: p50 3.31 -> 3.18 ms, and no more
        ~90 ms searches, in a process that has not frozen its index out of the collector as the
        language server does)."""
        checked = validate(request)
        self.searched_at = time.monotonic()  # (the keeper's long steps wait for a pause: quiet_gate)
        with paused_collection(), self._retired.reading():  # (a retired view's teardown waits)
            found = self._search(checked)
        self.searched_at = time.monotonic()
        bad = self.workspace.take_mismatched()
        if bad and not self._refresh_lock.locked():
            # Chunk rows that do not match their file's bytes (`Workspace.chunk_text`) gave no text:
            # re-index those files now and answer again, rather than answer from wrong offsets.
            logging.getLogger("codeseek.index").warning(
                "the index's records of %d file(s) did not match their bytes (%s); re-indexing them",
                        len(bad), ", ".join(bad[:3]))
            self.refresh(embed=False, paths=bad)
            with paused_collection(), self._retired.reading():
                found = self._search(checked)
        return found

    def _search(self, checked: CheckedRequest) -> SearchAnswer:
        started = time.perf_counter()
        timings: dict[str, float] = {}
        t = time.perf_counter()
        intent = self.classify(checked.text, checked.intent)
        timings["classify"] = (time.perf_counter() - t) * 1000
        intent_doc = {"name": intent.name, "confidence": round(intent.confidence, 3), "source": intent.source}
        with self._lock:
            view = self._view
        if view is None:
            timings["total"] = (time.perf_counter() - started) * 1000
            return build_answer(checked.text, checked.preset, intent_doc, "fused", [], self.index_info(),
                                timings)
        ctx = self._context(view, checked, intent, timings)
        strategy, modalities, located = "fused", [], []
        if direct_route.applies(ctx):
            answer = direct_route.direct(ctx)
            if answer is not None and answer[1]:
                strategy, modalities, located = "direct", [answer[0]], answer[1]
        if strategy == "fused":
            modalities, located = fused_route.fused(ctx)
        t = time.perf_counter()
        sources = SourceCache(self.workspace.read_bytes)
        terms = query_terms(checked.text) if self.options.max_span_lines > 0 else ()
        results = [result_entry(item, self.workspace.root, sources, view[0], terms,
                                self.options.max_span_lines) for item in located]
        timings["snippets"] = (time.perf_counter() - t) * 1000
        timings["total"] = (time.perf_counter() - started) * 1000
        subject = intent.exact if intent.name == "exact_match" else intent.symbol
        index = self.index_info()
        if ctx.errors:
            index["errors"] = dict(ctx.errors)
        if ctx.notes:
            index["notes"] = list(ctx.notes)
        return build_answer(checked.text, checked.preset, intent_doc, strategy, modalities, index, timings,
                            lookup_match(intent.name, subject, ctx.matched), max(ctx.total, len(results)),
                            results)

    def _context(self, view: tuple[Snapshot, Retrievers], checked: CheckedRequest, intent: Intent,
                 timings: dict[str, float]) -> RouteContext:
        snap, retrievers = view
        query = Query(checked.text, intent.name, intent.symbol, intent.exact)
        return RouteContext(checked=checked, intent=intent, query=query, snap=snap, retrievers=retrievers,
                            profile=profile(checked.preset, self.profiles),
                            identifier_query=identifier_query(checked.text, intent), timings=timings,
                            root_parts=Path(self.workspace.root).parts[1:])

    def retrieve(self, request: SearchRequest, modality: str, limit: int = 100) -> list[Located]:
        """One retriever's raw ranking for a request, chunk by chunk, with no fusion, priors or dedupe
        (evaluation only)."""
        checked = validate(request)
        intent = self.classify(checked.text, checked.intent)
        with self._lock:
            view = self._view
        if view is None:
            return []
        ctx = self._context(view, checked, intent, {})
        hits = ctx.search(modality, ctx.query, limit)
        chunks = ctx.snap.chunks
        return [Located(chunks[hit.chunk_id], hit.score, {modality: {"rank": rank, "raw": hit.score}})
                for rank, hit in enumerate(hits, 1) if hit.chunk_id in chunks]
