"""Go-to-definition and go-to-implementation over a `CallGraph`, from the same call resolution.

`definitions_at(graph, path, line, column, word)` answers "what does the identifier at this position
name", best first:

1. the cursor on a declaration's name: that declaration;
2. the cursor on a call's name: the callees the graph linked to that very call site (confident
   links only, when there are any; ambiguous ones otherwise, for the editor to list; nothing for
   a call the graph knows goes outside the workspace, such as `proxies.get()` on a dict);
3. any other occurrence: the name as the file sees it (same file, imports, star imports, the
   receiver's class for `Foo.bar`), by the resolver's bare-name rules;
4. failing that, every definition of that name (`CallGraph.resolve`), current file first, then by
   PageRank.

`implementations(graph, def_id)` lists what overrides a method (the methods of the same name in
the subclasses of its class, nearest first) or derives from a class or interface.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from graph.symbol_index import CONFIDENT, EVIDENCE_RANK
from indexing.records import CallSite, Definition

if TYPE_CHECKING:
    from graph.callgraph import CallGraph

SiteLinks = dict[tuple[str, int], list[tuple[CallSite, int | None, str]]]


def site_links(graph: CallGraph) -> SiteLinks:
    """Call sites by (path, line), each with a linked callee id and the link's evidence; a site
    linked to nothing (external, unresolved) appears once with callee None."""
    out: SiteLinks = defaultdict(list)
    for callee, entries in graph.incoming_index.items():
        for site, _caller, evidence in entries:
            out[(site.path, site.line)].append((site, callee, evidence))
    for site in graph.unresolved:
        out[(site.path, site.line)].append((site, None, ""))
    return dict(out)


def callees_at(graph: CallGraph, path: str, line: int, column: int) -> list[Definition] | None:
    """The definitions the call whose name covers byte `column` on `line` is linked to, best first;
    None when no call's name is there ([] for a call of something outside the workspace)."""
    here = [(site, callee, ev) for site, callee, ev in graph.site_links().get((path, line), ())
            if site.column <= column <= site.end_column]
    if not here:
        return None
    links = [(site, callee, ev) for site, callee, ev in here if callee is not None]
    if not links:
        return []
    confident = [item for item in links if item[2] in CONFIDENT]
    chosen = confident or links
    chosen.sort(key=lambda item: (-EVIDENCE_RANK[item[2]], _is_constructor(graph, item[1])))
    ids = dict.fromkeys(callee for _, callee, _ in chosen if callee is not None)
    return [graph.definition(i) for i in ids]


def _is_constructor(graph: CallGraph, def_id: int) -> bool:
    """A class and its constructor both answer a `Foo()` call; the class comes first."""
    parent = graph.index.parent_of.get(def_id)
    return parent is not None and graph.index.is_class(parent)


def definitions_at(graph: CallGraph, path: str, line: int, column: int, word: str) -> list[Definition]:
    """What the identifier `word` at (path, 1-based line, byte column) names (module docstring)."""
    for d in graph.definitions_at(path, line):
        if d.name == word and d.name_line == line:
            return [d]
    found = callees_at(graph, path, line, column)
    if found is not None:
        return found
    ids, external = graph.resolver.lookup_bare(word, path, _any)
    if ids and not graph.resolver.last_global:
        return _best_first(graph, [graph.index.defs[i] for i in ids], path)
    if external:
        return []
    return _best_first(graph, graph.resolve(word), path)


def _any(_def_id: int) -> bool:
    """Every definition qualifies (a module-level function: resolver caches key on it, and a saved
    call graph is pickled)."""
    return True


def _best_first(graph: CallGraph, defs: list[Definition], path: str) -> list[Definition]:
    rank = graph.pagerank
    return sorted(defs, key=lambda d: (d.path != path, -rank.get(d.id, 0.0), d.path, d.name_line))


def implementations(graph: CallGraph, def_id: int) -> list[Definition]:
    """Overriding methods of a method, or the subclasses / implementors of a class, nearest first."""
    d = graph.definition(def_id)
    ix, resolver = graph.index, graph.resolver
    if ix.is_class(def_id):
        return [ix.defs[i] for i in resolver.descendants(def_id)]
    parent = ix.parent_of.get(def_id)
    if parent is None or not ix.is_class(parent):
        return []
    out: list[Definition] = []
    for sub in resolver.descendants(parent):
        out.extend(ix.defs[i] for i in ix.members.get(sub, {}).get(d.name, ()))
    return out
