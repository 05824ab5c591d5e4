"""File selection inside real git work trees: git's list, global excludes, parent ignores, tracked
files under always-skipped folder names, submodule-like nested repositories, targeted checks."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from indexing.scan import EXCLUDED_DIR, IGNORED, ScanOptions, scan, scan_paths

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture()
def git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An isolated global git config whose core.excludesFile ignores `secret_dir/`."""
    excludes = tmp_path / "global-excludes"
    excludes.write_text("secret_dir/\n")
    config = tmp_path / "gitconfig"
    config.write_text(f"[core]\n\texcludesFile = {excludes}\n[user]\n\tname = t\n\temail = t@example.com\n"
                      "[init]\n\tdefaultBranch = main\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return tmp_path


def write(root: Path, rel: str, text: str = "x = 1\n") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def make_repo(base: Path) -> Path:
    repo = base / "repo"
    write(repo, "src/app.py")
    write(repo, "src/build/__init__.py", "def built():\n    return 1\n")  # a real package named build
    write(repo, "pkg/target/lib.rs", "pub fn f() {}\n")  # a crate folder named target
    write(repo, "secret_dir/keys.py")  # ignored only by the global excludes file
    write(repo, ".gitignore", "generated/\n")
    write(repo, "generated/out.py")
    write(repo, "sub/inner.py")
    write(repo, "sub/generated/deep.py")  # the parent .gitignore's `generated/` applies here too
    git(repo, "init", "-q")
    git(repo, "add", "src", "pkg", ".gitignore", "sub/inner.py")
    git(repo, "commit", "-q", "-m", "init")
    write(repo, "untracked.py")  # untracked, not ignored: indexed
    write(repo, "node_modules/dep/index.js")  # untracked under an always-skipped name
    return repo


def paths(result: object) -> list[str]:
    return [f.path for f in result.files]  # type: ignore[attr-defined]


def test_git_list_keeps_tracked_build_and_target_and_honours_global_excludes(git_env: Path) -> None:
    repo = make_repo(git_env)
    result = scan(repo)
    assert paths(result) == ["pkg/target/lib.rs", "src/app.py", "src/build/__init__.py",
                             "sub/inner.py", "untracked.py"]
    skipped = dict(result.skipped)
    assert skipped["secret_dir/"] == IGNORED
    assert skipped["generated/"] == IGNORED
    assert skipped["node_modules/"] == EXCLUDED_DIR


def test_walk_without_git_disagrees_which_is_why_git_mode_exists(git_env: Path) -> None:
    repo = make_repo(git_env)
    result = scan(repo, ScanOptions(use_git=False))
    assert "src/build/__init__.py" not in paths(result)
    assert "secret_dir/keys.py" in paths(result)


def test_root_in_a_subfolder_applies_the_parent_gitignore(git_env: Path) -> None:
    repo = make_repo(git_env)
    result = scan(repo / "sub")
    assert paths(result) == ["inner.py"]
    assert dict(result.skipped)["generated/"] == IGNORED


def test_codeseekignore_still_applies_in_git_mode(git_env: Path) -> None:
    repo = make_repo(git_env)
    write(repo, ".codeseekignore", "src/build/\n")
    result = scan(repo)
    assert "src/build/__init__.py" not in paths(result)
    assert dict(result.skipped)["src/build/__init__.py"] == IGNORED


def test_a_nested_ignore_file_drops_a_folder_below_it_at_any_depth_and_only_there(git_env: Path) -> None:
    """`.ignore` in `sub/` names `gen/`: every file below `sub/**/gen/` is ignored (each folder's verdict is
    kept for its files), the same folder name elsewhere is not; a file pattern of the root file still
    applies inside folders that are not ignored. The `.ignore` is one git ignores: found all the same
    (git's list of ignored files names it)."""
    repo = make_repo(git_env)
    for rel in ("sub/gen/a.py", "sub/x/gen/b/c.py", "sub/x/keep.py", "pkg/gen/d.py", "pkg/notes_skip.py"):
        write(repo, rel)
    write(repo, "sub/.ignore", "gen/\n")
    write(repo, "sub/.gitignore", ".ignore\n")
    write(repo, ".codeseekignore", "*_skip.py\n")
    result = scan(repo)
    kept, skipped = paths(result), dict(result.skipped)
    assert "sub/x/keep.py" in kept and "pkg/gen/d.py" in kept
    dropped = ("sub/gen/a.py", "sub/x/gen/b/c.py", "pkg/notes_skip.py")
    assert all(skipped.get(rel) == IGNORED for rel in dropped)


def test_targeted_check_agrees_with_the_full_scan(git_env: Path) -> None:
    repo = make_repo(git_env)
    result = scan_paths(repo, ["src/build/__init__.py", "secret_dir/keys.py", "gone.py", "pkg"])
    assert paths(result) == ["pkg/target/lib.rs", "src/build/__init__.py"]
    skipped = dict(result.skipped)
    assert skipped["secret_dir/keys.py"] == IGNORED
    assert skipped["gone.py"] == "vanished"


def test_nested_repository_is_listed_through_its_own_git(git_env: Path) -> None:
    repo = make_repo(git_env)
    inner = repo / "vendor_repo"
    write(inner, "lib.py")
    write(inner, ".gitignore", "tmp/\n")
    write(inner, "tmp/scratch.py")
    git(inner, "init", "-q")
    git(inner, "add", "lib.py", ".gitignore")
    git(inner, "commit", "-q", "-m", "inner")
    result = scan(repo)
    assert "vendor_repo/lib.py" in paths(result)
    assert "vendor_repo/tmp/scratch.py" not in paths(result)


def test_a_tracked_submodule_is_listed_through_its_own_git_and_a_missing_one_lists_nothing(
        git_env: Path) -> None:
    repo = make_repo(git_env)
    for name in ("linked", "gone"):
        inner = repo / name
        write(inner, "lib.py")
        git(inner, "init", "-q")
        git(inner, "add", "lib.py")
        git(inner, "commit", "-q", "-m", "inner")
        git(repo, "add", name)  # a gitlink (mode 160000) in the outer index
    git(repo, "commit", "-q", "-m", "submodules")
    shutil.rmtree(repo / "gone")
    result = scan(repo)
    assert "linked/lib.py" in paths(result)
    assert not any(p.startswith("gone") for p in paths(result))
    assert not any(p.startswith("gone") for p, _ in result.skipped)


def test_deleted_but_still_tracked_file_is_not_reported(git_env: Path) -> None:
    repo = make_repo(git_env)
    os.remove(repo / "src/app.py")
    result = scan(repo)
    assert "src/app.py" not in paths(result)
    assert "src/app.py" not in dict(result.skipped)
