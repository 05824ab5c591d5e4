"""File cards (retrievers.sources.filecards): card terms, BM25 over cards, file vectors, and the card list."""

from __future__ import annotations

import dataclasses
import math
import random
from pathlib import Path

import pytest

from graph.callgraph import build_call_graph
from indexing.records import Chunk, Definition
from retrievers.base import QueryError
from retrievers.engine.fused_route import _card_prior
from retrievers.engine.request import SearchRequest
from retrievers.engine.search_engine import EngineOptions
from retrievers.ranking.priors import chunk_prior
from retrievers.ranking.profile import DEFAULT_CONFIG, RankingConfig
from retrievers.scope import Scope
from retrievers.snapshot import Snapshot
from retrievers.sources import filecards
from retrievers.sources.filecards import (
    FileCards,
    best_candidates,
    build_cards,
    card_hits,
    card_terms,
    file_cards_of,
    query_terms,
    strong_cards,
)
from tests.unit.engine_sample import copy_sample, opened


def definition(name: str, path: str, doc: str = "", line: int = 1) -> Definition:
    return Definition(name=name, qualified_name=name, kind="function", path=path, start_line=line,
                      end_line=line + 3, start_byte=0, end_byte=10, name_line=line, name_column=4,
                      signature=f"def {name}():", doc=doc)


def chunk(cid: int, path: str, line: int = 1) -> Chunk:
    return Chunk(path=path, language="python", start_line=line, end_line=line + 3, start_byte=0, end_byte=10,
                 kind="function", symbol=None, labels=("source",), content_hash=f"h{cid}", id=cid)


DEFS = [
    definition("ConnectionExists", "lib/url.c", "Find a connection that can be reused"),
    definition("url_match_conn", "lib/url.c", line=40),
    definition("Curl_connect", "lib/url.c", line=80),
    definition("Curl_resolv", "lib/hostip.c", "Resolve a host name"),
    definition("parse_args", "src/tool/args.c"),
]
PATHS = ["lib/url.c", "lib/hostip.c", "src/tool/args.c", "docs/README.md"]


def test_card_terms_are_path_words_names_and_docs_stemmed() -> None:
    terms = card_terms("lib/url.c", DEFS[:3])
    assert terms.count("url") >= 3  # the stem twice and the split name url_match_conn
    assert {"connect", "exist", "match", "conn", "reus", "find"} <= set(terms)
    assert "lib" not in terms  # generic folder names say nothing about a file
    assert card_terms("src/tool/args.c", []) == ["tool", "arg", "arg"]


def test_query_terms_drop_stopwords_and_stem() -> None:
    assert query_terms("how are connections reused?") == ["connect", "reus"]
    assert query_terms("how") == ["how"]  # nothing else left: the stopword stays


def test_search_ranks_the_file_whose_card_matches() -> None:
    cards, _ = build_cards(PATHS, DEFS)
    found = cards.search("how an existing connection is reused", 10)
    assert found[0][0] == "lib/url.c"
    assert [p for p, _ in cards.search("resolve the host name", 10)][0] == "lib/hostip.c"
    assert cards.search("zebra giraffe", 10) == []
    assert cards.search("connection", 10, Scope.build(exclude=("lib/url.c",))) == []


def test_length_normalisation_is_a_parameter() -> None:
    long_defs = [definition(f"reuse_{i}", "big.c", line=i * 10) for i in range(30)]
    long_defs += [definition(f"other_{i}", "big.c", line=400 + i * 10) for i in range(60)]
    cards, _ = build_cards(["big.c", "small_reuse.c"], [*long_defs, definition("thing", "small_reuse.c")])
    assert cards.search("reuse", 5, b=1.0)[0][0] == "small_reuse.c"
    assert cards.search("reuse", 5, b=0.0)[0][0] == "big.c"


def test_cards_are_built_once_per_snapshot() -> None:
    chunks = [chunk(1, "lib/url.c"), chunk(2, "lib/hostip.c")]
    snap = Snapshot.build(chunks, [DEFS[0], DEFS[3]], None, 2)
    assert file_cards_of(snap) is file_cards_of(snap)
    assert file_cards_of(snap).paths == ["lib/hostip.c", "lib/url.c"]
    other = Snapshot.build(chunks, [], None, 2)
    first, second = file_cards_of(snap), file_cards_of(other)
    assert second is not first
    assert file_cards_of(snap) is first  # two roots served in turn: each keeps its cards


def test_a_refreshed_snapshot_starts_from_the_counts_its_predecessor_handed_down(
        monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = [chunk(1, "lib/url.c"), chunk(2, "lib/hostip.c")]
    old = Snapshot.build(chunks, [DEFS[0], DEFS[3]], None, 2)
    file_cards_of(old)
    seeds: list[object] = []
    real = filecards.build_cards
    monkeypatch.setattr(filecards, "build_cards", lambda *args: seeds.append(args[2]) or real(*args))
    new = Snapshot.build(chunks, [DEFS[0], definition("Curl_resolv", "lib/hostip.c", "Look a host up")],
                         None, 2, previous=old)
    assert file_cards_of(new) is not file_cards_of(old) and len(seeds) == 1
    held, fresh = seeds[0], new.handed_down(filecards._COUNTS)
    assert isinstance(held, dict) and held is old.handed_down(filecards._COUNTS)
    assert fresh["lib/url.c"][1] is held["lib/url.c"][1]  # unchanged: counted once
    assert fresh["lib/hostip.c"][1] is not held["lib/hostip.c"][1]  # its doc changed
    assert file_cards_of(Snapshot.build(chunks, [], None, 2)) is not None and len(seeds) == 2
    assert seeds[1] is None  # a snapshot of its own (another root) has nothing handed down


def test_a_rebuild_reuses_the_counts_of_unchanged_files() -> None:
    cards, counts = build_cards(PATHS, DEFS)
    edited = [*DEFS[:4], definition("parse_options", "src/tool/args.c")]
    again, counts2 = build_cards(PATHS, edited, counts)
    assert counts2["lib/url.c"][1] is counts["lib/url.c"][1]  # unchanged: the same counts object
    assert counts2["src/tool/args.c"][1] is not counts["src/tool/args.c"][1]
    assert "option" in counts2["src/tool/args.c"][1] and again.search("options", 5)[0][0] == "src/tool/args.c"
    assert again.lengths == [sum(counts2[p][1].values()) for p in again.paths]


def test_card_hits_take_the_best_candidate_else_the_most_central_chunk() -> None:
    by_path = {"a.py": [chunk(1, "a.py"), chunk(2, "a.py", 10)], "b.py": [chunk(3, "b.py")]}
    pagerank = {2: 3.0}.get
    hits = card_hits([("a.py", 2.0), ("b.py", 1.0), ("gone.py", 0.5)], {"b.py": 3}, by_path,
                     lambda cid: pagerank(cid, 0.0))
    assert [(h.chunk_id, h.score) for h in hits] == [(2, 2.0), (3, 1.0)]
    assert hits[0].detail.as_dict() == {"match": "file_card", "path": "a.py"}


def test_the_best_candidate_is_the_first_by_rrf_unless_chunk_priors_weigh_in() -> None:
    module = Chunk(path="lib/router/index.js", language="javascript", start_line=1, end_line=30,
                   start_byte=0, end_byte=10, kind="block", symbol=None, labels=("source",),
                   content_hash="m", id=1)
    merge = Chunk(path="lib/router/index.js", language="javascript", start_line=40, end_line=60,
                  start_byte=0, end_byte=10, kind="function", symbol="mergeParams", labels=("source",),
                  content_hash="f", id=2)
    chunks = {1: module, 2: merge, 3: chunk(3, "b.py"), 4: chunk(4, "b.py", 10)}
    ranked = [(1, 0.09), (3, 0.07), (2, 0.06), (4, 0.05), (99, 0.04)]  # best first; 99 is gone
    assert best_candidates(ranked, chunks) == {"lib/router/index.js": 1, "b.py": 3}
    assert best_candidates(ranked[::-1], chunks) == {"lib/router/index.js": 1, "b.py": 3}  # any order
    tied = [(4, 0.05), (3, 0.05), (1, 0.05)]  # equal scores: the smaller id, whatever the order
    assert best_candidates(tied, chunks) == {"b.py": 3, "lib/router/index.js": 1}
    assert best_candidates(ranked, chunks, paths={"b.py"}) == {"b.py": 3}
    # index.js's module code is re-export plumbing (x0.6): the function with 2/3 of its RRF takes it
    prior = lambda c, cid: chunk_prior(c, 0.0, frozenset(), DEFAULT_CONFIG)  # noqa: E731
    assert chunk_prior(module, 0.0, frozenset()) == DEFAULT_CONFIG.reexport_factor
    assert chunk_prior(merge, 0.0, frozenset()) == 1.0
    assert best_candidates(ranked, chunks, prior) == {"lib/router/index.js": 2, "b.py": 3}
    central = {4: 50.0}.get  # PageRank is a chunk prior too: b.py's far more central chunk takes it
    assert best_candidates(ranked, chunks, lambda c, cid: chunk_prior(c, central(cid, 0.0), frozenset()))[
        "b.py"] == 4


def test_the_card_priors_a_snapshot_keeps_match_working_them_out_for_each_setting() -> None:
    # `_card_prior` keeps each chunk's prior with the snapshot's ranks per setting: a later search with
    # other wanted labels or another config must not get the first one's values.
    chunks = [chunk(1, "src/app.py"), chunk(2, "src/app.py", 10),
              Chunk(path="tests/test_app.py", language="python", start_line=1, end_line=4, start_byte=0,
                    end_byte=10, kind="function", symbol="test_x", labels=("test",), content_hash="t", id=3),
              Chunk(path="pkg/__init__.py", language="python", start_line=1, end_line=4, start_byte=0,
                    end_byte=10, kind="module", symbol=None, labels=("source",), content_hash="m", id=4)]
    snap = Snapshot.build(chunks, [], None, 4)
    settings = [(frozenset(), DEFAULT_CONFIG), (frozenset({"test"}), DEFAULT_CONFIG),
                (frozenset(), RankingConfig(label_factors={"test": 0.9}, reexport_factor=0.5))]
    for _ in range(2):  # the second pass reads what the first kept
        for wanted, config in settings:
            prior = _card_prior(snap, wanted, config)
            for c in chunks:
                assert prior(c, c.id) == chunk_prior(c, snap.pagerank.get(c.id, 0.0), wanted, config)
    assert _card_prior(snap, frozenset(), DEFAULT_CONFIG)(chunks[3], 4) == DEFAULT_CONFIG.reexport_factor
    assert _card_prior(snap, frozenset({"test"}), DEFAULT_CONFIG)(chunks[2], 3) == 1.0


def test_the_card_settings_are_checked() -> None:
    assert DEFAULT_CONFIG.file_card_min_score > 0 and DEFAULT_CONFIG.file_card_chunk_priors
    with pytest.raises(QueryError, match="file_card_min_score"):
        RankingConfig(file_card_min_score=-1.0)


def test_centrality_lifts_the_file_with_the_more_central_chunk() -> None:
    cards, _ = build_cards(["a/router.c", "b/router.c"], [])
    assert [p for p, _ in cards.search("router", 5)] == ["a/router.c", "b/router.c"]  # a tie: by path
    cards.central = {"b/router.c": 4.0}
    assert [p for p, _ in cards.search("router", 5, centrality=0.4)][0] == "b/router.c"
    assert [p for p, _ in cards.search("router", 5, centrality=0.0)][0] == "a/router.c"


def test_the_snapshot_cards_know_each_files_most_central_chunk() -> None:
    chunks = [chunk(1, "lib/url.c"), chunk(2, "lib/url.c", 10), chunk(3, "lib/hostip.c")]
    snap = Snapshot.build(chunks, [DEFS[0], DEFS[3]], None, 2)
    snap.pagerank = {1: 0.5, 2: 2.0, 3: 1.0}
    assert file_cards_of(snap).central == {"lib/url.c": 2.0, "lib/hostip.c": 1.0}


def test_a_warm_engine_loads_the_cards_its_index_saved(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The first refresh of a revision builds the file cards and saves them beside the index; the next
    process on that revision loads them instead of building (real sample workspace, store, graph)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the signing key lives there
    root = copy_sample(tmp_path)
    saved = tmp_path / "index" / "derived" / "filecards.pickle"
    cards, counts = [], []
    for _ in range(2):
        with opened(root, tmp_path / "index") as (_, engine):
            engine.refresh()
            assert saved.is_file()
            view = engine._view
            assert view is not None
            cards.append(file_cards_of(view[0]))
            counts.append(view[0].handed_down(filecards._COUNTS))
            counts[-1] = dict(counts[-1])  # (the loaded ones are read here, on first use)
    built, loaded = cards
    assert loaded is not built and loaded.paths == built.paths and loaded.postings == built.postings
    assert loaded.central == built.central and built.central
    assert counts[0] == counts[1] and counts[0]  # the term counts a later refresh starts from


def test_the_central_ranks_worked_out_per_file_are_those_of_the_chunks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`central_ranks` works file by file what the chunk-by-chunk ranks give (real sample workspace,
    store and graph), for a snapshot of the refresh's own definitions and for one of a saved table."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = copy_sample(tmp_path)
    for _ in range(2):  # (the second process reads the saved chunk and definition tables)
        with opened(root, tmp_path / "index") as (_, engine):
            engine.refresh()
            view = engine._view
            assert view is not None
            snap = view[0]
            assert snap.graph is not None
            rank = snap.graph.pagerank
            by_chunk: dict[str, float] = {}
            for chunk in snap.chunks.values():  # the rule written out chunk by chunk, through `named_in`
                named = snap.named_definition(chunk)
                inside = [rank[d.id] for d in snap.definitions_in(chunk.path)
                          if chunk.start_line <= d.name_line <= chunk.end_line and d.id in rank]
                value = rank.get(named.id) if named is not None else max(inside, default=None)
                assert snap.pagerank.get(chunk.id) == value == snap.chunk_pagerank(chunk)
                if value is not None and value > by_chunk.get(chunk.path, 0.0):
                    by_chunk[chunk.path] = value
            assert len(by_chunk) > 3 and filecards.central_ranks(snap) == by_chunk


def test_the_central_rank_of_a_named_chunk_is_its_definitions_and_of_a_block_its_best() -> None:
    """A chunk named after a class counts the class's rank, not a more central method's inside it; a
    chunk of several small definitions counts the best of them (or of a name no definition has)."""
    cls = Definition(name="Pool", qualified_name="Pool", kind="class", path="a.py", start_line=1, end_line=20,
                     start_byte=0, end_byte=400, name_line=1, name_column=6, signature="class Pool:", id=1)
    method = Definition(name="get", qualified_name="Pool.get", kind="method", path="a.py", start_line=5,
                        end_line=9, start_byte=80, end_byte=160, name_line=5, name_column=8,
                        signature="def get(self):", parent="Pool", id=2)
    small = [definition(name, "b.py", line=line) for name, line in (("x", 1), ("y", 6), ("z", 30))]
    small = [dataclasses.replace(d, id=3 + k) for k, d in enumerate(small)]
    graph = build_call_graph([cls, method, *small], [], [])
    graph._pagerank = {1: 1.0, 2: 3.0, 3: 0.5, 4: 2.0, 5: 9.0}
    named = Chunk(path="a.py", language="python", start_line=1, end_line=20, start_byte=0, end_byte=400,
                  kind="class", symbol="Pool", labels=("source",), content_hash="c1", id=10)
    block = Chunk(path="b.py", language="python", start_line=1, end_line=12, start_byte=0, end_byte=90,
                  kind="block", symbol="gone", labels=("source",), content_hash="c2", id=11)
    snap = Snapshot.build([named, block], [cls, method, *small], graph, 2)
    assert filecards.central_ranks(snap) == {"a.py": 1.0, "b.py": 2.0}
    assert (snap.pagerank.get(10), snap.pagerank.get(11)) == (1.0, 2.0)  # handed to the chunks' ranks


def _card_entries(tmp_path: Path, ranking: dict[str, object], question: str) -> list[dict[str, object]]:
    root = tmp_path / "ws"
    if not root.exists():
        copy_sample(tmp_path)
    options = EngineOptions(embeddings=False, ranking=dict(ranking))
    with opened(root, tmp_path / "index", options) as (_, engine):
        engine.refresh()
        answer = engine.search(SearchRequest(question, limit=10)).to_json()
    assert answer["intent"]["name"] == "understand_code"
    return [r["explain"]["file"] for r in answer["results"] if "file" in r["explain"]]


def test_a_card_below_the_minimum_score_is_not_listed(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Real sample workspace, store and engine: the card list of a question holds only the cards that
    score `file_card_min_score` or more."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    question = "how is the price of the items in the cart computed"
    listed = _card_entries(tmp_path, {"file_card_min_score": 0.0}, question)
    assert listed and all(isinstance(e, dict) and e["detail"]["match"] == "file_card" for e in listed)
    raws = sorted(float(e["raw"]) for e in listed)  # type: ignore[index, arg-type]
    cut = (raws[0] + raws[-1]) / 2 if raws[0] < raws[-1] else raws[0] + 1.0
    kept = _card_entries(tmp_path, {"file_card_min_score": cut}, question)
    assert sorted(float(e["raw"]) for e in kept) == [r for r in raws if r >= cut]  # type: ignore[index, arg-type]


def test_strong_cards_keep_strong_ones_or_a_first_that_stands_out() -> None:
    cards = [("a.py", 9.0), ("b.py", 7.5), ("c.py", 3.0)]
    assert strong_cards(cards, 7.0, 1.5) == [("a.py", 9.0), ("b.py", 7.5)]
    small_tree = [("payments.py", 6.3), ("checkout.py", 3.2), ("cart.py", 2.5)]  # all weak, one stands out
    assert strong_cards(small_tree, 7.0, 1.5) == [("payments.py", 6.3)]
    assert strong_cards(small_tree, 7.0, 0.0) == []  # the exception off
    close = [("utils.js", 5.6), ("response.js", 5.1), ("request.js", 4.8)]  # a few common words each
    assert strong_cards(close, 7.0, 1.5) == []
    assert strong_cards([("only.py", 2.0)], 7.0, 1.5) == [("only.py", 2.0)]
    assert strong_cards([], 7.0, 1.5) == []
    with pytest.raises(QueryError):
        RankingConfig(file_card_lead_ratio=-1.0)


def _loop_search(cards: FileCards, text: str, limit: int, b: float,
                 centrality: float) -> list[tuple[str, float]]:
    """BM25 over the postings in a plain loop, ranked by (-score, path): the definition the array sums
    must reproduce to the last bit."""
    n, gain = len(cards.paths), cards.k1 + 1.0
    avg = (sum(cards.lengths) / len(cards.lengths)) or 1.0
    norms = [cards.k1 * (1.0 - b + b * length / avg) for length in cards.lengths]
    scores: dict[int, float] = {}
    for term in query_terms(text):
        posting = cards.postings.get(term)
        if not posting:
            continue
        idf = math.log(1.0 + (n - len(posting) + 0.5) / (len(posting) + 0.5))
        for index, tf in posting:
            scores[index] = scores.get(index, 0.0) + idf * tf * gain / (tf + norms[index])
    if centrality and cards.central:
        scores = {i: s * (1.0 + centrality * math.log1p(cards.central.get(cards.paths[i], 0.0)))
                  for i, s in scores.items()}
    ranked = sorted(scores.items(), key=lambda item: (-item[1], cards.paths[item[0]]))
    return [(cards.paths[i], s) for i, s in ranked[:limit]]


def test_the_array_sums_are_the_loop_sums_bit_for_bit() -> None:
    rng = random.Random(11)
    words = ["conn", "reuse", "host", "name", "resolve", "parse", "arg", "url", "match", "cache", "pool"]
    paths = sorted({f"{rng.choice(['lib', 'src', 'net'])}/{rng.choice(words)}_{i % 7}.c" for i in range(60)})
    defs = [definition("_".join(rng.sample(words, rng.randint(1, 3))), rng.choice(paths),
                       " ".join(rng.sample(words, rng.randint(0, 4))), line=10 * i) for i in range(400)]
    cards, _ = build_cards(paths, defs)
    cards.central.update({path: rng.random() for path in paths[::3]})
    for text in ("reuse a pooled connection", "resolve host names", "parse the url args", "cache", "zebra"):
        for limit, b, centrality in ((3, 0.75, 0.0), (50, 0.3, 0.5), (1, 1.0, 2.0), (200, 0.0, 0.0)):
            assert cards.search(text, limit, b=b, centrality=centrality) == \
                _loop_search(cards, text, limit, b, centrality), (text, limit, b, centrality)
    fresh, _ = build_cards(paths, defs)
    fresh.central.update(cards.central)
    assert fresh == cards  # the arrays kept by the searches are caches, not part of the value
