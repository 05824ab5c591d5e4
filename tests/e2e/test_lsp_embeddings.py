"""End-to-end with the packaged embedding model: phase 2 progress, semantic search, the "similar code"
part of hover, and an edit re-embedding only the chunk it touched. One server (one model load)."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from tests.e2e import lsp_support as S

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

DIGEST = "feedreader/digest.py"
PARSER = "feedreader/parser.py"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[LanguageClient, Path]]:
    tmp = tmp_path_factory.mktemp("lsp-embeddings")
    async with S.served_sample(tmp, ("ready",), timeout=300, options={}) as served:
        yield served


async def test_embedding_progress_and_ready_state(served: tuple[LanguageClient, Path]) -> None:
    client, _ = served
    status = (await S.status(client))["roots"][0]
    assert status["state"] == "ready" and status["model"].startswith("static:") and status["model_loaded"]
    assert status["embedded"] == status["chunks"] > 0
    # Phase 3 filled in the transformer tier behind the static one, with its own progress.
    assert status["transformer"] == {"model": "all-MiniLM-L6-v2", "embedded": status["chunks"], "pending": 0}
    (tiers,) = [v for v in client.progress_reports.values()
                if v and getattr(v[0], "title", "") == "codeseek: transformer vectors sample"]
    assert isinstance(tiers[-1], lsp.WorkDoneProgressEnd)
    assert tiers[-1].message == f"{status['chunks']} chunks have transformer vectors"
    (values,) = [v for v in client.progress_reports.values()
                 if v and getattr(v[0], "title", "") == "codeseek: embedding sample"]
    begin, *reports, end = values
    assert isinstance(begin, lsp.WorkDoneProgressBegin) and begin.message == f"{status['chunks']} chunks"
    assert reports[-1].message == f"embedding {status['chunks']}/{status['chunks']} chunks"
    assert [r.percentage for r in reports] == sorted(r.percentage for r in reports)
    assert isinstance(end, lsp.WorkDoneProgressEnd) and end.message == f"{status['chunks']} chunks embedded"


async def test_natural_language_search(served: tuple[LanguageClient, Path]) -> None:
    client, root = served
    answer = await S.search(client, {"query": "turn a feed date string into a UTC datetime", "limit": 3})
    assert answer["index"]["state"] == "ready" and "semantic" in answer["modalities"]
    top = answer["results"][0]
    assert (top["path"], top["symbol"], top["start_line"]) == (PARSER, "parse_date",
                                                               S.line_of(root, PARSER, "def parse_date(") + 1)
    assert "semantic" in top["explain"]


async def test_hover_lists_similar_code_elsewhere(served: tuple[LanguageClient, Path]) -> None:
    client, root = served
    hover = await S.hover(client, root, PARSER, "def parse_entry(", "parse_entry")
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    similar = hover.contents.value.split("**Similar code**")[1].strip().splitlines()
    assert len(similar) == 3
    start = S.line_of(root, PARSER, "def parse_entry(") + 1
    end = S.line_of(root, PARSER, "def parse_feed(") - 2
    for line in similar:
        assert line.startswith("- `") and f"]({S.uri(root, '')}/" in line and "#L" in line
        target = line.split("](")[1].split(")")[0]
        path, number = target.split(root.name + "/", 1)[1].split("#L")
        assert not (path == PARSER and start <= int(number) <= end)  # never the hovered code itself


async def test_editing_one_function_re_embeds_one_chunk(served: tuple[LanguageClient, Path]) -> None:
    client, root = served
    text = S.open_doc(client, root, DIGEST)
    old = '    sentence = entry.summary.split(". ")[0]'
    assert old in text
    new = '    sentence = entry.summary.split(". ", 1)[0].strip()'
    jobs = (await S.wait_state(client, ("ready",), timeout=120))["roots"][0]["jobs"]
    S.replace_all(client, root, DIGEST, text.replace(old, new))
    status = await S.wait_state(client, ("ready",), timeout=120, after_jobs=jobs)
    job = status["roots"][0]["last_job"]
    assert (job["paths"], job["parsed"], job["embedded"], job["transformer_embedded"]) == (1, 1, 1, 1)
    # Closing the buffer goes back to the file on disk, whose vector is still cached: nothing to embed.
    jobs = status["roots"][0]["jobs"]
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=S.doc_id(root, DIGEST)))
    status = await S.wait_state(client, ("ready",), timeout=120, after_jobs=jobs)
    job = status["roots"][0]["last_job"]
    assert (job["paths"], job["parsed"], job.get("embedded", 0)) == (1, 1, 0)


async def test_restart_with_vectors_answers_before_the_model_loads(
        served: tuple[LanguageClient, Path], tmp_path: Path) -> None:
    client, root = served
    status = (await S.status(client))["roots"][0]
    index = tmp_path / "copy"
    # The served index is idle: a consistent copy, in the root's folder under another base.
    shutil.copytree(status["index_dir"], index / Path(status["index_dir"]).name,  # not the server's socket
                    ignore=shutil.ignore_patterns("sock"))
    second = await S.start(root, index, options={})
    try:
        phase1 = await S.wait_state(second, ("ready", "embedding", "text-only"), timeout=60, idle=False)
        answer = await S.search(second, {"query": "turn a feed date string into a UTC datetime"})
        loading = [n for n in answer["index"].get("notes", []) if "still loading" in n]
        assert answer["results"] and answer["index"]["embedded"] == status["embedded"]
        # Either the model had loaded (semantic ranked) or the answer says it was left out (other notes,
        # such as the relevance floor's, may come with a semantic answer).
        assert ("semantic" in answer["modalities"]) != bool(loading)
        ready = await S.wait_state(second, ("ready",), timeout=120)
        job = ready["roots"][0]["last_job"]
        assert (job["parsed"], job.get("embedded", 0)) == (0, 0) and ready["roots"][0]["model_loaded"]
        again = await S.search(second, {"query": "turn a feed date string into a UTC datetime"})
        assert "semantic" in again["modalities"]
        assert not any("still loading" in n for n in again["index"].get("notes", []))
        assert phase1["roots"][0]["chunks"] == status["chunks"]
    finally:
        await S.stop(second)
