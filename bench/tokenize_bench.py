"""The static tier's tokenizing on a real tree: the tokenizer's own batch call beside
`retrievers.semantic.word_pieces` (each distinct word tokenized once), same texts, same ids.

Every chunk of the tree is parsed as the index parses it and shaped as the embedding worker shapes it
(`embedded_text.embed_text` with its defaults, cut at the static model's limit); both ways then
tokenize the texts in the worker's batches, rounds interleaved, one tokenizer thread (as each worker
process has it on a loaded machine); it prints the median seconds and chunks/s of each, their ratio,
and whether every text got the same ids (`word_pieces arrays`: the arrays the static tier's mean
vectors read, `WordPieceIds.id_arrays`). `--vectors` also times the whole `mean_vectors` both ways and
checks the vectors are bit-identical.

    .venv/bin/python bench/tokenize_bench.py                       # the Django 5.1.4 sdist, 3 rounds
    .venv/bin/python bench/tokenize_bench.py --tree requests --rounds 5 --vectors
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from bench.corpora import fetch_sdist  # noqa: E402
from indexing.languages import language_for_path  # noqa: E402
from indexing.parse import parse_file  # noqa: E402
from retrievers.semantic.embed_pass import WORKER_BATCH  # noqa: E402
from retrievers.semantic.embedded_text import embed_text  # noqa: E402
from retrievers.semantic.static_embedder import StaticEmbedder, _TokenVectors  # noqa: E402
from retrievers.semantic.word_pieces import as_lists, word_piece_ids  # noqa: E402

TREES = {"django-sdist": ("Django", "5.1.4"), "requests": ("requests", "2.32.3"),
         "transformers": ("transformers", "4.46.3")}
BATCH = WORKER_BATCH  # the embedding worker's batch


def tree_texts(root: Path, limit: int) -> list[str]:
    """The embedded text of every chunk under `root`, cut at `limit` characters."""
    texts: list[str] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        language = language_for_path(rel)
        if language is None:
            continue
        data = path.read_bytes()
        for chunk in parse_file(rel, data, language, ("source",)).chunks:
            text = data[chunk.start_byte : chunk.end_byte].decode("utf-8", "replace")
            if text.strip():
                texts.append(embed_text(chunk, text)[:limit])  # (the worker's defaults: long paths get a `…`)
    return texts


def timed(step: object, texts: list[str]) -> tuple[float, list[object]]:
    started = time.perf_counter()
    out = [step(texts[i : i + BATCH]) for i in range(0, len(texts), BATCH)]  # type: ignore[operator]
    return time.perf_counter() - started, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", choices=sorted(TREES), default="django-sdist")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--vectors", action="store_true", help="also time mean_vectors both ways")
    args = parser.parse_args(argv)
    model = StaticEmbedder()._directory()  # (the shipped model, as a search uses it)
    root = fetch_sdist(*TREES[args.tree])
    words_model = _TokenVectors(model, 512)
    plain_model = _TokenVectors(model, 512)
    plain_model._words = None
    words = word_piece_ids(words_model.tokenizer, model / "tokenizer.json")
    if words is None:
        print(f"{model}: not an uncased BERT tokenizer, no shortcut to time")
        return 1
    texts = tree_texts(root, 512 * 8)
    print(f"{args.tree}: {len(texts):,} chunks, {sum(map(len, texts)) / 1e6:.1f} M characters; model {model}")
    tok = words_model.tokenizer

    def plain(batch: list[str]) -> list[list[int]]:
        return [list(e.ids) for e in tok.encode_batch_fast(batch, add_special_tokens=False)]

    steps = {"tokenizer": plain, "word_pieces": words.ids, "word_pieces arrays": words.id_arrays}
    if args.vectors:
        steps |= {"vectors, tokenizer": plain_model.mean_vectors,
                  "vectors, word_pieces": words_model.mean_vectors}
    seconds: dict[str, list[float]] = {name: [] for name in steps}
    outputs: dict[str, list[object]] = {}
    for round_ in range(args.rounds):
        for name in (list(steps) if round_ % 2 == 0 else list(reversed(steps))):
            if name.startswith("word_pieces"):
                words.forget()  # every round starts with no word known, as a new worker does
            elif name == "vectors, word_pieces" and words_model._words is not None:
                words_model._words.forget()
            took, outputs[name] = timed(steps[name], texts)
            seconds[name].append(took)
    same = outputs["tokenizer"] == outputs["word_pieces"] == [
        as_lists(*made) for made in outputs["word_pieces arrays"]]  # type: ignore[misc]
    print(f"{'':22s} {'median s':>9s} {'chunks/s':>10s} {'vs tokenizer':>13s}")
    for name, runs in seconds.items():
        base = statistics.median(seconds["tokenizer" if "vectors" not in name else "vectors, tokenizer"])
        median = statistics.median(runs)
        print(f"{name:22s} {median:9.2f} {len(texts) / median:10,.0f} {median / base:12.2f}x")
    print(f"same ids for every chunk: {same}")
    if args.vectors:
        a: np.ndarray = np.concatenate(outputs["vectors, tokenizer"])  # type: ignore[arg-type]
        b: np.ndarray = np.concatenate(outputs["vectors, word_pieces"])  # type: ignore[arg-type]
        print(f"bit-identical vectors: {bool(np.array_equal(a, b))}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
