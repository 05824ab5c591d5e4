"""One answer per definition before fusion (`grouping.collapse_definitions`)."""

from __future__ import annotations

from indexing.records import Chunk, Definition
from retrievers.base import Hit, SemanticDetail, TextDetail
from retrievers.ranking.grouping import collapse_definitions
from retrievers.snapshot import Snapshot


def part(cid: int, start: int, end: int, symbol: str | None = "Session.send") -> Chunk:
    return Chunk(path="sessions.py", language="python", start_line=start, end_line=end, start_byte=0,
                 end_byte=10, kind="method", symbol=symbol, labels=("source",), content_hash=f"h{cid}",
                 id=cid)


SEND = Definition(name="send", qualified_name="Session.send", kind="method", path="sessions.py",
                  start_line=10, end_line=90, start_byte=0, end_byte=10, name_line=10, name_column=8,
                  signature="def send(self):", doc="", id=1)
# `send` split into three chunks (10-40 holds its first line), and an unrelated function.
SNAP = Snapshot.build([part(1, 10, 40), part(2, 41, 70), part(3, 71, 90), part(4, 95, 99, "merge")],
                      [SEND], None, 1)


def test_a_split_definition_is_listed_once_under_its_head_with_the_parts_that_matched() -> None:
    ranked = {"semantic": [Hit(3, 0.9, SemanticDetail(0.9)), Hit(4, 0.8), Hit(2, 0.7), Hit(1, 0.6)],
              "text": [Hit(4, 5.0, TextDetail("bm25"))]}
    out = collapse_definitions(ranked, SNAP)
    assert [(h.chunk_id, h.score) for h in out["semantic"]] == [(1, 0.9), (4, 0.8)]
    assert out["semantic"][0].detail.as_dict() == {"cosine": 0.9, "parts": [3, 2]}
    assert out["text"] == [Hit(4, 5.0, TextDetail("bm25"))]


def test_the_retrievers_own_hits_are_left_as_they_were() -> None:
    # The head itself ranks first and later parts add to its `parts`: a new hit holds them, the
    # retriever's hit (and its detail) does not change (collapsing the same lists twice gives the same).
    head = Hit(1, 0.9, SemanticDetail(0.9))
    ranked = {"semantic": [head, Hit(3, 0.7), Hit(2, 0.6)]}
    first = collapse_definitions(ranked, SNAP)
    assert first["semantic"][0].detail.as_dict() == {"cosine": 0.9, "parts": [3, 2]}
    assert head.detail.as_dict() == {"cosine": 0.9} and ranked["semantic"][0] is head
    assert collapse_definitions(ranked, SNAP) == first
