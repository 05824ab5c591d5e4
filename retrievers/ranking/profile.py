"""Every ranking setting in one place: one immutable `RankingProfile` per search preset.

A profile holds what decides a fused ranking (docs/design.md "Ranking settings"): the retrievers run
and their weights per intent, the RRF k, how far each retriever over-fetches, how many top hits the
graph expands, the priors' constants (`RankingConfig`), the per-file saturation, and the confidence
at which an intent takes the direct route. `PROFILES` maps the preset names (`PRESETS`, what the
request, the CLI, the server and the editors accept) to the shipped profiles, tuned on the query sets
(docs/tuning/2026-11-29-fusion-tuning.md). The engine reads the profile a request names; the one way to
change it is `with_overrides` (`EngineOptions.ranking`, `bench/eval_public.py --opt`, A/B runs).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from retrievers.base import QueryError

MODALITIES = ("semantic", "text", "structural", "graph")


def _frozen(table: Mapping[str, Mapping[str, float]]) -> Mapping[str, Mapping[str, float]]:
    return MappingProxyType({key: MappingProxyType(dict(value)) for key, value in table.items()})


# Weights per intent (semantic / text / structural / graph): the brief's starting points, with
# understand_code tuned on the query sets from 0.5 / 0.2 / 0.2 / 0.1 (for questions the embeddings are
# the strongest single signal; docs/tuning/2026-11-29-fusion-tuning.md), then 0.6 / 0.1 / 0.2 / 0.1 ->
# 0.6 / 0.2 / 0.1 / 0.1 for the static tier with file cards: a question's words matched inside
# definition names (the structural list) are noisier than BM25 over the code
# (docs/tuning/2026-11-30-issue-9-session-4.md, "Issue 9: the low repositories").
INTENT_WEIGHTS = _frozen({
    "find_definition": {"semantic": 0.2, "text": 0.1, "structural": 0.6, "graph": 0.1},
    "find_references": {"semantic": 0.1, "text": 0.2, "structural": 0.2, "graph": 0.5},
    "understand_code": {"semantic": 0.6, "text": 0.2, "structural": 0.1, "graph": 0.1},
    "find_similar": {"semantic": 0.4, "text": 0.3, "structural": 0.2, "graph": 0.1},
    "impact_analysis": {"semantic": 0.1, "text": 0.1, "structural": 0.1, "graph": 0.7},
    "exact_match": {"semantic": 0.0, "text": 0.9, "structural": 0.1, "graph": 0.0},
})


@dataclass(frozen=True)
class RankingConfig:
    """The priors' constants (`ranking.priors`). Bonuses are in units of the top fused (RRF) score."""

    pagerank_coef: float = 0.3  # factor = min(1 + coef * ln(1 + c), cap)
    pagerank_cap: float = 1.5
    # Demotion per label unless the query or scope asks for it; a chunk takes its strongest demotion.
    label_factors: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({
        "test": 0.3,
        "doc": 0.4,
        "example": 0.3,
        "vendor": 0.15,
        "generated": 0.1,
        "config": 1.0,
        "legacy": 0.3,  # folders named legacy/deprecated/compat... (semble: 0.3; design.md)
    }))
    definition_bonus: float = 3.0  # identifier query; the chunk defines exactly the queried symbol
    definition_bonus_partial: float = 1.0  # qualified query ("Session.send"); only the last part matches
    definition_bonus_embedded: float = 1.0  # identifier embedded in a natural-language query
    # ... when the name is only matched in another case (`LaTeX` in a question, a helper `latex`): a
    # question's capitalised word is prose more often than that helper's name
    definition_bonus_embedded_folded: float = 0.0
    undefined_as_question: bool = True  # a lookup of a name no definition has is ranked as a question
    module_names: bool = True  # a dotted name naming a file as a module (`mini.comment`) gives that file
    # the definition bonus (its best chunk) instead of the namesakes of its last part elsewhere
    path_keyword_bonus: float = 1.25  # scaled by the share of query words matching stem / parent folder
    path_keyword_min_prefix: int = 3
    path_keyword_max_file_share: float = 0.5  # a word matching more of the candidate files is no signal
    path_keyword_min_files: int = 4  # ... judged only when candidates span at least this many files
    path_keyword_short: bool = True  # a two-letter query word (`vi`, `io`) naming a candidate file counts
    path_keyword_rest: float = 1.0  # ... in full for a file's best chunk, x this for its other chunks,
    # which get at most this (top-score units): a file named by a large share of the question stands for
    # it through its best chunk, one named by a word of a long question may hold the answer in any chunk
    path_keyword_rest_max: float = 0.2
    path_stem_coverage: float = 1.0  # share x (1 - w + w * the share of the stem's words the query names)
    coherence_bonus: float = 0.2  # best chunk of a file with several hits, by the file's summed score
    # Each folder level a candidate file sits below the shallowest candidate file scores x (1 - this); a
    # module file (`pkg/__init__.py`, `router/index.js`, `persistence/persistence.py`) counts at its
    # folder's level (0: off; docs/tuning/2026-11-30-issue-9-session-5.md, "Issue 9: path depth").
    path_depth_penalty: float = 0.08
    reexport_factor: float = 0.6  # module-level code of __init__.py / index.js / mod.rs ...
    reexport_names: tuple[str, ...] = (
        "__init__.py", "index.js", "index.mjs", "index.cjs", "index.ts", "mod.rs", "package-info.java")
    declaration_factor: float = 0.7  # TypeScript .d.ts declaration files
    contract_factor: float = 0.5  # interface files a class implements, for questions (ranking.contracts)
    c_header_factor: float = 0.5  # a C header beside its .c file, natural-language queries (headers.py)
    # a Python module private by its name (`_internal/`, `_termui_impl.py`), for questions (priors.py)
    private_module_factor: float = 0.85
    contract_type_only: bool = True  # ... and TypeScript files of nothing but interfaces and type aliases
    # Copies and layers (retrievers.ranking.copies): how same-named definitions among the candidates share the
    # definition bonus ("off", "first": full for one, x rest for the others, "divide": bonus / count) ...
    definition_share: str = "divide"
    definition_share_rest: float = 0.5
    definition_home: bool = True  # ... the ones in their home file (`Foo.cs` for `Foo`) share it apart
    copy_tree_factor: float = 0.5  # ... and every chunk of a version/legacy folder copying another tree
    copy_tree_min_share: float = 0.2  # ... judged so when this share of its names is defined there too
    # File cards (retrievers.sources.filecards): the `file_card_top` files whose card (path, definition names,
    # docs; BM25 x a centrality factor) best matches a question form one more RRF list, weighted this
    # share of the weights of the retrievers that ran, for these intents (0: off;
    # docs/tuning/2026-11-30-issue-9-session-3.md, "Issue 9 mechanisms", step 8).
    file_card_weight: float = 0.3
    file_card_top: int = 3
    file_card_pagerank: float = 0.4  # card score x (1 + this x ln(1 + the file's highest chunk PageRank))
    file_card_b: float = 0.75  # BM25 length normalisation of the cards (0: a long card is not discounted)
    file_card_intents: frozenset[str] = frozenset({"understand_code"})
    # A card scoring below this (BM25 x centrality) is not listed: a weak match of a few common words
    # (on a small tree every card scores low) lifts a chunk on the strength of its file alone.
    file_card_min_score: float = 7.0
    # ... unless it is the first card and scores this many times the second's (0: off): on a small tree
    # every card scores low, and one that stands out is still the file the question means.
    file_card_lead_ratio: float = 1.5
    # The file's candidate that takes the card's credit: the best by RRF x its own chunk priors
    # (PageRank, labels, re-export plumbing) when True, else by RRF alone.
    file_card_chunk_priors: bool = True

    def __post_init__(self) -> None:
        if self.definition_share not in ("off", "first", "divide"):
            raise QueryError(f"definition_share must be off, first or divide, got {self.definition_share!r}")
        weight, top, b = self.file_card_weight, self.file_card_top, self.file_card_b
        if not (math.isfinite(weight) and weight >= 0 and top >= 0 and 0 <= b <= 1
                and self.file_card_pagerank >= 0 and self.file_card_min_score >= 0
                and self.file_card_lead_ratio >= 0):
            raise QueryError("file_card_weight must be a finite number >= 0, file_card_top, "
                             "file_card_pagerank, file_card_min_score and file_card_lead_ratio >= 0, "
                             "file_card_b in 0..1")
        if not 0.0 <= self.path_depth_penalty < 1.0:
            raise QueryError(f"path_depth_penalty must be in [0, 1), got {self.path_depth_penalty}")
        if not (self.path_keyword_rest >= 0 and self.path_keyword_rest_max >= 0):
            raise QueryError("path_keyword_rest and path_keyword_rest_max must be >= 0, got "
                             f"{self.path_keyword_rest} and {self.path_keyword_rest_max}")


DEFAULT_CONFIG = RankingConfig()


@dataclass(frozen=True)
class RankingProfile:
    """How one preset ranks: retrievers and weights, RRF k, over-fetch, expansion, priors, grouping."""

    name: str
    k: int  # RRF k: a modality's contribution is weight / (k + rank), rank from 1
    modalities: tuple[str, ...]  # the retrievers the fused route runs
    fetch_factor: int  # each retriever is asked for max(limit * fetch_factor, min_fetch) hits
    min_fetch: int
    expand_seeds: int  # how many top fused hits the graph expands to callers/callees (0: none)
    expand_intents: frozenset[str] = frozenset({"understand_code", "find_similar", "find_definition"})
    weights: Mapping[str, Mapping[str, float]] = field(default_factory=lambda: INTENT_WEIGHTS)
    priors: RankingConfig = DEFAULT_CONFIG
    # Fused results: each further chunk of a file already listed is scored x file_decay**n
    # (0: strictly one result per file, the others folded under it; 1: no saturation).
    file_decay: float = 0.85
    direct_confidence: float = 0.85  # a classified intent this sure takes the direct route
    # A block of text repeated verbatim in this many files or more (a licence header, a generated
    # banner: `Snapshot.boilerplate`) leaves the fused route's lists; 0: kept.
    boilerplate_min_files: int = 3

    def __post_init__(self) -> None:
        unknown = [m for m in self.modalities if m not in MODALITIES]
        if unknown or not self.modalities:
            raise QueryError(f"profile {self.name!r}: modalities must be some of {', '.join(MODALITIES)}")
        if self.k < 0 or self.fetch_factor < 1 or self.min_fetch < 0 or self.expand_seeds < 0:
            raise QueryError(f"profile {self.name!r}: k, min_fetch and expand_seeds must be >= 0, "
                             "fetch_factor >= 1")
        if not (math.isfinite(self.file_decay) and 0.0 <= self.file_decay <= 1.0):
            raise QueryError(f"profile {self.name!r}: file_decay must be in 0..1, got {self.file_decay}")

    def fetch_limit(self, limit: int) -> int:
        return max(limit * self.fetch_factor, self.min_fetch)

    def weights_for(self, intent: str, only: tuple[str, ...] = ()) -> dict[str, float]:
        """The intent's weight per retriever: over the profile's modalities, or over `only` (a request
        restricted to some retrievers keeps the intent's weights for them).

        If that leaves no positive weight (exact_match under `quick`), the retrievers share equally,
        so the search still answers.
        """
        base = self.weights.get(intent, self.weights["understand_code"])
        names = only or self.modalities
        weights = {m: base.get(m, 0.0) for m in names}
        if not any(w > 0 for w in weights.values()):
            weights = {m: 1.0 if only else 1.0 / len(names) for m in names}
        return weights


# RRF k tuned on the query sets (docs/tuning/2026-11-29-fusion-tuning.md); the brief started at 40 / 40 / 60,
# which flattens the lists so much (rank 1 scores 1/41, rank 10 1/50) that the priors decide; k = 10
# lets a retriever's first ranks count.
PROFILES: Mapping[str, RankingProfile] = MappingProxyType({
    "quick": RankingProfile("quick", k=10, modalities=("semantic", "structural"), fetch_factor=3,
                            min_fetch=30, expand_seeds=0),
    "default": RankingProfile("default", k=10, modalities=MODALITIES, fetch_factor=4, min_fetch=50,
                              expand_seeds=5),
    "thorough": RankingProfile("thorough", k=20, modalities=MODALITIES, fetch_factor=8, min_fetch=100,
                               expand_seeds=10),
})
PRESETS: tuple[str, ...] = tuple(PROFILES)  # the preset names, fastest first
DEFAULT_PRESET = "default"
# The names as a type, for schemas built from annotations (the MCP tool's); a test keeps it = PRESETS.
PresetName = Literal["quick", "default", "thorough"]


def profile(name: str, profiles: Mapping[str, RankingProfile] = PROFILES) -> RankingProfile:
    """The named preset's profile; QueryError for an unknown name."""
    try:
        return profiles[name]
    except KeyError:
        raise QueryError(f"unknown preset {name!r}; expected one of: {', '.join(profiles)}") from None


_PROFILE_FIELDS = frozenset(f.name for f in dataclasses.fields(RankingProfile)) - {"name", "priors"}
_PRIOR_FIELDS = frozenset(f.name for f in dataclasses.fields(RankingConfig))
OVERRIDABLE = _PROFILE_FIELDS | _PRIOR_FIELDS


def with_overrides(base: RankingProfile, overrides: Mapping[str, Any]) -> RankingProfile:
    """`base` with fields replaced by name: a `RankingProfile` field (`k`, `file_decay`, `weights`...) or
    one of its priors' (`pagerank_coef`, `label_factors`...). QueryError names an unknown field."""
    unknown = sorted(set(overrides) - OVERRIDABLE)
    if unknown:
        raise QueryError(f"no ranking setting named {', '.join(map(repr, unknown))}; "
                         f"expected one of: {', '.join(sorted(OVERRIDABLE))}")
    own = {name: value for name, value in overrides.items() if name in _PROFILE_FIELDS}
    prior = {name: value for name, value in overrides.items() if name in _PRIOR_FIELDS}
    if "weights" in own:
        own["weights"] = _frozen({**base.weights, **own["weights"]})
    for name in ("modalities", "expand_intents"):
        if name in own:
            own[name] = (tuple if name == "modalities" else frozenset)(own[name])
    if "file_card_intents" in prior:
        prior["file_card_intents"] = frozenset(prior["file_card_intents"])
    if "label_factors" in prior:
        prior["label_factors"] = MappingProxyType(dict(prior["label_factors"]))
    if prior:
        own["priors"] = dataclasses.replace(base.priors, **prior)
    return dataclasses.replace(base, **own) if own else base
