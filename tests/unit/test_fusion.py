"""Fusion math: weighted RRF, PageRank boost, label demotions, definition/path/coherence bonuses, dedupe."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest

from indexing.records import Chunk
from retrievers.base import GraphDetail, Hit, QueryError, SemanticDetail, StructuralDetail
from retrievers.ranking.priors import (
    coherence_bonuses,
    definition_match,
    depth_factors,
    label_factor,
    pagerank_factor,
    path_depth,
    path_keyword_shares,
    stem_coverage,
    stem_words,
    wanted_labels,
)
from retrievers.ranking.profile import DEFAULT_CONFIG, RankingConfig
from retrievers.ranking.rrf import Fused, apply_priors, best_sums, dedupe_by_file, fuse, rrf, rrf_sums
from retrievers.scope import Scope
from retrievers.snapshot import Snapshot
from retrievers.sources.words import prefix_match, query_keywords, short_words


def chunk(cid: int, path: str, symbol: str | None = None, kind: str = "function",
          labels: tuple[str, ...] = ("source",)) -> Chunk:
    return Chunk(path=path, language="python", start_line=cid, end_line=cid + 5, start_byte=0, end_byte=10,
                 kind=kind, symbol=symbol, labels=labels, content_hash=f"h{cid}", id=cid)


def hits(*ids: int) -> list[Hit]:
    return [Hit(i, 1.0 / (n + 1)) for n, i in enumerate(ids)]


# --- RRF -------------------------------------------------------------------------------------------


def test_rrf_numbers_are_exact() -> None:
    fused = rrf({"semantic": hits(1, 2, 3), "text": hits(3, 1)}, {"semantic": 0.5, "text": 0.2}, k=40)
    score = {f.chunk_id: f.score for f in fused}
    assert score[1] == pytest.approx(0.5 / 41 + 0.2 / 42)
    assert score[2] == pytest.approx(0.5 / 42)
    assert score[3] == pytest.approx(0.5 / 43 + 0.2 / 41)
    assert [f.chunk_id for f in fused] == [1, 3, 2]
    first = fused[0].explain
    assert first["semantic"] == {"rank": 1, "weight": 0.5, "score": pytest.approx(0.5 / 41), "raw": 1.0}
    assert first["text"]["rank"] == 2


def test_rrf_k_changes_the_balance_between_top_and_consensus() -> None:
    # chunk 2 is second and third in two lists; chunks 1 and 3 each top one list
    ranked = {"semantic": hits(1, 2), "text": hits(3, 4, 2)}
    weights = {"semantic": 1.0, "text": 1.0}
    low = {f.chunk_id: f.score for f in rrf(ranked, weights, k=0)}
    assert low[2] == pytest.approx(1 / 2 + 1 / 3) and low[1] == pytest.approx(1.0)
    assert [f.chunk_id for f in rrf(ranked, weights, k=0)][:2] == [1, 3]
    assert [f.chunk_id for f in rrf(ranked, weights, k=60)][0] == 2


def test_rrf_repeated_chunks_keep_their_first_rank_and_are_counted() -> None:
    fused = rrf({"graph": [Hit(7, 1.0), Hit(7, 1.0), Hit(8, 0.5)]}, {"graph": 1.0}, k=40)
    by_id = {f.chunk_id: f for f in fused}
    assert by_id[7].explain["graph"]["count"] == 2
    assert by_id[8].explain["graph"]["rank"] == 2  # rank among distinct chunks
    assert by_id[8].score == pytest.approx(1.0 / 42)


def test_rrf_ignores_zero_weight_modalities_and_rejects_bad_numbers() -> None:
    fused = rrf({"semantic": hits(1), "text": hits(2)}, {"semantic": 0.0, "text": 0.9}, k=40)
    assert [f.chunk_id for f in fused] == [2]
    assert rrf({}, {}, 40) == []
    with pytest.raises(QueryError):
        rrf({"text": hits(1)}, {"text": -0.1}, 40)
    with pytest.raises(QueryError):
        rrf({"text": hits(1)}, {"text": math.nan}, 40)
    with pytest.raises(QueryError):
        rrf({"text": hits(1)}, {"text": 1.0}, -1)


def rrf_scores(ranked: dict[str, list[Hit]], weights: dict[str, float], k: int) -> list[tuple[int, float]]:
    return best_sums(rrf_sums(ranked, weights, k))


def test_ranked_sums_are_rrf_without_the_explain_records() -> None:
    ranked = {"semantic": hits(4, 2, 9, 2), "text": hits(9, 4, 7), "graph": hits(1), "structural": hits(3)}
    weights = {"semantic": 0.6, "text": 0.3, "structural": 0.2, "graph": 0.0}
    for k in (0, 10, 60):
        assert rrf_scores(ranked, weights, k) == [(f.chunk_id, f.score) for f in rrf(ranked, weights, k)]
        assert best_sums(rrf_sums(ranked, weights, k), 3) == rrf_scores(ranked, weights, k)[:3]
    with pytest.raises(QueryError):
        rrf_sums(ranked, {"text": -1.0}, 10)


def test_rrf_sums_continue_from_earlier_lists() -> None:
    first = {"structural": hits(3, 8), "text": hits(9, 4, 7, 3), "semantic": hits(4, 2, 9, 2)}
    later = {"graph": hits(7, 1, 3)}
    weights = {"semantic": 0.6, "text": 0.3, "structural": 0.2, "graph": 0.25}
    sums = rrf_sums(first, weights, 60)
    assert best_sums(rrf_sums(later, weights, 60, start=sums)) == rrf_scores({**first, **later}, weights, 60)
    assert best_sums(sums, 2) == rrf_scores(first, weights, 60)[:2]


def test_the_first_sums_break_ties_at_the_cut_by_the_smaller_id() -> None:
    sums = {5: 0.1, 4: 0.3, 1: 0.5, 3: 0.3, 2: 0.3}
    ordered = [(1, 0.5), (2, 0.3), (3, 0.3), (4, 0.3), (5, 0.1)]
    assert best_sums(sums) == ordered
    for top in range(7):
        assert best_sums(sums, top) == ordered[:top]
    assert best_sums(sums, -1) == []


def structural(match: str, name: str) -> StructuralDetail:
    """A structural hit's detail: a definition named `name` that matched the query as `match`."""
    return StructuralDetail(7, match, name, "class", "pkg/module.py", 1)


def test_rrf_detail_is_carried_into_explain() -> None:
    impact = GraphDetail("impact", "pkg/a.py", 3, depth=2)
    fused = rrf({"graph": [Hit(4, 1.0, impact)]}, {"graph": 0.7}, 40)
    assert fused[0].explain["graph"]["detail"] == impact


def test_the_explain_record_is_written_when_first_read_with_the_keys_in_order() -> None:
    # rrf and apply_priors keep their terms pending: a record is built only for a candidate someone
    # reads (the results kept), with the keys and values of writing it at once.
    chunks = {1: chunk(1, "pkg/sessions.py", "send"), 2: chunk(2, "tests/test_sessions.py", labels=("test",))}
    ranked = {"structural": [Hit(1, 9.0, structural("exact", "send"))],
              "semantic": [Hit(2, 0.8, SemanticDetail(0.8)), Hit(1, 0.7), Hit(2, 0.6)]}
    out = fuse(ranked, {"structural": 1.0, "semantic": 0.5}, 40, chunks=chunks, symbol="send",
               query_text="send a request")
    first, second = out
    assert first.chunk_id == 1 and first.entries is not None and first.priors is not None
    assert first.detail_of("structural") == structural("exact", "send")
    assert first.detail_of("semantic") is None  # a hit without detail
    assert first.entries is not None  # (reading a detail builds nothing)
    record = first.explain
    assert first.entries is None and first.priors is None
    assert list(record) == ["structural", "semantic", "rrf", "bonus", "factors", "boost", "labels"]
    assert record["structural"] == {"rank": 1, "weight": 1.0, "score": 1.0 / 41, "raw": 9.0,
                                    "detail": structural("exact", "send")}
    assert record["rrf"] == 1.0 / 41 + 0.5 / 42 and record["labels"] == ["source"]
    assert first.explain is record  # written once
    assert second.explain["semantic"] == {"rank": 1, "weight": 0.5, "score": 0.5 / 41, "raw": 0.8,
                                          "detail": SemanticDetail(0.8), "count": 2}
    assert second.explain["demoted_as"] == "test" and second.explain["factors"]["label"] < 1.0
    assert second.detail_of("semantic") == SemanticDetail(0.8)  # read from the written record too


# --- named factors ---------------------------------------------------------------------------------


def test_pagerank_factor_formula_and_cap() -> None:
    assert pagerank_factor(0.0) == 1.0
    assert pagerank_factor(1.0) == pytest.approx(1 + 0.3 * math.log(2))
    assert pagerank_factor(3.0) == pytest.approx(1 + 0.3 * math.log(4))
    assert pagerank_factor(4.5) == 1.5 and pagerank_factor(1e9) == 1.5  # cap reached at c = e^(5/3)-1
    assert pagerank_factor(math.nan) == 1.0 and pagerank_factor(-2.0) == 1.0
    assert pagerank_factor(1e9, RankingConfig(pagerank_cap=2.0)) == 2.0


def test_label_factor_takes_the_strongest_unwanted_demotion() -> None:
    assert label_factor(("source",), ()) == (1.0, None)
    assert label_factor(("test",), ()) == (0.3, "test")
    assert label_factor(("doc",), ()) == (0.4, "doc")
    assert label_factor(("test", "vendor"), ()) == (0.15, "vendor")
    assert label_factor(("generated",), ()) == (0.1, "generated")
    assert label_factor(("test",), {"test"}) == (1.0, None)
    assert label_factor(("test", "doc"), {"test"}) == (0.4, "doc")


def test_wanted_labels_from_query_words_and_include_globs() -> None:
    assert wanted_labels("how is retry tested") == {"test"}
    assert wanted_labels("tests for the pool") == {"test"}
    assert wanted_labels("where do the docs explain proxies") == {"doc"}
    assert wanted_labels("example of a custom adapter") == {"example"}
    assert wanted_labels("how does the pool work") == frozenset()
    assert wanted_labels("the deprecated json encoder") == {"legacy"}
    assert wanted_labels("py2 compat shims") == {"legacy"}
    assert wanted_labels("pool", Scope.build(include=["tests/**"])) == {"test"}
    assert wanted_labels("pool", Scope.build(include=["docs/*.md"])) == {"doc"}


def test_prefix_match_and_keywords() -> None:
    assert prefix_match("dependency", "dependencies")
    assert prefix_match("session", "sessions") and prefix_match("auth", "authentication")
    assert prefix_match("proxy", "proxies")
    assert not prefix_match("cookie", "connection")
    assert prefix_match("db", "db") and not prefix_match("db", "dbs") and not prefix_match("g", "go")
    assert query_keywords("How does the SessionRedirectMixin strip auth?") == [
        "session", "redirect", "mixin", "strip", "auth"]
    assert query_keywords("g") == ["g"] and query_keywords("db") == ["db"]  # one short word alone
    assert query_keywords("the db") == [] and query_keywords("how") == []


def test_definition_match() -> None:
    c = chunk(1, "src/pkg/sessions.py", "Session.send", "method")
    assert definition_match(c, "send") == "full"
    assert definition_match(c, "Session.send") == "full"
    assert definition_match(c, "Adapter.send") == "partial"
    assert definition_match(c, "sen") is None
    session = chunk(2, "src/pkg/sessions.py", "Session", "class")
    assert definition_match(session, "sessions.Session") == "full"
    assert definition_match(session, "models.Session") == "partial"
    assert definition_match(chunk(3, "src/pkg/a.py", "send", "block"), "send") is None  # not a definition


def test_path_keyword_shares_ignore_words_matching_most_files() -> None:
    paths = ["pkg/cookies.py", "pkg/sessions.py", "pkg/adapters.py", "pkg/utils.py", "pkg/auth.py"]
    shares = path_keyword_shares(["cookie", "session"], paths)
    assert shares == {"pkg/cookies.py": 0.5, "pkg/sessions.py": 0.5}
    # "pkg" names every file's folder: no signal, not counted (but still in the denominator)
    shares = path_keyword_shares(["pkg", "cookie"], paths)
    assert shares == {"pkg/cookies.py": 0.5}
    # with few candidate files the share rule is not applied (stem coverage off: the folder counts alone)
    plain = RankingConfig(path_stem_coverage=0.0)
    assert path_keyword_shares(["pkg"], paths[:2], plain) == {"pkg/cookies.py": 1.0, "pkg/sessions.py": 1.0}


def test_stem_coverage_counts_the_stem_words_a_question_names() -> None:
    keywords = ["syslog", "handler", "logging"]
    assert stem_coverage("src/Handler/SyslogHandler.php", keywords) == 1.0
    assert stem_coverage("src/Handler/AbstractSyslogHandler.php", keywords) == pytest.approx(2 / 3)
    assert stem_coverage("src/Handler/StreamHandler.php", keywords) == 0.5
    assert stem_coverage("src/Handler/Op.kt", keywords) == 0.0
    assert stem_coverage("pkg/g.py", ["g"]) == 1.0  # a stem of short words keeps them (a query `g`)
    assert stem_coverage("lib/syslog/index.js", keywords) == 1.0  # a module file is named by its folder
    assert stem_words("lib/types/config.d.ts") == ("config",)


def test_path_keyword_shares_scaled_by_stem_coverage() -> None:
    paths = ["h/SyslogHandler.php", "h/AbstractSyslogHandler.php", "syslog/udp.php", "x/a.php", "x/b.php",
             "x/c.php", "x/d.php"]
    plain = path_keyword_shares(["syslog", "handler"], paths, RankingConfig(path_stem_coverage=0.0))
    assert plain == {"h/SyslogHandler.php": 1.0, "h/AbstractSyslogHandler.php": 1.0, "syslog/udp.php": 0.5}
    full = dataclasses.replace(DEFAULT_CONFIG, path_stem_coverage=1.0)
    shares = path_keyword_shares(["syslog", "handler"], paths, full)
    # the file the question names whole keeps its share; a longer name keeps 2/3 of it; a folder-only
    # match (stem "udp" not named) keeps none of it
    assert shares == pytest.approx({"h/SyslogHandler.php": 1.0, "h/AbstractSyslogHandler.php": 2 / 3,
                                    "syslog/udp.php": 0.0})
    half = dataclasses.replace(DEFAULT_CONFIG, path_stem_coverage=0.5)
    assert path_keyword_shares(["syslog", "handler"], paths, half)["syslog/udp.php"] == pytest.approx(0.25)


def test_short_query_words_count_only_when_they_name_a_file() -> None:
    assert short_words("vi mock and spy utilities for io") == ["vi", "io"]
    paths = ["integrations/vi.ts", "moduleRunner/moduleMocker.ts", "utils/timers.ts"]
    plain = RankingConfig(path_stem_coverage=0.0)  # the shares alone (stem coverage: its own test)
    # `vi` names vi.ts: one keyword more, so moduleMocker's share drops from 1/2 to 1/3
    assert path_keyword_shares(["mock", "spy"], paths, plain, short_words=["vi", "io"]) == pytest.approx(
        {"integrations/vi.ts": 1 / 3, "moduleRunner/moduleMocker.ts": 1 / 3})
    # `io` names no candidate: the shares are those of the keywords alone
    alone = path_keyword_shares(["mock", "spy"], paths, plain, short_words=["io"])
    assert alone == {"moduleRunner/moduleMocker.ts": 0.5}
    assert path_keyword_shares([], paths, plain, short_words=["vi"]) == {"integrations/vi.ts": 1.0}
    # with stem coverage, vi.ts is named whole; "mock" names half of moduleMocker's stem
    assert path_keyword_shares(["mock", "spy"], paths, short_words=["vi"]) == pytest.approx(
        {"integrations/vi.ts": 1 / 3, "moduleRunner/moduleMocker.ts": 1 / 6})


def test_coherence_bonuses() -> None:
    bonus = coherence_bonuses([(1, "a.py", 0.02), (2, "a.py", 0.01), (3, "b.py", 0.01), (4, "b.py", 0.005),
                               (5, "c.py", 0.03)])
    assert bonus == {1: pytest.approx(0.2), 3: pytest.approx(0.2 * 0.015 / 0.03)}


def test_path_depth_counts_a_module_file_at_its_folder() -> None:
    assert path_depth("setup.py") == 0
    assert path_depth("src/http/client/request.py") == 3
    assert path_depth("pkg/__init__.py") == 0
    assert path_depth("lib/router/index.js") == 1
    assert path_depth("src/task/mod.rs") == 1
    assert path_depth("lua/mini/comment/init.lua") == 2
    assert path_depth("types/index.d.ts") == 0
    assert path_depth("index.ts") == 0  # a module file at the root stays at the root
    assert path_depth("model2vec/persistence/persistence.py") == 1  # named like its folder
    assert path_depth("Sources/Vapor/Request/Request.swift") == 2
    assert path_depth("Sources/Vapor/Request/Request+Body.swift") == 3


def test_depth_factors_are_relative_to_the_shallowest_candidate() -> None:
    paths = {"src/Http/Request.php", "src/Http/Client/Request.php", "src/Http/Client/Pool/Conn.php",
             "src/Log.php"}
    keep = 1.0 - DEFAULT_CONFIG.path_depth_penalty  # 0.92
    factors = depth_factors(paths)
    assert factors == pytest.approx({"src/Http/Request.php": keep, "src/Http/Client/Request.php": keep ** 2,
                                     "src/Http/Client/Pool/Conn.php": keep ** 3})
    assert depth_factors(paths, RankingConfig(path_depth_penalty=0.5))["src/Http/Request.php"] == 0.5
    assert depth_factors({"a/b/c.py", "a/b/d.py"}) == {}  # one level: nothing to tell apart
    assert depth_factors(paths, RankingConfig(path_depth_penalty=0.0)) == {}
    assert depth_factors(set()) == {}
    with pytest.raises(QueryError):
        RankingConfig(path_depth_penalty=1.0)


# --- apply_priors ----------------------------------------------------------------------------------


def test_apply_priors_pagerank_boost_and_test_demotion_exact() -> None:
    chunks = {1: chunk(1, "src/a.py", "alpha"),
              2: chunk(2, "tests/test_a.py", "test_alpha", labels=("test",))}
    fused = rrf({"semantic": hits(2, 1)}, {"semantic": 1.0}, k=0)  # 2 -> 1.0, 1 -> 0.5
    out = apply_priors(fused, chunks, {1: 3.0})
    by_id = {f.chunk_id: f for f in out}
    assert by_id[1].score == pytest.approx(0.5 * (1 + 0.3 * math.log(4)))
    assert by_id[2].score == pytest.approx(1.0 * 0.3)
    assert [f.chunk_id for f in out] == [1, 2]
    assert by_id[2].explain["factors"] == {"label": 0.3} and by_id[2].explain["demoted_as"] == "test"
    assert by_id[1].explain["boost"] == pytest.approx(1 + 0.3 * math.log(4))
    assert by_id[1].explain["rrf"] == pytest.approx(0.5)
    assert by_id[2].explain["labels"] == ["test"]
    # the query asks for tests: no demotion
    asked = {f.chunk_id: f.score for f in apply_priors(fused, chunks, {}, query_wants_tests=True)}
    assert asked[2] == pytest.approx(1.0)


def test_apply_priors_boost_is_capped_at_one_and_a_half() -> None:
    chunks = {1: chunk(1, "a.py", "f")}
    out = apply_priors(rrf({"text": hits(1)}, {"text": 1.0}, 0), chunks, {1: 500.0})
    assert out[0].score == pytest.approx(1.5)


def test_doc_vendor_and_generated_demotions() -> None:
    chunks = {1: chunk(1, "docs/guide.md", None, "section", ("doc",)),
              2: chunk(2, "vendor/x.py", "x", labels=("vendor",)),
              3: chunk(3, "api/x_pb2.py", "X", labels=("generated",)),
              4: chunk(4, "src/x.py", "y")}
    fused = [Fused(i, 1.0) for i in (1, 2, 3, 4)]
    score = {f.chunk_id: f.score for f in apply_priors(fused, chunks, {})}
    assert score == pytest.approx({1: 0.4, 2: 0.15, 3: 0.1, 4: 1.0})
    wanted = {f.chunk_id: f.score for f in apply_priors(fused, chunks, {}, query_wants_docs=True)}
    assert wanted[1] == pytest.approx(1.0)


def test_definition_bonus_for_identifier_queries() -> None:
    chunks = {1: chunk(1, "src/caller.py", "uses_target"),
              2: chunk(2, "src/impl.py", "Mixin.target", "method")}
    fused = [Fused(1, 0.03), Fused(2, 0.01)]
    out = apply_priors(fused, chunks, {}, symbol="target", identifier_query=True)
    assert [f.chunk_id for f in out] == [2, 1]
    assert out[0].score == pytest.approx(0.01 + 3.0 * 0.03)
    assert out[0].explain["bonus"] == {"definition": 3.0}
    # embedded in a natural-language question: the smaller bonus
    nl = {f.chunk_id: f.score for f in apply_priors(fused, chunks, {}, symbol="target")}
    assert nl[2] == pytest.approx(0.01 + 1.0 * 0.03)


def test_definition_bonus_from_the_structural_match_of_a_merged_chunk() -> None:
    # small classes merged into one block chunk: no chunk symbol, but the definitions index found it there
    chunks = {1: chunk(1, "pkg/exceptions.py", None, "block"),
              2: chunk(2, "pkg/utils.py", "rewind", "function")}
    ranked = {"structural": [Hit(1, 100.0, structural("exact", "RewindError"))],
              "text": [Hit(2, 9.0), Hit(1, 5.0)]}
    fused = rrf(ranked, {"structural": 0.6, "text": 0.1}, 40)
    out = apply_priors(fused, chunks, {}, symbol="RewindError", identifier_query=True)
    assert out[0].chunk_id == 1 and out[0].explain["bonus"]["definition"] == 3.0
    folded_hit = Hit(1, 90.0, structural("exact_folded", "Rewinderror"))
    folded = rrf({"structural": [folded_hit]}, {"structural": 1.0}, 40)
    partial = apply_priors(folded, chunks, {}, symbol="rewinderror", identifier_query=True)
    assert partial[0].explain["bonus"]["definition"] == 1.0
    split = rrf({"structural": [Hit(1, 60.0, structural("split", "RewindHelper"))]}, {"structural": 1.0},
                40)
    plain = apply_priors(split, chunks, {}, symbol="Rewind", identifier_query=True)
    assert "definition" not in plain[0].explain["bonus"]


def test_embedded_symbol_folded_to_other_words_gets_no_definition_bonus() -> None:
    # "how pandoc converts a document to LaTeX": a helper `latex` matches only case-folded, and its words
    # (latex) are not the query's (la, te, x); `urlSession` for "URLSession" is the same words
    chunks = {1: chunk(1, "Citeproc/BibTeX.hs", "latex"), 2: chunk(2, "Core/Delegate.swift", None, "block")}
    ranked = {"structural": [Hit(1, 92.0, structural("exact_folded", "latex")),
                             Hit(2, 92.0, structural("exact_folded", "Delegate.urlSession"))]}
    fused = rrf({"structural": ranked["structural"][:1]}, {"structural": 1.0}, 10)
    latex = {f.chunk_id: f.explain["bonus"] for f in apply_priors(fused, chunks, {}, symbol="LaTeX")}
    assert "definition" not in latex[1]
    both = rrf(ranked, {"structural": 1.0}, 10)
    session = {f.chunk_id: f.explain["bonus"] for f in apply_priors(both, chunks, {}, symbol="URLSession")}
    assert session[2]["definition"] == 1.0
    # an identifier lookup keeps the partial bonus; the setting restores the old bonus for questions
    lookup = apply_priors(fused, chunks, {}, symbol="LaTeX", identifier_query=True)
    assert {f.chunk_id: f.explain["bonus"].get("definition") for f in lookup}[1] == 1.0
    old = RankingConfig(definition_bonus_embedded_folded=1.0)
    kept = apply_priors(fused, chunks, {}, symbol="LaTeX", config=old)
    assert {f.chunk_id: f.explain["bonus"].get("definition") for f in kept}[1] == 1.0


def test_path_keyword_bonus() -> None:
    chunks = {1: chunk(1, "src/retry.py", "backoff"), 2: chunk(2, "src/pool.py", "grow")}
    fused = [Fused(2, 0.02), Fused(1, 0.015)]
    out = apply_priors(fused, chunks, {}, query_text="how do retries use backoff")
    by_id = {f.chunk_id: f for f in out}
    # keywords: retries, backoff -> "retries" meets the file stem "retry" (named whole): share 1/2
    assert by_id[1].score == pytest.approx(0.015 + 0.02 * 0.5 * 1.25)
    assert by_id[1].explain["bonus"] == {"path_keyword": 0.625}
    assert out[0].chunk_id == 1


def test_a_deeper_file_scores_less_at_equal_evidence() -> None:
    chunks = {1: chunk(1, "src/Http/Client/Request.php", "Request.header"),
              2: chunk(2, "src/Http/Request.php", "Request.header")}
    fused = [Fused(1, 0.02), Fused(2, 0.019)]
    out = apply_priors(fused, chunks, {})
    by_id = {f.chunk_id: f for f in out}
    assert [f.chunk_id for f in out] == [2, 1]
    keep = 1.0 - DEFAULT_CONFIG.path_depth_penalty
    assert by_id[1].score == pytest.approx(0.02 * keep)
    assert by_id[1].explain["factors"] == {"depth": pytest.approx(keep)}
    assert "depth" not in by_id[2].explain["factors"]
    off = apply_priors(fused, chunks, {}, config=RankingConfig(path_depth_penalty=0.0))
    assert [f.chunk_id for f in off] == [1, 2]


def test_reexport_and_declaration_files_are_penalized() -> None:
    chunks = {1: chunk(1, "pkg/__init__.py", None, "block"),
              2: chunk(2, "app/__init__.py", "setup", "function"),
              3: chunk(3, "types/index.d.ts", "Foo", "class"),
              4: chunk(4, "lib/index.js", None, "block")}
    score = {f.chunk_id: f.score for f in apply_priors([Fused(i, 1.0) for i in chunks], chunks, {})}
    assert score == pytest.approx({1: 0.6, 2: 1.0, 3: 0.7, 4: 0.6})


def test_apply_priors_drops_unknown_chunks_and_handles_empty_input() -> None:
    assert apply_priors([Fused(99, 1.0)], {}, {}) == []
    assert apply_priors([], {}, {}) == []


def test_config_fields_change_the_ranking_without_code_edits() -> None:
    chunks = {1: chunk(1, "tests/test_a.py", "a", labels=("test",))}
    cfg = RankingConfig(label_factors={"test": 0.9})
    assert apply_priors([Fused(1, 1.0)], chunks, {}, config=cfg)[0].score == pytest.approx(0.9)



def test_a_snapshots_kept_chunk_priors_match_working_them_out_for_each_setting() -> None:
    # A snapshot's ranks keep each chunk's fixed priors per setting (wanted labels, private modules,
    # C headers, the config): a later search with another setting must not get the first one's.
    chunks = [chunk(1, "src/app.py", "start"), chunk(2, "tests/test_app.py", "test_start", labels=("test",)),
              chunk(3, "pkg/__init__.py", None, kind="module"), chunk(4, "pkg/_internal/impl.py", "start"),
              chunk(5, "types/index.d.ts", "start"), chunk(6, "lib/app.h", "start")]
    snap = Snapshot.build(chunks, [], None, 6)
    ranked = {"semantic": hits(1, 2, 3, 4, 5, 6), "text": hits(6, 4, 2)}
    weights = {"semantic": 0.6, "text": 0.4}
    question = "how does the app start"
    settings: list[dict[str, Any]] = [
        dict(query_text=question), dict(query_text=question, wanted=("test",)),
        dict(query_text="internal app start"), dict(query_text="start", identifier_query=True),
        dict(query_text=question, c_headers=frozenset({"lib/app.h"})),
        dict(query_text=question, config=RankingConfig(label_factors={"test": 0.9}))]

    def ranked_by(ranks: Any, setting: dict[str, Any]) -> list[tuple[int, float, dict[str, Any]]]:
        out = apply_priors(rrf(ranked, weights, 10), snap.chunks, ranks, **setting)
        return [(f.chunk_id, f.score, f.explain) for f in out]

    for _ in range(2):  # the second pass reads what the first kept
        for setting in settings:
            assert ranked_by(snap.pagerank, setting) == ranked_by({}, setting), setting
    demoted = {cid: {k: v for k, v in e["factors"].items() if k != "depth"}
               for cid, _, e in ranked_by(snap.pagerank, settings[0])}
    assert demoted[2] == {"label": 0.3} and demoted[3] == {"reexport": 0.6}
    assert demoted[4] == {"private": 0.85} and demoted[5] == {"declaration": 0.7}

# --- dedupe and the whole pipeline -----------------------------------------------------------------


def test_dedupe_by_file_folds_other_hits_under_the_best() -> None:
    results = [Fused(1, 0.9, path="a.py"), Fused(2, 0.8, path="b.py"), Fused(3, 0.7, path="a.py"),
               Fused(4, 0.6, path="c.py"), Fused(5, 0.5, path="a.py"), Fused(6, 0.4, path="b.py")]
    out = dedupe_by_file(results, limit=2)
    assert [(f.chunk_id, f.path) for f in out] == [(1, "a.py"), (2, "b.py")]
    assert out[0].also == [{"chunk_id": 3, "score": 0.7}, {"chunk_id": 5, "score": 0.5}]
    assert out[1].also == [{"chunk_id": 6, "score": 0.4}]
    assert results[0].also == []  # input untouched
    assert dedupe_by_file(results, 0) == []
    assert [f.chunk_id for f in dedupe_by_file([Fused(1, 1.0), Fused(2, 0.5)], 5)] == [1, 2]


def test_fuse_runs_rrf_then_priors() -> None:
    chunks = {1: chunk(1, "src/a.py", "a"), 2: chunk(2, "src/b.py", "b")}
    ranked = {"semantic": hits(1, 2), "structural": hits(2)}
    weights = {"semantic": 0.5, "structural": 0.2}
    plain = fuse(ranked, weights, 40)
    # chunk 2: 0.5/42 + 0.2/41 = 0.01678 beats chunk 1: 0.5/41 = 0.01220
    assert plain[0].path is None and [f.chunk_id for f in plain] == [2, 1]
    with_priors = fuse(ranked, weights, 40, chunks=chunks, pagerank_for_chunk={2: 1.0})
    by_id = {f.chunk_id: f.score for f in with_priors}
    assert by_id[2] == pytest.approx((0.5 / 42 + 0.2 / 41) * (1 + 0.3 * math.log(2)))
    assert by_id[1] == pytest.approx(0.5 / 41)


def test_legacy_code_is_demoted_unless_asked_for() -> None:
    assert RankingConfig().label_factors["legacy"] == 0.3
    assert label_factor(("source", "legacy"), frozenset()) == (0.3, "legacy")
    assert label_factor(("source", "legacy"), wanted_labels("deprecated validators")) == (1.0, None)
