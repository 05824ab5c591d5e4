"""Pure parts of the LSP features: search params, merged index summaries (fuzzy symbol matching and the
word under the cursor are the domain's: tests/unit/test_codebase.py)."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from lsp_server.lsp.search import _merge_index, parse_params


def test_parse_params_defaults_and_preset() -> None:
    request = parse_params({"query": "  parse_date ", "include": ["src/**"]}, "thorough")
    assert (request.limit, request.preset, request.intent) == (10, "thorough", None)
    assert request.asked.include == ("src/**",)
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
