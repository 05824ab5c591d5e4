"""JSON-RPC framing and protocol hardening: the server keeps serving whatever bytes arrive.

pygls' stock reader loses the next message after a malformed header, answers nothing to invalid
JSON and leaves a request whose params do not match the LSP schema without a response. Here:

- `read_messages` re-synchronises on the next `Content-Length:` header, wherever it appears in a line.
- Invalid JSON gets a JSON-RPC Parse error (-32700, id null); valid JSON that is not a JSON-RPC
  message gets Invalid Request (-32600).
- `HardenedProtocol` answers a request whose params fail LSP validation with InvalidParams (-32602)
  and a message naming the offending field, instead of dropping it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import attrs
import cattrs
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
)

log = logging.getLogger(__name__)

_CONTENT_LENGTH = re.compile(rb"Content-Length:\s*(\d+)\s*$", re.IGNORECASE)
MAX_BODY = 256 * 1024 * 1024  # a larger Content-Length is a corrupt header, not a message

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


class AsyncReader(Protocol):
    def readline(self) -> Awaitable[bytes]: ...

    def readexactly(self, n: int) -> Awaitable[bytes]: ...


@dataclass
class Rejected:
    """A request whose params did not match its LSP type: answered with InvalidParams."""

    id: int | str
    method: str
    message: str


def _describe(exc: BaseException) -> str:
    cause = exc.__cause__ or exc
    if isinstance(cause, cattrs.ClassValidationError):
        details = cattrs.transform_error(cause, path="$")
        # cattrs names fields as Python does; say them as the JSON has them (text_document -> textDocument).
        return "; ".join(re.sub(r"_([a-z])", lambda m: m.group(1).upper(), d) for d in details[:5])
    return str(cause) or type(cause).__name__


def error_response(msg_id: int | str | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def _raw(obj: dict[str, Any], cls: type) -> Any:
    """Build a generic message keeping params/result as plain JSON (pygls makes namedtuples of them,
    which renames keys and drops one called `type_name`)."""
    return cls(**{f.name: obj.get(f.name) for f in attrs.fields(cls)})


def converter() -> cattrs.Converter:
    """pygls' converter, except that messages of custom methods keep their params as plain JSON."""
    conv = default_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        conv.register_structure_hook(cls, _raw)
    return conv


class HardenedProtocol(LanguageServerProtocol):
    """LanguageServerProtocol that answers malformed requests instead of dropping them."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        msg_id = data.get("id")
        if "jsonrpc" in data and "method" in data and "error" not in data and \
                isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool):
            method = str(data["method"])
            request_type = self.get_message_type(method) or JsonRPCRequestMessage
            try:
                return self._converter.structure(data, request_type)
            except Exception as exc:  # cattrs raises validation errors and plain TypeErrors
                return Rejected(msg_id, method, f"invalid params for {method}: {_describe(exc)}")
        return super().structure_message(data)

    def handle_message(self, message: Any) -> None:
        if isinstance(message, Rejected):
            log.warning("rejected %s (id %s): %s", message.method, message.id, message.message)
            self._send_data(error_response(message.id, INVALID_PARAMS, message.message))
            return
        if not hasattr(message, "jsonrpc"):
            msg_id = message.get("id") if isinstance(message, dict) else None
            if not isinstance(msg_id, (int, str)) or isinstance(msg_id, bool):
                msg_id = None
            self._send_data(error_response(msg_id, INVALID_REQUEST, "not a JSON-RPC 2.0 message"))
            return
        super().handle_message(message)


async def read_messages(stop: threading.Event, reader: AsyncReader, protocol: HardenedProtocol,
                        on_error: Callable[[Exception], None] | None = None) -> None:
    """Read framed messages until EOF or `stop`, handing each to `protocol`."""
    length = 0
    while not stop.is_set():
        line = await reader.readline()
        if not line:
            break
        match = _CONTENT_LENGTH.search(line)
        if match:
            length = int(match.group(1))
            if length > MAX_BODY:
                log.error("ignoring a Content-Length of %d bytes", length)
                length = 0
            continue
        if line.strip() or not length:
            continue  # another header (Content-Type), or noise between messages
        try:
            body = await reader.readexactly(length)
        except asyncio.IncompleteReadError as exc:  # the peer closed mid-message
            body = exc.partial
        if len(body) < length:
            log.error("connection closed inside a message (%d of %d bytes)", len(body), length)
            break
        length = 0
        try:
            message = json.loads(body, object_hook=protocol.structure_message)
        except (ValueError, UnicodeDecodeError) as exc:
            log.error("unparseable message (%d bytes): %s", len(body), exc)
            protocol._send_data(error_response(None, PARSE_ERROR, f"parse error: {exc}"))
            continue
        except Exception as exc:
            log.exception("cannot decode message")
            protocol._send_data(error_response(None, INVALID_REQUEST, f"invalid message: {exc}"))
            continue
        try:
            protocol.handle_message(message)
        except Exception as exc:  # a handler bug must not stop the server
            log.exception("unable to handle message")
            if on_error is not None:
                on_error(exc)

