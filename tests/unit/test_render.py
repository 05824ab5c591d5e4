"""Text, JSON and DOT renderings of callers, callees and impact."""

from __future__ import annotations

import json
import re

import pytest
from graph_records import Records

from graph.render import (
    UnsupportedFormatError,
    render_callees,
    render_callers,
    render_definitions,
    render_impact,
    to_dot,
    to_json,
)

_QUOTED = r'"(?:[^"\\\n]|\\.)*"'
_ID = rf"(?:[A-Za-z_][A-Za-z0-9_]*|{_QUOTED})"
_ATTRS = rf"\[\s*(?:[A-Za-z_]+\s*=\s*{_ID}\s*,?\s*)*\]"
_NODE = re.compile(rf"^\s*({_ID})\s*{_ATTRS};$")
_EDGE = re.compile(rf"^\s*({_ID})\s*->\s*({_ID})\s*(?:{_ATTRS})?;$")
_DEFAULTS = re.compile(rf"^\s*(?:node|edge|graph)\s*{_ATTRS};$|^\s*rankdir=LR;$")


def parse_dot(text: str) -> tuple[set[str], list[tuple[str, str]]]:
    """A strict little reader for the DOT subset we write; fails on anything malformed."""
    lines = text.strip().splitlines()
    assert re.match(rf"^digraph {_QUOTED} \{{$", lines[0]), lines[0]
    assert lines[-1] == "}"
    nodes: set[str] = set()
    edges: list[tuple[str, str]] = []
    for line in lines[1:-1]:
        if _DEFAULTS.match(line):
            continue
        if m := _EDGE.match(line):
            edges.append((m[1], m[2]))
        else:
            m = _NODE.match(line)
            assert m, f"bad DOT line: {line!r}"
            nodes.add(m[1])
    assert all(u in nodes and v in nodes for u, v in edges), "edge to an undeclared node"
    return nodes, edges


@pytest.fixture()
def graph_and_ids():
    """a <- b <- c, plus a module-level call of a; names with quotes and backslashes for escaping."""
    r = Records()
    a = r.define("pkg/a.py", "a", 1, 3, signature='def a(x="\\n"):')
    b = r.define("pkg/b.py", 'Weird"Name.b', 1, 4, kind="method")
    c = r.define("pkg/c.py", "c", 1, 4)
    r.call("pkg/b.py", 2, "a", caller='Weird"Name.b')
    r.call("pkg/c.py", 2, "b", receiver="obj", caller="c")
    r.call("pkg/main.py", 7, "a")
    return r.build(), a, b, c


def test_text_outputs(graph_and_ids):
    graph, a, b, c = graph_and_ids
    text = render_callers(graph, a, "text")
    assert text.splitlines() == [
        "callers of a (pkg/a.py:1:5): 2 call sites",
        '  pkg/b.py:2:5  in Weird"Name.b  a(...)',
        "  pkg/main.py:7:5  in <module>  a(...)",
    ]
    assert "Weird\"Name.b  pkg/b.py:1:5  (called at 2:5)" in render_callees(graph, c, "text")
    impact = render_impact(graph, a, 2, "text").splitlines()
    assert impact[1:] == ['  [1] Weird"Name.b  pkg/b.py:1:5', "    [2] c  pkg/c.py:1:5"]


def test_json_outputs_parse(graph_and_ids):
    graph, a, b, c = graph_and_ids
    callers = json.loads(render_callers(graph, a, "json"))
    assert callers["symbol"]["qualified_name"] == "a"
    assert [(x["site"]["line"], x["caller"] and x["caller"]["id"]) for x in callers["callers"]] == [
        (2, b), (7, None)]
    callees = json.loads(render_callees(graph, c, "json"))
    assert [(x["callee"]["id"], x["weight"], x["sites"][0]["receiver"], x["evidence"])
            for x in callees["callees"]] == [(b, 0.8, "obj", "by-unique-name")]
    impact = json.loads(render_impact(graph, a, 5, "json"))
    assert [(x["id"], x["depth"]) for x in impact["impact"]] == [(b, 1), (c, 2)]
    generic = json.loads(to_json(graph, [a, b], [(b, a)], extra={"note": 1}))
    assert [n["id"] for n in generic["nodes"]] == [a, b]
    assert generic["edges"] == [{"from": b, "to": a, "type": "call", "weight": 0.8, "sites": 1,
                                 "evidence": "by-unique-name"}]
    assert generic["note"] == 1
    assert json.loads(render_definitions(graph.resolve("a"), "json"))["definitions"][0]["id"] == a


def test_dot_outputs_are_valid(graph_and_ids):
    graph, a, b, c = graph_and_ids
    nodes, edges = parse_dot(render_callers(graph, a, "dot"))
    assert nodes == {f"n{a}", f"n{b}"} and edges == [(f"n{b}", f"n{a}")]
    nodes, edges = parse_dot(render_callees(graph, c, "dot"))
    assert edges == [(f"n{c}", f"n{b}")]
    nodes, edges = parse_dot(render_impact(graph, a, 2, "dot"))
    assert nodes == {f"n{a}", f"n{b}", f"n{c}"}
    assert sorted(edges) == sorted([(f"n{b}", f"n{a}"), (f"n{c}", f"n{b}")])
    module = graph.module_node("pkg/a.py")
    assert module is not None
    nodes, edges = parse_dot(to_dot(graph, [a, module], [(module, a), (a, 12345)]))
    assert nodes == {f"n{a}", f"nm{-module}"} and edges == [(f"nm{-module}", f"n{a}")]
    parse_dot(render_definitions(graph.resolve("a"), "dot"))
    assert 'label="Weird\\"Name.b\\npkg/b.py:1"' in render_impact(graph, a, 2, "dot")


def test_unknown_format_is_a_clear_error(graph_and_ids):
    graph, a, _, _ = graph_and_ids
    with pytest.raises(UnsupportedFormatError, match="text, json, dot"):
        render_callers(graph, a, "yaml")
