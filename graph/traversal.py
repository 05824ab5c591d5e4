"""Traversals over the call edges of a `CallGraph`: callers, callees, incoming/outgoing calls, impact.

All functions follow only edges of type "call" and terminate on cycles (recursion, mutual
recursion). Call sites are returned in (path, line, column) order; definitions in the order their
first call site appears.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from graph.symbol_index import CONFIDENT
from indexing.records import CallSite

if TYPE_CHECKING:
    from graph.callgraph import CallGraph


def site_key(site: CallSite) -> tuple[str, int, int]:
    return (site.path, site.line, site.column)


def callers_marked(cg: CallGraph, def_id: int) -> list[tuple[CallSite, int | None, str]]:
    """Every resolved call site that may call `def_id`, with the caller id and the evidence."""
    return cg.incoming_sites(def_id)


def callers(cg: CallGraph, def_id: int, confident: bool = False) -> list[tuple[CallSite, int | None]]:
    """Call sites that may call `def_id` with the caller id (None at module level); `confident`
    drops the ambiguous ones."""
    return [(site, caller) for site, caller, evidence in callers_marked(cg, def_id)
            if not confident or evidence in CONFIDENT]


def incoming_calls(cg: CallGraph, def_id: int,
                   confident: bool = False) -> list[tuple[int | None, list[CallSite]]]:
    """Call sites of `def_id` grouped by caller; module-level sites form one group per file (None)."""
    groups: dict[int | tuple[str], list[CallSite]] = {}
    for site, caller in callers(cg, def_id, confident):
        key: int | tuple[str] = caller if caller is not None else (site.path,)
        groups.setdefault(key, []).append(site)
    return [(key if isinstance(key, int) else None, sites) for key, sites in groups.items()]


def outgoing_calls(cg: CallGraph, def_id: int, confident: bool = False) -> list[tuple[int, list[CallSite]]]:
    """Definitions `def_id` may call, each with the call sites inside `def_id` that reach it."""
    cg.definition(def_id)
    out = [
        (callee, list(data["sites"]))
        for callee, data in cg.succ[def_id].items()
        if data.get("type") == "call" and (not confident or data.get("confident", True))
    ]
    out.sort(key=lambda item: (site_key(item[1][0]) if item[1] else ("", 0, 0), item[0]))
    return out


def callees(cg: CallGraph, def_id: int, confident: bool = False) -> list[int]:
    """Ids of the definitions `def_id` may call."""
    return [callee for callee, _ in cg.outgoing_calls(def_id, confident)]


def caller_ids(cg: CallGraph, def_id: int, confident: bool = False) -> list[int]:
    """Ids of the definitions that may call `def_id` (module-level callers are not definitions)."""
    pred = cg.pred[def_id]
    return [u for u, data in pred.items() if data.get("type") == "call" and u != def_id
            and (not confident or data.get("confident", True))]


def impact(cg: CallGraph, def_id: int, depth: int = 2, confident: bool = False) -> list[tuple[int, int]]:
    """Transitive callers of `def_id` up to `depth` hops, each with its minimum depth, BFS order.

    `def_id` itself is not listed, even when it is recursive. Depth < 1 gives [].
    """
    cg.definition(def_id)
    if depth < 1:
        return []
    seen = {def_id}
    out: list[tuple[int, int]] = []
    queue: deque[tuple[int, int]] = deque([(def_id, 0)])
    while queue:
        node, d = queue.popleft()
        if d >= depth:
            continue
        for caller in sorted(cg.caller_ids(node, confident), key=lambda i: _def_key(cg, i)):
            if caller not in seen:
                seen.add(caller)
                out.append((caller, d + 1))
                queue.append((caller, d + 1))
    return out


def impact_edges(cg: CallGraph, def_id: int, depth: int = 2) -> list[tuple[int, int]]:
    """Call edges (caller, callee) among `def_id` and its impact set, for drawing it."""
    nodes = {def_id} | {i for i, _ in impact(cg, def_id, depth)}
    return sorted(
        (u, v) for u in nodes for v, data in cg.succ[u].items()
        if data.get("type") == "call" and v in nodes
    )


def _def_key(cg: CallGraph, def_id: int) -> tuple[str, int]:
    d = cg.definition(def_id)
    return (d.path, d.start_line)
