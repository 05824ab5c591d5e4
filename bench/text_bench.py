"""Text index figures on requests 2.32.3: build time, size, BM25 and exact-string latency (medians).

    .venv/bin/python bench/text_bench.py
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexing.workspace import Workspace, WorkspaceOptions  # noqa: E402
from retrievers.base import Query  # noqa: E402
from retrievers.sources.text import TextRetriever  # noqa: E402

BM25_QUERIES = ["proxy", "select_proxy", "how does requests strip credentials on redirect", "rebuild_auth"]
EXACT_STRINGS = ["Content-Length", "Invalid URL {url!r}", "self", "def ", "=="]


def median_ms(fn: Callable[[], object], repeats: int = 21) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> int:
    from bench.corpora import fetch_sdist

    root = Path(fetch_sdist("requests", "2.32.3"))
    index_dir = Path(tempfile.mkdtemp(prefix="codeseek-text-bench-"))
    ws = Workspace(root, WorkspaceOptions(index_dir=index_dir))
    ws.update()
    chunks = ws.store.chunks()
    builds = []
    for n in range(3):
        sub = index_dir / f"build{n}"
        start = time.perf_counter()
        text = TextRetriever(sub, ws.chunk_text, read_file=ws.read_bytes)
        text.index(chunks)
        builds.append(time.perf_counter() - start)
        text.close()
    text = TextRetriever(index_dir / "build0", ws.chunk_text, read_file=ws.read_bytes)
    noop = median_ms(lambda: text.index(chunks), 5)
    source = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    print(f"requests 2.32.3: {len(chunks)} chunks; build median {statistics.median(builds):.2f} s; "
          f"no-op index() on reopen {noop:.1f} ms; index {dir_size(index_dir / 'build0') // 1024} KB "
          f"(source {source // 1024} KB); load {os.getloadavg()[0]:.1f}")
    for q in BM25_QUERIES:
        query = Query(q)
        print(f"bm25  {q!r}: {median_ms(lambda: text.search(query, 10)):.3f} ms")  # noqa: B023
    for s in EXACT_STRINGS:
        hits = text.exact(s, 10)
        print(f"exact {s!r}: {median_ms(lambda: text.exact(s, 10)):.2f} ms, {len(hits)} hits")  # noqa: B023
    text.close()
    ws.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
