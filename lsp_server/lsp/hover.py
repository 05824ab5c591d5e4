"""The "related code" hover panel: what a symbol is, who calls it, what it calls, what resembles it.

Markdown, formatted from what the domain facade says is related (`Codebase.related`: callers and callees
ranked by PageRank, similar code one chunk per definition when vectors exist). Every location is a
clickable `[path:line](file:///...#Lline)` link at the definition's name line. The signature is shown
whole (every line of a split parameter list). Nothing here parses or embeds: a warm hover is a few dict
lookups, one file read and one vector search.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from indexing.records import Definition
from lsp_server.lsp import convert
from lsp_server.lsp.indexer import RootIndex
from retrievers.codebase import Related, SimilarCode
from retrievers.engine.results import dedent_lines
from retrievers.navigation.graph_queries import MAX_CALLEES, MAX_CALLERS, MAX_SIMILAR

MAX_SIGNATURE_LINES = 12

_FENCE_LANGUAGES = {"python": "python", "javascript": "javascript", "typescript": "typescript", "tsx": "tsx",
                    "go": "go", "rust": "rust", "java": "java", "c": "c", "cpp": "cpp", "csharp": "csharp",
                    "ruby": "ruby", "php": "php", "kotlin": "kotlin", "lua": "lua", "bash": "bash",
                    "scala": "scala", "swift": "swift"}


def _def_link(root: Path, d: Definition) -> str:
    return f"`{d.qualified_name}` {convert.link(root, d.path, d.name_line)}"


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
    return dedent_lines(picked).strip() or d.signature or d.name


def similar_items(root: Path, similar: Sequence[SimilarCode]) -> list[str]:
    """Links to similar code (the facade gives one chunk per definition, at its name line)."""
    return [f"`{s.chunk.symbol or s.chunk.kind}` {convert.link(root, s.chunk.path, s.name_line)} "
            f"({s.score:.2f})" for s in similar[:MAX_SIMILAR]]


def build(root: RootIndex, d: Definition, info: Related, language: str | None) -> str:
    """The Markdown panel for `d`: its signature and doc, then `info` (from `Codebase.related`)."""
    fence = _FENCE_LANGUAGES.get(language or "", "")
    try:
        text = root.codebase.read_bytes(d.path).decode("utf-8", "replace").splitlines()
    except Exception:  # a vanished file: the stored first line will do
        text = []
    lines = [f"```{fence}", full_signature(text, d), "```", ""]
    if d.doc:
        lines += [d.doc, ""]
    lines += [f"*{d.kind}* {_def_link(root.root, d)}", ""]
    callers, callees = info.callers, info.callees
    lines += _list("Called by", [_def_link(root.root, c) for c in callers[:MAX_CALLERS]], len(callers))
    lines += _list("Calls", [_def_link(root.root, c) for c in callees[:MAX_CALLEES]], len(callees))
    near = similar_items(root.root, info.similar)
    lines += _list("Similar code", near, len(near))
    return "\n".join(lines).rstrip() + "\n"
