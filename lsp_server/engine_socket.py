"""One running engine shared with `codeseek search`: a Unix domain socket in the root's index folder.

The language server (per root) and the MCP server listen on `<index dir>/engine/sock` (the folder 0700,
the socket 0600; a peer with another uid, read with SO_PEERCRED, is refused; no socket, and a log
line, where the path is too long for one or the platform has no peer credentials). `codeseek search`
finds the socket through the same index folder (`indexing.location`), so a server and the CLI share
one only when they share the index. A socket file left by a killed server refuses connections: the
CLI then searches in its own process and the next server replaces the file. The protocol is one JSON
line each way:

    {"v": 1, "op": "search", "root": ROOT, "code": STAMP, "options": {"embeddings": true,
     "max_span_lines": 60}, "request": {query, limit, preset, intent, include, exclude}}
    {"v": 1, "server": {"kind": "mcp", "pid": N}, "result": {...}}        (the `--json` document)
    {"v": 1, "error": "...", "kind": "request" | "version" | "mismatch" | "busy" | "query" | "internal"}

This module is the transport (`EngineListener`, `ask`) and the request's wording (`search_message`,
`code_stamp`); what a server answers is `lsp_server.engine_share`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import socket
import stat
import struct
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_server.process_tuning import serving

if TYPE_CHECKING:
    from retrievers.engine.request import SearchRequest

log = logging.getLogger("codeseek.share")

PROTOCOL = 1
SOCKET_DIR, SOCKET_NAME = "engine", "sock"
CONNECT_TIMEOUT_S = 0.05  # a live server accepts at once; a stale socket file refuses at once
READ_TIMEOUT_S = 30.0  # the server bounds its own waits (engine_share.READY_WAIT_S); then search here
REQUEST_TIMEOUT_S = 5.0  # the server drops a client whose request line takes longer
MAX_REQUEST_BYTES = 1 << 20
MAX_ANSWER_BYTES = 1 << 28
MAX_CONNECTIONS = 8
# sun_path: 108 bytes on Linux, 104 on the BSDs and macOS, the terminating NUL included.
SUN_PATH_MAX = 107 if sys.platform.startswith("linux") else 103
SEARCH_CODE = ("indexing", "graph", "retrievers")  # the packages whose code makes a result document


def socket_path(index_dir: Path) -> Path:
    return Path(index_dir) / SOCKET_DIR / SOCKET_NAME


def code_stamp() -> str:
    """Names the search code on disk by each module's path, size and mtime (a few ms)."""
    base = Path(__file__).resolve().parents[1]
    digest = hashlib.blake2b(digest_size=8)
    for package in SEARCH_CODE:
        for folder, dirs, files in os.walk(base / package):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(f for f in files if f.endswith(".py")):
                st = os.stat(os.path.join(folder, name))
                digest.update(f"{folder}/{name}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def supported() -> bool:  # Linux: SO_PEERCRED names the peer's uid
    return hasattr(socket, "AF_UNIX") and hasattr(socket, "SO_PEERCRED")


def _peer_uid(conn: socket.socket) -> int:
    """The uid of the process at the other end (Linux SO_PEERCRED: pid, uid, gid)."""
    raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("iII"))
    return int(struct.unpack("iII", raw)[1])


def _too_long(path: Path) -> bool:
    return len(os.fsencode(path)) > SUN_PATH_MAX


def _read_line(conn: socket.socket, limit: int) -> bytes:
    """Bytes up to the first newline (or the end); ValueError past `limit`, ConnectionError if none."""
    parts: list[bytes] = []
    size = 0
    while size <= limit:
        data = conn.recv(65536)
        end = data.find(b"\n")
        if end >= 0 or not data:
            if not data and not size:
                raise ConnectionError("closed before a line")
            return b"".join(parts) + (data[:end] if end >= 0 else b"")
        parts.append(data)
        size += len(data)
    raise ValueError(f"a line longer than {limit} bytes")


def error(message: str, kind: str) -> dict[str, Any]:
    return {"v": PROTOCOL, "error": message, "kind": kind}


# -- the server's transport ---------------------------------------------------------------------------
class EngineListener:
    """Listens on `socket_path(index_dir)`; each connection's one line goes to `answer`, whose dict
    goes back as one line. `start()` is False (and says why in the log) when there can be no socket."""

    def __init__(self, index_dir: Path, answer: Callable[[bytes], dict[str, Any]]) -> None:
        self.path = socket_path(index_dir)
        self.answer = answer
        self._sock: socket.socket | None = None
        self._inode: int | None = None
        self._stop = threading.Event()
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._thread: threading.Thread | None = None

    def start(self) -> bool:
        if not supported():
            log.info("no engine socket: this platform has no Unix sockets with peer credentials")
            return False
        if _too_long(self.path.with_name(f"{SOCKET_NAME}.{os.getpid()}")):
            log.info("no engine socket: its path is longer than a Unix socket allows (%s)", self.path)
            return False
        try:
            self._sock = self._bind()
        except OSError as exc:
            log.info("no engine socket at %s: %s", self.path, exc)
            return False
        if self._sock is None:
            return False
        self._thread = threading.Thread(target=self._accept, name="codeseek-share", daemon=True)
        self._thread.start()
        log.info("sharing the engine on %s", self.path)
        return True

    def _bind(self) -> socket.socket | None:
        folder = self.path.parent
        folder.mkdir(mode=0o700, exist_ok=True)
        st = os.lstat(folder)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            raise OSError(f"{folder} is not a folder of this user")
        if stat.S_IMODE(st.st_mode) != 0o700:
            os.chmod(folder, 0o700)
        if self.path.exists() or self.path.is_symlink():
            if ask_raw(self.path, b"") is not None:  # a live server answers even an empty line
                log.info("no engine socket: another server already answers on %s", self.path)
                return None
        tmp = self.path.with_name(f"{SOCKET_NAME}.{os.getpid()}")
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(str(tmp))
            os.chmod(tmp, 0o600)
            sock.listen(MAX_CONNECTIONS)
            os.replace(tmp, self.path)  # over a stale socket file, atomically
            self._inode = os.lstat(self.path).st_ino
        except BaseException:
            sock.close()
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        sock.settimeout(0.5)  # the accept loop looks at the stop flag this often
        return sock

    def close(self) -> None:
        """Stop listening and remove the socket file (unless another server has replaced it)."""
        self._stop.set()
        sock, self._sock = self._sock, None
        if sock is None:
            return
        sock.close()
        with contextlib.suppress(OSError):
            if os.lstat(self.path).st_ino == self._inode:
                self.path.unlink()
        if self._thread is not None:
            self._thread.join(2.0)

    def _accept(self) -> None:
        while not self._stop.is_set():
            sock = self._sock
            if sock is None:
                return
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stop.is_set():
                    return
                time.sleep(0.1)  # out of file descriptors, say: try again
                continue
            if not self._slots.acquire(blocking=False):
                self._reply(conn, error("too many connections", "busy"))
                continue
            threading.Thread(target=self._serve, args=(conn,), name="codeseek-share-conn",
                             daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(REQUEST_TIMEOUT_S)
            if _peer_uid(conn) != os.getuid():
                log.warning("engine socket: refused a peer of another user")
                conn.close()
                return
            line = _read_line(conn, MAX_REQUEST_BYTES)
        except ValueError as exc:  # too long
            self._reply(conn, error(str(exc), "request"))
        except (OSError, ConnectionError):  # gone, or silent past REQUEST_TIMEOUT_S
            conn.close()
        else:
            self._reply(conn, self._answer(line))
        finally:
            self._slots.release()

    def _answer(self, line: bytes) -> dict[str, Any]:
        try:
            with serving():
                return self.answer(line)
        except Exception as exc:  # never the listener's end: say what failed, serve the next one
            log.exception("engine socket: a request failed")
            return error(f"{type(exc).__name__}: {exc}", "internal")

    @staticmethod
    def _reply(conn: socket.socket, doc: dict[str, Any]) -> None:
        try:
            conn.sendall(json.dumps(doc).encode("ascii") + b"\n")  # \u escapes keep any str exact
        except OSError:
            pass  # the client left
        finally:
            conn.close()


# -- the client ---------------------------------------------------------------------------------------
def ask_raw(path: Path, line: bytes, read_timeout: float = CONNECT_TIMEOUT_S * 4) -> bytes | None:
    """One line to the server at `path` and its one line back; None when no server of this user
    answers there (no file, a stale one, a timeout)."""
    if not supported() or _too_long(path):
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT_S)
        sock.connect(os.fspath(path))
        if _peer_uid(sock) != os.getuid():
            return None
        sock.settimeout(read_timeout)
        sock.sendall(line + b"\n")
        return _read_line(sock, MAX_ANSWER_BYTES)
    except (OSError, ValueError, ConnectionError):
        return None
    finally:
        sock.close()


def ask(index_dir: Path, message: dict[str, Any],
        read_timeout: float = READ_TIMEOUT_S) -> dict[str, Any] | None:
    """`message` to the engine shared on `index_dir`, its answer; None without one."""
    path = socket_path(index_dir)
    if not os.path.exists(path):
        return None
    raw = ask_raw(path, json.dumps(message).encode("ascii"), read_timeout)
    if raw is None:
        return None
    try:
        doc = json.loads(raw)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def search_message(root: Path, embeddings: bool, max_span_lines: int,
                   request: SearchRequest, question_pool: int) -> dict[str, Any]:
    """The request of `codeseek search` with these options (`--no-embed`, `--max-lines`,
    `--question-pool`)."""
    return {"v": PROTOCOL, "op": "search", "root": str(root), "code": code_stamp(),
            "options": {"embeddings": embeddings, "max_span_lines": max_span_lines,
                        "question_pool": question_pool},
            "request": {"query": request.query, "limit": request.limit, "preset": request.preset,
                        "intent": request.intent, "include": list(request.include),
                        "exclude": list(request.exclude)}}
