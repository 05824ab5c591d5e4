"""Hover text pieces: whole signatures across lines, similar code listed once per definition at its
name line (over a real indexed workspace)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from indexing.records import Definition
from indexing.workspace import Workspace, WorkspaceOptions
from lsp_server.hover import full_signature, similar_items

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


def test_similar_code_lists_each_definition_once_at_its_name_line(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    body = "".join(f"    value_{i} = compute({i})\n" for i in range(60))
    method_body = "    " + body.replace("\n", "\n    ")
    (root / "a.py").write_text(f"import x\n\n\n@decorate\ndef target():\n{body}    return 1\n\n\n"
                               f"class Other:\n    def url_for(self):\n{method_body}    return 2\n")
    with Workspace(root, WorkspaceOptions(index_dir=tmp_path / "index")) as ws:
        ws.update()
        parts = [c for c in ws.store.chunks() if c.symbol == "Other.url_for"]
        own = next(c for c in ws.store.chunks() if c.symbol == "target")
        target = next(d for d in ws.store.definitions() if d.name == "target")
        fake_root = SimpleNamespace(root=root, workspace=ws)
        near = [(parts[1], 0.9), (parts[0], 0.8), (own, 0.75), (parts[2], 0.7)]
        items = similar_items(fake_root, target, near)  # type: ignore[arg-type]
    assert len(parts) >= 2  # a long method split into several chunks
    assert len(items) == 1  # its parts and the definition itself are dropped
    assert items[0].startswith("`Other.url_for` [a.py:70](")
    assert "#L70)" in items[0] and "(0.90)" in items[0]
