"""The MCP client configurations in README.md ("Coding agents"), run as written through the SDK's stdio
client, as tests/e2e/test_editor_docs.py does for the editor snippets.

Each snippet is taken from the page itself. The only edits: the placeholder server path becomes this
checkout's `codeseek`, the placeholder project (or VS Code's `${workspaceFolder}`) a copy of
tests/workspace/editors, and `--no-embed` is added so no model is loaded. Checked for each: the server
starts, lists the seven tools and answers `definition` and `callers` with the sample's exact locations.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.mcp_support import CODESEEK, call, environment, mcp_session, wait_indexed

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "README.md"
FIXTURE = REPO / "tests" / "workspace" / "editors"
PLACEHOLDER = "/path/to/codeseek/.venv/bin/codeseek"
PROJECT = "/path/to/your/project"


def _block(language: str, containing: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    found = [b for b in re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
             if containing in b]
    assert len(found) == 1, f"expected one ```{language} block containing {containing!r} in {DOC}"
    return found[0]


def _mcp_servers() -> tuple[str, list[str]]:
    entry = json.loads(_block("json", '"mcpServers"'))["mcpServers"]["codeseek"]
    return entry["command"], entry["args"]


def _vscode() -> tuple[str, list[str]]:
    entry = json.loads(_block("json", '"servers"'))["servers"]["codeseek"]
    assert entry["type"] == "stdio"
    return entry["command"], entry["args"]


def _claude_code() -> tuple[str, list[str]]:
    [line] = [ln for ln in _block("sh", "claude mcp add").splitlines() if ln.startswith("claude mcp add")]
    words = shlex.split(line)
    assert words[:4] == ["claude", "mcp", "add", "codeseek"] and words[4] == "--"
    return words[5], words[6:]


def _filled(command: str, args: list[str], workspace: Path) -> tuple[str, list[str]]:
    assert command == PLACEHOLDER, command
    assert args[0] == "mcp" and "--root" in args, args
    root = args[args.index("--root") + 1]
    assert root in (PROJECT, "${workspaceFolder}"), root
    return str(CODESEEK), [a if a != root else str(workspace) for a in args] + ["--no-embed"]


@pytest.mark.parametrize("snippet", [_mcp_servers, _vscode, _claude_code],
                         ids=["mcpServers", "vscode-servers", "claude-mcp-add"])
async def test_readme_mcp_snippet_serves_the_workspace(snippet: Any, tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    shutil.copytree(FIXTURE, workspace)
    command, args = _filled(*snippet(), workspace)
    async with mcp_session(command, args, environment(tmp_path), tmp_path) as session:
        tools = {t.name for t in (await session.list_tools()).tools}
        assert tools == {"search", "definition", "callers", "callees", "impact", "related", "status"}
        status = await wait_indexed(session)
        assert status["root"] == str(workspace)
        found = await call(session, "definition", symbol="add_tax")
        assert [(d["path"], d["start_line"]) for d in found["definitions"]] == [("shop/pricing.py", 16)]
        callers = await call(session, "callers", symbol="apply_discount")
        sites = {(c["path"], c["line"], c["caller"]) for c in callers["matches"][0]["callers"]}
        assert sites == {("shop/pricing.py", 23, "line_total"),
                         ("shop/cart.py", 40, "ShoppingCart.cheapest_price")}
