"""End-to-end tests of the `codeseek` command line as a user types and pipes it (issue 30): output
read by a reader that leaves early (`| head -1`) ends quietly, and unquoted words are one query."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LONG = "alpha_parameter_with_a_rather_long_name: int, beta_parameter_with_a_rather_long_name: int"


def _env() -> dict[str, str]:
    return dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO))


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "lsp_server.cli", *args]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """120 files, each defining two `total_*` functions with long signature lines, indexed once."""
    base = tmp_path_factory.mktemp("front")
    root = base / "ws"
    for i in range(120):
        folder = root / "pkg" / f"part{i // 40}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod_{i:03d}.py").write_text(
            f"def total_{i:03d}({LONG}) -> int:\n    \"\"\"Add up the order lines.\"\"\"\n"
            f"    return alpha_parameter_with_a_rather_long_name + {i}\n\n\n"
            f"def total_tax_{i:03d}({LONG}) -> int:\n"
            f"    return beta_parameter_with_a_rather_long_name * {i}\n")
    (root / "pyproject.toml").write_text("[project]\nname = 'front'\n")
    index = base / "index"
    subprocess.run(_cli("index", str(root), "--no-embed", "--quiet", "--index-dir", str(index)),
                   env=_env(), check=True, capture_output=True, timeout=300)
    return root, index


def _head_1(argv: list[str]) -> tuple[int, str, bytes]:
    """Run `argv | head -1` with a one-page pipe (the writer outgrows it at once): the exit status,
    stderr, and the first line read."""
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)
    proc = subprocess.Popen(argv, stdout=write_end, stderr=subprocess.PIPE, env=_env(), cwd=REPO)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reader:
        first = reader.readline()
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    return proc.wait(timeout=300), err, first


@pytest.mark.parametrize("fmt", ["--jsonl", "--vimgrep", "--json", "human"])
def test_a_reader_that_leaves_early_gets_no_traceback(workspace: tuple[Path, Path], fmt: str) -> None:
    root, index = workspace
    flags = [] if fmt == "human" else [fmt]
    code, err, first = _head_1(_cli("search", "total", *flags, "--limit", "200", "--max-lines", "0",
                                    "--no-embed", "--root", str(root), "--index-dir", str(index)))
    assert first.strip(), err
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err, err
    assert code == 0, err


def test_completion_piped_to_head(tmp_path: Path) -> None:
    code, err, first = _head_1(_cli("completion", "bash"))
    assert first.startswith(b"#")
    assert err == "" and code == 0, err


def _search(workspace: tuple[Path, Path], *args: str) -> subprocess.CompletedProcess[str]:
    root, index = workspace
    return subprocess.run(_cli("search", "--no-embed", "--root", str(root), "--index-dir", str(index), *args),
                          capture_output=True, text=True, env=_env(), cwd=REPO, timeout=300)


def test_unquoted_words_are_one_query_with_options_anywhere(workspace: tuple[Path, Path]) -> None:
    import json

    proc = _search(workspace, "add", "up", "--limit", "3", "the", "order", "--json", "lines")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["query"] == "add up the order lines"
    assert len(result["results"]) == 3
    quoted = _search(workspace, "add up the order lines", "--limit", "3", "--json")
    assert json.loads(quoted.stdout)["results"] == result["results"]  # the same as the quoted form
    dashed = _search(workspace, "--json", "--", "-x", "total_001")
    assert json.loads(dashed.stdout)["query"] == "-x total_001", dashed.stderr


def test_unknown_options_are_still_usage_errors(workspace: tuple[Path, Path]) -> None:
    proc = _search(workspace, "total", "--limt", "3")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == "codeseek: error: unrecognized arguments: --limt 3"


def test_help_names_exactly_the_intents_search_accepts(workspace: tuple[Path, Path]) -> None:
    from retrievers.ranking.intent import INTENTS

    shown = subprocess.run(_cli("search", "--help"), capture_output=True, text=True, env=_env(), cwd=REPO,
                           check=True).stdout
    said = " ".join(shown.split())
    assert "find_usages" not in said
    listed = said.split("force the query intent: ", 1)[1].split(" -", 1)[0].split(", ")
    assert tuple(w.strip() for w in listed) == INTENTS
    refused = _search(workspace, "total", "--intent", "find_usages")
    assert refused.returncode == 2 and "unknown intent 'find_usages'" in refused.stderr, refused.stderr
    accepted = _search(workspace, "total_001", "--intent", "find_references", "--json")
    assert accepted.returncode in (0, 1), accepted.stderr


def test_index_names_the_files_behind_its_errors(tmp_path: Path) -> None:
    import json

    root = tmp_path / "ws"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'e'\n")
    (root / "good.py").write_text("def fine() -> int:\n    return 1\n")
    (root / "bad.py").write_bytes(b"def broken() -> str:\n    return '\xff\xfe'\n")
    args = ("index", str(root), "--no-embed", "--index-dir", str(tmp_path / "index"))
    human = subprocess.run(_cli(*args), capture_output=True, text=True, env=_env(), cwd=REPO, timeout=300)
    assert "errors       1 (invalid-utf8 1)" in human.stdout, human.stdout
    assert "    bad.py  invalid-utf8" in human.stdout.splitlines(), human.stdout
    data = json.loads(subprocess.run(_cli(*args, "--json"), capture_output=True, text=True, env=_env(),
                                     cwd=REPO, timeout=300).stdout)
    assert data["error_files"] == [{"path": "bad.py", "reason": "invalid-utf8"}]
    listing = subprocess.run(_cli("status", "--all", "--index-dir", str(tmp_path / "index")),
                             capture_output=True, text=True, env=_env(), cwd=REPO, timeout=300).stdout
    assert "(current)" in listing and "in use" not in listing, listing  # no process holds it
