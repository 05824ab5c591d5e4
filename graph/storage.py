"""The call graph's storage: networkx's DiGraph layout (`_node`, `_succ`, `_pred` dicts), filled without
importing networkx, so a build or a process that loads a saved graph never pays for it."""

from __future__ import annotations

from typing import Any

NodeData = dict[int, dict[str, Any]]
Adjacency = dict[int, dict[int, dict[str, Any]]]


class DiGraphStorage:
    """A directed graph held in networkx's DiGraph storage (`_node`, `_succ`, `_pred`), filled the way
    `DiGraph.add_node` / `add_edge` fill it (same dicts, same insertion order, one attribute dict per
    edge shared by both directions), without importing networkx."""

    def __init__(self) -> None:
        self.nodes: NodeData = {}
        self.succ: Adjacency = {}
        self.pred: Adjacency = {}

    def add_node(self, node: int, **attrs: Any) -> None:
        if node not in self.succ:
            self.succ[node] = {}
            self.pred[node] = {}
            self.nodes[node] = attrs
        else:
            self.nodes[node].update(attrs)

    def add_edge(self, u: int, v: int, **attrs: Any) -> None:
        for node in (u, v):
            if node not in self.succ:
                self.add_node(node)
        data = self.succ[u].get(v, {})
        data.update(attrs)
        self.succ[u][v] = data
        self.pred[v][u] = data

    def attach_edge(self, u: int, v: int, data: dict[str, Any]) -> None:
        """Add the edge u -> v with `data` itself as its attribute dict (both nodes are there)."""
        self.succ[u][v] = data
        self.pred[v][u] = data

    def has_edge(self, u: int, v: int) -> bool:
        return v in self.succ.get(u, {})
