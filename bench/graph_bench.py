"""Call-graph build, PageRank and traversal times on a real corpus, as medians of several runs.

    .venv/bin/python bench/graph_bench.py                    # requests 2.32.3 and Django 5.1.4 sdists
    .venv/bin/python bench/graph_bench.py --root DIR --runs 5

Parses every file once (not timed here; see index_bench), then times `build_call_graph` and the
first `pagerank` over fresh builds, and `resolve` + `callers` + `impact(depth=3)` per symbol.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpora import fetch_sdist  # noqa: E402
from graph.callgraph import build_call_graph  # noqa: E402
from indexing.languages import GRAMMARS, language_for_path  # noqa: E402
from indexing.parse import parse_file  # noqa: E402
from indexing.records import CallSite, Definition, Import, ParseResult  # noqa: E402

SYMBOLS = ("Session.request", "get_object_or_404", "QuerySet.filter", "reverse", "HttpResponse", "request")


def numbered(results: Iterable[ParseResult]) -> tuple[list[Definition], list[CallSite], list[Import]]:
    """The records of several parses, definitions numbered from 1 as the store numbers them."""
    defs: list[Definition] = []
    calls: list[CallSite] = []
    imports: list[Import] = []
    for result in results:
        for d in result.definitions:
            d.id = len(defs) + 1
            defs.append(d)
        calls.extend(result.calls)
        imports.extend(result.imports)
    return defs, calls, imports


def parse_tree(root: Path) -> tuple[list[Definition], list[CallSite], list[Import]]:
    def parses() -> Iterator[ParseResult]:
        for path in sorted(root.rglob("*")):
            if not path.is_file() or any(part.startswith(".") for part in path.relative_to(root).parts):
                continue
            rel = path.relative_to(root).as_posix()
            language = language_for_path(rel)
            if language in GRAMMARS:
                yield parse_file(rel, path.read_bytes(), language, ("source",))

    return numbered(parses())


def bench(name: str, root: Path, runs: int) -> None:
    defs, calls, imports = parse_tree(root)
    builds: list[float] = []
    cpu: list[float] = []
    collects: list[float] = []
    ranks: list[float] = []
    graph = None
    for _ in range(runs):
        graph = None  # drop the previous graph before timing the next build
        gc.collect()
        started, started_cpu = time.perf_counter(), time.process_time()
        graph = build_call_graph(defs, calls, imports)
        builds.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
        started = time.perf_counter()
        gc.collect()  # the build defers garbage collection; this is what the next pass costs
        collects.append(time.perf_counter() - started)
        started = time.perf_counter()
        _ = graph.pagerank
        ranks.append(time.perf_counter() - started)
    assert graph is not None
    lookups: list[float] = []
    for symbol in SYMBOLS:
        started = time.perf_counter()
        for d in graph.resolve(symbol)[:1]:
            graph.callers(d.id)
            graph.impact(d.id, 3)
        lookups.append((time.perf_counter() - started) * 1000)
    stats = graph.stats()
    sites = max(stats["call_sites"], 1)
    print(f"{name}: {len(defs)} definitions, {len(calls)} call sites, {len(imports)} imports")
    print(f"  build median {statistics.median(builds):.2f} s wall, {statistics.median(cpu):.2f} s CPU "
          f"(runs: {', '.join(f'{b:.2f}' for b in builds)}); the next full GC pass "
          f"{statistics.median(collects):.2f} s")
    print(f"  pagerank median {statistics.median(ranks):.2f} s")
    print(f"  resolve+callers+impact(3) median {statistics.median(lookups):.1f} ms per symbol")
    print(f"  edges: call {stats['call_edges']}, inherits {stats['inherits_edges']}, "
          f"imports {stats['import_edges']}")
    print(f"  sites: resolved {stats['resolved_calls'] / sites:.0%} "
          f"(ambiguous {stats['ambiguous_calls'] / sites:.0%}), "
          f"external {stats['external_calls'] / sites:.0%}, "
          f"too many candidates {stats['too_many_candidates'] / sites:.0%}, "
          f"unresolved in all {stats['unresolved_calls'] / sites:.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, help="a source tree (default: requests and Django sdists)")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if args.root:
        bench(args.root.name, args.root, args.runs)
        return
    bench("requests 2.32.3", fetch_sdist("requests", "2.32.3"), args.runs)
    bench("Django 5.1.4", fetch_sdist("Django", "5.1.4"), args.runs)


if __name__ == "__main__":
    main()
