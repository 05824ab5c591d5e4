"""End-to-end: a Python file that declares latin-1 (PEP 263) is indexed, searched and shown as its
text, through `codeseek search` and `codeseek chunks` (issue 30 item 8)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from indexing.source_encoding import as_utf8, declared_encoding

REPO = Path(__file__).resolve().parents[2]
SOURCE = ('# -*- coding: latin-1 -*-\n"""Régles de calcul."""\n\n\n'
          'def prix_réduit(prix: float) -> float:\n    """Le prix après la remise d\'été."""\n'
          '    return prix * 0.9\n')


def _cli(root: Path, index: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lsp_server.cli", *args, "--root", str(root)]
                          + (["--index-dir", str(index)] if args[0] == "search" else []),
                          capture_output=True, text=True, cwd=REPO, timeout=300,
                          env=dict(os.environ, HF_HUB_OFFLINE="1", CODESEEK_INDEX_DIR=str(index)))


def test_a_latin1_file_is_searched_and_shown_as_its_text(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (root / "remise.py").write_bytes(SOURCE.encode("latin-1"))
    index = tmp_path / "index"
    proc = _cli(root, index, "search", "prix_réduit", "--json", "--no-embed")
    assert proc.returncode == 0, proc.stderr
    top = json.loads(proc.stdout)["results"][0]
    assert (top["path"], top["symbol"]) == ("remise.py", "prix_réduit")
    assert "après la remise d'été" in top["snippet"] and "\ufffd" not in top["snippet"]
    found = _cli(root, index, "search", '"remise d\'été"', "--json", "--no-embed")  # an exact string
    assert [r["path"] for r in json.loads(found.stdout)["results"]][:1] == ["remise.py"], found.stderr
    chunks = _cli(root, index, "chunks", str(root / "remise.py"), "--json")
    data = json.loads(chunks.stdout)
    assert data["status"] == "ok" and "prix_réduit" in [c["symbol"] for c in data["chunks"]], data
    status = _cli(root, index, "status", "--json")
    assert "invalid-utf8" not in status.stdout, status.stdout


def test_declarations_per_pep_263() -> None:
    latin = SOURCE.encode("latin-1")
    assert declared_encoding("a.py", latin) == "iso8859-1"
    assert as_utf8("a.py", latin) == SOURCE.encode("utf-8")
    assert as_utf8("a.txt", latin) == latin  # not Python: bytes as they are
    assert declared_encoding("a.py", b"#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\n") == "cp1252"
    assert declared_encoding("a.py", b"x = 1\n# coding: latin-1\n") is None  # code before it
    assert declared_encoding("a.py", b"# coding: utf-8\n") is None
    assert declared_encoding("a.py", b"# coding: no-such-codec\n") is None
    assert as_utf8("a.py", b"# coding: ascii\nx = '\xe9'\n") == b"# coding: ascii\nx = '\xe9'\n"  # invalid
