"""The "related code" hover panel: what a symbol is, who calls it, what it calls, what resembles it.

Markdown, built from the call graph (callers and callees ranked by PageRank) and the embedding index
(the chunks nearest to the symbol's own chunk, when vectors exist). Every location is a clickable
`[path:line](file:///...#Lline)` link at the definition's name line. The signature is shown whole
(every line of a split parameter list); similar code lists each definition once. Nothing here parses or
embeds: a warm hover is a few dict lookups, one file read and one vector search.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence

from graph.callgraph import CallGraph
from indexing.records import Chunk, Definition
from lsp_server import convert
from lsp_server.indexer import RootIndex
from retrievers import navigation
from retrievers.navigation import MAX_CALLEES, MAX_CALLERS, MAX_SIMILAR

MAX_SIGNATURE_LINES = 12

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


def full_signature(lines: Sequence[str], d: Definition) -> str:
    """The declaration from its name line up to where the body starts, over several lines when the
    parameters are split (`def url_for(\n    endpoint: str,\n ...) -> str:`); `d.signature` (its first
    line) when the text is not at hand."""
    first = d.name_line - 1
    if not 0 <= first < len(lines):
        return d.signature or d.name
    picked: list[str] = []
    depth = 0
    for text in lines[first:first + MAX_SIGNATURE_LINES]:
        line = text.rstrip()
        depth += sum(line.count(c) for c in "([") - sum(line.count(c) for c in ")]")
        if depth > 0:
            picked.append(line)
            continue
        tail_at = line.rfind(")") + 1
        tail = line[tail_at:]
        if "{" in tail:  # a C-like body starts here
            picked.append(line[:tail_at + tail.index("{")].rstrip())
            break
        picked.append(line)
        if line.endswith((":", ";", "=>", "=")) or ":" in tail:
            break
    else:
        return d.signature or d.name  # no end within reach: the first line says enough
    return textwrap.dedent("\n".join(picked)).strip() or d.signature or d.name


def _name_line(root: RootIndex, chunk: Chunk) -> int:
    """The name line of the definition a similar chunk belongs to (a later part of a long definition
    links to its name too); the chunk's first line when it has no definition."""
    if chunk.symbol:
        for other in root.workspace.store.definitions_for_path(chunk.path):
            inside = other.start_line <= chunk.start_line <= other.end_line
            if other.qualified_name == chunk.symbol and inside:
                return other.name_line
    return chunk.start_line


def similar_items(root: RootIndex, d: Definition, near: Sequence[tuple[Chunk, float]]) -> list[str]:
    """Links to similar code, one per definition (a definition split into chunks shows once)."""
    seen: set[tuple[str, str]] = {(d.path, d.qualified_name)}
    out: list[str] = []
    for c, score in near:
        key = (c.path, c.symbol or f"{c.start_line}")
        if key in seen:
            continue
        seen.add(key)
        link = convert.link(root.root, c.path, _name_line(root, c))
        out.append(f"`{c.symbol or c.kind}` {link} ({score:.2f})")
        if len(out) >= MAX_SIMILAR:
            break
    return out


def build(root: RootIndex, graph: CallGraph, d: Definition, language: str | None,
          similar: Callable[[Definition], list[tuple[Chunk, float]]] | None = None) -> str:
    """The Markdown panel for `d` (`similar`: nearest chunks, best first, duplicates allowed)."""
    fence = _FENCE_LANGUAGES.get(language or "", "")
    try:
        text = root.workspace.read_bytes(d.path).decode("utf-8", "replace").splitlines()
    except Exception:  # a vanished file: the stored first line will do
        text = []
    lines = [f"```{fence}", full_signature(text, d), "```", ""]
    if d.doc:
        lines += [d.doc, ""]
    lines += [f"*{d.kind}* {_def_link(root, d)}", ""]
    info = navigation.related(graph, d, similar, MAX_SIMILAR * 4)  # deduped per definition below
    callers, callees = info.callers, info.callees
    lines += _list("Called by", [_def_link(root, c) for c in callers[:MAX_CALLERS]], len(callers))
    lines += _list("Calls", [_def_link(root, c) for c in callees[:MAX_CALLEES]], len(callees))
    if similar is not None:
        near = similar_items(root, d, info.similar)
        lines += _list("Similar code", near, len(near))
    return "\n".join(lines).rstrip() + "\n"
