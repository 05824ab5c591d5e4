"""End-to-end reliability of the language server (issue 13): one index shared with the CLI, buffers
over maxFileSize, paths through symlinks that leave the root, and a storm of edits."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from lsp_server.lsp.handlers import create_server
from tests.e2e import lsp_support as S

PARSER = "feedreader/parser.py"


def _cli(*args: str, index: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lsp_server.cli", *args, "--index-dir", str(index)],
                          cwd=S.REPO, capture_output=True, text=True, timeout=300,
                          env=S.server_env(index))


async def _search_until(client: LanguageClient, query: str, symbol: str, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        answer = await S.search(client, {"query": query, "limit": 3})
        if any(r["symbol"] == symbol for r in answer["results"]) or time.monotonic() > deadline:
            return answer
        await asyncio.sleep(0.2)


async def test_server_and_cli_share_one_index(tmp_path: Path) -> None:
    """Issue 13 items 7-8: the server never saw what `codeseek index` added, and `codeseek search`
    died with LockBusy while the server ran."""
    async with S.served_sample(tmp_path) as (client, root):
        index = tmp_path / "index"
        (root / "feedreader" / "zoo.py").write_text("def zebra_quokka_handler(feed):\n    return feed\n")
        done = _cli("index", str(root), index=index)
        assert done.returncode == 0, done.stderr
        found = await _search_until(client, "zebra_quokka_handler", "zebra_quokka_handler")
        assert found["results"][0]["symbol"] == "zebra_quokka_handler"
        with (root / PARSER).open("a") as fh:
            fh.write("\n\ndef okapi_digest_writer(items):\n    return items\n")
        searched = _cli("search", "okapi_digest_writer", "--root", str(root), "--json", "--no-embed",
                        index=index)
        assert searched.returncode == 0 and "Traceback" not in searched.stderr, searched.stderr
        assert '"symbol": "okapi_digest_writer"' in searched.stdout
        found = await _search_until(client, "okapi_digest_writer", "okapi_digest_writer")
        assert found["results"][0]["symbol"] == "okapi_digest_writer"


async def test_a_buffer_over_max_file_size_is_not_indexed(tmp_path: Path) -> None:
    """Issue 13 item 9: open buffers ignored maxFileSize (48.7 MB took RSS to 3.2 GB)."""
    options = {"embeddings": False, "maxFileSize": 200_000}
    async with S.served_sample(tmp_path, options=options) as (client, root):
        big = "def walrus_overflow_marker():\n    return 1\n" + "# padding line\n" * 40_000
        S.open_doc(client, root, PARSER, text=big)
        overlays, symbols = await S.overlays_and_symbols(client, "walrus_overflow_marker")
        assert overlays == 0
        assert "walrus_overflow_marker" not in symbols
        small = "def walrus_small_marker():\n    return 1\n"
        S.replace_all(client, root, PARSER, small)
        found = await _search_until(client, "walrus_small_marker", "walrus_small_marker")
        assert found["results"][0]["symbol"] == "walrus_small_marker"


async def test_no_reads_through_a_symlink_out_of_the_root(tmp_path: Path) -> None:
    """Issue 13 item 9: references on a path through a symlink to /etc read /etc/passwd."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "evil.py").write_text("from feedreader.parser import parse_date\n\nparse_date('x')\n")
    async with S.served_sample(tmp_path) as (client, root):
        os.symlink(outside, root / "escape")
        uri = S.uri(root, "escape/evil.py")
        position = lsp.Position(line=2, character=2)
        refs = await client.text_document_references_async(lsp.ReferenceParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), position=position,
            context=lsp.ReferenceContext(include_declaration=True)))
        assert refs is None
        hover = await client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), position=position))
        assert hover is None
        inside = await S.references(client, root, PARSER, "def parse_date(", "parse_date", False)
        assert inside  # still serving


def test_debounce_keeps_up_during_an_edit_storm() -> None:
    """Issue 13 item 10: with 200 edits a second the debounce timer moved forever, so nothing was
    indexed until the storm ended; now an edit waits at most MAX_DELAY_S."""
    server = create_server()
    fired: list[float] = []

    class Root:
        root = Path("/r")

        def request_paths(self, paths: Any) -> None:
            fired.append(time.monotonic())

    server.locate = lambda uri: (Root(), "a.py")  # type: ignore[method-assign, assignment, return-value]

    async def storm() -> float:
        server.loop = asyncio.get_running_loop()
        started = time.monotonic()
        while time.monotonic() - started < 2.5:
            server.schedule("file:///r/a.py", 0.3)
            await asyncio.sleep(0.005)
        await asyncio.sleep(0.5)
        return started

    started = asyncio.run(storm())
    during = [t - started for t in fired if t - started < 2.5]
    assert len(during) >= 2 and during[0] < 1.0, during
