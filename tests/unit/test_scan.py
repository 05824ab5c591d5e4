"""Scan rules on real files in a temporary tree: ignore files, skip lists, bad files, symlinks."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from indexing import scan as sc
from indexing.scan import ScanOptions, relative_path, scan, scan_paths


def write(root: Path, rel: str, data: str | bytes = "x = 1\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)
    return path


def accepted(result: sc.ScanResult) -> list[str]:
    return [f.path for f in result.files]


def reasons(result: sc.ScanResult) -> dict[str, str]:
    return dict(result.skipped)


def test_plain_tree_is_accepted_with_language_labels_and_stat(tmp_path: Path) -> None:
    write(tmp_path, "src/app.py", "def f():\n    return 1\n")
    write(tmp_path, "tests/test_app.py")
    write(tmp_path, "README.md", "# hi\n")
    result = scan(tmp_path, ScanOptions())
    assert accepted(result) == ["README.md", "src/app.py", "tests/test_app.py"]
    by_path = {f.path: f for f in result.files}
    app = by_path["src/app.py"]
    assert app.language == "python" and app.labels == ("source",)
    assert app.size == len("def f():\n    return 1\n")
    assert app.mtime_ns == os.stat(tmp_path / "src/app.py").st_mtime_ns
    assert by_path["tests/test_app.py"].labels == ("test",)
    assert by_path["README.md"].language == "markdown"


def test_nested_gitignore_is_anchored_to_its_own_directory(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.log\n/top_only.py\nsecret/\n")
    write(tmp_path, "top_only.py")
    write(tmp_path, "pkg/top_only.py")  # "/top_only.py" is anchored at the root: kept here
    write(tmp_path, "secret/a.py")
    write(tmp_path, "pkg/.gitignore", "/gen.py\n!keep.txt\n*.txt\n!important.txt\n")
    write(tmp_path, "pkg/gen.py")
    write(tmp_path, "pkg/sub/gen.py")  # anchored in pkg/: not ignored one level down
    write(tmp_path, "pkg/notes.txt", "n\n")
    write(tmp_path, "pkg/important.txt", "i\n")
    write(tmp_path, "other/notes.txt", "n\n")  # pkg's *.txt does not reach other/
    result = scan(tmp_path, ScanOptions())
    got = accepted(result)
    assert "top_only.py" not in got and "pkg/top_only.py" in got
    assert "pkg/gen.py" not in got and "pkg/sub/gen.py" in got
    assert "pkg/notes.txt" not in got and "pkg/important.txt" in got and "other/notes.txt" in got
    r = reasons(result)
    assert r["secret/"] == sc.IGNORED and r["pkg/gen.py"] == sc.IGNORED and r["top_only.py"] == sc.IGNORED


def test_deeper_negation_overrides_parent_ignore(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.json\n")
    write(tmp_path, "conf/.gitignore", "!settings.json\n")
    write(tmp_path, "conf/settings.json", "{}\n")
    write(tmp_path, "conf/other.json", "{}\n")
    got = accepted(scan(tmp_path, ScanOptions()))
    assert got == ["conf/settings.json"]


def test_ignore_and_codeseekignore_and_option_excludes(tmp_path: Path) -> None:
    write(tmp_path, ".ignore", "a.py\n")
    write(tmp_path, ".codeseekignore", "fixtures/\n")
    write(tmp_path, ".gitignore", "!b.py\n")
    write(tmp_path, "a.py")
    write(tmp_path, "b.py")
    write(tmp_path, "c.py")
    write(tmp_path, "fixtures/big.py")
    result = scan(tmp_path, ScanOptions(excludes=("c.py",)))
    assert accepted(result) == ["b.py"]
    assert reasons(result)["fixtures/"] == sc.IGNORED
    assert accepted(scan(tmp_path, ScanOptions(use_ignore_files=False))) == [
        "a.py", "b.py", "c.py", "fixtures/big.py"]


def test_always_skipped_dirs_and_lockfiles(tmp_path: Path) -> None:
    for d in ("node_modules/lib", ".git", "dist", "build", ".venv/lib", "venv", "__pycache__", "target",
              ".tox", ".mypy_cache", "pkg.egg-info", "coverage", "htmlcov", "src/deep/node_modules"):
        write(tmp_path, f"{d}/x.js", "var a;\n")
    write(tmp_path, "coverage_py/coverage/__init__.py")  # a Python package named coverage is source
    for lock in ("package-lock.json", "pnpm-lock.yaml", "yarn.lock", "Cargo.lock", "poetry.lock", "uv.lock",
                 "composer.lock", "Gemfile.lock", "go.sum"):
        write(tmp_path, f"sub/{lock}", "{}\n")
    write(tmp_path, "main.js", "var a;\n")
    result = scan(tmp_path, ScanOptions())
    assert accepted(result) == ["coverage_py/coverage/__init__.py", "main.js"]
    r = reasons(result)
    assert r["node_modules/"] == sc.EXCLUDED_DIR and r["src/deep/node_modules/"] == sc.EXCLUDED_DIR
    assert r["pkg.egg-info/"] == sc.EXCLUDED_DIR and r["coverage/"] == sc.EXCLUDED_DIR
    assert r["sub/yarn.lock"] == sc.LOCKFILE and r["sub/go.sum"] == sc.LOCKFILE
    assert r["sub/package-lock.json"] == sc.LOCKFILE


def test_binary_large_unsupported_and_minified(tmp_path: Path) -> None:
    write(tmp_path, "blob.py", b"abc\x00def\n")
    write(tmp_path, "late_nul.py", b"x = 1\n" * 200 + b"\x00")  # NUL after the first 512 bytes
    write(tmp_path, "huge.py", "x = 1\n" * 200_000)
    write(tmp_path, "image.png", b"\x89PNG")
    write(tmp_path, "bundle.js", "var a=" + "1+" * 100_000 + "1;")  # 200 KB on one line
    write(tmp_path, "long_but_normal.js", "var a = 1;\n" * 3000)
    result = scan(tmp_path, ScanOptions())
    r = reasons(result)
    assert r["blob.py"] == sc.BINARY and r["huge.py"] == sc.TOO_LARGE
    assert r["image.png"] == sc.UNSUPPORTED and r["bundle.js"] == sc.MINIFIED
    assert accepted(result) == ["late_nul.py", "long_but_normal.js"]
    bigger = scan(tmp_path, ScanOptions(max_file_size=5_000_000, skip_minified=False))
    assert "huge.py" in accepted(bigger) and "bundle.js" in accepted(bigger)


def test_symlinks_broken_looping_and_leaving_root(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    outside = write(tmp_path, "outside/secret.py")
    write(root, "real/a.py")
    os.symlink(root / "real", root / "alias")  # a dir link inside the root: followed, then deduped
    os.symlink(root / "real/a.py", root / "link.py")  # file link inside: the real path wins
    os.symlink(outside, root / "out.py")
    os.symlink(outside.parent, root / "outdir")
    os.symlink(root / "missing.py", root / "broken.py")
    os.symlink(root / "real", root / "real/loop")  # a directory loop
    os.symlink(root / "self1.py", root / "self2.py")
    os.symlink(root / "self2.py", root / "self1.py")  # a file-level symlink loop
    result = scan(root, ScanOptions())
    assert accepted(result) == ["real/a.py"]
    r = reasons(result)
    assert r["alias/a.py"] == sc.SYMLINK_DUPLICATE and r["link.py"] == sc.SYMLINK_DUPLICATE
    assert r["out.py"] == sc.SYMLINK_OUTSIDE and r["outdir/"] == sc.SYMLINK_OUTSIDE
    assert r["broken.py"] == sc.BROKEN_SYMLINK
    assert r["real/loop/"] == sc.SYMLINK_LOOP and r["alias/loop/"] == sc.SYMLINK_LOOP
    assert r["self1.py"] == sc.SYMLINK_LOOP and r["self2.py"] == sc.SYMLINK_LOOP


@pytest.mark.parametrize("git", [False, True])
def test_a_symlinked_folder_is_indexed_once_under_its_real_path(tmp_path: Path, git: bool) -> None:
    """Issue 9: a folder linked into another place (pydantic's tests/pydantic_core) was indexed twice."""
    root = tmp_path / "ws"
    write(root, "core/tests/test_a.py")
    write(root, "core/tests/deep/test_b.py")
    write(root, "gen/only.py")
    (root / "pkg").mkdir()
    os.symlink("../core/tests", root / "pkg/tests")  # relative link, as a checkout has it
    os.symlink("../gen", root / "pkg/gen")
    (root / ".ignore").write_text("/gen/\n")  # the real folder is ignored: the link path stays, once
    os.symlink("only.py", root / "gen/again.py")
    if git:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    result = scan(root, ScanOptions(use_git=git))
    want_real = ["core/tests/deep/test_b.py", "core/tests/test_a.py"]
    if git:  # git lists a folder link as one path: not a file, nothing below it is read
        assert accepted(result) == want_real
        assert "pkg/tests" in reasons(result)  # (no language: the name has no extension)
        return
    assert accepted(result) == [*want_real, "pkg/gen/again.py"]
    r = reasons(result)
    assert r["pkg/tests/test_a.py"] == sc.SYMLINK_DUPLICATE
    assert r["pkg/tests/deep/test_b.py"] == sc.SYMLINK_DUPLICATE
    assert r["pkg/gen/only.py"] == sc.SYMLINK_DUPLICATE
    # Named paths (a targeted update) follow the same rule.
    named = scan_paths(root, ["pkg/tests/test_a.py", "pkg/tests"],
                       ScanOptions(use_git=False))
    assert accepted(named) == []
    assert reasons(named)["pkg/tests/test_a.py"] == sc.SYMLINK_DUPLICATE
    alone = scan_paths(root, ["pkg/gen/again.py"], ScanOptions(use_git=False))
    assert accepted(alone) == ["pkg/gen/again.py"]  # its real file is ignored: this path stays


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file_and_directory(tmp_path: Path) -> None:
    write(tmp_path, "ok.py")
    locked = write(tmp_path, "locked.py")
    locked.chmod(0)
    write(tmp_path, "closed/inner.py")
    (tmp_path / "closed").chmod(0)
    try:
        result = scan(tmp_path, ScanOptions())
    finally:
        locked.chmod(0o644)
        (tmp_path / "closed").chmod(0o755)
    assert accepted(result) == ["ok.py"]
    r = reasons(result)
    assert r["locked.py"] == sc.UNREADABLE and r["closed/"] == sc.UNREADABLE


def test_file_vanishing_mid_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "a.py")
    write(tmp_path, "b.py")
    real_sniff = sc.Scanner.sniff

    def sniff_after_delete(self: sc.Scanner, full: str, size: int) -> str | None:
        if full.endswith("a.py"):
            os.unlink(full)  # the file disappears between stat and read, as a concurrent delete would
        return real_sniff(self, full, size)

    monkeypatch.setattr(sc.Scanner, "sniff", sniff_after_delete)
    result = scan(tmp_path, ScanOptions())
    assert accepted(result) == ["b.py"]
    assert reasons(result)["a.py"] == sc.VANISHED


def test_scan_paths_applies_the_same_rules(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "ignored/\n")
    write(tmp_path, "ignored/a.py")
    write(tmp_path, "node_modules/m.js", "var a;\n")
    write(tmp_path, "src/ok.py")
    result = scan_paths(tmp_path, ["ignored/a.py", "node_modules/m.js", str(tmp_path / "src/ok.py"),
                                   "src/gone.py", "/etc/passwd", "../x.py"])
    assert accepted(result) == ["src/ok.py"]
    r = reasons(result)
    assert r["ignored/a.py"] == sc.IGNORED and r["node_modules/m.js"] == sc.EXCLUDED_DIR
    assert r["src/gone.py"] == sc.VANISHED
    assert r["/etc/passwd"] == sc.OUTSIDE_ROOT and r["../x.py"] == sc.OUTSIDE_ROOT


def test_scan_paths_walks_named_directories(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.gen.py\n")
    write(tmp_path, "pkg/.gitignore", "skip/\n")
    write(tmp_path, "pkg/a.py")
    write(tmp_path, "pkg/x.gen.py")
    write(tmp_path, "pkg/skip/b.py")
    write(tmp_path, "pkg/deep/c.py")
    write(tmp_path, "pkg/deep/.ignore", "c.py\n")
    write(tmp_path, "pkg/deep/d.py")
    write(tmp_path, "other/e.py")
    result = scan_paths(tmp_path, ["pkg", "node_modules"])
    assert accepted(result) == ["pkg/a.py", "pkg/deep/d.py"]
    r = reasons(result)
    assert r["pkg/x.gen.py"] == sc.IGNORED and r["pkg/skip/"] == sc.IGNORED
    assert r["pkg/deep/c.py"] == sc.IGNORED
    assert accepted(scan_paths(tmp_path, ["pkg/deep"])) == ["pkg/deep/d.py"]
    write(tmp_path, "node_modules/m.js", "var m;\n")
    assert reasons(scan_paths(tmp_path, ["node_modules"]))["node_modules/"] == sc.EXCLUDED_DIR


def test_relative_path_normalizes_and_refuses_outside(tmp_path: Path) -> None:
    assert relative_path(tmp_path, "a/./b/../c.py") == "a/c.py"
    assert relative_path(tmp_path, tmp_path / "x" / "y.py") == "x/y.py"
    assert relative_path(tmp_path, "../z.py") is None
    assert relative_path(tmp_path, tmp_path) is None
    assert relative_path(tmp_path, "/") is None


def test_known_files_are_not_read_again(tmp_path: Path) -> None:
    path = write(tmp_path, "a.py", b"x = 1\n")
    first = scan(tmp_path, ScanOptions())
    info = first.files[0]
    st = path.stat()
    path.write_bytes(b"\x00 = 1\n")  # same size; restore the mtime: indistinguishable without reading
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert reasons(scan(tmp_path, ScanOptions()))["a.py"] == sc.BINARY
    trusted = scan(tmp_path, ScanOptions(), known={"a.py": (info.size, info.mtime_ns)})
    assert accepted(trusted) == ["a.py"]
    stale = scan(tmp_path, ScanOptions(), known={"a.py": (info.size, info.mtime_ns - 1)})
    assert reasons(stale)["a.py"] == sc.BINARY


def test_an_ignore_file_linking_out_of_the_root_is_not_read(tmp_path: Path) -> None:
    """Issue 13 item 9: a `.ignore` symlink to a file outside the root was read and applied."""
    outside = tmp_path / "outside.txt"
    outside.write_text("*.py\n")
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    os.symlink(outside, root / ".ignore")
    assert [f.path for f in scan(root).files] == ["a.py"]


def test_names_that_are_not_utf8_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text("x = 1\n")
    with open(os.fsencode(tmp_path) + b"/bad_\xff.py", "wb") as fh:
        fh.write(b"y = 2\n")
    result = scan(tmp_path)
    assert [f.path for f in result.files] == ["good.py"]
    assert result.skipped == [("bad_\\xff.py", "non-utf8-name")]
