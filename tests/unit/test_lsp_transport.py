"""JSON-RPC framing and hardening: resynchronising after bad headers, answering bad bodies."""

from __future__ import annotations

import asyncio
import io
import json
import os
import threading
from typing import Any

from lsp_server.lsp.handlers import create_server
from lsp_server.lsp.transport import MAX_LINE, BoundedStdinReader, PipeReader, read_messages, stdin_reader


class Reader:
    """An in-memory async reader over bytes (what StdinAsyncReader gives the loop)."""

    def __init__(self, data: bytes) -> None:
        self.stream = io.BytesIO(data)

    async def readline(self) -> bytes:
        return self.stream.readline()

    async def readexactly(self, n: int) -> bytes:
        return self.stream.read(n)


class Writer:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        pass

    def messages(self) -> list[dict[str, Any]]:
        out, rest = [], self.data
        while rest:
            head, _, rest = rest.partition(b"\r\n\r\n")
            length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            out.append(json.loads(rest[:length]))
            rest = rest[length:]
        return out


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


INIT = frame(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                         "params": {"processId": None, "rootUri": None, "capabilities": {}}}).encode())


def run(data: bytes, initialize: bool = True) -> list[dict[str, Any]]:
    """Feed `data` to a fresh server (after an `initialize`, whose answer is left out)."""
    server = create_server()
    writer = Writer()
    server.protocol.set_writer(writer)

    async def main() -> None:
        await read_messages(threading.Event(), Reader((INIT if initialize else b"") + data),
                            server.protocol)  # type: ignore[arg-type]
        await asyncio.sleep(0.05)  # let handler tasks answer

    asyncio.run(main())
    return [m for m in writer.messages() if not (initialize and m.get("id") == 0 and "result" in m)]


def request(msg_id: int, method: str, params: Any) -> bytes:
    return frame(json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode())


def test_parse_error_then_next_message_is_served() -> None:
    out = run(frame(b"{nope") + request(2, "shutdown", None))
    assert out[0]["id"] is None and out[0]["error"]["code"] == -32700
    assert out[1] == {"jsonrpc": "2.0", "id": 2, "result": None}


def test_resynchronises_after_a_garbled_header_and_a_short_length() -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "x"}).encode()
    data = (b"Content-Length: abc\r\n\r\n" + body + b"Content-Length: 7\r\n\r\n" + body
            + request(3, "shutdown", None))
    out = run(data)
    assert [m.get("id") for m in out] == [None, 3]
    assert out[0]["error"]["code"] == -32700


def test_not_a_message_and_bad_params() -> None:
    out = run(frame(b"[1, 2]") + frame(b'{"id": 5, "method": "shutdown"}')
              + request(6, "textDocument/hover", {"textDocument": {"uri": 3}}))
    assert [(m["id"], m["error"]["code"]) for m in out] == [(None, -32600), (5, -32600), (6, -32602)]
    assert "$.params.position" in out[2]["error"]["message"]


def test_custom_request_params_stay_plain_json() -> None:
    out = run(request(9, "workspace/semanticSearch", {"query": "x", "type_name": 1}))
    assert out[0]["error"]["code"] == -32602
    assert "unknown parameter(s) type_name" in out[0]["error"]["message"]


def raw(doc: dict[str, Any]) -> bytes:
    return frame(json.dumps(doc).encode())


def codes(out: list[dict[str, Any]]) -> list[tuple[Any, int]]:
    return [(m["id"], m["error"]["code"]) for m in out]


def test_every_request_is_answered_with_a_spec_code() -> None:
    """Issue 13 item 1: requests that used to get no answer at all."""
    out = run(raw({"jsonrpc": "1.0", "id": 1, "method": "workspace/symbol", "params": {"query": "x"}})
              + raw({"jsonrpc": 2, "id": 2, "method": "workspace/symbol", "params": {"query": "x"}})
              + raw({"jsonrpc": "2.0", "id": 3, "method": "$/setTrace", "params": {"value": "off"}})
              + raw({"jsonrpc": "2.0", "id": 4, "method": "$/cancelRequest", "params": {"id": 1}})
              + raw({"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": {"capabilities": {}}})
              + request(6, "shutdown", None)
              + request(7, "workspace/symbol", {"query": "x"})
              + request(8, "shutdown", None))
    assert codes([m for m in out if "error" in m]) == [(1, -32600), (2, -32600), (3, -32600), (4, -32600),
                                                       (5, -32600), (7, -32600), (8, -32600)]
    assert [m for m in out if "result" in m] == [{"jsonrpc": "2.0", "id": 6, "result": None}]
    assert "after shutdown" in out[-1]["error"]["message"]


def test_requests_before_initialize_are_not_served() -> None:
    out = run(request(1, "workspace/symbol", {"query": "x"}) + request(2, "shutdown", None)
              + raw({"jsonrpc": "2.0", "method": "initialized", "params": {}}), initialize=False)
    assert codes(out) == [(1, -32002), (2, -32002)]


def test_invalid_envelopes_get_invalid_request_without_traceback() -> None:
    """Issue 13 item 2: these were -32603 internal errors carrying a traceback."""
    out = run(raw({"jsonrpc": "2.0", "id": 1, "method": 5, "params": {}})
              + raw({"jsonrpc": "2.0", "id": {"a": 1}, "method": "workspace/symbol",
                     "params": {"query": "x"}})
              + raw({"jsonrpc": "2.0", "id": [1], "method": "shutdown"})
              + raw({"jsonrpc": "2.0", "id": 1.5, "method": "shutdown"})
              + raw({"jsonrpc": "2.0", "id": 2, "method": "workspace/symbol", "params": 7})
              + raw({"jsonrpc": "2.0", "id": 3, "method": "callHierarchy/incomingCalls", "params": {"item": {
                  "name": "f", "kind": 12, "uri": "file:///nowhere/x.py", "data": {"name_line": "x"},
                  "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
                  "selectionRange": {"start": {"line": 0, "character": 0},
                                     "end": {"line": 0, "character": 1}}}}}))
    assert codes(out[:5]) == [(1, -32600), (None, -32600), (None, -32600), (None, -32600), (2, -32602)]
    assert out[5] == {"jsonrpc": "2.0", "id": 3, "result": None}
    assert all("data" not in m.get("error", {}) for m in out)


def test_a_handler_bug_is_answered_without_traceback() -> None:
    server = create_server()

    def broken(ls: Any, params: Any) -> None:
        raise TypeError("unhashable type: 'dict' in /home/user/secret/path.py")

    server.feature("codeseek/broken")(broken)
    writer = Writer()
    server.protocol.set_writer(writer)

    async def main() -> None:
        await read_messages(threading.Event(), Reader(INIT + request(1, "codeseek/broken", {})),
                            server.protocol)  # type: ignore[arg-type]
        await asyncio.sleep(0.05)

    asyncio.run(main())
    error = writer.messages()[-1]["error"]
    assert error["code"] == -32603 and "data" not in error
    assert error["message"].startswith("internal error: TypeError")


def test_oversized_and_mistyped_notifications_cost_little() -> None:
    """Issue 13 item 3: a string of 30,000 characters where a list belongs froze the server for
    9-34 s (every character was validated and its error formatted); now the first bad field stops the
    structuring. Deep nesting and huge lists are refused by size before any structuring."""
    bad = [raw({"jsonrpc": "2.0", "method": "workspace/didChangeWatchedFiles",
                "params": {"changes": "x" * 30000}}),
           raw({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
               "textDocument": {"uri": "file:///a.py", "version": 1}, "contentChanges": "x" * 30000}}),
           raw({"jsonrpc": "2.0", "method": "workspace/didChangeWorkspaceFolders",
                "params": {"event": {"added": "x" * 30000, "removed": []}}})]
    deep = b"[" * 100 + b"]" * 100
    wide = {"query": "x", "pad": [0] * 300_000}
    out = run(b"".join(bad * 20) + frame(b'{"jsonrpc": "2.0", "id": 1, "method": "workspace/symbol", '
                                         b'"params": {"query": ' + deep + b"}}")
              + raw({"jsonrpc": "2.0", "id": 2, "method": "workspace/symbol", "params": wide})
              + request(3, "shutdown", None))
    assert codes(out[:2]) == [(1, -32602), (2, -32602)]
    assert "nested deeper than 64" in out[0]["error"]["message"]
    assert "more than 200000 JSON values" in out[1]["error"]["message"]
    assert out[2] == {"jsonrpc": "2.0", "id": 3, "result": None}
    # Nesting too deep for the JSON parser itself is a parse error, not a crash.
    assert codes(run(frame(b"[" * 100_000 + b"]" * 100_000))) == [(None, -32700)]


def test_results_are_encoded_as_the_converter_would_without_it_walking_plain_data() -> None:
    # A plain result (a search document) and lsprotocol objects inside plain data (a hover, a list of
    # locations, an enum) come out as pygls' own response would give them, and cattrs is asked only
    # for the lsprotocol objects, never for the plain dicts and lists around them.
    from lsprotocol import types as lsp
    from pygls.protocol.json_rpc import JsonRPCResponseMessage

    server = create_server()
    protocol = server.protocol
    hover = lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value="**x**"))
    where = lsp.Location(uri="file:///a.py", range=lsp.Range(lsp.Position(1, 2), lsp.Position(1, 5)))
    results = [
        {"query": "x", "results": [{"path": "a.py", "score": 0.5, "labels": ["source"], "also": None}]},
        hover, [where, where], {"nested": [hover, lsp.SymbolKind.Function]}, None, [], "text", 3,
    ]
    for msg_id, result in enumerate(results):
        writer = Writer()
        protocol.set_writer(writer)
        protocol._send_data(JsonRPCResponseMessage(id=msg_id, result=result, jsonrpc="2.0"))
        protocol._send_result(msg_id, result)
        old, new = writer.messages()
        assert new == old, result
    asked: list[type] = []
    real = protocol._serialize_message

    def counting(obj: Any) -> Any:
        asked.append(type(obj))
        return real(obj)

    protocol._serialize_message = counting  # type: ignore[method-assign]
    protocol.set_writer(Writer())
    protocol._send_result(9, {"items": [{"a": [1, 2.5, None]}, hover]})
    assert asked == [lsp.Hover]


def test_a_pipe_is_read_on_the_loop_in_lines_of_at_most_max_line_bytes() -> None:
    # What an editor gives its server: a pipe, read by `PipeReader` with the framing's own limits (a
    # header line longer than MAX_LINE comes in pieces, the end of input inside a line gives what came),
    # and a served exchange over it like the one over pygls' reader.
    read_end, write_end = os.pipe()
    long_line = b"x" * (MAX_LINE + 10) + b"\n"
    body = json.dumps({"jsonrpc": "2.0", "id": 4, "method": "shutdown"}).encode()
    payload = b"Content-Length: 12\r\n" + long_line + frame(body) + b"tail"

    def feed() -> None:
        with os.fdopen(write_end, "wb") as pipe:
            for start in range(0, len(payload), 4096):  # in pieces, as a pipe delivers them
                pipe.write(payload[start:start + 4096])
                pipe.flush()

    async def main() -> list[bytes]:
        with os.fdopen(read_end, "rb") as source:
            reader = await stdin_reader(source, None)
            assert isinstance(reader, PipeReader)
            threading.Thread(target=feed).start()
            got = [await reader.readline(), await reader.readline(), await reader.readline()]
            got += [await reader.readline(), await reader.readline(), await reader.readexactly(len(body))]
            got += [await reader.readline(), await reader.readline()]
            return got

    got = asyncio.run(main())
    assert got == [b"Content-Length: 12\r\n", b"x" * MAX_LINE, b"x" * 10 + b"\n",
                   b"Content-Length: %d\r\n" % len(body), b"\r\n", body, b"tail", b""]
    assert isinstance(asyncio.run(_reader_of(io.BytesIO(b""))), BoundedStdinReader)  # no descriptor

    server = create_server()
    writer = Writer()
    server.protocol.set_writer(writer)
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "wb") as pipe:
        pipe.write(INIT + frame(b"{nope") + request(2, "shutdown", None))

    async def serve() -> None:
        with os.fdopen(read_end, "rb") as source:
            await read_messages(threading.Event(), await stdin_reader(source, None), server.protocol)  # type: ignore[arg-type]
            await asyncio.sleep(0.05)

    asyncio.run(serve())
    out = [m for m in writer.messages() if not (m.get("id") == 0 and "result" in m)]
    assert out[0]["error"]["code"] == -32700 and out[1] == {"jsonrpc": "2.0", "id": 2, "result": None}


async def _reader_of(source: Any) -> Any:
    return await stdin_reader(source, None)
