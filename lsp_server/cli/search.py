"""`codeseek search`: bring the index up to date, search, print.

`run_search(args) -> int`: refresh the index (only new chunks are embedded; `--no-embed` runs without
the semantic retriever and never loads the model), then one query (human output or `--json`, exactly
the result schema) or `--batch FILE` (JSON lines `{"id", "query", ...}` in, one JSON line per query
out, `{"id", ...result}` or `{"id", "error"}`; the model is loaded once). Exit status, as rg's: 0 with
matches, 1 when a valid query matched nothing (no results, or a lookup -- an exact string, a named
definition, the callers of a name -- that found nothing: `match` "none", its related results still
printed under a first line that says so), 2 for bad input (the message says what is wrong).
One query is answered by a running language server or MCP server instead when one shares its engine
on this root's index folder and searches as this process would (`lsp_server.cli.served`; the same
document, printed the same way; `--no-server`: never).

The retrieval evaluation is a developer tool of the checkout (`python bench/eval_public.py`), not a
command of the package: it fetches corpora and reads query sets that are not shipped.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from lsp_server.cli.foreground import no_collection, open_engine, refresh
from lsp_server.cli.served import disk_reader, served_answer
from lsp_server.engine_share import result_document
from retrievers.base import QueryError
from retrievers.engine.request import CheckedRequest, SearchRequest

if TYPE_CHECKING:  # the engine's modules load only for a search in this process (not one a server answers)
    from retrievers.engine.search_engine import SearchEngine

BATCH_KEYS = ("id", "query", "limit", "preset", "intent", "include", "exclude")
SNIPPET_LINES = 6


class SearchCliError(Exception):
    """Bad input to `codeseek search`; exit status 2."""


def _err(message: str) -> None:
    print(f"codeseek: error: {message}", file=sys.stderr)


def _choose(args: argparse.Namespace) -> Path:
    """The root (named, or detected from the current directory; see lsp_server.roots); a
    detected root below which the command runs scopes the search to that subfolder."""
    from lsp_server.cli.output import OutputError, combine_globs, type_globs
    from lsp_server.roots import RootChoiceError, choose_root, subdir_globs

    try:
        chosen = choose_root(getattr(args, "root", None))
        types = type_globs(getattr(args, "types", None) or ())
    except (RootChoiceError, OutputError) as exc:
        raise SearchCliError(str(exc)) from exc
    args.include = list(subdir_globs(chosen.subdir, combine_globs(tuple(args.include or ()), types)))
    args.subdir = chosen.subdir
    return chosen.root


def _request(args: argparse.Namespace, query: Any) -> SearchRequest:
    return SearchRequest(query=query, limit=args.limit, preset=args.preset, intent=args.intent or None,
                         include=tuple(args.include or ()), exclude=tuple(args.exclude or ()))


def run_search(args: argparse.Namespace) -> int:
    """The `codeseek search` command (see the module docstring)."""
    try:
        if args.batch and args.query is not None:
            raise SearchCliError("give either QUERY or --batch FILE, not both")
        if not args.batch and args.query is None:
            raise SearchCliError("a query is required (or --batch FILE)")
        if args.batch and not Path(args.batch).is_file() and args.batch != "-":
            raise SearchCliError(f"batch file not found: {args.batch}")
        if args.context is not None and args.context < 0:
            raise SearchCliError(f"--context must be 0 or more, got {args.context}")
        root = _choose(args)
        checked = None
        if not args.batch:
            checked = _validate_early(args)
            ask = not getattr(args, "no_server", False)
            served = served_answer(root, args, _request(args, args.query)) if ask else None
            if served is not None:  # a running server's engine answered (lsp_server.cli.served)
                try:
                    return _show(served, Path(os.path.realpath(root)), disk_reader(root), args)
                finally:
                    _flush_stdout()
        engine = open_engine(root, args)
    except (SearchCliError, QueryError) as exc:
        _err(str(exc))
        return 2
    try:
        quiet = args.json or args.jsonl or args.vimgrep or args.batch
        refresh(engine, sys.stderr.isatty() and not quiet, plain=not quiet and not sys.stderr.isatty())
        if args.batch:
            return _run_batch(engine, args)
        from retrievers.codebase import Codebase

        try:
            with no_collection():  # what the answer loads (shards, rows) is not traversed again
                result = result_document(Codebase.of(engine), checked or _request(args, args.query))
        except QueryError as exc:
            _err(str(exc))
            return 2
        return _show(result, engine.workspace.root, engine.workspace.read_bytes, args)
    finally:
        _flush_stdout()  # the answer is out before the held-back saves are written (write_behind)
        _close(engine)


def _close(engine: Any) -> None:
    """Close the engine and its workspace once the answer is out. A full disk then costs only what
    was held back to save (the next process derives it again): one line, not a failed search."""
    from indexing.integrity import is_disk_full

    for close in (engine.close, engine.workspace.close):
        try:
            close()
        except Exception as exc:  # (OSError, tantivy's ValueError, sqlite3.OperationalError: a full disk)
            if not is_disk_full(exc) and not is_disk_full(exc.__cause__ or exc):
                raise
            print(f"codeseek: no space left to save what this search derived at {engine.workspace.index_dir}"
                  " (the next search derives it again; free some space)", file=sys.stderr)


def _show(result: dict[str, Any], root: Path, read: Callable[[str], bytes], args: argparse.Namespace) -> int:
    """Print one answer (in this process's or a server's) as the options ask; the exit status."""
    from lsp_server.cli.embed import process_ms

    # The engine's total leaves out this process's start-up, imports and index refresh: say both.
    result["timings_ms"]["process"] = round(process_ms(), 1)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    elif args.jsonl or args.vimgrep:
        _print_lines(result, root, read, args)
    else:
        print_human(result, sys.stdout, context=args.context, read=read, no_embed=args.no_embed)
    return exit_status(result)


def exit_status(result: dict[str, Any]) -> int:
    """rg's convention: 0 when something matched, 1 when nothing did (related results do not count)."""
    return 0 if result["results"] and result.get("match") != "none" else 1


def no_match_line(result: dict[str, Any]) -> str | None:
    """The line that comes first when a lookup found nothing: `no exact match for "..."; related results:`."""
    said = result.get("no_match")
    if result.get("match") != "none" or not said:
        return None
    return f"{said}; related results:" if result["results"] else str(said)


def _flush_stdout() -> None:
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # a reader that left early (`| head`): the flush at exit must not fail again
        from lsp_server.cli.main import quiet_stdout

        quiet_stdout()
    except ValueError:  # a closed stream
        pass


def _print_lines(result: dict[str, Any], root: Path, read: Callable[[str], bytes],
                 args: argparse.Namespace) -> None:
    from lsp_server.cli import output

    if args.vimgrep:
        output.vimgrep(result["results"], root, output.file_lines(root, read), sys.stdout)
    else:
        output.jsonl(result["results"], sys.stdout)
    note = no_match_line(result) or output.no_results_note(result)
    if note:
        print(f"codeseek: {note}", file=sys.stderr)


def _validate_early(args: argparse.Namespace) -> CheckedRequest:
    """Reject a bad query before indexing anything; the checked request is the one searched."""
    from retrievers.engine.request import validate

    return validate(_request(args, args.query))


def _batch_lines(path: str) -> Iterator[tuple[int, str]]:
    stream: TextIO = sys.stdin if path == "-" else open(path, encoding="utf-8")  # noqa: SIM115
    try:
        for number, line in enumerate(stream, 1):
            if line.strip():
                yield number, line
    finally:
        if stream is not sys.stdin:
            stream.close()


def _run_batch(engine: SearchEngine, args: argparse.Namespace) -> int:
    from retrievers.codebase import Codebase

    codebase = Codebase.of(engine)
    failures = 0
    for number, line in _batch_lines(args.batch):
        ident: Any = None
        try:
            item = json.loads(line)
            if not isinstance(item, dict):
                raise QueryError(f"line {number}: expected a JSON object {{\"id\", \"query\"}}")
            ident = item.get("id", number)
            unknown = sorted(set(item) - set(BATCH_KEYS))
            if unknown:
                raise QueryError(f"line {number}: unknown key(s) {', '.join(unknown)}")
            request = SearchRequest(
                query=item.get("query", ""), limit=item.get("limit", args.limit),
                preset=item.get("preset", args.preset), intent=item.get("intent", args.intent or None),
                include=tuple(item.get("include", args.include or ())),
                exclude=tuple(item.get("exclude", args.exclude or ())))
            out: dict[str, Any] = {"id": ident, **codebase.search(request).to_json()}
        except json.JSONDecodeError as exc:
            out = {"id": ident if ident is not None else number,
                   "error": f"line {number}: invalid JSON: {exc}"}
            failures += 1
        except (QueryError, TypeError) as exc:
            out = {"id": ident if ident is not None else number, "error": str(exc)}
            failures += 1
        print(json.dumps(out, ensure_ascii=False), flush=True)
    return 0 if failures == 0 else 2


# -- human output ------------------------------------------------------------------------------------
def semantic_basis(result: dict[str, Any]) -> str | None:
    """What a natural-language answer's semantic ranking rests on: which vectors ranked the chunks,
    which model read the question, and how much of the index the transformer covers."""
    from lsp_server.cli.output import share

    if "semantic" not in result.get("modalities", ()):
        return None
    details = [r.get("explain", {}).get("semantic", {}).get("detail", {}) for r in result.get("results", ())]
    tiers = {d.get("tier") for d in details if d.get("tier")}
    index = result.get("index", {})
    deep = index.get("transformer") or {}
    chunks = int(index.get("chunks") or 0)
    covered = int(deep.get("embedded") or 0)
    vectors = " + ".join(sorted(tiers)) if tiers else "static"
    reader = "MiniLM" if any(d.get("query") == "transformer" or d.get("tier") == "transformer"
                             for d in details) else "the static model"
    return (f"semantic: {vectors} vectors, question read by {reader}; transformer vectors for "
            f"{covered:,} of {chunks:,} chunks ({share(covered, chunks)})")


def print_human(result: dict[str, Any], stream: TextIO, context: int | None = None,
                read: Callable[[str], bytes] | None = None, no_embed: bool = False) -> None:
    """One block per result under a line naming the intent and the route (`context`: N lines around
    each result's line, read with `read`, instead of the snippet)."""
    from rich.console import Console
    from rich.text import Text

    from lsp_server.cli.output import file_lines, no_results_note

    class _Console(Console):
        def on_broken_pipe(self) -> None:  # rich would exit 1; cli.main ends quietly with 0, as rg
            self.quiet = True
            raise BrokenPipeError

    tty = stream.isatty()
    console = _Console(file=stream, highlight=False, soft_wrap=not tty, width=None if tty else 160)
    index = result["index"]
    said = no_match_line(result)
    if said:  # before anything else: what follows are no matches
        console.print(Text(said, style="bold yellow"))
    console.print(_head(result, said))
    basis = semantic_basis(result)
    if basis:
        console.print(Text(basis, style="dim"))
    if no_embed:
        console.print(Text(f"index: {index['chunks']} chunks; semantic search off (--no-embed)", style="dim"))
    elif index["state"] != "ready":
        note = f"index {index['state']}: {index['chunks']} chunks, {index['embedded']} embedded"
        if index["state"] == "text-only":
            note += " (semantic search is off)"
        console.print(Text(note, style="yellow"))
    if not result["results"]:
        if not said:
            console.print(Text(no_results_note(result) or "no results", style="dim"))
        return
    for note in index.get("notes") or []:
        if "relevance floor" in str(note):
            console.print(Text(str(note), style="dim"))
    lines_of = file_lines(Path("."), read) if read is not None else None
    for n, r in enumerate(result["results"], 1):
        _print_entry(console, n, r, context, lines_of, tty)


def _head(result: dict[str, Any], said: str | None) -> Any:
    """The line naming the intent, the route, the count and the time (a rich `Text`)."""
    from rich.text import Text

    intent = result["intent"]
    head = Text()
    head.append(f"{intent['name']}", style="bold")
    head.append(f" ({intent['confidence']:.2f}, {intent['source']})  ")
    route = result["strategy"] + (": " + " + ".join(result["modalities"]) if result["modalities"] else "")
    head.append(f"route {route}  ", style="cyan")
    total_ms = result["timings_ms"].get("total", 0)
    shown, total = len(result["results"]), int(result.get("total") or 0)
    count = f"{shown} of {total}" if total > shown else f"{shown}"
    head.append(f"{count} {'related ' if said else ''}results in {total_ms:.0f} ms", style="dim")
    if "process" in result["timings_ms"]:
        head.append(f" (process {result['timings_ms']['process'] / 1000:.2f} s)", style="dim")
    return head


def _print_entry(console: Any, n: int, r: dict[str, Any], context: int | None,
                 lines_of: Callable[[str], list[str] | None] | None, tty: bool) -> None:
    """One result: its location line, then its snippet (or `context` lines around it)."""
    from rich.syntax import Syntax
    from rich.text import Text

    from lsp_server.cli.output import context_lines, result_line

    console.print()
    line = Text()
    line.append(f"{n:>2}. ", style="dim")
    at = result_line(r)
    line.append(f"{r['path']}:{at}", style="bold green")
    total = r.get("lines_total", r["end_line"] - r["start_line"] + 1)
    shown = r["end_line"] - r["start_line"] + 1
    of = f", {shown} of its {total} lines" if total > shown else ""  # a long span's best window
    line.append(f" ({r['start_line']}-{r['end_line']}{of})", style="dim")
    if r.get("symbol"):
        line.append(f"  {r['symbol']}", style="bold")
    line.append(f"  {r['kind']}", style="magenta")
    if r.get("depth") is not None:
        line.append(f"  depth {r['depth']}", style="yellow")
    if r["labels"] and r["labels"] != ["source"]:
        line.append(f"  [{', '.join(r['labels'])}]", style="yellow")
    line.append(f"  score {r['score']:.4f}", style="dim")
    console.print(line)
    blocks = snippet_blocks(r)
    if context is not None and lines_of is not None:
        first, picked = context_lines(lines_of(r["path"]), at, context)
        blocks = [("\n".join(picked), first)]
    language = r["language"]
    lexer = language if language and language not in ("text", "markdown", "rst") else "text"
    for snippet, first in blocks:
        if snippet and not tty:  # no colours to show: skip the lexer (~0.25 s to compile its rules)
            console.print(Text(numbered(snippet, first)))
        elif snippet:
            console.print(Syntax(snippet, lexer, start_line=first, line_numbers=True,
                                 theme="ansi_dark", word_wrap=False, background_color="default"))
    also = r.get("also") or []
    if also:
        names = ", ".join(f"{a.get('symbol') or 'lines'} {a['start_line']}-{a['end_line']}"
                          for a in also[:3])
        console.print(Text(f"    also in this file: {names}", style="dim"))


def numbered(snippet: str, first: int) -> str:
    """`snippet` with right-aligned line numbers from `first`, laid out as rich's Syntax does."""
    lines = snippet.splitlines()
    width = len(str(first + len(lines) - 1))
    return "\n".join(f"  {n:>{width}} {text}" for n, text in enumerate(lines, first))


def snippet_blocks(r: dict[str, Any]) -> list[tuple[str, int]]:
    """A result's snippet as (text, first line number) blocks: a cut result whose snippet starts with
    the definition's header (then a `...` line) is two blocks, so line numbers stay true."""
    lines = r["snippet"].splitlines()
    full_start = int(r.get("full_start_line", r["start_line"]))
    gap = next((i for i, x in enumerate(lines) if x.strip() == "..."), None)
    if full_start < r["start_line"] and gap:
        body = lines[gap + 1:][: max(1, SNIPPET_LINES - gap)]
        return [("\n".join(lines[:gap]), full_start), ("\n".join(body), int(r["start_line"]))]
    return [("\n".join(lines[:SNIPPET_LINES]), int(r["start_line"]))]
