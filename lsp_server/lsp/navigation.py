"""LSP navigation: definition, implementation, references, call hierarchy and workspace symbols, as
answers of the domain facade (`RootIndex.codebase`, a `retrievers.codebase.Codebase`) converted to LSP
types through `convert`.

Nothing here decides what a name means or ranks anything: the facade does. What stays is LSP: byte
columns become the negotiated position encoding (which needs each line's current text, read once per
request through `Lines`), roots become URIs, and several workspace folders' answers are merged.
"""

from __future__ import annotations

from collections.abc import Callable

from lsprotocol import types as lsp

from indexing.records import CallSite, Definition
from lsp_server.lsp import convert
from lsp_server.lsp.indexer import RootIndex
from retrievers.codebase import DefinitionKey, Direction, Span, Target
from retrievers.navigation.workspace_symbols import MAX_SYMBOLS, merge


class Lines:
    """Current file lines (bytes) per path, read once per request, for column conversion."""

    def __init__(self, read: Callable[[str], bytes]) -> None:
        self.read = read
        self._cache: dict[str, list[bytes] | None] = {}

    def get(self, path: str, line: int) -> bytes | None:
        if path not in self._cache:
            try:
                self._cache[path] = self.read(path).split(b"\n")
            except Exception:
                self._cache[path] = None
        lines = self._cache[path]
        if lines is None or not 1 <= line <= len(lines):
            return None
        return lines[line - 1]


def _locations(root: RootIndex, defs: list[Definition], encoding: str) -> list[lsp.Location]:
    lines = Lines(root.codebase.read_bytes)
    return [convert.definition_location(root.root, d, lines.get(d.path, d.name_line), encoding) for d in defs]


def definition(root: RootIndex, target: Target, encoding: str) -> list[lsp.Location]:
    """textDocument/definition: the name lines of what the target names, best first."""
    return _locations(root, target.definitions, encoding)


def implementation(root: RootIndex, target: Target, encoding: str) -> list[lsp.Location]:
    """textDocument/implementation: overrides of the method (subclasses of the class) under the cursor."""
    return _locations(root, root.codebase.implementations(target), encoding)


def references(root: RootIndex, target: Target, include_declaration: bool,
               encoding: str) -> list[lsp.Location]:
    """textDocument/references: call sites from the graph (plus the declaration), else occurrences."""
    lines = Lines(root.codebase.read_bytes)
    spans: list[Span] = root.codebase.references(target, include_declaration)
    return [convert.span_location(root.root, s, lines.get(s.path, s.line), encoding) for s in spans]


# --- call hierarchy -------------------------------------------------------------------------------


def hierarchy_item(root: RootIndex, d: Definition, encoding: str, lines: Lines | None = None
                   ) -> lsp.CallHierarchyItem:
    lines = lines or Lines(root.codebase.read_bytes)
    return convert.hierarchy_item(root.root, d, lines.get(d.path, d.name_line), encoding)


def _ranges(sites: list[CallSite], lines: Lines, encoding: str) -> list[lsp.Range]:
    return [convert.call_range(s, lines.get(s.path, s.line), encoding) for s in sites]


def _calls(root: RootIndex, key: DefinitionKey, direction: Direction, encoding: str
           ) -> list[tuple[lsp.CallHierarchyItem, list[lsp.Range]]] | None:
    found = root.codebase.call_hierarchy(key, direction)
    if found is None:
        return None
    lines = Lines(root.codebase.read_bytes)
    return [(hierarchy_item(root, c.definition, encoding, lines), _ranges(c.sites, lines, encoding))
            for c in found]


def incoming_calls(root: RootIndex, key: DefinitionKey, encoding: str
                   ) -> list[lsp.CallHierarchyIncomingCall] | None:
    """Callers of the item's definition, each with the ranges of its calls (None: it is gone)."""
    calls = _calls(root, key, "incoming", encoding)
    return None if calls is None else [lsp.CallHierarchyIncomingCall(from_=item, from_ranges=ranges)
                                       for item, ranges in calls]


def outgoing_calls(root: RootIndex, key: DefinitionKey, encoding: str
                   ) -> list[lsp.CallHierarchyOutgoingCall] | None:
    """Definitions the item's definition calls, each with the ranges of the calls inside it."""
    calls = _calls(root, key, "outgoing", encoding)
    return None if calls is None else [lsp.CallHierarchyOutgoingCall(to=item, from_ranges=ranges)
                                       for item, ranges in calls]


# --- workspace symbols ----------------------------------------------------------------------------


def workspace_symbols(roots: list[RootIndex], query: str, encoding: str,
                      limit: int = MAX_SYMBOLS) -> list[lsp.WorkspaceSymbol]:
    """Definitions of every root matching `query`, by match quality then PageRank."""
    best = merge([(root, root.codebase.symbols(query, limit)) for root in roots], limit)
    lines = {id(root): Lines(root.codebase.read_bytes) for root in roots}
    return [convert.workspace_symbol(root.root, s.definition,
                                     lines[id(root)].get(s.definition.path, s.definition.name_line), encoding)
            for root, s in best]
