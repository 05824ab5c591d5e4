"""Pure parts of the LSP features: search params, merged index summaries, fuzzy symbol matching."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from lsp_server.features_nav import fuzzy_score, word_at
from lsp_server.features_search import _merge_index, parse_params


def test_parse_params_defaults_and_preset() -> None:
    request = parse_params({"query": "  parse_date ", "include": ["src/**"]}, "thorough")
    assert (request.limit, request.preset, request.intent) == (10, "thorough", None)
    assert request.include == ("src/**",)
    assert parse_params({"query": "x", "preset": "quick", "workDoneToken": "t"}, "default").preset == "quick"


@pytest.mark.parametrize("params", [None, {}, {"query": None}, {"query": "x", "limit": 201},
                                    {"query": "x", "intent": 1}, {"query": "x", "exclude": ["a", None]}])
def test_parse_params_rejects(params: object) -> None:
    with pytest.raises(JsonRpcInvalidParams):
        parse_params(params, "default")


def test_merge_index_takes_the_least_advanced_state() -> None:
    merged = _merge_index([
        {"state": "ready", "files": 3, "chunks": 10, "embedded": 10, "model": "m"},
        {"state": "embedding", "files": 2, "chunks": 5, "embedded": 1, "model": "m"}])
    assert (merged["state"], merged["files"], merged["chunks"], merged["embedded"], merged["model"]) == (
        "embedding", 5, 15, 11, "m")
    assert len(merged["roots"]) == 2


def test_fuzzy_score_orders_match_quality() -> None:
    names = ["parse_date", "parse_feed", "test_parse_date_iso", "Parse_Date", "prepare_statement"]
    scored = sorted((s, n) for n in names if (s := fuzzy_score("parse_date", n)) is not None)
    assert [n for _, n in reversed(scored)] == ["parse_date", "Parse_Date", "test_parse_date_iso"]
    assert fuzzy_score("fRT", "formatRelativeTime") is not None
    assert fuzzy_score("zz", "formatRelativeTime") is None
    boundary = fuzzy_score("pd", "parse_date")
    inner = fuzzy_score("pd", "spudding")
    assert boundary is not None and inner is not None and boundary > inner


def test_word_at() -> None:
    line = "    return parse_date(item.findtext('x')) + $el"
    assert word_at(line, line.index("parse_date") + 3) == "parse_date"
    assert word_at(line, line.index("parse_date") + len("parse_date")) == "parse_date"  # just after
    assert word_at(line, line.index("$el")) == "$el"
    assert word_at(line, 1) is None
