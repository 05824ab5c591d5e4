"""A workspace's own `.git/config` is untrusted: settings that name a program for git to run are planted
at once, and `codeseek index`, `search` and `status` run on it through the real CLI (the language server
and the MCP server scan through the same `indexing.gitfiles`); none of the planted programs may run,
and the files are still indexed from git's list."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.cli_support import search_json

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

# Each setting names a program that would leave a marker file if git ever ran it.
PLANTED = [
    "core.fsmonitor",
    "core.hooksPath",
    "core.pager",
    "core.editor",
    "core.sshCommand",
    "core.askPass",
    "credential.helper",
    "diff.external",
    "gpg.program",
    "sequence.editor",
    "filter.evil.clean",
    "filter.evil.smudge",
    "filter.evil.process",
    "diff.evil.textconv",
    "uploadpack.packObjectsHook",
]


def _git(root: Path, *args: str) -> None:
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)


def _hostile_repo(base: Path, marker_dir: Path) -> Path:
    repo = base / "hostile"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "auth.py").write_text(
        "def cooldown_after_failures(attempts):\n    \"\"\"Refuse logins for a while.\"\"\"\n"
        "    return attempts > 5\n")
    (repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "pkg/auth.py", ".gitattributes")
    _git(repo, "commit", "-q", "-m", "init")
    hooks = repo / "evil-hooks"
    hooks.mkdir()
    for name in ("post-index-change", "pre-commit", "post-checkout", "fsmonitor-watchman"):
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\ntouch {marker_dir}/hook-{name}\n")
        hook.chmod(0o755)
    for key in PLANTED:
        value = str(hooks) if key == "core.hooksPath" else f"touch {marker_dir}/{key}; false"
        _git(repo, "config", key, value)
    # Make the index stat-dirty, the case in which git would ask fsmonitor or run a clean filter.
    (repo / "pkg" / "auth.py").touch()
    os.utime(repo / "pkg" / "auth.py", (1, 1))
    return repo


def test_planted_git_settings_run_nothing(tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = _hostile_repo(tmp_path, markers)
    index = tmp_path / "index"
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-m", "lsp_server.cli", "index", str(repo), "--no-embed",
                           "--index-dir", str(index)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    data = search_json(repo, index, "cooldown_after_failures")
    assert [r["path"] for r in data["results"]][:1] == ["pkg/auth.py"]
    subprocess.run([sys.executable, "-m", "lsp_server.cli", "status", "--root", str(repo), "--index-dir",
                    str(index)], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert sorted(p.name for p in markers.iterdir()) == []


def test_planted_setting_is_live_without_codeseek(tmp_path: Path) -> None:
    """The planted repository is armed: a plain `git status` there does run the fsmonitor hook, so the
    test above would see a marker if codeseek called git the same way."""
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = _hostile_repo(tmp_path, markers)
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, check=False,
                   env=dict(os.environ, GIT_CONFIG_NOSYSTEM="1"))
    assert (markers / "core.fsmonitor").exists()


def test_worktree_outside_the_folder_is_not_listed(tmp_path: Path) -> None:
    """`core.worktree` naming another tree: git's list would be that tree's; the scan walks the folder."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("TOKEN = 'outside the workspace'\n")
    repo = tmp_path / "ws"
    repo.mkdir()
    (repo / "mine.py").write_text("def mine():\n    return 1\n")
    _git(repo, "init", "-q")
    _git(repo, "config", "core.worktree", str(outside))
    from indexing.scan import ScanOptions, scan

    result = scan(str(repo), ScanOptions())
    assert [f.path for f in result.files] == ["mine.py"]
