"""PageRank over the call edges of the call graph, normalized so the mean score over nodes is 1.

Edges point from caller to callee, so a function many others call (directly or through other
well-called functions) ranks high. Edge weights are the resolution confidence (1/n for a name with n
candidates); networkx normalizes each node's out-weights, so an ambiguous call spreads its vote.
Scores are multiplied by the node count: 1.0 is an average definition, 5.0 five times the average;
`boost` turns a score into the capped multiplicative ranking boost fusion applies.
"""

from __future__ import annotations

import math
from collections.abc import Collection

import networkx as nx


def pagerank(graph: nx.DiGraph, nodes: Collection[int], edge_type: str = "call",
             alpha: float = 0.85) -> dict[int, float]:
    """PageRank of `nodes` over the edges of `edge_type` among them, scaled to mean 1.

    Uses networkx's scipy-backed power iteration. Returns {} for no nodes and 1.0 everywhere when
    there is no edge. If the iteration fails to converge (it should not at alpha < 1), the
    normalized weighted in-degree is returned instead so callers always get a usable score.
    """
    node_set = set(nodes)
    if not node_set:
        return {}
    sub = nx.DiGraph()
    sub.add_nodes_from(node_set)
    sub.add_edges_from(
        (u, v, {"weight": float(data.get("weight", 1.0))})
        for u, v, data in graph.edges(data=True)
        if data.get("type") == edge_type and u in node_set and v in node_set
    )
    n = sub.number_of_nodes()
    if sub.number_of_edges() == 0:
        return dict.fromkeys(node_set, 1.0)
    try:
        scores = nx.pagerank(sub, alpha=alpha, weight="weight", max_iter=200, tol=1.0e-8)
    except nx.PowerIterationFailedConvergence:
        indeg = dict(sub.in_degree(weight="weight"))
        total = sum(indeg.values()) + n
        scores = {k: (v + 1.0) / total for k, v in indeg.items()}
    total = sum(scores.values()) or 1.0
    return {int(k): v * n / total for k, v in scores.items()}


def boost(score: float, cap: float = 1.5, slope: float = 0.3) -> float:
    """Ranking multiplier for a mean-1 PageRank score: min(1 + slope * ln(1 + score), cap)."""
    if score <= 0 or math.isnan(score):
        return 1.0
    return min(1.0 + slope * math.log1p(score), cap)
