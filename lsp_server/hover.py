"""The "related code" hover panel: what a symbol is, who calls it, what it calls, what resembles it.

Markdown, built from the call graph (callers and callees ranked by PageRank) and the embedding index
(the chunks nearest to the symbol's own chunk, when vectors exist). Every location is a clickable
`[path:line](file:///...#Lline)` link. Nothing here parses or embeds: a warm hover is a few dict
lookups and one vector search.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from graph.callgraph import CallGraph, GraphError
from indexing.records import Chunk, Definition
from lsp_server import convert
from lsp_server.indexer import RootIndex

MAX_CALLERS = 5
MAX_CALLEES = 5
MAX_SIMILAR = 3

_FENCE_LANGUAGES = {"python": "python", "javascript": "javascript", "typescript": "typescript", "tsx": "tsx",
                    "go": "go", "rust": "rust", "java": "java", "c": "c", "cpp": "cpp", "csharp": "csharp",
                    "ruby": "ruby", "php": "php", "kotlin": "kotlin", "lua": "lua", "bash": "bash",
                    "scala": "scala", "swift": "swift"}


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
    """Definitions that call `d` (confident links only), most central first."""
    return _ranked(graph, [c for _, c in graph.callers(d.id, confident=True) if c is not None], d.id)


def callees_of(graph: CallGraph, d: Definition) -> list[Definition]:
    """Definitions `d` calls (confident links only), most central first."""
    return _ranked(graph, graph.callees(d.id, confident=True), d.id)


def _def_link(root: RootIndex, d: Definition) -> str:
    return f"`{d.qualified_name}` {convert.link(root.root, d.path, d.name_line)}"


def _list(title: str, items: list[str], total: int) -> list[str]:
    if not items:
        return []
    more = f" (+{total - len(items)} more)" if total > len(items) else ""
    return [f"**{title}**{more}", "", *[f"- {item}" for item in items], ""]


def build(root: RootIndex, graph: CallGraph, d: Definition, language: str | None,
          similar: Callable[[Definition], list[tuple[Chunk, float]]] | None = None) -> str:
    """The Markdown panel for `d`."""
    fence = _FENCE_LANGUAGES.get(language or "", "")
    lines = [f"```{fence}", d.signature or d.name, "```", ""]
    if d.doc:
        lines += [d.doc, ""]
    lines += [f"*{d.kind}* {_def_link(root, d)}", ""]
    callers = callers_of(graph, d)
    callees = callees_of(graph, d)
    lines += _list("Called by", [_def_link(root, c) for c in callers[:MAX_CALLERS]], len(callers))
    lines += _list("Calls", [_def_link(root, c) for c in callees[:MAX_CALLEES]], len(callees))
    if similar is not None:
        near = similar(d)[:MAX_SIMILAR]
        lines += _list("Similar code", [
            f"`{c.symbol or c.kind}` {convert.link(root.root, c.path, c.start_line)} ({score:.2f})"
            for c, score in near], len(near))
    return "\n".join(lines).rstrip() + "\n"
