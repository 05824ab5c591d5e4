"""The language server in a stranger's workspace (issue 32): a huge `didOpen` buffer under the default
`maxFileSize`, numbers no field can hold in requests, and a shutdown in the middle of indexing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.e2e import lsp_support as S
from tests.e2e.cli_support import write_many_modules

PARSER = "feedreader/parser.py"


async def test_a_40_mb_buffer_is_not_indexed_under_the_default_limit(tmp_path: Path) -> None:
    """Item 5: a 40 MB `didOpen` was indexed although maxFileSize is 1,000,000 by default."""
    async with S.served_sample(tmp_path) as (client, root):
        big = ("def walrus_forty_megabytes():\n    return 1\n"
               + "# padding line of a huge buffer\n" * 1_300_000)
        assert len(big) > 40_000_000
        for rel in (PARSER, "feedreader/brand_new_buffer.py"):  # a file on disk, and one only in the editor
            S.open_doc(client, root, rel, text=big)
        overlays, symbols = await S.overlays_and_symbols(client, "walrus_forty_megabytes")
        assert overlays == 0
        assert "walrus_forty_megabytes" not in symbols
        assert (await S.search(client, {"query": "parse_date"}))["results"]  # still serving


async def test_numbers_no_field_can_hold_get_a_plain_error(tmp_path: Path) -> None:
    """Item 6: replies said "cannot convert float infinity to integer" (Python's own words)."""
    async with S.served_sample(tmp_path) as (client, root):
        uri = S.uri(root, PARSER)
        for params in ({"textDocument": {"uri": uri}, "position": {"line": float("inf"), "character": 0}},
                       {"textDocument": {"uri": uri}, "position": {"line": 1, "character": float("-inf")}},
                       {"textDocument": {"uri": uri}, "position": {"line": 10**400, "character": 0}}):
            try:
                await S.raw_request(client, "textDocument/hover", params)
            except Exception as exc:  # the JSON-RPC error reply
                text = str(exc)
            else:
                raise AssertionError("an invalid position was answered")
            assert "invalid params for textDocument/hover" in text, text
            assert "cannot convert" not in text and "infinity" not in text, text
            assert "unknown error" not in text, text
        assert (await S.search(client, {"query": "parse_date"}))["results"]


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def test_a_shutdown_while_indexing_logs_no_error(tmp_path: Path) -> None:
    """Item 6: `IndexingStopped` on a normal shutdown was logged at ERROR with a traceback."""
    root = tmp_path / "many"
    write_many_modules(root, 3000, per_package=100, functions=10)
    uri = root.as_uri()
    env = S.server_env(tmp_path / "index", CODESEEK_LOG="INFO")
    proc = subprocess.Popen([sys.executable, "-m", "lsp_server.cli", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=str(S.REPO))
    assert proc.stdin is not None
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": uri, "capabilities": {},
        "workspaceFolders": [{"uri": uri, "name": "m"}],
        "initializationOptions": {"embeddings": False}}}))
    proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    proc.stdin.flush()
    index = tmp_path / "index"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(index.glob("*/index.sqlite3")):
        time.sleep(0.05)
    time.sleep(0.5)  # indexing is under way
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
    proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
    proc.stdin.flush()
    _, err = proc.communicate(timeout=120)
    log = err.decode("utf-8", "replace")
    assert "Traceback" not in log and "IndexingStopped" not in log, log[-3000:]
    errors = [line for line in log.splitlines() if " ERROR " in line or line.startswith("ERROR")]
    assert not errors, log[-3000:]
    assert os.path.isdir(index)
