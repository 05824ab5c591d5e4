"""The editor configurations in README.md, run as written against the real server.

Each snippet is taken from the page itself, so the documentation cannot drift from what works. The
only edits: the placeholder server path becomes this checkout's `codeseek`, and `embeddings` is
turned off so no model is loaded. Checked:
- the VS Code settings block names settings the extension declares;
- the plain Neovim `vim.lsp.config` snippet: headless Neovim attaches and gets the hover panel;
- the eglot configuration and `codeseek-search` in a real Emacs (skipped when Emacs or eglot is not
  installed): the search buffer lists `shop/pricing.py:16: add_tax` and jumping lands there;
- the Helix TOML parses, starts `codeseek serve`, and its options are accepted by the server's parser.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_server.lsp.options import parse_options

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "README.md"
FIXTURE = REPO / "tests" / "workspace" / "editors"
BIN = Path(sys.executable).parent
SERVER = BIN / "codeseek"
NVIM = BIN / "nvim"
PLACEHOLDER = "/path/to/codeseek/.venv/bin/codeseek"


def _blocks(language: str) -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def _block(language: str, containing: str) -> str:
    found = [b for b in _blocks(language) if containing in b]
    assert len(found) == 1, f"expected one ```{language} block containing {containing!r} in {DOC}"
    return found[0]


def _workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    shutil.copytree(FIXTURE, workspace)
    # Both editors find the project root through version control.
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    return workspace


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(HOME=str(tmp_path / "home"), CODESEEK_INDEX_DIR=str(tmp_path / "index"), HF_HUB_OFFLINE="1")
    for name in ("XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        env[name] = str(tmp_path / name.lower())
    (tmp_path / "home").mkdir()
    return env


def test_vscode_settings_block_uses_declared_settings() -> None:
    block = _block("jsonc", '"codeseek.serverPath"')
    settings = json.loads(re.sub(r"^\s*//.*$", "", block, flags=re.MULTILINE))
    declared = json.loads((REPO / "editors" / "vscode" / "package.json").read_text())
    properties = declared["contributes"]["configuration"]["properties"]
    assert set(settings) <= set(properties), set(settings) - set(properties)
    commented = re.findall(r'//\s*"(codeseek\.[\w.]+)"', block)
    assert commented and set(commented) <= set(properties)


def test_helix_config_parses_and_its_options_are_accepted() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads(_block("toml", "[language-server.codeseek]"))
    server = config["language-server"]["codeseek"]
    assert server["command"].endswith("/codeseek") and server["args"] == ["serve"]
    options, problems = parse_options(server["config"])
    assert problems == [], problems
    assert options.preset == "default" and options.embeddings is True
    languages = {lang["name"]: lang["language-servers"] for lang in config["language"]}
    assert all("codeseek" in servers for servers in languages.values()), languages


NVIM_DRIVER = r"""
local ok = vim.wait(30000, function()
  return #vim.lsp.get_clients({ bufnr = 0, name = 'codeseek' }) > 0
end, 50)
if not ok then
  io.stdout:write('NO CLIENT\n')
  vim.cmd('cq 1')
end
local client = vim.lsp.get_clients({ bufnr = 0, name = 'codeseek' })[1]
local ready = false
for _ = 1, 300 do
  local status = { command = 'codeseek.status', arguments = {} }
  local r = client:request_sync('workspace/executeCommand', status, 2000, 0)
  local root = r and r.result and r.result.roots and r.result.roots[1]
  if root and (root.state == 'ready' or root.state == 'text-only') then
    ready = true
    break
  end
  vim.wait(200)
end
vim.api.nvim_win_set_cursor(0, { 8, 6 })
local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
local r = client:request_sync('textDocument/hover', params, 10000, 0)
local text = r and r.result and r.result.contents and r.result.contents.value or ''
io.stdout:write(('READY %s\nROOT %s\nHOVER %s\n'):format(tostring(ready), client.root_dir, text))
vim.cmd('cq 0')
"""


@pytest.mark.slow
def test_plain_neovim_snippet_attaches_and_hovers(tmp_path: Path) -> None:
    snippet = _block("lua", "vim.lsp.config('codeseek'")
    assert PLACEHOLDER in snippet and "embeddings = true" in snippet
    snippet = snippet.replace(PLACEHOLDER, str(SERVER)).replace("embeddings = true", "embeddings = false")
    workspace = _workspace(tmp_path)
    init = tmp_path / "init.lua"
    init.write_text(snippet, encoding="utf-8")
    driver = tmp_path / "driver.lua"
    driver.write_text(NVIM_DRIVER, encoding="utf-8")
    proc = subprocess.run(
        [str(NVIM), "--headless", "--clean", "-u", str(init), "shop/pricing.py", "-c", f"luafile {driver}"],
        cwd=workspace, env=_env(tmp_path), capture_output=True, text=True, timeout=180,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "READY true" in output, output
    assert f"ROOT {workspace}" in output, output
    assert "def apply_discount(price: float, percent: float) -> float" in output, output
    assert "line_total" in output, output


EMACS_DRIVER = r"""
(defun codeseek-test--fail (fmt &rest args)
  (princ (concat (apply #'format fmt args) "\n") #'external-debugging-output)
  (kill-emacs 1))
(condition-case err
    (progn
      (find-file "shop/pricing.py")
      (apply #'eglot (eglot--guess-contact))
      (let ((tries 0))
        (while (and (not (eglot-current-server)) (< tries 300))
          (accept-process-output nil 0.1) (setq tries (1+ tries))))
      (unless (eglot-current-server) (codeseek-test--fail "NO SERVER"))
      (let ((tries 0) state)
        (while (and (not (member state '("ready" "text-only"))) (< tries 300))
          (let ((status (jsonrpc-request (eglot-current-server) :workspace/executeCommand
                                         '(:command "codeseek.status" :arguments []))))
            (let ((roots (plist-get status :roots)))  ; empty until the server has the folder
              (when (> (length roots) 0) (setq state (plist-get (aref roots 0) :state)))))
          (accept-process-output nil 0.2) (setq tries (1+ tries)))
        (message "STATE %s" state))
      (codeseek-search "add_tax")
      (message "RESULTS\n%s" (with-current-buffer "*codeseek*" (buffer-string)))
      (with-current-buffer "*codeseek*"
        (goto-char (point-min)) (compilation-next-error 1) (compile-goto-error)
        ;; compile-goto-error leaves the visited file's buffer current
        (message "JUMPED %s:%d" (file-relative-name (buffer-file-name) (project-root (project-current)))
                 (line-number-at-pos)))
      (kill-emacs 0))
  (error (codeseek-test--fail "ERROR %S" err)))
"""


@pytest.mark.slow
def test_eglot_snippet_searches_and_jumps(tmp_path: Path) -> None:
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.skip("Emacs is not installed")
    has_eglot = subprocess.run(
        [emacs, "--batch", "--eval", "(progn (package-initialize) (require 'eglot))"],
        capture_output=True, text=True, timeout=60,
    )
    if has_eglot.returncode != 0:
        pytest.skip("eglot is not available in this Emacs")
    snippet = _block("elisp", "eglot-server-programs")
    assert PLACEHOLDER in snippet and ":embeddings t" in snippet
    snippet = snippet.replace(PLACEHOLDER, str(SERVER)).replace(":embeddings t", ":embeddings :json-false")
    workspace = _workspace(tmp_path)
    script = tmp_path / "check.el"
    script.write_text("(package-initialize)\n(require 'eglot)\n(require 'grep)\n" + snippet + EMACS_DRIVER)
    proc = subprocess.run(
        [emacs, "--batch", "-l", str(script)],  # --batch skips user init, keeps site-start
        cwd=workspace, env=_env(tmp_path), capture_output=True, text=True, timeout=180,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert re.search(r"^STATE (ready|text-only)$", output, re.MULTILINE), output
    assert re.search(r"^shop/pricing\.py:16: add_tax$", output, re.MULTILINE), output
    assert "JUMPED shop/pricing.py:16" in output, output
