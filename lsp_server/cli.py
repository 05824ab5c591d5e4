"""The `codeseek` console script: index, chunks, graph, status here; search, eval and serve dispatched.

`main(argv) -> int` parses arguments and returns the exit status: 0 on success, 1 when the request
was valid but found nothing (an unknown symbol, a missing index), 2 for bad input (a root that does
not exist, a file outside the root, a broken index directory), 130 when interrupted. Errors are one
line on stderr. `search`, `eval` and `serve` import their modules only when run.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import sqlite3
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from indexing.integrity import describe, is_corruption
from indexing.locking import LockTimeout
from indexing.scan import scan
from indexing.store import IndexStore, StoreError, database_path
from indexing.workspace import UpdateResult, Workspace, WorkspaceError, WorkspaceOptions, default_index_dir
from retrievers.base import RetrieverError


class CliError(Exception):
    """Bad input on the command line; reported as one line with exit status `code`."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def _err(message: str) -> None:
    print(f"codeseek: error: {message}", file=sys.stderr)


def _root(value: str | None) -> Path:
    root = Path(value or ".").expanduser()
    if not root.exists():
        raise CliError(f"root does not exist: {root}")
    if not root.is_dir():
        raise CliError(f"root is not a directory: {root}")
    return root.resolve()


def _workspace(root: Path, index_dir: str | None) -> Workspace:
    return Workspace(root, WorkspaceOptions(index_dir=Path(index_dir).expanduser() if index_dir else None))


def _update(ws: Workspace, show_progress: bool) -> UpdateResult:
    if not show_progress:
        return ws.update()
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    columns = (TextColumn("indexing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.fields[path]}", style="dim"))
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("index", total=None, path="scanning")

        def progress(done: int, total: int, path: str) -> None:
            if done == total or done % 16 == 0:
                bar.update(task, completed=done, total=total, path=path[-60:])

        return ws.update(progress=progress)


def _call_edges(ws: Workspace) -> int | None:
    """Call edges in the graph; remembered per index revision so an unchanged re-run builds nothing."""
    revision = str(ws.revision)
    cached = (ws.store.get_meta("call_edges") or "").split(":")
    if len(cached) == 2 and cached[0] == revision and cached[1].isdigit():
        return int(cached[1])
    try:
        edges = int(ws.call_graph().stats()["call_edges"])
    except ImportError:
        return None
    ws.store.set_meta("call_edges", f"{revision}:{edges}")
    return edges


def _counts(counter: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


# -- index -----------------------------------------------------------------------------------------
def cmd_index(args: argparse.Namespace) -> int:
    root = _root(args.root)
    with _workspace(root, args.index_dir) as ws:
        problem = ws.store.check()  # an explicit index run checks the pages too (issue 13)
        if problem != "ok":
            raise sqlite3.DatabaseError(f"database disk image is malformed: {problem}")
        result = _update(ws, not args.quiet and sys.stderr.isatty())
        counts = ws.store.counts()
        graph_started = time.perf_counter()
        call_edges = _call_edges(ws)
        seconds = result.seconds + time.perf_counter() - graph_started
        errors = ws.error_counts()
        summary = {
            "root": str(ws.root), "index_dir": str(ws.index_dir), "files": counts["files"],
            "languages": result.languages, "parsed": result.parsed, "unchanged": result.unchanged,
            "removed": len(result.removed_paths), "chunks": counts["chunks"],
            "definitions": counts["definitions"], "call_sites": counts["calls"], "call_edges": call_edges,
            "skipped": result.skipped, "errors": errors, "run_errors": result.errors,
            "seconds": round(seconds, 3),
        }
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    skipped = sum(result.skipped.values())
    n_errors = sum(errors.values())
    lines = [
        f"indexed {summary['root']}",
        f"  index        {summary['index_dir']}",
        f"  files        {counts['files']} ({result.parsed} parsed, {result.unchanged} unchanged, "
        f"{len(result.removed_paths)} removed)",
        f"  languages    {_counts(result.languages) or '-'}",
        f"  chunks       {counts['chunks']}",
        f"  definitions  {counts['definitions']}",
        f"  call edges   {call_edges if call_edges is not None else 'n/a'} ({counts['calls']} call sites)",
        f"  skipped      {skipped}" + (f" ({_counts(result.skipped)})" if skipped else ""),
        f"  errors       {n_errors}" + (f" ({_counts(errors)})" if n_errors else ""),
        f"  seconds      {seconds:.2f}",
    ]
    print("\n".join(lines))
    return 0


# -- chunks ----------------------------------------------------------------------------------------
def cmd_chunks(args: argparse.Namespace) -> int:
    from indexing.labels import labels_for
    from indexing.languages import language_for_path
    from indexing.parse import parse_file
    from indexing.scan import scan_paths

    root = _root(args.root)
    file = Path(args.file).expanduser()
    if not file.is_absolute():  # relative to the current directory, else to the root
        here = Path.cwd() / file
        file = here if here.exists() or not (root / file).exists() else root / file
    if not file.is_file():
        raise CliError(f"not a file: {args.file}")
    rel = _relpath(root, file)
    language = language_for_path(rel)
    if language is None:
        raise CliError(f"not an indexed file type: {rel}")
    skipped = scan_paths(root, [rel]).skipped
    if skipped:
        print(f"codeseek: note: the index skips {rel} ({skipped[0][1]})", file=sys.stderr)
    labels = labels_for(rel)
    result = parse_file(rel, file.read_bytes(), language, labels)
    rows = [{"start_line": c.start_line, "end_line": c.end_line, "start_byte": c.start_byte,
             "end_byte": c.end_byte, "kind": c.kind, "symbol": c.symbol, "header": c.header,
             "content_hash": c.content_hash} for c in result.chunks]
    if args.json:
        print(json.dumps({"path": rel, "language": language, "labels": list(labels), "status": result.status,
                          "error": result.error, "chunks": rows}, indent=2))
        return 0
    print(f"{rel}  {language}  [{', '.join(labels)}]  {len(rows)} chunks  status {result.status}"
          + (f" ({result.error})" if result.error else ""))
    for row in rows:
        print(f"  {row['start_line']:>5}-{row['end_line']:<5} {row['kind']:<9} {row['symbol'] or '-'}")
    return 0


def _relpath(root: Path, file: Path) -> str:
    from indexing.scan import relative_path

    rel = relative_path(root, file)
    if rel is None:
        raise CliError(f"{file} is outside the workspace root {root} (use --root)")
    return rel


# -- graph -----------------------------------------------------------------------------------------
def cmd_graph(args: argparse.Namespace) -> int:
    from graph import render

    root = _root(args.root)
    fmt = "json" if args.json else "dot" if args.dot else "text"
    with _workspace(root, args.index_dir) as ws:
        _update(ws, sys.stderr.isatty())
        graph = ws.call_graph()
        targets = graph.resolve(args.symbol)
        if not targets:
            print(f"codeseek: no definition named {args.symbol!r}", file=sys.stderr)
            return 1
        if len(targets) > 1:
            # An ambiguous name: list the candidates (stderr) and answer for each of them.
            print(f"codeseek: {args.symbol!r} names {len(targets)} definitions:", file=sys.stderr)
            print(render.render_definitions(targets, "text"), end="", file=sys.stderr)
        outputs = []
        for d in targets:
            if args.impact is not None:
                outputs.append(render.render_impact(graph, d.id, args.impact, fmt))
            elif args.callees:
                outputs.append(render.render_callees(graph, d.id, fmt))
            else:
                outputs.append(render.render_callers(graph, d.id, fmt))
    if fmt == "json":  # one JSON document, one entry per matching definition
        print(json.dumps({"symbol": args.symbol, "results": [json.loads(o) for o in outputs]}, indent=2))
    else:
        for out in outputs:
            print(out, end="" if out.endswith("\n") else "\n")
    return 0


# -- status ----------------------------------------------------------------------------------------
def cmd_status(args: argparse.Namespace) -> int:
    root = _root(args.root)
    index_dir = Path(args.index_dir).expanduser() if args.index_dir else default_index_dir(root)
    if not database_path(index_dir).exists():
        print(f"codeseek: no index for {root} at {index_dir} (run `codeseek index`)", file=sys.stderr)
        return 1
    with _workspace(root, args.index_dir) as ws:
        integrity = ws.store.check()
        if integrity != "ok":  # say so rather than counting rows of a damaged file
            print(f"codeseek: the index at {ws.index_dir} is damaged ({integrity}); `codeseek index` "
                  "rebuilds it", file=sys.stderr)
            return 2
        info = ws.status()
        info["integrity"] = integrity
        stored = ws.store.files()
        scanned = {f.path: f for f in scan(ws.root, ws.options.scan).files}
    new = sum(1 for p in scanned if p not in stored)
    deleted = sum(1 for p in stored if p not in scanned and stored[p].mtime_ns >= 0)
    modified = sum(1 for p, f in scanned.items()
                   if p in stored and (stored[p].size, stored[p].mtime_ns) != (f.size, f.mtime_ns))
    info["pending"] = {"new": new, "modified": modified, "deleted": deleted}
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    updated = info["updated_at"]
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(updated)) if updated else "never completed"
    print("\n".join([
        f"root         {info['root']}",
        f"index        {info['index_dir']}",
        f"updated      {when}",
        f"files        {info['files']} ({_counts(info['languages']) or '-'})",
        f"chunks       {info['chunks']}",
        f"definitions  {info['definitions']}",
        f"call sites   {info['calls']}",
        f"imports      {info['imports']}",
        f"embeddings   {info['embeddings']}",
        f"integrity    {info['integrity']}",
        f"pending      {new} new, {modified} modified, {deleted} deleted"
        + ("" if new or modified or deleted else " (up to date)"),
    ]))
    return 0


# -- dispatched commands ---------------------------------------------------------------------------
def _dispatch(module: str, func: str) -> Any:
    def run(args: argparse.Namespace) -> int:
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:
            raise CliError(f"`codeseek {args.command}` is not available: cannot import {module} ({exc})",
                           code=1) from exc
        return int(getattr(mod, func)(args))

    return run


def _host_port(value: str) -> str:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="codeseek", description="Semantic code search over a workspace.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def index_dir(p: argparse.ArgumentParser) -> None:
        p.add_argument("--index-dir", metavar="DIR", default=None,
                       help="where the index lives (default: $CODESEEK_INDEX_DIR or the user cache dir)")

    p = sub.add_parser("index", help="build or update the index of a workspace")
    p.add_argument("root", nargs="?", default=".", metavar="ROOT")
    index_dir(p)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(handler=cmd_index)

    p = sub.add_parser("chunks", help="show how a file is chunked")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--root", default=".", metavar="DIR", help="workspace root (default: .)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_chunks)

    p = sub.add_parser("graph", help="callers, callees or impact of a symbol")
    p.add_argument("symbol", metavar="SYMBOL")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--callers", action="store_true")
    mode.add_argument("--callees", action="store_true")
    mode.add_argument("--impact", type=int, metavar="N", help="transitive callers up to depth N")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true")
    fmt.add_argument("--dot", action="store_true", help="Graphviz output")
    p.add_argument("--root", default=".", metavar="DIR")
    index_dir(p)
    p.set_defaults(handler=cmd_graph)

    p = sub.add_parser("status", help="what the index holds and what changed since")
    p.add_argument("root", nargs="?", default=".", metavar="ROOT")
    index_dir(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_status)

    p = sub.add_parser("search", help="search the workspace")
    p.add_argument("query", nargs="?", default=None, metavar="QUERY")
    p.add_argument("--root", default=".", metavar="DIR")
    p.add_argument("--limit", type=int, default=10, metavar="N")
    p.add_argument("--preset", choices=("quick", "default", "thorough"), default="default")
    p.add_argument("--intent", default=None, metavar="NAME")
    p.add_argument("--include", action="append", default=[], metavar="GLOB")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB")
    p.add_argument("--json", action="store_true")
    p.add_argument("--batch", default=None, metavar="FILE", help="JSON lines {id, query} in, results out")
    p.add_argument("--no-embed", action="store_true", help="no semantic retriever (no model load)")
    index_dir(p)
    p.set_defaults(handler=_dispatch("lsp_server.cli_search", "run_search"))

    p = sub.add_parser("eval", help="retrieval evaluation over a query set")
    p.add_argument("queries", nargs="?", default=None, metavar="QUERIES", help="query set (JSON)")
    p.add_argument("--root", default=None, metavar="DIR", help="corpus root (default: from the query set)")
    p.add_argument("--limit", type=int, default=10, metavar="N")
    p.add_argument("--preset", choices=("quick", "default", "thorough"), default="default")
    p.add_argument("--json", action="store_true")
    p.add_argument("--no-embed", action="store_true")
    index_dir(p)
    p.set_defaults(handler=_dispatch("lsp_server.cli_search", "run_eval"))

    p = sub.add_parser("serve", help="run the language server")
    transport = p.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", default=True, help="JSON-RPC over stdio (default)")
    transport.add_argument("--tcp", type=_host_port, default=None, metavar="HOST:PORT")
    p.add_argument("--log-file", default=None, metavar="FILE")
    p.set_defaults(handler=_dispatch("lsp_server.server", "serve"))
    return parser


def _notices() -> None:
    """Index notices (damage repaired, waiting for another writer) go to stderr as one line each."""
    notices = logging.getLogger("codeseek.index")
    if not notices.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("codeseek: %(message)s"))
        notices.addHandler(handler)
        notices.propagate = False


def _rebuild_damaged(args: argparse.Namespace, exc: sqlite3.DatabaseError) -> None:
    """Set a damaged index database aside (the retried command rebuilds it)."""
    root = Path(getattr(args, "root", None) or ".").expanduser().resolve()
    given = getattr(args, "index_dir", None)
    index_dir = Path(given).expanduser() if given else default_index_dir(root)
    store = IndexStore(index_dir)
    try:
        store.rebuild_if_damaged(exc)
    finally:
        store.close()


def _environment_error(exc: BaseException, args: argparse.Namespace) -> str | None:
    cause = exc.__cause__ if exc.__cause__ is not None else exc
    return describe(cause, getattr(args, "index_dir", None) or "the index folder")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "command", None) != "serve":  # the server logs notices and shows them
        _notices()
    for attempt in (1, 2):
        try:
            return int(args.handler(args))
        except sqlite3.DatabaseError as exc:
            if attempt == 1 and is_corruption(exc):
                _rebuild_damaged(args, exc)  # then run the command once more on a fresh index
                continue
            _err(_environment_error(exc, args) or f"the index cannot be used: {exc}")
            return 2
        except CliError as exc:
            _err(str(exc))
            return exc.code
        except (WorkspaceError, StoreError, LockTimeout) as exc:
            _err(str(exc))
            return 2
        except (OSError, RetrieverError) as exc:
            message = _environment_error(exc, args)
            if message is None:
                raise
            _err(message)
            return 2
        except KeyboardInterrupt:
            print("codeseek: interrupted", file=sys.stderr)
            return 130
        except BrokenPipeError:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 1
    return 2


if __name__ == "__main__":
    sys.exit(main())
