"""Child process of bench/peer_bench.py: build one index cold (every vector), time warm queries, print JSON.

    python bench/peer_worker.py codeseek ROOT --index-dir DIR --queries FILE [--repeat N]
    <semble venv>/bin/python bench/peer_worker.py semble ROOT --model DIR --queries FILE [--repeat N]

Only the standard library is imported at module level, so the same file runs in codeseek's venv and
in semble's. The last stdout line is a JSON object: `ready_at` (time.time() when the index with every
vector was built, so the parent gets spawn-to-ready wall time), `import_s`, `build_s`, `chunks`,
`latencies_ms` (every timed query; one untimed warm-up pass first), `top` (first hit per query),
`model`. semble is told its cache folder by SEMBLE_CACHE_LOCATION (the parent gives a fresh one, so
`SembleIndex.from_path` builds rather than loads).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any


def _time_queries(search: Any, queries: list[str], repeat: int) -> tuple[list[float], dict[str, str]]:
    top: dict[str, str] = {}
    for q in queries:  # warm-up pass, untimed
        top[q] = search(q)
    latencies = []
    for _ in range(repeat):
        for q in queries:
            started = time.perf_counter()
            search(q)
            latencies.append((time.perf_counter() - started) * 1000)
    return latencies, top


def run_codeseek(root: Path, index_dir: Path, queries: list[str], repeat: int) -> dict[str, Any]:
    started = time.perf_counter()
    from indexing.workspace import Workspace, WorkspaceOptions
    from retrievers.engine.search_engine import EngineOptions, SearchEngine, SearchRequest

    try:  # what `codeseek search` uses (every CPU for embedding), where this checkout has it
        from lsp_server.cli.foreground import foreground_engine_options

        options = foreground_engine_options(True)
    except ImportError:
        options = EngineOptions()
    imported = time.perf_counter()
    ws = Workspace(root, WorkspaceOptions(index_base=index_dir, parse_workers=None))  # as `codeseek search`
    engine = SearchEngine(ws, options)
    engine.refresh(embed=True)
    ready_at = time.time()
    built = time.perf_counter()
    info = engine.index_info()

    def search(q: str) -> str:
        results = engine.search(SearchRequest(q, limit=10)).results
        return f"{results[0].path}:{results[0].start_line}" if results else "-"

    latencies, top = _time_queries(search, queries, repeat)
    engine.close()
    ws.close()
    return {"ready_at": ready_at, "import_s": imported - started, "build_s": built - imported,
            "chunks": info.get("chunks"), "embedded": info.get("embedded"), "model": info.get("model"),
            "latencies_ms": latencies, "top": top}


def run_semble(root: Path, model: str, queries: list[str], repeat: int) -> dict[str, Any]:
    started = time.perf_counter()
    from semble import SembleIndex

    imported = time.perf_counter()
    index = SembleIndex.from_path(root, model_path=model)
    ready_at = time.time()
    built = time.perf_counter()

    def search(q: str) -> str:
        results = index.search(q, top_k=10)
        return f"{results[0].chunk.file_path}:{results[0].chunk.start_line}" if results else "-"

    latencies, top = _time_queries(search, queries, repeat)
    return {"ready_at": ready_at, "import_s": imported - started, "build_s": built - imported,
            "chunks": len(index.chunks), "embedded": len(index.chunks), "model": model,
            "loaded_from_disk": index.loaded_from_disk, "latencies_ms": latencies, "top": top}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tool", choices=("codeseek", "semble"))
    parser.add_argument("root")
    parser.add_argument("--index-dir", help="codeseek: the (fresh) index base folder, as the CLI's")
    parser.add_argument("--model", help="semble: the model2vec model folder")
    parser.add_argument("--queries", required=True, help="JSON list of query strings")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    queries = json.loads(Path(args.queries).read_text())
    root = Path(args.root)
    if args.tool == "codeseek":
        out = run_codeseek(root, Path(args.index_dir), queries, args.repeat)
    else:
        out = run_semble(root, args.model, queries, args.repeat)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
