"""JSON-RPC framing and hardening: resynchronising after bad headers, answering bad bodies."""

from __future__ import annotations

import asyncio
import io
import json
import threading
from typing import Any

from lsp_server.handlers import create_server
from lsp_server.transport import read_messages


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


def run(data: bytes) -> list[dict[str, Any]]:
    server = create_server()
    writer = Writer()
    server.protocol.set_writer(writer)

    async def main() -> None:
        await read_messages(threading.Event(), Reader(data), server.protocol)  # type: ignore[arg-type]
        await asyncio.sleep(0.05)  # let handler tasks answer

    asyncio.run(main())
    return writer.messages()


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
