"""JSON-RPC envelope checks and size limits, applied to every message before any work is done.

`check(obj, lifecycle)` decides what happens to one parsed JSON value:

- `Verdict.reply`: answer it now with this error (the message never reaches a handler);
- `Verdict.drop`: say nothing (a notification the spec says to drop, or an invalid one: logged once, at
  INFO, in one line);
- `Verdict.ok`: hand it on (`kind` says request, notification or response).

The rules (LSP 3.17 and JSON-RPC 2.0): a message is an object with `"jsonrpc": "2.0"`; an `id` is an
integer or a string; a `method` is a string; `params`, when present, is an object, an array or null.
Before `initialize` a request is answered -32002 (ServerNotInitialized) and a notification dropped
(`exit` excepted); after `shutdown` a request is answered -32600 and a notification dropped (`exit`
excepted); a notification method sent with an id (`$/setTrace`, `$/cancelRequest`, `textDocument/didOpen`)
is answered -32600. `Limits` bound the work one message can cause: its nesting depth and number of JSON
values are counted iteratively (no recursion) before anything structures it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from lsprotocol import types as lsp

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002

# LSP methods that are notifications (their message type is a *Notification): never sent with an id.
NOTIFICATIONS = frozenset(m for m, types in lsp.METHOD_TO_TYPES.items()
                          if types[0].__name__.endswith("Notification"))
MAX_MESSAGE_CHARS = 300  # error messages quote at most this much of what the client sent


@dataclass(frozen=True)
class Limits:
    """What one message may hold; larger messages are refused before any work is done on them."""

    max_depth: int = 64  # nesting of objects and arrays
    max_values: int = 200_000  # JSON values (objects, arrays, strings, numbers...) in one message
    max_id_chars: int = 256
    max_method_chars: int = 256


@dataclass
class Lifecycle:
    """Where the session stands: `initialize` received, `shutdown` received."""

    initialized: bool = False
    shut_down: bool = False


@dataclass(frozen=True)
class Verdict:
    action: str  # "ok", "reply" or "drop"
    kind: str = ""  # "request", "notification" or "response" (ok only)
    error: dict[str, Any] | None = None  # the reply (reply only)
    reason: str = ""  # why it was refused or dropped (logged)


def clip(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """`text` cut to `limit` characters (error messages must not echo a megabyte back)."""
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def error_response(msg_id: int | str | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": clip(message)}}


def valid_id(value: Any, limits: Limits = Limits()) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return -(2**63) <= value < 2**63
    return isinstance(value, str) and len(value) <= limits.max_id_chars


def measure(value: Any, limits: Limits) -> str | None:
    """None when `value` is within the limits, else what it exceeds (stops at the first excess)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    count = 0
    while stack:
        item, depth = stack.pop()
        count += 1
        if count > limits.max_values:
            return f"more than {limits.max_values} JSON values"
        if isinstance(item, (dict, list)):
            if depth > limits.max_depth:
                return f"nested deeper than {limits.max_depth} levels"
            children = item.values() if isinstance(item, dict) else item
            if count + len(item) > limits.max_values:
                return f"more than {limits.max_values} JSON values"
            stack.extend((child, depth + 1) for child in children)
    return None


def _reply(msg_id: int | str | None, code: int, message: str) -> Verdict:
    return Verdict("reply", error=error_response(msg_id, code, message), reason=message)


def check(obj: Any, life: Lifecycle, limits: Limits = Limits()) -> Verdict:
    """What to do with one parsed message (see the module docstring)."""
    if not isinstance(obj, dict):
        kind = "a batch (an array)" if isinstance(obj, list) else type(obj).__name__
        return _reply(None, INVALID_REQUEST, f"not a JSON-RPC 2.0 message: got {kind}, expected an object")
    has_id = "id" in obj
    msg_id = obj.get("id")
    if has_id and not valid_id(msg_id, limits):
        return _reply(None, INVALID_REQUEST, f"invalid id {clip(repr(msg_id), 60)}: expected an integer or a "
                                             f"string of at most {limits.max_id_chars} characters")
    echo = msg_id if has_id else None
    if obj.get("jsonrpc") != "2.0":
        got = clip(repr(obj.get("jsonrpc")), 60)
        return _reply(echo, INVALID_REQUEST, f'jsonrpc must be "2.0", got {got}')
    if "method" not in obj:
        if has_id and ("result" in obj or "error" in obj):
            return Verdict("ok", "response")
        return _reply(echo, INVALID_REQUEST, "a message needs a method (request, notification) "
                                             "or an id with a result or error (response)")
    method = obj["method"]
    if not isinstance(method, str) or not method or len(method) > limits.max_method_chars:
        text = f"method must be a non-empty string of at most {limits.max_method_chars} characters, " \
               f"got {clip(repr(method), 60)}"
        return _reply(echo, INVALID_REQUEST, text) if has_id else Verdict("drop", reason=text)
    params = obj.get("params")
    if params is not None and not isinstance(params, (dict, list)):
        text = f"params of {method} must be an object or an array, got {type(params).__name__}"
        return _reply(echo, INVALID_PARAMS, text) if has_id else Verdict("drop", reason=text)
    if not has_id:
        if method == lsp.CANCEL_REQUEST and not (isinstance(params, dict) and valid_id(params.get("id"))):
            return Verdict("drop", reason="$/cancelRequest without a valid id")
        if method == lsp.EXIT:
            return Verdict("ok", "notification")
        if not life.initialized:
            return Verdict("drop", reason=f"{method} before initialize")
        if life.shut_down:
            return Verdict("drop", reason=f"{method} after shutdown")
    else:
        if method in NOTIFICATIONS:
            return _reply(msg_id, INVALID_REQUEST, f"{method} is a notification: send it without an id")
        if method == lsp.INITIALIZE and life.initialized:
            return _reply(msg_id, INVALID_REQUEST, "initialize was already received")
        if method != lsp.INITIALIZE and not life.initialized:
            return _reply(msg_id, SERVER_NOT_INITIALIZED, f"{method} before initialize: the server is "
                                                          "not initialized")
        if life.shut_down:
            return _reply(msg_id, INVALID_REQUEST, f"{method} after shutdown: the server is shutting down")
    excess = measure(params, limits)
    if excess is not None:
        text = f"params of {method} refused: {excess}"
        return _reply(msg_id, INVALID_PARAMS, text) if has_id else Verdict("drop", reason=text)
    return Verdict("ok", "request" if has_id else "notification")
