"""Hover text pieces: whole signatures across lines, similar code as links at the name line the facade
gives (choosing one chunk per definition is the domain's: tests/unit/test_codebase.py)."""

from __future__ import annotations

from pathlib import Path

from indexing.records import Chunk, Definition
from lsp_server.lsp import convert
from lsp_server.lsp.hover import MAX_SIMILAR, full_signature, similar_items
from retrievers.codebase import SimilarCode

SOURCE = '''@app.route("/")
def url_for(
    endpoint: str,
    *,
    _anchor: str | None = None,
) -> str:
    """Doc."""
    return endpoint
func (s *Server) Handle(w http.ResponseWriter,
    r *http.Request) (int, error) {
class Foo(Base):
function f(a, b) { return a + b }
def broken(
'''.splitlines()


def definition(name_line: int, signature: str = "first line") -> Definition:
    return Definition("f", "f", "function", "m.py", name_line, name_line + 3, 0, 0, name_line, 4, signature)


def test_full_signature_spans_split_parameters_and_stops_at_the_body() -> None:
    assert full_signature(SOURCE, definition(2)) == \
        'def url_for(\n    endpoint: str,\n    *,\n    _anchor: str | None = None,\n) -> str:'
    assert full_signature(SOURCE, definition(9)) == \
        "func (s *Server) Handle(w http.ResponseWriter,\n    r *http.Request) (int, error)"
    assert full_signature(SOURCE, definition(11)) == "class Foo(Base):"
    assert full_signature(SOURCE, definition(12)) == "function f(a, b)"
    assert full_signature(SOURCE, definition(13, "def broken(")) == "def broken("  # never closes
    assert full_signature([], definition(2, "def url_for(")) == "def url_for("


def test_similar_code_links_to_the_name_line_with_the_score(tmp_path: Path) -> None:
    chunk = Chunk("a.py", "python", 74, 96, 900, 1400, "method", "Other.url_for", ("source",), "h")
    items = similar_items(tmp_path, [SimilarCode(chunk, 0.9, 70)] * 4)
    assert len(items) == MAX_SIMILAR
    assert items[0] == f"`Other.url_for` {convert.link(tmp_path, 'a.py', 70)} (0.90)"
    assert items[0].startswith("`Other.url_for` [a.py:70](") and items[0].endswith("#L70) (0.90)")
