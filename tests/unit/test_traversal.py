"""Traversals: callers, callees, incoming/outgoing calls, impact depths, cycles."""

from __future__ import annotations

from graph_records import Records, build_sources, def_id

from graph.traversal import caller_ids, impact_edges


def chain() -> tuple[Records, dict[str, int]]:
    """a <- b <- c <- d (d calls c calls b calls a), each in its own file."""
    r = Records()
    ids = {n: r.define(f"{n}.py", n, 1, 5) for n in "abcd"}
    r.call("b.py", 2, "a", caller="b")
    r.call("c.py", 2, "b", caller="c")
    r.call("d.py", 2, "c", caller="d")
    return r, ids


def test_impact_on_a_chain_stops_at_depth():
    r, ids = chain()
    graph = r.build()
    assert graph.impact(ids["a"], depth=2) == [(ids["b"], 1), (ids["c"], 2)]
    assert graph.impact(ids["a"]) == [(ids["b"], 1), (ids["c"], 2)]  # default depth 2
    assert graph.impact(ids["a"], depth=3) == [(ids["b"], 1), (ids["c"], 2), (ids["d"], 3)]
    assert graph.impact(ids["a"], depth=10) == graph.impact(ids["a"], depth=3)
    assert graph.impact(ids["a"], depth=0) == []
    assert graph.impact(ids["d"], depth=2) == []


def test_impact_reports_minimum_depth_in_bfs_order():
    r, ids = chain()
    r.call("d.py", 3, "a", caller="d")  # d also calls a directly
    graph = r.build()
    assert graph.impact(ids["a"], depth=3) == [(ids["b"], 1), (ids["d"], 1), (ids["c"], 2)]
    assert sorted(impact_edges(graph, ids["a"], 3)) == sorted(
        [(ids["b"], ids["a"]), (ids["c"], ids["b"]), (ids["d"], ids["c"]), (ids["d"], ids["a"])])


def test_recursion_and_mutual_recursion_terminate():
    r = Records()
    fact = r.define("m.py", "fact", 1, 3)
    even = r.define("m.py", "even", 4, 6)
    odd = r.define("m.py", "odd", 7, 9)
    main = r.define("m.py", "main", 10, 12)
    r.call("m.py", 2, "fact", caller="fact")
    r.call("m.py", 5, "odd", caller="even")
    r.call("m.py", 8, "even", caller="odd")
    r.call("m.py", 11, "even", caller="main")
    r.call("m.py", 11, "fact", caller="main", column=20)
    graph = r.build()
    assert graph.callees(fact) == [fact]
    assert graph.impact(fact, depth=50) == [(main, 1)]  # itself never listed
    assert graph.impact(even, depth=50) == [(odd, 1), (main, 1)]
    assert graph.impact(odd, depth=50) == [(even, 1), (main, 2)]
    assert caller_ids(graph, fact) == [main]
    assert graph.pagerank[even] > 0


def test_callers_callees_and_grouped_calls_on_parsed_code():
    graph = build_sources({
        "svc.py": (
            "def helper(x):\n    return x\n\n"
            "def first():\n    helper(1)\n    helper(2)\n\n"
            "def second():\n    return helper(3)\n\n"
            "helper(4)\n"
        ),
    })
    helper, first, second = (def_id(graph, n) for n in ("helper", "first", "second"))
    assert [(s.line, c) for s, c in graph.callers(helper)] == [
        (5, first), (6, first), (9, second), (11, None)]
    assert [(c, [s.line for s in sites]) for c, sites in graph.incoming_calls(helper)] == [
        (first, [5, 6]), (second, [9]), (None, [11])]
    assert graph.callees(first) == [helper]
    [(callee, sites)] = graph.outgoing_calls(first)
    assert callee == helper and [s.line for s in sites] == [5, 6]
    assert graph.callees(helper) == [] and graph.callers(first) == []
