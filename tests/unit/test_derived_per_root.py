"""Structures derived from a snapshot are kept on that snapshot: two roots searched in turn (a language
server serving two workspace folders) build each one once per root, never once per search.

Real engines (tree-sitter, tantivy, SQLite, the call graph; no embeddings) on two sample workspaces;
the builders of copy trees, contract files, interface headers and file cards are wrapped to count.
"""

from __future__ import annotations

import shutil
import threading
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from indexing.chunk_table import ChunkTable
from indexing.definition_table import DefinitionTable
from retrievers.engine.request import SearchRequest
from retrievers.engine.search_engine import SearchEngine
from retrievers.ranking import contracts, copies, headers
from retrievers.snapshot import Snapshot
from retrievers.sources import filecards
from tests.unit.engine_sample import copy_sample, opened

SAMPLES = Path(__file__).resolve().parents[1] / "workspace"
QUESTIONS = {
    "engine_sample": "how is the price of the items in the cart computed",
    "graph_sample": "how does the request session send a prepared request",
}
BUILDERS = {"copy trees": (copies, "copy_trees"), "contract files": (contracts, "contract_files"),
            "interface headers": (headers, "interface_headers"), "file cards": (filecards, "build_cards")}


def _counting(builds: Counter[str], name: str, build: Callable[..., Any]) -> Callable[..., Any]:
    def counted(*args: Any, **kwargs: Any) -> Any:
        builds[name] += 1
        return build(*args, **kwargs)
    return counted


def _count_builds(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Builds per structure from now on (each builder wrapped where its module looks it up)."""
    builds: Counter[str] = Counter()
    for name, (module, attr) in BUILDERS.items():
        monkeypatch.setattr(module, attr, _counting(builds, name, getattr(module, attr)))
    return builds


def test_two_roots_searched_in_turn_build_each_derived_structure_once_per_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the signing key lives there
    builds = _count_builds(monkeypatch)
    engines: list[tuple[SearchEngine, str]] = []
    with ExitStack() as open_engines:
        for name, question in QUESTIONS.items():
            root = tmp_path / name
            shutil.copytree(SAMPLES / name, root)
            _, engine = open_engines.enter_context(opened(root, tmp_path / f"{name}-index"))
            engines.append((engine, question))
            engine.refresh()
        for _ in range(10):
            for engine, question in engines:
                answer = engine.search(SearchRequest(question, limit=10)).to_json()
                assert answer["strategy"] == "fused" and answer["intent"]["name"] == "understand_code"
                assert answer["results"]
    assert dict(builds) == {name: len(QUESTIONS) for name in BUILDERS}  # one per root's snapshot


def test_a_warm_engine_reads_what_an_earlier_one_derived_instead_of_building_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Copy trees, contract files and interface headers are saved beside the index for its revision
    (`Snapshot.memo(saved=True)`), as the file cards are: the next engine on an unchanged index (a warm
    CLI call) builds none of them, and answers the same; after an edit, they are built again."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "graph_sample"
    shutil.copytree(SAMPLES / "graph_sample", root)
    question = SearchRequest(QUESTIONS["graph_sample"], limit=10)
    # every route: a question, definitions (bare, dotted), references, impact, an exact string
    asked = [question, *(SearchRequest(q, limit=10) for q in (
        "Session", "Session.request", "select_proxy", "who calls fetch", "what breaks if I change get",
        '"proxies"', "Square area", "Layer"))]
    answers, tables = [], []
    builds = _count_builds(monkeypatch)
    for _ in range(2):  # the first engine builds and saves, the second reads what was saved
        with opened(root, tmp_path / "index") as (_, engine):
            engine.refresh()
            answers.append([[(r["path"], r["line"], r["score"], r.get("symbol"))
                             for r in engine.search(request).to_json()["results"]] for request in asked])
            by_id = getattr(engine.call_graph(), "definition_map", None)  # (a saved graph's)
            snap = engine._view[0] if engine._view else None
            tables.append(by_id is not None and isinstance(by_id(), DefinitionTable)
                          and isinstance(getattr(snap, "chunks", None), ChunkTable))
    assert dict(builds) == {name: 1 for name in BUILDERS}  # the first engine's builds only
    assert answers[0] == answers[1] and all(answers[0])
    assert tables == [False, True]  # the second engine's chunks and definitions: the saved columns
    (root / "extra.py").write_text("def extra_helper():\n    return 1\n")
    with opened(root, tmp_path / "index") as (_, engine):
        engine.refresh()
        engine.search(question)
    assert dict(builds) == {name: 2 for name in BUILDERS}


def test_a_snapshot_memo_builds_once_when_threads_race() -> None:
    snap = Snapshot.build([], [], None, 0)
    calls: list[int] = []
    started = threading.Barrier(4)

    def build() -> list[int]:
        calls.append(1)
        return calls

    def ask(out: list[object]) -> None:
        started.wait()
        out.append(snap.memo(("probe", 1), build))

    seen: list[object] = []
    threads = [threading.Thread(target=ask, args=(seen,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == [1] and len(seen) == 4 and all(value is calls for value in seen)
    assert snap.memo(("probe", 2), lambda: "other") == "other"  # each key its own value
    assert Snapshot.build([], [], None, 0).memo(("probe", 1), lambda: "fresh") == "fresh"  # per snapshot


def test_a_refresh_after_an_edit_counts_only_the_edited_files_card_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine builds each refresh's snapshot from the one it replaces, which hands down the file
    cards' term counts: the next cards count again only the files whose names or docs changed."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = copy_sample(tmp_path)
    seeds: list[Any] = []
    real = filecards.build_cards
    monkeypatch.setattr(filecards, "build_cards", lambda *args: seeds.append(args[2]) or real(*args))
    with opened(root, tmp_path / "index") as (_, engine):
        engine.refresh()
        edited = sorted(root.rglob("*.py"))[0]
        edited.write_text(edited.read_text() + "\n\ndef settle_refund_ledger():\n    return 1\n")
        engine.refresh()
    assert len(seeds) == 2 and seeds[0] is None and isinstance(seeds[1], dict)
    assert edited.relative_to(root).as_posix() in seeds[1]  # the first generation's counts, every file


def test_a_replaced_snapshot_is_freed_without_the_cyclic_collector(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A refresh's old snapshot and call graph go as soon as nothing uses them: no reference cycle
    holds them until a full collection (on the Django sdist ~1.2M objects, whose collection held
    the GIL ~2.4 s after each refresh of a server)."""
    import gc
    import time
    import weakref

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = copy_sample(tmp_path, "graph_sample")
    with opened(root, tmp_path / "index") as (_, engine):
        engine.refresh()
        engine.search(SearchRequest(query=QUESTIONS["engine_sample"]))  # ranks and memos worked out
        engine.search(SearchRequest(query="Session.send"))
        view = engine._view
        assert view is not None
        old_snapshot, old_graph = weakref.ref(view[0]), weakref.ref(view[0].graph)
        del view
        source = next(p for p in sorted(root.rglob("*.py")))
        source.write_text(source.read_text() + "\n\ndef added_later(x):\n    return x\n")
        gc.collect()
        gc.disable()
        try:
            engine.refresh()
            engine.search(SearchRequest(query="added_later"))
            deadline = time.monotonic() + 10  # (taken apart by the engine's retirement thread)
            while (old_snapshot() is not None or old_graph() is not None) and time.monotonic() < deadline:
                time.sleep(0.02)
            assert old_snapshot() is None and old_graph() is None
        finally:
            gc.enable()


def test_a_refresh_that_saves_nothing_builds_the_file_cards_before_any_search(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server's later refreshes save nothing: their snapshot's file cards are built by the refresh,
    so the first search on the new view does not wait for them."""
    from retrievers.engine.options import EngineOptions

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    builds = _count_builds(monkeypatch)
    root = copy_sample(tmp_path, "graph_sample")
    saving_nothing = EngineOptions(embeddings=False, persist_graph=False)
    with opened(root, tmp_path / "index", saving_nothing) as (_, engine):
        engine.refresh()
        assert builds["file cards"] == 1
        engine.search(SearchRequest(query=QUESTIONS["graph_sample"]))
        assert builds["file cards"] == 1
