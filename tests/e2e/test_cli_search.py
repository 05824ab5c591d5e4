"""`codeseek search` end to end: a subprocess over a copy of tests/workspace/engine_sample.

`--no-embed` keeps these fast (no model load); the slow test runs the semantic retriever once.
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

SAMPLE = Path(__file__).resolve().parents[1] / "workspace" / "engine_sample"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("cli")
    root = tmp / "ws"
    shutil.copytree(SAMPLE, root)
    return root, tmp / "index"


def codeseek(ws: tuple[Path, Path], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    root, index = ws
    env = dict(os.environ, HF_HUB_OFFLINE="1", COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "lsp_server.cli", "search", *args, "--root", str(root),
         "--index-dir", str(index)],
        capture_output=True, text=True, env=env, input=stdin, timeout=300)


def search_json(ws: tuple[Path, Path], query: str, *args: str) -> dict[str, Any]:
    proc = codeseek(ws, query, "--json", "--no-embed", *args)
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def test_json_definition(workspace: tuple[Path, Path]) -> None:
    result = search_json(workspace, "apply_discount")
    top = result["results"][0]
    assert (top["path"], top["start_line"], top["end_line"], top["symbol"]) == \
        ("shop/pricing.py", 11, 15, "apply_discount")
    assert result["index"]["state"] == "text-only"
    assert set(result) == {"query", "match", "no_match", "total", "preset", "intent", "strategy",
                           "modalities", "results", "index", "timings_ms"}
    assert (result["match"], result["no_match"], result["total"]) == ("found", None, len(result["results"]))


def test_json_exact_string_and_references(workspace: tuple[Path, Path]) -> None:
    exact = search_json(workspace, '"card declined"')
    assert [(r["path"], r["start_line"], r["end_line"]) for r in exact["results"]] == \
        [("shop/payments.py", 11, 11)]
    refs = search_json(workspace, "who calls charge_card")
    assert [(r["path"], r["start_line"], r["symbol"]) for r in refs["results"]] == \
        [("shop/checkout.py", 16, "checkout")]
    impact = search_json(workspace, "impact of tax_for_region")
    assert {(r["symbol"], r["depth"]) for r in impact["results"]} == {("order_total", 1), ("checkout", 2)}


def test_json_scope_limit_and_intent(workspace: tuple[Path, Path]) -> None:
    proc = codeseek(workspace, "total", "--include", "web/*.js", "--limit", "1",
                    "--intent", "find_definition", "--json", "--no-embed")
    result = json.loads(proc.stdout)
    # No definition is named `total` (computeTotal's name only contains it): related results, exit 1.
    assert (proc.returncode, result["match"]) == (1, "none"), proc.stderr
    assert result["intent"]["source"] == "request"
    assert [r["path"] for r in result["results"]] == ["web/util.js"]


def test_human_output(workspace: tuple[Path, Path]) -> None:
    proc = codeseek(workspace, "def apply_discount", "--no-embed")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("find_definition (0.95, classifier)  route direct: structural")
    assert "shop/pricing.py:11 (11-15)  apply_discount  function" in proc.stdout
    assert "def apply_discount(amount, percent):" in proc.stdout
    assert "semantic search off (--no-embed)" in proc.stdout  # says why, claims no embedding count


def test_no_results_exit_status_1(workspace: tuple[Path, Path]) -> None:
    proc = codeseek(workspace, '"this string appears nowhere at all"', "--no-embed", "--json",
                    "--include", "docs/*.md", "--intent", "exact_match")
    assert proc.returncode in (0, 1)
    result = json.loads(proc.stdout)
    assert proc.returncode == (0 if result["results"] else 1)


@pytest.mark.parametrize("args, message", [
    (["", "--no-embed"], "query is empty"),
    (["x", "--no-embed", "--intent", "guess"], "unknown intent"),
    (["x", "--no-embed", "--limit", "0"], "limit must be between 1 and 200"),
    (["x", "--no-embed", "--include", "../*.py"], "escapes the workspace root"),
    (["x", "--no-embed", "--exclude", "/abs/*"], "absolute"),
    (["--no-embed"], "a query is required"),
])
def test_bad_input_is_a_clear_error(workspace: tuple[Path, Path], args: list[str], message: str) -> None:
    proc = codeseek(workspace, *args)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_unknown_preset_is_refused(workspace: tuple[Path, Path]) -> None:
    proc = codeseek(workspace, "x", "--no-embed", "--preset", "fastest")
    assert proc.returncode == 2 and "invalid choice" in proc.stderr


def test_batch(workspace: tuple[Path, Path], tmp_path: Path) -> None:
    batch = tmp_path / "queries.jsonl"
    batch.write_text("\n".join([
        json.dumps({"id": "a", "query": "def round_money"}),
        json.dumps({"id": 7, "query": "who calls refund"}),
        json.dumps({"id": "bad", "query": "   "}),
        "{not json",
        json.dumps({"id": "lim", "query": "cart", "limit": 2}),
    ]) + "\n")
    proc = codeseek(workspace, "--batch", str(batch), "--no-embed")
    assert proc.returncode == 2  # some lines failed; the others were answered
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o["id"] for o in out] == ["a", 7, "bad", 4, "lim"]
    assert out[0]["results"][0]["path"] == "shop/pricing.py" and out[0]["results"][0]["start_line"] == 6
    assert out[1]["results"] == [] or out[1]["strategy"] == "fused"  # nothing calls refund
    assert out[2]["error"] == "query is empty"
    assert "invalid JSON" in out[3]["error"]
    assert len(out[4]["results"]) == 2


def test_batch_from_stdin(workspace: tuple[Path, Path]) -> None:
    line_in = json.dumps({"id": 1, "query": "formatPrice"})
    proc = codeseek(workspace, "--batch", "-", "--no-embed", stdin=line_in)
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    answer = json.loads(line)
    assert answer["id"] == 1 and answer["results"][0]["path"] == "web/util.js"


@pytest.mark.slow
def test_semantic_search_embeds_then_reuses_the_cache(workspace: tuple[Path, Path], tmp_path: Path) -> None:
    root, _ = workspace
    ws = (root, tmp_path / "semantic-index")
    first = codeseek(ws, "give the money back to the customer", "--json")
    assert first.returncode == 0, first.stderr
    result = json.loads(first.stdout)
    assert result["index"]["state"] == "ready" and result["index"]["embedded"] == result["index"]["chunks"]
    assert "semantic" in result["modalities"]
    top3 = [r["path"] for r in result["results"][:3]]
    assert "shop/payments.py" in top3
    again = codeseek(ws, "give the money back to the customer", "--json")
    assert again.returncode == 0 and "embedding" not in again.stderr  # nothing left to embed
    assert [r["path"] for r in json.loads(again.stdout)["results"][:3]] == top3


@pytest.mark.slow
def test_nonsense_query_answers_with_few_or_none_and_says_why(workspace: tuple[Path, Path],
                                                          tmp_path: Path) -> None:
    root, _ = workspace
    ws = (root, tmp_path / "floor-index")
    sensible = codeseek(ws, "give the money back to the customer", "--json")
    assert sensible.returncode == 0 and json.loads(sensible.stdout)["results"]  # the floor keeps real answers
    data = json.loads(codeseek(ws, "xyzzy plugh frobnicate", "--json").stdout)
    # Few or none: a one-line docstring chunk may pass (cosine 0.26 with all-MiniLM-L6-v2); the answer
    # says what was left out.
    assert len(data["results"]) <= 1, [r["path"] for r in data["results"]]
    assert any("relevance floor" in n for n in data["index"]["notes"])
    proc = codeseek(ws, "xyzzy plugh frobnicate")
    assert proc.returncode == (0 if data["results"] else 1), proc.stdout + proc.stderr
    assert "relevance floor" in proc.stdout


def test_a_reader_that_left_early_still_gets_the_index_saved(tmp_path: Path) -> None:
    # `codeseek search ... | head`: the reader is gone before the answer is written. The command says
    # nothing on stderr, exits 0 (as rg does), and still writes what it saves beside the index after
    # answering (write-behind), so the next search starts warm.
    root = tmp_path / "ws"
    shutil.copytree(SAMPLE, root)
    index = tmp_path / "index"
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has left
    env = dict(os.environ, HF_HUB_OFFLINE="1", XDG_CACHE_HOME=str(tmp_path / "cache"))
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "lsp_server.cli", "search", "apply_discount", "--no-embed", "--root",
             str(root), "--index-dir", str(index)],
            stdout=write_end, stderr=subprocess.PIPE, text=True, env=env, timeout=300)
    finally:
        os.close(write_end)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    saved = {p.name for p in index.glob("*/derived/*.pickle")}
    assert "structural.pickle" in saved
    assert list(index.glob("*/derived/flatgraph-*/ids.npy"))  # the call graph's flat form
    assert list(index.glob("*/derived/callers-*/in_ptr.npy"))  # and its caller arrays
