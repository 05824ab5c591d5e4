"""Text, JSON and Graphviz DOT renderings of call-graph answers, for `codeseek graph SYMBOL`.

`render_callers`, `render_callees` and `render_impact` return the whole output as one string in
`fmt` "text" (one line per call site or definition, `path:line:col` of the call's name or the
definition's name; links resting on a shared name only are marked "(ambiguous)"), "json" (an object with the
symbol and its callers/callees/impact, parseable by `json.loads`) or "dot" (a `digraph` Graphviz
reads). `to_json` and `to_dot` render any set of definition ids and edges.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from graph.callgraph import CallGraph
from graph.errors import GraphError
from graph.traversal import impact_edges
from indexing.records import CallSite, Definition

FORMATS = ("text", "json", "dot")


class UnsupportedFormatError(GraphError, ValueError):
    """A render format other than text, json or dot."""


def definition_dict(d: Definition) -> dict[str, Any]:
    """The JSON form of a definition (ids of module pseudo nodes are negative)."""
    return {
        "id": d.id, "name": d.name, "qualified_name": d.qualified_name, "kind": d.kind, "path": d.path,
        "start_line": d.start_line, "end_line": d.end_line, "name_line": d.name_line,
        "name_column": d.name_column, "signature": d.signature,
    }


def site_dict(site: CallSite) -> dict[str, Any]:
    return {"path": site.path, "line": site.line, "column": site.column, "end_column": site.end_column,
            "callee": site.callee, "receiver": site.receiver}


def _check(fmt: str) -> None:
    if fmt not in FORMATS:
        raise UnsupportedFormatError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")


def _where(d: Definition) -> str:
    """`path:line:col` of the definition's name (where an editor should land), 1-based column."""
    return f"{d.path}:{d.name_line}:{d.name_column + 1}"


def _label(d: Definition) -> str:
    return f"{d.qualified_name}\n{d.path}:{d.name_line}"


def _mark(evidence: str | None) -> str:
    return "  (ambiguous)" if evidence == "ambiguous" else ""


def _dot_quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "")
    return f'"{escaped}"'


def to_dot(graph: CallGraph, ids: Iterable[int], edges: Iterable[tuple[int, int]],
           title: str = "codeseek", highlight: int | None = None) -> str:
    """A Graphviz digraph of `ids` (labelled qualified name + location) and `edges` among them."""
    ids = list(dict.fromkeys(ids))
    lines = [f"digraph {_dot_quote(title)} {{", "  rankdir=LR;", '  node [shape=box, fontname="monospace"];']
    for i in ids:
        d = graph.definition(i)
        attrs = [f"label={_dot_quote(_label(d))}"]
        if i == highlight:
            attrs.append("style=bold")
        lines.append(f"  n{_node_name(i)} [{', '.join(attrs)}];")
    known = set(ids)
    for u, v in dict.fromkeys(edges):
        if u not in known or v not in known:
            continue
        data = graph.graph.edges[u, v] if graph.graph.has_edge(u, v) else {}
        kind = data.get("type", "call")
        attrs = [f"label={_dot_quote(str(len(data.get('sites', ())) or ''))}"] if kind == "call" else []
        if kind != "call":
            attrs.append(f"style={'dashed' if kind == 'inherits' else 'dotted'}")
        suffix = f" [{', '.join(attrs)}]" if attrs else ""
        lines.append(f"  n{_node_name(u)} -> n{_node_name(v)}{suffix};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _node_name(i: int) -> str:
    return str(i) if i >= 0 else f"m{-i}"


def to_json(graph: CallGraph, ids: Iterable[int], edges: Iterable[tuple[int, int]] = (),
            extra: dict[str, Any] | None = None) -> str:
    """JSON text: {"nodes": [definition...], "edges": [{"from", "to", "type", "weight", "sites"}], ...}."""
    nodes = [definition_dict(graph.definition(i)) for i in dict.fromkeys(ids)]
    out_edges = []
    for u, v in edges:
        data = graph.graph.edges[u, v] if graph.graph.has_edge(u, v) else {}
        edge = {"from": u, "to": v, "type": data.get("type", "call"),
                "weight": data.get("weight", 1.0), "sites": len(data.get("sites", ()))}
        if "evidence" in data:
            edge["evidence"] = data["evidence"]
        out_edges.append(edge)
    payload: dict[str, Any] = {"nodes": nodes, "edges": out_edges}
    payload.update(extra or {})
    return json.dumps(payload, indent=2)


def render_callers(graph: CallGraph, def_id: int, fmt: str = "text") -> str:
    """Every call site of `def_id` and its caller; name-only (ambiguous) links are marked."""
    _check(fmt)
    target = graph.definition(def_id)
    marked = graph.callers_marked(def_id)
    if fmt == "json":
        items = [{"site": site_dict(s), "evidence": ev,
                  "caller": definition_dict(graph.definition(c)) if c is not None else None}
                 for s, c, ev in marked]
        return json.dumps({"symbol": definition_dict(target), "callers": items}, indent=2)
    if fmt == "dot":
        callers = [c for _, c, _ in marked if c is not None]
        return to_dot(graph, [def_id, *callers], [(c, def_id) for c in callers], "callers", def_id)
    lines = [f"callers of {target.qualified_name} ({_where(target)}): {len(marked)} call sites"]
    for site, caller, ev in marked:
        who = graph.definition(caller).qualified_name if caller is not None else "<module>"
        lines.append(f"  {site.path}:{site.line}:{site.column + 1}  in {who}  {_call_text(site)}{_mark(ev)}")
    return "\n".join(lines) + "\n"


def render_callees(graph: CallGraph, def_id: int, fmt: str = "text") -> str:
    """Every definition `def_id` may call, with its call sites."""
    _check(fmt)
    source = graph.definition(def_id)
    out = graph.outgoing_calls(def_id)
    if fmt == "json":
        items = [{"callee": definition_dict(graph.definition(c)), "sites": [site_dict(s) for s in sites],
                  "weight": graph.call_weight(def_id, c),
                  "evidence": graph.edge_evidence(def_id, c)} for c, sites in out]
        return json.dumps({"symbol": definition_dict(source), "callees": items}, indent=2)
    if fmt == "dot":
        callees = [c for c, _ in out]
        return to_dot(graph, [def_id, *callees], [(def_id, c) for c in callees], "callees", def_id)
    lines = [f"callees of {source.qualified_name} ({_where(source)}): {len(out)} definitions"]
    for callee, sites in out:
        d = graph.definition(callee)
        at = ", ".join(f"{s.line}:{s.column + 1}" for s in sites)
        mark = _mark(graph.edge_evidence(def_id, callee))
        lines.append(f"  {d.qualified_name}  {_where(d)}  (called at {at}){mark}")
    return "\n".join(lines) + "\n"


def render_impact(graph: CallGraph, def_id: int, depth: int = 2, fmt: str = "text") -> str:
    """Transitive callers of `def_id` up to `depth`, by depth."""
    _check(fmt)
    source = graph.definition(def_id)
    hits = graph.impact(def_id, depth)
    if fmt == "json":
        confident = {i for i, _ in graph.impact(def_id, depth, confident=True)}
        items = [{"depth": dep, "confident": i in confident, **definition_dict(graph.definition(i))}
                 for i, dep in hits]
        return json.dumps({"symbol": definition_dict(source), "depth": depth, "impact": items}, indent=2)
    if fmt == "dot":
        return to_dot(graph, [def_id, *(i for i, _ in hits)], impact_edges(graph, def_id, depth),
                      "impact", def_id)
    confident = {i for i, _ in graph.impact(def_id, depth, confident=True)}
    lines = [f"impact of {source.qualified_name} ({_where(source)}), depth {depth}: {len(hits)} definitions"]
    for i, dep in hits:
        d = graph.definition(i)
        mark = "" if i in confident else "  (ambiguous)"
        lines.append(f"  {'  ' * (dep - 1)}[{dep}] {d.qualified_name}  {_where(d)}{mark}")
    return "\n".join(lines) + "\n"


def _call_text(site: CallSite) -> str:
    return f"{site.receiver}.{site.callee}(...)" if site.receiver else f"{site.callee}(...)"


def render_definitions(defs: Sequence[Definition], fmt: str = "text") -> str:
    """A list of candidate definitions (for an ambiguous SYMBOL)."""
    _check(fmt)
    if fmt == "json":
        return json.dumps({"definitions": [definition_dict(d) for d in defs]}, indent=2)
    if fmt == "dot":
        body = "".join(f"  n{_node_name(d.id)} [label={_dot_quote(_label(d))}];\n" for d in defs)
        return f'digraph "definitions" {{\n{body}}}\n'
    return "".join(f"{d.qualified_name}  {d.kind}  {_where(d)}\n" for d in defs)
