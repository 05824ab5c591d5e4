"""The codeseek language server (pygls): one `CodeseekServer` owns the roots and options; handlers are thin.

Each handler gets its params, asks the root's domain facade (`RootIndex.codebase`, a
`retrievers.codebase.Codebase`) and returns its answer as LSP types (`lsp.search`, `lsp.navigation`,
`lsp.hover`, `lsp.convert`). Requests that touch the index run in a small
thread pool as asyncio tasks, so `$/cancelRequest` cancels them and a long one never blocks the
message loop; indexing runs in one worker thread per root (`indexer.RootIndex`).

Run: `codeseek serve` (stdio), `codeseek serve --tcp HOST:PORT`, or `python -m lsp_server.lsp.server`.
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import logging
import os
import sqlite3
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcContentModified, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from indexing.integrity import describe, is_corruption
from indexing.roots import OPT_IN, refused_root
from lsp_server.lsp import convert, transport
from lsp_server.lsp.indexer import NoProgress, ProgressHandle, RootIndex
from lsp_server.lsp.options import ServerOptions, parse_options
from lsp_server.process_tuning import serving, tune_allocator
from retrievers.codebase import StoreClosed

log = logging.getLogger("codeseek.lsp")
T = TypeVar("T")
SEARCH_METHOD = "workspace/semanticSearch"
DEBOUNCE_S = 0.3
MAX_DELAY_S = 0.7  # a debounced edit is indexed at most this long after it arrived


class _Progress:
    """One `$/progress` token, driven from any thread through the event loop."""

    def __init__(self, server: CodeseekServer, token: str, title: str, message: str) -> None:
        self.server, self.token = server, token
        server.call_soon(self._begin, title, message)

    def _begin(self, title: str, message: str) -> None:
        self.server.work_done_progress.begin(self.token, lsp.WorkDoneProgressBegin(
            title=title, message=message, percentage=0, cancellable=False))

    def report(self, percentage: int, message: str) -> None:
        self.server.call_soon(self.server.work_done_progress.report, self.token,
                              lsp.WorkDoneProgressReport(message=message, percentage=percentage))

    def end(self, message: str) -> None:
        self.server.call_soon(self.server.work_done_progress.end, self.token,
                              lsp.WorkDoneProgressEnd(message=message))


class CodeseekServer(LanguageServer):
    """Language server state: options, one RootIndex per workspace folder, debounce timers."""

    def __init__(self) -> None:
        super().__init__("codeseek", "0.1.0", protocol_cls=transport.HardenedProtocol,
                         converter_factory=transport.converter,
                         text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.options = ServerOptions()
        self.init_options: Any = None
        self.roots: dict[Path, RootIndex] = {}
        self.started = False  # set once `initialized` has read the options and created the roots
        self.watch_files = False  # the client cannot watch files: each root watches itself (file_watch)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.queries = ThreadPoolExecutor(max_workers=2, thread_name_prefix="codeseek-query")
        self._shown: set[str] = set()
        self._timers: dict[str, tuple[asyncio.TimerHandle, RootIndex, float]] = {}
        self._progress_ids = 0
        self._lock = threading.Lock()
        self.exit_code = 0  # the process status `serve` returns (1 after `exit` without `shutdown`)

    # -- transport -------------------------------------------------------------------------------------
    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve JSON-RPC over stdio with codeseek's hardened framing."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        source = stdin or sys.stdin.buffer

        async def main() -> None:
            await self._serve(await transport.stdin_reader(source, self.thread_pool))

        try:
            asyncio.run(main())
        except SystemExit as exc:  # `exit`: 0 after `shutdown`, else 1 (the spec)
            self.exit_code = exc.code if isinstance(exc.code, int) else 1
        except (BrokenPipeError, KeyboardInterrupt):
            pass
        finally:
            self.stop_roots()
            self.shutdown()

    def start_tcp(self, host: str, port: int) -> None:
        """Serve one client over TCP (the process ends when it disconnects)."""
        self._stop_event = stop = threading.Event()

        async def main() -> None:
            done = asyncio.Event()

            async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                self.protocol.set_writer(writer)  # type: ignore[arg-type]
                await self._serve(reader)
                done.set()

            server = await asyncio.start_server(connection, host, port)
            log.info("codeseek listening on %s:%s", host, port)
            async with server:
                await done.wait()
            stop.set()

        try:
            asyncio.run(main())
        except SystemExit as exc:
            self.exit_code = exc.code if isinstance(exc.code, int) else 1
        except KeyboardInterrupt:
            pass
        finally:
            self.stop_roots()
            self.shutdown()

    async def _serve(self, reader: transport.AsyncReader) -> None:
        self.loop = asyncio.get_running_loop()
        assert self._stop_event is not None
        protocol = self.protocol
        assert isinstance(protocol, transport.HardenedProtocol)
        await transport.read_messages(self._stop_event, reader, protocol, self._report_handler_error)

    def _report_handler_error(self, exc: Exception) -> None:
        log.error("handler error: %s", exc)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log out-of-band errors in one line (they are answered already, or are a client's mistake);
        pygls' default pops a message box for each."""
        log.info("%s: %s", getattr(source, "__name__", source), str(error)[:300])

    # -- threads -> loop ---------------------------------------------------------------------------------
    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run `fn(*args)` on the event loop thread (all writes to the client happen there)."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # the loop closed meanwhile
            pass

    async def run_query(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a read-only query in the query pool; awaiting it makes the request cancellable."""
        loop = asyncio.get_running_loop()
        try:
            with serving():  # (a due full collection waits for a pause in the requests)
                return await loop.run_in_executor(self.queries, fn, *args)
        except StoreClosed as exc:  # its root stopped or restarted (options changed) under the query
            raise JsonRpcContentModified(f"{exc} (the index restarted); ask again") from exc
        except sqlite3.DatabaseError as exc:
            if not is_corruption(exc):
                raise
            for root in list(self.roots.values()):  # the worker checks each index and rebuilds it
                root.request_repair(exc)
            raise JsonRpcInternalError(f"the index is damaged ({exc}); it is being rebuilt") from exc

    # -- messages and progress ---------------------------------------------------------------------------
    def notify_user(self, message: str, level: lsp.MessageType = lsp.MessageType.Warning) -> None:
        """Log a message, and show it once per server lifetime (thread-safe)."""
        log.warning(message)
        self.call_soon(self.window_log_message, lsp.LogMessageParams(type=level, message=message))
        with self._lock:
            if message in self._shown:
                return
            self._shown.add(message)
        self.call_soon(self.window_show_message, lsp.ShowMessageParams(type=level, message=message))

    def supports_progress(self) -> bool:
        caps = getattr(self.protocol, "client_capabilities", None)
        window = caps.window if caps is not None else None
        return bool(window and window.work_done_progress)

    def begin(self, title: str, message: str) -> ProgressHandle:
        """A progress report (ProgressSink for the indexer); created and answered on the loop."""
        if not self.supports_progress() or self.loop is None:
            return NoProgress()
        with self._lock:
            self._progress_ids += 1
            token = f"codeseek-{os.getpid()}-{self._progress_ids}"
        future = asyncio.run_coroutine_threadsafe(self.work_done_progress.create_async(token), self.loop)
        try:
            future.result(timeout=5.0)
        except Exception as exc:  # the client refused or did not answer: go without progress
            log.info("no progress token (%s)", exc)
            return NoProgress()
        return _Progress(self, token, title, message)

    # -- options and roots -------------------------------------------------------------------------------
    def apply_options(self, *raw: Any) -> ServerOptions:
        """Merge option sources (later wins), reporting bad values; returns the new options."""
        options = ServerOptions()
        for item in raw:
            options, problems = parse_options(item, options)
            for problem in problems:
                self.notify_user(f"codeseek: {problem}")
        self.options = options
        return options

    def add_root(self, path: Path) -> RootIndex | None:
        path = Path(os.path.realpath(path))
        if path in self.roots:
            return self.roots[path]
        why = refused_root(path)
        if why is not None and not (path / OPT_IN).exists():
            self.notify_user(f"codeseek: not indexing {path}: it is {why}. Open a project folder, or "
                             f"create {path / OPT_IN} to index it anyway.")
            return None
        try:
            root = RootIndex(path, self.options, sink=self,
                             on_error=lambda m: self.notify_user(m, lsp.MessageType.Error))
        except Exception as exc:  # one line the user can act on (disk full, read-only, a file in the way)
            cause = exc.__cause__ if exc.__cause__ is not None else exc
            said = describe(cause, self.options.index_dir or "the index folder") or str(exc)
            self.notify_user(f"codeseek: cannot index {path}: {said}", lsp.MessageType.Error)
            return None
        self.roots[path] = root
        log.info("serving %s", path)
        root.start()
        if self.watch_files:
            root.watch(self.notify_user)
        return root

    def remove_root(self, path: Path) -> None:
        root = self.roots.pop(Path(os.path.realpath(path)), None)
        if root is not None:
            threading.Thread(target=root.stop, daemon=True).start()

    def stop_roots(self) -> None:
        for root in list(self.roots.values()):
            root.stop(timeout=2.0)
        self.roots.clear()

    async def restart_roots(self) -> None:
        """Re-create every root with the current options (index-affecting options changed)."""
        old = list(self.roots.items())
        self.roots.clear()
        loop = asyncio.get_running_loop()
        for _, root in old:
            await loop.run_in_executor(None, root.stop, 2.0)
        for path, _ in old:
            self.add_root(path)

    def locate(self, uri: str) -> tuple[RootIndex, str] | None:
        """The root holding a document URI and its workspace-relative path (innermost root wins)."""
        path = convert.uri_to_path(uri)
        if path is None:
            return None
        best: tuple[RootIndex, str] | None = None
        for root in list(self.roots.values()):  # a snapshot: query threads call this too
            rel = root.relpath(path)
            if rel is not None and (best is None or len(str(root.root)) > len(str(best[0].root))):
                best = (root, rel)
        return best

    def encoding(self) -> str:
        enc = getattr(self.protocol, "server_capabilities", None)
        value = getattr(enc, "position_encoding", None) if enc is not None else None
        return str(getattr(value, "value", value) or "utf-16")

    def schedule(self, uri: str, delay: float) -> None:
        """Re-index one document after `delay` seconds (debounced: a newer call replaces an older)."""
        found = self.locate(uri)
        if found is None or self.loop is None:
            return
        root, rel = found
        now = self.loop.time()
        pending = self._timers.pop(uri, None)
        first = now
        if pending is not None:
            pending[0].cancel()
            first = pending[2]
        # During a storm of edits the timer keeps moving, but never past MAX_DELAY_S after the first
        # edit it has not indexed yet: the index stays at most about a second behind.
        at = min(now + delay, first + MAX_DELAY_S)
        self._timers[uri] = (self.loop.call_at(at, self._fire, uri, root, rel), root, first)

    def _fire(self, uri: str, root: RootIndex, rel: str) -> None:
        self._timers.pop(uri, None)
        root.request_paths([rel])

    def idle(self, root: RootIndex) -> bool:
        """No debounced edit waits and the worker has nothing to do."""
        return root.idle() and not any(r is root for _, r, _ in self._timers.values())


def bad_params(message: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(message)


def configure_logging(handler: logging.Handler, level: str) -> None:
    """codeseek's loggers at `level` (INFO: one summary line per event, never payloads or source);
    pygls' own loggers (which log every JSON-RPC message at INFO) at WARNING unless `level` is DEBUG."""
    name = level.strip().upper() or "INFO"
    value = logging.getLevelName(name)
    if not isinstance(value, int):
        name, value = "INFO", logging.INFO
    logging.basicConfig(handlers=[handler], level=value,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    quiet = value if value <= logging.DEBUG else max(value, logging.WARNING)
    for noisy in ("pygls", "pygls.protocol", "pygls.server", "pygls.feature_manager", "lsprotocol"):
        logging.getLogger(noisy).setLevel(quiet)


def serve(args: argparse.Namespace) -> int:
    """Entry point of `codeseek serve`: stdio unless `args.tcp` is "HOST:PORT"."""
    log_file = getattr(args, "log_file", None)
    handler: logging.Handler = (logging.FileHandler(log_file) if log_file
                                else logging.StreamHandler(sys.stderr))
    configure_logging(handler, os.environ.get("CODESEEK_LOG", "INFO"))
    # A crash in native code (a grammar, tantivy, SQLite) ends the process without a Python error:
    # leave the Python stack of every thread on stderr, where the editor's log shows it.
    faulthandler.enable(file=sys.stderr, all_threads=True)
    from lsp_server.lsp.handlers import create_server

    tune_allocator()
    server = create_server()
    tcp = getattr(args, "tcp", None)
    if tcp:
        host, _, port = str(tcp).rpartition(":")
        server.start_tcp(host, int(port))
        return server.exit_code
    # The protocol owns the real stdout; anything else printed (a library's progress bar) goes to stderr.
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    server.start_io(sys.stdin.buffer, protocol_out)
    return server.exit_code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lsp_server.lsp.server",
                                     description="codeseek language server")
    parser.add_argument("--tcp", default=None, metavar="HOST:PORT")
    parser.add_argument("--log-file", default=None, metavar="FILE")
    return serve(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
