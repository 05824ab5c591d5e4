"""The transformer tier's fill order (`retrievers.engine.fill_order`) on real chunks of
tests/workspace/engine_sample (Python, JavaScript, a test file and a guide): open files first, then
source before tests and docs, definitions before module code, rare words first; and the engine hands
the order, with the open files, to the transformer pass."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from indexing.records import Chunk
from retrievers.engine.fill_order import DEFINITION_KINDS, fill_key, label_tier, snapshot_rarity, word_rarity
from retrievers.engine.search_engine import SearchEngine
from retrievers.snapshot import Snapshot
from tests.unit.engine_sample import copy_sample, opened, sample_engine


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with sample_engine(tmp_path_factory.mktemp("fill")) as eng:
        yield eng


def snapshot(engine: SearchEngine) -> Snapshot:
    view = engine._view
    assert view is not None
    return view[0]


def ordered(engine: SearchEngine, opened: tuple[str, ...] = ()) -> list[Chunk]:
    snap = snapshot(engine)
    return sorted(snap.chunks.values(), key=fill_key(snap, engine.workspace.chunk_text, opened))


def test_source_before_tests_and_docs(engine: SearchEngine) -> None:
    chunks = ordered(engine)
    tiers = [label_tier(c) for c in chunks]
    assert tiers == sorted(tiers) and tiers[0] == 0
    assert {c.path for c in chunks if label_tier(c) == 1} == {"tests/test_cart.py", "docs/guide.md"}


def test_definitions_before_module_code_then_rare_words_first(engine: SearchEngine) -> None:
    source = [c for c in ordered(engine) if label_tier(c) == 0]
    kinds = [c.kind in DEFINITION_KINDS for c in source]
    assert kinds == sorted(kinds, reverse=True) and kinds[0] and not kinds[-1]
    rarity = word_rarity(snapshot(engine).chunks.values(), engine.workspace.chunk_text)
    definitions = [rarity[c.id] for c in source if c.kind in DEFINITION_KINDS]
    assert definitions == sorted(definitions, reverse=True) and len(set(definitions)) > 1


def test_open_files_come_first(engine: SearchEngine) -> None:
    chunks = ordered(engine, opened=("tests/test_cart.py", "web/util.js"))
    head = {c.path for c in chunks[:4]}
    assert head == {"tests/test_cart.py", "web/util.js"}  # 1 + 3 chunks, the test file's too
    assert [c.path for c in chunks[4:]] == [c.path for c in ordered(engine)
                                            if c.path not in head]  # the rest as before


def test_word_rarity() -> None:
    def chunk(cid: int, path: str) -> Chunk:
        return Chunk(path, "python", 1, 1, 0, 1, "function", None, ("source",), "h", id=cid)

    texts = {1: "def total_price(cart): return cart.total", 2: "def total(cart): return cart",
             3: "def cooldown_lockout(attempts): return attempts", 4: "", 5: None}
    chunks = [chunk(i, f"m{i}.py") for i in texts]
    rarity = word_rarity(chunks, lambda c: texts[c.id])
    assert rarity[4] == rarity[5] == 0.0  # no words, no text
    assert rarity[3] > rarity[1] > rarity[2] > 0.0  # `cooldown`, `lockout`, `attempts` occur once
    assert word_rarity([], lambda c: "") == {}

    def unreadable(c: Chunk) -> str:
        raise OSError("gone")

    assert word_rarity(chunks[:1], unreadable) == {1: 0.0}


def test_without_a_snapshot_the_order_still_holds(engine: SearchEngine) -> None:
    snap = snapshot(engine)
    key = fill_key(None, opened=("web/util.js",))
    chunks = sorted(snap.chunks.values(), key=key)
    assert chunks[0].path == "web/util.js" and label_tier(chunks[-1]) == 1


def test_embed_transformer_hands_the_order_and_open_files_down(engine: SearchEngine) -> None:
    seen: dict[str, Any] = {}

    class Deep:
        def pending(self) -> int:
            return 1

    class Tiers:
        deep = Deep()

        def embed_deep(self, progress: object, should_stop: object, order: Callable[[Chunk], Any]) -> int:
            seen["order"] = order
            return 0

    held, engine.semantic = engine.semantic, Tiers()  # type: ignore[assignment]
    try:
        assert engine.embed_transformer(first=["docs/guide.md"]) == 0
    finally:
        engine.semantic = held
    chunks = sorted(snapshot(engine).chunks.values(), key=seen["order"])
    assert chunks[0].path == "docs/guide.md"
    assert chunks[1:] == [c for c in ordered(engine) if c.path != "docs/guide.md"]


def test_rarity_is_read_once_per_snapshot_and_handed_down_to_the_next(tmp_path: Path) -> None:
    with opened(copy_sample(tmp_path), tmp_path / "index") as (ws, eng):
        eng.refresh()
        reads: list[int] = []

        def counting(chunk: Chunk) -> str | None:
            reads.append(chunk.id)
            return ws.chunk_text(chunk)

        first = snapshot(eng)
        before = snapshot_rarity(first, counting)
        assert len(reads) == len(first.chunks) and snapshot_rarity(first, counting) is before
        assert len(reads) == len(first.chunks)  # the second call read nothing
        edited = next(p for p in sorted({c.path for c in first.chunks.values()}) if p.endswith(".py"))
        target = tmp_path / "ws" / edited
        target.write_text(target.read_text() + "\n\ndef appended_for_the_test():\n    return 1\n")
        eng.refresh()
        second = snapshot(eng)
        assert second is not first
        reads.clear()
        after = snapshot_rarity(second, counting)
        assert reads == []  # the edit re-read nothing: the predecessor's figures carry over
        kept = set(first.chunks) & set(second.chunks)
        assert kept and all(after[cid] == before[cid] for cid in kept)
        assert set(after) == kept  # the edited file's new chunks count as 0.0 (absent)
