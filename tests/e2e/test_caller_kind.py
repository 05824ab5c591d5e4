"""Issue 30 item 8: a caller found by "who calls X" is labelled with its own definition's kind (a
method inside a small class chunked whole is a method, not the class; a test function is a function)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_callers_carry_the_callers_own_kind(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "shop").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'c'\n")
    (root / "shop" / "cart.py").write_text(
        "class Cart:\n    def __init__(self):\n        self.lines = []\n\n    def total(self):\n"
        "        return sum(self.lines)\n\n    def preview(self):\n        return f\"{self.total()} due\"\n")
    (root / "shop" / "report.py").write_text(
        "from shop.cart import Cart\n\n\ndef test_preview_shows_the_total():\n"
        "    assert Cart().total() == 0\n")
    argv = [sys.executable, "-m", "lsp_server.cli", "search", "who calls Cart.total", "--root", str(root),
            "--index-dir", str(tmp_path / "index"), "--no-embed"]
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO))
    done = subprocess.run([*argv, "--json"], capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    found = [(r["path"], r["line"], r["symbol"], r["kind"]) for r in json.loads(done.stdout)["results"]]
    assert found == [("shop/cart.py", 9, "Cart.preview", "method"),
                     ("shop/report.py", 5, "test_preview_shows_the_total", "function")]
    text = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=REPO, timeout=300).stdout
    assert "Cart.preview  method" in text and "Cart.preview  class" not in text, text
