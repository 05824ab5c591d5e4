"""The `codeseek` subcommands that read or build the index in process: index, chunks, graph, status.

Each `cmd_*` takes the parsed arguments and returns the exit status; bad input raises `CliError`
(one line on stderr, its `code` as the status: `lsp_server.cli.main.main` reports it).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from indexing.location import index_dir_for
from indexing.scan import scan
from indexing.workspace import UpdateResult, Workspace, WorkspaceOptions, has_index
from lsp_server.cli.foreground import no_collection
from lsp_server.cli.output import share


class CliError(Exception):
    """Bad input on the command line; reported as one line with exit status `code`."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def _root(args: argparse.Namespace, start: Path | None = None) -> Path:
    """The root named by --root (or the positional ROOT), else the project root detected from `start`."""
    from lsp_server.roots import RootChoiceError, choose_root

    named, positional = getattr(args, "root", None), getattr(args, "root_pos", None)
    if named and positional and Path(named).expanduser().resolve() != Path(positional).expanduser().resolve():
        raise CliError(f"two different roots given: {positional} and --root {named}")
    try:
        return choose_root(named or positional, start).root
    except RootChoiceError as exc:
        raise CliError(str(exc)) from exc


def _workspace(root: Path, index_base: str | None) -> Workspace:
    """The workspace of `root`, its index under `--index-dir` (a base folder: `indexing.location`)."""
    base = Path(index_base).expanduser() if index_base else None
    return Workspace(root, WorkspaceOptions(index_base=base, parse_workers=None))


def _update(ws: Workspace, show_progress: bool, plain: bool = False) -> UpdateResult:
    if not show_progress:
        if not plain:
            return ws.update()
        from lsp_server.cli.embed import PlainProgress

        lines = PlainProgress()
        return ws.update(progress=lambda done, total, path: lines("indexing", done, total))
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
    """Call edges in the graph; remembered per index revision (`record_call_edges`) so an unchanged
    re-run, or one whose embedding refresh built the graph, builds nothing."""
    revision = str(ws.revision)
    cached = (ws.store.get_meta("call_edges") or "").split(":")
    if len(cached) == 2 and cached[0] == revision and cached[1].isdigit():
        return int(cached[1])
    try:
        from retrievers.engine.graph_state import GraphState

        graph = GraphState(ws).build()
    except ImportError:
        return None
    return record_call_edges(ws, graph)


def record_call_edges(ws: Workspace, graph: Any) -> int:
    """Remember the call edges of `graph` (built for the index's current revision); returns them."""
    edges = int(graph.stats()["call_edges"])
    ws.store.set_meta("call_edges", f"{ws.revision}:{edges}")
    return edges


def _counts(counter: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


# -- index -----------------------------------------------------------------------------------------
def cmd_index(args: argparse.Namespace) -> int:
    root = _root(args)
    with _workspace(root, args.index_dir) as ws:
        problem = ws.store.check()  # an explicit index run checks the pages too (issue 13)
        if problem != "ok":
            raise sqlite3.DatabaseError(f"database disk image is malformed: {problem}")
        tty = sys.stderr.isatty()
        result = _update(ws, not args.quiet and tty, not args.quiet and not tty)
        counts = ws.store.counts()
        vectors = None
        if not args.no_embed:  # (its refresh builds the call graph and records its edges)
            from lsp_server.cli.embed import embed_index

            vectors = embed_index(ws, args.transformer, not args.quiet and sys.stderr.isatty(),
                                  not args.quiet and not sys.stderr.isatty())
        graph_started = time.perf_counter()
        call_edges = _call_edges(ws)
        seconds = result.seconds + time.perf_counter() - graph_started + (vectors or {}).get("seconds", 0.0)
        error_files = ws.error_files()
        errors = dict(Counter(reason for _, reason in error_files))
        summary = {
            "root": str(ws.root), "index_dir": str(ws.index_dir), "files": counts["files"],
            "languages": result.languages, "parsed": result.parsed, "unchanged": result.unchanged,
            "removed": len(result.removed_paths), "chunks": counts["chunks"],
            "definitions": counts["definitions"], "call_sites": counts["calls"], "call_edges": call_edges,
            "skipped": result.skipped, "errors": errors, "run_errors": result.errors,
            "seconds": round(seconds, 3), "vectors": vectors,
            "skipped_files": [{"path": p, "reason": r} for p, r in result.skipped_paths],
            "error_files": [{"path": p, "reason": r} for p, r in error_files],
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
        *_error_lines(error_files),
        f"  vectors      {_vectors_line(vectors)}",
        f"  seconds      {seconds:.2f}",
    ]
    print("\n".join(lines))
    return 0


def _error_lines(error_files: list[tuple[str, str]], shown: int = 10) -> list[str]:
    """The files behind the errors line, a few of them (--json lists every one)."""
    lines = [f"    {path}  {reason}" for path, reason in error_files[:shown]]
    if len(error_files) > shown:
        lines.append(f"    ... and {len(error_files) - shown} more (--json lists them)")
    return lines


def _vectors_line(vectors: dict[str, Any] | None) -> str:
    if vectors is None:
        return "off (--no-embed)"
    line = f"{vectors['embedded']} static ({vectors['newly_embedded']} new)"
    if vectors.get("transformer_model"):
        line += f", {vectors['transformer_embedded']} transformer"
    return line


# -- chunks ----------------------------------------------------------------------------------------
# Skip reasons of the index that `chunks` keeps too (limits and what the index never reads); a file
# the index leaves out by choice (ignored, an excluded folder, a lockfile) is still chunked, with a note.
_REFUSED = frozenset({"too-large", "binary", "minified", "symlink-outside-root", "symlink-loop",
                      "not-a-file", "unreadable", "outside-root"})


def cmd_chunks(args: argparse.Namespace) -> int:
    from indexing.labels import labels_for
    from indexing.languages import language_for_path
    from indexing.parse import parse_file
    from indexing.scan import relative_path, scan_paths

    file = Path(args.file).expanduser()
    if not file.is_absolute() and args.root and not file.exists():  # relative to the named root
        file = Path(args.root).expanduser() / file
    if not file.is_file():
        raise CliError(f"not a file: {args.file}")
    root = _root(args, file.resolve())
    rel = _relpath(root, file)
    if relative_path(root, file.resolve()) is None:  # what the index never reads: a link out of the root
        raise CliError(f"{file} leads outside the workspace root {root} (through a symlink)")
    language = language_for_path(rel)
    if language is None:
        raise CliError(f"not an indexed file type: {rel}")
    skipped = scan_paths(root, [rel]).skipped
    if skipped and skipped[0][1] in _REFUSED:  # the index's limits hold here too: the file is not read
        if args.json:
            print(json.dumps({"path": rel, "language": language, "skipped": skipped[0][1], "chunks": []}))
        else:
            print(f"{rel}  skipped: {skipped[0][1]}")
        return 1
    if skipped:
        print(f"codeseek: note: the index skips {rel} ({skipped[0][1]})", file=sys.stderr)
    labels = labels_for(rel)
    from indexing.source_encoding import as_utf8

    result = parse_file(rel, as_utf8(rel, file.read_bytes()), language, labels)
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
    from retrievers.codebase import Codebase, GraphMode
    from retrievers.engine.graph_state import GraphState

    root = _root(args)
    fmt = "json" if args.json else "dot" if args.dot else "text"
    mode: GraphMode = "impact" if args.impact is not None else "callees" if args.callees else "callers"
    # No collection while the saved state loads (each load's objects were traversed again by the
    # collections after it: ~55 ms of a call on transformers); frozen after, as a search's refresh.
    with _workspace(root, args.index_dir) as ws, no_collection():
        _update(ws, sys.stderr.isatty())
        # persist: the graph a search saved for this index state is loaded, not rebuilt (and saved if built)
        graph = GraphState(ws, persist=True).build
        report = Codebase(ws, graph).graph_report(args.symbol, mode, fmt, args.impact or 2)
        if not report.definitions:
            print(f"codeseek: no definition named {args.symbol!r}", file=sys.stderr)
            return 1
        if report.listing:
            # An ambiguous name: list the candidates (stderr) and answer for each of them.
            print(f"codeseek: {args.symbol!r} names {len(report.definitions)} definitions:", file=sys.stderr)
            print(report.listing, end="", file=sys.stderr)
        outputs = report.outputs
    if fmt == "json":  # one JSON document, one entry per matching definition
        print(json.dumps({"symbol": args.symbol, "results": [json.loads(o) for o in outputs]}, indent=2))
    else:
        for out in outputs:
            print(out, end="" if out.endswith("\n") else "\n")
    return 0


# -- status ----------------------------------------------------------------------------------------
def cmd_status(args: argparse.Namespace) -> int:
    if args.all:
        from lsp_server.roots import cmd_status_all

        return cmd_status_all(args)
    root = _root(args)
    index_dir = index_dir_for(root, args.index_dir)
    if not has_index(index_dir):
        print(f"codeseek: no index for {root} at {index_dir} (run `codeseek index`)", file=sys.stderr)
        return 1
    with _workspace(root, args.index_dir) as ws:
        integrity = ws.store.check()
        if integrity != "ok":  # say so rather than counting rows of a damaged file
            print(f"codeseek: the index at {ws.index_dir} is damaged ({integrity}); `codeseek index` "
                  "rebuilds it", file=sys.stderr)
            return 2
        info = ws.status()
        from retrievers.sources.text_identity import problem  # a tantivy folder of another index is no "ok"

        info["integrity"] = problem(ws.index_dir, ws.store.get_meta("generation") or "") or integrity
        from retrievers.semantic.embedder import (
            DEFAULT_MODEL_ID,  # how much of the index the transformer covers
        )

        info["transformer_vectors"] = ws.store.count_embeddings(DEFAULT_MODEL_ID)
        stored = ws.store.files()
        listing = scan(ws.root, ws.options.scan)
        scanned = {f.path: f for f in listing.files}
    new = sum(1 for p in scanned if p not in stored)
    deleted = sum(1 for p in stored if p not in scanned and stored[p].mtime_ns >= 0)
    modified = sum(1 for p, f in scanned.items()
                   if p in stored and (stored[p].size, stored[p].mtime_ns) != (f.size, f.mtime_ns))
    info["pending"] = {"new": new, "modified": modified, "deleted": deleted}
    info["skipped"] = listing.skipped_by_reason()
    info["skipped_files"] = [{"path": p, "reason": r} for p, r in listing.skipped]
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
        f"vectors      {info['embeddings']} cached (one per model and distinct embedded text: chunks that "
        "read alike share one; `index` counts chunks with a vector)",
        f"transformer  {info['transformer_vectors']} MiniLM vectors for {info['chunks']} chunks "
        f"({share(info['transformer_vectors'], info['chunks'])}; questions are read by MiniLM either way, "
        "`codeseek index --transformer` fills them in)",
        f"skipped      {sum(info['skipped'].values())}"
        + (f" ({_counts(info['skipped'])})" if info["skipped"] else "") + " (--json lists them)",
        f"integrity    {info['integrity']}",
        f"pending      {new} new, {modified} modified, {deleted} deleted"
        + ("" if new or modified or deleted else " (up to date)"),
    ]))
    return 0
