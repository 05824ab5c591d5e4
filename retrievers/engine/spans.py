"""Readable spans: a result longer than a screenful shows its best-matching part under its header.

The index stores coordinates, not text, so the part is chosen at answer time from the file's lines
(already read for the snippet): each line of the long span scores the number of distinct query terms
it contains (lower-cased identifiers of the query and their parts, three letters or more, common
question words left out; a quoted string is one term; terms the header shows are not counted). The
window of `max_lines` lines with the most matching lines wins (ties: the earliest), moved so that its
first matching line sits a few lines from its top. When the header shows every term (the query names
the definition) the head is shown. When no line matches (a question answered by meaning), the window
starts at the definition's best-ranked part (`parts` in a retriever's explain: the chunk ids that
matched). A window at the head of the span is shown from the first line; otherwise the definition's
header (its lines up to the name line, at most `HEADER_MAX` of them) is shown above it in the snippet.

The result keeps `start_line`/`end_line` for the shown window and adds `full_start_line`,
`full_end_line` and `lines_total` for the whole definition (README.md, docs/design.md).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from retrievers.ranking.candidate import detail_in
from retrievers.sources.tokenize import identifiers, split_identifier

MAX_SPAN_LINES = 60  # the default screenful; EngineOptions.max_span_lines, 0 = never cut
HEADER_MAX = 3
CONTEXT = 4  # lines kept above the first matching line of a window
MIN_TERM = 3
STOPWORDS = frozenset("""
how what where which when who why does do did is are was were the and for with from into that this
these those there their then than function method class code find show get set use used using uses
implementation implement implemented handle handles handled work works file files module where's
about between each every all any can could should would will its it's not but via per
""".split())
_QUOTED = re.compile(r"\"([^\"]{3,})\"|'([^']{3,})'|`([^`]{3,})`")


@dataclass(frozen=True)
class Span:
    """The lines a result shows: `start`..`end` (1-based inclusive), the header above it (`header_end`
    0: none, the window starts at the top), and the whole span `full_start`..`full_end`."""

    start: int
    end: int
    full_start: int
    full_end: int
    header_start: int = 0
    header_end: int = 0

    @property
    def lines_total(self) -> int:
        return self.full_end - self.full_start + 1


def query_terms(query: str) -> tuple[str, ...]:
    """The lower-cased terms a line is scored by (quoted strings whole, identifiers and their parts)."""
    terms: list[str] = []
    for match in _QUOTED.finditer(query):
        terms.append(next(g for g in match.groups() if g).lower())
    for ident in identifiers(query):
        low = ident.lower()
        if len(low) >= MIN_TERM and low not in STOPWORDS:
            terms.append(low)
        for part in split_identifier(ident):
            part = part.lower()
            if len(part) >= MIN_TERM and part not in STOPWORDS:
                terms.append(part)
    return tuple(dict.fromkeys(terms))


def _line_scores(lines: Sequence[str], first: int, last: int, terms: Sequence[str]) -> list[int]:
    """Distinct terms per line for lines first..last (1-based). Each term is looked for in the span's
    lowered text at once (`str.find`), and its matches counted once per line they fall on: a long
    definition has hundreds of lines, and most terms occur on few of them."""
    window = lines[first - 1:last]
    out = [0] * len(window)
    if not window:
        return out
    lowered = [text.lower() for text in window]
    text = "\n".join(lowered)
    starts = list(accumulate((len(line) + 1 for line in lowered[:-1]), initial=0))
    for term in terms:
        if not term:  # (every line holds the empty string)
            out = [n + 1 for n in out]
            continue
        if "\n" in term:  # (no line holds it: lines have no line ends)
            continue
        at = text.find(term)
        while at >= 0:
            line = bisect_right(starts, at) - 1
            out[line] += 1
            at = text.find(term, starts[line + 1]) if line + 1 < len(starts) else -1  # the next line on
    return out


def best_part_line(explain: Mapping[str, Any], chunk_start: Mapping[int, int]) -> int | None:
    """The first line of the best-ranked matching part of a split definition, from the explain's
    `parts` (semantic first, then text), when it is known."""
    for modality in ("semantic", "text", "structural"):
        detail = detail_in(explain, modality)
        if detail is not None and detail.parts:
            line = chunk_start.get(detail.parts[0])
            if line is not None:
                return line
    return None


def choose_span(lines: Sequence[str] | None, start: int, end: int, terms: Iterable[str],
                max_lines: int = MAX_SPAN_LINES, name_line: int = 0,
                part_line: int | None = None) -> Span:
    """The window of a span `start`..`end` to show (the whole span when it fits or `max_lines` is 0)."""
    whole = Span(start, end, start, end)
    if max_lines <= 0 or end - start + 1 <= max_lines or not lines:
        return whole
    end = min(end, len(lines))
    if end - start + 1 <= max_lines:
        return Span(start, end, start, end)
    head_end = name_line if start <= name_line < start + HEADER_MAX else start
    body_start = head_end + 1
    size = max(1, max_lines - (head_end - start + 1))
    # Terms the header already shows (the definition's own name) do not pick a window.
    header = "\n".join(lines[start - 1:head_end]).lower()
    terms = tuple(terms)
    rest = tuple(t for t in terms if t not in header)
    if terms and not rest:  # the query names the definition: its head
        return Span(start, start + max_lines - 1, start, end)
    scores = _line_scores(lines, body_start, end, rest)
    top = _best_window(scores, size)
    if top is not None:
        first_hit = next(i for i in range(top, min(len(scores), top + size)) if scores[i])
        offset = max(top, first_hit - CONTEXT)
    elif part_line is not None and part_line > body_start:
        offset = part_line - body_start
    else:
        offset = 0
    offset = min(offset, len(scores) - size)
    win_start = body_start + max(0, offset)
    if win_start <= body_start:  # the head: show it from the top, header included
        return Span(start, start + max_lines - 1, start, end)
    return Span(win_start, min(end, win_start + size - 1), start, end, start, head_end)


def _best_window(scores: Sequence[int], size: int) -> int | None:
    """Start index of the window of `size` with the most matching lines (earliest on ties); None
    when no line matches."""
    if not any(scores):
        return None
    hits = [1 if s else 0 for s in scores]
    weight = [h * 4 + s for h, s in zip(hits, scores, strict=True)]  # lines first, then terms
    current = sum(weight[:size])
    best, best_at = current, 0
    for i in range(1, max(1, len(weight) - size + 1)):
        current += weight[i + size - 1] - weight[i - 1]
        if current > best:
            best, best_at = current, i
    return best_at
