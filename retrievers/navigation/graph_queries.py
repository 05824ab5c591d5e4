"""Navigation over one call-graph snapshot: which definition a name means, who calls it, what it calls,
what resembles it. Shared by the front ends (the LSP hover and cursor lookups, the MCP tools), which
only convert these answers to their protocol.

- `rank_candidates(graph, candidates, path, line, word)`: same-named definitions best first, given
  where the name is used: a call on that line the graph resolved, then the same file, then PageRank.
- `lookup(graph, name, path, line)`: the definitions a written name means (`graph.resolve` forms:
  `Cart.total`, `shop/cart.py:Cart.total`...), ranked as above when the place of use is known.
- `callers_of` / `callees_of`: distinct calling / called definitions, most central first.
- `similar_to(semantic, store, d)`: the chunks nearest to the chunk of `d` by embedding;
  `distinct_similar` keeps one per definition, at its name line (the hover's "Similar code").
- `related(graph, d, similar)`: what the hover panel shows, as data.
- `find(graph, key)`: a definition found again by id, else by qualified name near its old place (a
  call-hierarchy item, or a definition a front end holds across an index refresh).
- `calls(graph, d, direction)`, `call_sites`, `impact`: the call hierarchy and the call sites of `d`.

`retrievers.codebase.Codebase` (the facade the front ends call) applies these to its current graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from graph.callgraph import CallGraph, GraphError
from indexing.records import CallSite, Chunk, Definition
from retrievers.base import Hit

if TYPE_CHECKING:
    from indexing.store import IndexStore

MAX_CALLERS = 5
MAX_CALLEES = 5
MAX_SIMILAR = 3


def rank_candidates(graph: CallGraph, candidates: Sequence[Definition], path: str | None = None,
                    line: int | None = None, word: str | None = None) -> list[Definition]:
    """`candidates` best first: called from (`path`, `line`) by a call to `word` the graph resolved to
    it, then defined in `path`, then by PageRank (a stable sort: ties keep their order)."""
    def called_here(d: Definition) -> bool:
        if path is None or line is None:
            return False
        try:
            return any(s.path == path and s.line == line and (word is None or s.callee == word)
                       for s, _ in graph.callers(d.id))
        except GraphError:
            return False

    rank = graph.pagerank
    return sorted(candidates, key=lambda d: (not called_here(d), d.path != path, -rank.get(d.id, 0.0)))


def lookup(graph: CallGraph, name: str, path: str | None = None, line: int | None = None) -> list[Definition]:
    """The definitions `name` means, best first ([] when none); `path`/`line`: where the name is used."""
    candidates = graph.resolve(name)
    if path is None or len(candidates) < 2:
        return candidates
    word = name.strip().removesuffix("()").replace("::", ".").replace("#", ".").split(".")[-1]
    return rank_candidates(graph, candidates, path, line, word)


def _ranked(graph: CallGraph, ids: Sequence[int], exclude: int) -> list[Definition]:
    rank = graph.pagerank
    seen: set[int] = set()
    out = []
    for i in sorted(ids, key=lambda i: -rank.get(i, 0.0)):
        if i == exclude or i in seen or i < 0:
            continue
        seen.add(i)
        try:
            out.append(graph.definition(i))
        except GraphError:
            continue
    return out


def callers_of(graph: CallGraph, d: Definition) -> list[Definition]:
    """Definitions that call `d` (confident links only: resolved or by unique name), most central first."""
    return _ranked(graph, [c for _, c in graph.callers(d.id, confident=True) if c is not None], d.id)


def callees_of(graph: CallGraph, d: Definition) -> list[Definition]:
    """Definitions `d` calls (confident links only), most central first."""
    return _ranked(graph, graph.callees(d.id, confident=True), d.id)


class NearestChunks(Protocol):
    """What `similar_to` needs from the semantic retriever."""

    def embedded(self) -> int: ...

    def similar(self, chunk_id: int, limit: int) -> list[Hit]: ...


def similar_to(semantic: NearestChunks | None, store: IndexStore, d: Definition,
               limit: int = MAX_SIMILAR) -> list[tuple[Chunk, float]]:
    """Chunks nearest (by embedding) to the chunk of `d`, outside `d` itself; [] without vectors."""
    if semantic is None or semantic.embedded() == 0:
        return []
    own = [c for c in store.chunks_for_path(d.path) if c.start_line <= d.name_line <= c.end_line]
    if not own:
        return []
    chunk = min(own, key=lambda c: c.end_line - c.start_line)
    out: list[tuple[Chunk, float]] = []
    for hit in semantic.similar(chunk.id, limit * 4):
        other = store.chunk(hit.chunk_id)
        if other is None or (other.path == d.path and other.start_line <= d.end_line
                             and other.end_line >= d.start_line):
            continue
        out.append((other, hit.score))
        if len(out) >= limit:
            break
    return out


@dataclass(frozen=True)
class SimilarCode:
    """A chunk near a definition by embedding; `name_line`: the name line of the definition the chunk
    belongs to (a later part of a long definition points at its name too), else the chunk's first line."""

    chunk: Chunk
    score: float
    name_line: int


def name_line_of(chunk: Chunk, definitions: Sequence[Definition]) -> int:
    """The name line of the definition of `chunk` among its file's `definitions` (module docstring)."""
    if chunk.symbol:
        for other in definitions:
            inside = other.start_line <= chunk.start_line <= other.end_line
            if other.qualified_name == chunk.symbol and inside:
                return other.name_line
    return chunk.start_line


def distinct_similar(d: Definition, near: Sequence[tuple[Chunk, float]],
                     limit: int = MAX_SIMILAR) -> list[tuple[Chunk, float]]:
    """`near` (best first) with one chunk per definition, `d` itself left out, at most `limit`."""
    seen: set[tuple[str, str]] = {(d.path, d.qualified_name)}
    out: list[tuple[Chunk, float]] = []
    for c, score in near:
        key = (c.path, c.symbol or f"{c.start_line}")
        if key in seen:
            continue
        seen.add(key)
        out.append((c, score))
        if len(out) >= limit:
            break
    return out


@dataclass
class Related:
    """A definition with its callers, callees (most central first, all of them) and similar chunks."""

    definition: Definition
    callers: list[Definition] = field(default_factory=list)
    callees: list[Definition] = field(default_factory=list)
    similar: list[SimilarCode] = field(default_factory=list)


def related(graph: CallGraph, d: Definition, similar: Sequence[SimilarCode] = ()) -> Related:
    """What the hover panel shows for `d` (`similar`: the nearest chunks, already chosen)."""
    return Related(d, callers_of(graph, d), callees_of(graph, d), list(similar))


# --- finding a definition again, call hierarchy --------------------------------------------------


@dataclass(frozen=True)
class DefinitionKey:
    """What finds a definition again after the index changed: id, qualified name, path, name line."""

    id: int | None
    qualified_name: str | None
    path: str | None
    name_line: int = 0

    @classmethod
    def of(cls, d: Definition) -> DefinitionKey:
        return cls(d.id, d.qualified_name, d.path, d.name_line)


def find(graph: CallGraph, key: DefinitionKey) -> Definition | None:
    """The definition `key` names: the same id with the same name and path, else the definitions of
    that qualified name, same path first, then nearest to the old name line (None when none)."""
    if key.id is not None:
        try:
            d: Definition | None = graph.definition(key.id)
        except GraphError:
            d = None
        if d is not None and d.qualified_name == key.qualified_name and d.path == key.path:
            return d
    qname = key.qualified_name
    if qname is None:
        return None
    same = [d for d in graph.resolve(qname) if d.qualified_name == qname]
    same.sort(key=lambda d: (d.path != key.path, abs(d.name_line - key.name_line)))
    return same[0] if same else None


@dataclass(frozen=True)
class Call:
    """One edge of the call hierarchy: the definition at the other end and the calls it stands for
    (the call sites inside the caller, incoming; inside `d`, outgoing)."""

    definition: Definition
    sites: list[CallSite]


Direction = Literal["incoming", "outgoing"]


def calls(graph: CallGraph, d: Definition, direction: Direction, confident: bool = True) -> list[Call]:
    """Callers of `d` (module-level callers as their module) or the definitions `d` calls, with sites."""
    if direction == "outgoing":
        return [Call(graph.definition(callee), sites)
                for callee, sites in graph.outgoing_calls(d.id, confident=confident)]
    out = []
    for caller_id, sites in graph.incoming_calls(d.id, confident=confident):
        if caller_id is None:
            caller_id = graph.module_node(sites[0].path)
            if caller_id is None:
                continue
        out.append(Call(graph.definition(caller_id), sites))
    return out


def call_sites(graph: CallGraph, d: Definition) -> list[tuple[CallSite, Definition | None]]:
    """Every call site of `d` (ambiguous links too) with the calling definition (None: module level)."""
    return [(site, graph.definition(c) if c is not None and c >= 0 else None)
            for site, c in graph.callers(d.id)]


def impact(graph: CallGraph, d: Definition, depth: int) -> list[tuple[Definition, int]]:
    """Definitions calling `d` directly (depth 1) or through others, nearest first, with their depth."""
    return [(graph.definition(i), level) for i, level in graph.impact(d.id, depth)]
