"""Receiver type evidence (indexing/receivers.py) and the evidence-graded call links it enables, on
real tree-sitter parses of tests/workspace/graph_sample and of small inline sources."""

from __future__ import annotations

from pathlib import Path

import pytest
from graph_records import build_sources, def_id, parse_sources

from graph.callgraph import CallGraph
from indexing.parse import parse_file
from indexing.receivers import type_evidence

SAMPLE = Path(__file__).resolve().parents[1] / "workspace" / "graph_sample"


@pytest.fixture(scope="module")
def sample() -> CallGraph:
    files = {p.relative_to(SAMPLE).as_posix(): p.read_text() for p in sorted(SAMPLE.rglob("*"))
             if p.suffix in (".py", ".js")}
    return build_sources(files)


def _sites(source: str, path: str, language: str) -> dict[tuple[int, str], str | None]:
    result = parse_file(path, source.encode(), language, ("source",))
    return {(c.line, f"{c.receiver}.{c.callee}" if c.receiver else c.callee): c.receiver_type
            for c in result.calls}


def _line(rel: str, text: str) -> int:
    """1-based line of the one line of a sample file containing `text`."""
    lines = [n for n, line in enumerate((SAMPLE / rel).read_text().splitlines(), 1) if text in line]
    assert len(lines) == 1, (rel, text, lines)
    return lines[0]


def _callers(graph: CallGraph, qualified: str, path: str, confident: bool) -> list[tuple[str, int]]:
    return [(s.path, s.line) for s, _ in graph.callers(def_id(graph, qualified, path), confident)]


def test_python_evidence_from_values_annotations_and_self_fields() -> None:
    got = _sites(
        "class S:\n"                                   # 1
        "    def __init__(self):\n"                    # 2
        "        self.jar = Jar()\n"                   # 3
        "        self.cache = {}\n"                    # 4
        "    def go(self, proxies, url: str, other: 'S' = None, opts=None):\n"  # 5
        "        proxies = proxies or {}\n"            # 6
        "        proxies.get(1)\n"                     # 7
        "        url.strip()\n"                        # 8
        "        other.go()\n"                         # 9
        "        self.jar.add()\n"                     # 10
        "        self.cache.get(2)\n"                  # 11
        "        x = make()\n"                         # 12
        "        x.run()\n"                            # 13
        "        opts.get(3)\n"                        # 14
        "        opts()\n"                             # 15
        "    def h(self, headers, jar):\n"             # 16
        "        headers['Host'] = 1\n"                # 17
        "        headers.get('Host')\n"                # 18
        "        jar = Jar()\n"                        # 19
        "        jar['a'] = 1\n"                       # 20
        "        jar.get('a')\n",                      # 21
        "a.py", "python")
    assert got[(7, "proxies.get")] == "B:dict"
    assert got[(8, "url.strip")] == "B:str"
    assert got[(9, "other.go")] == "T:S"
    assert got[(10, "self.jar.add")] == "C:Jar"
    assert got[(11, "self.cache.get")] == "B:dict"
    assert got[(13, "x.run")] == "C:make"
    assert got[(14, "opts.get")] is None  # a parameter: nothing known
    assert got[(15, "opts")] == "L"  # a bare call of a parameter is not a call of a definition
    assert got[(18, "headers.get")] == "D"  # subscripted with a string key: a mapping
    assert got[(21, "jar.get")] == "C:Jar"  # ... unless more is known


def test_javascript_evidence_new_this_fields_and_self_alias() -> None:
    got = _sites(
        "function Router() { this.route = new Route(); this.stack = []; }\n"    # 1
        "Router.prototype.handle = function handle(req, next) {\n"               # 2
        "  var self = this;\n"                                                   # 3
        "  var layer = new Layer();\n"                                           # 4
        "  layer.handle_error(1);\n"                                             # 5
        "  this.route.dispatch();\n"                                             # 6
        "  this.stack.push(layer);\n"                                            # 7
        "  self.process();\n"                                                    # 8
        "  next();\n"                                                            # 9
        "};\n",
        "r.js", "javascript")
    assert got[(5, "layer.handle_error")] == "T:Layer"
    assert got[(6, "this.route.dispatch")] == "T:Route"
    assert got[(7, "this.stack.push")] == "B:array"
    assert got[(8, "self.process")] == "S"
    assert got[(9, "next")] == "L"


@pytest.mark.parametrize(("written", "evidence"), [
    ("Optional[Session]", "T:Session"), ("Session | None", "T:Session"), ("'Session'", "T:Session"),
    ("dict[str, str]", "B:dict"), ("&mut Store<T>", "T:Store"), ("*Server", "T:Server"),
    ("pkg.Client", "T:pkg.Client"), ("string[]", "B:array"), ("Self", "S"), ("int | str", None),
    ("Any", None),
])
def test_type_evidence_normalizes_written_types(written: str, evidence: str | None) -> None:
    assert type_evidence(written) == evidence


def test_express_prototype_methods_on_untyped_receivers(sample: CallGraph) -> None:
    handle_error = _callers(sample, "Layer.handle_error", "express/router/layer.js", True)
    index, route = "express/router/index.js", "express/router/route.js"
    assert handle_error == [(index, _line(index, "layer.handle_error(")),
                            (route, _line(route, "layer.handle_error("))]
    handles = _callers(sample, "Route._handles_method", route, True)
    assert handles == [(index, _line(index, "route._handles_method("))]


def test_this_set_in_response_is_not_app_set(sample: CallGraph) -> None:
    app, res = "express/application.js", "express/response.js"
    assert _callers(sample, "app.set", app, False) == [(app, _line(app, "this.set("))]
    assert _callers(sample, "res.set", res, True) == [(res, _line(res, "this.set("))]


def test_string_keyed_parameter_is_a_mapping_for_dict_methods_only() -> None:
    graph = build_sources({
        "jar.py": "class Jar:\n    def get(self, k):\n        pass\n    def names(self):\n        pass\n",
        "use.py": "def use(headers):\n    headers['Host'] = 1\n    headers.get('x')\n    headers.names()\n",
    })
    use = def_id(graph, "use")
    assert [graph.definition(i).qualified_name for i in graph.callees(use)] == ["Jar.names"]


def test_dict_receiver_links_no_get_method(sample: CallGraph) -> None:
    select_proxy = def_id(sample, "select_proxy", "requests/utils.py")
    assert sample.callees(select_proxy) == []  # proxies.get on a dict: no project `get`
    request = def_id(sample, "Session.request", "requests/sessions.py")
    callees = {sample.definition(i).qualified_name for i in sample.callees(request, confident=True)}
    assert callees == {"select_proxy", "RequestsCookieJar.get"}  # self.cookies = RequestsCookieJar()


def test_locals_from_classes_and_typed_factories(sample: CallGraph) -> None:
    get = def_id(sample, "Session.get", "requests/sessions.py")
    callers = sample.callers_marked(get)
    rel = "requests/sessions.py"
    assert [(s.line, sample.definition(c).qualified_name, ev) for s, c, ev in callers if c is not None] == [
        (_line(rel, "return s.get(url)"), "fetch", "resolved"),
        (_line(rel, "first = s.get(url)"), "fetch_twice", "resolved"),
        # `self.__dict__.get` in LookupDict: nothing known of the receiver, several `get`s
        (_line("requests/structures.py", "self.__dict__.get("), "LookupDict.get", "ambiguous")]


def test_evidence_grades_and_confident_pagerank() -> None:
    graph = build_sources({
        "a.py": "class A:\n    def only(self):\n        pass\n    def shared(self):\n        pass\n",
        "b.py": "class B:\n    def shared(self):\n        pass\n",
        "c.py": "def use(x):\n    x.only()\n    x.shared()\n",
    })
    use = def_id(graph, "use")
    assert graph.edge_evidence(use, def_id(graph, "A.only")) == "by-unique-name"
    assert graph.edge_evidence(use, def_id(graph, "A.shared")) == "ambiguous"
    assert {graph.definition(i).qualified_name for i in graph.callees(use, confident=True)} == {"A.only"}
    assert len(graph.callees(use)) == 3
    ranks = graph.pagerank
    assert ranks[def_id(graph, "A.only")] > ranks[def_id(graph, "A.shared")]  # ambiguous edges: no vote


def test_parse_sources_numbers_receiver_types() -> None:
    _, calls, _ = parse_sources({"g.go": (
        "package main\n"
        "type Server struct { store *Store }\n"
        "func (s *Server) Handle() { s.store.Get(); c := &Client{}; c.Do() }\n")})
    assert {(c.receiver, c.callee): c.receiver_type for c in calls} == {
        ("s.store", "Get"): "T:Store", ("c", "Do"): "T:Client"}


def test_java_and_rust_typed_receivers_resolve_to_their_class() -> None:
    graph = build_sources({
        "src/Store.java": "class Store { void save() {} }\n",
        "src/Cache.java": "class Cache { void save() {} }\n",
        "src/Service.java": (
            "class Service {\n"
            "  private Store store;\n"
            "  void run(Cache cache) { store.save(); cache.save(); }\n"
            "}\n"),
        "src/lib.rs": (
            "struct Db { pool: Pool }\n"
            "struct Pool {}\n"
            "impl Pool { fn get(&self) {} fn new() -> Self { Pool {} } }\n"
            "struct Other {}\n"
            "impl Other { fn get(&self) {} }\n"
            "impl Db { fn query(&self) { self.pool.get(); let p = Pool::new(); p.get(); } }\n"),
    })
    run = def_id(graph, "Service.run")
    assert {(graph.definition(i).qualified_name, graph.edge_evidence(run, i))
            for i in graph.callees(run)} == {("Store.save", "resolved"), ("Cache.save", "resolved")}
    query = def_id(graph, "Db.query")
    assert {graph.definition(i).qualified_name for i in graph.callees(query)} == {"Pool.get", "Pool.new"}


def test_js_reexports_require_members_and_module_exports() -> None:
    graph = build_sources({
        "src/utils/common.ts": "export function each(obj: any) { return obj; }\n",
        "src/internal.ts": ('export * from "./utils/common"\n'
                            'export { each as forEach } from "./utils/common"\n'),
        "src/core.ts": ('import { each, forEach } from "./internal"\n'
                        "export function run() { each(1); forEach(2); }\n"),
        "lib/utils.js": "exports.compileETag = function compileETag(v) { return v; };\n",
        "lib/query.js": "module.exports = function query(options) { return options; };\n",
        "lib/app.js": (
            "var compileETag = require('./utils').compileETag;\n"
            "var query = require('./query');\n"
            "function init() { compileETag(1); query({}); }\n"),
    })
    run = def_id(graph, "run")
    each = def_id(graph, "each")
    assert graph.callees(run, confident=True) == [each]
    init = def_id(graph, "init")
    assert {graph.definition(i).qualified_name for i in graph.callees(init, confident=True)} == {
        "exports.compileETag", "module.exports"}
