"""The one holder of a workspace's call graph: built from the store, cached per index change, persisted.

`indexing/` keeps the records and `graph/` builds a `CallGraph` from them; neither knows the other's
orchestration. `GraphState(workspace, persist)` sits above both: `build()` returns the graph of the
index as it is now, built once per index generation (`Workspace.generation`: an update that changed
something, or changes another process committed). With `persist`, a graph an earlier process saved
for the same index revision and the same graph code (`derived_key()`) is loaded instead of built
(`indexing.persist.SignedCache`), and a built one is saved with its PageRank: a warm process skips the
build. Never with unsaved buffers open (their records are not in any saved revision).

`SearchEngine` owns one and hands its graph to each `Snapshot`; front ends read it through
`SearchEngine.call_graph()`. Commands that only need the graph (`codeseek graph`) make their own.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from indexing.persist import SignedCache, code_fingerprint
from indexing.workspace import Workspace

if TYPE_CHECKING:
    from graph.callgraph import CallGraph

__all__ = ["GraphState", "graph_code"]


class GraphState:
    """The call graph of one workspace's index (see the module docstring)."""

    def __init__(self, workspace: Workspace, persist: bool = False) -> None:
        self.workspace = workspace
        self.persist = persist
        self._lock = threading.Lock()
        self._graph: CallGraph | None = None
        self._generation = -1
        self.loaded = False  # the current graph came from the saved copy (not built here)

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
            cache = SignedCache(ws.index_dir)
            graph = cache.load("callgraph", key) if key else None
            self.loaded = graph is not None
            if graph is None:
                with ws.store.snapshot():
                    definitions, calls, imports = ws.store.definitions(), ws.store.calls(), ws.store.imports()
                graph = build_call_graph(definitions, calls, imports)
                if key:
                    graph.pagerank  # noqa: B018 (computed before saving, so it is saved too)
                    cache.save("callgraph", key, graph)
            self._graph, self._generation = graph, generation
            return graph

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
