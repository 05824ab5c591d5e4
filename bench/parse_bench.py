"""Parse + chunk speed of `indexing.parse.parse_file` alone (no store, no embeddings).

Prints, per corpus, the median over several runs of the time to parse and chunk every indexable file
(files are read into memory first), with files/s, MB/s and chunk/definition/call counts.

    .venv/bin/python -m bench.parse_bench [--runs 3] [--django]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from bench.corpora import fetch_npm, fetch_sdist
from indexing.languages import language_for_path
from indexing.parse import parse_file


def load(root: Path, max_size: int = 1_000_000) -> list[tuple[str, str | None, bytes]]:
    files = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.stat().st_size > max_size:
            continue
        rel = path.relative_to(root).as_posix()
        lang = language_for_path(rel)
        if lang is not None:
            files.append((rel, lang, path.read_bytes()))
    return files


def run(name: str, files: list[tuple[str, str | None, bytes]], runs: int) -> None:
    times = []
    counts = (0, 0, 0)
    for _ in range(runs):
        start = time.perf_counter()
        results = [parse_file(rel, source, lang, ("source",)) for rel, lang, source in files]
        times.append(time.perf_counter() - start)
        counts = (
            sum(len(r.chunks) for r in results),
            sum(len(r.definitions) for r in results),
            sum(len(r.calls) for r in results),
        )
    median = statistics.median(times)
    megabytes = sum(len(s) for _, _, s in files) / 1e6
    print(
        f"{name:<16} files={len(files):<5} MB={megabytes:6.2f} median={median:7.3f}s "
        f"files/s={len(files) / median:7.0f} MB/s={megabytes / median:5.2f} "
        f"chunks={counts[0]} definitions={counts[1]} calls={counts[2]}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--django", action="store_true", help="also Django 5.1.4 (downloaded once)")
    args = parser.parse_args()
    parse_file("warm.py", b"def f():\n    return 1\n", "python", ())  # load grammars and queries once
    run("requests 2.32.3", load(fetch_sdist("requests", "2.32.3")), args.runs)
    run("express 4.21.2", load(fetch_npm("express", "4.21.2")), args.runs)
    if args.django:
        run("Django 5.1.4", load(fetch_sdist("Django", "5.1.4")), args.runs)


if __name__ == "__main__":
    main()
