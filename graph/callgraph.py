"""The call graph: a networkx DiGraph over definitions, built from parsed records.

`build_call_graph(definitions, calls, imports)` resolves every call site (`graph.resolution`, each
question once: `graph.call_memo`) and returns a `CallGraph`:

- nodes are definition ids (`Definition.id`) with the node attribute `definition`; every file that
  has definitions, calls or imports also gets a module pseudo node with a negative id, the node
  attributes `module` (its path) and `definition` (a synthetic `Definition` of kind "module");
- "call" edges run caller -> callee with `weight` (the confidence, the highest over the edge's
  sites), `evidence` (the best over its sites: "resolved", "by-unique-name", "ambiguous"),
  `confident` (not ambiguous) and `sites: list[CallSite]`; module-level call sites have no caller
  node and appear only in `callers` / `incoming_calls`;
- "inherits" edges run class -> base (a class that also calls its base keeps the "call" type and
  gets `inherits=True`);
- "imports" edges run module node -> module node with `imports: list[Import]`.

Unresolved call sites are kept in `unresolved` (by name in `unresolved_named`) for a textual
references fallback. PageRank (call edges only, mean 1 over definition nodes) is computed lazily.

The lookups and traversals read the DiGraph's own node and adjacency dicts (`nodes_data`, `succ`,
`pred`), and a pickled `CallGraph` keeps only those dicts. The build fills them itself, in the
layout and order `networkx.DiGraph.add_node`/`add_edge` would (`DiGraphStorage`), so neither a build nor a
process that loads a saved graph and searches imports networkx (~0.3 s of a cold index of a small
repository, ~0.12 s of a warm CLI start). `graph` hands out the networkx DiGraph over the same dicts,
made on first use, for whatever needs networkx itself.
"""

from __future__ import annotations

import copy
import gc
import posixpath
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graph import centrality, positions, traversal
from graph.call_edges import Reuse, add_call_edges
from graph.call_memo import resolve_sites
from graph.errors import DuplicateIdError, GraphError, UnknownDefinitionError
from graph.lookup import resolve_name
from graph.resolution import Resolver, SymbolIndex
from graph.storage import Adjacency, DiGraphStorage, NodeData
from graph.symbol_index import Resolution
from indexing.records import CallSite, Definition, Import

if TYPE_CHECKING:
    import networkx as nx


@dataclass
class GraphOptions:
    """Build options: calls resolving to more than `max_candidates` definitions stay unresolved."""

    max_candidates: int = 8


__all__ = ["CallGraph", "DuplicateIdError", "GraphError", "GraphOptions", "UnknownDefinitionError",
           "build_call_graph"]


class CallGraph:
    """A resolved call graph with lookups and traversals (see the module docstring)."""

    def __init__(self, storage: DiGraphStorage, index: SymbolIndex, resolver: Resolver,
                 incoming: dict[int, list[tuple[CallSite, int | None, str]]], unresolved: list[CallSite],
                 outcomes: Counter[str], module_nodes: dict[str, int]) -> None:
        self._nx: nx.DiGraph | None = None
        # networkx's own storage (documented for subclasses), shared with `graph`, never copied
        self.nodes_data: NodeData = storage.nodes
        self.succ: Adjacency = storage.succ
        self.pred: Adjacency = storage.pred
        self.index = index
        self.resolver = resolver
        self.incoming_index = incoming
        self._unresolved: list[CallSite] | None = unresolved
        self._unresolved_loader: Callable[[], list[CallSite]] | None = None
        self.outcomes = outcomes
        self.module_nodes = module_nodes
        self._unresolved_by_name: dict[str, list[CallSite]] | None = None
        self._pagerank: Mapping[int, float] | None = None
        self._site_links: positions.SiteLinks | None = None
        self._around: dict[tuple[str, int], list[Definition]] = {}  # definitions_at's answers (not saved)

    @property
    def graph(self) -> nx.DiGraph:
        """The networkx DiGraph (a view over the same dicts; made on first use after a load)."""
        if self._nx is None:
            import networkx as nx

            g = nx.DiGraph()
            g._node, g._adj, g._pred = self.nodes_data, self.succ, self.pred
            self._nx = g
        return self._nx

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_nx"] = None  # the dicts travel; the networkx object is made again on first use
        state["_around"] = {}
        if self._unresolved is None and self._unresolved_loader is not None:
            state["_unresolved"] = self.unresolved  # a copy of a loaded graph is whole
        state["_unresolved_loader"] = None  # (None stays None: `without_unresolved`'s saved half)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_around", {})  # (a graph saved before the cache existed)

    @property
    def unresolved(self) -> list[CallSite]:
        """Call sites that resolved to no definition (see `without_unresolved`)."""
        if self._unresolved is None:
            if self._unresolved_loader is None:
                raise GraphError("this graph's unresolved call sites were saved apart and not joined again")
            self._unresolved = self._unresolved_loader()
            self._unresolved_loader = None
        return self._unresolved

    def without_unresolved(self) -> tuple[CallGraph, list[CallSite]]:
        """This graph without its unresolved call sites, and those sites, to be saved apart: a search
        never reads them (only the textual references fallback does), and they are a quarter of a
        saved graph's load time. `unresolved_from(loader)` joins a loaded pair again."""
        head = copy.copy(self)
        head._unresolved, head._unresolved_by_name, head._site_links = None, None, None
        return head, self.unresolved

    def unresolved_from(self, loader: Callable[[], list[CallSite]]) -> None:
        """Read the unresolved call sites from `loader` when first asked for."""
        if self._unresolved is None:
            self._unresolved_loader = loader

    # --- lookups -------------------------------------------------------------------------------
    def definition(self, def_id: int) -> Definition:
        """The definition (or module pseudo definition) with this id; UnknownDefinitionError if none."""
        try:
            return self.nodes_data[def_id]["definition"]  # type: ignore[no-any-return]
        except (KeyError, TypeError):
            raise UnknownDefinitionError(def_id) from None

    def definitions(self) -> list[Definition]:
        """Every real definition (no module pseudo nodes)."""
        return list(self.index.defs.values())

    def resolve(self, name: str) -> list[Definition]:
        """Definitions a written symbol names, most central first (see `graph.lookup`)."""
        ids = resolve_name(self.index, self.resolver, name)
        if len(ids) > 1:
            rank = self.pagerank
            defs = self.index.defs
            ids.sort(key=lambda i: (-rank.get(i, 0.0), defs[i].path, defs[i].start_line))
        return [self.index.defs[i] for i in ids]

    def definitions_at(self, path: str, line: int) -> list[Definition]:
        """Definitions whose range contains `line` in `path`, innermost first (a new list each time)."""
        known = self._around.get((path, line))
        if known is None:
            defs = self.index.defs
            known = [defs[i] for i in self.index.by_path.get(path, ())
                     if defs[i].start_line <= line <= defs[i].end_line]
            known.sort(key=lambda d: (d.end_line - d.start_line, -d.start_line))
            if len(self._around) < 65536:  # (a built graph never changes: the answers stay true)
                self._around[(path, line)] = known
        return list(known)

    def module_node(self, path: str) -> int | None:
        """The id of the module pseudo node of a file, None if the file has no records."""
        return self.module_nodes.get(path)

    def bases(self, def_id: int) -> list[int]:
        """Resolved base classes of a class (empty for anything else)."""
        self.definition(def_id)
        return [v for v, data in self.succ[def_id].items()
                if data.get("type") == "inherits" or data.get("inherits")]

    def subclasses(self, def_id: int) -> list[int]:
        """Classes that name `def_id` as a base."""
        self.definition(def_id)
        return [u for u, data in self.pred[def_id].items()
                if data.get("type") == "inherits" or data.get("inherits")]

    def imported_paths(self, path: str) -> list[str]:
        """Workspace files `path` imports."""
        node = self.module_nodes.get(path)
        if node is None:
            return []
        return sorted(self.nodes_data[v]["module"] for v, data in self.succ[node].items()
                      if data.get("type") == "imports")

    def importers(self, path: str) -> list[str]:
        """Workspace files that import `path`."""
        node = self.module_nodes.get(path)
        if node is None:
            return []
        return sorted(self.nodes_data[u]["module"] for u, data in self.pred[node].items()
                      if data.get("type") == "imports")

    def unresolved_named(self, name: str) -> list[CallSite]:
        """Unresolved call sites whose callee is written `name`."""
        if self._unresolved_by_name is None:
            by_name: dict[str, list[CallSite]] = defaultdict(list)
            for site in self.unresolved:
                by_name[site.callee].append(site)
            self._unresolved_by_name = dict(by_name)
        return list(self._unresolved_by_name.get(name, ()))

    # --- traversals ----------------------------------------------------------------------------
    # `confident=True` keeps the edges whose evidence is "resolved" or "by-unique-name" (hover,
    # call hierarchy); the default includes "ambiguous" ones too (references, impact).
    def callers(self, def_id: int, confident: bool = False) -> list[tuple[CallSite, int | None]]:
        return traversal.callers(self, def_id, confident)

    def callers_marked(self, def_id: int) -> list[tuple[CallSite, int | None, str]]:
        """Call sites of `def_id` with the caller id and the evidence ("ambiguous" and all)."""
        return traversal.callers_marked(self, def_id)

    def callees(self, def_id: int, confident: bool = False) -> list[int]:
        return traversal.callees(self, def_id, confident)

    def outgoing_calls(self, def_id: int, confident: bool = False) -> list[tuple[int, list[CallSite]]]:
        return traversal.outgoing_calls(self, def_id, confident)

    def incoming_calls(self, def_id: int, confident: bool = False) -> list[tuple[int | None, list[CallSite]]]:
        return traversal.incoming_calls(self, def_id, confident)

    def impact(self, def_id: int, depth: int = 2, confident: bool = False) -> list[tuple[int, int]]:
        return traversal.impact(self, def_id, depth, confident)

    def neighbours(self, def_id: int) -> list[tuple[int, bool, float]]:
        """The definitions `def_id` calls, then those calling it (each once; no module nodes): (id,
        whether it is a caller, the call edge's weight, 1.0 when there is none): a seed's expansion."""
        out = [(c, False, self.call_weight(def_id, c)) for c in self.callees(def_id) if c >= 0]
        callers = dict.fromkeys(c for _, c in self.callers(def_id) if c is not None)
        return out + [(c, True, self.call_weight(c, def_id)) for c in callers if c >= 0]

    def incoming_sites(self, def_id: int) -> list[tuple[CallSite, int | None, str]]:
        """Resolved call sites that may call `def_id`: (site, caller id or None, evidence)."""
        self.definition(def_id)
        return list(self.incoming_index.get(def_id, ()))

    def caller_ids(self, def_id: int, confident: bool = False) -> list[int]:
        """Ids of the definitions that may call `def_id` (`graph.traversal.caller_ids`)."""
        return traversal.caller_ids(self, def_id, confident)

    def call_weight(self, caller: int, callee: int) -> float:
        """The weight of the call edge caller -> callee (1.0 when there is none)."""
        data = self.succ.get(caller, {}).get(callee)
        return 1.0 if data is None else float(data.get("weight", 1.0))

    def edge_evidence(self, caller: int, callee: int) -> str | None:
        """The evidence of the call edge caller -> callee, None if there is none."""
        data = self.succ.get(caller, {}).get(callee)
        return None if data is None or data.get("type") != "call" else str(data.get("evidence", ""))

    # --- navigation -----------------------------------------------------------------------------
    def site_links(self) -> positions.SiteLinks:
        """Call sites by (path, line) with their linked callees (built once, on first use)."""
        if self._site_links is None:
            self._site_links = positions.site_links(self)
        return self._site_links

    def definitions_for(self, path: str, line: int, column: int, word: str) -> list[Definition]:
        """Go-to-definition for `word` at (path, 1-based line, byte column), best first."""
        return positions.definitions_at(self, path, line, column, word)

    def implementations(self, def_id: int) -> list[Definition]:
        """Overrides of a method, or subclasses of a class (go-to-implementation)."""
        return positions.implementations(self, def_id)

    # --- centrality and figures ----------------------------------------------------------------
    @property
    def pagerank(self) -> Mapping[int, float]:
        """PageRank over confident call edges among definitions, mean 1 (computed on first use)."""
        if self._pagerank is None:
            self._pagerank = centrality.pagerank(self.succ, self.index.defs.keys(), confident_only=True)
        return self._pagerank

    def stats(self) -> dict[str, Any]:
        types: Counter[str] = Counter()
        for data in (d for targets in self.succ.values() for d in targets.values()):
            types[data.get("type", "")] += 1
            types["also_inherits"] += bool(data.get("inherits"))
        resolved = self.outcomes["resolved"] + self.outcomes["ambiguous"]
        return {
            "nodes": len(self.index.defs),
            "modules": len(self.module_nodes),
            "call_edges": types["call"],
            "inherits_edges": types["inherits"] + types["also_inherits"],
            "import_edges": types["imports"],
            "call_sites": sum(self.outcomes.values()),
            "resolved_calls": resolved,
            "ambiguous_calls": self.outcomes["ambiguous"],
            "unresolved_calls": len(self.unresolved),
            "external_calls": self.outcomes["external"],
            "too_many_candidates": self.outcomes["too_many"],
        }


def _module_definition(path: str, node_id: int, defs: Sequence[Definition]) -> Definition:
    stem = posixpath.splitext(path)[0]
    name = posixpath.basename(stem)
    return Definition(
        name=name, qualified_name=".".join(p for p in stem.split("/") if p), kind="module", path=path,
        start_line=1, end_line=max((d.end_line for d in defs), default=1), start_byte=0,
        end_byte=max((d.end_byte for d in defs), default=0), name_line=1, name_column=0,
        signature=path, id=node_id,
    )


def build_call_graph(definitions: Sequence[Definition], calls: Sequence[CallSite],
                     imports: Sequence[Import], options: GraphOptions | None = None,
                     known: Sequence[Resolution | None] | None = None,
                     resolved: list[Resolution] | None = None, reuse: Reuse | None = None) -> CallGraph:
    """Resolve every call site, base class and import, and build the graph (module docstring).
    An incremental build (`graph.incremental`) passes `known[i]`, where not None, as the resolution
    of `calls[i]`, and `reuse`: the previous graph, whose call edges of callees no changed site
    reaches are taken over (`graph.call_edges`). `resolved` receives each site's resolution in order."""
    options = options or GraphOptions()
    if options.max_candidates < 1:
        raise GraphError(f"max_candidates must be at least 1, got {options.max_candidates}")
    # The build allocates millions of small objects and frees none: cyclic GC passes over them
    # would cost more than the build itself (3x on Django), so collection waits until the end.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _build(definitions, calls, imports, options, known, resolved, reuse)
    finally:
        if was_enabled:
            gc.enable()


def _build(definitions: Sequence[Definition], calls: Sequence[CallSite], imports: Sequence[Import],
           options: GraphOptions, known: Sequence[Resolution | None] | None,
           resolved: list[Resolution] | None, reuse: Reuse | None) -> CallGraph:
    extra = [c.path for c in calls]
    if reuse is not None:
        index = reuse.graph.index.patched(reuse.paths, reuse.definitions, imports, extra)
    else:
        index = SymbolIndex(definitions, imports, extra_paths=extra)
    resolver = Resolver(index, options.max_candidates)
    if reuse is not None:
        resolver.take_bases(reuse.bases, reuse.open_bases)
    g = DiGraphStorage()
    for d in definitions:
        g.add_node(d.id, definition=d)
    module_nodes: dict[str, int] = {}
    for k, path in enumerate(sorted(index.modules.paths)):
        node = -(k + 1)
        module_nodes[path] = node
        file_defs = [index.defs[i] for i in index.by_path.get(path, ())]
        g.add_node(node, definition=_module_definition(path, node, file_defs), module=path)

    if known is not None and len(known) != len(calls):
        raise GraphError(f"{len(known)} known resolutions for {len(calls)} call sites")
    resolutions = resolve_sites(resolver, calls, known, reuse.touched if reuse is not None else None,
                                resolved if resolved is not None else [])
    incoming, unresolved, outcomes = add_call_edges(g, calls, resolutions, reuse)

    for d in definitions:
        if d.bases and index.is_class(d.id):
            for base in resolver.bases(d.id):
                if g.has_edge(d.id, base):
                    g.succ[d.id][base]["inherits"] = True
                else:
                    g.add_edge(d.id, base, type="inherits", weight=1.0)

    for imp in imports:
        src = module_nodes.get(imp.path)
        for target_path in _import_files(resolver, imp):
            dst = module_nodes.get(target_path)
            if src is None or dst is None or dst == src:
                continue
            if g.has_edge(src, dst):
                g.succ[src][dst]["imports"].append(imp)
            else:
                g.add_edge(src, dst, type="imports", weight=1.0, imports=[imp])
    return CallGraph(g, index, resolver, dict(incoming), unresolved, outcomes, module_nodes)


def _import_files(resolver: Resolver, imp: Import) -> list[str]:
    """Workspace files an import statement names: the module, or the submodule it imports."""
    files = resolver.ix.modules.files_for(imp.module, imp.path)
    if not files or not imp.name or imp.name in ("*", "default"):
        return files
    if resolver.ix.top_level_named(files, imp.name) or any(
            imp.name in resolver.ix.local.get(f, {}) for f in files):
        return files
    sep = "" if imp.module.endswith((".", "/")) else ("/" if "/" in imp.module else ".")
    return resolver.ix.modules.files_for(imp.module + sep + imp.name, imp.path) or files

