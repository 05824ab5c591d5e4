"""The `codeseek` command line as a user meets it: --version, help text, detected roots and
subfolder scope, --vimgrep/--jsonl/-C/--type, completion, gc/status --all, skipped files in --json."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_server.cli.main import build_parser

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tests" / "workspace" / "engine_sample"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The engine sample with a pyproject.toml marker, indexed once into a private cache."""
    tmp = tmp_path_factory.mktemp("flags")
    root = tmp / "ws"
    shutil.copytree(SAMPLE, root)
    (root / "pyproject.toml").write_text("[project]\nname = 'shop'\n")
    (root / "shop" / "legacy").mkdir()
    (root / "shop" / "legacy" / "page.jinja").write_text("{% block body %}\n{{ total }}\n{% endblock %}\n")
    run(root, "index", "--quiet", cwd=root)
    return root


def run(root: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CODESEEK_INDEX_DIR"}
    env.update(HF_HUB_OFFLINE="1", COLUMNS="200", PYTHONPATH=str(REPO),
               XDG_CACHE_HOME=str(root.parent / "cache"))
    return subprocess.run([sys.executable, "-m", "lsp_server.cli", *args], capture_output=True, text=True,
                          env=env, cwd=str(cwd or root), timeout=300)


def test_version_and_help_on_every_option() -> None:
    proc = subprocess.run([sys.executable, "-m", "lsp_server.cli", "--version"], capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=str(REPO)), check=True)
    assert proc.stdout.startswith("codeseek ")
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    missing = [f"{name} {action.dest}" for name, p in sub.choices.items()  # type: ignore[union-attr]
               for action in p._actions if not action.help and action.dest != "help"]
    assert missing == []


def test_search_from_a_subfolder_uses_the_root_index_scoped_to_it(project: Path) -> None:
    proc = run(project, "search", "total", "--no-embed", "--jsonl", cwd=project / "web")
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert rows and {r["path"].split("/")[0] for r in rows} == {"web"}
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    whole = run(project, "search", "total", "--no-embed", "--jsonl", "--limit", "50")
    assert {json.loads(line)["path"].split("/")[0] for line in whole.stdout.splitlines()} > {"web"}
    cache = project.parent / "cache" / "codeseek"
    indexes = [p for p in cache.iterdir() if (p / "index.sqlite3").exists()] if cache.exists() else []
    assert len(indexes) <= 1  # one index, not one per folder


def test_vimgrep_points_at_the_name_line_relative_to_the_cwd(project: Path) -> None:
    proc = run(project, "search", "apply_discount", "--no-embed", "--vimgrep", "--limit", "1",
               cwd=project / "shop")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["pricing.py:11:5:def apply_discount(amount, percent):"]


def test_context_lines_and_type_filter(project: Path) -> None:
    proc = run(project, "search", "apply_discount", "--no-embed", "-C", "1", "--limit", "1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[4:] == [
        "  10 ", "  11 def apply_discount(amount, percent):",
        '  12     """Take a percentage off an amount, never below zero."""']
    js = run(project, "search", "total", "--no-embed", "--jsonl", "--type", "js", "--limit", "50")
    assert {json.loads(line)["path"].rsplit(".", 1)[1] for line in js.stdout.splitlines()} == {"js"}
    bad = run(project, "search", "total", "--no-embed", "--type", "cobol")
    assert bad.returncode == 2 and "unknown --type 'cobol'" in bad.stderr


def test_marker_less_folder_is_refused_unless_named(tmp_path: Path) -> None:
    folder = tmp_path / "x"
    folder.mkdir()
    (folder / "notes.py").write_text("def f():\n    return 1\n")
    proc = run(folder, "index", "--quiet", cwd=folder)
    assert proc.returncode == 2 and "no project root" in proc.stderr and "--root" in proc.stderr
    named = run(folder, "index", ".", "--quiet", "--json", cwd=folder)
    assert named.returncode == 0, named.stderr
    assert json.loads(named.stdout)["root"] == str(folder.resolve())


def test_index_json_lists_skipped_files_and_templates_are_indexed(project: Path) -> None:
    (project / "shop" / "blob.bin").write_bytes(b"\0\1\2")
    proc = run(project, "index", "--json", "--root", str(project))
    data = json.loads(proc.stdout)
    skipped = {s["path"]: s["reason"] for s in data["skipped_files"]}
    assert skipped["shop/blob.bin"] == "unsupported-language"
    assert "shop/legacy/page.jinja" not in skipped
    status = json.loads(run(project, "status", "--json").stdout)
    assert {"path": "shop/blob.bin", "reason": "unsupported-language"} in status["skipped_files"]
    chunks = run(project, "chunks", str(project / "shop" / "legacy" / "page.jinja"), cwd=project.parent)
    assert chunks.returncode == 0, chunks.stderr  # root found from the file, not the cwd
    assert "shop/legacy/page.jinja  text" in chunks.stdout


def test_impact_zero_is_refused_and_roots_must_agree(project: Path) -> None:
    proc = run(project, "graph", "apply_discount", "--impact", "0")
    assert proc.returncode == 2 and "--impact: must be 1 or more" in proc.stderr
    both = run(project, "status", str(project), "--root", str(project / "shop"))
    assert both.returncode == 2 and "two different roots" in both.stderr


def test_status_all_and_gc(project: Path, tmp_path: Path) -> None:
    doomed = tmp_path / "doomed"
    (doomed / "pyproject.toml").parent.mkdir()
    (doomed / "pyproject.toml").write_text("")
    (doomed / "a.py").write_text("x = 1\n")
    assert run(project, "index", "--quiet", "--root", str(doomed)).returncode == 0
    shutil.rmtree(doomed)
    listing = json.loads(run(project, "status", "--all", "--json").stdout)
    stale = {i["root"]: i["stale"] for i in listing["indexes"]}
    assert stale[str(doomed)] == "root is gone" and stale[str(project)] is None
    dry = run(project, "gc", "--dry-run")
    assert "would remove" in dry.stdout and str(doomed) in dry.stdout
    gone = json.loads(run(project, "gc", "--json").stdout)
    assert [i["root"] for i in gone["removed"]] == [str(doomed)]
    after = json.loads(run(project, "status", "--all", "--json").stdout)
    assert [i["root"] for i in after["indexes"]] == [str(project)]


def test_bash_completion_script(project: Path) -> None:
    proc = run(project, "completion", "bash")
    assert proc.returncode == 0, proc.stderr
    assert "codeseek" in proc.stdout and "--vimgrep" in proc.stdout
