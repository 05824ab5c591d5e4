"""The domain facade: the one object every front end (the LSP handlers, the CLI, the MCP service) asks.

`Codebase.of(engine)` wraps a `SearchEngine` (ranked search, the index state, the current call-graph
snapshot); `Codebase(workspace, graph)` serves navigation from any graph source (`codeseek graph`,
which builds the graph without the search indexes). The front ends own the lifecycle (refresh,
embedding, closing); they call these methods with plain values and convert the answers, which are
domain objects (`Definition`, `CallSite`, `Span`, `Call`, `Related`, `Symbol`), never protocol types:

- `search(request)`: a `SearchAnswer` (its `to_json()`: the result schema, README.md "Result schema");
  `status()`: state and counts.
- `definitions(path, line, line_text, character)`: the identifier at a position and what it names
  (`Target`); `lookup(name, path, line)`: what a written name means.
- `references(target, include_declaration)`, `implementations(target)`.
- `call_hierarchy(definition_or_key, "incoming" | "outgoing")`, `call_sites(d)`, `impact(d, depth)`.
- `related(d)`: the hover panel's callers, callees and similar code; `similar(d)`: nearest chunks.
- `symbols(query)`: workspace symbols; `graph_report(symbol, mode, fmt)`: `codeseek graph` output.

Every call reads the graph snapshot current when it starts; a `Definition` from an earlier snapshot is
found again by id, else by qualified name (`graph_queries.find`). Errors: `QueryError` (a bad request),
`StoreError` / `RetrieverError` (the index cannot answer), `StoreClosed` (a `StoreError`: the index
was closed under the call, its root stopped or restarted).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from indexing.records import CallSite, Chunk, Definition
from indexing.store import StoreClosed, StoreError
from retrievers.base import QueryError, RetrieverError
from retrievers.navigation import graph_queries, references, workspace_symbols
from retrievers.navigation.graph_queries import (
    MAX_SIMILAR,
    Call,
    DefinitionKey,
    Direction,
    Related,
    SimilarCode,
)
from retrievers.navigation.references import Span, Target
from retrievers.navigation.workspace_symbols import MAX_SYMBOLS, Symbol

if TYPE_CHECKING:
    from graph.callgraph import CallGraph
    from indexing.workspace import Workspace
    from retrievers.engine.answer import SearchAnswer
    from retrievers.engine.request import CheckedRequest, SearchRequest
    from retrievers.engine.search_engine import SearchEngine

__all__ = ["Call", "Codebase", "DefinitionKey", "Direction", "GraphMode", "GraphReport", "QueryError",
           "Related", "RetrieverError", "SimilarCode", "Span", "StoreClosed", "StoreError",
           "Symbol", "Target"]

GraphMode = Literal["callers", "callees", "impact"]


@dataclass
class GraphReport:
    """`codeseek graph SYMBOL`: the definitions the name means, the list of them as text (when there
    are several), and one rendering per definition."""

    definitions: list[Definition]
    listing: str = ""
    outputs: list[str] = field(default_factory=list)


class Codebase:
    """Search and navigation over one workspace's index (module docstring)."""

    def __init__(self, workspace: Workspace, graph: Callable[[], CallGraph | None],
                 engine: SearchEngine | None = None) -> None:
        self.workspace = workspace
        self._graph = graph
        self.engine = engine

    @classmethod
    def of(cls, engine: SearchEngine) -> Codebase:
        """The facade over an engine: its workspace, its snapshots' call graph, its search."""
        return cls(engine.workspace, engine.call_graph, engine)

    # -- search and state ----------------------------------------------------------------------------
    def search(self, request: SearchRequest | CheckedRequest) -> SearchAnswer:
        """Ranked results (`SearchAnswer.to_json()`: the result schema); QueryError for a bad request
        (a `CheckedRequest`, validated by the front end, is not checked again)."""
        if self.engine is None:
            raise RetrieverError("this codebase has no search engine (navigation only)")
        return self.engine.search(request)

    def status(self) -> dict[str, Any]:
        """The index state, stored counts (files, chunks, definitions), vectors and model."""
        counts = self.workspace.store.counts()
        info = self.engine.index_info() if self.engine is not None else {}
        return {"state": info.get("state", "empty"), "files": counts.get("files", 0),
                "chunks": counts.get("chunks", 0), "definitions": counts.get("definitions", 0),
                "embedded": int(info.get("embedded", 0)), "model": info.get("model"),
                "transformer": info.get("transformer")}

    def has_graph(self) -> bool:
        """Whether a call graph exists (not before the first refresh, nor when building it failed)."""
        return self._graph() is not None

    # -- files ---------------------------------------------------------------------------------------
    def read_bytes(self, path: str) -> bytes:
        """The current text of a workspace file (an editor's unsaved buffer first)."""
        return self.workspace.read_bytes(path)

    def files(self) -> list[str]:
        """The indexed files (workspace-relative paths)."""
        return list(self.workspace.store.files())

    def language(self, path: str) -> str | None:
        """The language a file was indexed as (None when it is not indexed)."""
        row = self.workspace.store.file(path)
        return row.language if row else None

    # -- definitions and references ------------------------------------------------------------------
    def definitions(self, path: str, line: int, line_text: str, character: int) -> Target | None:
        """The identifier at (1-based line, 0-based character in code points) of `path`, whose text
        on that line is `line_text`, and the definitions it names, best first (None off an
        identifier or without a graph)."""
        graph = self._graph()
        return None if graph is None else references.target_at(graph, path, line, line_text, character)

    def lookup(self, name: str, path: str | None = None, line: int | None = None) -> list[Definition] | None:
        """The definitions a written name means (`Cart.total`, `shop/cart.py:Cart.total`), best first;
        `path`/`line`: where it is used. None without a graph."""
        graph = self._graph()
        return None if graph is None else graph_queries.lookup(graph, name, path, line)

    def references(self, target: Target, include_declaration: bool) -> list[Span]:
        """The call sites of the target (plus its declaration), or the word's occurrences."""
        return references.references(target, include_declaration, self.files, self.read_bytes)

    def implementations(self, target: Target) -> list[Definition]:
        """Overrides of the method (subclasses of the class) the target names."""
        return references.implementations(target)

    def find(self, key: DefinitionKey) -> Definition | None:
        """A definition found again in the current graph (a call-hierarchy item's)."""
        graph = self._graph()
        return None if graph is None else graph_queries.find(graph, key)

    # -- calls ---------------------------------------------------------------------------------------
    def call_hierarchy(self, item: Definition | DefinitionKey, direction: Direction,
                       confident: bool = True) -> list[Call] | None:
        """Callers (incoming) or callees (outgoing) of `item` with the call sites; confident links
        only unless `confident=False`. None when the definition is no longer there."""
        found = self._current(item)
        return None if found is None else graph_queries.calls(found[0], found[1], direction, confident)

    def call_sites(self, d: Definition) -> list[tuple[CallSite, Definition | None]]:
        """Every call site of `d` (ambiguous links too) and the calling definition (None: module level)."""
        found = self._current(d)
        return [] if found is None else graph_queries.call_sites(*found)

    def impact(self, d: Definition, depth: int) -> list[tuple[Definition, int]]:
        """Definitions that call `d`, directly (depth 1) or through others up to `depth`, nearest first."""
        found = self._current(d)
        return [] if found is None else graph_queries.impact(*found, depth)

    # -- related code --------------------------------------------------------------------------------
    def similar(self, d: Definition, limit: int = MAX_SIMILAR) -> list[tuple[Chunk, float]]:
        """Chunks nearest (by embedding) to the chunk of `d`, outside `d`; [] without vectors."""
        semantic = self.engine.semantic if self.engine is not None else None
        return graph_queries.similar_to(semantic, self.workspace.store, d, limit)

    def related(self, d: Definition, similar: int = MAX_SIMILAR, per_definition: bool = False) -> Related:
        """Callers and callees of `d` (most central first) and up to `similar` similar chunks: the
        nearest ones, or with `per_definition` one per definition out of three times as many."""
        near = self.similar(d, similar * 3 if per_definition else similar) if similar > 0 else []
        if per_definition:
            near = graph_queries.distinct_similar(d, near, similar)
        code = [SimilarCode(c, score, self._name_line(c)) for c, score in near]
        found = self._current(d)
        if found is None:
            return Related(d, similar=code)
        return graph_queries.related(found[0], found[1], code)

    def _name_line(self, chunk: Chunk) -> int:
        if not chunk.symbol:
            return chunk.start_line
        return graph_queries.name_line_of(chunk, self.workspace.store.definitions_for_path(chunk.path))

    # -- symbols and graph reports -------------------------------------------------------------------
    def symbols(self, query: str, limit: int = MAX_SYMBOLS) -> list[Symbol]:
        """Definitions matching `query` (fuzzy, by name), best match then most central first."""
        graph = self._graph()
        return [] if graph is None else workspace_symbols.symbols(graph, query, limit)

    def graph_report(self, symbol: str, mode: GraphMode, fmt: str = "text", depth: int = 2) -> GraphReport:
        """Callers, callees or impact of every definition `symbol` names, rendered in `fmt` (text,
        json, dot: `graph.render`)."""
        from graph import render

        graph = self._graph()
        targets = graph.resolve(symbol) if graph is not None else []
        if graph is None or not targets:
            return GraphReport(targets)
        listing = render.render_definitions(targets, "text") if len(targets) > 1 else ""
        outputs = []
        for d in targets:
            if mode == "impact":
                outputs.append(render.render_impact(graph, d.id, depth, fmt))
            elif mode == "callees":
                outputs.append(render.render_callees(graph, d.id, fmt))
            else:
                outputs.append(render.render_callers(graph, d.id, fmt))
        return GraphReport(targets, listing, outputs)

    def _current(self, item: Definition | DefinitionKey) -> tuple[CallGraph, Definition] | None:
        graph = self._graph()
        if graph is None:
            return None
        key = item if isinstance(item, DefinitionKey) else DefinitionKey.of(item)
        found = graph_queries.find(graph, key)
        return None if found is None else (graph, found)
