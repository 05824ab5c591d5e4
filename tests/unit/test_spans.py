"""Readable spans (issue 9): the window a long result shows, its header, and the terms it is chosen by."""

from __future__ import annotations

import random

from retrievers.base import SemanticDetail, TextDetail
from retrievers.engine.results import span_snippet
from retrievers.engine.spans import Span, _line_scores, best_part_line, choose_span, query_terms

# A 305-line function: decorator, def line, docstring, 200 filler lines, the interesting raise, 100 more.
LINES = (["@retry", "def fetch(sock):", '    """Read a reply."""']
         + [f"    a{i} = step(sock)" for i in range(200)]
         + ["    raise TimeoutError('socket read timed out')", "    return sock"]
         + [f"    b{i} = 1" for i in range(100)])
RAISE_LINE = 204


def test_query_terms_keep_identifiers_parts_and_quoted_strings() -> None:
    assert query_terms("where is the socket read timeout raised") == ("socket", "read", "timeout", "raised")
    assert query_terms("getUserName") == ("getusername", "user", "name")  # "get": a question word
    assert query_terms('"read timed out" in fetch')[:2] == ("read timed out", "read")


def test_a_short_span_is_shown_whole() -> None:
    assert choose_span(LINES, 1, 40, ("socket",)) == Span(1, 40, 1, 40)
    assert choose_span(LINES, 1, 305, ("timeout",), max_lines=0) == Span(1, 305, 1, 305)


def test_the_best_window_sits_under_the_header_with_context_above_the_match() -> None:
    span = choose_span(LINES, 1, 305, query_terms("socket read timeout"), 60, name_line=2)
    assert (span.start, span.end) == (RAISE_LINE - 4, RAISE_LINE + 53)
    assert (span.header_start, span.header_end) == (1, 2)
    assert span.end - span.start + 1 + 2 == 60 and span.lines_total == 305
    snippet = span_snippet(LINES, span).splitlines()
    assert snippet[:3] == ["@retry", "def fetch(sock):", "    ..."]
    assert snippet[7] == "    raise TimeoutError('socket read timed out')"


def test_a_match_in_the_head_shows_the_head_and_no_match_uses_the_best_part() -> None:
    assert choose_span(LINES, 1, 305, query_terms("fetch"), 60, name_line=2) == Span(1, 60, 1, 305)
    assert choose_span(LINES, 1, 305, ("nowhere",), 60, name_line=2) == Span(1, 60, 1, 305)
    part = choose_span(LINES, 1, 305, ("nowhere",), 60, name_line=2, part_line=150)
    assert (part.start, part.end, part.header_end) == (150, 207, 2)


def test_best_part_line_reads_the_explain_parts() -> None:
    explain = {"text": {"rank": 1, "detail": TextDetail("bm25", parts=(7, 3))},
               "semantic": {"rank": 2, "detail": SemanticDetail(0.5)}}
    assert best_part_line(explain, {7: 120, 3: 1}) == 120
    assert best_part_line({"semantic": {"rank": 1}}, {7: 120}) is None


def test_line_scores_count_each_term_once_per_line_it_is_on() -> None:
    # The definition: for each line, how many of the terms occur in it (lower-cased), compared with
    # the single search over the span's text on random lines, terms that overlap and repeat, Unicode
    # whose lower case is longer (`İ`), and a term of several lines (which no line holds).
    rng = random.Random(5)
    pieces = ["foo", "Bar", "baz", "request", "req", "ues", "İstanbul", "ß", " ", "(", "_", "\u2028"]
    for _ in range(2000):
        text = "\n".join("".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))
                         for _ in range(rng.randint(0, 25)))
        lines = text.splitlines()
        terms = tuple(rng.sample(["foo", "bar", "req", "request", "ues", "i̇stanbul", "ß", "", "a\nb"],
                                 rng.randint(0, 5)))
        first = rng.randint(1, max(1, len(lines)))
        last = rng.randint(first - 1, len(lines) + 2)
        expected = [sum(1 for t in terms if t in line.lower()) for line in lines[first - 1:last]]
        assert _line_scores(lines, first, last, terms) == expected
