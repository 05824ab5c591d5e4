"""The call-graph checks of issue 11 on the real corpora (express 4.21.2, requests 2.32.3): untyped
prototype-method receivers linked, `this.set` in the response not linked to `app.set`, and the hover's
callees of `select_proxy` free of other classes' `get` methods. Slow: they fetch the packages."""

from __future__ import annotations

from pathlib import Path

import pytest
from graph_records import def_id, parse_sources

from bench.corpora import fetch_npm, fetch_sdist
from graph.callgraph import CallGraph, build_call_graph
from retrievers.navigation.graph_queries import callees_of

pytestmark = pytest.mark.slow


def _graph(root: Path, suffix: str) -> CallGraph:
    files = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
             for p in sorted(root.rglob(f"*{suffix}")) if p.is_file()}
    defs, calls, imports = parse_sources(files)
    return build_call_graph(defs, calls, imports)


def _lines(root: Path, rel: str, text: str) -> list[tuple[str, int]]:
    return [(rel, n) for n, line in enumerate((root / rel).read_text().splitlines(), 1) if text in line]


@pytest.fixture(scope="module")
def express() -> tuple[CallGraph, Path]:
    root = fetch_npm("express", "4.21.2")
    return _graph(root, ".js"), root


def test_express_untyped_receivers_reach_prototype_methods(express: tuple[CallGraph, Path]) -> None:
    graph, root = express
    handle_error = def_id(graph, "Layer.handle_error", "lib/router/layer.js")
    got = [(s.path, s.line) for s, _ in graph.callers(handle_error, confident=True)]
    assert got == _lines(root, "lib/router/index.js", "layer.handle_error(") + _lines(
        root, "lib/router/route.js", "layer.handle_error(")
    handles = def_id(graph, "Route._handles_method", "lib/router/route.js")
    assert [(s.path, s.line) for s, _ in graph.callers(handles, confident=True)] == _lines(
        root, "lib/router/index.js", "route._handles_method(")


def test_express_response_this_set_is_not_app_set(express: tuple[CallGraph, Path]) -> None:
    graph, root = express
    app_set = def_id(graph, "app.set", "lib/application.js")
    assert not [s for s, _ in graph.callers(app_set) if s.path == "lib/response.js"]
    res_set = def_id(graph, "res.set", "lib/response.js")
    sets = _lines(root, "lib/response.js", "this.set(")
    assert len(sets) >= 17
    got = [(s.path, s.line) for s, _ in graph.callers(res_set, confident=True) if s.path == "lib/response.js"]
    assert got == sets


def test_requests_select_proxy_hover_lists_no_get_method() -> None:
    root = fetch_sdist("requests", "2.32.3")
    graph = _graph(root / "src", ".py")
    select_proxy = graph.definition(def_id(graph, "select_proxy", "requests/utils.py"))
    # proxies.get(...) on `proxies = proxies or {}`; urlparse is the standard library's
    assert callees_of(graph, select_proxy) == []
    assert graph.callees(select_proxy.id) == []  # not even ambiguous links
