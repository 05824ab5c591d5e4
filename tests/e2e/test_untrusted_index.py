"""The CLI on a damaged, foreign, full or read-only index (issue 32): a tantivy folder from another
index, chunk rows with wrong byte offsets, a full disk (a small tmpfs), `codeseek chunks` and the
index's limits, a read-only index, an index path longer than SQLite accepts."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from indexing.location import index_dir_for

REPO = Path(__file__).resolve().parents[2]


def codeseek(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lsp_server.cli", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)})


def symbols(proc: subprocess.CompletedProcess[str]) -> list[str]:
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return [r["symbol"] for r in json.loads(proc.stdout)["results"]]


def _long_functions(root: Path) -> None:
    """Two functions long enough to be one chunk each."""
    body = "\n".join(f"    total = total + {i}  # step {i} of the running sum" for i in range(40))
    root.mkdir(parents=True)
    (root / "m.py").write_text(
        f'def first_function(value):\n    """The first one."""\n    total = value\n{body}\n'
        "    return total\n\n\n"
        f'def second_function(value):\n    message = "a rather unusual sentence for second"\n'
        "    total = value\n"
        f"{body}\n    return message * total\n")


def test_a_text_index_from_another_index_is_rebuilt(tmp_path: Path) -> None:
    """Item 2: click's tantivy folder put into requests' index answered with click's chunks, and
    `codeseek status` said `integrity ok`."""
    mine, other, index = tmp_path / "mine", tmp_path / "other", tmp_path / "index"
    mine.mkdir()
    other.mkdir()
    (mine / "auth.py").write_text("def rebuild_auth(session):\n    # zeppelin marmalade\n"
                                  "    return session\n")
    (other / "misc.py").write_text("def unrelated(x):\n    # nothing to see\n    return x\n")
    for root in (mine, other):  # (builds each text index; no match is exit 1)
        assert codeseek("search", "zeppelin", "--root", str(root), "--index-dir", str(index), "--json",
                        "--no-embed").returncode in (0, 1)
    mine_dir, other_dir = index_dir_for(mine, index), index_dir_for(other, index)
    shutil.rmtree(mine_dir / "tantivy")
    shutil.copytree(other_dir / "tantivy", mine_dir / "tantivy")
    status = codeseek("status", str(mine), "--index-dir", str(index), "--json")
    assert status.returncode == 0 and json.loads(status.stdout)["integrity"] != "ok", status.stdout
    found = codeseek("search", "zeppelin marmalade", "--root", str(mine), "--index-dir", str(index), "--json",
                     "--no-embed")
    assert symbols(found)[:1] == ["rebuild_auth"]
    assert "belongs to another index; rebuilding it" in found.stderr
    status = codeseek("status", str(mine), "--index-dir", str(index), "--json")
    assert json.loads(status.stdout)["integrity"] == "ok"


def test_chunk_rows_with_wrong_offsets_are_reindexed(tmp_path: Path) -> None:
    """Item 2: chunk rows whose byte offsets were shifted changed answers silently."""
    root, index = tmp_path / "proj", tmp_path / "index"
    _long_functions(root)
    assert codeseek("index", str(root), "--index-dir", str(index), "--no-embed").returncode == 0
    folder = index_dir_for(root, index)
    db = sqlite3.connect(folder / "index.sqlite3")
    rows = db.execute("SELECT id, symbol, start_byte, end_byte FROM chunks ORDER BY id").fetchall()
    first = next(r for r in rows if r[1] == "first_function")
    second = next(r for r in rows if r[1] == "second_function")
    db.execute("UPDATE chunks SET start_byte=?, end_byte=? WHERE id=?", (second[2], second[3], first[0]))
    db.execute("UPDATE chunks SET start_byte=?, end_byte=? WHERE id=?", (first[2], first[3], second[0]))
    db.commit()
    db.close()
    shutil.rmtree(folder / "tantivy", ignore_errors=True)  # the text index is built from the rows as they are
    for _ in range(2):
        found = codeseek("search", '"rather unusual sentence"', "--root", str(root), "--index-dir",
                         str(index), "--json", "--no-embed")
        assert symbols(found)[:1] == ["second_function"], found.stdout


@contextmanager
def _tmpfs(where: Path, size: str) -> Iterator[Path]:
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def test_a_full_disk_is_one_line_and_search_answers_from_what_is_there(tmp_path: Path) -> None:
    """Item 3: on a 20 MiB tmpfs, index and search died with a traceback, and search would not answer
    from the SQLite index it had (here a 3 MiB one: the same errors on a smaller tree)."""
    root = tmp_path / "many"
    for i in range(1500):
        package = root / f"pkg{i // 100}"
        package.mkdir(parents=True, exist_ok=True)
        (package / f"mod{i}.py").write_text("".join(
            f'def function_{i}_{j}(value, other_{j}):\n    """Compute thing {i} {j}."""\n'
            f"    return helper_{j}(value) + other_{j} * {j}\n\n\n" for j in range(30)))
    with _tmpfs(tmp_path / "small", "3m") as index:
        done = codeseek("index", str(root), "--index-dir", str(index), "--no-embed")
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("codeseek: error: no space left"), \
            done.stderr
        db = sqlite3.connect(f"file:{index_dir_for(root, index) / 'index.sqlite3'}?mode=ro", uri=True)
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        files = db.execute("SELECT count(*) FROM files").fetchone()[0]
        db.close()
        assert 0 < files < 1500
        found = codeseek("search", "function_3_7", "--root", str(root), "--index-dir", str(index), "--json",
                         "--no-embed")
        assert "function_3_7" in symbols(found)
        notes = [line for line in found.stderr.splitlines() if line]
        assert notes, found.stderr
        assert all(line.startswith("codeseek: ") and "space" in line for line in notes), found.stderr


def test_chunks_keeps_the_index_limits(tmp_path: Path) -> None:
    """Item 4: a 10 MB file took over 90 s and 800 MB; a path through a symlink out of the root was
    printed."""
    root, outside = tmp_path / "proj", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.py").write_text("def secret_function():\n    return 'password'\n")
    os.symlink(outside, root / "escape_dir")
    (root / "huge.py").write_text("x = 1\n" * 2_000_000)
    (root / "ok.py").write_text("def fine():\n    return 1\n")
    started = time.monotonic()
    huge = codeseek("chunks", "--root", str(root), str(root / "huge.py"))
    assert time.monotonic() - started < 20
    assert huge.returncode == 1 and huge.stdout.strip() == "huge.py  skipped: too-large", huge
    escaped = codeseek("chunks", "--root", str(root), str(root / "escape_dir" / "secret.py"))
    assert escaped.returncode == 2 and "secret_function" not in escaped.stdout, escaped
    assert escaped.stderr.count("\n") == 1 and "outside the workspace root" in escaped.stderr
    assert codeseek("chunks", "--root", str(root), str(root / "ok.py")).returncode == 0


def test_a_read_only_index_still_answers(tmp_path: Path) -> None:
    """Item 6: a read-only index refused even searches that need no write."""
    root = tmp_path / "proj"
    _long_functions(root)
    with _tmpfs(tmp_path / "ro", "20m") as index:
        assert codeseek("search", "second_function", "--root", str(root), "--index-dir", str(index), "--json",
                        "--no-embed").returncode == 0
        remount = subprocess.run(["mount", "-o", "remount,ro", str(index)], capture_output=True, text=True)
        if remount.returncode != 0:
            pytest.skip(f"cannot remount read-only: {remount.stderr.strip()}")
        found = codeseek("search", "second_function", "--root", str(root), "--index-dir", str(index),
                         "--json", "--no-embed")
        assert symbols(found)[:1] == ["second_function"]
        assert "read-only" in found.stderr and found.stderr.count("\n") == 1, found.stderr
        exact = codeseek("search", '"rather unusual sentence"', "--root", str(root), "--index-dir",
                         str(index), "--json", "--no-embed")
        assert symbols(exact)[:1] == ["second_function"]


def test_an_index_path_too_long_for_sqlite_says_so(tmp_path: Path) -> None:
    """Item 6: an index path over ~512 characters said "check that the folder exists"."""
    root = tmp_path / "proj"
    _long_functions(root)
    index = tmp_path / ("a" * 200) / ("b" * 200) / ("c" * 120)
    proc = codeseek("search", "second_function", "--root", str(root), "--index-dir", str(index), "--no-embed")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "too long for SQLite" in proc.stderr and "check that the folder exists" not in proc.stderr
