"""PageRank over call edges: mean 1, hubs above leaves, ambiguous votes split, the capped boost."""

from __future__ import annotations

import math
import random

import networkx as nx
import pytest
from graph_records import Records

from graph.centrality import boost, pagerank


def star_graph() -> tuple[Records, int, int]:
    """Six callers all call `hub`; `hub` calls `leaf` once."""
    r = Records()
    hub = r.define("hub.py", "hub", 1, 5)
    leaf = r.define("leaf.py", "leaf", 1, 5)
    r.call("hub.py", 2, "leaf", caller="hub")
    for k in range(6):
        r.define(f"c{k}.py", f"caller{k}", 1, 5)
        r.call(f"c{k}.py", 2, "hub", caller=f"caller{k}")
    return r, hub, leaf


def test_pagerank_mean_is_one_and_hub_outranks_a_caller():
    r, hub, leaf = star_graph()
    graph = r.build()
    pr = graph.pagerank
    assert set(pr) == {d.id for d in r.defs}
    assert sum(pr.values()) / len(pr) == pytest.approx(1.0)
    callers = [pr[d.id] for d in r.defs if d.name.startswith("caller")]
    assert pr[hub] > 2.0 > max(callers)
    assert pr[leaf] > max(callers)  # the hub passes its rank on
    assert graph.pagerank is pr  # computed once


def test_ambiguous_calls_split_their_vote():
    r = Records()
    a = r.define("a.py", "target", 1, 2)
    b = r.define("b.py", "target", 1, 2)
    only = r.define("c.py", "only", 1, 2)
    for k in range(4):
        r.define(f"m{k}.py", f"main{k}", 1, 5)
        r.call(f"m{k}.py", 2, "target", caller=f"main{k}")
        r.call(f"m{k}.py", 3, "only", caller=f"main{k}")
    pr = r.build().pagerank
    assert pr[a] == pytest.approx(pr[b])
    assert pr[only] > pr[a]


def test_only_call_edges_count():
    g = nx.DiGraph()
    g.add_nodes_from([1, 2, 3, -1])
    g.add_edge(1, 2, type="inherits", weight=1.0)
    g.add_edge(-1, 3, type="imports", weight=1.0)
    assert pagerank(g.succ, [1, 2, 3]) == {1: 1.0, 2: 1.0, 3: 1.0}
    g.add_edge(1, 3, type="call", weight=1.0)
    pr = pagerank(g.succ, [1, 2, 3])
    assert pr[3] > pr[2] and sum(pr.values()) == pytest.approx(3.0)
    assert pagerank(g.succ, []) == {}


def test_boost_is_capped_and_neutral_for_nothing():
    assert boost(1.0) == pytest.approx(1 + 0.3 * math.log(2))
    assert boost(1000.0) == 1.5
    assert boost(0.0) == 1.0 and boost(float("nan")) == 1.0
    assert boost(3.0, cap=2.0) == pytest.approx(1 + 0.3 * math.log(4))


def test_matches_networkx_pagerank_on_a_random_weighted_graph():
    rng = random.Random(7)
    g = nx.DiGraph()
    nodes = list(range(1, 61))
    g.add_nodes_from(nodes)
    for _ in range(200):
        u, v = rng.choice(nodes), rng.choice(nodes)  # self loops included; some nodes dangle
        g.add_edge(u, v, type="call", weight=rng.choice([1.0, 0.5, 0.25]))
    g.add_edge(3, 4, type="inherits", weight=1.0)  # ignored by both
    calls = nx.DiGraph()
    calls.add_nodes_from(nodes)
    calls.add_edges_from((u, v, d) for u, v, d in g.edges(data=True) if d["type"] == "call")
    expected = nx.pagerank(calls, alpha=0.85, weight="weight", tol=1e-12, max_iter=500)
    ours = pagerank(g.succ, nodes, tol=1e-12, max_iter=500)
    for node in nodes:
        assert ours[node] == pytest.approx(expected[node] * len(nodes), rel=1e-6)


def test_a_node_whose_edges_all_weigh_nothing_is_dangling():
    g = nx.DiGraph()
    g.add_nodes_from([1, 2, 3])
    g.add_edge(1, 2, type="call", weight=0.0)  # (no vote: its rank is spread as a dangling node's)
    g.add_edge(3, 2, type="call", weight=1.0)
    pr = pagerank(g.succ, [1, 2, 3])
    assert all(math.isfinite(v) for v in pr.values()) and sum(pr.values()) == pytest.approx(3.0)
    calls = nx.DiGraph()
    calls.add_nodes_from([1, 2, 3])
    calls.add_edge(3, 2, weight=1.0)
    expected = nx.pagerank(calls, alpha=0.85, weight="weight")
    assert pr == pytest.approx({k: v * 3 for k, v in expected.items()}, rel=1e-5)
