"""Workspace symbols: the definitions whose name matches a typed query, by match quality then PageRank.

`fuzzy_score(query, name)` grades one name; `symbols(graph, query, limit)` ranks one graph's
definitions; `merge(per_root, limit)` merges the ranked lists of several roots (the language server
serves several workspace folders) in the same order one list over all of them would have.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from indexing.records import Definition

if TYPE_CHECKING:
    from graph.callgraph import CallGraph

MAX_SYMBOLS = 200
T = TypeVar("T")


@dataclass(frozen=True)
class Symbol:
    """A matching definition, its match score (higher is better) and its PageRank."""

    definition: Definition
    score: float
    rank: float

    def order(self) -> tuple[float, float, str, int]:
        """Sort key: best match, then most central, then by place."""
        return -self.score, -self.rank, self.definition.path, self.definition.name_line


def fuzzy_score(query: str, name: str) -> float | None:
    """Match quality of `query` against `name` (higher is better), None when it is not a subsequence.

    Exact > case-insensitive exact > prefix > substring > subsequence; within a tier, matched
    characters of the same case and at word starts (`_x`, `camelX`) score more, gaps score less.
    """
    if not query:
        return 0.0
    if name == query:
        return 100.0
    low_q, low_n = query.lower(), name.lower()
    if low_n == low_q:
        return 90.0
    if low_n.startswith(low_q):
        return 80.0 + 10.0 * len(query) / len(name)
    if low_q in low_n:
        return 60.0 + 10.0 * len(query) / len(name)
    score, pos, last = 0.0, 0, -1
    for ch in query:
        found = low_n.find(ch.lower(), pos)
        if found < 0:
            return None
        boundary = found == 0 or name[found - 1] in "_$.-" or (
            name[found].isupper() and name[found - 1].islower())
        score += 2.0 if boundary else 1.0
        score += 0.5 if name[found] == ch else 0.0
        score -= 0.2 * (found - last - 1) if last >= 0 else 0.1 * found
        last, pos = found, found + 1
    return 20.0 + 20.0 * score / (2.5 * len(query))


def symbols(graph: CallGraph, query: str, limit: int = MAX_SYMBOLS) -> list[Symbol]:
    """The definitions matching `query` by name (or by qualified name, a little lower, when the query
    has a dot), best first, at most `limit`."""
    rank = graph.pagerank
    scored: list[Symbol] = []
    for d in graph.definitions():
        score = fuzzy_score(query, d.name)
        if score is None:
            qscore = fuzzy_score(query, d.qualified_name) if "." in query else None
            if qscore is None:
                continue
            score = qscore - 5.0
        scored.append(Symbol(d, score, rank.get(d.id, 0.0)))
    scored.sort(key=Symbol.order)
    return scored[:limit]


def merge(per_root: Sequence[tuple[T, list[Symbol]]], limit: int = MAX_SYMBOLS) -> list[tuple[T, Symbol]]:
    """The best `limit` symbols of several roots' ranked lists (ties keep the roots' order)."""
    items = [(owner, s) for owner, found in per_root for s in found]
    items.sort(key=lambda item: item[1].order())
    return items[:limit]
