"""`codeseek search` answered by a running server: the language server or the MCP server that shares
its engine on this root's index folder (`lsp_server.engine_socket`).

`served_answer(root, args, request)` asks it when one listens there and searches as this process would
(the same search code, model, tiers, `--no-embed`, `--max-lines` and scan options); the
answer is the result document the engine would give in process, printed the same way (`timings_ms`
gains `server`: the milliseconds of the round trip). None (search in this process) when no server
listens (no socket, a stale one), it searches otherwise, it is busy (its first indexing, a refresh that
does not end within its wait, unsaved editor buffers) or it does not answer in time. A bad query is
the engine's QueryError, as in process. `CODESEEK_LOG=debug` says on stderr which way it went.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_server import engine_socket
from lsp_server.cli.foreground import max_lines, question_pool
from lsp_server.cli.main import QUESTION_POOL
from retrievers.base import QueryError

if TYPE_CHECKING:
    from retrievers.engine.request import SearchRequest


def served_answer(root: Path, args: argparse.Namespace, request: SearchRequest) -> dict[str, Any] | None:
    """The result document of the server that shares its engine on `root`'s index, or None."""
    from indexing.location import index_dir_for

    started = time.perf_counter()
    real = Path(os.path.realpath(root))
    index_dir = index_dir_for(real, getattr(args, "index_dir", None))
    lines = max_lines(args, 60)  # --max-lines (its default: retrievers.engine.spans.MAX_SPAN_LINES)
    pool = question_pool(args, QUESTION_POOL)  # --question-pool
    message = engine_socket.search_message(real, not args.no_embed, lines, request, pool)
    answer = engine_socket.ask(index_dir, message)
    if answer is None:
        _debug(f"no server shares its engine on {engine_socket.socket_path(index_dir)}; searching here")
        return None
    if answer.get("kind") == "query":  # a bad query, in the words the engine has in process too
        raise QueryError(str(answer.get("error")))
    result, server = answer.get("result"), answer.get("server")
    if not isinstance(result, dict) or not isinstance(result.get("timings_ms"), dict):
        _debug(f"the server did not answer ({answer.get('kind')}: {answer.get('error')}); searching here")
        return None
    result["timings_ms"]["server"] = round((time.perf_counter() - started) * 1000, 1)
    if isinstance(server, dict):
        _debug(f"answered by the {server.get('kind')} server (pid {server.get('pid')})")
    return result


def disk_reader(root: Path) -> Callable[[str], bytes]:
    """A file's bytes as the index read them (`Workspace.read_bytes` without editor buffers), for the
    lines around a server's answer (`--context`, `--vimgrep`); never a path outside the root."""
    from indexing.scan import plain_relative
    from indexing.source_encoding import as_utf8
    from indexing.workspace import WorkspaceError

    prefix = os.path.realpath(root) + os.sep

    def read(rel: str) -> bytes:
        if not plain_relative(rel):
            raise WorkspaceError(f"path is outside the workspace {root}: {rel}")
        try:
            with open(prefix + rel, "rb") as fh:
                return as_utf8(rel, fh.read())
        except OSError as exc:
            raise WorkspaceError(f"cannot read {rel}: {exc.strerror or exc}") from exc

    return read


def _debug(message: str) -> None:
    if os.environ.get("CODESEEK_LOG", "").strip().lower() == "debug":
        print(f"codeseek: debug: {message}", file=sys.stderr)
