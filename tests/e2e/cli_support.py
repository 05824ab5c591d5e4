"""Running `codeseek search --json --no-embed` as a user would, for the end-to-end tests of ranking
mechanisms over a small workspace written by the test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def search_json(root: Path, index: Path, query: str, *extra: str) -> dict[str, Any]:
    """The result document of one text-only search of `root` (index base `index`); fails the test on
    a non-zero exit."""
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    proc = subprocess.run(
        [sys.executable, "-m", "lsp_server.cli", "search", query, "--json", "--no-embed", *extra,
         "--root", str(root), "--index-dir", str(index)],
        capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def write_many_modules(root: Path, files: int, per_package: int, functions: int) -> None:
    """A generated tree of `files` Python modules (`per_package` to a package), each with `functions`
    small functions: a workspace large enough for a phase to take a while."""
    for i in range(files):
        package = root / f"pkg{i // per_package}"
        package.mkdir(parents=True, exist_ok=True)
        body = (f"def function_{i}_{j}(value):\n    return helper_{j}(value) + {j}\n\n\n"
                for j in range(functions))
        (package / f"mod{i}.py").write_text("".join(body))
