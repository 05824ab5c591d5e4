"""Definitions, call sites and imports from one tree-sitter tree, driven by queries/<lang>.scm.

Capture conventions in the query files (one match yields one record):

- `@definition.<kind>` on a declaration node, with `@name` on its name; optional `@scope.name` (a
  receiver or owner type written outside the declaration, e.g. Go `func (s *Server) Handle`) and
  `@base` (a base class / implemented interface). Matches on the same node are merged, so bases can
  come from separate patterns.
- `@scope` with `@name`: a node that qualifies the declarations inside it without being one itself
  (a Rust `impl Type` block).
- `@call` with `@callee` and optional `@receiver`.
- `@import` with `@import.module` and optional `@import.name`, `@import.alias`, `@import.default`.
- `@local` (or `@local.field` for a typed class/struct field) with `@local.name` and `@local.value`
  or `@local.type`: receiver type evidence (see `indexing.receivers`), carried by the call sites.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from operator import attrgetter

from tree_sitter import Node, Query, QueryCursor

from indexing.doc_text import collapse, docstring, leading_comment, node_text
from indexing.languages import LangSpec, load_query, spec_for
from indexing.receivers import (
    CLASS_BODY_LANGS,
    LOCAL,
    Evidence,
    add_local,
    file_evidence,
    receiver_type,
    sweep_to,
)
from indexing.records import CallSite, Definition, Import

CLASS_KINDS = frozenset(
    {"class", "interface", "struct", "enum", "trait", "type", "object", "impl", "protocol"}
)
_BODY_TYPES = frozenset(
    {
        "block", "body", "class_body", "declaration_list", "field_declaration_list", "compound_statement",
        "statement_block", "function_body", "template_body", "body_statement", "enum_body",
        "interface_body", "protocol_body", "enum_class_body", "statements", "do_block",
        "enum_variant_list", "enum_member_declaration_list", "object_type", "struct_type",
        "interface_type", "class_declarations", "instance_declarations", "Block", "ContainerDecl",
    }
)
_MAX_SIG = 300
_MAX_RECEIVER = 120
_POSITION = attrgetter("line", "column")  # a call site's (line, column): the order `_calls` gives



@dataclass
class DefNode:
    """A declaration found in the tree, with what the chunker and the records need."""

    node: Node
    kind: str
    name: str
    name_node: Node
    outer: Node  # the declaration with its wrappers (decorators, export)
    scope_name: str | None = None
    bases: list[str] = field(default_factory=list)
    qualified: str = ""
    parent: str | None = None
    signature: str = ""  # first line, stripped
    header: str = ""  # whole signature up to the body, whitespace collapsed
    doc: str = ""
    continues: bool = False  # a later equation of the definition before it (`LangSpec.equations`)
    last: Node | None = None  # the definition's last equation, when it has several


@dataclass
class Symbols:
    """Everything the query extracted from one tree."""

    defs: list[DefNode]
    calls: list[CallSite]
    imports: list[Import]
    scopes: list[DefNode] = field(default_factory=list)  # `impl` blocks: qualify, but define nothing


@functools.cache
def _definition_captures(query: Query) -> frozenset[str]:
    """The query's capture names that mark a definition (`@definition.<kind>`)."""
    names = (query.capture_name(i) for i in range(query.capture_count))
    return frozenset(name for name in names if name.startswith("definition."))


def extract(root: Node, source: bytes, lang: str, path: str) -> Symbols:
    """Run the language's query over the tree and build definitions, calls and imports."""
    query = load_query(lang)
    if query is None:
        return Symbols([], [], [], [])
    spec = spec_for(lang)
    found: dict[tuple[int, int, str], DefNode] = {}
    scopes: list[DefNode] = []
    raw_calls: list[tuple[Node, Node | None, Node]] = []
    raw_locals: list[tuple[Node, str, str, bool]] = []  # (node, name, evidence, is a field)
    imports: list[Import] = []
    extra: dict[tuple[int, int, str], list[tuple[str, str]]] = {}
    kinds = _definition_captures(query)
    for _pattern, caps in QueryCursor(query).matches(root):
        # (the first `definition.*` capture: most matches have none, which `isdisjoint` says in C)
        kind_key = None if kinds.isdisjoint(caps) else next(k for k in caps if k in kinds)
        if kind_key is not None:
            node = caps[kind_key][0]
            key = (node.start_byte, node.end_byte, node.type)
            kind = kind_key.split(".", 1)[1]
            if key not in found and "name" in caps:
                name_node = caps["name"][0]
                found[key] = DefNode(node, kind, node_text(source, name_node), name_node, _outer(node, spec))
            elif key in found and _generic(found[key].kind, kind):
                found[key].kind = kind  # a specific pattern (interface, struct) wins over the generic one
            notes = extra.setdefault(key, [])
            if "scope.name" in caps:
                notes.append(("scope", node_text(source, caps["scope.name"][0])))
            notes.extend(("base", collapse(node_text(source, b), 200)) for b in caps.get("base", ()))
        elif "scope" in caps and "name" in caps:
            node = caps["scope"][0]
            name_node = caps["name"][0]
            scopes.append(DefNode(node, "impl", collapse(node_text(source, name_node), 200), name_node, node))
        elif "call" in caps and "callee" in caps:
            receiver = caps["receiver"][0] if "receiver" in caps else None
            raw_calls.append((caps["callee"][0], receiver, caps["call"][0]))
        elif "import" in caps and ("import.module" in caps or "import.path" in caps):
            imports.append(_import(source, path, caps))
        elif ("local" in caps or "local.field" in caps or "local.dictuse" in caps) and "local.name" in caps:
            add_local(raw_locals, source, caps)
    for key, notes in extra.items():
        entry = found.get(key)
        if entry is None:
            continue
        for what, text in notes:
            if what == "scope" and entry.scope_name is None:
                entry.scope_name = _scope_name(text)
            elif what == "base" and text not in entry.bases:
                entry.bases.append(text)
    defs = sorted(found.values(), key=lambda d: (d.node.start_byte, -d.node.end_byte))
    if spec.equations:
        _merge_equations(defs, spec)
    _qualify(defs, scopes)
    for d in defs + scopes:
        _describe(d, source, spec)
    evidence = file_evidence(raw_locals, defs, CLASS_KINDS)
    calls = _calls(raw_calls, defs, source, path, evidence, lang in CLASS_BODY_LANGS)
    # One record per import; a bare `require("x")` match is dropped when a named one covers it.
    unique = {(i.line, i.module, i.name, i.alias): i for i in imports}
    named = {(i.line, i.module) for i in unique.values() if i.name or i.alias}
    kept = [i for i in unique.values() if i.name or i.alias or (i.line, i.module) not in named]
    imports = sorted(kept, key=lambda i: i.line)
    for scope in scopes:
        scope.qualified = scope.name
    return Symbols(defs, calls, imports, scopes)


def _merge_equations(defs: list[DefNode], spec: LangSpec) -> None:
    """Mark each definition that repeats the name and kind of the definition just before it (only
    comments and pragmas between) as a continuation of it: one definition written as equations."""
    skip = spec.comments | {"pragma"}
    heads: dict[tuple[int, int], DefNode] = {}
    for d in defs:
        prev = d.node.prev_named_sibling
        while prev is not None and prev.type in skip:
            prev = prev.prev_named_sibling
        head = heads.get((prev.start_byte, prev.end_byte)) if prev is not None else None
        if head is not None and head.name == d.name and head.kind == d.kind:
            d.continues = True
            head.last = d.node
        heads[(d.node.start_byte, d.node.end_byte)] = head if d.continues and head is not None else d


def _generic(found: str, other: str) -> bool:
    """Whether kind `found` is a generic one that `other` makes specific: `class` -> `interface`,
    and `constant` -> a class kind (Zig's `const Foo = struct {...}` is both)."""
    if found == "class":
        return other != "class"
    return found == "constant" and other in CLASS_KINDS


def _scope_name(text: str) -> str:
    """`Foo.prototype` -> `Foo`; C++ `ns::Foo<T>` -> `Foo`."""
    text = text.removesuffix(".prototype")
    if "<" in text:
        text = text.split("<", 1)[0]
    return text.rsplit("::", 1)[-1]


def _outer(node: Node, spec: LangSpec) -> Node:
    outer = node
    while outer.parent is not None and outer.parent.type in spec.wrappers:
        outer = outer.parent
    return outer


def _qualify(defs: list[DefNode], scopes: list[DefNode]) -> None:
    """Set qualified names and parents by nesting (defs sorted by start, outer first)."""
    items: list[tuple[int, int, int, DefNode | str]] = [
        (d.node.start_byte, -d.node.end_byte, 1, d) for d in defs
    ] + [(s.node.start_byte, -s.node.end_byte, 0, s.name) for s in scopes]
    items.sort(key=lambda t: (t[0], t[1], t[2]))
    stack: list[tuple[int, str, bool]] = []  # (end byte, qualified name, class-like)
    for start, neg_end, _order, item in items:
        end = -neg_end
        while stack and stack[-1][0] <= start:
            stack.pop()
        if isinstance(item, str):
            stack.append((end, item, True))
            continue
        d = item
        if d.scope_name:
            d.parent = d.scope_name
            d.qualified = f"{d.scope_name}.{d.name}"
            if d.kind == "function":
                d.kind = "method"
        elif stack:
            d.parent = stack[-1][1]
            d.qualified = f"{d.parent}.{d.name}"
            if d.kind == "function" and stack[-1][2]:
                d.kind = "method"
        else:
            d.qualified = d.name
        stack.append((end, d.qualified, d.kind in CLASS_KINDS))


def body_of(node: Node, depth: int = 0) -> Node | None:
    """The body of a declaration: its `body` field, else its last body-like child, else (for
    `const f = () => {...}`, `x.y = function () {...}`) the body of the function value inside."""
    body = node.child_by_field_name("body")
    if body is not None:
        return body
    for child in reversed(node.named_children):
        if child.type in _BODY_TYPES:
            return child
    if depth < 3:
        for child in reversed(node.named_children):
            if child.child_count and (found := body_of(child, depth + 1)) is not None:
                return found
    return None


def _describe(d: DefNode, source: bytes, spec: LangSpec) -> None:
    """Signature line, header (signature up to the body) and first doc line."""
    node = d.node
    name_row = d.name_node.start_point.row
    line_start = source.rfind(b"\n", 0, d.name_node.start_byte) + 1
    sig_start = max(node.start_byte, line_start) if node.start_point.row < name_row else node.start_byte
    line_end = source.find(b"\n", d.name_node.end_byte)
    line_end = len(source) if line_end < 0 else line_end
    body = body_of(node)
    sig_end = min(line_end, node.end_byte)
    if body is not None and sig_start < body.start_byte < line_end:
        sig_end = body.start_byte
    d.signature = collapse(source[sig_start:sig_end].decode("utf-8", errors="replace"), _MAX_SIG)
    header_end = body.start_byte if body is not None and body.start_byte > sig_start else line_end
    if header_end - sig_start > 4 * _MAX_SIG:
        header_end = line_end
    d.header = collapse(source[sig_start:header_end].decode("utf-8", errors="replace"), _MAX_SIG)
    if not d.header.endswith(":") and spec.docstrings and body is not None:
        d.header += ":"
    d.doc = docstring(body, source) if spec.docstrings and body is not None else ""
    if not d.doc:
        d.doc = leading_comment(d.outer, source, spec)


def _calls(
    raw: list[tuple[Node, Node | None, Node]], defs: list[DefNode], source: bytes, path: str,
    evidence: Evidence | None = None, class_body: bool = False,
) -> list[CallSite]:
    """Call sites with the innermost enclosing definition as caller (one sweep over sorted starts)."""
    index = {id(d): k for k, d in enumerate(defs)}
    raw.sort(key=lambda c: c[2].start_byte)
    out: list[CallSite] = []
    seen: set[tuple[int, int]] = set()
    stack: list[DefNode] = []
    di = 0
    for callee, receiver, call in raw:
        key = (callee.start_byte, callee.end_byte)
        if key in seen:
            continue
        seen.add(key)
        di = sweep_to(call.start_byte, defs, stack, di)
        caller = stack[-1].qualified if stack else None
        receiver_text = None  # Haskell's qualified `M.size`: the module `M.` is the receiver `M`
        if receiver is not None:
            receiver_text = collapse(node_text(source, receiver), _MAX_RECEIVER).rstrip(".")
        rtype = None
        if receiver_text and evidence is not None:
            rtype = receiver_type(receiver_text, stack, evidence, index, class_body, CLASS_KINDS)
        elif evidence is not None and stack and evidence.is_local(
                node_text(source, callee), [index[id(d)] for d in stack]):
            rtype = LOCAL
        start = callee.start_point
        end_col = callee.end_point.column if callee.end_point.row == start.row else start.column + (
            callee.end_byte - callee.start_byte
        )
        out.append(
            CallSite(
                path=path,
                line=start.row + 1,
                column=start.column,
                end_column=end_col,
                callee=collapse(node_text(source, callee), 200),
                receiver=receiver_text,
                caller=caller,
                receiver_type=rtype,
            )
        )
    out.sort(key=_POSITION)
    return out


def _path_segments(first: Node) -> list[Node]:
    """`first` and the siblings of the same type that follow it (Scala `import a.b.c`)."""
    parts = [first]
    sibling = first.next_named_sibling
    while sibling is not None and sibling.type == first.type:
        parts.append(sibling)
        sibling = sibling.next_named_sibling
    return parts


def _import(source: bytes, path: str, caps: dict[str, list[Node]]) -> Import:
    parts = caps.get("import.module") or _path_segments(caps["import.path"][0])
    module = source[parts[0].start_byte : parts[-1].end_byte].decode("utf-8", errors="replace")
    module = module.strip().strip("\"'`<>")
    name = node_text(source, caps["import.name"][0]) if "import.name" in caps else None
    if name is None and "import.default" in caps:
        name = "default"
    alias = node_text(source, caps["import.alias"][0]) if "import.alias" in caps else None
    if alias == name:
        alias = None
    line = caps["import"][0].start_point.row + 1
    return Import(path=path, line=line, module=module, name=name, alias=alias)


def _end_line(node: Node) -> int:
    """1-based last line of a node (a node ending just after a newline ends on the line before)."""
    end = node.end_point
    return end.row + (0 if end.column == 0 and end.row > node.start_point.row else 1)


def to_definitions(defs: list[DefNode], path: str) -> list[Definition]:
    """Definition records for the extracted declarations."""
    out: list[Definition] = []
    for d in defs:
        if d.continues:
            continue
        node = d.outer
        end = d.last if d.last is not None and d.last.end_byte > node.end_byte else node
        out.append(
            Definition(
                name=d.name,
                qualified_name=d.qualified,
                kind=d.kind,
                path=path,
                start_line=node.start_point.row + 1,
                end_line=_end_line(end),
                start_byte=node.start_byte,
                end_byte=end.end_byte,
                name_line=d.name_node.start_point.row + 1,
                name_column=d.name_node.start_point.column,
                signature=d.signature,
                doc=d.doc,
                parent=d.parent,
                bases=tuple(d.bases),
            )
        )
    return out
