"""Each definition's incoming call sites and subclasses, saved in shards a warm process reads singly.

Of a saved call graph, `codeseek graph X --callers` and a references search need only the call sites
of the few definitions a name resolves to (each with its caller and evidence, `CallGraph.incoming_sites`)
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

__all__ = ["SHARDS", "CallerEntry", "caller_shards", "shard_name", "shard_of"]

SHARDS = 64  # the whole Django sdist: ~2,700 call sites a shard
CallerEntry = tuple[list[tuple["CallSite", "int | None", str]], list[int]]  # (incoming sites, subclasses)


def shard_of(def_id: int) -> int:
    """The shard a definition's entry is saved in."""
    return def_id % SHARDS


def shard_name(index: int) -> str:
    """The saved name of shard `index` (`indexing.persist.SignedCache`)."""
    return f"callgraph-callers-{index:02d}"


def caller_shards(graph: CallGraph) -> list[dict[int, CallerEntry]]:
    """Per shard, {definition id: (its incoming call sites, its subclasses)} for every definition that
    has either; a definition in no shard's dict has neither."""
    shards: list[dict[int, CallerEntry]] = [{} for _ in range(SHARDS)]
    for d in graph.definitions():
        sites = graph.incoming_sites(d.id)
        subclasses = graph.subclasses(d.id)
        if sites or subclasses:
            shards[shard_of(d.id)][d.id] = (sites, subclasses)
    return shards
