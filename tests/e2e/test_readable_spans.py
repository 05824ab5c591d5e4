"""Readable spans end to end (issue 9): `codeseek search --json` over a 160-line function shows at most
60 lines, its best-matching part under the def line, and says how long the whole function is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.e2e.cli_support import search_json

BODY = "".join(f"    step_{i} = prepare(batch, {i})\n" for i in range(150))
SOURCE = ("def run_pipeline(batch):\n"
          '    """Run every stage of the pipeline."""\n'
          + BODY
          + "    checksum = verify_manifest_signature(batch)\n"
          + "".join(f"    tail_{i} = finish(batch)\n" for i in range(8))
          + "    return checksum\n")
# Line numbers: def 1, docstring 2, steps 3..152, the checksum line 153, tail 154..161, return 162.


def search(root: Path, index: Path, query: str, *extra: str) -> dict[str, Any]:
    return search_json(root, index, query, *extra)


def test_a_long_function_shows_its_best_part_and_its_whole_length(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "pipeline.py").write_text(SOURCE)
    index = tmp_path / "index"

    found = search(root, index, "where is the manifest signature verified in run_pipeline")
    top = found["results"][0]
    assert (top["path"], top["symbol"]) == ("pipeline.py", "run_pipeline")
    assert (top["full_start_line"], top["full_end_line"], top["lines_total"]) == (1, 162, 162)
    assert (top["start_line"], top["end_line"]) == (104, 162)  # def line + the last 59 lines
    snippet = top["snippet"].splitlines()
    assert snippet[:2] == ["def run_pipeline(batch):", "    ..."]
    assert snippet[2] == "    step_101 = prepare(batch, 101)"
    assert (top["line"], top["column"]) == (1, 4)  # where the cursor goes: the name, not the window

    head = search(root, index, "run_pipeline")["results"][0]
    assert (head["start_line"], head["end_line"], head["line"], head["lines_total"]) == (1, 60, 1, 162)

    whole = search(root, index, "run_pipeline", "--max-lines", "0")["results"][0]
    assert (whole["start_line"], whole["end_line"], whole["lines_total"]) == (1, 162, 162)


def test_the_terminal_output_numbers_the_header_and_the_window_truly(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "pipeline.py").write_text(SOURCE)
    env = dict(os.environ, HF_HUB_OFFLINE="1", COLUMNS="120")
    proc = subprocess.run(
        [sys.executable, "-m", "lsp_server.cli", "search", "manifest signature in run_pipeline",
         "--no-embed", "--limit", "1", "--root", str(root), "--index-dir", str(tmp_path / "index")],
        capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = [line.strip() for line in proc.stdout.splitlines()]
    # The location is the def's name line (issue 30), the window shown is lines 104-162.
    assert "1. pipeline.py:1 (104-162, 59 of its 162 lines)  run_pipeline  function" in " ".join(out)
    numbered = [line for line in out if line[:1].isdigit() and not line.startswith("1. ")]
    assert numbered[:2] == ["1 def run_pipeline(batch):", "104     step_101 = prepare(batch, 101)"]
