"""A refresh stopped from its progress callback (the language server's `IndexingStopped` on shutdown,
issue 32 item 6) ends quietly: the exception reaches the caller and nothing is logged at ERROR."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from indexing.workspace import Workspace, WorkspaceOptions
from retrievers.engine.search_engine import EngineOptions, SearchEngine


class Stopped(Exception):
    pass


@pytest.mark.parametrize("phase", ["indexing", "graph"])
def test_a_stop_from_progress_is_not_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                            phase: str) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    for i in range(5):
        (root / f"m{i}.py").write_text(f"def f{i}(x):\n    return g{i}(x)\n")
    ws = Workspace(root, WorkspaceOptions(index_dir=tmp_path / "index"))
    engine = SearchEngine(ws, EngineOptions(embeddings=False))

    def progress(name: str, done: int, total: int) -> None:
        if name == phase:
            raise Stopped()

    with caplog.at_level(logging.INFO), pytest.raises(Stopped):
        engine.refresh(embed=False, progress=progress)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    engine.close()
    ws.close()
