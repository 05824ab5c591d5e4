"""The graph retriever: answers from the call graph (graph.callgraph.CallGraph).

- find_references: resolve the queried symbol, then one hit per call site that may call it (the chunk
  holding the call line; detail: path, line, column, caller and callee definition ids), every resolved
  site; then subclasses (a class's other usages). If the symbol resolves to nothing in the workspace
  (a library function), the unresolved call sites written with that name are returned instead.
- impact_analysis: the transitive callers of the resolved definitions with their depth (default 2),
  nearest first, more central (PageRank) first at equal depth.
- other intents: `expand(seeds, limit)` turns the top hits of the other retrievers into their callees
  and callers, so a question whose words match a caller still reaches the function doing the work;
  `search` does the same from the definitions the query's symbol resolves to.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from graph.callgraph import CallGraph
from graph.errors import GraphError
from indexing.records import CallSite, Chunk, Definition
from retrievers.base import GraphDetail, Hit, Query, RetrieverError, StructuralDetail
from retrievers.scope import EVERYWHERE, Scope


@dataclass(frozen=True)
class GraphRetrieverOptions:
    """Impact depth, how many seeds `expand` follows, how much a caller counts against a callee."""

    impact_depth: int = 2
    expand_seeds: int = 5
    caller_factor: float = 0.8  # expansion: callers of a seed rank below its callees
    max_resolved: int = 8  # definitions of one ambiguous name followed at most


class GraphRetriever:
    """Call sites, impact sets and caller/callee expansion from the call graph."""

    name = "graph"

    def __init__(
        self,
        graph_provider: Callable[[], CallGraph],
        chunk_at: Callable[[str, int], int | None],
        chunk_by_id: Callable[[int], Chunk | None] | None = None,
        options: GraphRetrieverOptions | None = None,
    ) -> None:
        self._graph_provider = graph_provider
        self._chunk_at = chunk_at
        self._chunk_by_id = chunk_by_id
        self.options = options or GraphRetrieverOptions()
        self._neighbours_of: CallGraph | None = None  # the graph `_neighbour_lists` was worked out on
        self._neighbour_lists: dict[int, list[tuple[int, str, float, Definition, int]]] = {}

    def _graph(self) -> CallGraph:
        try:
            return self._graph_provider()
        except GraphError as exc:
            raise RetrieverError(f"call graph unavailable: {exc}") from exc

    def search(self, query: Query, limit: int, scope: Scope = EVERYWHERE) -> list[Hit]:
        """References, impact, or the query symbol's definitions and their neighbours, within `scope`."""
        if limit <= 0:
            return []
        symbol = query.symbol or _lone_identifier(query.text)
        if query.intent == "find_references":
            hits = self.references(symbol) if symbol else []
        elif query.intent == "impact_analysis":
            hits = self.impact(symbol, self.options.impact_depth) if symbol else []
        elif symbol:
            cg = self._graph()
            defs = cg.resolve(symbol)[: self.options.max_resolved]
            seeds = [Hit(cid, 1.0, GraphDetail("definition", d.path, d.name_line, def_id=d.id))
                     for d in defs if (cid := self._chunk_at(d.path, d.name_line)) is not None]
            hits = _dedupe(seeds) + self.expand(seeds, limit, scope)
        else:
            hits = []
        return [h for h in hits if scope.admits(_path(h))][:limit]

    # -- references and impact -------------------------------------------------------------------------

    def references(self, symbol: str) -> list[Hit]:
        """One hit per call site that may call a definition `symbol` names, then its subclasses."""
        cg = self._graph()
        defs = cg.resolve(symbol)[: self.options.max_resolved]
        hits: list[Hit] = []
        seen: set[tuple[str, int, int]] = set()
        for order, d in enumerate(defs):
            for site, caller in cg.callers(d.id):
                key = (site.path, site.line, site.column)
                if key in seen:
                    continue
                seen.add(key)
                weight = _edge_weight(cg, caller, d.id)
                hit = self._site_hit(site, caller, d.id, weight / (1.0 + 0.01 * order))
                if hit is not None:
                    hits.append(hit)
        for d in defs:
            for sub in cg.subclasses(d.id):
                sd = cg.definition(sub)
                chunk_id = self._chunk_at(sd.path, sd.name_line)
                if chunk_id is not None:
                    detail = GraphDetail("inherits", sd.path, sd.name_line, column=sd.name_column,
                                         caller_def_id=sub, callee_def_id=d.id)
                    hits.append(Hit(chunk_id, 0.5, detail))
        if not defs:
            name = symbol.replace("::", ".").replace("#", ".").split(".")[-1].removesuffix("()")
            for site in cg.unresolved_named(name):
                around = cg.definitions_at(site.path, site.line)
                hit = self._site_hit(site, around[0].id if around else None, None, 0.25, resolved=False)
                if hit is not None:
                    hits.append(hit)
        hits.sort(key=_site_order)
        return hits

    def _site_hit(self, site: CallSite, caller: int | None, callee: int | None, score: float,
                  resolved: bool = True) -> Hit | None:
        chunk_id = self._chunk_at(site.path, site.line)
        if chunk_id is None:
            return None
        detail = GraphDetail("call", site.path, site.line, column=site.column, end_column=site.end_column,
                             callee=site.callee, caller=site.caller, caller_def_id=caller,
                             callee_def_id=callee, resolved=resolved)
        return Hit(chunk_id, score, detail)

    def impact(self, symbol: str, depth: int = 2) -> list[Hit]:
        """Definitions that may break if `symbol` changes: transitive callers with their depth."""
        cg = self._graph()
        defs = cg.resolve(symbol)[: self.options.max_resolved]
        depth_of: dict[int, tuple[int, int]] = {}  # affected id -> (depth, target id)
        for d in defs:
            for affected, dist in cg.impact(d.id, depth):
                if affected not in depth_of or dist < depth_of[affected][0]:
                    depth_of[affected] = (dist, d.id)
        rank = cg.pagerank
        ordered = sorted(depth_of.items(), key=lambda kv: (kv[1][0], -rank.get(kv[0], 0.0),
                                                           cg.definition(kv[0]).path,
                                                           cg.definition(kv[0]).start_line))
        hits = []
        for affected, (dist, target) in ordered:
            ad = cg.definition(affected)
            chunk_id = self._chunk_at(ad.path, ad.name_line)
            if chunk_id is not None:
                detail = GraphDetail("impact", ad.path, ad.name_line, def_id=affected, depth=dist,
                                     target_def_id=target, name=ad.qualified_name)
                hits.append(Hit(chunk_id, 1.0 / dist, detail))
        return hits

    # -- expansion -------------------------------------------------------------------------------------

    def expand(self, seed_hits: Sequence[Hit], limit: int, scope: Scope = EVERYWHERE) -> list[Hit]:
        """Callees and callers of the top seeds' definitions, as extra candidates (seeds excluded): the
        best `limit`, then those in files `scope` admits."""
        if limit <= 0 or not seed_hits:
            return []
        cg = self._graph()
        seed_ids = {h.chunk_id for h in seed_hits}
        best: dict[int, tuple[float, str, int, Definition, int]] = {}  # chunk -> (score, relation, via, ...)
        for rank, seed in enumerate(seed_hits[: self.options.expand_seeds]):
            for d in self._seed_definitions(cg, seed):
                for chunk_id, relation, weight, od, other in self._neighbours(cg, d.id):
                    if chunk_id in seed_ids:
                        continue
                    score = weight / (rank + 1)
                    known = best.get(chunk_id)
                    if known is None or score > known[0]:
                        best[chunk_id] = (score, relation, seed.chunk_id, od, other)
        ordered = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[1][3].path, kv[1][3].name_line))
        # The scope applies to the best `limit` neighbours, not before the cut: that is how the fused
        # route has always ranked (filtering first would let more in-scope neighbours in).
        return [Hit(chunk_id, score, GraphDetail(relation, od.path, od.name_line, def_id=other,
                                                 name=od.qualified_name, via=via))
                for chunk_id, (score, relation, via, od, other) in ordered[:limit] if scope.admits(od.path)]

    def _neighbours(self, cg: CallGraph, def_id: int) -> list[tuple[int, str, float, Definition, int]]:
        """A definition's callees, then its callers, that have a chunk: (chunk id, relation, edge weight x
        the relation's factor, definition, its id). Kept per definition while the graph is the same one
        (a built graph never changes, nor do this retriever's chunks)."""
        if cg is not self._neighbours_of:
            self._neighbours_of, self._neighbour_lists = cg, {}
        known = self._neighbour_lists.get(def_id)
        if known is not None:
            return known
        out: list[tuple[int, str, float, Definition, int]] = []
        for other, is_caller, weight in cg.neighbours(def_id):
            od = cg.definition(other)
            chunk_id = self._chunk_at(od.path, od.name_line)
            if chunk_id is None:
                continue
            relation, factor = ("caller", self.options.caller_factor) if is_caller else ("callee", 1.0)
            out.append((chunk_id, relation, factor * weight, od, other))
        self._neighbour_lists[def_id] = out
        return out

    def _seed_definitions(self, cg: CallGraph, seed: Hit) -> list[Definition]:
        """The definition(s) a seed hit stands for: its def id, else the chunk's own definition."""
        detail = seed.detail
        def_id = detail.def_id if isinstance(detail, (StructuralDetail, GraphDetail)) else None
        if def_id is not None:
            try:
                return [cg.definition(def_id)]
            except GraphError:
                pass
        chunk = self._chunk_by_id(seed.chunk_id) if self._chunk_by_id else None
        if chunk is None:
            return []
        around = cg.definitions_at(chunk.path, chunk.end_line)
        if chunk.symbol:
            named = [d for d in around if d.qualified_name == chunk.symbol]
            if named:
                return named[:1]
        inside = [d for d in around if d.start_line >= chunk.start_line]
        return inside[:1] or around[:1]


def _path(hit: Hit) -> str:
    return hit.detail.path if isinstance(hit.detail, GraphDetail) else ""


def _site_order(hit: Hit) -> tuple[float, str, int, int]:
    """Call sites and subclasses: best first, then by path, line and column."""
    detail = hit.detail
    assert isinstance(detail, GraphDetail)  # (the graph's own hits)
    return -hit.score, detail.path, detail.line, detail.column or 0


def _edge_weight(cg: CallGraph, caller: int | None, callee: int | None) -> float:
    return 1.0 if caller is None or callee is None else cg.call_weight(caller, callee)


def _dedupe(hits: list[Hit]) -> list[Hit]:
    seen: set[int] = set()
    out = []
    for h in hits:
        if h.chunk_id not in seen:
            seen.add(h.chunk_id)
            out.append(h)
    return out


def _lone_identifier(text: str) -> str | None:
    words = text.strip().strip("`").split()
    if len(words) == 1 and (words[0][:1].isalpha() or words[0][:1] in "_$"):
        return words[0]
    return None
