"""JSON-RPC framing and protocol hardening: the server keeps serving whatever bytes arrive.

pygls' stock reader loses the next message after a malformed header, answers nothing to invalid
JSON and leaves a request whose params do not match the LSP schema without a response. Here:

- `read_messages` re-synchronises on the next `Content-Length:` header, wherever it appears in a line.
  It reads stdin on the event loop when stdin is a pipe or a socket (`stdin_reader`, `PipeReader`),
  else through pygls' threaded reader; header lines come in pieces of at most MAX_LINE bytes either way.
- Invalid JSON gets a JSON-RPC Parse error (-32700, id null); everything else goes through
  `envelope.check` (JSON-RPC shape, lifecycle, size limits) before any handler sees it.
- `HardenedProtocol` answers a request whose params fail LSP validation with InvalidParams (-32602)
  and a message naming the offending field, instead of dropping it; a handler's exception is answered
  with its code (-32602...) or -32603, never with a traceback. Its `initialize` answer adds
  `capabilities.experimental` (`options.advertised`: the search presets).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import stat
import threading
from collections.abc import Awaitable, Callable, Generator
from concurrent.futures import Future
from typing import Any, BinaryIO, Protocol

import attrs
import cattrs
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdinAsyncReader
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCProtocol,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
)
from pygls.protocol.json_rpc import ResponseErrorMessage
from pygls.protocol.language_server import lsp_method

from lsp_server.lsp import envelope, options
from lsp_server.lsp.envelope import INVALID_PARAMS, PARSE_ERROR, error_response

log = logging.getLogger(__name__)

_CONTENT_LENGTH = re.compile(rb"Content-Length:\s*(\d+)\s*$", re.IGNORECASE)
MAX_BODY = 128 * 1024 * 1024  # a larger Content-Length is a corrupt header, not a message

MAX_LINE = 64 * 1024  # header lines are read in pieces of at most this many bytes
# Invalid requests up to this size get every field's error in the message (validating again costs
# ~0.1 ms per bad element: a string where a list belongs has one per character).
DETAIL_MAX_BYTES = 1024
REQUEST_CANCELLED = -32800


class AsyncReader(Protocol):
    def readline(self) -> Awaitable[bytes]: ...

    def readexactly(self, n: int) -> Awaitable[bytes]: ...


class BoundedStdinReader(StdinAsyncReader):
    """pygls' stdin reader with header lines read at most MAX_LINE bytes at a time (a megabyte of
    garbage without a newline is skipped in pieces, not buffered whole)."""

    def readline(self) -> Awaitable[bytes]:
        return self.loop.run_in_executor(self.executor, self.stdin.readline, MAX_LINE)


class PipeReader:
    """Framed input read on the event loop itself (`loop.connect_read_pipe`), with no thread hand-off
    per line as `BoundedStdinReader` makes (a request's header lines and body cost three: a trivial
    request's round trip 0.51 -> 0.27 ms). `readline` returns at most MAX_LINE bytes, as that does."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.stream = stream

    async def readline(self) -> bytes:
        try:
            return await self.stream.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:  # the input ends inside a line (or before one)
            return exc.partial
        except asyncio.LimitOverrunError:  # no line end within MAX_LINE bytes: the next piece
            return await self.stream.read(MAX_LINE)

    async def readexactly(self, n: int) -> bytes:
        return await self.stream.readexactly(n)


async def stdin_reader(stdin: BinaryIO, executor: Any) -> AsyncReader:
    """A `PipeReader` over stdin when it is a pipe or a socket (what an editor gives its language
    server; the loop makes the descriptor non-blocking, which a terminal shared with a shell must not
    be), else pygls' reader on the executor's threads (`BoundedStdinReader`: a terminal, a file, an
    in-memory stream, Windows)."""
    try:
        mode = os.fstat(stdin.fileno()).st_mode
    except (AttributeError, OSError, ValueError):  # no descriptor (an in-memory stream)
        mode = 0
    if os.name == "posix" and (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        loop = asyncio.get_running_loop()
        stream = asyncio.StreamReader(limit=MAX_LINE, loop=loop)
        try:
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream, loop=loop), stdin)
        except (OSError, ValueError, NotImplementedError) as exc:
            log.info("reading stdin on threads: %s", exc)
        else:
            return PipeReader(stream)
    return BoundedStdinReader(stdin, executor)


def _field_error(exc: BaseException, type_: type | None) -> str:
    """cattrs' words for one field's error, but never Python's own message for an error cattrs has
    no words for ("cannot convert float infinity to integer": an out-of-range or non-finite number)."""
    if isinstance(exc, (OverflowError, ArithmeticError)):
        name = getattr(type_, "__name__", None) or "a number"
        return f"invalid value for type, expected {name} (a finite number in range)"
    text = cattrs.v.format_exception(exc, type_)
    return "invalid value" if text.startswith("unknown error") else text


def _describe(exc: BaseException) -> str:
    cause = exc.__cause__ or exc
    if isinstance(cause, cattrs.ClassValidationError):
        details = cattrs.transform_error(cause, path="$", format_exception=_field_error)
        # cattrs names fields as Python does; say them as the JSON has them (text_document -> textDocument).
        return "; ".join(re.sub(r"_([a-z])", lambda m: m.group(1).upper(), d) for d in details[:5])
    if isinstance(cause, (OverflowError, ArithmeticError)):
        return _field_error(cause, None)
    return str(cause) or type(cause).__name__


def _raw(obj: dict[str, Any], cls: type) -> Any:
    """Build a generic message keeping params/result as plain JSON (pygls makes namedtuples of them,
    which renames keys and drops one called `type_name`)."""
    return cls(**{f.name: obj.get(f.name) for f in attrs.fields(cls)})


def converter(detailed: bool = True) -> cattrs.Converter:
    """pygls' converter, except that messages of custom methods keep their params as plain JSON.

    `detailed=False`: structuring stops at the first invalid field (bounded work on hostile input)."""
    conv = default_converter()
    conv.detailed_validation = detailed
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        conv.register_structure_hook(cls, _raw)
    return conv


class HardenedProtocol(LanguageServerProtocol):
    """LanguageServerProtocol that answers every request: envelope and lifecycle checks first
    (`envelope.check`), params structured with a fail-fast converter (bounded work), handler errors
    answered without tracebacks."""

    def __init__(self, server: Any, conv: cattrs.Converter) -> None:
        super().__init__(server, conv)
        self._detailed = conv  # for the error message of a small invalid request only
        self._converter = converter(detailed=False)  # stops at the first bad field
        self.life = envelope.Lifecycle()
        self.limits = envelope.Limits()

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams) -> Generator[Any, Any, lsp.InitializeResult]:
        """pygls' initialize, with codeseek's own capabilities under `experimental`."""
        result: lsp.InitializeResult = yield from super().lsp_initialize(params)
        result.capabilities.experimental = options.advertised()
        return result

    def accept(self, obj: Any, size: int = 0) -> None:
        """Check, structure and dispatch one parsed JSON message (`size`: its length in bytes)."""
        verdict = envelope.check(obj, self.life, self.limits)
        if verdict.action == "reply":
            log.info("refused: %s", verdict.reason)
            self._send_data(verdict.error)
            return
        if verdict.action == "drop":
            log.info("dropped: %s", envelope.clip(verdict.reason))
            return
        if verdict.kind == "response":
            self._accept_response(obj)
            return
        method = str(obj["method"])
        cls = self.get_message_type(method) or (
            JsonRPCRequestMessage if verdict.kind == "request" else JsonRPCNotification)
        try:
            message = self._converter.structure(obj, cls)
        except Exception as exc:  # cattrs raises validation errors and plain TypeErrors
            if verdict.kind == "notification":
                log.info("dropped %s: invalid params: %s", method, envelope.clip(_describe(exc)))
                return
            detail = self._describe(obj, cls, exc, size)
            text = f"invalid params for {method}: {detail}"
            log.info("refused %s (id %s): %s", method, obj["id"], envelope.clip(text))
            self._send_data(error_response(obj["id"], INVALID_PARAMS, text))
            return
        if method == lsp.INITIALIZE:
            self.life.initialized = True
        self.handle_message(message)
        if method == lsp.SHUTDOWN:
            self.life.shut_down = True

    def _describe(self, obj: Any, cls: type, exc: Exception, size: int) -> str:
        if size <= DETAIL_MAX_BYTES:  # small enough to validate again, collecting every field's error
            try:
                self._detailed.structure(obj, cls)
            except Exception as detailed:
                return _describe(detailed)
        return _describe(exc)

    def _accept_response(self, obj: dict[str, Any]) -> None:
        message: Any
        try:
            if "error" in obj:
                message = self._converter.structure(obj, ResponseErrorMessage)
            else:
                cls = self._result_types.pop(obj["id"], None) or JsonRPCResponseMessage
                message = self._converter.structure(obj, cls)
        except Exception as exc:
            log.info("dropped a malformed response (id %s): %s", obj.get("id"),
                     envelope.clip(_describe(exc)))
            return
        self.handle_message(message)

    def _send_handler_result(self, future: Future[Any], *, msg_id: Any) -> None:
        """Answer a request from its handler's future: a JsonRpcException is the client's error (logged
        in one line), anything else a bug (logged with its traceback, answered without it)."""
        self._request_futures.pop(msg_id, None)
        if future.cancelled():
            self._send_data(error_response(msg_id, REQUEST_CANCELLED, f"request {msg_id} was cancelled"))
            return
        exc = future.exception()
        if exc is None:
            self._send_result(msg_id, future.result())
            return
        if isinstance(exc, JsonRpcException):
            log.info("request %s: %s", msg_id, envelope.clip(exc.message or type(exc).__name__))
            self._send_data(error_response(msg_id, exc.code, exc.message or type(exc).__name__))
            return
        log.error("request %s failed", msg_id, exc_info=exc)
        self._send_data(error_response(msg_id, envelope.INTERNAL_ERROR,
                                       f"internal error: {type(exc).__name__}: {exc}"))

    def _send_result(self, msg_id: Any, result: Any) -> None:
        """A handler's result as a plain JSON-RPC response, encoded by `json.dumps` (its C encoder).

        pygls wraps a result in an attrs message that its converter unstructures whole: for a result
        typed `Any`, cattrs walks every dict and list in Python (a search's 16 KB result document:
        0.54 ms to encode, 0.19 ms here; requests 2.32.3, search p50 over stdio 4.7 -> 4.2 ms). Here
        the encoder walks the plain data itself and hands only the lsprotocol objects within (a hover,
        locations) to pygls' converter (`_serialize_message`, json's `default`), as before."""
        self._send_data({"jsonrpc": JsonRPCProtocol.VERSION, "id": msg_id, "result": result})

    def _check_handler_result(self, future: Future[Any]) -> None:
        """A notification has no reply: its failure (mostly a document the client never opened) is one
        log line; the traceback goes to DEBUG."""
        if not future.cancelled() and (exc := future.exception()) is not None:
            log.warning("a notification failed: %s: %s", type(exc).__name__, envelope.clip(str(exc), 120))
            log.debug("notification failure", exc_info=exc)


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
                log.error("ignoring a Content-Length of %d bytes (more than %d)", length, MAX_BODY)
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
            obj = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            log.info("unparseable message (%d bytes): %s", len(body), envelope.clip(str(exc), 120))
            protocol._send_data(error_response(None, PARSE_ERROR, f"parse error: {exc}"))
            continue
        try:
            protocol.accept(obj, len(body))
        except Exception as exc:  # a handler bug must not stop the server
            log.exception("unable to handle message")
            if on_error is not None:
                on_error(exc)
