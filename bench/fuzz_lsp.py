"""Protocol fuzzing of the real language server over stdio: generated malformed messages, counted outcomes.

Starts `python -m lsp_server.lsp.server` on a copy of the sample workspace (tests/workspace/sample, its own
index in a temporary folder, embeddings off), initializes it, then sends `--messages` generated
messages (default 10,000) within `--seconds`:

- framing: random bytes, invalid JSON, JSON values that are not objects, garbled headers;
- envelopes: `jsonrpc` other than "2.0", ids of every wrong type, methods that are not strings,
  params that are scalars, notification methods sent with an id, unknown methods;
- params: valid requests and notifications of every method the server handles, with one field (or
  several) replaced by a random value: huge strings, strings where lists belong, deep nesting, long
  lists, wrong scalar types, lone surrogates, out-of-range numbers; fields removed or added.

Every `--probe-every` messages a valid request (`workspace/symbol`) is sent and must be answered within
`--answer-timeout` seconds. It reports:

- deaths: the server process exited (it is restarted and the run goes on);
- hangs: probes not answered within the timeout, requests with a valid id never answered, and
  messages the server did not read for 3 x the timeout (then it is restarted);
- tracebacks: replies carrying a traceback (`data.traceback` or "Traceback" in the message), and
  tracebacks written to the server log (handler bugs; reported separately);
- error codes: how many replies had each JSON-RPC code; probe latency p50 / max; server RSS at the end.

Target: 0 deaths, 0 hangs, 0 tracebacks in replies.
Usage: `python bench/fuzz_lsp.py [--messages 10000] [--seconds 600] [--seed 1] [--json]`.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "tests" / "workspace" / "sample"
PROBE = {"query": "parse"}
MAX_MESSAGE = 8 * 1024 * 1024  # larger generated messages are drawn again


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Server:
    """The server process, a reader thread collecting its framed replies, and its log."""

    def __init__(self, root: Path, tmp: Path) -> None:
        self.root, self.tmp = root, tmp
        self.log = tmp / "server.log"
        env = {**os.environ, "CODESEEK_INDEX_DIR": str(tmp / "index"), "HF_HUB_OFFLINE": "1",
               "CODESEEK_LOG": "INFO", "PYTHONPATH": str(REPO)}
        server = "lsp_server.lsp.server"
        self.proc = subprocess.Popen([sys.executable, "-m", server, "--log-file", str(self.log)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=env, cwd=str(REPO))
        self.replies: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                elif line in (b"\r\n", b"\n") and length is not None:
                    break
            body = out.read(length)
            try:
                self.replies.put(json.loads(body))
            except ValueError:
                self.replies.put({"unparseable": True})

    def send(self, data: bytes, timeout: float = 60.0) -> str:
        """"ok", "dead" (the pipe is closed) or "stuck" (the server read nothing for `timeout` s)."""
        assert self.proc.stdin is not None
        fd = self.proc.stdin.fileno()
        os.set_blocking(fd, False)
        view, deadline = memoryview(data), time.monotonic() + timeout
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                return "stuck"
            if not select.select([], [fd], [], min(left, 1.0))[1]:
                continue
            try:
                view = view[os.write(fd, view):]
                deadline = time.monotonic() + timeout
            except BlockingIOError:
                continue
            except OSError:  # BrokenPipeError: the server is gone
                return "dead"
        return "ok"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def rss_mb(self) -> float:
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0.0

    def stop(self) -> None:
        if self.alive():
            self.proc.kill()
        self.proc.wait()


class Generator:
    """Malformed messages of every kind, from one seeded random source."""

    def __init__(self, rng: random.Random, root: Path) -> None:
        self.rng = rng
        self.uri = (root / "feedreader" / "parser.py").as_uri()
        self.ids = 0
        pos = {"line": 3, "character": 5}
        doc = {"uri": self.uri}
        rng_ = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}
        item = {"name": "parse_feed", "kind": 12, "uri": self.uri, "range": rng_, "selectionRange": rng_,
                "data": {"root": str(root), "id": 1, "qualified_name": "parse_feed",
                         "path": "feedreader/parser.py", "name_line": 1}}
        self.requests: list[tuple[str, dict[str, Any]]] = [
            ("textDocument/hover", {"textDocument": doc, "position": pos}),
            ("textDocument/references", {"textDocument": doc, "position": pos,
                                         "context": {"includeDeclaration": True}}),
            ("textDocument/prepareCallHierarchy", {"textDocument": doc, "position": pos}),
            ("callHierarchy/incomingCalls", {"item": item}),
            ("callHierarchy/outgoingCalls", {"item": item}),
            ("workspace/symbol", {"query": "parse"}),
            ("workspace/semanticSearch", {"query": "parse a feed", "limit": 5, "preset": "quick",
                                          "include": ["feedreader/**"]}),
            ("workspace/executeCommand", {"command": "codeseek.status", "arguments": []}),
            ("initialize", {"processId": None, "rootUri": None, "capabilities": {}}),
            ("textDocument/definition", {"textDocument": doc, "position": pos}),
        ]
        self.notifications: list[tuple[str, dict[str, Any]]] = [
            ("textDocument/didOpen", {"textDocument": {"uri": self.uri, "languageId": "python", "version": 1,
                                                       "text": "def parse_feed(x):\n    return x\n"}}),
            ("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": 2}, "contentChanges": [
                {"range": rng_, "text": "# edited\n"}]}),
            ("textDocument/didSave", {"textDocument": doc}),
            ("textDocument/didClose", {"textDocument": doc}),
            ("workspace/didChangeWatchedFiles", {"changes": [{"uri": self.uri, "type": 2}]}),
            ("workspace/didChangeWorkspaceFolders", {"event": {"added": [], "removed": []}}),
            ("$/cancelRequest", {"id": 1}),
            ("$/setTrace", {"value": "off"}),
            ("initialized", {}),
        ]

    def next_id(self) -> int:
        self.ids += 1
        return self.ids

    def value(self, depth: int = 0) -> Any:
        r = self.rng
        kind = r.randrange(16 if depth < 3 else 11)
        if kind == 0:
            return None
        if kind == 1:
            return r.choice([True, False])
        if kind == 2:
            return r.choice([0, -1, 1, 2**31, -(2**31) - 1, 2**63, -(2**70), 10**30])
        if kind == 3:
            return r.choice([0.5, -1e308, 1e308, 3.0])
        if kind == 4:
            return "".join(chr(r.randrange(32, 0x2FFF)) for _ in range(r.randrange(20)))
        if kind == 5:
            return r.choice(["x" * 30000, "\udcff\ud800", "file:///etc/passwd", "../../etc", "\x00" * 100,
                             ""])
        if kind == 6:
            return "y" * r.choice([1000, 100_000, 1_000_000])
        if kind in (7, 8):
            return r.choice(["", "file:///", "untitled:x", self.uri + "/../../../../etc/passwd", "a" * 300])
        if kind in (9, 10):
            return r.randrange(-5, 100000)
        if kind == 11:
            return [self.value(depth + 1) for _ in range(r.randrange(5))]
        if kind == 12:
            return {f"k{i}": self.value(depth + 1) for i in range(r.randrange(4))}
        if kind == 13:
            nest: Any = 1
            for _ in range(r.choice([10, 70, 500])):
                nest = [nest]
            return nest
        if kind == 14:
            return [0] * r.choice([1000, 50_000, 250_000])
        return [{"uri": self.uri, "type": r.randrange(5)} for _ in range(r.choice([10, 3000]))]

    def mutate(self, params: Any) -> Any:
        """A deep copy of `params` with one to three random changes."""
        params = json.loads(json.dumps(params))
        for _ in range(self.rng.randrange(1, 4)):
            holder, key = self._pick(params)
            if holder is None:
                return self.value()
            action = self.rng.randrange(10)
            if action == 0 and isinstance(holder, dict):
                holder.pop(key, None)
            elif action == 1 and isinstance(holder, dict):
                holder[f"extra{self.rng.randrange(9)}"] = self.value()
            else:
                holder[key] = self.value()
        return params

    def _pick(self, params: Any) -> tuple[Any, Any]:
        holder, key = None, None
        node = params
        while isinstance(node, (dict, list)) and node:
            keys = list(node) if isinstance(node, dict) else list(range(len(node)))
            k = self.rng.choice(keys)
            holder, key = node, k
            if self.rng.random() < 0.4:
                break
            node = node[k]
        return holder, key

    def message(self) -> tuple[str, bytes, int | None]:
        """(category, bytes to send, id of a request that must be answered or None); at most
        MAX_MESSAGE bytes."""
        while True:
            category, data, msg_id = self._message()
            if len(data) <= MAX_MESSAGE:
                return category, data, msg_id

    def _message(self) -> tuple[str, bytes, int | None]:
        r = self.rng
        kind = r.randrange(100)
        if kind < 4:
            return "random-bytes", frame(bytes(r.randrange(256) for _ in range(r.randrange(1, 200)))), None
        if kind < 8:
            return "invalid-json", frame(r.choice([b"{", b"{'a': 1}", b'{"jsonrpc": "2.0", "id": 1,', b"nul",
                                                   b"[" * 5000 + b"]" * 5000])), None
        if kind < 11:
            return "not-an-object", frame(json.dumps(self.value()).encode()), None
        if kind < 14:
            garbled = r.choice([b"Content-Length: abc\r\n\r\n{}", b"Content-Length: 99999999999\r\n\r\n",
                                b"Content-Type: x\r\n\r\n", b"\r\n\r\n\r\n",
                                b"Content-Length: 5\r\n\r\n{}{}{"])
            return "garbled-header", garbled, None
        if kind < 30:
            method, params = r.choice(self.requests)
            doc: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id(), "method": method, "params": params}
            field = r.choice(["jsonrpc", "id", "method", "params", "drop-jsonrpc", "notification-id"])
            if field == "drop-jsonrpc":
                doc.pop("jsonrpc")
            elif field == "notification-id":
                doc["method"], doc["params"] = r.choice(self.notifications)
            elif field == "id":
                doc["id"] = r.choice([None, 1.5, True, {"a": 1}, [1], "z" * 1000, -(2**70)])
            else:
                doc[field] = self.value()
            valid_id = isinstance(doc.get("id"), int) and not isinstance(doc.get("id"), bool) \
                and abs(doc["id"]) < 2**63
            return "envelope", frame(json.dumps(doc).encode()), doc["id"] if valid_id else None
        if kind < 70:
            method, params = r.choice(self.requests[:-2])
            msg_id = self.next_id()
            doc = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": self.mutate(params)}
            return "request-params", frame(json.dumps(doc).encode()), msg_id
        if kind < 95:
            method, params = r.choice(self.notifications)
            doc = {"jsonrpc": "2.0", "method": method, "params": self.mutate(params)}
            return "notification-params", frame(json.dumps(doc).encode()), None
        msg_id = self.next_id()
        doc = {"jsonrpc": "2.0", "id": msg_id, "method": f"codeseek/{self.value()!s:.40}", "params": {}}
        return "unknown-method", frame(json.dumps(doc).encode()), msg_id


def is_traceback(reply: dict[str, Any]) -> bool:
    error = reply.get("error")
    if not isinstance(error, dict):
        return False
    data = error.get("data")
    return (isinstance(data, dict) and "traceback" in data) or "Traceback" in str(error.get("message"))


class Fuzz:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.tmp = Path(tempfile.mkdtemp(prefix="codeseek-fuzz-"))
        self.root = self.tmp / "sample"
        shutil.copytree(SAMPLE, self.root)
        self.gen = Generator(random.Random(args.seed), self.root)
        self.codes: Counter[int] = Counter()
        self.sent: Counter[str] = Counter()
        self.pending: dict[Any, float] = {}
        self.deaths = self.hangs = self.stuck = self.tracebacks = self.answers = 0
        self.probe_ms: list[float] = []
        self.server = self.start()

    def start(self) -> Server:
        server = Server(self.root, self.tmp)
        init = {"processId": None, "rootUri": self.root.as_uri(), "capabilities": {},
                "initializationOptions": {"embeddings": False}}
        server.send(frame(json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize",
                                      "params": init}).encode()))
        server.send(frame(b'{"jsonrpc": "2.0", "method": "initialized", "params": {}}'))
        self.wait_for(server, "init", 60)
        return server

    def collect(self, reply: dict[str, Any]) -> None:
        self.answers += 1
        if isinstance(reply.get("id"), (int, str)):  # an old server may echo any id back
            self.pending.pop(reply["id"], None)
        if isinstance(reply.get("error"), dict):
            code = reply["error"].get("code")
            self.codes[code if isinstance(code, int) else 0] += 1
        if is_traceback(reply):
            self.tracebacks += 1

    def wait_for(self, server: Server, msg_id: Any, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                reply = server.replies.get(timeout=min(0.2, max(deadline - time.monotonic(), 0.01)))
            except queue.Empty:
                if not server.alive():
                    return False
                continue
            if "method" in reply:  # a server request or notification: not an answer
                continue
            self.collect(reply)
            if reply.get("id") == msg_id:
                return True
        return False

    def probe(self, n: int) -> None:
        msg_id = f"probe-{n}"
        started = time.monotonic()
        self.server.send(frame(json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "workspace/symbol",
                                           "params": PROBE}).encode()))
        if self.wait_for(self.server, msg_id, self.args.answer_timeout):
            self.probe_ms.append((time.monotonic() - started) * 1000)
            return
        if not self.server.alive():
            self.died()
            return
        self.hangs += 1
        if not self.wait_for(self.server, msg_id, 30):  # stuck for good: start over
            self.server.stop()
            self.died()

    def died(self) -> None:
        self.deaths += 1
        self.restart()

    def restart(self) -> None:
        self.pending.clear()
        self.server = self.start()

    def run(self) -> dict[str, Any]:
        started = time.monotonic()
        sent = 0
        while sent < self.args.messages and time.monotonic() - started < self.args.seconds:
            category, data, msg_id = self.gen.message()
            outcome = self.server.send(data, self.args.answer_timeout * 3)
            if outcome == "dead":
                self.died()
                continue
            if outcome == "stuck":  # it stopped reading: a hang; start over
                self.stuck += 1
                self.server.stop()
                self.restart()
                continue
            sent += 1
            self.sent[category] += 1
            if msg_id is not None:
                self.pending[msg_id] = time.monotonic()
            while not self.server.replies.empty():
                reply = self.server.replies.get()
                if "method" not in reply:
                    self.collect(reply)
            if sent % self.args.probe_every == 0:
                self.probe(sent)
        self.probe(sent + 1)
        deadline = time.monotonic() + self.args.answer_timeout
        while self.pending and time.monotonic() < deadline:
            self.wait_for(self.server, object(), 0.5)
        unanswered = len(self.pending)
        rss = self.server.rss_mb()
        self.server.send(frame(b'{"jsonrpc": "2.0", "id": "bye", "method": "shutdown"}'))
        self.wait_for(self.server, "bye", 10)
        self.server.send(frame(b'{"jsonrpc": "2.0", "method": "exit"}'))
        try:
            exit_status: int | None = self.server.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            exit_status = None
        self.server.stop()
        log = (self.tmp / "server.log").read_text(errors="replace")
        if self.args.keep_log:
            shutil.copy(self.tmp / "server.log", self.args.keep_log)
        shutil.rmtree(self.tmp, ignore_errors=True)
        return {
            "messages": sent, "seconds": round(time.monotonic() - started, 1), "by_category": dict(self.sent),
            "answers": self.answers, "deaths": self.deaths, "hangs": self.hangs + unanswered + self.stuck,
            "late_probes": self.hangs, "unanswered_requests": unanswered, "stopped_reading": self.stuck,
            "tracebacks_in_replies": self.tracebacks, "tracebacks_in_log": log.count("Traceback"),
            "error_codes": dict(sorted(self.codes.items())),
            "probe_ms_p50": round(statistics.median(self.probe_ms), 1) if self.probe_ms else None,
            "probe_ms_max": round(max(self.probe_ms), 1) if self.probe_ms else None,
            "rss_mb_end": round(rss, 1), "exit_status": exit_status,
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=600.0, help="stop sending after this long")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--probe-every", type=int, default=50)
    parser.add_argument("--answer-timeout", type=float, default=10.0)
    parser.add_argument("--keep-log", default=None, metavar="FILE", help="copy the server log here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = Fuzz(args).run()
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key:24} {value}")
    ok = report["deaths"] == 0 and report["hangs"] == 0 and report["tracebacks_in_replies"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
