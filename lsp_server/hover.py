"""The "related code" hover panel: what a symbol is, who calls it, what it calls, what resembles it.

Markdown, built from the call graph (callers and callees ranked by PageRank) and the embedding index
(the chunks nearest to the symbol's own chunk, when vectors exist). Every location is a clickable
`[path:line](file:///...#Lline)` link. Nothing here parses or embeds: a warm hover is a few dict
lookups and one vector search.
"""

from __future__ import annotations

from collections.abc import Callable

from graph.callgraph import CallGraph
from indexing.records import Chunk, Definition
from lsp_server import convert
from lsp_server.indexer import RootIndex
from retrievers import navigation
from retrievers.navigation import MAX_CALLEES, MAX_CALLERS, MAX_SIMILAR

_FENCE_LANGUAGES = {"python": "python", "javascript": "javascript", "typescript": "typescript", "tsx": "tsx",
                    "go": "go", "rust": "rust", "java": "java", "c": "c", "cpp": "cpp", "csharp": "csharp",
                    "ruby": "ruby", "php": "php", "kotlin": "kotlin", "lua": "lua", "bash": "bash",
                    "scala": "scala", "swift": "swift"}


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
    info = navigation.related(graph, d, similar, MAX_SIMILAR)
    callers, callees = info.callers, info.callees
    lines += _list("Called by", [_def_link(root, c) for c in callers[:MAX_CALLERS]], len(callers))
    lines += _list("Calls", [_def_link(root, c) for c in callees[:MAX_CALLEES]], len(callees))
    if similar is not None:
        lines += _list("Similar code", [
            f"`{c.symbol or c.kind}` {convert.link(root.root, c.path, c.start_line)} ({score:.2f})"
            for c, score in info.similar], len(info.similar))
    return "\n".join(lines).rstrip() + "\n"
