"""The package layers: indexing <- graph <- retrievers <- lsp_server, bench on top, no loops; and the
order inside retrievers/ (core <- sources, semantic, navigation <- ranking <- engine <- the facade) and
lsp_server/ (shared <- lsp, mcp <- cli).

Every module of the shipped packages is read with `ast` (nothing is imported): module-level imports,
imports inside functions, `if TYPE_CHECKING:` blocks, relative imports and
`importlib.import_module("...")` with a literal name all count. An import of a package from a lower
layer is a defect: it makes a package loop possible and ties the lower layer to the upper one's code.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAYERS = ("indexing", "graph", "retrievers", "lsp_server")  # bottom-up; each may import those before it
SHIPPED = set(LAYERS)
OFF_LIMITS = {"bench", "tests"}  # never imported by a shipped package


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported(path: Path, module: str) -> set[str]:
    """Top-level package names the module `module` (read from `path`) imports, anywhere in its body."""
    return {name.split(".")[0] for name in _imported_modules(path, module)}


def _imported_modules(path: Path, module: str) -> set[str]:
    """Dotted names the module imports (`from a.b import c` gives `a.b` and `a.b.c`), anywhere in it."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = package[:len(package) - node.level + 1]
                names.add(".".join([*base, *([node.module] if node.module else [])]))
            elif node.module:
                names.add(node.module)
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "import_module" and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            names.add(node.args[0].value)
    return {name for name in names if name}


def package_edges() -> dict[tuple[str, str], list[str]]:
    """(importing package, imported package) -> the modules that make that edge."""
    edges: dict[tuple[str, str], list[str]] = {}
    for package in LAYERS:
        for path in sorted((REPO / package).rglob("*.py")):
            for target in _imported(path, _module_name(path)) & (SHIPPED | OFF_LIMITS):
                if target != package:
                    edges.setdefault((package, target), []).append(_module_name(path))
    return edges


def test_the_walk_sees_every_kind_of_import(tmp_path: Path) -> None:
    source = tmp_path / "probe.py"
    text = ("from typing import TYPE_CHECKING\nimport indexing.store\nif TYPE_CHECKING:\n    import graph\n"
            "def f():\n    from retrievers import engine\n    import importlib\n"
            "    importlib.import_module('bench.demo')\nfrom . import cli\n")
    source.write_text(text)
    assert _imported(source, "lsp_server.probe") == {"typing", "indexing", "graph", "retrievers", "importlib",
                                                     "bench", "lsp_server"}


def test_packages_import_only_lower_layers() -> None:
    rank = {name: i for i, name in enumerate(LAYERS)}
    upward = {f"{a} -> {b}": modules for (a, b), modules in package_edges().items()
              if b in rank and rank[b] > rank[a]}
    assert upward == {}, f"imports against the layer order {' <- '.join(LAYERS)}: {upward}"


def test_no_shipped_package_imports_bench_or_tests() -> None:
    reaching = {f"{a} -> {b}": modules for (a, b), modules in package_edges().items() if b in OFF_LIMITS}
    assert reaching == {}


def test_package_graph_has_no_cycle() -> None:
    edges = {(a, b) for a, b in package_edges() if b in SHIPPED}
    reach = {p: {b for a, b in edges if a == p} for p in LAYERS}
    changed = True
    while changed:  # transitive closure
        changed = False
        for p in LAYERS:
            more = set().union(*(reach[q] for q in reach[p])) - reach[p]
            if more:
                reach[p] |= more
                changed = True
    assert [p for p in LAYERS if p in reach[p]] == []


# Inside a package: groups bottom-up; a group may import its own modules and those of lower levels,
# never a peer at its level. A module belongs to the group with a prefix that names it.
INNER_LEVELS: dict[str, list[list[tuple[str, ...]]]] = {
    "retrievers": [
        # the protocol and the index view
        [("retrievers.base", "retrievers.scope", "retrievers.chunk_ranks", "retrievers.snapshot")],
        [("retrievers.sources",), ("retrievers.semantic",), ("retrievers.navigation",)],
        [("retrievers.ranking",)],
        [("retrievers.engine",)],
        [("retrievers.codebase",)],  # the facade every front end calls
    ],
    "lsp_server": [
        [("lsp_server.process_tuning", "lsp_server.roots", "lsp_server.engine_socket",
          "lsp_server.engine_share", "lsp_server.file_watch")],  # shared
        [("lsp_server.lsp",), ("lsp_server.mcp",)],
        [("lsp_server.cli",)],  # starts either front end
    ],
}


def _group(package: str, module: str) -> tuple[int, tuple[str, ...]] | None:
    for level, groups in enumerate(INNER_LEVELS[package]):
        for group in groups:
            if any(module == prefix or module.startswith(prefix + ".") for prefix in group):
                return level, group
    return None


def _against_order(package: str, module: str, target: str) -> bool:
    """Whether `module` importing `target` (both of `package`) goes up or sideways between groups."""
    mine, theirs = _group(package, module), _group(package, target)
    assert mine is not None, f"{module} belongs to no group of {package}: add it to INNER_LEVELS"
    return theirs is not None and theirs[1] != mine[1] and theirs[0] >= mine[0]


def inner_violations(package: str) -> list[str]:
    out = []
    for path in sorted((REPO / package).rglob("*.py")):
        module = _module_name(path)
        if module != package:
            out += [f"{module} -> {target}" for target in sorted(_imported_modules(path, module))
                    if target.startswith(package + ".") and _against_order(package, module, target)]
    return out


def test_retrievers_inner_order() -> None:
    assert inner_violations("retrievers") == []


def test_lsp_server_inner_order() -> None:
    assert inner_violations("lsp_server") == []


def test_the_inner_order_refuses_peers_and_upward_imports() -> None:
    assert _against_order("retrievers", "retrievers.sources.text", "retrievers.semantic.tiered")  # a peer
    assert _against_order("retrievers", "retrievers.ranking.rrf", "retrievers.engine.results")  # upward
    assert not _against_order("retrievers", "retrievers.engine.results", "retrievers.ranking.rrf")
    assert not _against_order("retrievers", "retrievers.base", "retrievers.scope")  # one group
    assert _against_order("lsp_server", "lsp_server.mcp.server", "lsp_server.lsp.options")
