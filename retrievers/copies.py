"""Copies and layers: one definition bonus per name, and parallel copies of an API demoted.

A workspace often holds the same API twice: a versioned tree kept beside the current one (`v1/`,
`v3/`), an `old/` or `classic/` variant, generated re-declarations. Two mechanisms keep those from
outranking the real definition (docs/design.md "Issue 9"):

- `share_definition_bonus`: the definition bonus goes in full to one of the same-named definitions
  among the candidates (the best by PageRank, then the shallowest path, then the fused score) and
  x `definition_share_rest` to each other one.
- `copy_factors`: a chunk in a folder that looks like a version or a kept copy (`copy_folder`) whose
  qualified symbol is also defined by another candidate in a more current tree (no such folder, or a
  higher version) is scored x `copy_factor`, unless the query names that folder.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import PurePosixPath

from indexing.records import Chunk
from retrievers.profile import DEFAULT_CONFIG, RankingConfig
from retrievers.tokenize import identifiers

_VERSION = re.compile(r"^(?:api[_-]?)?v(\d+)(?:[._-]?\d+)*(?:(?:alpha|beta|rc)\d*)?$")
_COPY_WORDS = frozenset({"legacy", "deprecated", "compat", "backcompat", "obsolete", "old", "classic",
                         "mini", "archive", "archived", "previous"})


def copy_folder(path: str) -> tuple[str, float] | None:
    """(folder name, currency) of the first folder of `path` that names a version or a kept copy;
    a version's currency is its number, a copy word's is -1. None for a path in no such folder."""
    for part in PurePosixPath(path).parent.parts:
        low = part.lower()
        m = _VERSION.match(low)
        if m:
            return part, float(m.group(1))
        if low in _COPY_WORDS:
            return part, -1.0
    return None


def _currency(path: str) -> float:
    found = copy_folder(path)
    return float("inf") if found is None else found[1]


def _query_names(folder: str, query_words: Collection[str]) -> bool:
    low = folder.lower()
    return low in query_words or any(low.startswith(w) and len(w) >= 2 for w in query_words if w[0] == "v")


def copy_factors(
    candidates: Sequence[Chunk], query_text: str, config: RankingConfig = DEFAULT_CONFIG
) -> dict[int, float]:
    """Per chunk id, `config.copy_factor` for the chunks that are parallel copies of another candidate
    (same qualified symbol, a less current tree) in a folder the query does not name."""
    if config.copy_factor >= 1.0:
        return {}
    by_symbol: dict[str, list[Chunk]] = {}
    for chunk in candidates:
        if chunk.symbol:
            by_symbol.setdefault(chunk.symbol, []).append(chunk)
    words = {w.lower() for w in identifiers(query_text)} | set(query_text.lower().split())
    out: dict[int, float] = {}
    for same in by_symbol.values():
        if len({c.path for c in same}) < 2:
            continue
        best = max(_currency(c.path) for c in same)
        for chunk in same:
            found = copy_folder(chunk.path)
            if found is not None and found[1] < best and not _query_names(found[0], words):
                out[chunk.id] = config.copy_factor
    return out


def share_definition_bonus(
    bonuses: Mapping[int, float],
    chunks: Mapping[int, Chunk],
    pagerank: Callable[[int], float],
    fused_score: Mapping[int, float],
    config: RankingConfig = DEFAULT_CONFIG,
) -> dict[int, float]:
    """The definition bonuses shared among the chunks given the same bonus (`config.definition_share`):
    "first": the first by (PageRank, -path depth, fused score) keeps it, each other one gets
    x `config.definition_share_rest`; "divide": each gets bonus / their number; "off": unchanged."""
    mode, rest = config.definition_share, config.definition_share_rest
    if mode == "off":
        return dict(bonuses)
    by_level: dict[float, list[int]] = {}
    for chunk_id, value in bonuses.items():
        if value > 0:
            by_level.setdefault(value, []).append(chunk_id)
    out = dict(bonuses)
    for ids in by_level.values():
        if len(ids) < 2:
            continue
        if mode == "divide":
            out.update({chunk_id: bonuses[chunk_id] / len(ids) for chunk_id in ids})
            continue
        ids.sort(key=lambda i: (-pagerank(i), len(PurePosixPath(chunks[i].path).parts),
                                -fused_score.get(i, 0.0), i))
        for chunk_id in ids[1:]:
            out[chunk_id] = bonuses[chunk_id] * rest
    return out
