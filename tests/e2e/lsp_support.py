"""Helpers for the language-server end-to-end tests: a real server subprocess, a copied sample
workspace, initialization with the capabilities editors send, and waiting for index states."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.uris import from_fs_path
from pytest_lsp import LanguageClient
from pytest_lsp.client import register_lsp_features

from lsp_server.lsp.transport import converter

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tests" / "workspace" / "sample"
SERVER_CMD = [sys.executable, "-m", "lsp_server.lsp.server"]


def copy_sample(dest: Path) -> Path:
    """A private copy of the sample workspace (tests edit it)."""
    root = dest / "sample"
    shutil.copytree(SAMPLE, root)
    return root


def uri(root: Path, rel: str) -> str:
    return from_fs_path(str(root / rel)) or ""


def line_of(root: Path, rel: str, text: str) -> int:
    """0-based number of the one line of `rel` containing `text` (fails if not exactly one)."""
    lines = (root / rel).read_text().splitlines()
    hits = [i for i, line in enumerate(lines) if text in line]
    assert len(hits) == 1, f"{text!r} occurs on lines {hits} of {rel}"
    return hits[0]


def position_of(root: Path, rel: str, text: str, word: str | None = None) -> lsp.Position:
    """Position of `word` (default: `text`) inside the one line of `rel` that contains `text`."""
    line = line_of(root, rel, text)
    content = (root / rel).read_text().splitlines()[line]
    column = content.index(text) + (text.index(word) if word else 0)
    return lsp.Position(line=line, character=column)


def word_range(root: Path, rel: str, text: str, word: str) -> tuple[int, int, int]:
    """(line, start, end) of `word` within the line containing `text`, 0-based, for exact asserts."""
    pos = position_of(root, rel, text, word)
    return pos.line, pos.character, pos.character + len(word)


def server_env(index_dir: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"CODESEEK_INDEX_DIR": str(index_dir), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "TOKENIZERS_PARALLELISM": "false", "PYTHONPATH": str(REPO), "CODESEEK_LOG": "WARNING"})
    env.update(extra)
    return env


def capabilities() -> lsp.ClientCapabilities:
    """What a modern editor announces: progress, configuration, dynamic watchers, folders, markdown."""
    return lsp.ClientCapabilities(
        window=lsp.WindowClientCapabilities(work_done_progress=True),
        workspace=lsp.WorkspaceClientCapabilities(
            configuration=True, workspace_folders=True,
            did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)),
        text_document=lsp.TextDocumentClientCapabilities(
            hover=lsp.HoverClientCapabilities(content_format=[lsp.MarkupKind.Markdown]),
            call_hierarchy=lsp.CallHierarchyClientCapabilities()),
    )


async def start(root: Path | list[Path], index_dir: Path, options: dict[str, Any] | None = None,
                config: dict[str, Any] | None = None, caps: lsp.ClientCapabilities | None = None,
                **env: str) -> LanguageClient:
    """Start the server, initialize it on `root` (or several roots) and return the client."""
    client = LanguageClient(converter_factory=converter)  # custom results stay plain JSON
    register_lsp_features(client)
    if config is not None:
        client.set_configuration(config, section="codeseek")
    registrations: list[lsp.Registration] = []

    @client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
    def register(params: lsp.RegistrationParams) -> None:
        registrations.extend(params.registrations)

    client.registrations = registrations  # type: ignore[attr-defined]
    await client.start_io(*SERVER_CMD, env=server_env(index_dir, **env), cwd=str(REPO))
    roots = root if isinstance(root, list) else [root]
    client.init_result = await client.initialize_session(lsp.InitializeParams(  # type: ignore[attr-defined]
        capabilities=caps or capabilities(),
        root_uri=from_fs_path(str(roots[0])),
        workspace_folders=[lsp.WorkspaceFolder(uri=from_fs_path(str(r)) or "", name=r.name) for r in roots],
        initialization_options=options if options is not None else {"embeddings": False},
    ))
    return client


async def stop(client: LanguageClient) -> None:
    """Shut the server down the way an editor does (shutdown, exit) and wait for the process."""
    await client.shutdown_session()
    await client.stop()


@contextlib.asynccontextmanager
async def served_sample(tmp: Path, states: tuple[str, ...] = ("text-only",), timeout: float = 60.0,
                        options: dict[str, Any] | None = None) -> AsyncIterator[tuple[LanguageClient, Path]]:
    """A server on a fresh copy of the sample workspace under `tmp` (index in `tmp/index`), once every
    root reached one of `states`; yields (client, workspace root) and stops the server afterwards."""
    root = copy_sample(tmp)
    client = await start(root, tmp / "index", options=options)
    try:
        await wait_state(client, states, timeout=timeout)
        yield client, root
    finally:
        await stop(client)


async def status(client: LanguageClient) -> dict[str, Any]:
    result = await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command="codeseek.status", arguments=[]))
    assert isinstance(result, dict)
    return result


async def wait_state(client: LanguageClient, states: tuple[str, ...] = ("ready",), timeout: float = 60.0,
                     roots: int = 1, idle: bool = True, after_jobs: int | None = None) -> dict[str, Any]:
    """Poll codeseek.status until every root is in one of `states` (and idle, unless `idle=False`);
    with `after_jobs`, also until the first root has run more jobs than that (the one a change asked
    for, not the state before the server saw the change)."""
    deadline = time.monotonic() + timeout
    last: dict[str, Any] = {}
    while time.monotonic() < deadline:
        last = await status(client)
        got = last.get("roots", [])
        newer = after_jobs is None or (bool(got) and got[0].get("jobs", 0) > after_jobs)
        if newer and len(got) >= roots and all(r["state"] in states and (r["idle"] or not idle) for r in got):
            return last
        await asyncio.sleep(0.1)
    raise AssertionError(f"index never reached {states}: {last}")


async def search(client: LanguageClient, params: dict[str, Any]) -> Any:
    return await client.protocol.send_request_async("workspace/semanticSearch", params)


async def overlays_and_symbols(client: LanguageClient, query: str) -> tuple[int, list[str]]:
    """Once the index is text-only (settled): the editor buffers it holds and the symbols `query` finds."""
    held = (await wait_state(client, ("text-only",)))["roots"][0]["overlays"]
    answer = await search(client, {"query": query})
    return held, [r["symbol"] for r in answer["results"]]


def open_doc(client: LanguageClient, root: Path, rel: str, language: str = "python",
             text: str | None = None) -> str:
    """didOpen of `rel` with `text` (default: the file's own), which it returns."""
    text = (root / rel).read_text() if text is None else text
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=uri(root, rel), language_id=language, version=1, text=text)))
    return text


def replace_all(client: LanguageClient, root: Path, rel: str, text: str, version: int = 2) -> None:
    """didChange replacing the whole buffer (an unsaved edit)."""
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri(root, rel), version=version),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)]))


def doc_id(root: Path, rel: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=uri(root, rel))


async def references(client: LanguageClient, root: Path, rel: str, text: str, word: str,
                     declaration: bool) -> Sequence[lsp.Location] | None:
    """textDocument/references with the cursor on `word` in the line containing `text`."""
    return await client.text_document_references_async(lsp.ReferenceParams(
        text_document=doc_id(root, rel), position=position_of(root, rel, text, word),
        context=lsp.ReferenceContext(include_declaration=declaration)))


async def prepare(client: LanguageClient, root: Path, rel: str, text: str,
                  word: str) -> Sequence[lsp.CallHierarchyItem] | None:
    return await client.text_document_prepare_call_hierarchy_async(lsp.CallHierarchyPrepareParams(
        text_document=doc_id(root, rel), position=position_of(root, rel, text, word)))


async def hover(client: LanguageClient, root: Path, rel: str, text: str, word: str) -> lsp.Hover | None:
    return await client.text_document_hover_async(lsp.HoverParams(
        text_document=doc_id(root, rel), position=position_of(root, rel, text, word)))


def spans(ranges: Sequence[lsp.Range]) -> list[tuple[int, int, int]]:
    """(line, start, end) of single-line ranges."""
    return [(r.start.line, r.start.character, r.end.character) for r in ranges]


def location(loc: lsp.Location | lsp.LocationUriOnly, root: Path) -> tuple[str, int, int, int]:
    """(workspace-relative path, line, start, end) of a single-line location."""
    assert isinstance(loc, lsp.Location)
    rel = loc.uri.split(root.name + "/", 1)[1]
    return rel, loc.range.start.line, loc.range.start.character, loc.range.end.character


def at(root: Path, rel: str, text: str, word: str) -> tuple[str, int, int, int]:
    """The expected location of `word` within the line of `rel` containing `text`."""
    return (rel, *word_range(root, rel, text, word))


def lsp_range(start_line: int, start_char: int, end_line: int, end_char: int) -> lsp.Range:
    return lsp.Range(start=lsp.Position(line=start_line, character=start_char),
                     end=lsp.Position(line=end_line, character=end_char))


async def raw_request(client: LanguageClient, method: str, params: Any) -> Any:
    """Send a request with params exactly as given (no client-side typing), await the answer."""
    msg_id = f"raw-{uuid.uuid4()}"
    future: Future[Any] = Future()
    client.protocol._request_futures[msg_id] = future
    client.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    return await asyncio.wrap_future(future)
