"""`lsp_server.file_watch.relevant`: which changes wake the index, by the scan's own rules."""

from __future__ import annotations

from pathlib import Path

from indexing.ignore_files import IgnoreFiles
from lsp_server.file_watch import relevant


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for rel in ("pkg/a.py", "node_modules/x/index.js", "out/gen.py", ".git/HEAD", "pkg/sub/b.py",
                "notes.bin"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x = 1\n")
    (root / ".codeseekignore").write_text("out/\n")
    return root


def _ask(root: Path, rels: list[str], indexed: set[str] = frozenset(), added: bool = False,
         index_dir: Path | None = None) -> tuple[bool, set[str]]:
    ignores = IgnoreFiles(root, ("*.skipme",))
    batch = relevant(root, [(added, str(root / r)) for r in rels], indexed, ignores, index_dir)
    return batch.full, batch.paths


def test_source_files_wake_the_index_and_the_rest_does_not(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    rels = ["pkg/a.py", "node_modules/x/index.js", "out/gen.py", ".git/HEAD", "notes.bin", "c.skipme"]
    assert _ask(root, rels) == (False, {"pkg/a.py"})


def test_indexed_paths_always_count(tmp_path: Path) -> None:
    root = _tree(tmp_path)  # a tracked file under a folder skipped by name, a file now ignored
    both = {"out/gen.py", "node_modules/x/index.js"}
    assert _ask(root, sorted(both), indexed=both)[1] == both


def test_an_ignore_file_change_rescans(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    assert _ask(root, [".codeseekignore"]) == (True, set())
    assert _ask(root, ["pkg/.gitignore"])[0] is True


def test_new_and_deleted_folders(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    assert _ask(root, ["pkg/sub"], added=True)[1] == {"pkg/sub"}
    assert _ask(root, ["pkg/sub"], added=False)[1] == set()  # a folder's own metadata
    assert _ask(root, ["gone"], indexed={"gone/c.py"})[1] == {"gone"}  # removed with files indexed
    assert _ask(root, ["gone"], indexed={"gone2/c.py"})[1] == set()


def test_the_index_folder_and_the_root_itself_never_count(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "idx").mkdir()
    assert _ask(root, ["idx/x.py", ""], index_dir=root / "idx")[1] == set()
