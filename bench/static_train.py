"""Experiment: train the static model on code (tokenlearn recipe) and write model2vec directories.

    python bench/static_train.py --corpus stdlib=6000+site=4000 --chunks 8000 --out /tmp/static-stdlib
    python bench/eval_public.py --summary --model static:/tmp/static-stdlib

Corpora: `stdlib` (this interpreter's standard library), `site` (the venv's site-packages without any
package an eval set searches), `js:DIR` (a folder of JavaScript). MiniLM's targets are cached under
`~/.cache/codeseek-static-train/` by a fingerprint of the texts, so variants reuse them.
"""

from __future__ import annotations

import argparse
import json
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from retrievers.semantic.static_embedder import write_query_projection  # noqa: E402
from retrievers.semantic.static_training import (  # noqa: E402
    QueryPairs,
    TrainSettings,
    collect_texts,
    corpus_fingerprint,
    fit_embeddings,
    pca_targets,
    projection_basis,
    question_pairs,
    stdlib_files,
    stdlib_root,
)

CACHE = Path.home() / ".cache" / "codeseek-static-train"
# Packages an eval set searches (bench/queries, /work/shared/eval, semble-dev), and their close kin.
EVAL_PACKAGES = {"click", "flask", "requests", "pydantic", "pydantic_core", "model2vec", "werkzeug",
                 "jinja2", "itsdangerous", "markupsafe", "blinker", "urllib3", "retrievers", "indexing",
                 "graph", "lsp_server", "bench", "tests", "express"}


def site_files(root: Path) -> list[Path]:
    out = []
    for path in root.rglob("*.py"):
        parts = path.relative_to(root).parts
        top = parts[0].split(".")[0].split("-")[0].lower()
        if top in EVAL_PACKAGES or top.startswith("_") or any(p in ("tests", "test") for p in parts):
            continue
        if top in ("torch", "sympy", "mypy", "scipy", "sklearn", "transformers", "numpy", "pip",
                   "setuptools", "torchgen", "functorch", "mypyc", "pygments"):
            continue  # huge or generated: keeps the sample varied
        out.append(path)
    return sorted(out)


SKIP_PARTS = {"test", "tests", "testdata", "testing", "__tests__", "spec", "vendor", "node_modules", "dist",
              "docs", "doc", "examples", "example", "benches", "fixtures", "bundles"}


def tree_files(root: Path) -> list[Path]:
    """Source files codeseek parses into definitions, in any language, tests and bundles left out."""
    from indexing.languages import language_for_path

    out = []
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if not path.is_file() or any(p.lower() in SKIP_PARTS for p in rel.parts[:-1]):
            continue
        name = path.name
        if ".min." in name or name.endswith((".d.ts", "_test.go")) or name.startswith("test_"):
            continue
        lang = language_for_path(rel.as_posix())
        if lang in ("python", "javascript", "typescript", "tsx", "go", "rust", "java", "ruby", "c", "cpp"):
            out.append(path)
    return sorted(out)


def part_files(part: str) -> tuple[Path, list[Path]]:
    """(root, source files) of one corpus part: `stdlib`, `site`, `tree:DIR` or `js:DIR`."""
    if part == "stdlib":
        root = stdlib_root()
        return root, stdlib_files(root)
    if part == "site":
        root = Path(sysconfig.get_paths()["purelib"])
        return root, site_files(root)
    if part.startswith("tree:"):
        root = Path(part[5:])
        return root, tree_files(root)
    if part.startswith("js:"):
        root = Path(part[3:])
        return root, sorted(p for p in root.rglob("*.js") if ".min." not in p.name)
    raise SystemExit(f"unknown corpus {part!r}")


def gather_part(part: str, settings: TrainSettings) -> list[str]:
    """Chunk texts then query-like texts of one corpus part."""
    root, files = part_files(part)
    chunks, queries = collect_texts(files, root, settings)
    print(f"{part}: {len(files)} files -> {len(chunks)} chunks, {len(queries)} query texts", file=sys.stderr)
    return chunks + (queries if settings.query_share > 0 else [])


def _bank() -> dict[str, np.ndarray]:
    """Every cached target by its text (texts-*.json beside targets-*.npy)."""
    bank: dict[str, np.ndarray] = {}
    for texts_file in CACHE.glob("texts-*.json"):
        vectors_file = CACHE / texts_file.name.replace("texts-", "targets-").replace(".json", ".npy")
        if vectors_file.exists():
            bank.update(zip(json.loads(texts_file.read_text()), np.load(vectors_file), strict=True))
    return bank


def targets_for(texts: list[str]) -> np.ndarray:
    CACHE.mkdir(parents=True, exist_ok=True)
    fingerprint = corpus_fingerprint(texts)
    path = CACHE / f"targets-{fingerprint}.npy"
    if path.exists():
        return np.load(path)
    bank = _bank()
    missing = list(dict.fromkeys(t for t in texts if t not in bank))  # only these are embedded
    if not missing:
        return np.stack([bank[t] for t in texts])
    from retrievers.semantic.embedder import Embedder, EmbedderOptions, foreground_options

    # torch (sentence-transformers) for the corpus: several times the numpy backend's speed on long
    # batches, and the same vectors
    embedder = Embedder(None, EmbedderOptions(**{**foreground_options().__dict__, "backend": "torch"}))
    started = time.monotonic()
    last = [0.0]

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] > 30:
            last[0] = now
            rate = done / max(now - started, 1e-6)
            print(f"  MiniLM {done}/{total} ({rate:.1f}/s)", file=sys.stderr, flush=True)

    made = embedder.encode_documents(missing, progress=report)
    print(f"MiniLM targets: {len(missing)} new texts in {time.monotonic() - started:.0f} s", file=sys.stderr)
    bank.update(zip(missing, made, strict=True))
    vectors = np.stack([bank[t] for t in texts])
    np.save(path, vectors)
    (CACHE / f"texts-{fingerprint}.json").write_text(json.dumps(texts))
    return vectors


def distill_with_vocabulary(texts: list[str], size: int) -> Any:
    """model2vec's distillation of the packaged MiniLM plus `size` identifier words of `texts`."""
    from model2vec.distill import distill

    from retrievers.semantic.static_model import DistillSettings, packaged_source
    from retrievers.semantic.static_training import identifier_vocabulary

    source = packaged_source()
    known = set(json.loads((source / "tokenizer.json").read_text())["model"]["vocab"])
    vocabulary = identifier_vocabulary(texts, known, size)
    print(f"vocabulary: {len(vocabulary)} words added, e.g. {vocabulary[:12]}", file=sys.stderr)
    opts = DistillSettings()
    started = time.monotonic()
    model = distill(model_name=str(source), vocabulary=vocabulary, pca_dims=opts.pca_dims,
                    sif_coefficient=opts.sif_coefficient, token_remove_pattern=opts.token_remove_pattern)
    print(f"distilled in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return model


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="stdlib")
    parser.add_argument("--chunks", type=int, default=8000)
    parser.add_argument("--query-share", type=float, default=0.0)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--base", default=None, help="model2vec dir to start from (default: distilled)")
    parser.add_argument("--targets-only", action="store_true")
    parser.add_argument("--vocab", type=int, default=0, help="add this many identifier words (distils anew)")
    parser.add_argument("--no-train", action="store_true", help="write the (vocabulary) base untrained")
    parser.add_argument("--fold", action="store_true",
                        help="fold the head: vectors in MiniLM's (projected) space, queries by MiniLM")
    parser.add_argument("--pairs", type=float, default=0.0,
                        help="weight of the question/code contrastive term (needs --fold)")
    parser.add_argument("--temperature", type=float, default=0.05)
    parser.add_argument("--from-distill", action="store_true",
                        help="start from a fresh distillation of the packaged MiniLM (not the cached model)")
    parser.add_argument("--float16", action="store_true", help="write the vectors as float16")
    parser.add_argument("--loss", choices=("mse", "cosine"), default="mse")
    parser.add_argument("--out", required=False)
    args = parser.parse_args()
    settings = TrainSettings(chunks=args.chunks, query_share=args.query_share, epochs=args.epochs, lr=args.lr,
                             loss=args.loss)
    texts: list[str] = []
    targets_list = []
    for spec in args.corpus.split("+"):
        part, _, count = spec.partition("=")
        sub = TrainSettings(**{**settings.__dict__, "chunks": int(count or args.chunks)})
        part_texts = gather_part(part, sub)
        texts += part_texts
        targets_list.append(targets_for(part_texts))
    targets = np.concatenate(targets_list)
    if args.targets_only or not args.out:
        return 0
    from model2vec import StaticModel

    from retrievers.semantic.static_model import ensure_static_model

    if args.vocab or args.from_distill:
        model = distill_with_vocabulary(texts, args.vocab)
    else:
        base = Path(args.base) if args.base else ensure_static_model()
        model = StaticModel.from_pretrained(str(base), normalize=True)
    if args.no_train:
        model.save_pretrained(args.out)
        return 0
    pad_id = model.tokenizer.token_to_id("[PAD]")
    ids = [e.ids for e in model.tokenizer.encode_batch_fast(texts, add_special_tokens=False)]
    started = time.monotonic()
    basis = projection_basis(targets, model.dim) if args.fold else None
    reduced = targets @ basis if basis is not None else pca_targets(targets, model.dim)
    pairs = None
    if args.pairs > 0:
        found = question_pairs(texts)
        questions = targets_for([q for q, _ in found])
        code_ids = [e.ids for e in model.tokenizer.encode_batch_fast([c for _, c in found],
                                                                      add_special_tokens=False)]
        assert basis is not None, "--pairs needs --fold"
        pairs = QueryPairs(code_ids, questions @ basis, args.pairs, args.temperature)
        print(f"pairs: {len(found)} question/code pairs", file=sys.stderr)
    fitted = fit_embeddings(np.asarray(model.embedding, dtype=np.float32), ids, reduced, pad_id, settings,
                            progress=lambda p, d, t: print(f"  {p} {d}/{t}", file=sys.stderr) if d % 200 == 0
                            else None, fold_head=args.fold, pairs=pairs)
    print(f"trained in {time.monotonic() - started:.0f} s", file=sys.stderr)
    if args.float16:
        fitted = fitted.astype(np.float16)
    out = StaticModel(vectors=fitted, tokenizer=model.tokenizer, config=model.config, normalize=True)
    out.save_pretrained(args.out)
    if basis is not None:
        write_query_projection(Path(args.out), basis)
    (Path(args.out) / "training.json").write_text(json.dumps(
        {"corpus": args.corpus, "texts": len(texts), **settings.__dict__}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
