"""Exact-case identifier preference end to end (issue 9): `codeseek search HELP_OPTION` answers with the
constant `HELP_OPTION` (in a test file) before the source function `help_option`, and the other way round."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

DECORATORS = '''"""Decorators for commands."""


def help_option(*param_decls, **kwargs):
    """Add a ``--help`` option which immediately prints the help page and exits the program."""

    def show_help(ctx, param, value):
        if value:
            ctx.exit()

    return param_decls, show_help
'''
TEST_INFO = '''HELP_OPTION = ("help", {"name": "help", "flags": ["--help"], "is_flag": True})


def test_help_option_info():
    assert HELP_OPTION[0] == "help"
'''


def search(root: Path, index: Path, query: str) -> list[tuple[str, int, str]]:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    proc = subprocess.run(
        [sys.executable, "-m", "lsp_server.cli", "search", query, "--json", "--no-embed", "--limit", "2",
         "--root", str(root), "--index-dir", str(index)],
        capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return [(r["path"], r["start_line"], r["symbol"]) for r in data["results"]]


def test_the_exact_case_name_ranks_first(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "src/cli").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "src/cli/decorators.py").write_text(DECORATORS)
    (root / "tests/test_info.py").write_text(TEST_INFO)
    index = tmp_path / "index"
    assert search(root, index, "HELP_OPTION") == [
        ("tests/test_info.py", 1, "HELP_OPTION"), ("src/cli/decorators.py", 4, "help_option")]
    assert search(root, index, "help_option") == [
        ("src/cli/decorators.py", 4, "help_option"), ("tests/test_info.py", 1, "HELP_OPTION")]
