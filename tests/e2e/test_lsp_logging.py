"""The language server's stderr at the default log level: no pygls payload lines, no source text,
no per-feature registration lines; the one summary line per served root; a refused home root."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from pygls.uris import from_fs_path

REPO = Path(__file__).resolve().parents[2]
MARKER = "SOURCE_TEXT_MUST_NOT_BE_LOGGED"


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def run_session(folder: Path, env_extra: dict[str, str], tmp: Path, until: bytes = b"") -> tuple[str, bytes]:
    """initialize, initialized, didOpen, hover, search, shutdown, exit; returns (stderr, stdout). With
    `until`, shutdown waits (up to 60 s) for those bytes on stdout rather than a fixed 2 s."""
    env = {k: v for k, v in os.environ.items() if k != "CODESEEK_LOG"}
    env.update({"PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "CODESEEK_INDEX_DIR": str(tmp / "index"),
                **env_extra})
    uri = from_fs_path(str(folder)) or ""
    doc = from_fs_path(str(folder / "app.py")) or ""
    text = (folder / "app.py").read_text()
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": None, "rootUri": uri, "capabilities": {},
                    "workspaceFolders": [{"uri": uri, "name": "w"}],
                    "initializationOptions": {"embeddings": False}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen",
         "params": {"textDocument": {"uri": doc, "languageId": "python", "version": 1, "text": text}}},
        {"jsonrpc": "2.0", "id": 2, "method": "workspace/semanticSearch", "params": {"query": MARKER}},
        {"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover",
         "params": {"textDocument": {"uri": doc}, "position": {"line": 0, "character": 5}}},
    ]
    proc = subprocess.Popen([sys.executable, "-m", "lsp_server.cli", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=str(tmp))
    assert proc.stdin is not None
    for message in messages:
        proc.stdin.write(frame(message))
        proc.stdin.flush()
    seen = bytearray()
    if until:
        assert proc.stdout is not None
        reader = threading.Thread(target=lambda: seen.extend(_read_until(proc.stdout, until)), daemon=True)
        reader.start()
        reader.join(timeout=60)
    else:
        time.sleep(2.0)
    proc.stdin.write(frame({"jsonrpc": "2.0", "id": 4, "method": "shutdown"}))
    proc.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
    proc.stdin.flush()
    out, err = proc.communicate(timeout=60)
    return err.decode("utf-8", "replace"), bytes(seen) + out


def _read_until(stream: Any, marker: bytes) -> bytes:
    got = b""
    while marker not in got:
        chunk = stream.read1(65536)
        if not chunk:
            break
        got += chunk
    return got


def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (folder / "app.py").write_text(f"def handler():\n    return '{MARKER}'\n")
    return folder


def test_default_log_level_prints_no_payloads_source_or_registrations(tmp_path: Path) -> None:
    err, out = run_session(project(tmp_path), {}, tmp_path)
    assert MARKER in out.decode("utf-8", "replace")  # the payloads carried the text (query echo)...
    assert MARKER not in err  # ...and none of it reached the log
    assert "pygls" not in err
    assert "Registered" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) <= 3, lines
    assert any("serving" in line and "proj" in line for line in lines)


def test_debug_level_shows_protocol_messages_and_each_feature_registered_once(tmp_path: Path) -> None:
    err, _ = run_session(project(tmp_path), {"CODESEEK_LOG": "DEBUG"}, tmp_path)
    assert "pygls" in err  # the test above can fail: the payload lines exist, only hidden by default
    registered = re.findall(r'Registered "([^"]+)"', err)
    registered += re.findall(r'Command "([^"]+)" is successfully', err)
    assert "textDocument/hover" in registered and "codeseek.status" in registered
    assert sorted(registered) == sorted(set(registered)), registered


def test_home_directory_root_is_refused_with_a_message(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "app.py").write_text("def handler():\n    return 1\n")
    err, out = run_session(home, {"HOME": str(home)}, tmp_path, until=b"home directory")
    assert "not indexing" in out.decode() and "home directory" in out.decode()
    assert not list((tmp_path / "index").glob("**/index.sqlite3"))


def test_a_native_crash_leaves_the_python_stack_of_every_thread_on_stderr(tmp_path: Path) -> None:
    # a crash inside a grammar, tantivy or SQLite kills the process with no Python error: the server
    # enables faulthandler, so the editor's log says where each thread was
    env = {k: v for k, v in os.environ.items() if k != "CODESEEK_LOG"}
    env.update({"PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1",
                "CODESEEK_INDEX_DIR": str(tmp_path / "index")})
    env.pop("PYTHONFAULTHANDLER", None)  # the server must enable it itself
    proc = subprocess.Popen([sys.executable, "-m", "lsp_server.lsp.server"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=str(REPO))
    try:
        time.sleep(3.0)  # imported, logging configured, reading stdin
        assert proc.poll() is None
        proc.send_signal(signal.SIGSEGV)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = err.decode("utf-8", "replace")
    assert proc.returncode == -signal.SIGSEGV
    assert "Fatal Python error: Segmentation fault" in text, text
    assert "Thread 0x" in text or "Current thread 0x" in text, text
