"""End-to-end reliability of the CLI on a hostile workspace and a damaged or shared index (issue 13):
file names that are not UTF-8, page-level SQLite corruption, a dropped table, several processes on
one index, and errors a user can act on (one line, exit 2)."""

from __future__ import annotations

import json
import os
import random
import resource
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from indexing.location import index_dir_for
from tests.e2e.cli_support import write_many_modules

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
    with open(os.fsencode(project) + b"/sub_\xfe/x.py", "wb") as fh:
        fh.write(b"X = 1\n")
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


def _damage_pages(db: Path, seed: int = 13) -> None:
    """64 random bytes at three places of every b-tree page but the first (the header page)."""
    rng = random.Random(seed)
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    for start in range(page, len(data), page):
        for offset in (0, page // 3, 2 * page // 3):
            data[start + offset:start + offset + 64] = bytes(rng.randrange(256) for _ in range(64))
    db.write_bytes(bytes(data))


def test_page_corruption_is_detected_and_rebuilt(project: Path, tmp_path: Path) -> None:
    """Issue 13 item 5: a damaged database answered wrongly and called itself healthy."""
    index = tmp_path / "index"
    assert codeseek("index", str(project), "--index-dir", str(index)).returncode == 0
    _damage_pages(index_dir_for(project, index) / "index.sqlite3")
    _damage_pages(index_dir_for(project, index) / "index.sqlite3", seed=5)
    status = codeseek("status", str(project), "--index-dir", str(index))
    assert "damaged" in status.stderr and "Traceback" not in status.stderr
    assert codeseek("index", str(project), "--index-dir", str(index)).returncode == 0
    _damage_pages(index_dir_for(project, index) / "index.sqlite3")
    found = codeseek("search", "who calls rebuild_auth", "--root", str(project), "--index-dir", str(index),
                     "--json", "--no-embed")
    assert found.returncode == 0, found.stderr
    assert "Traceback" not in found.stderr
    notices = [line for line in found.stderr.splitlines() if "damaged" in line]
    assert len(notices) == 1 and notices[0].startswith("codeseek: the index at")
    assert json.loads(found.stdout)["results"][0]["symbol"] == "resolve_redirects"
    status = codeseek("status", str(project), "--index-dir", str(index), "--json")
    assert status.returncode == 0 and json.loads(status.stdout)["integrity"] == "ok"


def test_index_detects_damage_and_a_dropped_table_is_refilled(project: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    first = codeseek("index", str(project), "--index-dir", str(index), "--json")
    assert json.loads(first.stdout)["definitions"] == 4
    db = sqlite3.connect(index_dir_for(project, index) / "index.sqlite3")
    db.execute("DROP TABLE definitions")
    db.commit()
    db.close()
    again = codeseek("index", str(project), "--index-dir", str(index), "--json")
    assert again.returncode == 0, again.stderr
    assert "lacks table(s) definitions; rebuilding it" in again.stderr
    assert json.loads(again.stdout)["definitions"] == 4
    _damage_pages(index_dir_for(project, index) / "index.sqlite3", seed=7)
    third = codeseek("index", str(project), "--index-dir", str(index), "--json")
    assert third.returncode == 0 and "damaged" in third.stderr, third.stderr
    assert json.loads(third.stdout)["definitions"] == 4


def test_concurrent_cold_searches_wait_for_each_other(tmp_path: Path) -> None:
    """Issue 13 item 7: two of three cold searches on one root died with LockBusy, exit 1."""
    root = tmp_path / "many"
    for i in range(300):
        package = root / f"pkg{i // 50}"
        package.mkdir(parents=True, exist_ok=True)
        (package / f"mod{i}.py").write_text(f"def compute_{i}(x):\n    return x * {i}\n\n\n"
                                            f"def report_{i}(x):\n    return compute_{i}(x)\n")
    index = tmp_path / "index"
    procs = [subprocess.Popen([sys.executable, "-m", "lsp_server.cli", "search", f"compute_{n}", "--root",
                               str(root), "--index-dir", str(index), "--json", "--no-embed"],
                              cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)}) for n in (7, 123, 299)]
    outs = [p.communicate(timeout=300) for p in procs]
    for n, proc, (out, err) in zip((7, 123, 299), procs, outs, strict=True):
        assert proc.returncode == 0 and "Traceback" not in err, err
        assert json.loads(out)["results"][0]["symbol"] == f"compute_{n}"


@pytest.mark.parametrize("case", ["file-where-folder", "name-too-long", "read-only"])
def test_environment_errors_are_one_line_and_exit_2(project: Path, tmp_path: Path, case: str) -> None:
    """Issue 13 items 6 and 9: tracebacks for a file named `tantivy` in the index folder, an index
    folder name over 255 bytes, an index that cannot be written."""
    index = tmp_path / "index"
    if case == "file-where-folder":
        index_dir_for(project, index).mkdir(parents=True)
        (index_dir_for(project, index) / "tantivy").write_text("not a folder")
    elif case == "name-too-long":
        index = tmp_path / ("x" * 300)
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes through read-only permissions")
        assert codeseek("index", str(project), "--index-dir", str(index)).returncode == 0
        folder = index_dir_for(project, index)
        for path in (index, folder, *folder.iterdir()):
            path.chmod(0o555 if path.is_dir() else 0o444)
    (project / "new.py").write_text("def new_function():\n    return 3\n")
    proc = codeseek("search", "new_function", "--root", str(project), "--index-dir", str(index), "--no-embed")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("codeseek: error:"), proc.stderr


def _limit_file_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (256 * 1024, 256 * 1024))


def test_a_full_disk_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """Issue 13 item 6: `database or disk is full` / `disk I/O error` came out as a traceback, exit 1
    (a file size limit stands in for a full disk: the same errors reach codeseek)."""
    root = tmp_path / "many"
    write_many_modules(root, 400, per_package=50, functions=20)
    proc = subprocess.run([sys.executable, "-m", "lsp_server.cli", "index", str(root), "--index-dir",
                           str(tmp_path / "index")], cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, preexec_fn=_limit_file_size)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("codeseek: error: no space left"), proc.stderr
