"""File cards: one small document per file, for questions whose answer is a whole module.

A question about a module's role ("how is the routing layer organised", "how the timer wheel tracks
deadlines") has its evidence spread over many chunks of one file; no single chunk may rank first,
while the file as a whole is the answer (issue 9). A file's card is what names it: the words of its
path (folders and stem, the stem twice) and of the definitions declared in it (names, split, and the
first line of each doc comment, as the store already holds them). Nothing is read from the files,
and nothing is written: the cards of a snapshot are built in memory once and kept on it (`file_cards_of`;
curl's 366 files in ~50 ms, a refresh that changed few files reuses the others' terms) and searched with BM25
(`FileCards.search`, stemmed terms as in the text index's body field, ~0.1 ms), the score x
(1 + `file_card_pagerank` x ln(1 + the PageRank of the file's most central chunk)): the file a
question about a subsystem means is more often its hub (`SqlMapper.cs`, `url.c`) than a small file
whose name repeats a query word.

The fused route (`retrievers.engine.fused_route`) turns the best-matching files (`file_card_top`, 3) into one
more list for weighted RRF (`card_hits`), leaving out a card scoring under `file_card_min_score` (7: a
weak match of a few common words) unless it is the first and scores `file_card_lead_ratio` (1.5) times
the second (`strong_cards`: on a small tree every card scores low); each file stands for its best chunk
among the other retrievers' candidates (`best_candidates`: by RRF x its own chunk priors, so a file's
module-level plumbing does not take the credit from its functions), or, when none of its chunks is a
candidate, its most central chunk (PageRank), so a file no chunk retriever surfaced can still be
answered. The list weighs
`RankingConfig.file_card_weight` (0.3) of the weights of the retrievers that ran, for the intents in
`file_card_intents` (questions, not identifier lookups).
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import numpy as np
import tantivy

from indexing.records import Chunk, Definition
from retrievers.base import FileCardDetail, Hit
from retrievers.chunk_ranks import ChunkPageRank
from retrievers.scope import EVERYWHERE, Scope
from retrievers.snapshot import Snapshot
from retrievers.sources.text import STOPWORDS

__all__ = ["FileCards", "best_candidates", "build_cards", "card_hits", "card_terms", "file_cards_of",
           "load_or_build", "query_terms", "strong_cards"]

_GENERIC_FOLDERS = frozenset({"", ".", "src", "lib", "source", "sources", "main", "pkg", "internal"})
_ANALYZER = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
             .filter(tantivy.Filter.remove_long(40))
             .filter(tantivy.Filter.lowercase())
             .filter(tantivy.Filter.stemmer("english"))
             .build())


# Words of identifiers and prose: acronyms before a capitalised word, capitalised or lowercase runs,
# other letters (digits, `_` and punctuation separate): `HTTPResponse_v2` -> HTTP, Response, v.
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[^\W\d_A-Za-z]+")


def _stems(text: str) -> list[str]:
    """Stemmed lowercase words of `text`, identifiers split first (`HandlerStack` -> handler, stack)."""
    return _ANALYZER.analyze(" ".join(_WORD.findall(text)))


def card_terms(path: str, definitions: Iterable[Definition]) -> list[str]:
    """The stemmed terms of a file's card: path folders, the stem twice, definition names and docs."""
    p = PurePosixPath(path)
    folders = [part for part in p.parent.parts if part.lower() not in _GENERIC_FOLDERS]
    stem = p.name.split(".")[0]
    words = [*folders, stem, stem]
    for d in definitions:
        words.append(d.name)
        if d.doc:
            words.append(d.doc)
    return _stems(" ".join(words))


def query_terms(text: str) -> list[str]:
    """Distinct stemmed content words of a query (stopwords dropped, unless nothing else is left)."""
    words = [w for w in text.split() if w.lower().strip("?.,;:!'\"()") not in STOPWORDS] or text.split()
    return list(dict.fromkeys(_stems(" ".join(words))))


@dataclass
class FileCards:
    """BM25 over the cards of one snapshot's files (k1 1.2, b 0.75)."""

    paths: list[str]  # in sorted order (build_cards): a file's index is its place in path order
    postings: dict[str, list[tuple[int, int]]]  # term -> [(file index, term frequency)]
    lengths: list[int]
    central: dict[str, float] = field(default_factory=dict)  # path -> its most central chunk's PageRank
    k1: float = 1.2
    b: float = 0.75
    _avg: float = field(init=False, default=1.0)
    # per `b` and per `centrality` value: each file's BM25 length norm and its centrality factor
    # (caches of arrays: left out of == as well, which arrays would make ambiguous)
    _norms: dict[float, np.ndarray] = field(init=False, default_factory=dict, repr=False, compare=False)
    _central_factors: dict[float, np.ndarray] = field(init=False, default_factory=dict, repr=False,
                                                      compare=False)
    _arrays: dict[str, tuple[np.ndarray, np.ndarray]] = field(init=False, default_factory=dict, repr=False,
                                                              compare=False)

    def __post_init__(self) -> None:
        self._avg = (sum(self.lengths) / len(self.lengths)) if self.lengths else 1.0
        self._avg = self._avg or 1.0

    def search(self, text: str, limit: int, scope: Scope = EVERYWHERE, b: float | None = None,
               centrality: float = 0.0) -> list[tuple[str, float]]:
        """(path, score) of the best-matching cards within `scope`, best first (ties: the path):
        BM25 (`b`: the length normalisation, the card set's own by default) x (1 + `centrality` x
        ln(1 + the file's `central` value)). Summed term by term over numpy arrays, as a loop over
        the postings would (a common word's posting lists most of a large tree's files: Django's
        1,005 cards 0.12 -> 0.05-0.07 ms a question)."""
        n = len(self.paths)
        b = self.b if b is None else b
        norms = self._norms.get(b)
        if norms is None:  # (per file: the same sum for every query)
            norms = self._norms[b] = np.asarray(
                [self.k1 * (1.0 - b + b * length / self._avg) for length in self.lengths], dtype=np.float64)
        gain = self.k1 + 1.0
        postings = [(term, posting) for term in query_terms(text) if (posting := self.postings.get(term))]
        found, values = self._sum_arrays(postings, n, norms, gain)
        if not len(found):
            return []
        if centrality and self.central:
            factors = self._central_factors.get(centrality)
            if factors is None:
                central = self.central
                factors = self._central_factors[centrality] = np.asarray(
                    [1.0 + centrality * math.log1p(central.get(path, 0.0)) for path in self.paths])
            values = values * factors[found]
        if scope.unrestricted and 0 < limit < len(found):  # only scores at least the limit-th can rank
            least = np.partition(values, len(values) - limit)[len(values) - limit]
            keep = values >= least
            found, values = found[keep], values[keep]
        order = np.lexsort((found, -values))  # (equal scores: by path, which is by index)
        paths = self.paths
        out = []
        for index, score in zip(found[order].tolist(), values[order].tolist(), strict=True):
            if scope.admits(paths[index]):
                out.append((paths[index], score))
                if len(out) >= limit:
                    break
        return out

    def _sum_arrays(self, postings: list[tuple[str, list[tuple[int, int]]]], n: int, norms: np.ndarray,
                    gain: float) -> tuple[np.ndarray, np.ndarray]:
        """(file indexes, BM25 sums) of the files the terms occur in, summed over arrays term by term."""
        scores = np.zeros(n, dtype=np.float64)  # (every term's contribution is > 0: found = nonzero)
        for term, posting in postings:
            idf = math.log(1.0 + (n - len(posting) + 0.5) / (len(posting) + 0.5))
            index, tf = self._posting_arrays(term, posting)
            scores[index] += idf * tf * gain / (tf + norms[index])  # (a file is listed once per term)
        found = np.flatnonzero(scores)
        return found, scores[found]

    def _posting_arrays(self, term: str, posting: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
        """A term's posting as (file indexes, term frequencies as floats), made on first use."""
        arrays = self._arrays.get(term)
        if arrays is None:
            arrays = self._arrays[term] = (np.asarray([i for i, _ in posting], dtype=np.int64),
                                           np.asarray([tf for _, tf in posting], dtype=np.float64))
        return arrays


CardCache = dict[str, tuple[tuple[tuple[str, str], ...], Counter[str]]]  # path -> (names and docs, terms)


def build_cards(paths: Iterable[str], definitions: Iterable[Definition],
                previous: Mapping[str, tuple[tuple[tuple[str, str], ...], Counter[str]]] | None = None
                ) -> tuple[FileCards, CardCache]:
    """The cards of `paths` (every indexed file), filled with the definitions declared in each, and
    the term counts per file; a file whose names and docs are those of `previous` keeps its counts
    (a refresh after an edit re-reads only the edited files' cards)."""
    by_path: dict[str, list[Definition]] = {}
    for d in definitions:
        by_path.setdefault(d.path, []).append(d)
    ordered = sorted(set(paths))
    postings: dict[str, list[tuple[int, int]]] = {}
    lengths = []
    counts: CardCache = {}
    for index, path in enumerate(ordered):
        defs = sorted(by_path.get(path, ()), key=lambda d: (d.start_line, d.name))
        key = tuple((d.name, d.doc) for d in defs)
        held = (previous or {}).get(path)
        terms = held[1] if held is not None and held[0] == key else Counter(card_terms(path, defs))
        counts[path] = (key, terms)
        lengths.append(sum(terms.values()))
        for term, tf in terms.items():
            postings.setdefault(term, []).append((index, tf))
    return FileCards(ordered, postings, lengths), counts


_CARDS = (__name__, "file_cards")  # Snapshot.memo key: the snapshot's cards
_COUNTS = (__name__, "card_counts")  # Snapshot.hand_down key: the latest cards' term counts per file


def file_cards_of(snapshot: Snapshot) -> FileCards:
    """`build_cards` of a snapshot's files with each file's highest chunk PageRank (`central`), built
    once and kept on the snapshot; the build reuses the term counts the snapshot's predecessors handed
    down for files whose definitions did not change (a counted file's terms depend only on its path,
    names and docs, so any snapshot's counts are safe to reuse)."""
    return snapshot.memo(_CARDS, lambda: _build(snapshot)[0])


def _build(snapshot: Snapshot) -> tuple[FileCards, CardCache]:
    previous = snapshot.handed_down(_COUNTS)
    cards, counts = build_cards(snapshot.by_path, snapshot.definitions.values(), previous)
    cards.central = central_ranks(snapshot)
    snapshot.hand_down(_COUNTS, counts)
    return cards, counts


def central_ranks(snapshot: Snapshot) -> dict[str, float]:
    """Per file, the highest PageRank of its chunks (`Snapshot.chunk_ranks_in`: its named definition's,
    else the most central one declared in it), files whose best is not above 0 left out: worked out
    file by file, each file's definitions keyed once, not chunk by chunk through `snapshot.pagerank`
    (the Django sdist's 45,000 chunks ~0.15 s of every server refresh); each chunk's rank is handed to
    `snapshot.pagerank` on the way, so the first searches on the snapshot do not work them out again."""
    central: dict[str, float] = {}
    known: dict[int, float | None] = {}
    if not isinstance(snapshot.pagerank, ChunkPageRank):  # ranks given as they are (tests): chunk by chunk
        for chunk_id, value in snapshot.pagerank.items():
            chunk = snapshot.chunks.get(chunk_id)
            if chunk is not None and value > central.get(chunk.path, 0.0):
                central[chunk.path] = value
        return central
    for path in snapshot.by_path:
        in_file = snapshot.chunk_ranks_in(path)
        known.update(in_file)
        best = max((r for r in in_file.values() if r is not None), default=0.0)
        if best > 0.0:
            central[path] = best
    snapshot.pagerank.learn(known)  # (every chunk's rank is worked out here: no search works it out)
    return central


def load_or_build(snapshot: Snapshot, cache: Any, key: str) -> FileCards:
    """The cards of a snapshot saved for this index revision (`cache`: an `indexing.persist.SignedCache`,
    `key`: the engine's derived key), else built now and saved: a warm process then answers its first
    question without building them (~0.25 s on Django). The term counts per file are saved apart and
    read only when a later snapshot builds its cards from them (a refresh after an edit): a one-shot
    search never needs them (2.6 of the 3.5 MB the Django sdist's cards took)."""
    from indexing.persist import code_fingerprint

    key = f"{key}:{code_fingerprint(sys.modules[__name__])}"

    def load() -> FileCards:
        saved = cache.load("filecards", key) if cache.holds(_SAVED_COUNTS, key) else None
        if isinstance(saved, FileCards):
            snapshot.hand_down(_COUNTS, _SavedCounts(lambda: cache.load(_SAVED_COUNTS, key)))
            return saved
        cards, counts = _build(snapshot)
        if cache.save(_SAVED_COUNTS, key, counts):  # first: saved cards find their counts
            cache.save("filecards", key, cards)
        return cards
    return snapshot.memo(_CARDS, load)


_SAVED_COUNTS = "filecard-counts"


class _SavedCounts(Mapping[str, tuple[tuple[tuple[str, str], ...], Counter[str]]]):
    """Saved term counts (a `CardCache`), read on first use; empty when they are gone or unreadable
    (every card is then counted again)."""

    def __init__(self, load: Callable[[], object]) -> None:
        self._load: Callable[[], object] | None = load
        self._counts: CardCache = {}

    def _held(self) -> CardCache:
        if self._load is not None:
            counts, self._load = self._load(), None
            self._counts = counts if isinstance(counts, dict) else {}
        return self._counts

    def __getitem__(self, path: str) -> tuple[tuple[tuple[str, str], ...], Counter[str]]:
        return self._held()[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._held())

    def __len__(self) -> int:
        return len(self._held())


def card_hits(
    files: Sequence[tuple[str, float]],
    best_candidate: Mapping[str, int],
    by_path: Mapping[str, Sequence[Chunk]],
    pagerank: Callable[[int], float],
) -> list[Hit]:
    """The ranked files as chunk hits: each file's best candidate chunk (`best_candidate`, by path),
    else its most central chunk (highest PageRank, then the first)."""
    hits = []
    for path, score in files:
        chunk_id = best_candidate.get(path)
        if chunk_id is None:
            chunks = by_path.get(path) or ()
            if not chunks:
                continue
            chunk_id = max(chunks, key=lambda c: (pagerank(c.id), -c.start_line)).id
        hits.append(Hit(chunk_id, score, FileCardDetail(path)))
    return hits


def strong_cards(cards: Sequence[tuple[str, float]], min_score: float,
                 lead_ratio: float) -> list[tuple[str, float]]:
    """The cards (best first) that count as evidence: those scoring `min_score` or more, and the first
    one when it scores `lead_ratio` times the second (or is alone), however low: BM25 scores grow with
    the number of files, so on a small tree a card that stands out is still the file the question means,
    while cards close together there are a few common words each."""
    kept = [(path, score) for path, score in cards if score >= min_score]
    if cards and not kept and lead_ratio > 0:
        first = cards[0][1]
        if first > 0 and (len(cards) == 1 or first >= lead_ratio * cards[1][1]):
            kept = [cards[0]]
    return kept


def best_candidates(scored: Iterable[tuple[int, float]], chunks: Mapping[int, Chunk],
                    prior: Callable[[Chunk, int], float] | None = None,
                    paths: Collection[str] | None = None) -> dict[str, int]:
    """Each file's best candidate chunk, the one a card's credit goes to: the highest score of `scored`
    (chunk id, RRF score; in any order), times `prior(chunk, chunk id)` when given (a file's
    module-level plumbing does not take the credit from its functions on the strength of a long list
    of imports), ties to the higher RRF score, then the smaller id; for the files in `paths` only,
    when given (the others are never ranked)."""
    best: dict[str, tuple[float, float, int]] = {}
    for chunk_id, rrf in scored:
        chunk = chunks.get(chunk_id)
        if chunk is None or (paths is not None and chunk.path not in paths):
            continue
        score = rrf * prior(chunk, chunk_id) if prior is not None else rrf
        held = best.get(chunk.path)
        if held is None or (score, rrf, -chunk_id) > (held[0], held[1], -held[2]):
            best[chunk.path] = (score, rrf, chunk_id)
    return {path: chunk_id for path, (_, _, chunk_id) in best.items()}
