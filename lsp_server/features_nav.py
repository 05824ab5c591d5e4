"""Navigation over the call graph: the symbol under the cursor, definition, implementation, references,
call hierarchy (confident links only), workspace symbols.

Everything here reads one `CallGraph` snapshot (`RootIndex.graph`) and the current text of files
(editor overlays first, via `Workspace.read_bytes`), and returns LSP types through `convert`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lsprotocol import types as lsp

from graph.callgraph import CallGraph, GraphError
from graph.symbol_index import CONFIDENT
from indexing.records import CallSite, Definition
from lsp_server import convert
from lsp_server.indexer import RootIndex

_WORD = re.compile(r"[A-Za-z_$][\w$]*")
MAX_OCCURRENCES = 2000  # identifier-occurrence fallback: stop after this many
MAX_SYMBOLS = 200


@dataclass
class Target:
    """What the cursor is on: the root, the file, the identifier and the definitions it names."""

    root: RootIndex
    graph: CallGraph
    path: str
    line: int  # 1-based
    word: str
    definitions: list[Definition]


class Lines:
    """Current file lines (bytes) per path, read once per request, for column conversion."""

    def __init__(self, root: RootIndex) -> None:
        self.root = root
        self._cache: dict[str, list[bytes] | None] = {}

    def get(self, path: str, line: int) -> bytes | None:
        if path not in self._cache:
            try:
                self._cache[path] = self.root.workspace.read_bytes(path).split(b"\n")
            except Exception:
                self._cache[path] = None
        lines = self._cache[path]
        if lines is None or not 1 <= line <= len(lines):
            return None
        return lines[line - 1]


def word_at(line_text: str, character: int) -> str | None:
    """The identifier touching 0-based `character` (in code points) on a line."""
    for match in _WORD.finditer(line_text):
        if match.start() <= character <= match.end():
            return match.group(0)
    return None


def find_target(root: RootIndex, path: str, line: int, line_text: str, character: int) -> Target | None:
    """Resolve the identifier at (line 1-based, character in code points) to definitions, best first.

    `CallGraph.definitions_for` decides (`graph.navigation`): the declaration under the cursor, the
    callees linked to the call under the cursor, the name as the file imports it, then by name.
    """
    graph = root.graph
    word = word_at(line_text, character)
    if graph is None or word is None:
        return None
    column = len(line_text[:character].encode("utf-8"))
    return Target(root, graph, path, line, word, graph.definitions_for(path, line, column, word))


def definition(target: Target, encoding: str) -> list[lsp.Location]:
    """textDocument/definition: the name lines of what the target names, best first."""
    lines = Lines(target.root)
    return [_definition_location(target.root, d, lines, encoding) for d in target.definitions]


def implementation(target: Target, encoding: str) -> list[lsp.Location]:
    """textDocument/implementation: overrides of the method (subclasses of the class) under the cursor."""
    lines = Lines(target.root)
    out: list[lsp.Location] = []
    for d in target.definitions[:1]:
        out.extend(_definition_location(target.root, impl, lines, encoding)
                   for impl in target.graph.implementations(d.id))
    return out


# --- references -----------------------------------------------------------------------------------


def _site_location(root: RootIndex, site: CallSite, lines: Lines, encoding: str) -> lsp.Location:
    return convert.call_location(root.root, site, lines.get(site.path, site.line), encoding)


def _definition_location(root: RootIndex, d: Definition, lines: Lines, encoding: str) -> lsp.Location:
    return convert.definition_location(root.root, d, lines.get(d.path, d.name_line), encoding)


def occurrences(root: RootIndex, word: str) -> Iterator[tuple[str, int, int, int]]:
    """(path, line 1-based, start byte col, end byte col) of `word` as a whole identifier, in current text."""
    pattern = re.compile(rb"(?<![\w$])" + re.escape(word.encode()) + rb"(?![\w$])")
    needle = word.encode()
    for path in sorted(root.workspace.store.files()):
        try:
            data = root.workspace.read_bytes(path)
        except Exception:
            continue
        if needle not in data:
            continue
        for number, text in enumerate(data.split(b"\n"), start=1):
            for m in pattern.finditer(text):
                yield path, number, m.start(), m.end()


def references(target: Target, include_declaration: bool, encoding: str) -> list[lsp.Location]:
    """Call sites of the target from the graph (plus the declaration); identifier occurrences otherwise."""
    root, lines = target.root, Lines(target.root)
    out: list[lsp.Location] = []
    seen: set[tuple[str, int, int]] = set()
    best = target.definitions[0] if target.definitions else None
    if best is not None:
        if include_declaration:
            out.append(_definition_location(root, best, lines, encoding))
            seen.add((best.path, best.name_line, best.name_column))
        # confident call sites first, then the ones linked by a shared name only
        marked = sorted(target.graph.callers_marked(best.id), key=lambda item: item[2] not in CONFIDENT)
        for site, _caller, _evidence in marked:
            key = (site.path, site.line, site.column)
            if key not in seen:
                seen.add(key)
                out.append(_site_location(root, site, lines, encoding))
        if len(out) > int(include_declaration):
            return out
    decl = {(d.path, d.name_line, d.name_column) for d in target.definitions}
    for path, line, start, end in occurrences(root, target.word):
        if (path, line, start) in seen or (not include_declaration and (path, line, start) in decl):
            continue
        seen.add((path, line, start))
        site = CallSite(path, line, start, end, target.word, None, None)
        out.append(_site_location(root, site, lines, encoding))
        if len(out) >= MAX_OCCURRENCES:
            break
    return out


# --- call hierarchy -------------------------------------------------------------------------------


def hierarchy_item(root: RootIndex, d: Definition, encoding: str) -> lsp.CallHierarchyItem:
    return convert.hierarchy_item(root.root, d, Lines(root).get(d.path, d.name_line), encoding)


def item_definition(root: RootIndex, data: Any) -> Definition | None:
    """The definition a call-hierarchy item names, found again even if ids changed since."""
    graph = root.graph
    if graph is None or not isinstance(data, dict):
        return None
    def_id, qname, path = data.get("id"), data.get("qualified_name"), data.get("path")
    if isinstance(def_id, int):
        try:
            d = graph.definition(def_id)
        except GraphError:
            d = None
        if d is not None and d.qualified_name == qname and d.path == path:
            return d
    if not isinstance(qname, str):
        return None
    same = [d for d in graph.resolve(qname) if d.qualified_name == qname]
    line = data.get("name_line")
    near = line if isinstance(line, int) and not isinstance(line, bool) else 0
    same.sort(key=lambda d: (d.path != path, abs(d.name_line - near)))
    return same[0] if same else None


def _ranges(root: RootIndex, sites: list[CallSite], encoding: str) -> list[lsp.Range]:
    lines = Lines(root)
    return [convert.call_range(s, lines.get(s.path, s.line), encoding) for s in sites]


def incoming_calls(root: RootIndex, d: Definition, encoding: str) -> list[lsp.CallHierarchyIncomingCall]:
    """Callers of `d`, each with the ranges of its calls (module-level callers as the module)."""
    graph = root.graph
    assert graph is not None
    out = []
    for caller_id, sites in graph.incoming_calls(d.id, confident=True):
        if caller_id is None:
            caller_id = graph.module_node(sites[0].path)
            if caller_id is None:
                continue
        caller = graph.definition(caller_id)
        out.append(lsp.CallHierarchyIncomingCall(from_=hierarchy_item(root, caller, encoding),
                                                 from_ranges=_ranges(root, sites, encoding)))
    return out


def outgoing_calls(root: RootIndex, d: Definition, encoding: str) -> list[lsp.CallHierarchyOutgoingCall]:
    """Definitions `d` calls, each with the ranges of the calls inside `d`."""
    graph = root.graph
    assert graph is not None
    return [lsp.CallHierarchyOutgoingCall(to=hierarchy_item(root, graph.definition(callee), encoding),
                                          from_ranges=_ranges(root, sites, encoding))
            for callee, sites in graph.outgoing_calls(d.id, confident=True)]


# --- workspace symbols ----------------------------------------------------------------------------


def fuzzy_score(query: str, name: str) -> float | None:
    """Match quality of `query` against `name` (higher is better), None when it is not a subsequence.

    Exact > case-insensitive exact > prefix > substring > subsequence; within a tier, matched
    characters of the same case and at word starts (`_x`, `camelX`) score more, gaps score less.
    """
    if not query:
        return 0.0
    if name == query:
        return 100.0
    low_q, low_n = query.lower(), name.lower()
    if low_n == low_q:
        return 90.0
    if low_n.startswith(low_q):
        return 80.0 + 10.0 * len(query) / len(name)
    if low_q in low_n:
        return 60.0 + 10.0 * len(query) / len(name)
    score, pos, last = 0.0, 0, -1
    for ch in query:
        found = low_n.find(ch.lower(), pos)
        if found < 0:
            return None
        boundary = found == 0 or name[found - 1] in "_$.-" or (
            name[found].isupper() and name[found - 1].islower())
        score += 2.0 if boundary else 1.0
        score += 0.5 if name[found] == ch else 0.0
        score -= 0.2 * (found - last - 1) if last >= 0 else 0.1 * found
        last, pos = found, found + 1
    return 20.0 + 20.0 * score / (2.5 * len(query))


def workspace_symbols(roots: list[RootIndex], query: str, encoding: str,
                      limit: int = MAX_SYMBOLS) -> list[lsp.WorkspaceSymbol]:
    """Definitions of every root matching `query`, by match quality then PageRank."""
    scored: list[tuple[float, float, str, int, RootIndex, Definition]] = []
    for root in roots:
        graph = root.graph
        if graph is None:
            continue
        rank = graph.pagerank
        for d in graph.definitions():
            score = fuzzy_score(query, d.name)
            if score is None:
                qscore = fuzzy_score(query, d.qualified_name) if "." in query else None
                if qscore is None:
                    continue
                score = qscore - 5.0
            scored.append((-score, -rank.get(d.id, 0.0), d.path, d.name_line, root, d))
    scored.sort(key=lambda t: t[:4])
    lines = {id(root): Lines(root) for root in roots}
    out = []
    for *_, root, d in scored[:limit]:
        text = lines[id(root)].get(d.path, d.name_line)
        out.append(convert.workspace_symbol(root.root, d, text, encoding))
    return out
