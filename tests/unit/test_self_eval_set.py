"""bench/queries/codeseek-self.json names its targets by file and symbol in this very tree, so a code move
can leave a target behind (`make eval` then stops: "no definition ... in ..."). Each target must still
name a definition that the real parser finds in that file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from indexing.languages import language_for_path
from indexing.parse import parse_file

REPO = Path(__file__).resolve().parents[2]
SELF_SET = REPO / "bench" / "queries" / "codeseek-self.json"


def _targets() -> list[tuple[str, str, str]]:
    data = json.loads(SELF_SET.read_text())
    assert data["corpus"]["kind"] == "self"
    return [(q["id"], t["path"], t["symbol"]) for q in data["queries"]
            for t in [*q["targets"], *q.get("secondary", [])] if t.get("symbol")]


def test_the_self_set_names_targets_by_symbol() -> None:
    assert len(_targets()) >= 15


@pytest.mark.parametrize(("query_id", "path", "symbol"), _targets())
def test_each_target_is_still_defined_where_the_set_says(query_id: str, path: str, symbol: str) -> None:
    source = (REPO / path).read_bytes()
    found = parse_file(path, source, language_for_path(path), ()).definitions
    names = {d.qualified_name for d in found}
    assert symbol in names, f"{query_id}: {path} no longer defines {symbol}"
