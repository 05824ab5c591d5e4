"""retrievers.ranking.exact_case: which queries name an identifier, and how exact-case definitions move."""

from __future__ import annotations

from indexing.records import Chunk
from retrievers.base import StructuralDetail
from retrievers.ranking.exact_case import prefer_exact_case, queried_name
from retrievers.ranking.rrf import Fused


def chunk(cid: int, symbol: str | None, kind: str = "function") -> Chunk:
    return Chunk(path=f"f{cid}.py", language="python", start_line=1, end_line=5, start_byte=0, end_byte=9,
                 kind=kind, symbol=symbol, labels=("source",), content_hash="", id=cid)


def test_queried_name() -> None:
    assert queried_name("Session") == "Session"
    assert queried_name("`getUser()`") == "getUser"
    assert queried_name("class Session") == "Session"
    assert queried_name("requests.Session") == "Session"
    assert queried_name("Foo::barBaz") == "barBaz"
    assert queried_name("how is a Session closed") is None
    assert queried_name('"exact text"') is None


def test_exact_case_definitions_move_above_the_first_case_variant_only() -> None:
    chunks = {1: chunk(1, "session"), 2: chunk(2, "unrelated"), 3: chunk(3, "Session"),
              4: chunk(4, None, "block"), 5: chunk(5, "Other.Session", "class"), 6: chunk(6, "SESSION")}
    items = [Fused(1, 0.9), Fused(2, 0.8), Fused(3, 0.7), Fused(4, 0.6), Fused(5, 0.5), Fused(6, 0.4)]
    out = prefer_exact_case(items, "Session", chunks.get)
    assert [f.chunk_id for f in out] == [3, 5, 1, 2, 4, 6]
    assert [round(f.score, 6) for f in out[:3]] == [0.9, 0.9, 0.9] and out[0].score > out[1].score > 0.9
    assert out[0].explain == {"exact_case": True} and out[2].explain == {}


def test_nothing_moves_without_a_variant_above_or_for_a_question() -> None:
    chunks = {1: chunk(1, "Session"), 2: chunk(2, "session")}
    items = [Fused(1, 0.9), Fused(2, 0.8)]
    assert [f.chunk_id for f in prefer_exact_case(items, "Session", chunks.get)] == [1, 2]
    flipped = [Fused(2, 0.9), Fused(1, 0.8)]
    assert [f.chunk_id for f in prefer_exact_case(flipped, "where is Session", chunks.get)] == [2, 1]
    # The structural match's name speaks for a chunk without a symbol of its own (a block of constants).
    block = {7: chunk(7, None, "block"), 2: chunk(2, "session")}
    detail = StructuralDetail(1, "exact", "Session", "class", "a.py", 1)
    named = [Fused(2, 0.9), Fused(7, 0.5, {"structural": {"detail": detail}})]
    assert [f.chunk_id for f in prefer_exact_case(named, "Session", block.get)] == [7, 2]
