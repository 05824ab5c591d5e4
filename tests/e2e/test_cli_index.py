"""`codeseek index / chunks / graph / status` as a user runs them, in subprocesses, plus the kill -9 case."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from indexing.location import index_dir_for

REPO = Path(__file__).resolve().parents[2]

SESSION = '''"""A tiny client."""
from helpers import encode


class Session:
    def request(self, url):
        """Send a request."""
        return self.send(encode(url))

    def send(self, data):
        return len(data)


def get(url):
    return Session().request(url)
'''
HELPERS = '''def encode(text):
    return text.encode("utf-8")
'''


def codeseek(*args: str, env: dict[str, str] | None = None,
             check: bool = False) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "lsp_server.cli", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env={**os.environ, **(env or {})})
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src/session.py").write_text(SESSION)
    (root / "src/helpers.py").write_text(HELPERS)
    (root / "tests").mkdir()
    (root / "tests/test_session.py").write_text("from session import get\n\ndef test_get():\n    get('x')\n")
    (root / "README.md").write_text("# Proj\n\nA client.\n")
    (root / "yarn.lock").write_text("# lock\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n")
    (root / "node_modules/pkg").mkdir(parents=True)
    (root / "node_modules/pkg/index.js").write_text("module.exports = 1;\n")
    (root / "blob.py").write_bytes(b"\x00\x01\x02")
    return root


def test_index_summary_and_rerun(project: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "index")
    first = codeseek("index", str(project), "--index-dir", index, check=True)
    out = first.stdout
    assert "files        4 (4 parsed, 0 unchanged, 0 removed)" in out
    assert "python 3" in out and "markdown 1" in out
    assert "lockfile 1" in out and "binary 1" in out and "excluded-dir 1" in out
    assert "unsupported-language 1" in out and "errors       0" in out
    summary = json.loads(codeseek("index", str(project), "--index-dir", index, "--json", check=True).stdout)
    assert summary["parsed"] == 0 and summary["unchanged"] == 4 and summary["files"] == 4
    assert summary["definitions"] >= 5 and summary["chunks"] >= 4 and summary["call_edges"] >= 3
    assert summary["skipped"] == {"lockfile": 1, "binary": 1, "excluded-dir": 1, "unsupported-language": 1}


def test_an_index_recorded_for_another_root_is_refused(project: Path, tmp_path: Path) -> None:
    base = tmp_path / "base"
    codeseek("index", str(project), "--index-dir", str(base), "--no-embed", "--quiet", check=True)
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.py").write_text("def x():\n    return 1\n")
    shutil.copytree(index_dir_for(project, base), index_dir_for(other, base))  # a copied index folder
    for args in (("index", str(other)), ("search", "x", "--root", str(other)), ("status", str(other))):
        proc = codeseek(*args, "--index-dir", str(base), "--no-embed" if args[0] != "status" else "--json")
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and f"belongs to {project.resolve()}" in proc.stderr, proc.stderr
    assert codeseek("status", str(project), "--index-dir", str(base), "--json", check=True)


def test_chunks_json_and_text(project: Path) -> None:
    proc = codeseek("chunks", str(project / "src/session.py"), "--root", str(project), "--json", check=True)
    data = json.loads(proc.stdout)
    assert data["path"] == "src/session.py" and data["language"] == "python" and data["labels"] == ["source"]
    chunks = data["chunks"]
    assert chunks[0]["start_line"] == 1 and chunks[-1]["end_line"] == SESSION.count("\n")
    assert all(c["kind"] in ("function", "method", "class", "block", "section", "text") for c in chunks)
    covered = [(c["start_line"], c["end_line"]) for c in chunks]
    assert any(s <= 5 and e >= 11 for s, e in covered)  # the class stays whole: it fits the budget
    text = codeseek("chunks", "src/session.py", "--root", str(project), check=True).stdout
    assert text.startswith("src/session.py  python  [source]")


def test_graph_callers_json_and_dot(project: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "index")
    proc = codeseek("graph", "Session.request", "--callers", "--json", "--root", str(project),
                    "--index-dir", index, check=True)
    data = json.loads(proc.stdout)
    (result,) = data["results"]
    target = result["symbol"]
    assert target["qualified_name"] == "Session.request" and target["path"] == "src/session.py"
    callers = [(c["site"]["path"], c["site"]["line"], c["caller"]["qualified_name"])
               for c in result["callers"]]
    assert callers == [("src/session.py", 15, "get")]
    dot = codeseek("graph", "encode", "--impact", "2", "--dot", "--root", str(project), "--index-dir", index,
                   check=True).stdout
    assert dot.startswith("digraph") and "Session.request" in dot and "->" in dot
    text = codeseek("graph", "encode", "--impact", "2", "--root", str(project), "--index-dir", index,
                    check=True).stdout
    assert "[1] Session.request  src/session.py" in text
    missing = codeseek("graph", "no_such_symbol", "--root", str(project), "--index-dir", index)
    assert missing.returncode == 1 and "no definition named" in missing.stderr


def test_status_reports_pending_changes(project: Path, tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("CODESEEK_INDEX_DIR", None)
    never = codeseek("status", str(project), env={**env, "CODESEEK_INDEX_DIR": ""})
    assert never.returncode == 1 and "no index" in never.stderr
    codeseek("index", str(project), env={**env, "CODESEEK_INDEX_DIR": ""}, check=True)
    assert any((tmp_path / "cache" / "codeseek").iterdir())
    status = codeseek("status", str(project), env={**env, "CODESEEK_INDEX_DIR": ""}, check=True).stdout
    assert "files        4" in status and "(up to date)" in status
    chunks = int(next(line.split()[1] for line in status.splitlines() if line.startswith("chunks")))
    assert f"transformer  0 MiniLM vectors for {chunks} chunks (0%" in status  # what the transformer covers
    (project / "src/helpers.py").write_text(HELPERS + "\n\ndef decode(b):\n    return b.decode()\n")
    (project / "src/new.py").write_text("x = 1\n")
    data = json.loads(codeseek("status", str(project), "--json", env={**env, "CODESEEK_INDEX_DIR": ""},
                               check=True).stdout)
    assert data["pending"] == {"new": 1, "modified": 1, "deleted": 0} and data["files"] == 4


def test_bad_input_is_one_line_and_exit_2(project: Path, tmp_path: Path) -> None:
    for args in (("index", str(tmp_path / "missing")), ("status", str(project / "README.md")),
                 ("chunks", "/etc/hostname", "--root", str(project)),
                 ("chunks", str(project / "nope.py"), "--root", str(project))):
        proc = codeseek(*args, "--index-dir", str(tmp_path / "i")) if args[0] != "chunks" else codeseek(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("codeseek: error:")
    assert codeseek("serve", "--tcp", "nohostport").returncode == 2
    assert codeseek().returncode == 2  # no command: usage


# -- kill -9 ---------------------------------------------------------------------------------------
def make_tree(root: Path, files: int = 400, functions: int = 25) -> None:
    for i in range(files):
        pkg = root / f"pkg{i % 10}"
        pkg.mkdir(parents=True, exist_ok=True)
        body = [f'"""Module {i}."""\n', f"from pkg{(i + 1) % 10}.mod{i + 1} import f{i + 1}_0\n"]
        for j in range(functions):
            body.append(
                f"\n\ndef f{i}_{j}(x, y={j}):\n    \"\"\"Step {j} of module {i}.\"\"\"\n"
                f"    total = x + y\n    for k in range({j}):\n        total += k * {i}\n"
                f"    return f{i}_{(j + 1) % functions}(total) if total < 0 else total\n")
        body.append(f"\n\nclass Thing{i}:\n    def run(self):\n        return f{i}_0(1)\n")
        (pkg / f"mod{i}.py").write_text("".join(body))


def snapshot(db_path: Path) -> dict[str, Any]:
    db = sqlite3.connect(db_path)
    try:
        files = {r[0]: r[1] for r in db.execute("SELECT path, hash FROM files")}
        chunks: dict[str, list[tuple[Any, ...]]] = {}
        for row in db.execute("SELECT f.path, c.start_line, c.end_line, c.kind, c.symbol, c.content_hash "
                              "FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY f.path, c.start_byte"):
            chunks.setdefault(row[0], []).append(row[1:])
        defs = sorted(db.execute("SELECT f.path, d.qualified_name, d.start_line FROM definitions d "
                                 "JOIN files f ON f.id = d.file_id"))
        calls = sorted(db.execute("SELECT f.path, c.line, c.col, c.callee FROM calls c "
                                  "JOIN files f ON f.id = c.file_id"))
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
        orphans = db.execute(
            "SELECT count(*) FROM chunks WHERE file_id NOT IN (SELECT id FROM files)").fetchone()[0]
    finally:
        db.close()
    return {"files": files, "chunks": chunks, "defs": defs, "calls": calls, "integrity": integrity,
            "orphans": orphans}


def test_kill_9_mid_index_leaves_a_consistent_index_that_the_next_run_completes(tmp_path: Path) -> None:
    root = tmp_path / "big"
    make_tree(root)
    clean_dir, killed_dir = tmp_path / "clean", tmp_path / "killed"
    codeseek("index", str(root), "--index-dir", str(clean_dir), "--quiet", check=True)
    clean = snapshot(index_dir_for(root, clean_dir) / "index.sqlite3")
    assert len(clean["files"]) == 400

    proc = subprocess.Popen([sys.executable, "-m", "lsp_server.cli", "index", str(root), "--index-dir",
                             str(killed_dir), "--quiet"], cwd=REPO, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    db_path = index_dir_for(root, killed_dir) / "index.sqlite3"
    seen = 0
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if db_path.exists():
                try:
                    with sqlite3.connect(db_path, timeout=1) as db:
                        seen = db.execute("SELECT count(*) FROM files").fetchone()[0]
                except sqlite3.Error:
                    seen = 0
                if seen:
                    break
            time.sleep(0.01)
        assert proc.poll() is None, "the indexer finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    partial = snapshot(db_path)
    assert partial["integrity"] == "ok" and partial["orphans"] == 0
    assert 0 < len(partial["files"]) < 400
    for path, digest in partial["files"].items():  # every file row is complete, never half-written
        assert digest == clean["files"][path]
        assert partial["chunks"].get(path) == clean["chunks"][path], (path, partial["chunks"].get(path))
    rerun = codeseek("index", str(root), "--index-dir", str(killed_dir), "--json", check=True)
    done = json.loads(rerun.stdout)
    assert done["parsed"] == 400 - len(partial["files"]) and done["unchanged"] == len(partial["files"])
    final = snapshot(db_path)
    assert final["integrity"] == "ok"
    for key in ("files", "chunks", "defs", "calls"):
        assert final[key] == clean[key], key
