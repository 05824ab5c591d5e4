"""Domain records -> LSP types: URIs, 0-based ranges, symbol kinds, locations, call-hierarchy items.

The index speaks 1-based inclusive lines, 0-based byte columns and workspace-relative POSIX paths;
LSP speaks 0-based lines, columns in the negotiated position encoding (UTF-16 unless the client
offers another) and URIs. Every conversion between the two lives here.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

from lsprotocol import types as lsp
from pygls.uris import from_fs_path, to_fs_path

from indexing.records import CallSite, Definition
from retrievers.codebase import DefinitionKey, Span
from retrievers.engine.answer import ResultEntry

_SYMBOL_KINDS: dict[str, lsp.SymbolKind] = {
    "function": lsp.SymbolKind.Function,
    "method": lsp.SymbolKind.Method,
    "constructor": lsp.SymbolKind.Constructor,
    "class": lsp.SymbolKind.Class,
    "interface": lsp.SymbolKind.Interface,
    "struct": lsp.SymbolKind.Struct,
    "enum": lsp.SymbolKind.Enum,
    "trait": lsp.SymbolKind.Interface,
    "module": lsp.SymbolKind.Module,
    "namespace": lsp.SymbolKind.Namespace,
    "variable": lsp.SymbolKind.Variable,
    "constant": lsp.SymbolKind.Constant,
    "field": lsp.SymbolKind.Field,
    "property": lsp.SymbolKind.Property,
    "type": lsp.SymbolKind.TypeParameter,
    "section": lsp.SymbolKind.String,
}


def symbol_kind(kind: str) -> lsp.SymbolKind:
    """The LSP symbol kind for a definition kind (unknown kinds are Variable)."""
    return _SYMBOL_KINDS.get(kind, lsp.SymbolKind.Variable)


# --- paths and URIs -------------------------------------------------------------------------------


def path_to_uri(root: Path, rel: str) -> str:
    """file:// URI of a workspace-relative POSIX path."""
    return from_fs_path(str(root.joinpath(*PurePosixPath(rel).parts))) or ""


def uri_to_path(uri: str) -> Path | None:
    """Filesystem path of a file:// URI, None for other schemes."""
    if not uri.startswith("file:"):
        return None
    fs = to_fs_path(uri)
    return Path(fs) if fs else None


def relative_path(root: Path, path: Path) -> str | None:
    """Workspace-relative POSIX path of `path`, None when it is not inside `root`."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


def link(root: Path, rel: str, line: int) -> str:
    """A Markdown link `[path:line](file:///...#Lline)` (line 1-based)."""
    return f"[{rel}:{line}]({path_to_uri(root, rel)}#L{line})"


# --- columns --------------------------------------------------------------------------------------


def column(line_text: bytes | None, byte_col: int, encoding: str = "utf-16") -> int:
    """A 0-based byte column within a line converted to the client's position encoding."""
    if line_text is None or encoding == "utf-8":
        return byte_col
    prefix = line_text[:byte_col].decode("utf-8", errors="replace")
    if encoding == "utf-32":
        return len(prefix)
    return len(prefix.encode("utf-16-le")) // 2


def _span(line: int, start: int, end: int) -> lsp.Range:
    return lsp.Range(start=lsp.Position(line=line, character=start),
                     end=lsp.Position(line=line, character=end))


def lines_range(start_line: int, end_line: int) -> lsp.Range:
    """Whole lines start..end (1-based inclusive) as an LSP range ending at the start of the next line."""
    start = max(start_line - 1, 0)
    return lsp.Range(start=lsp.Position(line=start, character=0),
                     end=lsp.Position(line=max(end_line, start), character=0))


def range_json(rng: lsp.Range) -> dict[str, Any]:
    """An LSP range as plain JSON (for custom requests whose results are dicts)."""
    return {"start": {"line": rng.start.line, "character": rng.start.character},
            "end": {"line": rng.end.line, "character": rng.end.character}}


def name_range(defn: Definition, line_text: bytes | None, encoding: str = "utf-16") -> lsp.Range:
    """The range of a definition's name token (its selection range)."""
    line = max(defn.name_line - 1, 0)
    start = column(line_text, defn.name_column, encoding)
    end = column(line_text, defn.name_column + len(defn.name.encode("utf-8")), encoding)
    return _span(line, start, end)


def definition_range(defn: Definition) -> lsp.Range:
    """The whole declaration, by lines."""
    return lines_range(defn.start_line, defn.end_line)


def call_range(call: CallSite, line_text: bytes | None, encoding: str = "utf-16") -> lsp.Range:
    """The range of the called name at a call site."""
    line = max(call.line - 1, 0)
    start = column(line_text, call.column, encoding)
    end = column(line_text, max(call.end_column, call.column), encoding)
    return _span(line, start, end)


def span_range(span: Span, line_text: bytes | None, encoding: str = "utf-16") -> lsp.Range:
    """The range of a name's span (a reference: a call's callee name, a declaration's name)."""
    return _span(max(span.line - 1, 0), column(line_text, span.column, encoding),
                 column(line_text, span.end_column, encoding))


# --- composite types ------------------------------------------------------------------------------


def definition_location(root: Path, defn: Definition, line_text: bytes | None = None,
                        encoding: str = "utf-16") -> lsp.Location:
    """Where a definition's name is (what references/declaration point at)."""
    return lsp.Location(uri=path_to_uri(root, defn.path), range=name_range(defn, line_text, encoding))


def span_location(root: Path, span: Span, line_text: bytes | None = None,
                  encoding: str = "utf-16") -> lsp.Location:
    """Where a reference is."""
    return lsp.Location(uri=path_to_uri(root, span.path), range=span_range(span, line_text, encoding))


def workspace_symbol(root: Path, defn: Definition, line_text: bytes | None = None,
                     encoding: str = "utf-16") -> lsp.WorkspaceSymbol:
    """A definition as a workspace symbol."""
    return lsp.WorkspaceSymbol(
        name=defn.name,
        kind=symbol_kind(defn.kind),
        location=definition_location(root, defn, line_text, encoding),
        container_name=defn.parent or defn.path,
    )


def hierarchy_item(root: Path, defn: Definition, line_text: bytes | None = None,
                   encoding: str = "utf-16") -> lsp.CallHierarchyItem:
    """A definition as a call-hierarchy item; `data` finds it again after the index changes."""
    return lsp.CallHierarchyItem(
        name=defn.name,
        kind=symbol_kind(defn.kind),
        uri=path_to_uri(root, defn.path),
        range=definition_range(defn),
        selection_range=name_range(defn, line_text, encoding),
        detail=f"{defn.qualified_name} · {defn.path}:{defn.start_line}",
        data={"root": str(root), "id": defn.id, "qualified_name": defn.qualified_name,
              "path": defn.path, "name_line": defn.name_line},
    )


def item_key(data: Any) -> DefinitionKey | None:
    """The definition a call-hierarchy item's `data` (from `hierarchy_item`) names, as a domain key
    (None when `data` is not such a record)."""
    if not isinstance(data, dict):
        return None
    def_id, qname, path, line = (data.get(k) for k in ("id", "qualified_name", "path", "name_line"))
    return DefinitionKey(def_id if isinstance(def_id, int) else None,
                         qname if isinstance(qname, str) else None, path if isinstance(path, str) else None,
                         line if isinstance(line, int) and not isinstance(line, bool) else 0)


def search_result(root: Path, result: ResultEntry, line_text: bytes | None = None,
                  encoding: str = "utf-16") -> dict[str, Any]:
    """One engine result as JSON with `uri`, a 0-based LSP `range` (the whole span, for display) and a
    `selectionRange` (where a client puts the cursor: the result's `line` and `column` -- a
    definition's name, a call site's or an exact match's line -- in the client's position encoding,
    `line_text` being that line's bytes) added; the 1-based lines are kept."""
    out = result.to_json()
    out["uri"] = path_to_uri(root, result.path)
    out["range"] = range_json(lines_range(result.start_line, result.end_line))
    line = max((result.line or result.start_line) - 1, 0)
    point = {"line": line, "character": column(line_text, result.column, encoding)}
    out["selectionRange"] = {"start": point, "end": dict(point)}
    return out
