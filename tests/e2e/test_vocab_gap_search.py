"""A question that shares no word with its answer, through a cold `codeseek search` with the default
(shipped) static model: the packaged MiniLM reads the question, the static vectors find its candidates
and the transformer, embedding them there and then (the question pool), ranks them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WORKSPACE = REPO / "tests" / "workspace" / "vocab_gap"
QUESTION = "lock users out after too many wrong passwords"


def _words(text: str) -> set[str]:
    pieces = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", text)
    return {p.lower() for p in pieces}


def test_the_question_shares_no_word_with_its_answer() -> None:
    answer = (WORKSPACE / "accounts" / "throttle.py").read_text()
    assert not _words(QUESTION) & _words(answer)


def test_a_question_without_shared_words_is_answered_at_rank_one(tmp_path: Path) -> None:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    proc = subprocess.run(
        [sys.executable, "-m", "lsp_server.cli", "search", QUESTION, "--json", "--root", str(WORKSPACE),
         "--index-dir", str(tmp_path / "index")], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["index"]["model"].startswith("static:all-MiniLM-L6-v2-shipped-")
    top = data["results"][0]
    assert top["path"] == "accounts/throttle.py"
    semantic = top["explain"]["semantic"]["detail"]
    assert semantic["tier"] == "transformer"
    assert data["index"]["transformer"]["embedded"] == data["index"]["chunks"] == 4  # the pool: all four


def test_the_question_pool_can_be_turned_off_and_is_bounded(tmp_path: Path) -> None:
    """`--question-pool 0`: the static tier answers alone and the transformer embeds nothing; an
    out-of-range pool is refused before anything runs."""
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    base = [sys.executable, "-m", "lsp_server.cli", "search", QUESTION, "--json", "--root", str(WORKSPACE),
            "--index-dir", str(tmp_path / "index"), "--no-server"]
    proc = subprocess.run([*base, "--question-pool", "0"], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["index"]["transformer"]["embedded"] == 0
    assert data["results"][0]["explain"]["semantic"]["detail"]["tier"] == "static"
    refused = subprocess.run([*base, "--question-pool", "500"], capture_output=True, text=True, env=env,
                             timeout=300)
    assert refused.returncode == 2 and "must be 0 (off) to 200" in refused.stderr


def test_the_cli_pool_defaults_are_the_engine_and_server_ones() -> None:
    from lsp_server.cli.main import MAX_QUESTION_POOL, build_parser
    from lsp_server.lsp.options import MAX_QUESTION_POOL as SERVER_MAX
    from lsp_server.lsp.options import ServerOptions
    from retrievers.semantic.tiered import TierBlend

    args = build_parser().parse_args(["search", "where"])
    assert args.question_pool == TierBlend().question_pool == ServerOptions().question_pool
    assert MAX_QUESTION_POOL == SERVER_MAX
