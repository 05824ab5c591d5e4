"""Rescoring fused candidates with the ranking priors (`apply_priors`, step 2 of ranking.rrf's pipeline).

final = (rrf + top_rrf * (definition + path_keyword + coherence)) * pagerank * label * reexport
* declaration * private * copy * contract * depth. The steps, each a function: the candidates whose
chunk is known (`_known`), the definition bonuses (`_definition_bonuses`), the factors fixed per chunk
(`_chunk_static`, kept per ranking setting on the snapshot), the per-search terms (`_SearchPriors`)
folded into each score (`_rescore`), and last the path-keyword bonus, which ranks a file's chunks by
every other prior (`_add_path_bonus`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from indexing.records import Chunk
from retrievers.base import StructuralDetail
from retrievers.chunk_ranks import kept_per_chunk
from retrievers.ranking.candidate import BOOST, PATH_KEYWORD, Fused, best_first
from retrievers.ranking.contracts import contract_factors
from retrievers.ranking.copies import share_definition_bonus, tree_factors
from retrievers.ranking.priors import (
    PRIVATE_ASKING_WORDS,
    coherence_bonuses,
    declaration_factor,
    definition_bonus,
    depth_factors,
    label_factor,
    module_bonuses,
    pagerank_factor,
    path_keyword_shares,
    private_factor,
    reexport_factor,
)
from retrievers.ranking.profile import DEFAULT_CONFIG, RankingConfig
from retrievers.sources.tokenize import split_identifier
from retrievers.sources.words import query_keywords, short_words, split_words

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["FACTOR_NAMES", "PriorOptions", "PriorQuery", "apply_priors"]


# The multiplicative priors in the order `apply_priors` multiplies them (explain's `factors` keys).
FACTOR_NAMES = ("pagerank", "label", "reexport", "declaration", "private", "copy", "contract", "depth")


class PriorOptions(TypedDict, total=False):
    """What a search tells the priors beyond its candidates (the keywords of `apply_priors` and `fuse`;
    `PriorQuery` holds their defaults)."""

    wanted: Collection[str]
    symbol: str | None
    identifier_query: bool
    query_text: str
    config: RankingConfig
    copy_trees: Mapping[str, str] | None
    contracts: Collection[str]
    c_headers: Collection[str]
    root_parts: Sequence[str]


@dataclass(frozen=True, slots=True)
class PriorQuery:
    """A search's `PriorOptions`, defaults filled in: the labels it wants, the symbol it names (and
    whether it is an identifier lookup), its text, the ranking constants, and the snapshot's copy trees,
    contract files, C interface headers and the root's path parts."""

    wanted: Collection[str] = ()
    symbol: str | None = None
    identifier_query: bool = False
    query_text: str = ""
    config: RankingConfig = DEFAULT_CONFIG
    copy_trees: Mapping[str, str] | None = None
    contracts: Collection[str] = ()
    c_headers: Collection[str] = ()
    root_parts: Sequence[str] = ()


def apply_priors(fused: Sequence[Fused], chunks: Mapping[int, Chunk], pagerank_for_chunk: Mapping[int, float],
                 query_wants_tests: bool = False, query_wants_docs: bool = False, *, in_place: bool = False,
                 **options: Unpack[PriorOptions]) -> list[Fused]:
    """Rescore fused results with the ranking priors; best first. Chunks missing from `chunks` drop.
    `in_place` rescores the given objects instead of copies (`fuse`: they are its own).

    final = (rrf + top_rrf * (definition + path_keyword + coherence)) * pagerank * label * reexport
    * declaration * private * copy * contract * depth; same-named definitions share the definition bonus
    (retrievers.ranking.copies).
    explain gains `rrf`, `bonus` (non-zero additive terms, in top-score units), `factors`
    (multiplicative terms other than 1), `boost` (their product) and `labels`.
    """
    items, item_chunks = _known(fused, chunks, in_place)
    if not items:
        return []
    q = PriorQuery(**options)
    config, query_text, identifier_query = q.config, q.query_text, q.identifier_query
    want = set(q.wanted) | ({"test"} if query_wants_tests else set()) \
        | ({"doc"} if query_wants_docs else set())
    top = max(item.score for item in items)
    paths = {item.path for item in items if item.path}
    shares = path_keyword_shares(query_keywords(query_text, config.path_keyword_min_prefix), paths, config,
                                 short_words(query_text, config.path_keyword_min_prefix)
                                 if config.path_keyword_short else ())
    coherence = coherence_bonuses([(i.chunk_id, i.path, i.score) for i in items if i.path], config)
    depths = depth_factors(paths, config)
    definitions = _definition_bonuses(items, chunks, pagerank_for_chunk, q)
    words = split_words(query_text)
    candidates = [chunks[i.chunk_id] for i in items] if q.copy_trees or q.contracts else []
    copies = tree_factors(candidates, q.copy_trees or {}, query_text, config)
    contract = contract_factors(candidates, q.contracts, words, identifier_query, config)
    # a lookup of a private name, or a question about internals, wants the private modules too
    publics_only = not identifier_query and PRIVATE_ASKING_WORDS.isdisjoint(words)
    headers = () if identifier_query else q.c_headers  # an identifier lookup may want the header's struct
    statics = _StaticPriors(_chunk_statics(pagerank_for_chunk, config, want, publics_only, headers),
                            pagerank_for_chunk, config, want, publics_only, headers)
    search = _SearchPriors(top, definitions, coherence, copies, contract, depths)
    _rescore(items, item_chunks, search, statics)
    if shares and config.path_keyword_bonus:
        _add_path_bonus(items, shares, top, config.path_keyword_bonus, config.path_keyword_rest,
                        config.path_keyword_rest_max)
    return best_first(items)


def _known(fused: Sequence[Fused], chunks: Mapping[int, Chunk], in_place: bool
           ) -> tuple[list[Fused], list[Chunk]]:
    """The candidates whose chunk is known (copies unless `in_place`), each carrying its chunk's path,
    and those chunks (looked up once)."""
    items: list[Fused] = []
    item_chunks: list[Chunk] = []
    for f in fused:
        if (found := chunks.get(f.chunk_id)) is not None:
            if in_place:
                f.path = found.path
            else:
                f = Fused(f.chunk_id, f.score, dict(f.explain), found.path, list(f.also))
            items.append(f)
            item_chunks.append(found)
    return items, item_chunks


def _definition_bonuses(items: Sequence[Fused], chunks: Mapping[int, Chunk],
                        pagerank_for_chunk: Mapping[int, float], q: PriorQuery) -> dict[int, float]:
    """Each candidate's definition bonus for the queried symbol, shared among same-named definitions
    (and a dotted symbol's module files'); empty without a symbol (every bonus is 0 then)."""
    symbol, identifier_query, config = q.symbol, q.identifier_query, q.config
    if not symbol:
        return {}
    matched = {i.chunk_id: _structural_match(i, symbol) for i in items}
    definitions = share_definition_bonus(
        {i.chunk_id: definition_bonus(chunks[i.chunk_id], symbol, identifier_query, config,
                                      matched[i.chunk_id]) for i in items},
        chunks, lambda cid: pagerank_for_chunk.get(cid, 0.0), {i.chunk_id: i.score for i in items},
        config)
    if "." in symbol:
        definitions = module_bonuses(
            [(i.chunk_id, chunks[i.chunk_id], i.score, matched[i.chunk_id]) for i in items], symbol,
            definitions, identifier_query, config, q.root_parts)
    return definitions


@dataclass(slots=True)
class _SearchPriors:
    """The priors of one search that depend on its candidates: the top fused score (the unit of the
    additive bonuses), the bonuses per chunk id, the factors per chunk id (copy, contract) and per
    path (depth)."""

    top: float
    definitions: Mapping[int, float]
    coherence: Mapping[int, float]
    copies: Mapping[int, float]
    contracts: Mapping[int, float]
    depths: Mapping[str, float]


@dataclass(slots=True)
class _StaticPriors:
    """The priors fixed per chunk (`_chunk_static`), kept per setting (`_chunk_statics`), and what a
    chunk's missing answer is computed from."""

    kept: dict[int, Any]
    pagerank_for_chunk: Mapping[int, float]
    config: RankingConfig
    want: Collection[str]
    publics_only: bool
    headers: Collection[str]

    def of(self, chunk_id: int, chunk: Chunk) -> tuple[float, tuple[tuple[str, float], ...], str | None]:
        static = self.kept.get(chunk_id)
        if static is None:
            static = self.kept[chunk_id] = _chunk_static(chunk, self.pagerank_for_chunk, self.config,
                                                         self.want, self.publics_only, self.headers)
        return static  # type: ignore[no-any-return]


def _rescore(items: Sequence[Fused], item_chunks: Sequence[Chunk], search: _SearchPriors,
             statics: _StaticPriors) -> None:
    """Each candidate's score with its bonuses and factors, its terms kept pending (`Fused.priors`)."""
    top, definitions, coherence = search.top, search.definitions, search.coherence
    copies, contract, depths = search.copies, search.contracts, search.depths
    # (a few hundred candidates per search: their explain records are written when read)
    for item, chunk in zip(items, item_chunks, strict=True):
        chunk_id = item.chunk_id
        definition = definitions.get(chunk_id, 0.0) if definitions else 0.0
        coherent = coherence.get(chunk_id, 0.0)
        boost, pairs, demoted_by = statics.of(chunk_id, chunk)
        copy = copies.get(chunk_id, 1.0) if copies else 1.0
        if copy != 1.0:
            boost *= copy
        contracted = contract.get(chunk_id, 1.0) if contract else 1.0
        if contracted != 1.0:
            boost *= contracted
        depth = depths.get(chunk.path, 1.0)
        if depth != 1.0:
            boost *= depth
        base = item.score
        item.score = (base + top * (definition + coherent)) * boost
        item.priors = [base, definition, coherent, 0.0, pairs, copy, contracted, depth, boost, chunk.labels,
                       demoted_by]  # (fused.PriorTerms)


_STATIC_NAMES = FACTOR_NAMES[:5]  # the factors fixed per chunk (the others depend on the candidates)


def _chunk_statics(pagerank_for_chunk: Mapping[int, float], config: RankingConfig, want: Collection[str],
                   publics_only: bool, headers: Collection[str]) -> dict[int, Any]:
    """Where `_chunk_static`'s answers are kept: with a snapshot's ranks per setting they depend on
    (`chunk_ranks.kept_per_chunk`: its chunks and their labels never change)."""
    return kept_per_chunk(pagerank_for_chunk, (
        "static", config.pagerank_coef, config.pagerank_cap, tuple(config.label_factors.items()),
        config.reexport_factor, config.reexport_names, config.declaration_factor, config.c_header_factor,
        config.private_module_factor, frozenset(want), publics_only, frozenset(headers)))


def _chunk_static(chunk: Chunk, pagerank_for_chunk: Mapping[int, float], config: RankingConfig,
                  want: Collection[str], publics_only: bool, headers: Collection[str]
                  ) -> tuple[float, tuple[tuple[str, float], ...], str | None]:
    """A chunk's priors that the other candidates do not change: the product pagerank x label x
    reexport x declaration x private (in that order: `apply_priors` multiplies the rest on), those
    other than 1 as (name, value) pairs, and the label that demoted it."""
    path = chunk.path
    labels, demoted_by = label_factor(chunk.labels, want, config)
    terms = (pagerank_factor(pagerank_for_chunk.get(chunk.id, 0.0), config), labels,
             reexport_factor(path, chunk.kind, config), declaration_factor(path, config, headers),
             private_factor(path, config) if publics_only else 1.0)
    product = terms[0] * terms[1] * terms[2] * terms[3] * terms[4]
    return product, tuple((n, v) for n, v in zip(_STATIC_NAMES, terms, strict=True) if v != 1.0), demoted_by


def _add_path_bonus(items: Sequence[Fused], shares: Mapping[str, float], top: float, bonus: float,
                    rest: float, rest_max: float = math.inf) -> None:
    """The path-keyword bonus names a file: in full for its best chunk (by the score of every other
    prior), x `rest` and at most `rest_max` for its other chunks. A file named by much of the question
    stands for it through its best chunk, and its weaker chunks do not crowd out the best chunks of other
    files; one named by a word of a longer question keeps (about) the whole bonus on every chunk, as the
    answer may be any of them."""
    best: dict[str, Fused] = {}  # (every item carries its chunk's path: apply_priors set it)
    for item in items:
        path = item.path
        if path is not None and path in shares and (path not in best or (item.score, -item.chunk_id) >
                               (best[path].score, -best[path].chunk_id)):
            best[path] = item
    for item in items:
        path = item.path
        if path is None or path not in shares:
            continue
        value = bonus * shares[path]
        if best[path] is not item:
            value = min(value * rest, rest_max)
        if value:
            priors = item.priors
            assert priors is not None  # (pending: apply_priors has just set them and nothing read them)
            priors[PATH_KEYWORD] = value
            item.score += top * value * priors[BOOST]


def _structural_match(item: Fused, symbol: str | None = None) -> str | None:
    """The structural retriever's match kind for the item; `folded_apart` for a case-folded match whose
    words differ from the queried symbol's (`LaTeX` and `latex`), not just their case (`urlSession`)."""
    detail = item.detail_of("structural")
    if not isinstance(detail, StructuralDetail):
        return None
    match = detail.match
    if match == "exact_folded" and symbol:
        last = detail.name.replace("::", ".").split(".")[-1]
        if split_identifier(last) != split_identifier(symbol.replace("::", ".").split(".")[-1]):
            return "folded_apart"
    return match
