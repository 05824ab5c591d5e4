"""Domain -> LSP conversion: URIs, 1-based lines to 0-based ranges, byte columns to UTF-16."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp

from indexing.records import CallSite, Definition
from lsp_server.lsp import convert
from retrievers.engine.answer import ResultEntry


def _definition(**kw: object) -> Definition:
    base: dict[str, object] = dict(name="parse_date", qualified_name="parse_date", kind="function",
                                   path="feedreader/parser.py", start_line=43, end_line=57, start_byte=0,
                                   end_byte=10, name_line=43, name_column=4,
                                   signature="def parse_date(value):", doc="Parse a date.", id=7)
    base.update(kw)
    return Definition(**base)  # type: ignore[arg-type]


def test_uri_round_trip(tmp_path: Path) -> None:
    uri = convert.path_to_uri(tmp_path, "a dir/é.py")
    assert uri.startswith("file://") and "%20" in uri
    assert convert.uri_to_path(uri) == tmp_path / "a dir" / "é.py"
    assert convert.relative_path(tmp_path, tmp_path / "a dir" / "é.py") == "a dir/é.py"
    assert convert.relative_path(tmp_path / "x", tmp_path / "y.py") is None
    assert convert.uri_to_path("untitled:Untitled-1") is None


def test_lines_range_is_zero_based_whole_lines() -> None:
    rng = convert.lines_range(3, 5)
    assert (rng.start.line, rng.start.character, rng.end.line, rng.end.character) == (2, 0, 5, 0)
    assert convert.range_json(rng) == {"start": {"line": 2, "character": 0},
                                       "end": {"line": 5, "character": 0}}


def test_columns_follow_the_position_encoding() -> None:
    line = "x = 'é😀'; parse_date(v)".encode()
    byte_col = line.index(b"parse_date")
    assert convert.column(line, byte_col, "utf-8") == byte_col
    assert convert.column(line, byte_col, "utf-32") == len("x = 'é😀'; ")
    assert convert.column(line, byte_col, "utf-16") == len("x = 'é😀'; ") + 1  # the emoji is 2 UTF-16 units
    call = CallSite(path="p.py", line=9, column=byte_col, end_column=byte_col + 10, callee="parse_date",
                    receiver=None, caller=None)
    rng = convert.call_range(call, line)
    assert (rng.start.line, rng.start.character, rng.end.character) == (8, 11, 21)


def test_definition_conversions(tmp_path: Path) -> None:
    d = _definition()
    loc = convert.definition_location(tmp_path, d, b"def parse_date(value):")
    assert loc.uri.endswith("/feedreader/parser.py")
    assert (loc.range.start.line, loc.range.start.character, loc.range.end.character) == (42, 4, 14)
    item = convert.hierarchy_item(tmp_path, d)
    assert item.kind == lsp.SymbolKind.Function
    assert item.range.start.line == 42 and item.range.end.line == 57
    assert isinstance(item.data, dict)
    assert item.data["id"] == 7 and item.data["qualified_name"] == "parse_date"
    sym = convert.workspace_symbol(tmp_path, _definition(kind="method", parent="FeedStore"))
    assert sym.kind == lsp.SymbolKind.Method and sym.container_name == "FeedStore"
    assert convert.symbol_kind("no-such-kind") == lsp.SymbolKind.Variable


def test_search_result_adds_uri_and_range(tmp_path: Path) -> None:
    entry = ResultEntry(path="a/b.py", uri="", start_line=10, end_line=12, line=10, column=0, symbol=None,
                        kind="function", language="python", labels=("source",), score=1.0, snippet="",
                        explain={}, full_start_line=10, full_end_line=12, lines_total=3)
    out = convert.search_result(tmp_path, entry)
    assert out["uri"] == convert.path_to_uri(tmp_path, "a/b.py")
    assert out["range"]["start"] == {"line": 9, "character": 0}
    assert out["start_line"] == 10


def test_link() -> None:
    text = convert.link(Path("/w"), "x/y.py", 12)
    assert text == "[x/y.py:12](file:///w/x/y.py#L12)"
