"""The shared engine's transport (`lsp_server.engine_socket`): one JSON line each way on a Unix socket
in the index folder, private modes, peers of other users refused, stale and too-long paths, a second
server, errors that never end the listener."""

from __future__ import annotations

import json
import logging
import os
import socket
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsp_server import engine_socket as es


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    path = tmp_path / "ix"
    path.mkdir()
    return path


def echo(line: bytes) -> dict[str, Any]:
    return {"v": es.PROTOCOL, "echo": line.decode()}


@pytest.fixture
def listener(index_dir: Path) -> Iterator[es.EngineListener]:
    served = es.EngineListener(index_dir, echo)
    assert served.start()
    yield served
    served.close()


def stale_socket(path: Path) -> None:
    """A socket file no process listens on (what a killed server leaves)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()


def raw(path: Path, data: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(5)
        conn.connect(str(path))
        chunks = []
        try:
            conn.sendall(data)
        except BrokenPipeError:  # closed on before all of it was sent (a refused peer): read what came
            pass
        try:
            while chunk := conn.recv(65536):
                chunks.append(chunk)
        except ConnectionResetError:  # closed with our bytes unread
            pass
    return b"".join(chunks)


def test_one_line_each_way_on_a_private_socket(index_dir: Path, listener: es.EngineListener) -> None:
    path = es.socket_path(index_dir)
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert stat.S_ISSOCK(os.lstat(path).st_mode) and stat.S_IMODE(os.lstat(path).st_mode) == 0o600
    sent = {"q": "ünïcode \udcff"}  # a lone surrogate too (an undecodable file name): exact both ways
    assert json.loads(es.ask(index_dir, sent)["echo"]) == sent  # type: ignore[index]
    listener.close()
    assert not path.exists()  # removed on exit
    assert es.ask(index_dir, {"q": 1}) is None


def test_a_stale_socket_is_ignored_then_replaced(index_dir: Path) -> None:
    path = es.socket_path(index_dir)
    stale_socket(path)
    started = time.monotonic()
    assert es.ask(index_dir, {"q": 1}) is None  # connect refused: no wait
    assert time.monotonic() - started < 0.5
    served = es.EngineListener(index_dir, echo)
    try:
        assert served.start()
        assert es.ask(index_dir, {"q": 2}) == {"v": 1, "echo": '{"q": 2}'}
    finally:
        served.close()


def test_a_second_server_leaves_the_first_ones_socket(index_dir: Path, listener: es.EngineListener) -> None:
    second = es.EngineListener(index_dir, lambda line: {"second": True})
    assert not second.start()
    second.close()
    assert es.ask(index_dir, {"q": 1}) == {"v": 1, "echo": '{"q": 1}'}


def test_closing_leaves_a_socket_another_server_put_there(index_dir: Path,
                                                          listener: es.EngineListener) -> None:
    path = es.socket_path(index_dir)
    other = path.with_name("other")
    stale_socket(other)
    os.replace(other, path)
    listener.close()
    assert path.exists()


def test_a_path_too_long_for_a_socket_means_none(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    deep = tmp_path / ("d" * 120)
    deep.mkdir()
    with caplog.at_level(logging.INFO, logger="codeseek.share"):
        assert not es.EngineListener(deep, echo).start()
    assert "longer than a Unix socket allows" in caplog.text
    assert not (deep / es.SOCKET_DIR).exists()
    assert es.ask(deep, {"q": 1}) is None


def test_a_peer_of_another_user_is_refused(index_dir: Path, listener: es.EngineListener,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    real = es._peer_uid
    monkeypatch.setattr(es, "_peer_uid", lambda conn: real(conn) + 1)
    assert raw(es.socket_path(index_dir), b'{"q": 1}\n') == b""  # closed without an answer
    monkeypatch.setattr(es, "_peer_uid", real)
    assert es.ask(index_dir, {"q": 1}) is not None  # and the listener serves on


def test_an_overlong_request_gets_an_error_line(index_dir: Path, listener: es.EngineListener,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(es, "MAX_REQUEST_BYTES", 1000)
    answer = json.loads(raw(es.socket_path(index_dir), b"x" * 70000))
    assert answer["kind"] == "request" and "longer than 1000 bytes" in answer["error"]


def test_a_failing_answer_is_an_internal_error_and_serving_goes_on(index_dir: Path) -> None:
    calls: list[bytes] = []

    def answer(line: bytes) -> dict[str, Any]:
        calls.append(line)
        if len(calls) == 1:
            raise RuntimeError("boom")
        return {"ok": True}

    served = es.EngineListener(index_dir, answer)
    assert served.start()
    try:
        assert es.ask(index_dir, {"q": 1}) == {"v": 1, "error": "RuntimeError: boom", "kind": "internal"}
        assert es.ask(index_dir, {"q": 2}) == {"ok": True}
    finally:
        served.close()


def test_a_client_that_sends_nothing_does_not_stop_others(index_dir: Path,
                                                          listener: es.EngineListener) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as silent:
        silent.connect(str(es.socket_path(index_dir)))
        assert es.ask(index_dir, {"q": 1}) == {"v": 1, "echo": '{"q": 1}'}


def test_the_code_stamp_follows_the_search_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "site" / "lsp_server" / "engine_socket.py"
    (tmp_path / "site" / "retrievers").mkdir(parents=True)
    fake.parent.mkdir()
    module = tmp_path / "site" / "retrievers" / "x.py"
    module.write_text("a = 1\n")
    monkeypatch.setattr(es, "__file__", str(fake))
    before = es.code_stamp()
    assert es.code_stamp() == before
    module.write_text("a = 22\n")
    assert es.code_stamp() != before
