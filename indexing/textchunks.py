"""Chunk budgets and spans, the non-whitespace measure, and line chunking.

`ChunkOptions` and `Span` are shared with the syntax chunker (`indexing.chunker`, which re-exports
them). `cut_spans` cuts a byte range at line boundaries with overlap, always moving forward (a single
huge line is cut by bytes); `line_spans` and `markdown_spans` chunk files without a syntax tree: line
chunks of about `line_chunk_tokens` tokens (`chars_per_token` bytes each) with about
`line_overlap_tokens` of overlap, Markdown by heading sections.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_MAX_CHARS = 550  # ~95% of chunks fit 256 MiniLM tokens (docs/design.md)


@dataclass(frozen=True)
class ChunkOptions:
    """Chunk budgets. `max_chars` counts non-whitespace characters of a syntax chunk."""

    max_chars: int = DEFAULT_MAX_CHARS
    line_chunk_tokens: int = 700
    line_overlap_tokens: int = 80
    chars_per_token: int = 4
    # Chunks below this many non-whitespace characters are merged into a neighbour when it fits.
    # None means max_chars // 6.
    min_chars: int | None = None

    @property
    def line_chars(self) -> int:
        return max(1, self.line_chunk_tokens * self.chars_per_token)

    @property
    def overlap_chars(self) -> int:
        return max(0, self.line_overlap_tokens * self.chars_per_token)

    @property
    def min_size(self) -> int:
        return self.min_chars if self.min_chars is not None else self.max_chars // 6


@dataclass
class Span:
    """A chunk before it becomes a record."""

    start: int
    end: int
    size: int
    kind: str
    symbol: str | None
    header: str = ""
    defs: int = 0  # declarations packed whole into this span
    scope: str | None = None  # symbol of the construct whose children this span holds (None: file level)
    opens: bool = False  # the first span of a split declaration (holds its signature)


class NonWhitespace:
    """O(1) non-whitespace character counts over byte ranges (prefix sums)."""

    def __init__(self, source: bytes) -> None:
        import numpy as np  # (here: the parse pool's fork server preloads this module without numpy)

        arr = np.frombuffer(source, dtype=np.uint8)
        counted = ~(
            (arr == 32) | (arr == 9) | (arr == 10) | (arr == 13) | (arr == 11) | (arr == 12)
            | ((arr & 0xC0) == 0x80)
        )
        self._cum = np.concatenate(([0], np.cumsum(counted, dtype=np.int64)))

    def __call__(self, start: int, end: int) -> int:
        return int(self._cum[end] - self._cum[start])


def cut_spans(
    source: bytes, start: int, end: int, limit: int, overlap: int, measure: NonWhitespace | None = None
) -> list[tuple[int, int]]:
    """Cut [start, end) into pieces of at most `limit` (bytes, or `measure` units) at line boundaries.

    Consecutive pieces overlap by about `overlap` bytes (whole lines only). Every piece ends after the
    previous one and the next starts after the previous start, so the loop always terminates.
    """
    out: list[tuple[int, int]] = []
    pos = start
    while pos < end:
        stop = _limit_end(source, pos, end, limit, measure)
        cut = stop
        if stop < end:
            newline = source.rfind(b"\n", pos, stop)
            if newline >= pos:
                cut = newline + 1
            else:
                while cut > pos + 1 and (source[cut] & 0xC0) == 0x80:
                    cut -= 1  # do not cut inside a UTF-8 sequence
        cut = max(cut, pos + 1)
        if source[pos:cut].strip():
            out.append((pos, cut))
        if cut >= end:
            break
        nxt = cut
        if overlap > 0 and cut - overlap > pos:
            line = source.find(b"\n", cut - overlap, cut)
            if line != -1 and line + 1 < cut:
                nxt = line + 1
        pos = max(nxt, pos + 1)
    return out


def _limit_end(source: bytes, pos: int, end: int, limit: int, measure: NonWhitespace | None) -> int:
    if measure is None:
        return min(end, pos + limit)
    if measure(pos, end) <= limit:
        return end
    lo, hi = pos + 1, end  # smallest stop with measure(pos, stop) >= limit
    while lo < hi:
        mid = (lo + hi) // 2
        if measure(pos, mid) >= limit:
            hi = mid
        else:
            lo = mid + 1
    return lo


def line_spans(source: bytes, options: ChunkOptions, kind: str = "text") -> list[Span]:
    """Line chunks of a whole file (~line_chunk_tokens each, ~line_overlap_tokens overlap)."""
    return [
        Span(a, b, b - a, kind, None)
        for a, b in cut_spans(source, 0, len(source), options.line_chars, options.overlap_chars)
    ]


_HEADING = re.compile(rb"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE = re.compile(rb"^ {0,3}(```|~~~)")


def markdown_spans(source: bytes, options: ChunkOptions) -> list[Span]:
    """Markdown by heading sections; adjacent small sections are packed, large ones cut by lines."""
    sections: list[tuple[int, int, str | None]] = []
    start, title, fence = 0, None, None
    pos = 0
    for line in source.splitlines(keepends=True):
        fence_match = _FENCE.match(line)
        if fence_match:
            marker = fence_match.group(1)
            fence = None if fence == marker else (fence or marker)
        elif fence is None:
            heading = _HEADING.match(line.rstrip(b"\r\n"))
            if heading and pos > start:
                sections.append((start, pos, title))
                start = pos
            if heading:
                title = heading.group(2).decode("utf-8", errors="replace").strip() or None
        pos += len(line)
    if pos > start:
        sections.append((start, pos, title))
    limit = options.line_chars
    out: list[Span] = []
    for a, b, name in sections:
        if b - a > limit:
            out.extend(
                Span(x, y, y - x, "section", name)
                for x, y in cut_spans(source, a, b, limit, options.overlap_chars)
            )
        elif out and out[-1].kind == "section" and b - out[-1].start <= limit and out[-1].size < limit // 2:
            last = out[-1]
            out[-1] = Span(last.start, b, b - last.start, "section", last.symbol or name)
        elif source[a:b].strip():
            out.append(Span(a, b, b - a, "section", name))
    return out
