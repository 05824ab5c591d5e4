"""Structure-aware chunking in the cAST manner.

`chunk_tree` keeps the largest syntax unit that fits a budget of non-whitespace characters, splits
only what is too large (recursively, at child boundaries, so a large function splits at statement
boundaries and a large class into its methods plus chunks for the rest of its body), and packs small
adjacent siblings together so there are no mini-chunks. Comments directly above a declaration,
decorators and attributes stay with it; closing tokens stay with the construct they close.

Budgets, spans, the non-whitespace measure and line cutting (`ChunkOptions`, `Span`, `NonWhitespace`,
`cut_spans`) live in `indexing.textchunks` and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tree_sitter import Node

from indexing.languages import LangSpec
from indexing.symbols import body_of as _body
from indexing.textchunks import DEFAULT_MAX_CHARS, ChunkOptions, NonWhitespace, Span, cut_spans

__all__ = [
    "DEFAULT_MAX_CHARS", "ChunkOptions", "DefInfo", "NonWhitespace", "Span", "chunk_tree", "cut_spans",
]


@dataclass(frozen=True)
class DefInfo:
    """What the chunker needs about a declaration, keyed by its outer byte range."""

    kind: str  # chunk kind: function, method, class, block
    symbol: str
    header: str  # signature line(s) used as the header of chunks inside it
    sig_start: int  # byte where the declaration proper starts (after decorators)


@dataclass
class _Unit:
    nodes: list[Node]
    main: int  # index of the node that carries the unit (the others are prefixes / closers)
    start: int = 0
    end: int = 0
    info: DefInfo | None = None


# Keywords that close a construct (anonymous nodes on their own line otherwise open the next unit).
_CLOSERS = frozenset({"end", "fi", "done", "esac", "endif", "endfor", "endforeach", "endwhile", "endswitch"})


class _TreeChunker:
    def __init__(
        self, source: bytes, spec: LangSpec, defs: Mapping[tuple[int, int], DefInfo], options: ChunkOptions
    ) -> None:
        self.source = source
        self.spec = spec
        self.defs = defs
        self.budget = max(1, options.max_chars)
        self.min_size = options.min_size
        self.size = NonWhitespace(source)

    # -- units -------------------------------------------------------------------------------------
    def _too_big(self, node: Node) -> bool:
        return self.size(node.start_byte, node.end_byte) > self.budget

    def _flatten(self, nodes: list[Node]) -> list[Node]:
        out: list[Node] = []
        for node in nodes:
            if (
                node.child_count
                and (node.start_byte, node.end_byte) not in self.defs
                and not self._atomic(node)
                and self._too_big(node)
            ):
                out.extend(self._flatten(node.children))
            else:
                out.append(node)
        return out

    def _atomic(self, node: Node) -> bool:
        """Strings and comments are cut by lines, never at their inner nodes (quote + content)."""
        kind = node.type
        return node.child_count == 0 or kind in self.spec.comments or "string" in kind or "heredoc" in kind

    @staticmethod
    def _closer(node: Node) -> bool:
        """Anonymous punctuation and closing keywords (`}`, `)`, `;`, `end`), as opposed to openers."""
        return not node.is_named and (node.type in _CLOSERS or not node.type.replace("_", "a").isalnum())

    def _is_prefix(self, node: Node) -> bool:
        if node.type in self.spec.comments:
            return True  # a declaration that may lead another (a signature) is not led by itself
        return node.type in self.spec.attach_next and (node.start_byte, node.end_byte) not in self.defs

    def _attached(self, prefix: Node, node: Node) -> bool:
        """Whether a comment/attribute belongs to the node after it (adjacent, or a /** doc */ one
        blank line above)."""
        gap = node.start_point.row - _end_row(prefix)
        return gap <= 1 or (gap == 2 and self.source.startswith(b"/**", prefix.start_byte))

    def _continues(self, last: _Unit, node: Node) -> bool:
        """Whether `node` is a further equation of the definition `last` holds (same symbol)."""
        info = self.defs.get((node.start_byte, node.end_byte))
        head = last.nodes[last.main]
        previous = self.defs.get((head.start_byte, head.end_byte))
        return info is not None and previous is not None and info.symbol == previous.symbol

    def _units(self, nodes: list[Node]) -> list[_Unit]:
        units: list[_Unit] = []
        pending: list[Node] = []
        for node in nodes:
            if node.end_byte <= node.start_byte and not node.is_named:
                continue
            last = units[-1] if units else None
            if self._is_prefix(node):
                if last is not None and not pending and node.start_point.row == _end_row(last.nodes[-1]):
                    last.nodes.append(node)  # trailing comment on the same line
                else:
                    pending.append(node)
                continue
            if not node.is_named:
                opener = not self._closer(node)
                same_line = last is not None and node.start_point.row == _end_row(last.nodes[-1])
                if last is not None and not pending and (same_line or not opener):
                    last.nodes.append(node)  # closing syntax stays with what it closes
                    continue
                if opener:  # a keyword that opens what follows (`impl`, `export`, `class`)
                    pending.append(node)
                    continue
            if (
                last is not None
                and not pending
                and node.start_point.row == _end_row(last.nodes[-1])
                and (node.start_byte, node.end_byte) not in self.defs
            ):
                row = node.start_point.row
                k = next(i for i, n in enumerate(last.nodes) if _end_row(n) >= row)
                line_fits = self.size(last.nodes[k].start_byte, node.end_byte) <= self.budget
                only_prefix = all(self._is_prefix(n) or not n.is_named for n in last.nodes[:k])
                whole_fits = self.size(last.nodes[0].start_byte, node.end_byte) <= self.budget
                if line_fits and (only_prefix or whole_fits):
                    last.nodes.append(node)  # the rest of a line stays with its start while it fits
                    continue
                short = self.size(last.nodes[k].start_byte, last.nodes[-1].end_byte) <= self.min_size
                if last.info is None and short and not self._closer(last.nodes[k]):
                    # A short line start (`fields=`) moves to what it introduces.
                    if k <= last.main:
                        units[-1] = _Unit(nodes=[*last.nodes, node], main=len(last.nodes))
                    else:
                        units.append(_Unit(nodes=[*last.nodes[k:], node], main=len(last.nodes) - k))
                        del last.nodes[k:]
                    continue
            if self.spec.equations and last is not None and self._continues(last, node):
                last.nodes.extend([*pending, node])  # a further equation of the same definition
                pending = []
                continue
            if pending and not self._attached(pending[-1], node):
                units.append(_Unit(nodes=pending, main=len(pending) - 1))  # detached comment block
                pending = []
            units.append(_Unit(nodes=[*pending, node], main=len(pending)))
            pending = []
        if pending:
            if units:
                units[-1].nodes.extend(pending)
            else:
                units.append(_Unit(nodes=pending, main=len(pending) - 1))
        for unit in units:
            unit.start = unit.nodes[0].start_byte
            unit.end = unit.nodes[-1].end_byte
            main = unit.nodes[unit.main]
            unit.info = self.defs.get((main.start_byte, main.end_byte))
        return units

    # -- packing -----------------------------------------------------------------------------------
    def chunk(self, root: Node) -> list[Span]:
        if root.end_byte <= root.start_byte:
            return []
        if not self._too_big(root):  # the whole file fits: one chunk
            infos = [u.info for u in self._units(root.children) if u.info is not None]
            if not root.child_count:
                return []
            only = infos[0] if len(infos) == 1 else None
            return [self._span(infos, root.start_byte, root.end_byte, (), only)]
        return self._merge_small(self._process(root.children, ()))

    def _process(self, nodes: list[Node], ctx: tuple[DefInfo, ...]) -> list[Span]:
        """Pack `nodes` (children of the innermost construct in `ctx`) into spans."""
        out: list[Span] = []
        group: list[_Unit] = []
        group_size = 0

        def flush() -> None:
            nonlocal group, group_size
            if group:
                out.append(self._group_span(group, ctx))
            group, group_size = [], 0

        for unit in self._units(self._flatten(nodes)):
            size = self.size(unit.start, unit.end)
            if size > self.budget:
                flush()
                if all(self._is_prefix(n) for n in unit.nodes):
                    out.extend(self._pack_prefixes(unit.nodes, ctx))  # a long run of comment lines
                    continue
                rest = self._detach_prefix(unit, ctx, out)
                if rest is None:
                    out.extend(self._split(unit, ctx))
                elif self.size(rest.start, rest.end) > self.budget:
                    out.extend(self._split(rest, ctx))
                else:
                    group, group_size = [rest], self.size(rest.start, rest.end)
            elif unit.info is not None and size >= self.min_size:
                flush()
                out.append(self._group_span([unit], ctx))
            elif group and group_size + size <= self.budget:
                group.append(unit)
                group_size = self.size(group[0].start, unit.end)
            else:
                flush()
                group, group_size = [unit], size
        flush()
        return self._merge_small(out)

    def _pack_prefixes(self, nodes: list[Node], ctx: tuple[DefInfo, ...]) -> list[Span]:
        """Comments (and attributes) over the budget, packed in order into spans that fit; one larger
        than the budget is cut by lines. Iterative: Rust macro docs run to hundreds of `///` lines,
        one node each, and peeling them one by one recursed past Python's limit."""
        spans: list[Span] = []
        start = end = -1
        for node in nodes:
            if start >= 0 and self.size(start, node.end_byte) > self.budget:
                spans.append(self._span([], start, end, ctx, None))
                start = -1
            if self.size(node.start_byte, node.end_byte) > self.budget:
                pieces = cut_spans(self.source, node.start_byte, node.end_byte, self.budget, 0, self.size)
                spans.extend(self._span([], a, b, ctx, None) for a, b in pieces)
                continue
            start = node.start_byte if start < 0 else start
            end = node.end_byte
        if start >= 0:
            spans.append(self._span([], start, end, ctx, None))
        return spans

    def _detach_prefix(self, unit: _Unit, ctx: tuple[DefInfo, ...], out: list[Span]) -> _Unit | None:
        """A too-large statement led by a long comment: the comment becomes its own chunk(s) and the
        statement is chunked on its own (declarations keep their comments: see _split)."""
        j = 0
        while j < unit.main and self._is_prefix(unit.nodes[j]):
            j += 1
        if unit.info is not None or j == 0:
            return None
        out.extend(self._process(unit.nodes[:j], ctx))
        rest = unit.nodes[j:]
        return _Unit(nodes=rest, main=unit.main - j, start=rest[0].start_byte, end=rest[-1].end_byte)

    def _split(self, unit: _Unit, ctx: tuple[DefInfo, ...]) -> list[Span]:
        main = unit.nodes[unit.main]
        inner = (*ctx, unit.info) if unit.info is not None else ctx
        if self._atomic(main):
            before = unit.nodes[: unit.main]
            after = unit.nodes[unit.main + 1 :]
            start = main.start_byte
            # `x = """...` : a short start of the string's first line stays on that line.
            lead = 0
            while lead < len(before) and self._is_prefix(before[lead]):
                lead += 1
            if lead < len(before) and before[lead].start_point.row == main.start_point.row:
                if self.size(before[lead].start_byte, main.start_byte) <= self.min_size:
                    start, before = before[lead].start_byte, before[:lead]
            spans = [
                self._span([], a, b, inner, None)
                for a, b in cut_spans(self.source, start, main.end_byte, self.budget, 0, self.size)
            ]
            if before:
                spans = self._process(before, ctx) + spans
            if after:
                spans += self._process(after, ctx)
            return spans
        body = _body(main) if unit.info is not None else None
        # A split declaration is cut at the statement boundaries of its body.
        children = _expand_to(main, body) if body is not None else main.children
        spans = self._process([*unit.nodes[: unit.main], *children, *unit.nodes[unit.main + 1 :]], inner)
        if spans and unit.info is not None:
            spans[0].opens = True
        return spans

    def _group_span(self, group: list[_Unit], ctx: tuple[DefInfo, ...]) -> Span:
        infos = [u.info for u in group if u.info is not None]
        return self._span(infos, group[0].start, group[-1].end, ctx, infos[0] if len(infos) == 1 else None)

    def _span(
        self, infos: list[DefInfo], start: int, end: int, ctx: tuple[DefInfo, ...], only: DefInfo | None
    ) -> Span:
        header = "\n".join(c.header for c in ctx if c.sig_start < start)
        size = self.size(start, end)
        scope = ctx[-1].symbol if ctx else None
        if only is not None:
            return Span(start, end, size, only.kind, only.symbol, header, 1, scope)
        if ctx:
            owner = ctx[-1]
            kind = owner.kind if owner.kind in ("function", "method") else "block"
            return Span(start, end, size, kind, owner.symbol, header, len(infos), scope)
        return Span(start, end, size, "block", None, header, len(infos), scope)

    def _merge_small(self, spans: list[Span]) -> list[Span]:
        """Merge spans under min_size into a neighbour of the same scope.

        The merged span must fit the budget; failing that, it may exceed it by up to min_size (so a
        split function's signature or its last `return` stays with the rest of it). Spans of different
        scopes (a module-level statement after a split class) are never merged.
        """
        i = 0
        while i < len(spans) and len(spans) > 1:
            span = spans[i]
            if span.size >= self.min_size:
                i += 1
                continue
            prev = spans[i - 1] if i > 0 else None
            nxt = spans[i + 1] if i + 1 < len(spans) else None
            choice = None
            for slack in (0, self.min_size):
                prev_ok = prev is not None and self._fits(prev, span, slack)
                if prev_ok and (prev is not None and prev.defs == 0 or slack or nxt is None):
                    choice = "prev"
                elif nxt is not None and self._fits(span, nxt, slack, forward=True):
                    choice = "next"
                elif prev is not None and self._fits(prev, span, slack):
                    choice = "prev"
                if choice:
                    break
            if choice == "prev" and prev is not None:
                spans[i - 1] = self._join(prev, span)
                del spans[i]
            elif choice == "next" and nxt is not None:
                spans[i] = self._join(span, nxt)
                del spans[i + 1]
            else:
                i += 1
        return spans

    def _fits(self, a: Span, b: Span, slack: int, forward: bool = False) -> bool:
        """Whether a and b may merge: same scope (or a leads into the signature span of a split
        declaration) and within the budget; the slack is only for pieces of statements, never to
        pack a whole declaration into another."""
        same = a.scope == b.scope or (forward and b.opens)
        if slack and (a.defs or b.defs):
            return False
        return same and self.size(a.start, b.end) <= self.budget + slack

    def _join(self, a: Span, b: Span) -> Span:
        size = self.size(a.start, b.end)
        defs = a.defs + b.defs
        lead = a if a.defs >= b.defs and (a.defs or a.size >= b.size) else b
        if defs > 1:
            kind, symbol = "block", a.scope
            if a.symbol == b.symbol and a.kind == b.kind:
                kind, symbol = a.kind, a.symbol
        else:
            kind, symbol = lead.kind, lead.symbol
        header = a.header if len(a.header) <= len(b.header) else b.header
        scope = b.scope if b.opens else a.scope
        return Span(a.start, b.end, size, kind, symbol, header, defs, scope, a.opens or b.opens)


def _end_row(node: Node) -> int:
    """The last row a node covers: a node whose end is the start of a line (its trailing newline is
    part of it, as Haskell's `imports`) ends on the row before."""
    end = node.end_point
    return end.row - 1 if end.column == 0 and end.row > node.start_point.row else end.row


def _expand_to(node: Node, body: Node) -> list[Node]:
    """The children of `node`, with the ancestors of `body` opened down to the body's children."""
    out: list[Node] = []
    for child in node.children:
        if (child.start_byte, child.end_byte, child.type) == (body.start_byte, body.end_byte, body.type):
            out.extend(child.children)
        elif child.start_byte <= body.start_byte and body.end_byte <= child.end_byte and child.child_count:
            out.extend(_expand_to(child, body))
        else:
            out.append(child)
    return out


def chunk_tree(
    root: Node, source: bytes, spec: LangSpec, defs: Mapping[tuple[int, int], DefInfo], options: ChunkOptions
) -> list[Span]:
    """cAST chunks of a parsed file; `defs` maps outer byte ranges of declarations to their info."""
    spans = _TreeChunker(source, spec, defs, options).chunk(root)
    for span in spans:  # start at the line's beginning when only indentation precedes
        line_start = source.rfind(b"\n", 0, span.start) + 1
        if not source[line_start : span.start].strip():
            span.start = line_start
    return spans
