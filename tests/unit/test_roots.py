"""Project-root detection and the stored-index listing on real folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexing import roots
from indexing.location import index_dir_for
from indexing.roots import RootError, find_root, refused_root, stored_indexes
from indexing.store import IndexStore


def touch(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_repository_wins_over_a_nested_project_file(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    touch(tmp_path / "repo" / "packages" / "web" / "package.json", "{}")
    start = tmp_path / "repo" / "packages" / "web" / "src"
    start.mkdir(parents=True)
    info = find_root(start)
    assert (info.root, info.marker, info.subdir) == (tmp_path / "repo", ".git", "packages/web/src")


def test_nearest_project_file_without_a_repository(tmp_path: Path) -> None:
    touch(tmp_path / "proj" / "pyproject.toml")
    file = touch(tmp_path / "proj" / "src" / "pkg" / "mod.py")
    info = find_root(file)
    assert (info.root, info.marker, info.subdir) == (tmp_path / "proj", "pyproject.toml", "src/pkg")


def test_git_file_of_a_worktree_counts_and_codeseek_opt_in_wins(tmp_path: Path) -> None:
    touch(tmp_path / "wt" / ".git", "gitdir: /elsewhere\n")
    (tmp_path / "wt" / "sub" / ".codeseek").mkdir(parents=True)
    assert find_root(tmp_path / "wt").marker == ".git"
    assert find_root(tmp_path / "wt" / "sub").root == tmp_path / "wt" / "sub"


def test_folder_without_markers_is_an_error_that_says_how_to_proceed(tmp_path: Path) -> None:
    touch(tmp_path / "x" / "notes.txt")
    with pytest.raises(RootError, match="--root DIR"):
        find_root(tmp_path / "x" / "notes.txt")


def test_home_with_a_marker_is_refused_unless_opted_in(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    touch(home / "package.json", "{}")
    touch(home / "notes.txt")
    monkeypatch.setenv("HOME", str(home))
    assert refused_root(home) == "your home directory"
    with pytest.raises(RootError, match="home directory"):
        find_root(home / "notes.txt")
    (home / ".codeseek").mkdir()
    assert find_root(home / "notes.txt").root == home
    assert refused_root(Path("/")) == "a filesystem root"
    assert refused_root(tmp_path) is None


def test_stored_indexes_flags_stale_and_gc_removes_them(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("CODESEEK_INDEX_DIR", raising=False)
    live = tmp_path / "live"
    gone = tmp_path / "gone"
    live.mkdir()
    gone.mkdir()
    for root in (live, gone):
        store = IndexStore(index_dir_for(root))
        store.set_meta("root", str(root))
        store.close()
    gone.rmdir()
    items = {Path(i.root or ""): i for i in stored_indexes()}
    assert items[live].stale is None
    assert items[gone].stale == "root is gone"
    roots.remove_index(items[gone])
    assert [Path(i.root or "") for i in stored_indexes()] == [live]
