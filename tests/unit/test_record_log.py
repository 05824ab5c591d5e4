"""indexing.record_log: a cold update keeps exactly the records the store then lists (same values, same
order, ids included; recurring strings shared), an update over a store that held files keeps none, and
the call graph builds from them only while the store is at their revision. Real grammars, parse
workers and SQLite store on the sample workspaces."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from indexing.workspace import Workspace, WorkspaceOptions
from retrievers.engine.graph_state import GraphState

SAMPLES = Path(__file__).resolve().parents[1] / "workspace"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    out = tmp_path / "ws"
    shutil.copytree(SAMPLES / "engine_sample", out)
    shutil.copytree(SAMPLES / "graph_sample", out / "graph_sample")
    return out


@pytest.mark.parametrize("workers", [0, 2])
def test_a_cold_update_keeps_what_the_store_lists(root: Path, tmp_path: Path, workers: int,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODESEEK_PARSE_WORKERS", raising=False)
    ws = Workspace(root, WorkspaceOptions(index_dir=tmp_path / "index", parse_workers=workers))
    try:
        update = ws.update()
        kept = update.records
        assert kept is not None and kept.revision == ws.revision
        with ws.store.snapshot():
            definitions, calls, imports = ws.store.definitions(), ws.store.calls(), ws.store.imports()
        assert len(definitions) > 20 and len(calls) > 20 and imports  # (the samples have all three)
        assert kept.definitions == definitions  # (ids included)
        assert kept.calls == calls
        assert kept.imports == imports
        paths = {id(d.path) for d in kept.definitions if d.path == definitions[0].path}
        callees = {id(c.callee) for c in kept.calls if c.callee == calls[0].callee}
        assert len(paths) == 1 and len(callees) == 1  # one string each, as the store's reads share them
        (root / "late.py").write_text("def late():\n    return 1\n")
        assert ws.update().records is None  # the store held files: what it lists is more than one update's
    finally:
        ws.close()


def test_the_graph_builds_from_kept_records_only_at_their_revision(root: Path, tmp_path: Path) -> None:
    ws = Workspace(root, WorkspaceOptions(index_dir=tmp_path / "index", parse_workers=0))
    try:
        kept = ws.update().records
        assert kept is not None
        graphs = GraphState(ws)
        graphs.hand_over(kept)
        with ws.store.snapshot():
            definitions, calls, _ = graphs._records()
        assert definitions is kept.definitions and calls is kept.calls  # (not read again)
        with ws.store.snapshot():
            assert graphs._records()[0] is not kept.definitions  # used once: then the store's
        (root / "later.py").write_text("def later_helper():\n    return 2\n")
        ws.update()  # a new revision: the kept records no longer list the store
        graphs.hand_over(kept)
        graph = graphs.build()
        assert "later_helper" in {d.name for d in graph.definitions()}
    finally:
        ws.close()
