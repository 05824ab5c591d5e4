"""The one holder of a workspace's call graph: built from the store, cached per index change, persisted.

`indexing/` keeps the records and `graph/` builds a `CallGraph` from them; neither knows the other's
orchestration. `GraphState(workspace, persist)` sits above both: `build()` returns the graph of the
index as it is now, built once per index generation (`Workspace.generation`: an update that changed
something, or changes another process committed). With `persist`, a graph an earlier process saved
for the same index revision and the same graph code (`derived_key()`) is loaded instead of built
(`indexing.persist.SignedCache`), and a built one is saved with its PageRank: a warm process skips the
build. A build saves what a warm process reads: the flat form (`graph.flat`: PageRank, neighbours,
definitions, name tables) and the caller arrays (`graph.caller_arrays`). The whole graph's pickle
(with its definitions and, apart, its unresolved call sites) serves the few questions those cannot
answer (re-exports, navigation by position, the networkx view): the first process that needs it
builds the graph from the store and saves it then, so a cold build does not pickle ~30 MB nobody may
read (the Django sdist: 0.9 s of every cold command). Never with unsaved buffers open (their records
are not in any saved revision). `later` (a `WriteBehind`'s list) queues the saves instead of writing
them before the graph is returned.

`SearchEngine` owns one and hands its graph to each `Snapshot`; front ends read it through
`SearchEngine.call_graph()`. Commands that only need the graph (`codeseek graph`) make their own.
"""

from __future__ import annotations

import gc
import logging
import pickle
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from indexing.persist import SignedCache, code_fingerprint, holds_memory
from indexing.records import Definition
from indexing.workspace import Workspace

if TYPE_CHECKING:
    from graph.callgraph import CallGraph
    from graph.incremental import GraphInputs
    from graph.symbol_index import Resolution
    from indexing.record_log import StoredRecords
    from indexing.records import CallSite, Import

log = logging.getLogger(__name__)
UNRESOLVED = "callgraph-unresolved"  # saved apart from the graph (CallGraph.without_unresolved)
DEFINITIONS = "callgraph-definitions"  # what a graph opened from its flat form holds (graph.flat)

__all__ = ["GraphState", "graph_code"]


class GraphState:
    """The call graph of one workspace's index (see the module docstring)."""

    def __init__(self, workspace: Workspace, persist: bool = False,
                 later: list[Callable[[], object]] | None = None, incremental: bool = False) -> None:
        self.workspace = workspace
        self.persist = persist
        self.later = later
        self.incremental = incremental  # keep each build's inputs, so the next one can reuse them
        self._inputs: GraphInputs | None = None
        self._built: tuple[str, CallGraph] | None = None  # the last whole build here and its store's key
        self._lock = threading.Lock()
        self._graph: CallGraph | None = None
        self._generation = -1
        self.loaded = False  # the current graph came from the saved copy (not built here)
        self._handed: StoredRecords | None = None  # a cold update's records (`hand_over`)

    @property
    def current(self) -> CallGraph | None:
        """The last graph built or loaded (None before the first): while a new one is built, and if that
        fails, readers keep the previous one."""
        return self._graph

    def build(self) -> CallGraph:
        """The graph of the index as it is now (built or loaded once per index generation)."""
        from graph.callgraph import build_call_graph  # an unchanged tree with a saved graph never loads it

        ws = self.workspace
        with self._lock:
            generation = ws.generation
            if self._graph is not None and self._generation == generation:
                return self._graph
            key = self.derived_key() if self.persist else ""
            cache = SignedCache(ws.index_dir, self.later)
            graph = self._open_saved(cache, key) if key else None
            self.loaded = graph is not None
            if graph is None:
                graph = self._build_next(build_call_graph) if self.incremental else \
                    self._build_from_store(build_call_graph)
                if key:
                    graph.pagerank  # noqa: B018 (computed before saving, so it is saved too)
                    self._save(cache, key, graph)
            self._graph, self._generation = graph, generation
            self._handed = None  # (kept records serve the build after their update, or none)
            return graph

    @property
    def primable(self) -> bool:
        """Whether `prime` would do anything: incremental builds, and a loaded graph without inputs."""
        return self.incremental and self._inputs is None and self.loaded

    def prime(self) -> bool:
        """Read and resolve what an incremental build starts from, when the graph in use was loaded (a
        saved graph carries no inputs): the first edit after a warm start is then built incrementally
        (~1 s on the Django sdist), not whole (~5 s). The loaded graph stays in use. Whether it primed."""
        from graph.callgraph import build_call_graph

        with self._lock:
            if not self.primable:
                return False
            started = time.perf_counter()
            self._build_next(build_call_graph)  # (no inputs: a whole build, kept as the next one's base)
            log.info("call graph of %s primed for incremental builds in %.2f s", self.workspace.root,
                     time.perf_counter() - started)
            return True

    def _open_saved(self, cache: SignedCache, key: str) -> CallGraph | None:
        """The graph saved for `key`: opened from its flat arrays when they are there (`graph.flat`:
        the rest loads on first use), else the whole pickle (then the flat form is saved for the next
        process); None when nothing usable is saved."""
        from graph.flat import SavedCallGraph, open_flat

        arrays = open_flat(cache.folder, key)
        if arrays is not None:
            from graph.caller_arrays import open_callers

            count = len(arrays["ids"])
            return SavedCallGraph(arrays, lambda: cache.load(DEFINITIONS, key),
                                  lambda defs: self._load_whole(cache, key, defs),
                                  lambda: open_callers(cache.folder, key, count))
        if not (cache.holds(UNRESOLVED, key) and cache.holds("callgraph", key)
                and cache.holds(DEFINITIONS, key)):
            return None
        graph = self._read_whole(cache, key, None)
        if graph is not None:
            self._save(cache, key, graph)
        return graph

    def _read_whole(self, cache: SignedCache, key: str,
                    defs: Mapping[int, Definition] | None) -> CallGraph | None:
        """The pickled graph, its definitions taken from `defs` (else read from their own file: the graph
        names them by id, `_save_whole`); None when either is missing or they do not fit."""
        if not (cache.holds(UNRESOLVED, key) and cache.holds("callgraph", key)):
            return None
        if defs is None:
            saved = cache.load(DEFINITIONS, key)
            if not isinstance(saved, list):
                return None
            defs = {d.id: d for d in saved}

        def definition(def_id: int) -> Definition:
            try:
                return defs[def_id]
            except (KeyError, TypeError):
                raise pickle.UnpicklingError(f"no saved definition {def_id!r}") from None
        graph = cache.load("callgraph", key, refs=definition)
        if graph is not None:
            graph.unresolved_from(lambda: self._load_unresolved(cache, key))
        return graph  # type: ignore[no-any-return]

    def _load_whole(self, cache: SignedCache, key: str,
                    defs: Mapping[int, Definition] | None = None) -> CallGraph:
        """The whole graph behind a `SavedCallGraph`: its pickle, else the one `prime` built from this
        revision (a server's GraphState that has not primed yet primes now), else built from the store
        (over `defs`, the definitions already handed out, while the store still holds `key`'s
        revision) and saved for the next process that needs it. In a process that froze what its
        refresh loaded (`gc.freeze`: the CLI, the servers' memory release), the graph, loaded later by
        a search, is frozen too: left to the collector, its millions of objects cost the Django sdist's
        CLI 3 s of collections and the one at exit."""
        from graph.callgraph import build_call_graph

        graph = self._read_whole(cache, key, defs)
        if graph is None and self.incremental and self._inputs is None:
            with self._lock:  # a server that has not primed yet: this build primes it (`prime`)
                if self._inputs is None:
                    self._build_next(build_call_graph)
        built = self._built  # (a primed or incremental build's, when of this very revision)
        if graph is None and built is not None and built[0] == key:
            graph = built[1]
        if graph is None:
            log.info("building the whole call graph of %s (not saved yet)", self.workspace.root)
            with self.workspace.store.snapshot():
                same = self.derived_key() == key
                definitions, calls, imports = self._records()
            if same and defs is not None and [d.id for d in definitions] == list(defs):
                definitions = [defs[d.id] for d in definitions]  # (the objects already handed out)
            graph = build_call_graph(definitions, calls, imports)
            if same and self.persist:
                self._save_whole(cache, key, graph)
        if gc.get_freeze_count():
            gc.freeze()
        return graph  # type: ignore[no-any-return]

    def _save(self, cache: SignedCache, key: str, graph: CallGraph) -> None:
        """Save a built graph for `key`: its caller arrays (`graph.caller_arrays`), then its flat form
        (`graph.flat`), in one step. Each folder is renamed into place whole: a reader that finds the
        flat form without the caller arrays loads the whole graph for what they would answer, and one
        that finds no flat form reads no caller arrays. The caller arrays are written and let go
        before the flat form is made (but for the neighbour lists it takes from them): held together,
        the two were the highest point of a cold command on sympy (+~25 MiB)."""
        from graph.caller_arrays import NEIGHBOURS, caller_arrays, save_callers
        from graph.flat import save_flat

        @holds_memory  # (not in the wait for the embedding: after the answer)
        def save() -> bool:
            for legacy in cache.folder.glob("callgraph-callers-*.pickle"):  # (an earlier version's)
                legacy.unlink(missing_ok=True)
            arrays = caller_arrays(graph)
            save_callers(cache.folder, key, arrays)
            neighbours = {name: arrays[name] for name in NEIGHBOURS}
            del arrays
            return save_flat(cache.folder, key, graph, neighbours)
        self._queue(save)

    def _save_whole(self, cache: SignedCache, key: str, graph: CallGraph) -> None:
        """Save the whole graph for `key`: its unresolved call sites and its definitions, then the graph
        naming each of its definitions by id (read again from their own file: `_read_whole`), which
        needs those before it: a reader checks they are there."""
        head, unresolved = graph.without_unresolved()
        own = graph.index.defs

        def definition_id(obj: object) -> int | None:
            return obj.id if type(obj) is Definition and own.get(obj.id) is obj else None  # type: ignore[attr-defined]
        if cache.save(UNRESOLVED, key, unresolved) and cache.save(DEFINITIONS, key, graph.definitions()):
            cache.save("callgraph", key, head, refs=definition_id)

    def _queue(self, write: Callable[[], object]) -> None:
        if self.later is not None:
            self.later.append(write)
        else:
            write()

    def _build_from_store(self, build: Callable[..., CallGraph]) -> CallGraph:
        with self.workspace.store.snapshot():
            records = self._records()
        return build(*records)

    def hand_over(self, records: StoredRecords | None) -> None:
        """Records a cold update kept (`indexing.record_log`): the next build reads them instead of the
        store's, if the store is still at their revision."""
        self._handed = records

    def _records(self) -> tuple[list[Definition], list[CallSite], list[Import]]:
        """Every definition, call site and import of the store (in the caller's `store.snapshot()`):
        those handed over while the store is at their revision (once), else read."""
        handed, self._handed = self._handed, None
        if handed is not None and handed.revision == self.workspace.revision:
            return handed.definitions, handed.calls, handed.imports
        store = self.workspace.store
        return store.definitions(), store.calls(), store.imports()

    def _build_next(self, build: Callable[..., CallGraph]) -> CallGraph:
        """Build from the store, reusing what the last build here read and resolved where it still
        holds (`graph.incremental`: only the changed files' records are read, only the call sites
        they could affect resolved again); the last graph itself when no file changed. An incremental
        build that fails is logged and made whole instead: the graph stays the index's."""
        from graph.incremental import GraphInputs

        store, last = self.workspace.store, self._inputs
        step, whole, graph = None, None, None
        with store.snapshot():
            read_key = self._key_read()
            stamps = store.file_stamps()
            changed = last.changed_paths(stamps) if last is not None else None
            if last is not None and changed is not None:
                if not changed and self._graph is not None:
                    return self._graph
                step = last.next(stamps, changed, store.records_for(changed))
            if step is None:
                whole = GraphInputs(stamps, *self._records(), [])
        self._inputs = None  # (a failed build leaves nothing half made to reuse)
        known: list[Resolution | None] | None = None
        if step is not None:
            inputs, known, reuse = step
            log.debug("call graph of %s: %d changed files, %d of %d call sites resolved again",
                      self.workspace.root, len(changed or ()), known.count(None), len(known))
            try:
                graph = build(inputs.definitions, inputs.calls, inputs.imports, known=known,
                              resolved=inputs.resolutions, reuse=reuse)
            except Exception:
                log.exception("the incremental call graph build of %s failed: building it whole",
                              self.workspace.root)
        if graph is None:
            known = None
            if whole is None:  # (the incremental build failed: read the store as it is now)
                with store.snapshot():
                    read_key = self._key_read()
                    whole = GraphInputs(store.file_stamps(), *self._records(), [])
            inputs = whole
            graph = build(inputs.definitions, inputs.calls, inputs.imports, resolved=inputs.resolutions)
        inputs.graph = graph
        inputs.share_resolutions(known)
        graph.index.fold_names()  # (a server's: its searches do not make them; the next patch keeps them)
        self._inputs = inputs
        self._built = (read_key, graph)
        return graph

    def _key_read(self) -> str:
        """`derived_key()` of the store as the caller's snapshot reads it ("" before it has a uid)."""
        return self.derived_key() if self.workspace.store.get_meta("index_uid") else ""

    def _load_unresolved(self, cache: SignedCache, key: str) -> list[CallSite]:
        """The saved graph's unresolved call sites (read on first use: only the references fallback
        needs them); built again from the store if their file went missing since."""
        sites = cache.load(UNRESOLVED, key)
        if sites is None:
            from graph.callgraph import build_call_graph

            log.warning("the saved unresolved call sites of %s are gone: rebuilding them",
                        self.workspace.root)
            sites = self._build_from_store(build_call_graph).unresolved
        return sites  # type: ignore[no-any-return]

    def derived_key(self) -> str:
        """Names one index state and the code that derives from it: the index's uid and revision and
        the graph code (what saved structures are keyed by); "" while unsaved buffers are open."""
        state = self.workspace.state_key()
        return f"{state}:{graph_code()}" if state else ""


_GRAPH_CODE: str | None = None


def graph_code() -> str:
    """A fingerprint of the modules that build the call graph and its records (computed once)."""
    global _GRAPH_CODE
    if _GRAPH_CODE is None:
        import importlib
        import pkgutil

        import graph as graph_package
        from indexing import records

        modules = [importlib.import_module(f"graph.{m.name}")
                   for m in pkgutil.iter_modules(graph_package.__path__)]
        _GRAPH_CODE = code_fingerprint(records, *sorted(modules, key=lambda m: m.__name__))
    return _GRAPH_CODE
