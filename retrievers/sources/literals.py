"""Split string literals: a message written as several adjacent literals (Python and C
implicit concatenation `"abc " "def"`, `"abc " + "def"` in JS, Java, Go, C#, Kotlin...) is found by an
exact-string query of the whole message.

A lexical pass over a chunk's text, the same at index and at query time: single-line string literals
(`"..."` or `'...'`, escapes kept as written, Python prefixes allowed) separated only by whitespace,
line breaks, backslash line continuations and at most one `+` form a run; a run of two or more
non-empty literals is joined (their contents, no quotes). The text retriever adds the joined runs to
its file's trigram document (indexed, not stored, like the rest of the chunk text) and, when a candidate
chunk does not hold the string verbatim, looks for it in the joined runs: the matching lines are the
lines of the literals the string covers. `match_lines` finds a string's lines in a chunk's text
(verbatim, case-sensitive first).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_LITERAL = re.compile(r"""(?<![\w"'])[rRbBuUfF]{0,2}("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')""")
# Two literals with only a separator between: the cheap test a text must pass before it is lexed.
_ADJACENT = re.compile(r"""["'](?:\s|\\\r?\n)*\+?(?:\s|\\\r?\n)*[rRbBuUfF]{0,2}["']""")
MAX_RUN = 64  # literals per run (a generated table of strings is not one message)


@dataclass(frozen=True)
class Run:
    """Adjacent literals: each piece's content and the offset (in the chunk text) where it starts."""

    pieces: tuple[tuple[int, str], ...]

    @property
    def joined(self) -> str:
        return "".join(content for _, content in self.pieces)


def _adjacent(between: str) -> bool:
    rest = between.replace("\\\r\n", "").replace("\\\n", "").strip()
    return rest in ("", "+")


def runs(text: str) -> Iterator[Run]:
    """The runs of two or more non-empty adjacent literals in `text`, in order."""
    if text.count('"') + text.count("'") < 4 or not _ADJACENT.search(text):
        return
    current: list[tuple[int, str]] = []
    last_end = -1
    for match in _LITERAL.finditer(text):
        body_start = match.start(1) + 1
        content = match.group(1)[1:-1]
        if current and _adjacent(text[last_end:match.start()]) and len(current) < MAX_RUN:
            current.append((body_start, content))
        else:
            if sum(1 for _, c in current if c) >= 2:
                yield Run(tuple(current))
            current = [(body_start, content)]
        last_end = match.end()
    if sum(1 for _, c in current if c) >= 2:
        yield Run(tuple(current))


def joined_strings(text: str) -> list[str]:
    """The joined contents of every run (what a file's trigram document adds)."""
    return [run.joined for run in runs(text)]


def joined_lines(text: str, needle: str, start_line: int) -> tuple[list[int], bool]:
    """Absolute lines of the literals that hold `needle` once their run is joined; case-sensitive
    occurrences first, else case-insensitive (as `match_lines`). Returns (lines, case_sensitive)."""
    found = list(runs(text)) if needle else []
    for sensitive in (True, False):
        pat = needle if sensitive else needle.lower()
        lines: set[int] = set()
        for run in found:
            joined = run.joined if sensitive else run.joined.lower()
            ends, total = [], 0
            for _, content in run.pieces:
                total += len(content)
                ends.append(total)
            pos = joined.find(pat)
            while pos >= 0:
                first = next(i for i, end in enumerate(ends) if end > pos)
                last = next(i for i, end in enumerate(ends) if end >= pos + len(pat))
                for offset, _ in run.pieces[first:last + 1]:
                    lines.add(text.count("\n", 0, offset))
                pos = joined.find(pat, pos + max(1, len(pat)))
        if lines:
            return [start_line + n for n in sorted(lines)], sensitive
    return [], False


def line_groups(lines: list[int]) -> list[tuple[int, int]]:
    """Sorted line numbers as (first, last) runs of consecutive lines: one result per split message."""
    out: list[tuple[int, int]] = []
    for n in sorted(set(lines)):
        if out and n == out[-1][1] + 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


def match_lines(text: str, needle: str, start_line: int) -> tuple[list[int], bool]:
    """Absolute line numbers where `needle` occurs in `text` (a chunk starting at `start_line`).

    Case-sensitive occurrences win; only when there are none is a case-insensitive pass made.
    Returns (lines, case_sensitive).
    """
    for sensitive in (True, False):
        hay, pat = (text, needle) if sensitive else (text.lower(), needle.lower())
        if not pat:
            return [], False
        span = pat.count("\n")
        lines: set[int] = set()
        pos = hay.find(pat)
        while pos >= 0:
            first = hay.count("\n", 0, pos)
            lines.update(range(first, first + span + 1))
            pos = hay.find(pat, pos + len(pat))
        if lines:
            return [start_line + n for n in sorted(lines)], sensitive
    return [], False
