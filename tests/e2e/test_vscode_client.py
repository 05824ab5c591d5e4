"""The VS Code extension (editors/vscode): `npm ci`, the strict TypeScript compile, and its Node tests.

The Node tests (editors/vscode/src/test/) check the extension's pure modules and drive the real
`codeseek serve` over vscode-jsonrpc with the requests the extension itself builds: a search for a
function at its exact path and line, callers through call hierarchy and the find_references
fallback, impact, hover, and an InvalidParams error. VS Code itself cannot run here; everything
below the `vscode` API is exercised.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "editors" / "vscode"
SERVER = Path(sys.executable).parent / "codeseek"

pytestmark = pytest.mark.slow


def _npm(args: list[str], env: dict[str, str], timeout: int) -> subprocess.CompletedProcess[str]:
    npm = shutil.which("npm")
    assert npm, "npm is required for the VS Code extension tests (Node 18+)"
    return subprocess.run(
        [npm, *args], cwd=EXTENSION, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_vscode_extension_builds_and_drives_the_real_server(tmp_path: Path) -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("Node.js and npm are not installed")
    assert SERVER.exists(), f"{SERVER} missing: the codeseek console script (make setup)"
    env = dict(os.environ)
    env.update(CODESEEK_SERVER=str(SERVER), HF_HUB_OFFLINE="1", XDG_CACHE_HOME=str(tmp_path / "cache"))

    ci = _npm(["ci", "--no-audit", "--no-fund"], env, timeout=300)
    assert ci.returncode == 0, f"npm ci failed\n{ci.stdout}\n{ci.stderr}"

    compiled = _npm(["run", "compile"], env, timeout=300)
    assert compiled.returncode == 0, f"tsc failed\n{compiled.stdout}\n{compiled.stderr}"
    for module in ("extension", "client", "requests", "display", "launch", "settings", "picks", "navigation",
                   "languages", "resultsTree", "resultsView"):
        assert (EXTENSION / "out" / f"{module}.js").exists(), module

    tested = _npm(["test"], env, timeout=300)
    report = tested.stdout + tested.stderr
    assert tested.returncode == 0, f"npm test failed\n{report}"
    passed = re.search(r"^ℹ pass (\d+)$", report, re.MULTILINE)
    failed = re.search(r"^ℹ fail (\d+)$", report, re.MULTILINE)
    assert passed and failed, report
    assert int(failed.group(1)) == 0, report
    assert int(passed.group(1)) >= 29, report  # 18 pure + 11 against the server
    assert "✔ finds a function by name at its exact path and line" in report, report


def test_vscode_extension_packages_offline_into_a_vsix(tmp_path: Path) -> None:
    """`npm run package`: an esbuild bundle and `vsce package`, no network, a small .vsix."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("Node.js and npm are not installed")
    env = dict(os.environ, npm_config_offline="true")
    if not (EXTENSION / "node_modules" / ".bin" / "vsce").exists():
        ci = _npm(["ci", "--no-audit", "--no-fund"], dict(os.environ), timeout=300)
        assert ci.returncode == 0, f"npm ci failed\n{ci.stdout}\n{ci.stderr}"
    vsix = EXTENSION / "codeseek.vsix"
    vsix.unlink(missing_ok=True)
    packaged = _npm(["run", "package"], env, timeout=300)
    assert packaged.returncode == 0, f"vsce package failed\n{packaged.stdout}\n{packaged.stderr}"
    with zipfile.ZipFile(vsix) as archive:
        names = set(archive.namelist())
    vsix.unlink()
    assert {"extension/package.json", "extension/dist/extension.js", "extension/LICENSE.txt",
            "extension/readme.md"} <= names, names
    unbundled = ("extension/src/", "extension/node_modules/", "extension/out/")
    assert not any(n.startswith(unbundled) for n in names)
    assert len(names) < 12, names  # one bundle, not hundreds of unbundled files
