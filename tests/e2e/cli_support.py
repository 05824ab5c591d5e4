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
