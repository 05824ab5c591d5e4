"""Navigation over one call-graph snapshot: which definition a name means, who calls it, what it calls,
what resembles it. Shared by the front ends (the LSP hover and cursor lookups, the MCP tools), which
only convert these answers to their protocol.

- `rank_candidates(graph, candidates, path, line, word)`: same-named definitions best first, given
  where the name is used: a call on that line the graph resolved, then the same file, then PageRank.
- `lookup(graph, name, path, line)`: the definitions a written name means (`graph.resolve` forms:
  `Cart.total`, `shop/cart.py:Cart.total`...), ranked as above when the place of use is known.
- `callers_of` / `callees_of`: distinct calling / called definitions, most central first.
- `similar_to(semantic, store, d)`: the chunks nearest to the chunk of `d` by embedding.
- `related(graph, d, similar)`: what the hover panel shows, as data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from graph.callgraph import CallGraph, GraphError
from indexing.records import Chunk, Definition
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


@dataclass
class Related:
    """A definition with its callers, callees (most central first, all of them) and similar chunks."""

    definition: Definition
    callers: list[Definition] = field(default_factory=list)
    callees: list[Definition] = field(default_factory=list)
    similar: list[tuple[Chunk, float]] = field(default_factory=list)


def related(graph: CallGraph, d: Definition,
            similar: Callable[[Definition], list[tuple[Chunk, float]]] | None = None,
            max_similar: int = MAX_SIMILAR) -> Related:
    """What the hover panel shows for `d` (similar code only when `similar` is given)."""
    near = similar(d)[:max_similar] if similar is not None else []
    return Related(d, callers_of(graph, d), callees_of(graph, d), near)
