"""The typed records a search passes along (issue 31): each retriever's hit detail and the answer,
written out as the result schema with the keys in their documented order."""

from __future__ import annotations

import dataclasses

import pytest

from retrievers.base import FileCardDetail, GraphDetail, SemanticDetail, StructuralDetail, TextDetail
from retrievers.engine.answer import RESULT_KEYS, TOP_KEYS, ResultEntry, SearchAnswer


def test_each_graph_relation_writes_its_own_fields_in_order() -> None:
    call = GraphDetail("call", "a.py", 3, column=4, end_column=9, callee="f", caller=None, caller_def_id=None,
                       callee_def_id=7, resolved=False, parts=(2,))
    assert list(call.as_dict()) == ["relation", "path", "line", "column", "end_column", "callee", "caller",
                                    "caller_def_id", "callee_def_id", "resolved", "parts"]
    assert list(GraphDetail("inherits", "a.py", 3, column=0, caller_def_id=1, callee_def_id=2).as_dict()) == [
        "relation", "path", "line", "column", "caller_def_id", "callee_def_id"]
    assert list(GraphDetail("impact", "a.py", 3, def_id=1, depth=2, target_def_id=5, name="f").as_dict()) == [
        "relation", "depth", "def_id", "target_def_id", "name", "path", "line"]
    seed = GraphDetail("definition", "a.py", 3, def_id=1)
    assert list(seed.as_dict()) == ["def_id", "relation", "path", "line"]
    assert GraphDetail("callee", "a.py", 3, def_id=1, name="g", via=9).as_dict() == {
        "relation": "callee", "via": 9, "def_id": 1, "name": "g", "path": "a.py", "line": 3}


def test_the_other_details_leave_out_what_they_do_not_have() -> None:
    assert TextDetail("bm25").as_dict() == {"match": "bm25"}
    assert list(TextDetail("exact", (4, 5), False, True, (8,)).as_dict()) == [
        "match", "lines", "case_sensitive", "split_literals", "parts"]
    assert SemanticDetail(0.5).as_dict() == {"cosine": 0.5}
    blended = SemanticDetail(0.5, "static", static_rank=2, static_cosine=0.5)
    assert blended.as_dict() == {"cosine": 0.5, "tier": "static", "static_rank": 2, "static_cosine": 0.5}
    assert list(StructuralDetail(1, "exact", "f", "function", "a.py", 3).as_dict()) == [
        "def_id", "match", "name", "kind", "path", "line"]
    assert FileCardDetail("a.py").as_dict() == {"match": "file_card", "path": "a.py"}


def test_details_are_frozen() -> None:
    detail = TextDetail("bm25")
    with pytest.raises(dataclasses.FrozenInstanceError):
        detail.match = "exact"  # type: ignore[misc]


def test_an_answer_writes_the_schema_keys_in_order() -> None:
    entry = ResultEntry(path="a.py", uri="file:///w/a.py", start_line=1, end_line=2, line=1, column=4,
                        symbol="f", kind="function", language="python", labels=("source",), score=0.5,
                        snippet="def f(): ...", explain={"route": "direct"}, full_start_line=1,
                        full_end_line=2, lines_total=2, depth=1)
    answer = SearchAnswer(query="f", match="found", no_match=None, total=1, preset="default",
                          intent={"name": "find_definition"}, strategy="direct", modalities=("structural",),
                          results=(entry,), index={"state": "ready"}, timings_ms={"total": 1.0})
    doc = answer.to_json()
    assert tuple(doc) == TOP_KEYS
    assert tuple(doc["results"][0]) == (*RESULT_KEYS, "depth")
    assert doc["modalities"] == ["structural"] and doc["results"][0]["labels"] == ["source"]
    doc["timings_ms"]["process"] = 2.0  # a caller may add to its document
    assert answer.timings_ms == {"total": 1.0}
