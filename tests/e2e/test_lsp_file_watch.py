"""End-to-end: a client that cannot watch files (Neovim 0.11 on Linux) still sees files changed
outside the editor, because the server watches the workspace itself (`lsp_server.file_watch`); a
branch-switch-like burst of writes is one refresh. A client that watches gets no second watcher."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from tests.e2e import lsp_support as S


def _no_watching() -> lsp.ClientCapabilities:
    caps = S.capabilities()
    assert caps.workspace is not None
    caps.workspace.did_change_watched_files = None  # what Neovim 0.11 announces on Linux: nothing
    return caps


async def _found(client: Any, query: str, symbol: str, within: float) -> float:
    """Seconds until a search for `query` lists `symbol` (fails after `within`)."""
    started = time.monotonic()
    while time.monotonic() - started < within:
        answer = await S.search(client, {"query": query})
        if any(r.get("symbol") == symbol for r in answer["results"]):
            return time.monotonic() - started
        await asyncio.sleep(0.05)
    raise AssertionError(f"{symbol} not found within {within} s")


async def test_a_file_written_outside_the_editor_is_searchable_within_2_s(tmp_path: Path) -> None:
    root = S.copy_sample(tmp_path)
    client = await S.start(root, tmp_path / "index", caps=_no_watching())
    try:
        status = await S.wait_state(client, ("text-only",))
        assert status["roots"][0]["watch"]["running"] is True
        assert not client.registrations  # type: ignore[attr-defined]
        (root / "feedreader" / "outside.py").write_text(
            "def written_outside_the_editor(x: int) -> int:\n    return x + 1\n")
        await _found(client, "written_outside_the_editor", "written_outside_the_editor", 2.0)
        (root / "feedreader" / "outside.py").unlink()  # a deletion is seen too
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            answer = await S.search(client, {"query": "written_outside_the_editor"})
            if all(r.get("symbol") != "written_outside_the_editor" for r in answer["results"]):
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the deleted file is still found")
    finally:
        await S.stop(client)


async def test_a_burst_of_300_writes_is_one_refresh(tmp_path: Path) -> None:
    root = S.copy_sample(tmp_path)
    (root / "node_modules" / "dep").mkdir(parents=True)
    client = await S.start(root, tmp_path / "index", caps=_no_watching())
    try:
        before = (await S.wait_state(client, ("text-only",)))["roots"][0]
        await asyncio.sleep(0.5)  # nothing pending: the watcher has seen no change
        for i in range(300):  # as a branch switch rewrites files, with ignored output among them
            text = f"def generated_{i:03d}() -> int:\n    return {i}\n"
            (root / "feedreader" / f"gen_{i:03d}.py").write_text(text)
            if i % 50 == 0:
                (root / "node_modules" / "dep" / f"f{i}.js").write_text("x = 1\n")
        await _found(client, "generated_299", "generated_299", 10.0)
        after = (await S.wait_state(client, ("text-only",)))["roots"][0]
        assert after["files"] == before["files"] + 300
        assert after["watch"]["batches"] - before["watch"]["batches"] == 1, after["watch"]
        assert after["jobs"] - before["jobs"] == 1, (before["jobs"], after["jobs"])
    finally:
        await S.stop(client)


async def test_a_client_that_watches_gets_no_server_watcher(tmp_path: Path) -> None:
    async with S.served_sample(tmp_path) as (client, _root):
        status = await S.status(client)
        assert status["roots"][0]["watch"] is None
        assert [r.method for r in client.registrations] == [lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES]  # type: ignore[attr-defined]
