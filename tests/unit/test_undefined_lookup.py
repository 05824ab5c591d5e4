"""A lookup of a name no definition has (a renamed symbol) is ranked as a question
(`fused_route`, `RankingConfig.undefined_as_question`): real parse, tantivy and SQLite, no model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from retrievers.base import Hit, StructuralDetail
from retrievers.engine.fused_route import _names_a_definition
from retrievers.engine.search_engine import EngineOptions, SearchEngine, SearchRequest
from retrievers.ranking.profile import INTENT_WEIGHTS
from tests.unit.engine_sample import opened

FILES = {
    "plugins/resolver.py": '''
def widget_project_resolver(name):
    """Resolve a plugin name to its module."""
    return name.lower()
''',
    "project.py": '''
class TestProject:
    """A widget project: the configuration and the files of one widget project."""

    def files(self):
        return []
''',
}


@pytest.fixture(params=[True, False], ids=["on", "off"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[bool, SearchEngine]]:
    root = tmp_path / "ws"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    options = EngineOptions(embeddings=False, ranking={"undefined_as_question": request.param})
    with opened(root, tmp_path / "index", options) as (_, eng):
        eng.refresh()
        yield request.param, eng


def test_a_name_nobody_defines_is_weighted_as_a_question(engine: tuple[bool, SearchEngine]) -> None:
    on, eng = engine
    answer = eng.search(SearchRequest("WidgetProject")).to_json()
    assert answer["intent"]["name"] == "find_definition"
    weights = {r["explain"]["structural"]["weight"] for r in answer["results"]
               if "structural" in r["explain"]}
    question = INTENT_WEIGHTS["understand_code"]["structural"]
    assert weights == ({question} if on else {0.6})  # understand_code's structural weight, else the lookup's
    defined = eng.search(SearchRequest("TestProject")).to_json()  # a defined name keeps the lookup's weights
    assert defined["results"][0]["explain"]["structural"]["weight"] == 0.6


def matched(match: str) -> StructuralDetail:
    """A structural hit's detail whose name matched the query as `match`."""
    return StructuralDetail(1, match, "Widget", "class", "widget.py", 1)


def test_names_a_definition() -> None:
    assert _names_a_definition([Hit(1, 60.0, matched("split")), Hit(2, 90.0, matched("exact_folded"))])
    assert not _names_a_definition([Hit(1, 60.0, matched("split")), Hit(2, 50.0, matched("prefix"))])
    assert not _names_a_definition([])
