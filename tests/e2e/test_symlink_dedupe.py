"""Symlinks end to end (issue 9): `codeseek search` over a workspace with a linked folder and a linked
file answers with the real path, once; a link that leaves the workspace is never read."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.e2e.cli_support import search_json

PRICING = '''"""Prices."""


def apply_voucher(total, code):
    """Take a voucher off a total."""
    if code == "FREESHIP":
        raise ValueError("voucher expired for shipping")
    return total - 5
'''


def search(root: Path, index: Path, query: str) -> dict[str, Any]:
    return search_json(root, index, query)


def test_search_answers_with_the_real_path_not_the_link(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "core/shop").mkdir(parents=True)
    (root / "core/shop/pricing.py").write_text(PRICING)
    (root / "app").mkdir()
    os.symlink("../core/shop", root / "app/shop")  # a linked folder
    os.symlink("core/shop/pricing.py", root / "pricing_link.py")  # a linked file
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "secret.py").write_text("def apply_voucher_secret():\n    return 'leak'\n")
    os.symlink(outside, root / "escape")  # leaves the workspace: not followed
    index = tmp_path / "index"

    found = search(root, index, "apply_voucher")
    paths = [r["path"] for r in found["results"]]
    assert paths[0] == "core/shop/pricing.py"
    assert found["results"][0]["start_line"] == 4
    assert not any(p.startswith(("app/", "pricing_link", "escape/")) for p in paths)

    exact = search(root, index, '"voucher expired for shipping"')
    assert [(r["path"], r["start_line"]) for r in exact["results"]] == [("core/shop/pricing.py", 7)]
