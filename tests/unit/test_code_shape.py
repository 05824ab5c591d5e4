"""The shipped packages stay readable in pieces: no module over 400 lines, no function over 80.

Every module of indexing/, graph/, retrievers/ and lsp_server/ is read with `ast` (nothing is
imported). A function's length runs from its first decorator to its last line, nested functions
included (a nested function is measured on its own too).
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("indexing", "graph", "retrievers", "lsp_server")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80


def _modules() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (REPO / package).rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def function_lengths(source: str) -> list[tuple[str, int, int]]:
    """(qualified name, first line, length in lines) of every function and method in `source`."""
    found: list[tuple[str, int, int]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                end = child.end_lineno if child.end_lineno is not None else child.lineno
                found.append((f"{prefix}{child.name}", first, end - first + 1))
                walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            else:
                walk(child, prefix)

    walk(ast.parse(source), "")
    return found


def test_the_measure_counts_decorators_methods_and_nested_functions() -> None:
    source = ("@deco\ndef f():\n    def g():\n        pass\n    return g\n\n"
              "class C:\n    def m(self):\n        pass\n")
    assert function_lengths(source) == [("f", 1, 5), ("f.g", 3, 2), ("C.m", 8, 2)]


def test_no_module_over_400_lines() -> None:
    long = {_name(p): n for p in _modules() if (n := len(p.read_text(encoding="utf-8").splitlines()))
            > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by concern): {long}"


def test_no_function_over_80_lines() -> None:
    long = {f"{_name(p)}:{line} {name}": n for p in _modules()
            for name, line, n in function_lengths(p.read_text(encoding="utf-8")) if n > MAX_FUNCTION_LINES}
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines (split them into named steps): {long}"
