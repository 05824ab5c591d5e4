"""tests/workspace/engine_sample (a small Python + JavaScript shop) for the tests that run a SearchEngine on
a copy of it: opened(), a Workspace with a SearchEngine on it that closes both, and sample_engine(), that
on a fresh copy, refreshed."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from indexing.workspace import Workspace, WorkspaceOptions
from retrievers.engine.search_engine import EngineOptions, SearchEngine

SAMPLE = Path(__file__).resolve().parents[1] / "workspace" / "engine_sample"


def copy_sample(tmp: Path, name: str = "ws") -> Path:
    """A copy of the sample at tmp/name; its path."""
    root = tmp / name
    shutil.copytree(SAMPLE, root)
    return root


@contextmanager
def opened(root: Path, index: Path,
           options: EngineOptions | None = None) -> Iterator[tuple[Workspace, SearchEngine]]:
    """A Workspace over root indexed in index and a SearchEngine on it (text only unless options say
    otherwise); on the way out the engine closes, then the workspace."""
    with Workspace(root, WorkspaceOptions(index_dir=index)) as ws:
        eng = SearchEngine(ws, options or EngineOptions(embeddings=False))
        try:
            yield ws, eng
        finally:
            eng.close()


@contextmanager
def sample_engine(tmp: Path, options: EngineOptions | None = None) -> Iterator[SearchEngine]:
    """opened() on a fresh copy of the sample at tmp/ws, indexed in tmp/index and refreshed."""
    with opened(copy_sample(tmp), tmp / "index", options) as (_, engine):
        engine.refresh()
        yield engine
