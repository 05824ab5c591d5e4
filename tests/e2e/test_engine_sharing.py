"""`codeseek search` answered by a running server's engine (issue 29 item 2): the real `codeseek mcp`
and `codeseek serve` on a copy of a sample workspace, the real CLI beside them. The answers equal the
CLI's own in process (`--no-server`) byte for byte but for `timings_ms`; a stale socket is ignored and
replaced; malformed input gets an error line and the server keeps serving; an edit made just before
the call is in the answer; unsaved editor buffers and other options mean the CLI searches itself."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from indexing.location import index_dir_for
from lsp_server.engine_socket import socket_path
from tests.e2e import lsp_support as S
from tests.e2e.mcp_support import CODESEEK, environment, mcp_session, wait_indexed

SAMPLE = Path(__file__).resolve().parents[1] / "workspace" / "engine_sample"
SERVED = "answered by the"


def cli(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lsp_server.cli", "search", *args, "--root", str(root)],
                          capture_output=True, text=True, timeout=300, cwd=str(root),
                          env={**env, "CODESEEK_LOG": "debug"})


def untimed(stdout: str) -> str:
    """The `--json` document without `timings_ms` (the only part that differs run to run), as printed."""
    doc = json.loads(stdout)
    timings = doc.pop("timings_ms")
    assert isinstance(timings, dict)
    return json.dumps(doc, ensure_ascii=False)


def same_both_ways(root: Path, env: dict[str, str], *args: str, served: str = "mcp") -> dict[str, Any]:
    """Run one search through the server and in process; both outputs agree; the served document."""
    shared = cli(root, env, *args, "--json")
    alone = cli(root, env, *args, "--json", "--no-server")
    assert shared.returncode == alone.returncode == 0, shared.stderr + alone.stderr
    assert f"{SERVED} {served} server" in shared.stderr, shared.stderr
    assert SERVED not in alone.stderr
    assert untimed(shared.stdout) == untimed(alone.stdout)
    doc: dict[str, Any] = json.loads(shared.stdout)
    assert doc["timings_ms"]["server"] > 0 and "server" not in json.loads(alone.stdout)["timings_ms"]
    for lines in (("--jsonl",), ("--vimgrep",), ("-C", "1")):  # the other outputs, byte for byte
        via, here = cli(root, env, *args, *lines), cli(root, env, *args, *lines, "--no-server")
        assert SERVED in via.stderr and via.returncode == here.returncode == 0
        strip = 1 if lines[0] == "-C" else 0  # the human head line has the timings
        assert via.stdout.splitlines()[strip:] == here.stdout.splitlines()[strip:]
    return doc


def raw_line(path: Path, data: bytes) -> dict[str, Any]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(30)
        conn.connect(str(path))
        conn.sendall(data)
        got = b""
        while not got.endswith(b"\n") and (chunk := conn.recv(65536)):
            got += chunk
    answer: dict[str, Any] = json.loads(got)
    return answer


def stale_socket(path: Path) -> None:
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(SAMPLE, root)
    return root


@pytest.fixture
def short() -> Iterator[Path]:
    """A base for the index short enough for a socket path (pytest's tmp_path is often too long:
    the server then shares nothing, and says so)."""
    base = Path(tempfile.mkdtemp(prefix="cs-", dir="/tmp"))
    yield base
    shutil.rmtree(base, ignore_errors=True)


def mcp_env(tmp_path: Path, short: Path) -> dict[str, str]:
    return {**environment(tmp_path), "XDG_CACHE_HOME": str(short)}


async def test_the_mcp_server_answers_codeseek_search(workspace: Path, tmp_path: Path, short: Path) -> None:
    env = mcp_env(tmp_path, short)
    sock = socket_path(index_dir_for(workspace, Path(env["XDG_CACHE_HOME"]) / "codeseek"))
    args = ["mcp", "--root", str(workspace), "--no-embed"]
    async with mcp_session(str(CODESEEK), args, env, tmp_path) as session:
        await wait_indexed(session)
        assert sock.exists() and oct(sock.stat().st_mode & 0o777) == "0o600"
        doc = await asyncio.to_thread(same_both_ways, workspace, env, "def apply_discount", "--no-embed")
        top = doc["results"][0]
        assert (top["path"], top["start_line"], top["symbol"]) == ("shop/pricing.py", 11, "apply_discount")
        await asyncio.to_thread(same_both_ways, workspace, env, "who calls charge_card", "--no-embed",
                                "--limit", "3", "--include", "shop/**")

        for bad, kind in ((b"not json\n", "request"), (b'{"v": 99, "op": "search"}\n', "version"),
                          (b'{"v": 1, "op": "search"}\n', "mismatch"), (b"[]\n", "request"),
                          (b"\xff\xfe\n", "request")):
            answer = await asyncio.to_thread(raw_line, sock, bad)
            assert answer["kind"] == kind and answer["error"], answer

        # An edit made just before the call is in the answer, as it is in process.
        with (workspace / "shop" / "cart.py").open("a") as fh:
            fh.write("\n\ndef zebra_quokka_total(cart):\n    return cart\n")
        doc = await asyncio.to_thread(same_both_ways, workspace, env, "zebra_quokka_total", "--no-embed")
        assert doc["results"][0]["symbol"] == "zebra_quokka_total"

        # Other options than the server's (embeddings on): searched in process, the same exit status.
        other = await asyncio.to_thread(cli, workspace, env, "def apply_discount", "--json")
        assert other.returncode == 0 and SERVED not in other.stderr and "mismatch" in other.stderr
    assert not sock.exists()  # removed on exit


async def test_a_stale_socket_is_ignored_and_replaced(workspace: Path, tmp_path: Path, short: Path) -> None:
    env = mcp_env(tmp_path, short)
    sock = socket_path(index_dir_for(workspace, Path(env["XDG_CACHE_HOME"]) / "codeseek"))
    sock.parent.mkdir(parents=True, mode=0o700)
    stale_socket(sock)  # what a killed server leaves
    started = time.monotonic()
    alone = cli(workspace, env, "def apply_discount", "--json", "--no-embed")
    assert alone.returncode == 0 and SERVED not in alone.stderr, alone.stderr
    assert json.loads(alone.stdout)["results"][0]["symbol"] == "apply_discount"
    assert time.monotonic() - started < 120
    args = ["mcp", "--root", str(workspace), "--no-embed"]
    async with mcp_session(str(CODESEEK), args, env, tmp_path) as session:
        await wait_indexed(session)
        await asyncio.to_thread(same_both_ways, workspace, env, "def apply_discount", "--no-embed")


async def test_the_language_server_answers_codeseek_search(tmp_path: Path, short: Path) -> None:
    index = short / "index"
    env = S.server_env(index)
    env.pop("CODESEEK_INDEX_DIR")  # the CLI names the same base with --index-dir
    root = S.copy_sample(tmp_path)
    client = await S.start(root, index)
    try:
        await S.wait_state(client, ("text-only",))
        base = ("--no-embed", "--index-dir", str(index))
        doc = await asyncio.to_thread(same_both_ways, root, env, "parse_feed", *base, served="lsp")
        assert doc["results"][0]["symbol"] == "parse_feed"

        # An unsaved buffer that differs from its file: the CLI reads the file, so it searches itself.
        rel = "feedreader/parser.py"
        S.open_doc(client, root, rel, text=(root / rel).read_text() + "\ndef unsaved_walrus():\n    pass\n")
        await S.wait_state(client, ("text-only",))
        alone = await asyncio.to_thread(cli, root, env, "unsaved_walrus", "--json", *base)
        assert alone.returncode in (0, 1) and SERVED not in alone.stderr and "unsaved" in alone.stderr
        assert "unsaved_walrus" not in {r["symbol"] for r in json.loads(alone.stdout)["results"]}
    finally:
        await S.stop(client)


def test_no_server_flag_is_listed() -> None:
    shown = subprocess.run([sys.executable, "-m", "lsp_server.cli", "search", "--help"], capture_output=True,
                           text=True, env={**os.environ, "COLUMNS": "200"}, timeout=60)
    assert "--no-server" in shown.stdout
