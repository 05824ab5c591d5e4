"""The front ends reach the index only through the domain facade (issue 10).

Every module of `lsp_server/` is parsed (imports at module level and inside functions, and constant
`importlib.import_module` arguments): none imports the call graph (`graph`, `graph.*`) or the index
store (`indexing.store`); the CLI's index upkeep (`codeseek status`, setting a damaged database
aside) asks `indexing.workspace` (`has_index`, `set_aside_damaged`), which builds the facade's parts.

The request paths (LSP handlers and features, the hover, the MCP tools) do not touch `.store` or
`call_graph` either: they ask `Codebase` (retrievers/codebase.py), whose answers are domain objects,
so the domain never imports the protocol libraries.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FRONT_END = REPO / "lsp_server"
FORBIDDEN = ("graph", "indexing.store")
ALLOWED: dict[str, set[str]] = {}  # none: even the CLI's index upkeep asks indexing.workspace
REQUEST_PATHS = ("lsp/handlers.py", "lsp/navigation.py", "lsp/search.py", "lsp/hover.py", "lsp/convert.py",
                 "mcp/service.py", "mcp/server.py")
PROTOCOL = ("lsprotocol", "pygls", "mcp", "lsp_server")


def imported(tree: ast.AST) -> set[str]:
    """Every module name an AST imports (`from a import b` counts as `a` and `a.b`)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) and \
                isinstance(node.args[0].value, str) and (
                    (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                    or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__"))):
            out.add(node.args[0].value)
    return out


def _matches(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _tree(path: Path) -> ast.AST:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_the_scan_sees_imports_inside_functions() -> None:
    tree = ast.parse("def f():\n    from graph import render\n    import indexing.store as s\n"
                     "    importlib.import_module('graph.callgraph')\n")
    names = imported(tree)
    assert {"graph", "graph.render", "indexing.store", "graph.callgraph"} <= names


def test_front_ends_import_neither_the_graph_nor_the_store() -> None:
    found: list[str] = []
    for path in sorted(FRONT_END.rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        allowed = ALLOWED.get(rel, set())
        for name in sorted(imported(_tree(path))):
            bad = [p for p in FORBIDDEN if _matches(name, p) and p not in allowed]
            if bad:
                found.append(f"{rel} imports {name}")
    assert found == []
    assert len(list(FRONT_END.rglob("*.py"))) > 10  # the scan looked at the package


def test_request_paths_ask_the_facade_not_the_store_or_graph() -> None:
    found: list[str] = []
    for name in REQUEST_PATHS:
        for node in ast.walk(_tree(FRONT_END / name)):
            if isinstance(node, ast.Attribute) and node.attr in ("store", "call_graph", "graph"):
                found.append(f"lsp_server/{name}:{node.lineno} reads .{node.attr}")
    assert found == []


def test_the_domain_answers_without_protocol_types() -> None:
    found: list[str] = []
    for package in ("retrievers", "graph", "indexing"):
        for path in sorted((REPO / package).rglob("*.py")):
            for name in imported(_tree(path)):
                if any(_matches(name, p) for p in PROTOCOL):
                    found.append(f"{path.relative_to(REPO)} imports {name}")
    assert found == []
