"""Each definition's call sites in and out and its subclasses, saved in shards a warm process reads singly.

Of a saved call graph, `codeseek graph X --callers` (or `--callees`) and a references search need only
the call sites of the few definitions a name resolves to (each with its caller and evidence,
`CallGraph.incoming_sites`; the calls out of it, `CallGraph.outgoing_calls`, with each edge's evidence)
and their subclasses. Unpickling the whole graph for that cost a warm call on the whole Django sdist
~1.5 s and ~250 MiB. `caller_shards(graph)` splits those lists by definition id into `SHARDS` dicts;
`retrievers.engine.graph_state` saves each as a signed pickle beside the graph (`shard_name(i)`), and
`graph.flat.SavedCallGraph` reads the one shard a definition falls in, on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graph.callgraph import CallGraph
    from indexing.records import CallSite

__all__ = ["EMPTY", "SHARDS", "CallerEntry", "Outgoing", "caller_shards", "shard_name", "shard_of"]

SHARDS = 256  # the whole Django sdist: ~1,400 call sites a shard (each saved as its caller's and callee's)
# The calls out of a definition, in `CallGraph.outgoing_calls` order: (callee, its call sites, the call
# edge's evidence, whether the edge is confident)
Outgoing = list[tuple[int, list["CallSite"], str, bool]]
# (incoming sites, subclasses, outgoing calls)
CallerEntry = tuple[list[tuple["CallSite", "int | None", str]], list[int], Outgoing]
EMPTY: CallerEntry = ([], [], [])  # the entry of a definition no shard lists


def shard_of(def_id: int) -> int:
    """The shard a definition's entry is saved in."""
    return def_id % SHARDS


def shard_name(index: int) -> str:
    """The saved name of shard `index` (`indexing.persist.SignedCache`)."""
    return f"callgraph-callers-{index:02d}"


def caller_shards(graph: CallGraph) -> list[dict[int, CallerEntry]]:
    """Per shard, {definition id: (its incoming call sites, its subclasses, its outgoing calls)} for
    every definition that has any; a definition in no shard's dict has none."""
    shards: list[dict[int, CallerEntry]] = [{} for _ in range(SHARDS)]
    succ = graph.succ
    for d in graph.definitions():
        sites = graph.incoming_sites(d.id)
        subclasses = graph.subclasses(d.id)
        edges = succ.get(d.id, {})
        out: Outgoing = [(callee, sites_out, str(edges[callee].get("evidence", "")),
                          bool(edges[callee].get("confident", True)))
                         for callee, sites_out in graph.outgoing_calls(d.id)]
        if sites or subclasses or out:
            shards[shard_of(d.id)][d.id] = (sites, subclasses, out)
    return shards
