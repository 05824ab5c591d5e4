"""Line chunks for files without a syntax tree: text kinds, fallbacks, Markdown by heading sections.

Line chunks are about `line_chunk_tokens` tokens (`chars_per_token` bytes each) with about
`line_overlap_tokens` of overlap, cut at line boundaries and always moving forward (see
`chunker.cut_spans`).
"""

from __future__ import annotations

import re

from indexing.chunker import ChunkOptions, Span, cut_spans


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
