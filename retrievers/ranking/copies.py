"""Copies and layers: one definition bonus per name, and parallel copies of an API demoted.

A workspace often holds the same API twice: a versioned tree kept beside the current one (`v1/`,
`v3/`), an `old/` or `classic/` variant, generated re-declarations. Two mechanisms keep those from
outranking the real definition (docs/tuning/2026-11-30-issue-9-session-3.md and -session-4.md):

- `share_definition_bonus`: the definition bonus goes in full to one of the same-named definitions
  among the candidates (the best by PageRank, then the shallowest path, then the fused score) and
  x `definition_share_rest` to each other one ("first"), or bonus / their number ("divide", the
  default); in "divide", types declared in their home file (`home_file`: C#'s `SqlMapper.cs` among
  the partial `SqlMapper.Async.cs`...) share the bonus among themselves.
- `copy_trees` / `tree_factors`: a folder that looks like a version or a kept copy (`copy_folder`:
  `v1/`, `v2beta1/`, `old/`, `legacy/`, `classic/`, `time_alt/`..., or a Windows port: `win/`) at
  least `copy_tree_min_share` of whose qualified names are also defined in a more current tree of
  the workspace (no such folder, or a higher version) is a parallel copy; every chunk in it is scored
  x `copy_tree_factor` unless the query names the folder. Computed once per index snapshot and kept
  on it (`copy_trees_of`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import PurePosixPath

from indexing.records import Chunk, Definition
from retrievers.ranking.profile import DEFAULT_CONFIG, RankingConfig
from retrievers.snapshot import Snapshot
from retrievers.sources.tokenize import identifiers
from retrievers.sources.words import home_file, module_declaration

_VERSION = re.compile(r"^(?:api[_-]?)?v(\d+)(?:[._-]?\d+)*(?:(?:alpha|beta|rc)\d*)?$")
_COPY_WORDS = frozenset({"legacy", "deprecated", "compat", "backcompat", "obsolete", "old", "classic",
                         "mini", "archive", "archived", "previous"})
# A Windows port beside the portable implementation restates its API (libuv `src/win/` beside
# `src/unix/`); a query naming Windows (any of these words) keeps it.
_WINDOWS_WORDS = frozenset({"win", "win32", "win64", "windows", "winapi"})
# A folder named for another with a copy suffix: tokio `runtime/time_alt/` beside `runtime/time/`.
_COPY_SUFFIXES = frozenset({"alt", "old", "legacy", "compat", "deprecated", "classic", "obsolete"})
_PART_SEP = re.compile(r"[-_]")


def copy_folder(path: str) -> tuple[str, float] | None:
    """(folder name, currency) of the first folder of `path` that names a version or a kept copy;
    a version's currency is its number, a copy word's is -1. None for a path in no such folder."""
    found = _copy_part(path)
    return None if found is None else found[1:]


def _copy_part(path: str) -> tuple[int, str, float] | None:
    return _folder_copy_part(path.rpartition("/")[0])  # workspace paths: relative, normalised POSIX


def _tree_of(path: str, found: tuple[int, str, float]) -> str:
    """The copy tree a path lies in: its folders down to the copy folder `_copy_part` found."""
    return "/".join(path.split("/")[: found[0] + 1])


@lru_cache(maxsize=65536)
def _folder_copy_part(folder: str) -> tuple[int, str, float] | None:
    """Once per folder: a Django-sized snapshot has ~14,000 definitions in ~900 folders."""
    for index, part in enumerate(folder.split("/") if folder else ()):
        low = part.lower()
        m = _VERSION.match(low)
        if m:
            return index, part, float(m.group(1))
        if low in _COPY_WORDS or low in _WINDOWS_WORDS or _PART_SEP.split(low)[-1] in _COPY_SUFFIXES:
            return index, part, -1.0
    return None


def copy_trees(definitions: Iterable[Definition], min_share: float, min_names: int = 3) -> dict[str, str]:
    """{tree path ("pkg/v1"): its folder name} for the version/copy folders at least `min_share` of
    whose distinct qualified names (at least `min_names` of them) are also defined outside the folder
    in a more current tree (no such folder, or a higher version)."""
    names: dict[str, set[str]] = {}  # tree path -> qualified names defined in it
    currency_of: dict[str, float] = {}
    parts: dict[str, tuple[int, str, float] | None] = {}  # path -> its copy folder (one look per file)
    defs = list(definitions)
    for d in defs:
        found = parts[d.path] if d.path in parts else parts.setdefault(d.path, _copy_part(d.path))
        if found is not None:
            tree = _tree_of(d.path, found)
            names.setdefault(tree, set()).add(d.qualified_name)
            currency_of[tree] = found[2]
    if not names:
        return {}
    wanted = set().union(*names.values())
    best: dict[str, dict[str, float]] = {}  # qualified name in some tree -> {tree path or "": currency}
    for d in defs:
        if d.qualified_name not in wanted:
            continue
        found = parts[d.path]
        tree = "" if found is None else _tree_of(d.path, found)
        currency = float("inf") if found is None else found[2]
        trees = best.setdefault(d.qualified_name, {})
        trees[tree] = max(trees.get(tree, currency), currency)
    out: dict[str, str] = {}
    for tree, qualified in names.items():
        if len(qualified) < min_names:
            continue
        mine = currency_of[tree]
        shared = sum(1 for q in qualified if any(t != tree and c > mine for t, c in best[q].items()))
        if shared >= min_share * len(qualified):
            out[tree] = PurePosixPath(tree).name
    return out


def copy_trees_of(snapshot: Snapshot, min_share: float) -> dict[str, str]:
    """`copy_trees` of a snapshot's definitions, built once per `min_share` and kept on the snapshot."""
    return snapshot.memo((__name__, "copy_trees", min_share),
                         lambda: copy_trees(snapshot.definitions.values(), min_share), saved=True)


def tree_factors(
    candidates: Sequence[Chunk], trees: Mapping[str, str], query_text: str,
    config: RankingConfig = DEFAULT_CONFIG,
) -> dict[int, float]:
    """Per chunk id, `config.copy_tree_factor` for the candidates inside a copy tree (`copy_trees`)
    whose folder the query does not name."""
    if not trees or config.copy_tree_factor >= 1.0:
        return {}
    words = {w.lower() for w in identifiers(query_text)} | set(query_text.lower().split())
    out: dict[int, float] = {}
    for chunk in candidates:
        found = _copy_part(chunk.path)
        if found is None:
            continue
        tree = _tree_of(chunk.path, found)
        if tree in trees and not _query_names(found[1], words):
            out[chunk.id] = config.copy_tree_factor
    return out


def _query_names(folder: str, query_words: Collection[str]) -> bool:
    low = folder.lower()
    if low in _WINDOWS_WORDS and not _WINDOWS_WORDS.isdisjoint(query_words):
        return True
    return low in query_words or any(low.startswith(w) and len(w) >= 2 for w in query_words if w[0] == "v")


def share_definition_bonus(
    bonuses: Mapping[int, float],
    chunks: Mapping[int, Chunk],
    pagerank: Callable[[int], float],
    fused_score: Mapping[int, float],
    config: RankingConfig = DEFAULT_CONFIG,
) -> dict[int, float]:
    """The definition bonuses shared among the chunks given the same bonus (`config.definition_share`):
    "first": the first by (PageRank, -path depth, fused score) keeps it, each other one gets
    x `config.definition_share_rest`; "divide": each gets bonus / their number, but when some of them
    (not all) are types declared in their home file (`config.definition_home`; not a function, method
    or module), those share it among themselves; "off": unchanged."""
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
            # a type's declaration (a method named like its file, a constructor, is none)
            home = [i for i in ids if chunks[i].kind not in ("function", "method")
                    and home_file(chunks[i].path, chunks[i].symbol or "")
                    and not module_declaration(chunks[i].path, chunks[i].symbol or "")]
            share = len(home) if 0 < len(home) < len(ids) and config.definition_home else len(ids)
            out.update({chunk_id: bonuses[chunk_id] / (share if chunk_id in home else len(ids))
                        for chunk_id in ids})
            continue
        ids.sort(key=lambda i: (-pagerank(i), len(PurePosixPath(chunks[i].path).parts),
                                -fused_score.get(i, 0.0), i))
        for chunk_id in ids[1:]:
            out[chunk_id] = bonuses[chunk_id] * rest
    return out
