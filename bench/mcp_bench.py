"""MCP server benchmark: `codeseek mcp` over stdio, driven by the `mcp` SDK's own client, on requests 2.32.3.

Per run (a fresh index each run), printed as medians:
- cold: process start to the first `search` answer (the call waits for phase 1 of the first refresh)
  and to the first `definition` answer;
- warm restart on the persisted index: process start to the first `search` answer;
- latency per tool on the warm server: p50 / p95 over a query set (search) and a symbol list
  (definition, callers, callees, impact, related);
- answer size: bytes of the JSON text an agent receives from `search` with the defaults (5 results,
  8 snippet lines) against the same queries asked for the full result schema (`limit` 10,
  `snippet_lines` 12, `explain`: what `codeseek search --json` prints, less `uri`), and the ratio;
- freshness (issue 29), on a copy of the tree the server watches: the slowest `search` made after
  `IDLE_S` seconds without a call (when a server without a watcher would start a refresh and wait on
  it), against the p50 of calls in a row (`idle_extra_ms`: what a call waited), and the seconds from
  writing a file (a new one, then an edit of an existing one) to a `search` that finds what it added,
  with the p50 and the slowest of the searches asked meanwhile (every `POLL_S`, while it re-indexes).

`--no-embed` is the default (no model load: the figures are the server's own cost); `--embed` runs
with the semantic retriever (the cold run then embeds every chunk first).
Usage: `python bench/mcp_bench.py [--runs 3] [--embed] [--tree requests|django-sdist] [--changes 3] [--json]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
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
IDLE_S = 6.0  # longer than `McpOptions.refresh_interval` (5 s)
PROBES = 3  # idle calls, and changes of each kind
POLL_S = 0.2  # between the searches that look for a change (an agent asks less often: a search costs CPU)


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


async def _timed(session: Any, times: list[float], tool: str, **arguments: Any) -> str:
    """`_text` of one call, its seconds appended to `times`."""
    started = time.perf_counter()
    text = await _text(session, tool, **arguments)
    times.append(time.perf_counter() - started)
    return text


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
        small.append(len((await _timed(session, times["search"], "search", query=query)).encode()))
        full.append(len((await _text(session, "search", query=query, limit=10, snippet_lines=12,
                                     explain=True)).encode()))
    for tool in NAV_TOOLS:
        for symbol in SYMBOLS:
            await _timed(session, times[tool], tool, symbol=symbol)
    for tool, values in times.items():
        values.sort()
        out[f"{tool}_p50_ms"] = 1000 * statistics.median(values)
        out[f"{tool}_p95_ms"] = 1000 * values[min(len(values) - 1, int(0.95 * len(values)))]
    out["search_bytes_default"] = statistics.median(small)
    out["search_bytes_full"] = statistics.median(full)
    out["search_bytes_ratio"] = statistics.median(f / s for f, s in zip(full, small, strict=True))
    return out


def _fresh_work(root: Path, changes: int = PROBES) -> Any:
    """The freshness measurements (module docstring) on `root`, a copy the bench may write to;
    `changes` of each kind."""
    async def work(session: Any, started: float) -> dict[str, float]:
        await _text(session, "search", query=QUERIES[0])
        in_a_row: list[float] = []
        for query in QUERIES[:10]:
            await _timed(session, in_a_row, "search", query=query)
        idle: list[float] = []
        for query in QUERIES[:PROBES]:
            await asyncio.sleep(IDLE_S)
            await _timed(session, idle, "search", query=query)
        sources = (p for p in root.rglob("*.py") if "test" not in str(p.relative_to(root)))
        existing = max(sources, key=lambda p: p.stat().st_size)  # (the longest file to edit)
        new_s: list[float] = []
        edit_s: list[float] = []
        polls: list[float] = []
        for n in range(changes):
            new_file = root / f"codeseek_probe_{n}.py"
            new_s.append(await _visible(session, new_file, f"quokka_ledger_{n}", False, polls))
            edit_s.append(await _visible(session, existing, f"wombat_tally_{n}", True, polls))
        return {"idle_call_max_ms": 1000 * max(idle),
                "idle_extra_ms": 1000 * (max(idle) - statistics.median(in_a_row)),
                "search_while_indexing_p50_ms": 1000 * statistics.median(polls),
                "search_while_indexing_max_ms": 1000 * max(polls),
                "new_file_visible_s": statistics.median(new_s),
                "edited_file_visible_s": statistics.median(edit_s)}
    return work


async def _visible(session: Any, path: Path, name: str, append: bool, polls: list[float],
                   limit_s: float = 30.0) -> float:
    """Seconds from writing a function `name` into `path` (appended, or as a new file) to a `search`
    for it that answers with that function (`path`, its `def` line in the snippet); `limit_s` when
    none does by then. Each search's seconds go to `polls` (they run while the server re-indexes)."""
    text = f"\n\ndef {name}(count):\n    return count + 1\n"
    started = time.perf_counter()
    if append:
        with path.open("a", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text.lstrip(), encoding="utf-8")
    while time.perf_counter() - started < limit_s:
        answer = json.loads(await _timed(session, polls, "search", query=name, limit=3))
        if any(r["path"].endswith(path.name) and f"def {name}(" in r.get("snippet", "")
               for r in answer.get("results", ())):
            return time.perf_counter() - started
        await asyncio.sleep(POLL_S)
    return limit_s


TREES = {"requests": ("requests", "2.32.3"), "django-sdist": ("Django", "5.1.4")}


def run(runs: int, embed: bool, tree: str = "requests", changes: int = PROBES) -> dict[str, float]:
    """Medians over `runs`; on a `tree` other than requests (whose queries and symbols the latency
    part asks) the cold start and the freshness part only."""
    root = fetch_sdist(*TREES[tree])
    rows = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="codeseek-mcp-bench-") as tmp:
            index_dir = Path(tmp) / "index"
            row = asyncio.run(_session_run(root, index_dir, embed, _cold))
            if tree == "requests":
                row.update(asyncio.run(_session_run(root, index_dir, embed, _warm)))
            copy = Path(tmp) / "tree"
            shutil.copytree(root, copy, symlinks=True)
            fresh = _fresh_work(copy, changes)
            row.update(asyncio.run(_session_run(copy, Path(tmp) / "index-copy", embed, fresh)))
            rows.append(row)
    return {key: statistics.median(r[key] for r in rows) for key in rows[0]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--embed", action="store_true", help="with the semantic retriever (loads the model)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--tree", choices=sorted(TREES), default="requests")
    parser.add_argument("--changes", type=int, default=PROBES,
                        help=f"changes of each kind whose visibility is timed (default {PROBES}; the median)")
    args = parser.parse_args()
    medians = run(args.runs, args.embed, args.tree, max(1, args.changes))
    if args.json:
        print(json.dumps(medians, indent=2))
        return 0
    print(f"codeseek mcp on {' '.join(TREES[args.tree])}, {'with' if args.embed else 'without'} embeddings, "
          f"medians of {args.runs} run(s)")
    for key, value in medians.items():
        print(f"  {key:<26} {value:10.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
