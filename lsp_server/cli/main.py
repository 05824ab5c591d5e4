"""The `codeseek` console script: the parser and `main`; index, chunks, graph, status in
`cli.index_commands`; search, serve, mcp, model and gc dispatched.

`main(argv) -> int` parses arguments and returns the exit status: 0 on success, 1 when the request
was valid but found nothing (an unknown symbol, a missing index), 2 for bad input (a root that does
not exist, a file outside the root, a broken index directory), 130 when interrupted. When stdout's
reader leaves early (`codeseek search x --jsonl | head -1`) the command stops writing and exits 0 with
nothing on stderr, as rg does. Errors are one
line on stderr. `search`, `serve` and `mcp` import their modules only when run.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from indexing.integrity import describe, is_corruption
from indexing.location import index_dir_for
from indexing.locking import LockTimeout
from indexing.workspace import StoreError, WorkspaceError, set_aside_damaged
from lsp_server.cli.index_commands import CliError, cmd_chunks, cmd_graph, cmd_index, cmd_status
from lsp_server.process_tuning import reap_worker_processes
from retrievers.base import RetrieverError


def _err(message: str) -> None:
    print(f"codeseek: error: {message}", file=sys.stderr)


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


QUESTION_POOL = 40  # retrievers.semantic.tiered.TierBlend.question_pool (not imported here: start-up time)
MAX_QUESTION_POOL = 200  # lsp_server.lsp.options.MAX_QUESTION_POOL


def _pool_size(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if not 0 <= n <= MAX_QUESTION_POOL:
        raise argparse.ArgumentTypeError(f"must be 0 (off) to {MAX_QUESTION_POOL}, got {n}")
    return n


def _positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {n}")
    return n


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("codeseek")
    except Exception:  # not installed as a distribution (a bare checkout)
        return "unknown"


class _VersionAction(argparse.Action):
    """`--version`: looks the version up only when asked (importlib.metadata costs a warm search ~30 ms)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str = "show the version and exit") -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(f"codeseek {_version()}")
        parser.exit()


ROOT_HELP = ("workspace root (default: the project root above the current directory: the nearest "
             ".codeseek, .git or .hg, else pyproject.toml, package.json, go.mod or Cargo.toml)")


def _root_options(p: argparse.ArgumentParser, positional: bool = False) -> None:
    """`--root DIR` on every command; `index` and `status` keep ROOT as a positional alias."""
    if positional:
        p.add_argument("root_pos", nargs="?", default=None, metavar="ROOT", help="same as --root")
    p.add_argument("--root", default=None, metavar="DIR", help=ROOT_HELP)
    p.add_argument("--index-dir", metavar="DIR", default=None,
                   help="base folder of the indexes, one folder per root inside it (default: "
                        "$CODESEEK_INDEX_DIR or the user cache dir)")


SubParsers = Any  # argparse's `_SubParsersAction` (private)


def build_parser() -> argparse.ArgumentParser:
    """The `codeseek` parser: one subcommand per function below, in the order `--help` lists them."""
    parser = argparse.ArgumentParser(prog="codeseek", description="Semantic code search over a workspace.")
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in (_index_command, _model_command, _chunks_command, _graph_command, _status_command,
                _gc_command, _search_command, _mcp_command, _serve_command, _completion_command):
        add(sub)
    return parser


def _index_command(sub: SubParsers) -> None:
    p = sub.add_parser("index", help="build or update the index of a workspace")
    _root_options(p, positional=True)
    _flags(p, ("--json", "print the summary as JSON (with every skipped file)"),
           ("--quiet", "no progress bar"), ("--no-embed", "parse only: no vectors (no model load)"),
           ("--transformer", "also fill in the transformer tier (MiniLM vectors; minutes on a large tree)"))
    p.set_defaults(handler=cmd_index)


def _model_command(sub: SubParsers) -> None:
    p = sub.add_parser("model", help="build (once) and locate the static embedding model")
    _flags(p, ("--path", "print only the model directory"))
    p.set_defaults(handler=_dispatch("lsp_server.cli.embed", "run_model"))


def _chunks_command(sub: SubParsers) -> None:
    p = sub.add_parser("chunks", help="show how a file is chunked")
    p.add_argument("file", metavar="FILE", help="the file to chunk (its project root is found from it)")
    p.add_argument("--root", default=None, metavar="DIR", help="workspace root (default: found from FILE)")
    _flags(p, ("--json", "print the chunks as JSON"))
    p.set_defaults(handler=cmd_chunks)


def _graph_command(sub: SubParsers) -> None:
    p = sub.add_parser("graph", help="callers, callees or impact of a symbol")
    p.add_argument("symbol", metavar="SYMBOL", help="a definition's name or qualified name (Class.method)")
    mode = p.add_mutually_exclusive_group()
    _flags(mode, ("--callers", "who calls SYMBOL (the default)"), ("--callees", "what SYMBOL calls"))
    mode.add_argument("--impact", type=_positive, metavar="N", help="transitive callers up to depth N (1+)")
    _flags(p.add_mutually_exclusive_group(), ("--json", "JSON output"), ("--dot", "Graphviz output"))
    _root_options(p)
    p.set_defaults(handler=cmd_graph)


def _status_command(sub: SubParsers) -> None:
    p = sub.add_parser("status", help="what the index holds and what changed since")
    _root_options(p, positional=True)
    _flags(p, ("--json", "JSON output (with every skipped file and its reason)"),
           ("--all", "list every stored index, its root and whether it is stale"))
    p.set_defaults(handler=cmd_status)


def _gc_command(sub: SubParsers) -> None:
    p = sub.add_parser("gc", help="remove stale indexes (their root is gone or maps elsewhere)")
    _flags(p, ("--dry-run", "only list what would be removed"), ("--json", "JSON output"))
    p.set_defaults(handler=_dispatch("lsp_server.roots", "cmd_gc"))


SEARCH_DESCRIPTION = (
    "Search the workspace (from a subfolder: scoped to it). The words of QUERY need no quotes: every "
    "word that is not an option or an option's value is one query, joined by spaces (`codeseek search "
    "error handler --limit 5 django` asks for \"error handler django\"). Quote a phrase to search for "
    "it exactly ('\"no such key\"'); put a word that starts with '-' after `--`.")


def _search_command(sub: SubParsers) -> None:
    from retrievers.ranking.intent import INTENTS
    from retrievers.ranking.profile import PRESETS as presets

    p = sub.add_parser("search", help="search the workspace (from a subfolder: scoped to it)",
                       description=SEARCH_DESCRIPTION)
    p.add_argument("query", nargs="*", default=None, metavar="QUERY",
                   help="what to look for: words, a symbol name, or a question about the code")
    _root_options(p)
    p.add_argument("--limit", type=int, default=10, metavar="N", help="at most N results (1-200, default 10)")
    p.add_argument("--preset", choices=presets, default="default",
                   help="speed/recall trade-off (default: default)")
    p.add_argument("--intent", default=None, metavar="NAME",
                   help=f"force the query intent: {', '.join(INTENTS)}")
    _search_filters(p)
    p.add_argument("-C", "--context", type=int, default=None, metavar="N",
                   help="show N lines around each result's line instead of the snippet")
    p.add_argument("--max-lines", type=int, default=60, metavar="N",
                   help="a longer result shows its best-matching N lines (default 60, 0: whole)")
    p.add_argument("--question-pool", type=_pool_size, default=QUESTION_POOL, metavar="N",
                   help="a question: the transformer embeds, then ranks, the static top N (and BM25's top "
                        f"10) it has no vector of (default {QUESTION_POOL}, 0: off)")
    _flags(p.add_mutually_exclusive_group(), ("--json", "one JSON document (the result schema)"),
           ("--jsonl", "one JSON object per result, streamed"),
           ("--vimgrep", "path:line:col:text lines (for Vim's quickfix)"))
    p.add_argument("--batch", default=None, metavar="FILE", help="JSON lines {id, query} in, results out")
    _flags(p, NO_EMBED, ("--no-server", "search in this process even when a running language server or MCP "
                                        "server on this root could answer (lsp_server.engine_socket)"))
    p.set_defaults(handler=_dispatch("lsp_server.cli.search", "run_search"))


def _search_filters(p: argparse.ArgumentParser) -> None:
    """`search`'s path filters: --include, --exclude, -t/--type."""
    p.add_argument("--include", action="append", default=[], metavar="GLOB",
                   help="only paths matching GLOB (gitignore syntax, relative to the root; repeatable)")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                   help="skip paths matching GLOB (repeatable)")
    p.add_argument("-t", "--type", action="append", default=[], metavar="TYPE", dest="types",
                   help="only files of this language (python or py, ts, go, rs, md...; repeatable)")


def _mcp_command(sub: SubParsers) -> None:
    p = sub.add_parser("mcp", help="run the MCP server (stdio) for coding agents")
    _root_options(p)
    _flags(p, NO_EMBED, ("--no-share-engine", "do not answer `codeseek search` on this root over a socket "
                                              "in its index folder"),
           ("--no-watch", "do not watch the root: a tool call rescans when the last refresh is 5 s old"),
           ("--no-transformer", "do not fill the transformer tier (MiniLM vectors) in the background"))
    p.set_defaults(handler=_dispatch("lsp_server.mcp.server", "serve"))


def _serve_command(sub: SubParsers) -> None:
    p = sub.add_parser("serve", help="run the language server")
    transport = p.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", default=True, help="JSON-RPC over stdio (default)")
    transport.add_argument("--tcp", type=_host_port, default=None, metavar="HOST:PORT",
                           help="serve one client over TCP")
    p.add_argument("--log-file", default=None, metavar="FILE", help="write the log here instead of stderr")
    p.set_defaults(handler=_dispatch("lsp_server.lsp.server", "serve"))


def _completion_command(sub: SubParsers) -> None:
    p = sub.add_parser("completion", help="print a shell completion script (bash, zsh or tcsh)")
    p.add_argument("shell", choices=("bash", "zsh", "tcsh"), help="the shell to complete for")
    p.set_defaults(handler=cmd_completion)


NO_EMBED = ("--no-embed", "no semantic retriever (no model load)")


def _flags(p: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup, *flags: tuple[str, str]) -> None:
    """On/off options (`store_true`): (name, help) each, in order."""
    for name, help in flags:
        p.add_argument(name, action="store_true", help=help)


def cmd_completion(args: argparse.Namespace) -> int:
    try:
        import shtab
    except ImportError as exc:
        raise CliError("shell completion needs the shtab package (pip install shtab)", code=1) from exc
    print(shtab.complete(build_parser(), shell=args.shell))
    return 0


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
    from lsp_server.roots import RootChoiceError, choose_root

    try:
        root = choose_root(getattr(args, "root", None) or getattr(args, "root_pos", None)).root
    except RootChoiceError:
        root = Path(".").resolve()
    set_aside_damaged(index_dir_for(root, getattr(args, "index_dir", None)), exc)


def _environment_error(exc: BaseException, args: argparse.Namespace) -> str | None:
    cause = exc.__cause__ if exc.__cause__ is not None else exc
    return describe(cause, getattr(args, "index_dir", None) or "the index folder")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The parsed command line; `search` takes its words from anywhere on the line (between options
    too) as one query, joined by spaces (None when there are none: `--batch`)."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if getattr(args, "command", None) == "search" and not any(w.startswith("-") for w in extra):
        words = [*(args.query or ()), *extra]
        args.query = " ".join(words) if words else None
        return args
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _run_command(argv)
    finally:  # the pools' fork server, waited for: `time codeseek ...` then counts the workers' CPU
        reap_worker_processes()


def _run_command(argv: Sequence[str] | None) -> int:
    args = parse_args(argv)
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
        except BrokenPipeError:  # before OSError, its base: a reader that left early is no error
            quiet_stdout()
            return 0
        except (OSError, RetrieverError) as exc:
            message = _environment_error(exc, args)
            if message is None:
                raise
            _err(message)
            return 2
        except KeyboardInterrupt:
            print("codeseek: interrupted", file=sys.stderr)
            return 130
    return 2


def quiet_stdout() -> None:
    """stdout's reader is gone (`| head -1`): what is still buffered goes to /dev/null, so the flush at
    exit raises nothing either (Python's own advice for SIGPIPE)."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # no file descriptor behind sys.stdout (a test's capture)
        pass


if __name__ == "__main__":
    sys.exit(main())
