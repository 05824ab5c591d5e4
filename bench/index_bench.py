"""Index benchmark: full and unchanged re-run times on requests 2.32.3 and Django, as medians.

Each run is a fresh child process (so imports, caches and memory are per run, as for a user):
`full` opens a new, empty index and runs `Workspace.update()`; `unchanged` opens that index again in
another process and updates it with nothing changed; `graph` is the call-graph build after the full
update (reported apart; `codeseek index` does it once per change for its summary). Peak memory is the
child's ru_maxrss. No embeddings. Targets on the 2-core dev machine: requests under 2 s full and
0.3 s unchanged, Django under 60 s full.

    .venv/bin/python bench/index_bench.py [--runs-requests 5] [--runs-django 3] [--no-django]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

DJANGO_VERSION = "5.1.4"
TARGETS = {"requests": (2.0, 0.3), "Django": (60.0, None)}


def child(root: str, index_dir: str, mode: str) -> None:
    """Runs in the child process: one update, figures as JSON on stdout."""
    from indexing.workspace import Workspace, WorkspaceOptions

    started = time.perf_counter()
    ws = Workspace(Path(root), WorkspaceOptions(index_dir=Path(index_dir)))
    result = ws.update()
    seconds = time.perf_counter() - started
    graph_seconds = None
    if mode == "full":
        graph_started = time.perf_counter()
        try:
            from retrievers.engine.graph_state import GraphState

            GraphState(ws).build()
            graph_seconds = time.perf_counter() - graph_started
        except ImportError:
            pass
    indexed_bytes = sum(row.size for row in ws.store.files().values())
    counts = ws.store.counts()
    ws.close()
    print(json.dumps({
        "seconds": seconds, "graph_seconds": graph_seconds, "parsed": result.parsed,
        "files": counts["files"], "chunks": counts["chunks"], "definitions": counts["definitions"],
        "bytes": indexed_bytes, "errors": result.errors, "skipped": sum(result.skipped.values()),
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }))


def run_child(root: Path, index_dir: Path, mode: str) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, __file__, "--child", str(root), str(index_dir), mode],
                          capture_output=True, text=True, cwd=REPO, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"benchmark child failed ({mode} {root}):\n{proc.stderr}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def bench_corpus(name: str, root: Path, runs: int) -> dict[str, Any]:
    full: list[dict[str, Any]] = []
    unchanged: list[dict[str, Any]] = []
    for _ in range(runs):
        index_dir = Path(tempfile.mkdtemp(prefix="codeseek-bench-"))
        try:
            full.append(run_child(root, index_dir, "full"))
            unchanged.append(run_child(root, index_dir, "unchanged"))
        finally:
            shutil.rmtree(index_dir, ignore_errors=True)
    assert all(u["parsed"] == 0 for u in unchanged), "an unchanged re-run parsed files"
    med_full = statistics.median(r["seconds"] for r in full)
    graphs = [r["graph_seconds"] for r in full if r["graph_seconds"] is not None]
    first = full[0]
    return {
        "corpus": name, "runs": runs, "files": first["files"], "chunks": first["chunks"],
        "definitions": first["definitions"], "mb": first["bytes"] / 1e6, "full_s": med_full,
        "full_runs": [round(r["seconds"], 3) for r in full],
        "unchanged_s": statistics.median(r["seconds"] for r in unchanged),
        "unchanged_runs": [round(r["seconds"], 3) for r in unchanged],
        "graph_s": statistics.median(graphs) if graphs else None,
        "files_per_s": first["files"] / med_full, "mb_per_s": first["bytes"] / 1e6 / med_full,
        "peak_rss_mb": max(r["maxrss_mb"] for r in full), "errors": first["errors"],
    }


def report(rows: list[dict[str, Any]]) -> None:
    header = (f"{'corpus':<18}{'files':>7}{'MB':>7}{'chunks':>8}{'full s':>9}{'files/s':>9}{'MB/s':>7}"
              f"{'unch. s':>9}{'graph s':>9}{'peak MB':>9}")
    print(header)
    print("-" * len(header))
    for r in rows:
        graph = f"{r['graph_s']:.2f}" if r["graph_s"] is not None else "n/a"
        print(f"{r['corpus']:<18}{r['files']:>7}{r['mb']:>7.1f}{r['chunks']:>8}{r['full_s']:>9.2f}"
              f"{r['files_per_s']:>9.0f}{r['mb_per_s']:>7.2f}{r['unchanged_s']:>9.3f}{graph:>9}"
              f"{r['peak_rss_mb']:>9.0f}")
    print()
    for r in rows:
        print(f"{r['corpus']}: medians of {r['runs']} runs; full {r['full_runs']}, "
              f"unchanged {r['unchanged_runs']}; parse errors {r['errors'] or 'none'}")
        target_full, target_unchanged = TARGETS[r["corpus"].split("-")[0]]
        verdicts = [f"full {'OK' if r['full_s'] < target_full else 'MISSED'} (< {target_full:g} s)"]
        if target_unchanged is not None:
            ok = r["unchanged_s"] < target_unchanged
            verdicts.append(f"unchanged {'OK' if ok else 'MISSED'} (< {target_unchanged:g} s)")
        print("  targets: " + ", ".join(verdicts))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--child", nargs=3, metavar=("ROOT", "INDEX_DIR", "MODE"), help=argparse.SUPPRESS)
    parser.add_argument("--runs-requests", type=int, default=5)
    parser.add_argument("--runs-django", type=int, default=3)
    parser.add_argument("--django-version", default=DJANGO_VERSION)
    parser.add_argument("--no-django", action="store_true")
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    from bench.corpora import fetch_sdist

    rows = [bench_corpus("requests-2.32.3", fetch_sdist("requests", "2.32.3"), args.runs_requests)]
    if not args.no_django:
        django = fetch_sdist("Django", args.django_version)
        rows.append(bench_corpus(f"Django-{args.django_version}", django, args.runs_django))
    report(rows)
    if args.json:
        print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
