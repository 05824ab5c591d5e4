"""The identifier under the cursor and where it is used: go-to-definition, implementations, references.

- `word_at(line_text, character)`: the identifier touching a 0-based character (code points).
- `target_at(graph, path, line, line_text, character) -> Target`: the identifier and the definitions
  it names, best first (`CallGraph.definitions_for`: the declaration under the cursor, the callees
  linked to the call under the cursor, the name as the file imports it, then by name).
- `references(target, include_declaration, files, read)`: the call sites the graph linked to the
  target's best definition (confident links first), plus its declaration; when the graph knows no
  call (a constant, a field), every whole-identifier occurrence of the word in the current text.

Answers are `Span`s (path, 1-based line, byte columns): the front ends convert them to their
protocol's positions. `retrievers.codebase.Codebase` is the facade that calls these.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from graph.symbol_index import CONFIDENT
from indexing.records import CallSite, Definition

if TYPE_CHECKING:
    from graph.callgraph import CallGraph

_WORD = re.compile(r"[A-Za-z_$][\w$]*")
MAX_OCCURRENCES = 2000  # identifier-occurrence fallback: stop after this many


@dataclass(frozen=True)
class Span:
    """A name's place: workspace-relative path, 1-based line, 0-based byte columns [column, end)."""

    path: str
    line: int
    column: int
    end_column: int

    @classmethod
    def of_definition(cls, d: Definition) -> Span:
        """Where a definition's name is."""
        return cls(d.path, d.name_line, d.name_column, d.name_column + len(d.name.encode("utf-8")))

    @classmethod
    def of_call(cls, site: CallSite) -> Span:
        """Where a call's callee name is."""
        return cls(site.path, site.line, site.column, max(site.end_column, site.column))


@dataclass(frozen=True)
class Target:
    """What the cursor is on: the file, the 1-based line, the identifier and the definitions it names
    (best first), with the graph snapshot they come from (the rest of the request reads the same one)."""

    path: str
    line: int
    word: str
    definitions: list[Definition]
    graph: CallGraph = field(repr=False, compare=False)


def word_at(line_text: str, character: int) -> str | None:
    """The identifier touching 0-based `character` (in code points) on a line."""
    for match in _WORD.finditer(line_text):
        if match.start() <= character <= match.end():
            return match.group(0)
    return None


def target_at(graph: CallGraph, path: str, line: int, line_text: str, character: int) -> Target | None:
    """The identifier at (line 1-based, character in code points) and what it names; None off a word."""
    word = word_at(line_text, character)
    if word is None:
        return None
    column = len(line_text[:character].encode("utf-8"))
    return Target(path, line, word, graph.definitions_for(path, line, column, word), graph)


def implementations(target: Target) -> list[Definition]:
    """Overrides of the method (subclasses of the class) the target names first."""
    out: list[Definition] = []
    for d in target.definitions[:1]:
        out.extend(target.graph.implementations(d.id))
    return out


def occurrences(word: str, files: Iterable[str], read: Callable[[str], bytes]) -> Iterator[Span]:
    """`word` as a whole identifier in the current text of `files` (sorted by path, then position)."""
    pattern = re.compile(rb"(?<![\w$])" + re.escape(word.encode()) + rb"(?![\w$])")
    needle = word.encode()
    for path in sorted(files):
        try:
            data = read(path)
        except Exception:
            continue
        if needle not in data:
            continue
        for number, text in enumerate(data.split(b"\n"), start=1):
            for m in pattern.finditer(text):
                yield Span(path, number, m.start(), m.end())


def references(target: Target, include_declaration: bool, files: Callable[[], Iterable[str]],
               read: Callable[[str], bytes]) -> list[Span]:
    """Call sites of the target from the graph (plus the declaration); identifier occurrences otherwise."""
    out: list[Span] = []
    seen: set[tuple[str, int, int]] = set()
    best = target.definitions[0] if target.definitions else None
    if best is not None:
        if include_declaration:
            out.append(Span.of_definition(best))
            seen.add((best.path, best.name_line, best.name_column))
        # confident call sites first, then the ones linked by a shared name only
        marked = sorted(target.graph.callers_marked(best.id), key=lambda item: item[2] not in CONFIDENT)
        for site, _caller, _evidence in marked:
            key = (site.path, site.line, site.column)
            if key not in seen:
                seen.add(key)
                out.append(Span.of_call(site))
        if len(out) > int(include_declaration):
            return out
    decl = {(d.path, d.name_line, d.name_column) for d in target.definitions}
    for span in occurrences(target.word, files(), read):
        key = (span.path, span.line, span.column)
        if key in seen or (not include_declaration and key in decl):
            continue
        seen.add(key)
        out.append(span)
        if len(out) >= MAX_OCCURRENCES:
            break
    return out
