"""Answers a user can trust (issue 30), through the real front ends over a copy of
tests/workspace/engine_sample plus one long method:

- a lookup that finds nothing (an exact string, `def X`, `who calls X`) says so first, marks what
  follows as related results and exits 1 (rg's convention), in the CLI text, `--json`, `--jsonl`,
  `--vimgrep`, the language server's `workspace/semanticSearch` and the MCP search tool;
- a long definition is located at its name line and column, not in the window shown;
- a cut list says how many results there were ("1 of 3", `total`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import lsp_support
from tests.e2e.mcp_support import CODESEEK, call, environment, mcp_session, text_of, wait_indexed

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tests" / "workspace" / "engine_sample"
# A method whose body is longer than a screenful: its name is on line 4, column 8 (0-based bytes).
LONG = ("class Pipeline:\n"
        '    """Stages run in order."""\n'
        "\n"
        "    def run_pipeline(self, batch):\n"
        '        """Run every stage of the pipeline."""\n'
        + "".join(f"        step_{i} = prepare(batch, {i})\n" for i in range(150))
        + "        checksum = verify_manifest_signature(batch)\n"
        + "".join(f"        tail_{i} = finish(batch)\n" for i in range(8))
        + "        return checksum\n")
NAME_LINE, NAME_COLUMN = 4, 8


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("trust")
    root = tmp / "ws"
    shutil.copytree(SAMPLE, root)
    (root / "shop" / "pipeline.py").write_text(LONG)
    return root, tmp / "index"


def codeseek(ws: tuple[Path, Path], *args: str) -> subprocess.CompletedProcess[str]:
    root, index = ws
    # Run from the workspace (--vimgrep paths are relative to it), this checkout's code first.
    env = dict(os.environ, HF_HUB_OFFLINE="1", COLUMNS="200", PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "lsp_server.cli", "search", *args, "--no-embed", "--root", str(root),
         "--index-dir", str(index)],
        capture_output=True, text=True, env=env, timeout=300, cwd=str(root))


def as_json(ws: tuple[Path, Path], query: str, *args: str, status: int = 0) -> dict[str, Any]:
    proc = codeseek(ws, query, "--json", *args)
    assert proc.returncode == status, proc.stdout[-500:] + proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


NO_MATCH = [
    ('"card declined twice"', 'no exact match for "card declined twice"'),
    ("def frobnicate_widget", 'no definition named "frobnicate_widget"'),
    ("who calls frobnicate_widget", 'no callers or usages of "frobnicate_widget"'),
]


@pytest.mark.parametrize("query, said", NO_MATCH)
def test_a_lookup_that_finds_nothing_says_so_first_and_exits_1(workspace: tuple[Path, Path], query: str,
                                                               said: str) -> None:
    doc = as_json(workspace, query, status=1)
    assert (doc["match"], doc["no_match"]) == ("none", said)
    human = codeseek(workspace, query)
    assert human.returncode == 1, human.stderr
    first = human.stdout.splitlines()[0]
    if doc["results"]:  # the related results are still shown, under the line that says what they are
        assert first == f"{said}; related results:"
        assert "related results in" in human.stdout.splitlines()[1]
        assert f"{doc['results'][0]['path']}:" in human.stdout
    else:
        assert first == said
    for fmt in ("--vimgrep", "--jsonl"):
        proc = codeseek(workspace, query, fmt)
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr.splitlines()[0].startswith(f"codeseek: {said}")
        assert len(proc.stdout.splitlines()) == len(doc["results"])  # stdout stays machine-readable


def test_an_exact_string_with_related_results_lists_them(workspace: tuple[Path, Path]) -> None:
    doc = as_json(workspace, '"card declined twice"', status=1)
    assert doc["results"] and doc["results"][0]["path"] == "shop/payments.py"  # related: the words occur


@pytest.mark.parametrize("query", ['"card declined"', "def apply_discount", "who calls charge_card",
                                   "apply_discount"])
def test_a_lookup_that_finds_its_subject_says_found_and_exits_0(workspace: tuple[Path, Path],
                                                                query: str) -> None:
    doc = as_json(workspace, query)
    assert (doc["match"], doc["no_match"]) == ("found", None)
    human = codeseek(workspace, query)
    assert human.returncode == 0 and "related" not in human.stdout.splitlines()[0]


def test_a_question_is_ranked_not_matched(workspace: tuple[Path, Path]) -> None:
    doc = as_json(workspace, "how is the money given back to the customer")
    assert (doc["match"], doc["no_match"]) == ("ranked", None)


def test_a_long_definition_is_located_at_its_name(workspace: tuple[Path, Path]) -> None:
    for query in ("where is the manifest signature verified", "Pipeline.run_pipeline",
                  "def run_pipeline"):
        doc = as_json(workspace, query)
        top = doc["results"][0]
        assert (top["path"], top["symbol"]) == ("shop/pipeline.py", "Pipeline.run_pipeline"), query
        assert (top["line"], top["column"]) == (NAME_LINE, NAME_COLUMN), query
    assert top["end_line"] - top["start_line"] < 60 < top["lines_total"]  # still a window of it
    question = as_json(workspace, "where is the manifest signature verified")["results"][0]
    assert question["start_line"] > 100  # the window shown is deep in the body; the location is not
    proc = codeseek(workspace, "where is the manifest signature verified", "--vimgrep",
                    "--limit", "1")
    assert proc.stdout.splitlines() == [f"shop/pipeline.py:{NAME_LINE}:{NAME_COLUMN + 1}:"
                                        "    def run_pipeline(self, batch):"]
    human = codeseek(workspace, "where is the manifest signature verified", "--limit", "1")
    assert f" 1. shop/pipeline.py:{NAME_LINE} ({question['start_line']}-" in human.stdout


def test_exact_strings_and_call_sites_are_located_at_their_line(workspace: tuple[Path, Path]) -> None:
    exact = as_json(workspace, '"verify_manifest_signature"')["results"][0]
    assert (exact["path"], exact["line"]) == ("shop/pipeline.py", 156)
    calls = as_json(workspace, "who calls charge_card")["results"][0]
    assert (calls["path"], calls["line"]) == ("shop/checkout.py", 16)


def test_a_cut_list_says_how_many_there_were(workspace: tuple[Path, Path]) -> None:
    everything = as_json(workspace, '"amount"', "--limit", "200")
    n = len(everything["results"])
    assert n >= 3 and everything["total"] == n
    cut = as_json(workspace, '"amount"', "--limit", "1")
    assert (len(cut["results"]), cut["total"]) == (1, n)
    human = codeseek(workspace, '"amount"', "--limit", "1")
    assert f"route direct: text  1 of {n} results in " in human.stdout.splitlines()[0]
    whole = codeseek(workspace, '"amount"', "--limit", "200")
    assert f"route direct: text  {n} results in " in whole.stdout.splitlines()[0]
    question = as_json(workspace, "apply a discount to the cart total", "--limit", "2")
    assert question["total"] >= len(as_json(workspace, "apply a discount to the cart total", "--limit",
                                            "200")["results"]) > 2


@pytest.mark.asyncio
async def test_the_language_server_says_no_match_total_and_the_name_position(
        workspace: tuple[Path, Path], tmp_path: Path) -> None:
    root, _ = workspace
    client = await lsp_support.start(root, tmp_path / "lsp-index")
    try:
        await lsp_support.wait_state(client, ("text-only",))
        nothing = await lsp_support.search(client, {"query": "def frobnicate_widget"})
        assert (nothing["match"], nothing["no_match"]) == ("none", 'no definition named "frobnicate_widget"')
        found = await lsp_support.search(client, {"query": "where is the manifest signature verified",
                                                  "limit": 1})
        assert found["match"] == "ranked" and found["total"] >= 1
        top = found["results"][0]
        point = {"line": NAME_LINE - 1, "character": NAME_COLUMN}
        assert top["selectionRange"] == {"start": point, "end": point}
        cut = await lsp_support.search(client, {"query": '"amount"', "limit": 1})
        assert cut["match"] == "found" and len(cut["results"]) == 1 and cut["total"] >= 3
    finally:
        await lsp_support.stop(client)


@pytest.mark.asyncio
async def test_the_mcp_search_tool_says_no_match_first(workspace: tuple[Path, Path], tmp_path: Path) -> None:
    root, _ = workspace
    async with mcp_session(str(CODESEEK), ["mcp", "--root", str(root), "--no-embed"], environment(tmp_path),
                           tmp_path) as session:
        await wait_indexed(session)
        result = await session.call_tool("search", {"query": "who calls frobnicate_widget"})
        text = text_of(result)
        assert text.startswith('{"query":"who calls frobnicate_widget","match":"none",'
                               '"no_match":"no callers or usages of \\"frobnicate_widget\\"","total":')
        found = await call(session, "search", query='"amount"', limit=1)
        assert (found["match"], len(found["results"])) == ("found", 1) and found["total"] >= 3
        top = (await call(session, "search", query="Pipeline.run_pipeline", limit=1))["results"][0]
        assert (top["line"], top["column"]) == (NAME_LINE, NAME_COLUMN)
        callers = await call(session, "callers", symbol="frobnicate_widget")
        assert (callers["matches"], callers["no_match"]) == ([], 'no definition named "frobnicate_widget"')
