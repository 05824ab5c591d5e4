"""Helpers for the graph tests: hand-made records, real parses of small sources, id lookups."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from bench.graph_bench import numbered
from graph.callgraph import CallGraph, GraphOptions, build_call_graph
from indexing.languages import language_for_path
from indexing.parse import parse_file
from indexing.records import CallSite, Definition, Import


class Records:
    """Accumulates hand-made definitions (ids assigned in order), call sites and imports."""

    def __init__(self) -> None:
        self.defs: list[Definition] = []
        self.calls: list[CallSite] = []
        self.imports: list[Import] = []

    def define(self, path: str, qualified: str, start: int, end: int, kind: str = "function",
               bases: Iterable[str] = (), signature: str = "") -> int:
        name = qualified.rsplit(".", 1)[-1]
        parent = qualified.rsplit(".", 1)[0] if "." in qualified else None
        d = Definition(name=name, qualified_name=qualified, kind=kind, path=path, start_line=start,
                       end_line=end, start_byte=start * 10, end_byte=end * 10 + 9, name_line=start,
                       name_column=4, signature=signature or f"def {name}():", parent=parent,
                       bases=tuple(bases), id=len(self.defs) + 1)
        self.defs.append(d)
        return d.id

    def call(self, path: str, line: int, callee: str, receiver: str | None = None,
             caller: str | None = None, column: int = 4) -> CallSite:
        site = CallSite(path=path, line=line, column=column, end_column=column + len(callee),
                        callee=callee, receiver=receiver, caller=caller)
        self.calls.append(site)
        return site

    def imp(self, path: str, module: str, name: str | None = None, alias: str | None = None,
            line: int = 1) -> None:
        self.imports.append(Import(path=path, line=line, module=module, name=name, alias=alias))

    def build(self, options: GraphOptions | None = None) -> CallGraph:
        return build_call_graph(self.defs, self.calls, self.imports, options)


def parse_sources(files: Mapping[str, str]) -> tuple[list[Definition], list[CallSite], list[Import]]:
    """Parse each (path, source) with the real tree-sitter pipeline and number the definitions."""
    results = []
    for path, text in files.items():
        result = parse_file(path, text.encode(), language_for_path(path), ("source",))
        assert result.status == "ok", (path, result.status, result.error)
        results.append(result)
    return numbered(results)


def build_sources(files: Mapping[str, str], options: GraphOptions | None = None) -> CallGraph:
    defs, calls, imports = parse_sources(files)
    return build_call_graph(defs, calls, imports, options)


def def_id(graph: CallGraph, qualified: str, path: str | None = None) -> int:
    """The id of the one definition with this qualified name (in `path`, if given)."""
    ids = [d.id for d in graph.definitions()
           if d.qualified_name == qualified and (path is None or d.path == path)]
    assert len(ids) == 1, f"{qualified!r} in {path!r}: {len(ids)} definitions"
    return ids[0]


def qnames(graph: CallGraph, ids: Iterable[int]) -> list[str]:
    return [graph.definition(i).qualified_name for i in ids]


def callee_names(graph: CallGraph, qualified: str, path: str | None = None) -> set[str]:
    return set(qnames(graph, graph.callees(def_id(graph, qualified, path))))


def caller_names(graph: CallGraph, qualified: str, path: str | None = None) -> list[str | None]:
    return [graph.definition(c).qualified_name if c is not None else None
            for _, c in graph.callers(def_id(graph, qualified, path))]
