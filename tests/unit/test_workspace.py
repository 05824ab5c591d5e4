"""Workspace updates on real files with the real parser and store: incremental, overlays, bad files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from indexing.location import index_dir_for, index_key
from indexing.workspace import (
    IndexRootMismatch,
    UpdateResult,
    Workspace,
    WorkspaceError,
    WorkspaceOptions,
    content_hash,
)
from tests.unit.alpha_gamma import ALPHA, GAMMA, open_ws, write_tree


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    root = write_tree(tmp_path)
    (root / "README.md").write_text("# Demo\n\nSome words.\n")
    (root / "data.bin").write_bytes(b"\x00\x01")
    return root


def bump_mtime(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def test_full_then_unchanged_parses_nothing(tree: Path, tmp_path: Path) -> None:
    with open_ws(tree, tmp_path) as ws:
        first = ws.update()
        assert sorted(first.changed_paths) == ["README.md", "alpha.py", "gamma.py"]
        assert first.parsed == 3 and first.languages == {"python": 2, "markdown": 1}
        assert {c.id for c in first.added} == {c.id for c in ws.store.chunks()}
        assert first.skipped.get("unsupported-language") == 1
        second = ws.update()
        assert (second.parsed, second.hashed, second.unchanged) == (0, 0, 3)
        assert not second.added and not second.removed_ids and not second.changed
    with open_ws(tree, tmp_path) as ws:  # reopened from disk: still nothing to parse
        assert ws.update().parsed == 0


def test_modify_add_delete_and_touch(tree: Path, tmp_path: Path) -> None:
    with open_ws(tree, tmp_path) as ws:
        ws.update()
        old_gamma = {c.id for c in ws.store.chunks_for_path("gamma.py")}
        bump_mtime(tree / "alpha.py")  # same bytes, new mtime: hashed, not parsed
        (tree / "gamma.py").write_text(GAMMA + "\n\ndef delta():\n    return Gamma().run()\n")
        (tree / "new.py").write_text("def fresh():\n    return 1\n")
        (tree / "README.md").unlink()
        result = ws.update()
        assert sorted(result.changed_paths) == ["gamma.py", "new.py"]
        assert result.removed_paths == ["README.md"]
        assert result.parsed == 2 and result.hashed == 3
        assert old_gamma <= set(result.removed_ids)
        assert {c.path for c in result.added} == {"gamma.py", "new.py"}
        assert "delta" in {d.name for d in ws.definitions()}
        assert ws.store.files()["alpha.py"].mtime_ns == (tree / "alpha.py").stat().st_mtime_ns
        assert ws.update().parsed == 0


def test_targeted_update_and_deleted_path(tree: Path, tmp_path: Path) -> None:
    with open_ws(tree, tmp_path) as ws:
        ws.update()
        (tree / "alpha.py").write_text(ALPHA + "\n\ndef extra():\n    pass\n")
        (tree / "gamma.py").unlink()
        (tree / "other.py").write_text("x = 1\n")  # not named: not indexed by a targeted update
        result = ws.update(paths=[str(tree / "alpha.py"), "gamma.py"])
        assert result.changed_paths == ["alpha.py"] and result.removed_paths == ["gamma.py"]
        assert "other.py" not in ws.store.files()
        assert ws.update(paths=["alpha.py"]).parsed == 0


def test_targeted_update_of_directories(tree: Path, tmp_path: Path) -> None:
    with open_ws(tree, tmp_path) as ws:
        ws.update()
        (tree / "pkg/sub").mkdir(parents=True)
        (tree / "pkg/a.py").write_text("def a():\n    pass\n")
        (tree / "pkg/sub/b.py").write_text("def b():\n    pass\n")
        (tree / "pkg/node_modules").mkdir()
        (tree / "pkg/node_modules/m.js").write_text("var m;\n")
        added = ws.update(paths=[str(tree / "pkg")])  # a watcher reporting a new folder
        assert sorted(added.changed_paths) == ["pkg/a.py", "pkg/sub/b.py"]
        assert added.skipped == {"excluded-dir": 1}
        (tree / "pkg/sub/b.py").unlink()
        (tree / "pkg/sub").rmdir()
        assert ws.update(paths=["pkg/sub"]).removed_paths == ["pkg/sub/b.py"]  # a deleted folder
        for path in (tree / "pkg").rglob("*"):
            if path.is_file():
                path.unlink()
        assert ws.update(paths=["pkg"]).removed_paths == ["pkg/a.py"]
        assert sorted(ws.store.files()) == ["README.md", "alpha.py", "gamma.py"]


def test_overlays_take_precedence(tree: Path, tmp_path: Path) -> None:
    with open_ws(tree, tmp_path) as ws:
        ws.update()
        edited = ALPHA.replace("def beta(x):", "def beta_renamed(x):")
        ws.set_overlay(str(tree / "alpha.py"), edited)
        assert ws.read_bytes("alpha.py") == edited.encode()
        result = ws.update(paths=["alpha.py"])
        assert result.changed_paths == ["alpha.py"]
        names = {d.name for d in ws.definitions()}
        assert "beta_renamed" in names and "beta" not in names
        (definition,) = [d for d in ws.definitions() if d.name == "beta_renamed"]
        chunk = next(c for c in ws.store.chunks_for_path("alpha.py")
                     if c.start_byte <= definition.start_byte < c.end_byte)
        assert "def beta_renamed(x):" in ws.chunk_text(chunk)
        assert ws.update().parsed == 0  # a full update keeps using the buffer
        ws.set_overlay("brand_new.py", "def unsaved():\n    pass\n")  # a buffer with no file on disk
        assert ws.update(paths=["brand_new.py"]).changed_paths == ["brand_new.py"]
        assert "unsaved" in {d.name for d in ws.definitions()}
        ws.clear_overlay("alpha.py")
        ws.clear_overlay("brand_new.py")
        result = ws.update()
        assert sorted(result.changed_paths) == ["alpha.py"] and result.removed_paths == ["brand_new.py"]
        assert "beta" in {d.name for d in ws.definitions()}
        (tree / "alpha.py").write_text(edited)  # the user saved the same text: hash equal, no parse
        ws.set_overlay("alpha.py", edited)
        assert ws.update(paths=["alpha.py"]).changed_paths == ["alpha.py"]
        ws.clear_overlay("alpha.py")
        after_save = ws.update()
        assert after_save.parsed == 0 and after_save.hashed == 1


def test_file_vanishing_mid_index(tree: Path, tmp_path: Path) -> None:
    for i in range(5):
        (tree / f"mod{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    with open_ws(tree, tmp_path) as ws:
        def progress(done: int, total: int, path: str) -> None:
            if path == "mod1.py":
                (tree / "mod3.py").unlink()  # deleted after the scan saw it, before it is read

        result = ws.update(progress=progress)
        assert ("mod3.py", "vanished") in result.skipped_paths and result.skipped["vanished"] == 1
        assert "mod3.py" not in ws.store.files() and "mod4.py" in ws.store.files()


def test_invalid_utf8_and_syntax_errors_are_counted_not_fatal(tree: Path, tmp_path: Path) -> None:
    (tree / "latin.py").write_bytes(b"# caf\xe9\ndef cafe():\n    return '\xff'\n")
    (tree / "broken.py").write_text("def ok():\n    return 1\n\ndef broken(:\n    pass\n")
    with open_ws(tree, tmp_path) as ws:
        result = ws.update()
        assert result.errors.get("invalid-utf8") == 1 and result.errors.get("syntax-errors") == 1
        assert ws.store.chunks_for_path("latin.py") and ws.store.files()["latin.py"].status != "ok"
        assert "ok" in {d.name for d in ws.definitions() if d.path == "broken.py"}
        assert ws.update().parsed == 0


def test_parser_version_change_reparses(tree: Path, tmp_path: Path) -> None:
    with open_ws(tree, tmp_path) as ws:
        ws.update()
        ws.store.set_meta("parser_version", "an older parser")
        assert ws.update().parsed == 3
        assert ws.update().parsed == 0


def test_records_and_state_key(tree: Path, tmp_path: Path) -> None:
    with open_ws(tree, tmp_path) as ws:
        ws.update()
        assert {d.qualified_name for d in ws.definitions()} >= {"alpha", "beta", "Gamma", "Gamma.run"}
        assert ("alpha", "Gamma.run") in {(c.callee, c.caller) for c in ws.calls()}
        assert any(i.module == "alpha" and i.name == "alpha" for i in ws.imports())
        key, generation = ws.state_key(), ws.generation
        assert key.endswith(f":{ws.revision}") and ws.update().parsed == 0
        assert (ws.state_key(), ws.generation) == (key, generation)  # nothing changed
        ws.set_overlay("alpha.py", ALPHA + "\n")
        assert ws.state_key() == ""  # unsaved buffers belong to no saved state
        ws.clear_overlay("alpha.py")
        (tree / "alpha.py").write_text(ALPHA + "\n\ndef more():\n    return 1\n")
        ws.update()
        assert ws.generation == generation + 1 and ws.state_key() != key


def test_bad_roots_and_paths(tree: Path, tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError):
        Workspace(tmp_path / "missing", WorkspaceOptions(index_dir=tmp_path / "i"))
    with pytest.raises(WorkspaceError):
        Workspace(tree / "alpha.py", WorkspaceOptions(index_dir=tmp_path / "i"))
    with open_ws(tree, tmp_path) as ws:
        with pytest.raises(WorkspaceError):
            ws.read_bytes("/etc/hostname")
        with pytest.raises(WorkspaceError):
            ws.set_overlay("../escape.py", "x")
        with pytest.raises(WorkspaceError):
            ws.read_bytes("nope.py")
        result = ws.update(paths=["../escape.py"])
        assert result.skipped == {"outside-root": 1} and not result.changed


def test_index_recorded_for_another_root_is_refused(tree: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.py").write_text("def x():\n    return 1\n")
    with open_ws(tree, tmp_path) as ws:
        ws.update()
        files = ws.store.counts()["files"]
        assert ws.store.get_meta("root") == str(tree.resolve())
    with pytest.raises(IndexRootMismatch, match=f"belongs to {tree.resolve()}, not {other.resolve()}"):
        open_ws(other, tmp_path)
    with open_ws(tree, tmp_path) as ws:  # refused, not rebuilt: the first root's index is intact
        assert ws.store.counts()["files"] == files and ws.update().parsed == 0
    link = tmp_path / "link"
    link.symlink_to(tree)
    with open_ws(link, tmp_path) as ws:  # the same root through a symlink is the same root
        assert ws.root == tree.resolve()


def test_index_location_under_a_base(tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODESEEK_INDEX_DIR", raising=False)
    with Workspace(tree, WorkspaceOptions(index_base=tmp_path / "base")) as ws:
        assert ws.index_dir == index_dir_for(tree, tmp_path / "base") == tmp_path / "base" / index_key(tree)


def test_update_result_and_hash_helpers() -> None:
    assert not UpdateResult().changed
    assert content_hash(b"a") == content_hash(b"a") != content_hash(b"b")


def test_a_buffer_over_max_file_size_is_no_overlay(tree: Path, tmp_path: Path) -> None:
    from indexing.scan import ScanOptions

    ws = Workspace(tree, WorkspaceOptions(index_dir=tmp_path / "idx", scan=ScanOptions(max_file_size=100)))
    try:
        assert ws.set_overlay("alpha.py", "x = 1\n") and ws.overlays() == ["alpha.py"]
        assert not ws.set_overlay("alpha.py", "y" * 101) and ws.overlays() == []
        assert not ws.set_overlay("alpha.py", "é" * 60)  # 120 bytes in UTF-8
        assert ws.clear_overlay("alpha.py") == 0
    finally:
        ws.close()


def test_stays_inside_follows_symlinks(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, tree / "escape")
    os.symlink(tree / "alpha.py", tree / "inner_link.py")
    ws = open_ws(tree, tmp_path)
    try:
        assert ws.stays_inside("alpha.py") and ws.stays_inside("inner_link.py")
        assert not ws.stays_inside("escape/passwd")
    finally:
        ws.close()


def test_changed_elsewhere_sees_another_workspace_commit(tree: Path, tmp_path: Path) -> None:
    one, two = open_ws(tree, tmp_path), open_ws(tree, tmp_path)
    try:
        one.update()
        assert not one.changed_elsewhere()
        (tree / "delta.py").write_text("def delta():\n    return 4\n")
        two.update()
        assert one.changed_elsewhere(consume=False) and one.changed_elsewhere()
        assert not one.changed_elsewhere()
    finally:
        one.close()
        two.close()
