"""`make demo`: index the requests 2.32.3 sources and run a few different kinds of search.

Fetches the sdist once (pip download, cached in ~/.cache/codeseek-corpora), indexes it with a
progress bar (parse, text index, call graph, then embeddings with the packaged all-MiniLM-L6-v2;
a second run reuses everything), then asks a question, an identifier, an exact string, "who calls X"
and "what breaks if I change X", printing each answer as `codeseek search` does.

    python bench/demo.py [--no-embed] [--limit N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from indexing.workspace import Workspace, WorkspaceOptions  # noqa: E402
from lsp_server.cli.foreground import foreground_engine_options, refresh  # noqa: E402
from lsp_server.cli.search import print_human  # noqa: E402
from retrievers.engine.keeper import IndexKeeper  # noqa: E402
from retrievers.engine.search_engine import SearchEngine, SearchRequest  # noqa: E402

SEARCHES = [
    ("a question", "where do we strip the credentials when a redirect goes to another host?"),
    ("an identifier", "HTTPAdapter.send"),
    ("an exact string", '"Missing dependencies for SOCKS support."'),
    ("who calls X", "who calls get_netrc_auth"),
    ("impact of X", "what breaks if I change to_key_val_list"),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-embed", action="store_true", help="no semantic retriever (no model load)")
    parser.add_argument("--limit", type=int, default=3)
    args = parser.parse_args(argv)

    from rich.console import Console
    from rich.rule import Rule

    console = Console()
    from bench.corpora import fetch_sdist

    console.print("[bold]codeseek demo[/bold]: fetching requests 2.32.3 (cached after the first run)")
    root = fetch_sdist("requests", "2.32.3")
    workspace = Workspace(root, WorkspaceOptions())
    engine = SearchEngine(workspace, foreground_engine_options(embeddings=not args.no_embed))
    try:
        started = time.perf_counter()
        result = refresh(engine, show_progress=True)
        info = engine.index_info()
        console.print(f"indexed {root} in {time.perf_counter() - started:.1f} s: {info['files']} files, "
                      f"{info['chunks']} chunks, {info['embedded']} embedded ({result.embedded} new), "
                      f"index at {workspace.index_dir}")
        with console.status("loading the embedding model"):
            IndexKeeper(engine).warm_up()
        for kind, query in SEARCHES:
            console.print()
            console.print(Rule(f"{kind}: {query}", align="left"))
            answer = engine.search(SearchRequest(query, limit=args.limit))
            print_human(answer.to_json(), sys.stdout)
    finally:
        engine.close()
        workspace.close()
    console.print()
    console.print("Try your own: [bold].venv/bin/codeseek search \"QUERY\" --root "
                  f"{root}[/bold] (add --json for the machine-readable form)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
