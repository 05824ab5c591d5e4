"""indexing.location: one index folder per resolved root, under one base that every front end names
the same way (--index-dir, the LSP indexDir option, $CODESEEK_INDEX_DIR, else the user cache)."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexing.location import index_base, index_dir_for, index_key


def test_key_depends_on_the_resolved_root_alone(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "via").symlink_to(tmp_path / "a")
    key = index_key(tmp_path / "a")
    assert len(key) == 16 and int(key, 16) >= 0
    assert index_key(tmp_path / "via") == index_key(str(tmp_path / "b" / ".." / "a")) == key
    assert index_key(tmp_path / "b") != key


def test_base_named_then_environment_then_user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "a"
    monkeypatch.delenv("CODESEEK_INDEX_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert index_dir_for(root) == tmp_path / "cache" / "codeseek" / index_key(root)
    monkeypatch.setenv("CODESEEK_INDEX_DIR", str(tmp_path / "env"))
    assert index_base() == tmp_path / "env"
    assert index_dir_for(root) == tmp_path / "env" / index_key(root)  # a base, as --index-dir
    assert index_dir_for(root, tmp_path / "named") == tmp_path / "named" / index_key(root)
    assert index_dir_for(root, "") == tmp_path / "env" / index_key(root)  # an empty option: unset
    monkeypatch.delenv("CODESEEK_INDEX_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert "codeseek" in str(index_base())
