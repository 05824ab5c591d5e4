"""File-level priors in `apply_priors`: Python's private modules for questions, and the path-keyword
bonus given to a named file's best chunk in full and to its other chunks in part."""

from __future__ import annotations

import pytest

from indexing.records import Chunk
from retrievers.base import QueryError
from retrievers.ranking.priors import private_factor, private_module
from retrievers.ranking.profile import RankingConfig
from retrievers.ranking.rrf import Fused, apply_priors


def chunk(cid: int, path: str, symbol: str | None = None, kind: str = "function") -> Chunk:
    return Chunk(path=path, language="python", start_line=cid, end_line=cid + 5, start_byte=0, end_byte=10,
                 kind=kind, symbol=symbol, labels=("source",), content_hash=f"h{cid}", id=cid)


def test_private_module_is_a_python_file_or_package_named_with_one_underscore() -> None:
    assert private_module("pydantic/_internal/_validate_call.py")
    assert private_module("_internal/fields.py")  # a private package makes its modules private
    assert private_module("src/click/_termui_impl.py")
    assert private_module("stubs/_types.pyi")
    assert not private_module("pydantic/validate_call_decorator.py")
    assert not private_module("pkg/__init__.py")  # dunder names are not private
    assert not private_module("pkg/__main__.py")
    assert not private_module("app/views/_content.html.erb")  # another language's convention
    assert not private_module("lua/telescope/_extensions/init.lua")
    config = RankingConfig(private_module_factor=0.5)
    assert private_factor("_internal/_x.py", config) == 0.5
    assert private_factor("public.py", config) == 1.0


def test_questions_prefer_the_public_module_over_the_private_one_behind_it() -> None:
    chunks = {1: chunk(1, "_internal/_validate_call.py", "ValidateCallWrapper", "class"),
              2: chunk(2, "validate_call_decorator.py", "validate_call")}
    fused = [Fused(1, 1.0), Fused(2, 0.9)]
    question = "how to validate a function's arguments"
    config = RankingConfig(private_module_factor=0.85, path_keyword_bonus=0.0, path_depth_penalty=0.0)
    out = apply_priors(fused, chunks, {}, query_text=question, config=config)
    assert [f.chunk_id for f in out] == [2, 1]
    assert out[1].score == pytest.approx(0.85)
    assert out[1].explain["factors"] == {"private": 0.85}
    # off, or for a lookup of the private name, or for a question about internals: no demotion
    off = RankingConfig(private_module_factor=1.0, path_keyword_bonus=0.0, path_depth_penalty=0.0)
    assert apply_priors(fused, chunks, {}, query_text=question, config=off)[0].chunk_id == 1
    lookup = apply_priors(fused, chunks, {}, symbol="ValidateCallWrapper", identifier_query=True,
                          query_text="ValidateCallWrapper", config=config)
    assert lookup[0].chunk_id == 1 and "private" not in lookup[0].explain["factors"]
    internals = apply_priors(fused, chunks, {}, query_text="how is call validation done internally",
                             config=config)
    assert internals[0].chunk_id == 1


def test_path_keyword_bonus_in_full_for_a_named_files_best_chunk_only() -> None:
    chunks = {1: chunk(1, "lib/router.js", "handle"), 2: chunk(2, "lib/router.js", "next"),
              3: chunk(3, "lib/router.js", "param"), 4: chunk(4, "lib/pool.js", "merge")}
    fused = [Fused(1, 0.10), Fused(2, 0.05), Fused(3, 0.04), Fused(4, 0.09)]
    query = "how does the router merge"  # keywords router, merge: router.js is named whole, share 1/2
    def ranked(rest: float, rest_max: float = 10.0) -> dict[int, Fused]:
        config = RankingConfig(path_keyword_rest=rest, path_keyword_rest_max=rest_max, coherence_bonus=0.0)
        return {f.chunk_id: f for f in apply_priors(fused, chunks, {}, query_text=query, config=config)}

    full = ranked(1.0)
    assert all(full[i].explain["bonus"]["path_keyword"] == pytest.approx(0.625) for i in (1, 2, 3))
    half = ranked(0.5)
    assert half[1].explain["bonus"]["path_keyword"] == pytest.approx(0.625)  # router.js's best chunk
    assert half[1].score == pytest.approx(0.10 + 0.10 * 0.625)
    assert half[2].explain["bonus"]["path_keyword"] == pytest.approx(0.3125)
    assert half[2].score == pytest.approx(0.05 + 0.10 * 0.3125)
    assert half[3].score == pytest.approx(0.04 + 0.10 * 0.3125)
    assert "path_keyword" not in half[4].explain["bonus"]
    # the named file's weaker chunks no longer ride its name above another file's better chunk
    assert full[2].score > full[4].score and half[2].score < half[4].score
    # capped (the default form): the weaker chunks get at most 0.2, the best chunk the whole bonus
    capped = ranked(1.0, 0.2)
    assert capped[1].explain["bonus"]["path_keyword"] == pytest.approx(0.625)
    assert capped[2].explain["bonus"]["path_keyword"] == pytest.approx(0.2)
    assert capped[2].score == pytest.approx(0.05 + 0.10 * 0.2) and capped[2].score < capped[4].score


def test_a_file_named_by_one_word_of_a_long_question_keeps_the_bonus_on_every_chunk() -> None:
    chunks = {1: chunk(1, "lib/response.js", "json"), 2: chunk(2, "lib/response.js", "format"),
              3: chunk(3, "lib/request.js", "accepts")}
    fused = [Fused(1, 0.10), Fused(2, 0.06), Fused(3, 0.065)]
    # seven keywords, one of which names response.js: a share of 1/7, 1.25 / 7 ~ 0.18 < 0.2
    query = "respond with html or json depending on what the browser client accepts"
    config = RankingConfig(coherence_bonus=0.0, path_depth_penalty=0.0)
    assert config.path_keyword_rest == 1.0 and config.path_keyword_rest_max == 0.2
    out = {f.chunk_id: f for f in apply_priors(fused, chunks, {}, query_text=query, config=config)}
    share = out[1].explain["bonus"]["path_keyword"]
    assert 0 < share < 0.2
    assert out[2].explain["bonus"]["path_keyword"] == pytest.approx(share)  # not discounted
    assert out[2].score > out[3].score  # the named file's second chunk keeps its place


def test_path_keyword_rest_settings_are_checked() -> None:
    with pytest.raises(QueryError):
        RankingConfig(path_keyword_rest_max=-0.1)
    with pytest.raises(QueryError):
        RankingConfig(path_keyword_rest=-1.0)
