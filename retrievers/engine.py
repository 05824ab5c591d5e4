"""The search engine: the one entry point the CLI and the LSP server call.

`SearchEngine(workspace, options)` owns the four retrievers and keeps them in step with the store:

- `refresh(embed, progress, paths)`: phase 1 runs `workspace.update` and brings the text index, the
  structural index and the call graph up to date (searches answer from then on, without semantic);
  phase 2 embeds the chunks that have no cached vector. The first refresh in a process reconciles
  the text index and the vectors with the store's chunk ids (a killed run leaves them behind or
  ahead); later refreshes apply the update's added and removed chunks.
- `search(request) -> dict`: validate, classify the intent (or take the request's), route direct or
  fused (`retrievers.routing`), and build the result document (`retrievers.results`).

Thread-safety: the LSP server searches from request handlers while `refresh` runs on a worker thread.
Each refresh builds a new `Snapshot` (chunks, definitions, graph, PageRank) and a structural index of
its own, and swaps them in under a lock; a search takes the current pair once and reads only it. The
text and semantic retrievers are long-lived and guard themselves (tantivy readers see the last commit;
the vector index has its own lock). While vectors are missing, results say so in `index.state`; while
another thread loads the embedding model (the LSP server after a warm restart), fused searches rank
without semantic instead of waiting, and say so in `index.notes`.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from indexing.workspace import UpdateResult, Workspace
from retrievers import routing
from retrievers.base import Query, QueryError, RetrieverError
from retrievers.graph_retriever import GraphRetriever
from retrievers.intent import Intent, classify, override
from retrievers.priors import RankingConfig
from retrievers.request import PRESETS, CheckedRequest, SearchRequest, validate
from retrievers.results import Located, SourceCache, empty_result, result_entry
from retrievers.semantic import SemanticRetriever
from retrievers.snapshot import Snapshot
from retrievers.spans import MAX_SPAN_LINES, query_terms
from retrievers.structural import StructuralRetriever
from retrievers.text import TextRetriever
from retrievers.tiered import TierBlend, TieredSemantic

if TYPE_CHECKING:
    from retrievers.models import TextEmbedder

if TYPE_CHECKING:
    from graph.callgraph import CallGraph

__all__ = ["EngineOptions", "QueryError", "RefreshResult", "RetrieverError", "SearchEngine", "SearchRequest"]

log = logging.getLogger(__name__)
Progress = Callable[[str, int, int], None]  # (phase, done, total): ("indexing", 12, 84), ("embedding", ...)


@dataclass
class EngineOptions:
    """How the engine searches. `embedder` shares one loaded model between engines (tests, batch)."""

    model: str | None = None  # None: the static tier; a transformer by name (retrievers.models)
    # The transformer tier that fills in behind a static main tier (None or "": none). Its vectors
    # are made by `embed_transformer` (the server in the background, `codeseek index --transformer`)
    # and used wherever they exist; a transformer main model has no second tier.
    transformer: str | None = "minilm"
    transformer_embedder: TextEmbedder | None = None
    tier_blend: TierBlend = field(default_factory=TierBlend)
    # Load/save the call graph and PageRank beside the index (a warm process skips the build); the
    # language server, whose graph changes with every edit, keeps it in memory only.
    persist_graph: bool = True
    embeddings: bool = True  # False: no semantic retriever, the model is never loaded
    preset: str = "default"
    limit: int = 10
    ranking: RankingConfig = field(default_factory=RankingConfig)
    # Fused results: each further chunk of a file already listed is scored x file_decay**n
    # (0: strictly one result per file, the others folded under it; 1: no saturation).
    file_decay: float = 0.85
    # The parts of a function split into several chunks rank as one: "before" fusion (each retriever's
    # list keeps the definition once, at its best part's rank), "after" fusion (best part kept), "off".
    definition_grouping: str = "before"
    rrf_k: int | None = None  # one k for every preset (A/B runs); None: `preset_k`
    # The shipped RRF k per preset and weights per intent live in fusion.PRESETS / fusion.WEIGHTS
    # (tuned on the query sets, docs/design.md "Fusion in practice"); these override them (A/B runs).
    preset_k: dict[str, int] = field(default_factory=dict)  # preset name -> k; missing: fusion.PRESETS
    weights: dict[str, dict[str, float]] | None = None  # intent -> weights; None / missing: fusion.WEIGHTS
    embedder: TextEmbedder | None = None
    # A result longer than this many lines shows its best-matching part (retrievers.spans); 0: whole.
    max_span_lines: int = MAX_SPAN_LINES

    def __post_init__(self) -> None:
        if self.preset not in PRESETS:
            raise QueryError(f"unknown preset {self.preset!r}; expected one of: {', '.join(PRESETS)}")


@dataclass
class RefreshResult:
    """What one refresh did."""

    update: UpdateResult | None  # None when `paths=[]` (no workspace update asked)
    chunks: int = 0
    definitions: int = 0
    embedded: int = 0  # chunks embedded by this refresh
    pending: int = 0  # chunks still without a vector
    reconciled: bool = False  # the first refresh in this process checked the indexes against the store
    state: str = "empty"
    notes: list[str] = field(default_factory=list)  # e.g. the embedding model changed
    seconds: dict[str, float] = field(default_factory=dict)  # update, sync, graph, embed

    # Counters of the workspace update, for callers that summarize a refresh like an update.
    @property
    def parsed(self) -> int:
        return self.update.parsed if self.update else 0

    @property
    def unchanged(self) -> int:
        return self.update.unchanged if self.update else 0

    @property
    def scanned(self) -> int:
        return self.update.scanned if self.update else 0


class SearchEngine:
    """Retrievers kept in step with one workspace's index; `search` answers with the result schema."""

    def __init__(self, workspace: Workspace, options: EngineOptions | None = None) -> None:
        self.workspace = workspace
        self.options = options or EngineOptions()
        self._refresh_lock = threading.Lock()
        self._lock = threading.Lock()  # guards _view and _phase
        self._view: tuple[Snapshot, StructuralRetriever] | None = None
        self._phase = "empty"  # "indexing" / "embedding" while a refresh runs those phases
        self._synced = False
        self.text = TextRetriever(workspace.index_dir, workspace.chunk_text)
        self.semantic: TieredSemantic | None = None
        if self.options.embeddings:
            self.semantic = self._semantic(workspace)

    def _semantic(self, workspace: Workspace) -> TieredSemantic:
        from retrievers.models import make_embedder
        from retrievers.static_embedder import is_static_id

        opts = self.options
        fast = SemanticRetriever(workspace.store, workspace.chunk_text, opts.embedder or opts.model)
        deep = None
        if is_static_id(fast.model_id) and (opts.transformer or opts.transformer_embedder is not None):
            embedder = opts.transformer_embedder or make_embedder(opts.transformer)
            deep = SemanticRetriever(workspace.store, workspace.chunk_text, embedder,
                                     meta_prefix="embedding.deep")
        return TieredSemantic(fast, deep, opts.tier_blend)

    def close(self) -> None:
        self.text.close()

    def embed_transformer(self, progress: Progress | None = None,
                          should_stop: Callable[[], bool] | None = None) -> int:
        """Fill in the transformer tier, most valuable chunks first: source before tests, docs,
        examples and vendored code, then by PageRank. Returns how many chunks were embedded."""
        semantic = self.semantic
        if semantic is None or semantic.deep is None or not semantic.deep.pending():
            return 0
        with self._lock:
            view = self._view
        pagerank = view[0].pagerank if view is not None else {}

        def order(chunk: Any) -> tuple[int, float, str, int]:
            labels = chunk.labels or ("source",)
            tier = 0 if "source" in labels else 2 if {"vendor", "generated", "legacy"} & set(labels) else 1
            return tier, -pagerank.get(chunk.id, 0.0), chunk.path, chunk.start_line

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
        """Update the index (all files, or `paths`; `paths=[]`: none), then embed new chunks if `embed`."""
        with self._refresh_lock:
            out = RefreshResult(update=None)
            if self.semantic is not None and self.semantic.model_changed and not self._synced:
                out.notes.append(f"embedding model changed from {self.semantic.previous_model} to "
                                 f"{self.semantic.model_id}: every chunk is embedded again")
            self._set_phase("indexing" if self._view is None else self._phase)
            try:
                with self.workspace.store.writer.hold():  # one writing process per index (issue 13)
                    if self.workspace.changed_elsewhere():  # another process committed: resync all
                        self._synced = False
                    self._phase1(out, progress, paths)
                if embed and self.semantic is not None and self.semantic.pending():
                    self._set_phase("embedding")
                    started = time.perf_counter()
                    semantic = self.semantic

                    def report(done: int, total: int) -> None:
                        if progress is not None:
                            progress("embedding", done, total)

                    try:
                        prepare = getattr(semantic.embedder, "prepare", None)
                        if prepare is not None:  # a first-use model build reports its own phase
                            prepare(progress)
                        out.embedded = semantic.embed_pending(report)
                    except RetrieverError as exc:  # e.g. the model cannot load: search without it
                        log.warning("embedding failed: %s", exc)
                        out.notes.append(f"embeddings unavailable, searching without them: {exc}")
                    out.seconds["embed"] = time.perf_counter() - started
            finally:
                self._set_phase("done")
            out.pending = self.semantic.pending() if self.semantic is not None else 0
            if out.embedded or (out.reconciled and self.semantic is not None
                                and not self.semantic.fast.loaded_saved):
                self._save_vectors()
            out.state = self.index_info()["state"]
            return out

    def _save_vectors(self) -> None:
        """Save the tiers' vectors beside the index so the next process reads them in one go."""
        key = self.workspace.derived_key() if self.options.persist_graph else ""
        if key and self.semantic is not None:
            self.semantic.save(self.workspace.index_dir / "derived", key)

    def _set_phase(self, phase: str) -> None:
        with self._lock:
            self._phase = phase

    def _phase1(self, out: RefreshResult, progress: Progress | None, paths: Iterable[str] | None) -> None:
        wanted = None if paths is None else list(paths)
        started = time.perf_counter()
        if wanted is None or wanted:
            def report(done: int, total: int, _path: str) -> None:
                if progress is not None:
                    progress("indexing", done, total)

            out.update = self.workspace.update(progress=report, paths=wanted)
        out.seconds["update"] = time.perf_counter() - started
        if out.update is None and self._synced and self._view is not None:
            out.chunks, out.definitions = len(self._view[0].chunks), len(self._view[0].definitions)
            return
        started = time.perf_counter()
        store = self.workspace.store
        graph = None
        graph_started = time.perf_counter()
        try:
            # Built from the store's current definitions (cached per index generation): its
            # definitions serve the snapshot too, so they are read from SQLite once per refresh.
            if progress is not None:
                progress("graph", 0, 1)
            graph = self.workspace.call_graph(persist=self.options.persist_graph)
            if progress is not None:
                progress("graph", 1, 1)
        except sqlite3.DatabaseError:  # a damaged index: the caller rebuilds it (issue 13)
            raise
        except Exception:  # the graph serves references and priors: search works without it
            log.exception("building the call graph of %s failed", self.workspace.root)
        graph_seconds = time.perf_counter() - graph_started
        with store.snapshot():
            chunks = store.chunks()
            definitions = graph.definitions() if graph is not None else store.definitions()
            files = store.counts().get("files", 0)
        out.chunks, out.definitions = len(chunks), len(definitions)
        synced_key = (self.workspace.derived_key() or None) if self.options.persist_graph else None
        if not self._synced:
            # First refresh in this process: make the on-disk text index and the loaded vectors hold
            # exactly the store's chunks (index() re-adds only what differs). A text index that an
            # earlier process synced to this very revision is taken as it is.
            if synced_key is not None and store.get_meta("text.synced") == synced_key:
                self.text.adopt(chunks)
            else:
                self.text.index(chunks)
            if self.semantic is not None:
                derived = self.workspace.index_dir / "derived"
                self.semantic.index(chunks, embed=False, saved=derived if synced_key else None,
                                    stamp=synced_key or "")
            out.reconciled = True
        elif out.update is not None and out.update.changed:
            self.text.update(out.update.added, out.update.removed_ids)
            if self.semantic is not None:
                self.semantic.update(out.update.added, out.update.removed_ids, embed=False)
        if synced_key is not None and store.get_meta("text.synced") != synced_key:
            store.set_meta("text.synced", synced_key)
        out.seconds["sync"] = time.perf_counter() - started
        started = time.perf_counter()
        snap = Snapshot.build(chunks, definitions, graph, files)
        structural = StructuralRetriever(lambda: list(snap.definitions.values()), snap.chunk_for_definition)
        self._build_structural(structural, chunks, synced_key)
        out.seconds["graph"] = graph_seconds + time.perf_counter() - started
        with self._lock:
            self._view = (snap, structural)
        self._synced = True

    def _build_structural(self, structural: StructuralRetriever, chunks: list[Any], key: str | None) -> None:
        """Build the definition tables, or load those an earlier process saved for this revision."""
        from indexing.persist import SignedCache, code_fingerprint
        from retrievers import structural as structural_module
        from retrievers import tokenize

        cache = SignedCache(self.workspace.index_dir)
        if key is not None:
            key = f"{key}:{code_fingerprint(structural_module, tokenize)}"
        if key is not None and structural.import_state(cache.load("structural", key) or {}):
            return
        structural.index(chunks)
        if key is not None:
            cache.save("structural", key, structural.export_state())

    # -- state ---------------------------------------------------------------------------------------
    def index_info(self) -> dict[str, Any]:
        """The `index` part of a result: state, files, chunks, embedded, model."""
        with self._lock:
            view, phase = self._view, self._phase
        semantic = self.semantic
        embedded = semantic.embedded() if semantic is not None else 0
        if view is None:
            state = "indexing" if phase == "indexing" else "empty"
        elif phase == "embedding":
            state = "embedding"
        elif semantic is None or embedded == 0 or semantic.pending():
            state = "text-only" if view[0].chunks else "empty"
        else:
            state = "ready"
        snap = view[0] if view is not None else None
        info: dict[str, Any] = {
            "state": state, "files": snap.files if snap else 0, "chunks": len(snap.chunks) if snap else 0,
            "embedded": embedded, "model": semantic.model_id if semantic is not None else None}
        deep = semantic.deep_info() if semantic is not None else None
        if deep is not None:
            info["transformer"] = deep
        return info

    def call_graph(self) -> CallGraph | None:
        """The current snapshot's call graph (None before the first refresh, or if building it failed)."""
        with self._lock:
            view = self._view
        return view[0].graph if view is not None else None

    # -- search --------------------------------------------------------------------------------------
    def classify(self, text: str, intent_name: str | None) -> Intent:
        return override(intent_name, text) if intent_name else classify(text)

    def search(self, request: SearchRequest) -> dict[str, Any]:
        """Answer one request with the result schema (README.md "Result schema"); QueryError if invalid."""
        started = time.perf_counter()
        checked = validate(request)
        timings: dict[str, float] = {}
        t = time.perf_counter()
        intent = self.classify(checked.text, checked.intent)
        timings["classify"] = (time.perf_counter() - t) * 1000
        intent_doc = {"name": intent.name, "confidence": round(intent.confidence, 3), "source": intent.source}
        with self._lock:
            view = self._view
        if view is None:
            timings["total"] = (time.perf_counter() - started) * 1000
            return empty_result(checked.text, intent_doc, "fused", [], self.index_info(), timings)
        ctx = self._context(view, checked, intent, timings)
        strategy, modalities, located = "fused", [], []
        if not checked.modalities and intent.confidence >= routing.DIRECT_CONFIDENCE:
            answer = routing.direct(ctx)
            if answer is not None and answer[1]:
                strategy, modalities, located = "direct", [answer[0]], answer[1]
        if strategy == "fused":
            modalities, located = routing.fused(ctx)
        t = time.perf_counter()
        sources = SourceCache(self.workspace.read_bytes)
        terms = query_terms(checked.text) if self.options.max_span_lines > 0 else ()
        results = [result_entry(item, self.workspace.root, sources, view[0], terms,
                                self.options.max_span_lines) for item in located]
        timings["snippets"] = (time.perf_counter() - t) * 1000
        timings["total"] = (time.perf_counter() - started) * 1000
        doc = empty_result(checked.text, intent_doc, strategy, modalities, self.index_info(), timings)
        doc["results"] = results
        if ctx.errors:
            doc["index"]["errors"] = dict(ctx.errors)
        if ctx.notes:
            doc["index"]["notes"] = list(ctx.notes)
        return doc

    def _context(self, view: tuple[Snapshot, StructuralRetriever], checked: CheckedRequest, intent: Intent,
                 timings: dict[str, float]) -> routing.RouteContext:
        snap, structural = view
        graph = None
        call_graph = snap.graph
        if call_graph is not None:
            graph = GraphRetriever(lambda: call_graph, snap.chunk_id_at, snap.chunks.get)
        query = Query(checked.text, intent.name, intent.symbol, intent.exact, checked.scope.include,
                      checked.scope.exclude)
        return routing.RouteContext(
            checked, intent, query, snap, routing.Retrievers(self.text, structural, graph, self.semantic),
            self.options.ranking, _identifier_query(checked.text, intent), self.options.file_decay,
            self.options.definition_grouping, self.options.rrf_k, self.options.weights, timings,
            preset_k=self.options.preset_k)

    def retrieve(self, request: SearchRequest, modality: str, limit: int = 100) -> list[Located]:
        """One retriever's raw ranking for a request (no fusion, priors or dedupe): evaluation only."""
        checked = validate(request)
        intent = self.classify(checked.text, checked.intent)
        with self._lock:
            view = self._view
        if view is None:
            return []
        ctx = self._context(view, checked, intent, {})
        return routing.raw(ctx, modality, limit)


def _identifier_query(text: str, intent: Intent) -> bool:
    """True when the query is nothing but the identifier it names (`raise_for_status`, `def X`)."""
    if not intent.symbol or intent.name != "find_definition":
        return False
    bare = text.strip().strip("`?").removesuffix("()")
    words = bare.split()
    return len(words) == 1 or (len(words) == 2 and words[0].lower() in
                               ("def", "class", "func", "fn", "function", "struct", "interface"))

