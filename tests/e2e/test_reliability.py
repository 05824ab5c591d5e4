"""End-to-end reliability of the CLI on a hostile workspace and a damaged or shared index (issue 13):
file names that are not UTF-8, page-level SQLite corruption, a dropped table, several processes on
one index, and errors a user can act on (one line, exit 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

AUTH = '''"""Authentication helpers."""


def rebuild_auth(session, response):
    """Rebuild the Authorization header after a redirect."""
    return strip_credentials(session, response)


def strip_credentials(session, response):
    return session


def resolve_redirects(session, response):
    return rebuild_auth(session, response)
'''


def codeseek(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lsp_server.cli", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO), **(env or {})})


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "auth.py").write_text(AUTH)
    (root / "good.py").write_text("def good_function():\n    return 1\n")
    return root


def test_a_file_name_that_is_not_utf8_is_skipped_with_a_reason(project: Path, tmp_path: Path) -> None:
    """Issue 13 item 4: `bad_\\xff.py` beside good files made every command die."""
    os.mkdir(os.fsencode(project) + b"/sub_\xfe")
    (Path(os.fsencode(project).decode("utf-8", "surrogateescape")) / "sub_\udcfe" / "x.py").write_text("X = 1\n")
    with open(os.fsencode(project) + b"/bad_\xff.py", "wb") as fh:
        fh.write(b"def bad_function():\n    return 2\n")
    index = str(tmp_path / "index")
    done = codeseek("index", str(project), "--index-dir", index, "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["files"] == 2 and summary["skipped"] == {"non-utf8-name": 2}
    found = codeseek("search", "good_function", "--root", str(project), "--index-dir", index, "--json",
                     "--no-embed")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["symbol"] == "good_function"
