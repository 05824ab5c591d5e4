"""End-to-end: malformed input. Wrong and missing params, garbage JSON-RPC bytes, a search while the
index is being built, a cancelled request, a file deleted while open. The server answers each with an
error or a sane result, and the next valid request succeeds."""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcMethodNotFound
from pytest_lsp import LanguageClient

from tests.e2e import lsp_support as S

PARSER = "feedreader/parser.py"
INVALID_PARAMS = -32602


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[LanguageClient, Path]]:
    async with S.served_sample(tmp_path_factory.mktemp("lsp-malformed")) as served:
        yield served


BAD_SEARCHES: list[tuple[Any, str]] = [
    (None, "params must be an object"),
    ([1, 2], "params must be an object"),
    ({}, "query is required"),
    ({"query": ""}, "query is empty"),
    ({"query": "   \x00  "}, "query is empty"),
    ({"query": 42}, "query must be a string"),
    ({"query": "x", "limit": 0}, "limit must be between 1 and 200"),
    ({"query": "x", "limit": 500}, "limit must be between 1 and 200"),
    ({"query": "x", "limit": "5"}, "limit must be an integer"),
    ({"query": "x", "limit": True}, "limit must be an integer"),
    ({"query": "x", "preset": "fastest"}, "unknown preset 'fastest'"),
    ({"query": "x", "preset": 3}, "preset must be a string"),
    ({"query": "x", "intent": "guess"}, "unknown intent 'guess'"),
    ({"query": "x", "include": "src/**"}, "include must be a list of glob strings"),
    ({"query": "x", "include": [3]}, "include must be a list of glob strings"),
    ({"query": "x", "include": ["../outside/**"]}, "escapes the workspace root"),
    ({"query": "x", "exclude": ["/etc/**"]}, "is absolute"),
    ({"query": "x", "limt": 5}, "unknown parameter(s) limt"),
]


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(("params", "message"), BAD_SEARCHES)
async def test_invalid_search_params_are_invalid_params(served: tuple[LanguageClient, Path], params: Any,
                                                        message: str) -> None:
    client, _ = served
    with pytest.raises(JsonRpcInvalidParams) as caught:
        await S.search(client, params)
    assert caught.value.code == INVALID_PARAMS
    assert message in caught.value.message
    ok = await S.search(client, {"query": "parse_feed", "limit": 1})
    assert [r["symbol"] for r in ok["results"]] == ["parse_feed"]


@pytest.mark.asyncio(loop_scope="module")
async def test_wrong_and_missing_params_of_standard_requests(served: tuple[LanguageClient, Path]) -> None:
    client, root = served
    parser_uri = S.uri(root, PARSER)
    for method, params, words in [
        (lsp.TEXT_DOCUMENT_REFERENCES, {"textDocument": {"uri": parser_uri}}, "position"),
        (lsp.TEXT_DOCUMENT_HOVER, {"textDocument": 1, "position": {"line": 0, "character": 0}},
         "$.params.textDocument.uri"),
        (lsp.CALL_HIERARCHY_INCOMING_CALLS, {"item": {"name": "x"}}, "item"),
    ]:
        with pytest.raises(JsonRpcInvalidParams) as caught:
            await S.raw_request(client, method, params)
        assert caught.value.message.startswith(f"invalid params for {method}:")
        assert words in caught.value.message
    # A number where a string belongs is read as its text, as lsprotocol's converter does.
    assert await S.raw_request(client, lsp.WORKSPACE_SYMBOL, {"query": 5}) == []
    with pytest.raises(JsonRpcMethodNotFound):
        await S.raw_request(client, "codeseek/noSuchMethod", {})
    bad_commands: list[tuple[str, list[Any], str]] = [
        ("codeseek.nope", [], "not defined"),
        ("codeseek.status", [42], "root URI"),
        ("codeseek.reindex", ["file:///not/a/folder"], "not a workspace folder")]
    for command, args, words in bad_commands:
        with pytest.raises(JsonRpcException) as failed:
            await client.workspace_execute_command_async(
                lsp.ExecuteCommandParams(command=command, arguments=args))
        assert failed.value.code == INVALID_PARAMS and words in failed.value.message
    # Sane empty answers: a position past the end, whitespace, another scheme, an unknown item.
    hover = client.text_document_hover_async
    assert await hover(lsp.HoverParams(text_document=S.doc_id(root, PARSER),
                                       position=lsp.Position(line=9999, character=0))) is None
    assert await hover(lsp.HoverParams(text_document=S.doc_id(root, PARSER),
                                       position=lsp.Position(line=1, character=0))) is None
    assert await hover(lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri="untitled:Untitled-1"),
                                       position=lsp.Position(line=0, character=0))) is None
    ghost = lsp.CallHierarchyItem(name="ghost", kind=lsp.SymbolKind.Function, uri=parser_uri,
                                  range=S.lsp_range(0, 0, 1, 0), selection_range=S.lsp_range(0, 0, 0, 5),
                                  data={"id": 99999, "qualified_name": "ghost", "path": PARSER})
    assert await client.call_hierarchy_incoming_calls_async(
        lsp.CallHierarchyIncomingCallsParams(item=ghost)) is None
    refs = await S.references(client, root, PARSER, "def parse_date(", "parse_date", False)
    assert refs is not None and len(refs) == 5  # still serving


def _frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _message(msg_id: int | None, method: str, params: Any) -> bytes:
    doc: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if msg_id is not None:
        doc["id"] = msg_id
    return _frame(json.dumps(doc).encode())


class RawReader:
    """Reads framed messages from the server's stdout with a deadline."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self.proc = proc
        self.fd = proc.stdout.fileno()
        self.buffer = b""

    def send(self, data: bytes) -> None:
        """Write raw bytes to the server's stdin."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def _fill(self, deadline: float) -> None:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([self.fd], [], [], max(left, 0))
        if not ready:
            raise TimeoutError("no answer from the server")
        chunk = os.read(self.fd, 65536)
        if not chunk:
            raise EOFError("server closed stdout")
        self.buffer += chunk

    def next(self, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self.buffer:
            self._fill(deadline)
        head, _, rest = self.buffer.partition(b"\r\n\r\n")
        length = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
        while len(rest) < length:
            self.buffer = head + b"\r\n\r\n" + rest
            self._fill(deadline)
            head, _, rest = self.buffer.partition(b"\r\n\r\n")
        self.buffer = rest[length:]
        message: dict[str, Any] = json.loads(rest[:length])
        return message

    def response(self, msg_id: int | None, timeout: float = 30.0) -> dict[str, Any]:
        """The next response (or error) with this id; notifications in between are skipped."""
        while True:
            message = self.next(timeout)
            if "method" not in message and message.get("id") == msg_id:
                return message


def _raw_server(tmp_path: Path, *args: str, **env: str) -> tuple[subprocess.Popen[bytes], RawReader]:
    """The real server on pipes (stderr dropped, its index under `tmp_path`) and a reader of its stdout."""
    proc = subprocess.Popen([*S.SERVER_CMD, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=S.server_env(tmp_path / "index", **env),
                            cwd=str(S.REPO))
    return proc, RawReader(proc)


def test_garbage_json_rpc_bytes(tmp_path: Path) -> None:
    root = S.copy_sample(tmp_path)
    proc, reader = _raw_server(tmp_path)
    send = reader.send
    try:
        send(_message(1, "initialize", {"processId": None, "rootUri": S.uri(root, ""), "capabilities": {},
                                        "initializationOptions": {"embeddings": False}}))
        assert "capabilities" in reader.response(1)["result"]
        send(_message(None, "initialized", {}))
        send(_frame(b"{this is not json"))
        assert reader.response(None)["error"]["code"] == -32700
        send(_frame(b"[1, 2, 3]"))
        assert reader.response(None)["error"]["code"] == -32600
        send(_frame(b'{"jsonrpc": "2.0", "id": 2, "method": "workspace/semanticSearch", "params": {"quer'
                    b'\xff\xfe"}}'))  # invalid UTF-8
        assert reader.response(None)["error"]["code"] == -32700
        send(b"Content-Length: abc\r\n\r\n" + json.dumps({"jsonrpc": "2.0", "id": 3, "method": "x"}).encode())
        send(b"Content-Length: 10\r\n\r\n" + json.dumps({"jsonrpc": "2.0", "id": 4, "method": "y"}).encode())
        assert reader.response(None)["error"]["code"] == -32700  # the first 10 bytes of message 4
        send(_message(5, "workspace/semanticSearch", {"query": ""}))
        error = reader.response(5)["error"]
        assert error["code"] == INVALID_PARAMS and "query is empty" in error["message"]
        send(_message(6, "textDocument/hover", {"textDocument": 1, "position": {"line": 0, "character": 0}}))
        assert reader.response(6)["error"]["code"] == INVALID_PARAMS
        send(_message(7, "codeseek/unknown", {}))
        assert reader.response(7)["error"]["code"] == -32601
        deadline = time.monotonic() + 60
        while True:  # search works once phase 1 is done; before that it says the index state
            send(_message(8, "workspace/semanticSearch", {"query": "parse_feed", "limit": 1}))
            answer = reader.response(8)["result"]
            if answer["results"] or time.monotonic() > deadline:
                break
            assert answer["index"]["state"] in ("starting", "indexing")
            time.sleep(0.2)
        assert [r["symbol"] for r in answer["results"]] == ["parse_feed"]
        send(_message(9, "shutdown", None))
        assert reader.response(9)["result"] is None
        send(_message(None, "exit", None))
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _big_workspace(root: Path, files: int) -> None:
    for i in range(files):
        package = root / f"pkg{i // 100}"
        package.mkdir(parents=True, exist_ok=True)
        (package / f"mod{i}.py").write_text(
            f'"""Module {i}."""\n\n\ndef compute_{i}(values: list[int]) -> int:\n'
            f'    """Sum of the values times {i}."""\n    return sum(values) * {i}\n\n\n'
            f"def report_{i}(values: list[int]) -> str:\n    return str(compute_{i}(values))\n")


async def test_search_during_indexing_and_cancel(tmp_path: Path) -> None:
    root = tmp_path / "big"
    _big_workspace(root, 1500)
    client = await S.start(root, tmp_path / "index")
    try:
        early = await S.search(client, {"query": "compute_1234"})
        assert early["index"]["state"] in ("starting", "indexing")
        assert isinstance(early["results"], list)
        status = await S.wait_state(client, ("text-only",), timeout=180)
        assert status["roots"][0]["files"] == 1500
        found = await S.search(client, {"query": "compute_1234"})
        top = found["results"][0]
        assert (top["path"], top["symbol"]) == ("pkg12/mod1234.py", "compute_1234")
        # $/cancelRequest: the request is answered with RequestCancelled and the server keeps serving.
        # The cancel races the answer (a fast machine may answer first: pygls then logs an unknown id),
        # so a few tries are allowed; a server that never cancels fails all of them.
        codes = []
        for _ in range(5):
            future = client.protocol.send_request("workspace/symbol", lsp.WorkspaceSymbolParams(query=""))
            msg_id = next(k for k, v in client.protocol._request_futures.items() if v is future)
            client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))
            try:
                await asyncio.wrap_future(future)
            except JsonRpcException as exc:
                codes.append(exc.code)
                break
        assert codes == [-32800]
        again = await S.search(client, {"query": "report_7", "limit": 1})
        assert again["results"][0]["symbol"] == "report_7"
    finally:
        await S.stop(client)


async def test_file_deleted_while_open(tmp_path: Path) -> None:
    async with S.served_sample(tmp_path) as (client, root):
        S.open_doc(client, root, PARSER)
        pos = S.position_of(root, PARSER, "def parse_date(", "parse_date")
        (root / PARSER).unlink()
        client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
            lsp.FileEvent(uri=S.uri(root, PARSER), type=lsp.FileChangeType.Deleted)]))
        await S.wait_state(client, ("text-only",))
        # The open buffer still holds the file: it stays searchable and navigable.
        kept = await S.search(client, {"query": "parse_date", "limit": 1})
        assert (kept["results"][0]["path"], kept["results"][0]["symbol"]) == (PARSER, "parse_date")
        hover = await client.text_document_hover_async(lsp.HoverParams(text_document=S.doc_id(root, PARSER),
                                                                       position=pos))
        assert hover is not None and "parse_date" in str(hover.contents)
        client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=S.doc_id(root, PARSER)))
        status = await S.wait_state(client, ("text-only",))
        assert status["roots"][0]["files"] == 8
        gone = await S.search(client, {"query": "parse_date"})
        assert all(r["path"] != PARSER for r in gone["results"])
        assert await client.text_document_hover_async(lsp.HoverParams(
            text_document=S.doc_id(root, PARSER), position=pos)) is None
        refs = await client.text_document_references_async(lsp.ReferenceParams(
            text_document=S.doc_id(root, PARSER), position=pos,
            context=lsp.ReferenceContext(include_declaration=True)))
        assert not refs
        symbols = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="build_digest"))
        assert symbols and symbols[0].name == "build_digest"


def test_hostile_requests_get_answers_without_tracebacks_and_exit_status(tmp_path: Path) -> None:
    """Issue 13 items 1-2 against the real server: each request gets an answer with a spec code, no
    reply or log line carries a traceback, and `exit` without `shutdown` ends the process with 1."""
    root = S.copy_sample(tmp_path)
    log_file = tmp_path / "server.log"
    proc, reader = _raw_server(tmp_path, "--log-file", str(log_file), CODESEEK_LOG="INFO")
    send = reader.send
    try:
        send(_message(1, "workspace/symbol", {"query": "x"}))
        assert reader.response(1)["error"]["code"] == -32002
        send(_message(2, "initialize", {"processId": None, "rootUri": S.uri(root, ""), "capabilities": {},
                                        "initializationOptions": {"embeddings": False}}))
        assert "capabilities" in reader.response(2)["result"]
        send(_message(None, "initialized", {}))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # phase 1 done: the call graph answers
            send(_message(3, "workspace/symbol", {"query": "parse_date"}))
            if reader.response(3)["result"]:
                break
            time.sleep(0.2)
        item = {"name": "parse_date", "kind": 12, "uri": S.uri(root, PARSER),
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
                "selectionRange": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}}
        answers = {}
        for msg_id, bad in enumerate(["x", [1], {"a": 1}, None], start=10):
            data = {"qualified_name": "parse_date", "path": PARSER, "name_line": bad}
            send(_message(msg_id, "callHierarchy/incomingCalls", {"item": {**item, "data": data}}))
            answers[msg_id] = reader.response(msg_id)
        assert all("result" in a and a["result"] for a in answers.values()), answers
        for msg_id, doc in [(20, {"jsonrpc": "2.0", "id": 20, "method": 5}),
                            (None, {"jsonrpc": "2.0", "id": {"x": 1}, "method": "shutdown"}),
                            (21, {"jsonrpc": "1.0", "id": 21, "method": "shutdown"}),
                            (22, {"jsonrpc": "2.0", "id": 22, "method": "$/setTrace",
                                  "params": {"value": "off"}}),
                            (23, {"jsonrpc": "2.0", "id": 23, "method": "workspace/semanticSearch",
                                  "params": {"query": ""}})]:
            send(_frame(json.dumps(doc).encode()))
            error = reader.response(msg_id)["error"]
            assert error["code"] in (-32600, -32602) and "data" not in error
        send(_message(None, "exit", None))
        assert proc.wait(timeout=30) == 1
        assert "Traceback" not in log_file.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
