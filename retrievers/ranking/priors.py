"""Ranking priors: the named factors fusion applies after RRF, and every constant they use.

Bonuses (definition match, path keywords, file coherence) are in units of the top fused score, as in
semble's stack; factors (PageRank, label demotion, re-export and declaration files) multiply. Each is a
small named function so `explain` can name it; each constant is a field of `RankingConfig`, which
lives with the other ranking settings in `retrievers.ranking.profile` (a profile's `priors`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from functools import lru_cache
from pathlib import PurePosixPath

from indexing.records import Chunk
from retrievers.ranking.profile import DEFAULT_CONFIG, RankingConfig
from retrievers.scope import Scope
from retrievers.sources.words import STOPWORDS, prefix_match, split_words

DEFINITION_KINDS = frozenset({"function", "method", "class"})  # a chunk of one of these is no module code



# ---------------------------------------------------------------------------------------------------
# Named factors


def pagerank_factor(c: float, config: RankingConfig = DEFAULT_CONFIG) -> float:
    """min(1 + coef * ln(1 + c), cap), c = PageRank of the chunk's definition with mean 1."""
    if not math.isfinite(c) or c <= 0:
        return 1.0
    return min(1.0 + config.pagerank_coef * math.log1p(c), config.pagerank_cap)


def label_factor(
    labels: Collection[str], wanted: Collection[str], config: RankingConfig = DEFAULT_CONFIG
) -> tuple[float, str | None]:
    """The strongest demotion among the chunk's labels that the query did not ask for, and its label."""
    factor, which = 1.0, None
    for label in labels:
        if label in wanted:
            continue
        value = config.label_factors.get(label, 1.0)
        if value < factor:
            factor, which = value, label
    return factor, which


def reexport_factor(path: str, kind: str, config: RankingConfig = DEFAULT_CONFIG) -> float:
    """Module-level code of a re-export file (`__init__.py`, `index.js`, ...) is mostly plumbing."""
    if kind in DEFINITION_KINDS:
        return 1.0
    return config.reexport_factor if path.rpartition("/")[2] in config.reexport_names else 1.0


def chunk_prior(chunk: Chunk, pagerank: float, wanted: Collection[str],
                config: RankingConfig = DEFAULT_CONFIG) -> float:
    """The priors that tell a file's chunks apart (PageRank, labels, re-export plumbing); the rest
    (depth, declaration, private module, ...) are the same for every chunk of a file."""
    return (pagerank_factor(pagerank, config) * label_factor(chunk.labels, wanted, config)[0]
            * reexport_factor(chunk.path, chunk.kind, config))


def declaration_factor(path: str, config: RankingConfig = DEFAULT_CONFIG,
                       c_headers: Collection[str] = ()) -> float:
    """TypeScript declaration files restate an API without implementing it; so do C headers beside
    their `.c` file (`c_headers`: `retrievers.ranking.headers`, passed for natural-language queries only)."""
    if path.endswith(".d.ts"):
        return config.declaration_factor
    return config.c_header_factor if path in c_headers else 1.0


# Question words asking for a library's internals: its private modules are then not demoted.
PRIVATE_ASKING_WORDS = frozenset({"internal", "internals", "internally", "private"})


@lru_cache(maxsize=32768)
def private_module(path: str) -> bool:
    """A Python module private by its name: the file or a package folder above it starts with one
    underscore (`_internal/_validate_call.py`, `_termui_impl.py`: PEP 8's internal interfaces);
    `__init__.py` and `__main__.py` are not."""
    if not path.endswith((".py", ".pyi")):
        return False
    return any(part.startswith("_") and not part.startswith("__") for part in path.split("/"))


def private_factor(path: str, config: RankingConfig = DEFAULT_CONFIG) -> float:
    """A question about a library asks for its public modules more often than for the private ones
    behind them (`validate_call_decorator.py`, not `_internal/_validate_call.py`); for questions not
    asking for internals (`PRIVATE_ASKING_WORDS`; the caller's test: a lookup of a private name wants it)."""
    return config.private_module_factor if private_module(path) else 1.0


def _module_parts(path: str) -> list[str]:
    p = PurePosixPath(path)
    parts = [*p.parent.parts, p.stem]
    return [part for part in parts if part not in ("", ".", "src", "lib")]


def definition_match(chunk: Chunk, symbol: str) -> str | None:
    """'full' if the chunk defines the queried symbol, 'partial' if only its last part matches."""
    if not chunk.symbol or chunk.kind not in DEFINITION_KINDS:
        return None
    if symbol.rpartition(".")[2] not in chunk.symbol:  # (most candidates: their names end otherwise)
        return None
    want = [p for p in symbol.split(".") if p]
    have = [p for p in chunk.symbol.split(".") if p]
    if not want or not have or want[-1] != have[-1]:
        return None
    matched = 0
    while matched < min(len(want), len(have)) and want[-1 - matched] == have[-1 - matched]:
        matched += 1
    if matched == len(want):
        return "full"
    rest = want[: len(want) - matched]  # left-over qualifiers must name the module ("sessions.Session")
    if matched == len(have) and rest == _module_parts(chunk.path)[-len(rest) :]:
        return "full"
    return "partial"


# Files that stand for their folder as a module (`mini/comment/init.lua` is `mini.comment`).
_MODULE_FILES = frozenset({"init", "index", "__init__", "mod"})


def file_stem(p: PurePosixPath) -> str:
    """A file's name without its extension, a TypeScript declaration file's without `.d.ts`."""
    return p.name[: -len(".d.ts")] if p.name.endswith(".d.ts") else p.stem


def module_named(path: str, symbol: str, root_parts: Sequence[str] = ()) -> bool:
    """True when a dotted name names this file as a module: `mini.comment` is `lua/mini/comment.lua` (or
    `mini/comment/init.lua`), as Lua's `require`, Python's imports and similar module systems spell it.
    `root_parts` are the folder names above the workspace root (a workspace opened at `lua/mini` holds
    `comment.lua`). Case-insensitive; a name of one part names no module (a word is not a path)."""
    return _names_module(path, tuple(part.lower() for part in symbol.split(".") if part), root_parts)


def _names_module(path: str, want: tuple[str, ...], root_parts: Sequence[str]) -> bool:
    """`module_named` with the dotted name already split and lowercased."""
    if len(want) < 2:
        return False
    parts = _module_path(path)
    if len(parts) < len(want):
        parts = (*(part.lower() for part in root_parts), *parts)
    return parts[-len(want):] == want


@lru_cache(maxsize=32768)
def _module_path(path: str) -> tuple[str, ...]:
    """A file's folders and its stem (not a module file's), lowercased: the dotted name it stands for."""
    p = PurePosixPath(path)
    stem = file_stem(p)
    return tuple(part.lower() for part in [*p.parent.parts] + ([] if stem in _MODULE_FILES else [stem]))


def module_bonuses(
    scored: Sequence[tuple[int, Chunk, float, str | None]],
    symbol: str | None,
    bonuses: dict[int, float],
    identifier_query: bool,
    config: RankingConfig = DEFAULT_CONFIG,
    root_parts: Sequence[str] = (),
) -> dict[int, float]:
    """The definition bonuses when the queried dotted name names candidate files as modules: the best
    chunk (by fused score) of each such file gets the bonus, and chunks elsewhere keep theirs only when
    they define the whole dotted name (`MiniBracketed.comment` does not answer `mini.comment`).
    Unchanged when no candidate file is so named. Input: (chunk id, chunk, fused score, structural match)."""
    if not symbol or not config.module_names or "." not in symbol:
        return bonuses
    best: dict[str, tuple[float, int]] = {}
    want = tuple(part.lower() for part in symbol.split(".") if part)
    for chunk_id, chunk, score, _ in scored:
        if chunk.path and _names_module(chunk.path, want, root_parts):
            if chunk.path not in best or (score, -chunk_id) > (best[chunk.path][0], -best[chunk.path][1]):
                best[chunk.path] = (score, chunk_id)
    if not best:
        return bonuses
    out: dict[int, float] = {}
    for chunk_id, chunk, _, structural in scored:
        value = bonuses.get(chunk_id, 0.0)
        if value and "full" in (definition_match(chunk, symbol), _STRUCTURAL_DEFINES.get(structural or "")):
            out[chunk_id] = value
    value = config.definition_bonus if identifier_query else config.definition_bonus_embedded
    for _, chunk_id in best.values():
        out[chunk_id] = max(out.get(chunk_id, 0.0), value)
    return out


# Structural match kinds (retrievers.sources.structural) that say "this chunk holds the named definition".
# `folded_apart`: case-folded, and the words differ too (`LaTeX`: la, te, x; a helper `latex`), not
# only the case of a camelCase name (`URLSession` / `urlSession`); set by `fusion`.
_STRUCTURAL_DEFINES = {"exact": "full", "qualified": "full", "exact_folded": "partial",
                       "folded_apart": "partial", "last_part": "partial"}


def definition_bonus(
    chunk: Chunk,
    symbol: str | None,
    identifier_query: bool,
    config: RankingConfig = DEFAULT_CONFIG,
    structural_match: str | None = None,
) -> float:
    """Bonus (in top-score units) for a chunk that defines the symbol the query names.

    The chunk defines it when its own symbol matches (`definition_match`) or when the structural
    retriever found the definition in it (`structural_match`, its detail's `match`): a class merged
    into a block chunk of small classes has no chunk symbol of its own.
    """
    if not symbol:
        return 0.0
    match = definition_match(chunk, symbol)
    folded = match is None and structural_match == "folded_apart"
    by_index = _STRUCTURAL_DEFINES.get(structural_match or "")
    if match != "full" and by_index is not None:
        match = by_index if match is None or by_index == "full" else match
    if match is None:
        return 0.0
    if not identifier_query:
        return config.definition_bonus_embedded_folded if folded else config.definition_bonus_embedded
    return config.definition_bonus if match == "full" else config.definition_bonus_partial


@lru_cache(maxsize=32768)
def path_words(path: str) -> frozenset[str]:
    """Words of a file's stem and its parent folder's name."""
    p = PurePosixPath(path)
    name = file_stem(p)
    return frozenset(split_words(name)) | frozenset(split_words(p.parent.name))


def path_keyword_shares(
    keywords: Sequence[str], paths: Collection[str], config: RankingConfig = DEFAULT_CONFIG,
    short_words: Sequence[str] = (),
) -> dict[str, float]:
    """Per path, the share of query keywords matching its stem or parent folder.

    A keyword matching more than `path_keyword_max_file_share` of the candidate files (when they span at
    least `path_keyword_min_files` files) says nothing about any of them and is not counted.
    """
    if not paths:
        return {}
    words = {path: path_words(path) for path in paths}
    distinct = frozenset().union(*words.values())
    if short_words:  # `vi`, `io`, `db`: a word too short to be a keyword counts when it names a file
        keywords = [*keywords, *(w for w in short_words if w in distinct and w not in keywords)]
    if not keywords:
        return {}
    matches = {}
    named: set[str] = set()  # every word some keyword matches (a stem's words are among `distinct`)
    least = config.path_keyword_min_prefix
    for kw in keywords:  # each distinct word is compared once, then paths holding a matching word
        head = kw[:least]  # every word that matches starts so (`prefix_match`)
        matching = {w for w in distinct if w.startswith(head) and prefix_match(kw, w, least)}
        matches[kw] = {path for path, ws in words.items() if not matching.isdisjoint(ws)}
        named |= matching
    if len(paths) >= config.path_keyword_min_files:
        limit = config.path_keyword_max_file_share * len(paths)
        matches = {kw: hit for kw, hit in matches.items() if len(hit) <= limit}
    shares: dict[str, float] = {}
    for hit in matches.values():
        for path in hit:
            shares[path] = shares.get(path, 0.0) + 1.0 / len(keywords)
    weight = config.path_stem_coverage
    if weight > 0:  # a file the question names whole ("syslog handler": SyslogHandler, not AbstractSyslog...)
        for path in shares:
            shares[path] *= 1.0 - weight + weight * _named_share(stem_words(path), named)
    return shares


@lru_cache(maxsize=32768)
def stem_words(path: str) -> tuple[str, ...]:
    """Distinct words of a file's stem (three letters or more, stopwords dropped, unless it has no
    other); a file standing for its folder as a module (`router/index.js`, `task/mod.rs`,
    `pkg/__init__.py`) has its folder's."""
    p = PurePosixPath(path)
    name = file_stem(p)
    if name in _MODULE_FILES:
        name = p.parent.name
    words = split_words(name)
    long = [w for w in words if len(w) >= 3 and w not in STOPWORDS]
    return tuple(dict.fromkeys(long or words))  # `g.py`, `Op.kt`: their short words (a query `g`)


def stem_coverage(path: str, keywords: Sequence[str], min_prefix: int = 3) -> float:
    """The share of the file stem's words that some query keyword matches (1.0: the question names
    the file whole; a stem without such words counts as uncovered)."""
    words = stem_words(path)
    return _named_share(words, {w for w in words if any(prefix_match(k, w, min_prefix) for k in keywords)})


def _named_share(words: Sequence[str], named: Collection[str]) -> float:
    return sum(1 for w in words if w in named) / len(words) if words else 0.0


@lru_cache(maxsize=32768)
def path_depth(path: str) -> int:
    """How many folders a file sits in; a module file stands for its folder and counts one level up:
    `pkg/__init__.py`, `router/index.js`, `task/mod.rs`, `mini/comment/init.lua`, and a file named
    like its folder (`persistence/persistence.py`, `Request/Request.swift`)."""
    p = PurePosixPath(path)
    depth = len(p.parts) - 1
    name = file_stem(p)
    if depth > 0 and (name in _MODULE_FILES or name.lower() == p.parent.name.lower()):
        return depth - 1
    return depth


def depth_factors(paths: Collection[str], config: RankingConfig = DEFAULT_CONFIG) -> dict[str, float]:
    """Per candidate path deeper than the shallowest candidate, x (1 - `path_depth_penalty`) per level
    below it (paths at that level are absent: factor 1). A deeper file is the more specialised one
    (`Http/Client/Request.php` beside `Http/Request.php`, `_internal/_validate_call.py` beside
    `validate_call_decorator.py`): at equal evidence, the shallower answers a question first."""
    penalty = config.path_depth_penalty
    if penalty <= 0 or not paths:
        return {}
    depths = {path: path_depth(path) for path in paths}
    top = min(depths.values())
    return {path: (1.0 - penalty) ** (depth - top) for path, depth in depths.items() if depth > top}


def coherence_bonuses(
    scored: Sequence[tuple[int, str, float]], config: RankingConfig = DEFAULT_CONFIG
) -> dict[int, float]:
    """Bonus for the best chunk of each file with several hits, in proportion to the file's summed
    score (the file with the highest sum gets the full `coherence_bonus`). Input: (chunk id, path, score)."""
    by_path: dict[str, list[tuple[int, float]]] = {}
    for chunk_id, path, score in scored:
        by_path.setdefault(path, []).append((chunk_id, score))
    sums = {path: sum(s for _, s in items) for path, items in by_path.items() if len(items) > 1}
    top_sum = max(sums.values(), default=0.0)
    if top_sum <= 0:
        return {}
    out: dict[int, float] = {}
    for path, total in sums.items():
        best = max(by_path[path], key=lambda item: (item[1], -item[0]))
        out[best[0]] = config.coherence_bonus * total / top_sum
    return out


_WANT_WORDS = {
    "test": frozenset({"test", "tests", "tested", "testing", "unittest", "pytest", "spec", "specs", "fixture",
                       "fixtures", "mock", "mocks"}),
    "doc": frozenset({"doc", "docs", "documentation", "readme", "guide", "tutorial", "changelog",
                      "docstring"}),
    "example": frozenset({"example", "examples", "sample", "samples", "demo", "demos"}),
    "vendor": frozenset({"vendor", "vendored", "vendors", "third_party", "thirdparty"}),
    "generated": frozenset({"generated", "codegen", "autogenerated", "protobuf"}),
    "legacy": frozenset({"legacy", "deprecated", "deprecation", "compat", "compatibility", "backcompat",
                         "obsolete"}),
}


def wanted_labels(text: str, scope: Scope | None = None) -> frozenset[str]:
    """Labels the query text or the include globs ask for; those chunks are not demoted."""
    words = set(text.lower().replace("-", "_").split()) | set(split_words(text))
    wanted = {label for label, hints in _WANT_WORDS.items() if words & hints}
    if scope is not None:
        wanted |= {label for label in _WANT_WORDS if scope.asks_for(label)}
    return frozenset(wanted)


