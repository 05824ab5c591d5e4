"""MCP server benchmark: `codeseek mcp` over stdio, driven by the `mcp` SDK's own client, on requests 2.32.3.

Per run (a fresh index each run), printed as medians:
- cold: process start to the first `search` answer (the call waits for phase 1 of the first refresh)
  and to the first `definition` answer;
- warm restart on the persisted index: process start to the first `search` answer;
- latency per tool on the warm server: p50 / p95 over a query set (search) and a symbol list
  (definition, callers, callees, impact, related);
- answer size: bytes of the JSON text an agent receives from `search` with the defaults (5 results,
  8 snippet lines) against the same queries asked for the full result schema (`limit` 10,
  `snippet_lines` 12, `explain`: what `codeseek search --json` prints, less `uri`), and the ratio.

`--no-embed` is the default (no model load: the figures are the server's own cost); `--embed` runs
with the semantic retriever (the cold run then embeds every chunk first).
Usage: `python bench/mcp_bench.py [--runs 3] [--embed] [--json]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.corpora import fetch_sdist  # noqa: E402
from bench.lsp_bench import QUERIES  # noqa: E402

SYMBOLS = ["Session.request", "super_len", "rebuild_auth", "prepare_request", "get_netrc_auth",
           "HTTPAdapter.send", "merge_setting", "to_key_val_list", "PreparedRequest.prepare_body",
           "should_strip_auth"]
NAV_TOOLS = ("definition", "callers", "callees", "impact", "related")


async def _session_run(root: Path, index_dir: Path, embed: bool, work: Any) -> Any:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    args = ["-m", "lsp_server.cli", "mcp", "--root", str(root), "--index-dir", str(index_dir)]
    env = {"HF_HUB_OFFLINE": "1", "PYTHONPATH": os.environ.get("PYTHONPATH", str(REPO)),
           "CODESEEK_LOG": "WARNING"}
    params = StdioServerParameters(command=sys.executable, args=args + ([] if embed else ["--no-embed"]),
                                   env=env)
    started = time.perf_counter()
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await work(session, started)


async def _text(session: Any, tool: str, **arguments: Any) -> str:
    result = await session.call_tool(tool, arguments)
    if result.is_error:
        raise RuntimeError(f"{tool} {arguments}: {result.content[0].text}")
    return str(result.content[0].text)


async def _cold(session: Any, started: float) -> dict[str, float]:
    await _text(session, "search", query=QUERIES[0])
    first_search = time.perf_counter() - started
    await _text(session, "definition", symbol=SYMBOLS[0])
    return {"first_search_s": first_search, "first_definition_s": time.perf_counter() - started}


async def _warm(session: Any, started: float) -> dict[str, Any]:
    await _text(session, "search", query=QUERIES[0])
    out: dict[str, Any] = {"warm_first_search_s": time.perf_counter() - started}
    times: dict[str, list[float]] = {tool: [] for tool in ("search", *NAV_TOOLS)}
    small, full = [], []
    for query in QUERIES:
        t = time.perf_counter()
        small.append(len((await _text(session, "search", query=query)).encode()))
        times["search"].append(time.perf_counter() - t)
        full.append(len((await _text(session, "search", query=query, limit=10, snippet_lines=12,
                                     explain=True)).encode()))
    for tool in NAV_TOOLS:
        for symbol in SYMBOLS:
            t = time.perf_counter()
            await _text(session, tool, symbol=symbol)
            times[tool].append(time.perf_counter() - t)
    for tool, values in times.items():
        values.sort()
        out[f"{tool}_p50_ms"] = 1000 * statistics.median(values)
        out[f"{tool}_p95_ms"] = 1000 * values[min(len(values) - 1, int(0.95 * len(values)))]
    out["search_bytes_default"] = statistics.median(small)
    out["search_bytes_full"] = statistics.median(full)
    out["search_bytes_ratio"] = statistics.median(f / s for f, s in zip(full, small, strict=True))
    return out


def run(runs: int, embed: bool) -> dict[str, float]:
    root = fetch_sdist("requests", "2.32.3")
    rows = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="codeseek-mcp-bench-") as tmp:
            index_dir = Path(tmp) / "index"
            row = asyncio.run(_session_run(root, index_dir, embed, _cold))
            row.update(asyncio.run(_session_run(root, index_dir, embed, _warm)))
            rows.append(row)
    return {key: statistics.median(r[key] for r in rows) for key in rows[0]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--embed", action="store_true", help="with the semantic retriever (loads the model)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    medians = run(args.runs, args.embed)
    if args.json:
        print(json.dumps(medians, indent=2))
        return 0
    print(f"codeseek mcp on requests 2.32.3, {'with' if args.embed else 'without'} embeddings, "
          f"medians of {args.runs} run(s)")
    for key, value in medians.items():
        print(f"  {key:<26} {value:10.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
