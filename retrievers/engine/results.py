"""The search result schema (shared by `codeseek search --json` and `workspace/semanticSearch`) and
snippets read from the working tree or the editor overlay (the index stores no source text).

Top level: query, match, no_match, total, preset, intent {name, confidence, source}, strategy ("direct" |
"fused"), modalities, results [...], index {state, files, chunks, embedded, model}, timings_ms. `match`
says what the results are: "found" (a lookup -- an exact string, a named definition, the callers of a
name -- found its subject: the results are its matches), "none" (the lookup found nothing: the results
are related code only, and `no_match` says so in words, e.g. `no exact match for "..."`), "ranked" (a
question: results ranked by relevance, nothing to match). `total` counts the results the search ranked
before the cut to the limit (every match of a direct lookup; the fused candidates the relevance floor
keeps). Each result: path, uri, start_line, end_line (1-based, inclusive: the lines shown, at most a
screenful: `retrievers.engine.spans`), line and column (where the cursor goes: the matching line of an exact
string or a call site, else the name line and 0-based byte column of the definition the result stands
for, even when the window shown is further down; else the shown span's first line and 0), symbol,
kind, language, labels, score, snippet, explain, full_start_line, full_end_line and lines_total (the
whole definition or chunk the result stands for), and when present `depth` (impact_analysis), `also`
(the file's other hits folded under it). The records that hold an answer, and write it in this
schema: `retrievers.engine.answer`.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indexing.records import Chunk
from retrievers.base import DETAILS
from retrievers.engine.answer import ResultEntry, SearchAnswer
from retrievers.engine.spans import MAX_SPAN_LINES, Span, best_part_line, choose_span

if TYPE_CHECKING:
    from retrievers.snapshot import Snapshot

SNIPPET_MAX_LINES = 12
SNIPPET_MAX_CHARS = 1200
SNIPPET_MAX_LINE_CHARS = 200
FOUND, NO_MATCH, RANKED = "found", "none", "ranked"  # the values of `match`
_NO_MATCH_SAYS = {"exact_match": "no exact match for {}", "find_definition": "no definition named {}",
                  "find_references": "no callers or usages of {}", "impact_analysis": "no callers of {}"}
_SUBJECT_CHARS = 100


class SourceCache:
    """Decoded file text per path for one search (each file read at most once)."""

    def __init__(self, read_bytes: Callable[[str], bytes]) -> None:
        self._read = read_bytes
        self._lines: dict[str, list[str] | None] = {}

    def lines(self, path: str) -> list[str] | None:
        """The file's lines without line ends, or None if it cannot be read."""
        if path not in self._lines:
            try:
                data = self._read(path)
            except Exception:  # an unreadable or vanished file shows no snippet, never an error
                self._lines[path] = None
            else:
                self._lines[path] = _decoded_lines(data)
        return self._lines[path]


_LINES_BY_CONTENT: OrderedDict[bytes, list[str]] = OrderedDict()
_LINES_HELD = 64
_LINES_MAX_BYTES = 256 * 1024
_lines_lock = threading.Lock()


def _decoded_lines(data: bytes) -> list[str]:
    """`data` decoded and split into lines, kept for the last 64 distinct contents: the workspace hands
    back the same bytes object for an unchanged file, whose hash Python keeps, so a file that answers
    search after search is split once (keyed by content: an edited file is never served stale; files
    over 256 KB are not kept, so the cache stays under ~64 x 256 KB of text and its lines)."""
    with _lines_lock:
        held = _LINES_BY_CONTENT.get(data)
        if held is not None:
            _LINES_BY_CONTENT.move_to_end(data)
            return held
    lines = data.decode("utf-8", errors="replace").splitlines()
    if len(data) > _LINES_MAX_BYTES:  # a huge file is split again when asked: memory stays bounded
        return lines
    with _lines_lock:
        _LINES_BY_CONTENT[data] = lines
        while len(_LINES_BY_CONTENT) > _LINES_HELD:
            _LINES_BY_CONTENT.popitem(last=False)
    return lines


def snippet_for(lines: Sequence[str] | None, start_line: int, end_line: int,
                max_lines: int = SNIPPET_MAX_LINES, max_chars: int = SNIPPET_MAX_CHARS) -> str:
    """Lines start..end (1-based, inclusive), common indent removed, blank edges dropped, capped."""
    if not lines:
        return ""
    start = max(1, start_line)
    end = min(len(lines), max(start, end_line))
    picked = [line[:SNIPPET_MAX_LINE_CHARS] for line in lines[start - 1:end]]
    while picked and not picked[-1].strip():
        picked.pop()
    while picked and not picked[0].strip():
        picked.pop(0)
    cut = len(picked) > max_lines
    picked = picked[:max_lines]
    text = dedent_lines(picked).rstrip()
    if len(text) > max_chars:
        text = text[:max_chars].rstrip()
        cut = True
    return text + ("\n..." if cut else "")


def dedent_lines(lines: Sequence[str]) -> str:
    """`textwrap.dedent("\\n".join(lines))` for lines without line ends, without its regular
    expressions: lines of only spaces and tabs become empty, and the longest run of leading spaces
    and tabs that every other line shares is removed."""
    out: list[str] = []
    margin: str | None = None
    for line in lines:
        stripped = line.lstrip(" \t")
        if not stripped:
            out.append("")
            continue
        out.append(line)
        indent = line[: len(line) - len(stripped)]
        if margin is None:
            margin = indent
        elif not indent.startswith(margin):
            common = 0
            for x, y in zip(margin, indent, strict=False):
                if x != y:
                    break
                common += 1
            margin = margin[:common]
    if margin:
        cut = len(margin)
        return "\n".join(line[cut:] for line in out)
    return "\n".join(out)


def span_snippet(lines: Sequence[str] | None, span: Span) -> str:
    """The snippet of a cut span: its header lines, a `...` line, then the window (one dedent)."""
    if not lines or not span.header_end:
        return snippet_for(lines, span.start, span.end)
    header = [line[:SNIPPET_MAX_LINE_CHARS] for line in lines[span.header_start - 1:span.header_end]]
    body = snippet_for(lines, span.start, span.end, max_lines=SNIPPET_MAX_LINES - len(header) - 1)
    if not body:
        return snippet_for(lines, span.header_start, span.header_end)
    indent = min((len(x) - len(x.lstrip()) for x in header if x.strip()), default=0)
    # The window was dedented on its own: indent it back under the header by its depth below it.
    window = lines[span.start - 1:span.end]
    depth = min((len(x) - len(x.lstrip()) for x in window if x.strip()), default=indent) - indent
    pad = " " * max(0, depth)
    head = "\n".join(x[indent:] for x in header).rstrip()
    return head + "\n" + pad + "...\n" + "\n".join(pad + x if x and x != "..." else x
                                                 for x in body.splitlines())


@dataclass(slots=True)
class Located:
    """Where a result points: a chunk, possibly narrowed to exact lines (an exact match, a call site)."""

    chunk: Chunk
    score: float
    explain: dict[str, Any]
    start_line: int = 0  # 0: the chunk's own range
    end_line: int = 0
    symbol: str | None = None  # overrides the chunk's symbol (a call site's enclosing definition)
    kind: str | None = None
    depth: int | None = None
    also: list[dict[str, Any]] | None = None


_PLAIN = frozenset({str, int, bool, type(None)})  # leaves _round returns as they are (no call for them)


def _round(value: Any) -> Any:
    """Floats rounded to 6 places all through nested dicts and lists (tuples become lists), a
    retriever's detail record (`retrievers.base.DETAILS`) written out as its dict. (Plain loops
    with the leaf types tested first: an explain record is ~30 small values, and this runs for every
    result of every search.)"""
    kind = type(value)
    if kind is dict:
        out: dict[Any, Any] = {}
        for key, item in value.items():
            leaf = type(item)
            if leaf is float:
                out[key] = round(item, 6)
            elif leaf in _PLAIN:
                out[key] = item
            else:
                out[key] = _round(item)
        return out
    if kind is float:
        return round(value, 6)
    if kind is list or kind is tuple:
        return [round(item, 6) if (leaf := type(item)) is float else item if leaf in _PLAIN else _round(item)
                for item in value]
    if isinstance(value, DETAILS):
        return _round(value.as_dict())
    if isinstance(value, float):  # subclasses: what the exact-type tests above leave
        return round(value, 6)
    if isinstance(value, dict):
        return {key: _round(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_round(item) for item in value]
    return value


def lookup_match(intent: str, subject: str | None, matched: bool | None) -> tuple[str, str | None]:
    """`match` and `no_match` of an answer: whether the lookup an intent makes (`subject`: the exact
    string or the name) found it; RANKED when the query is no lookup or nothing could tell."""
    if matched is None or not subject or intent not in _NO_MATCH_SAYS:
        return RANKED, None
    if matched:
        return FOUND, None
    shown = subject if len(subject) <= _SUBJECT_CHARS else subject[:_SUBJECT_CHARS] + "..."
    quoted = json.dumps(shown, ensure_ascii=False)
    return NO_MATCH, _NO_MATCH_SAYS[intent].format(quoted)


def match_fields(intent: str, subject: str | None, matched: bool | None) -> dict[str, Any]:
    """`lookup_match` as the fields of a JSON document."""
    match, no_match = lookup_match(intent, subject, matched)
    return {"match": match, "no_match": no_match}


def name_position(item: Located, snap: Snapshot | None) -> tuple[int, int, bool]:
    """Where the cursor goes for a result, and whether that is a line the result names: the line a
    one-line result names (a call site, an exact match), else the name line of the definition the
    result stands for, else (False) the span's first line."""
    chunk = item.chunk
    start = item.start_line or chunk.start_line
    end = item.end_line or chunk.end_line
    if item.start_line and item.start_line == item.end_line:
        return item.start_line, 0, True
    d = None
    if snap is not None:
        if item.symbol:
            d = snap.named_in(chunk.path, item.symbol)
        d = d or snap.named_definition(chunk) or snap.definition_for_chunk(chunk)
    if d is not None and start <= d.name_line <= end:
        return d.name_line, d.name_column, True
    return start, 0, False


@lru_cache(maxsize=16384)
def file_uri(root: Path, path: str) -> str:
    """`(root / path).as_uri()`, once per path (pathlib's parsing is a visible share of a search)."""
    return (root / path).as_uri()


def result_entry(item: Located, root: Path, sources: SourceCache,
                 snap: Snapshot | None = None, terms: Sequence[str] = (),
                 max_lines: int = MAX_SPAN_LINES) -> ResultEntry:
    """One result, snippet read now (`snap` finds the definition's name line); a span
    longer than `max_lines` shows its best part for the query `terms` (`retrievers.engine.spans`)."""
    chunk = item.chunk
    full_start = item.start_line or chunk.start_line
    full_end = item.end_line or chunk.end_line
    line, column, named = name_position(item, snap)
    lines = sources.lines(chunk.path)
    span = Span(full_start, full_end, full_start, full_end)
    if max_lines > 0 and full_end - full_start + 1 > max_lines:
        starts = {c.id: c.start_line for c in snap.by_path.get(chunk.path, ())} if snap is not None else {}
        span = choose_span(lines, full_start, full_end, terms, max_lines, line,
                           best_part_line(item.explain, starts))
        if not named and not span.start <= line <= span.end:  # a name stays the location (issue 30)
            line, column = span.start, 0
    return ResultEntry(
        path=chunk.path, uri=file_uri(root, chunk.path), start_line=span.start, end_line=span.end,
        line=line, column=column, symbol=item.symbol if item.symbol is not None else chunk.symbol,
        kind=item.kind or chunk.kind, language=chunk.language, labels=tuple(chunk.labels),
        score=round(float(item.score), 6), snippet=span_snippet(lines, span), explain=_round(item.explain),
        full_start_line=span.full_start, full_end_line=span.full_end, lines_total=span.lines_total,
        depth=item.depth, also=_round(item.also) if item.also else None)


def build_answer(query: str, preset: str, intent: dict[str, Any], strategy: str, modalities: Sequence[str],
                 index: dict[str, Any], timings: dict[str, float],
                 match: tuple[str, str | None] = (RANKED, None), total: int = 0,
                 results: Sequence[ResultEntry] = ()) -> SearchAnswer:
    """A search's answer (without `results`: one with no hits; the shape never changes). `preset`
    names the ranking profile (retrievers.ranking.profile) the search used; `match` is
    `lookup_match`'s answer (default: RANKED)."""
    return SearchAnswer(query=query, match=match[0], no_match=match[1], total=total, preset=preset,
                        intent=intent, strategy=strategy, modalities=tuple(modalities),
                        results=tuple(results), index=index,
                        timings_ms={k: round(v, 3) for k, v in timings.items()})
