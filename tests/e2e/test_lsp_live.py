"""End-to-end: the index follows the editor and the disk. Progress, unsaved edits, watched files,
workspace folders, options, and a restart on the persisted index. One server per test."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from lsprotocol import types as lsp

from indexing.location import index_dir_for
from tests.e2e import lsp_support as S

DIGEST = "feedreader/digest.py"
NEW_FUNCTION = '''

def reading_time_minutes(entry: Entry, words_per_minute: int = 230) -> int:
    """Minutes needed to read an entry's summary."""
    return max(1, round(len(entry.summary.split()) / words_per_minute))
'''


def _symbols(answer: dict[str, object]) -> list[tuple[str, int, str | None]]:
    results = answer["results"]
    assert isinstance(results, list)
    return [(r["path"], r["start_line"], r["symbol"]) for r in results]


async def test_progress_notifications_during_indexing(tmp_path: Path) -> None:
    root = S.copy_sample(tmp_path)
    client = await S.start(root, tmp_path / "index")
    try:
        status = await S.wait_state(client, ("text-only",))
        chunks = status["roots"][0]["chunks"]
        await asyncio.sleep(0.2)  # the end notification follows the state change
        (token, values), = [(t, v) for t, v in client.progress_reports.items()
                            if v and getattr(v[0], "title", "") == "codeseek: indexing sample"]
        begin, *reports, end = values
        assert isinstance(begin, lsp.WorkDoneProgressBegin) and begin.message == "scanning"
        assert isinstance(end, lsp.WorkDoneProgressEnd) and end.message == f"{chunks} chunks indexed"
        assert reports and all(isinstance(r, lsp.WorkDoneProgressReport) for r in reports)
        percentages = [r.percentage for r in reports]
        assert percentages == sorted(percentages) and percentages[-1] == 100
        assert "indexing 9/9 files" in [r.message for r in reports]
        assert reports[-1].message == "call graph"  # the phase after parsing, labelled too
        assert all(r.message and r.message.startswith("indexing ") and r.message.endswith(" files")
                   for r in reports[:-1])
        assert isinstance(token, str)
    finally:
        await S.stop(client)


async def test_unsaved_edit_changes_the_next_search(tmp_path: Path) -> None:
    async with S.served_sample(tmp_path) as (client, root):
        before = await S.search(client, {"query": "reading_time_minutes"})
        assert all(symbol != "reading_time_minutes" for _, _, symbol in _symbols(before))
        text = S.open_doc(client, root, DIGEST)
        edited = text + NEW_FUNCTION
        S.replace_all(client, root, DIGEST, edited)
        await S.wait_state(client, ("text-only",))
        after = await S.search(client, {"query": "reading_time_minutes"})
        line = edited.splitlines().index(
            "def reading_time_minutes(entry: Entry, words_per_minute: int = 230) -> int:")
        assert _symbols(after)[0] == (DIGEST, line + 1, "reading_time_minutes")
        assert after["results"][0]["range"]["start"] == {"line": line, "character": 0}
        assert "words_per_minute" in after["results"][0]["snippet"]
        assert "reading_time_minutes" not in (root / DIGEST).read_text()  # only the buffer has it
        client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=S.doc_id(root, DIGEST)))
        await S.wait_state(client, ("text-only",))
        closed = await S.search(client, {"query": "reading_time_minutes"})
        assert all(symbol != "reading_time_minutes" for _, _, symbol in _symbols(closed))


async def test_restart_reuses_the_persisted_index(tmp_path: Path) -> None:
    root = S.copy_sample(tmp_path)
    first = await S.start(root, tmp_path / "index")
    try:
        cold = await S.wait_state(first, ("text-only",))
    finally:
        await S.stop(first)
    assert cold["roots"][0]["last_job"]["parsed"] == 9
    second = await S.start(root, tmp_path / "index")
    try:
        warm = await S.wait_state(second, ("text-only",))
        job = warm["roots"][0]["last_job"]
        assert (job["parsed"], job["unchanged"]) == (0, 9)  # nothing parsed again
        assert warm["roots"][0]["chunks"] == cold["roots"][0]["chunks"]
        answer = await S.search(second, {"query": "parse_feed"})
        assert _symbols(answer)[0][::2] == ("feedreader/parser.py", "parse_feed")
    finally:
        await S.stop(second)


async def test_watched_files_are_registered_and_followed(tmp_path: Path) -> None:
    async with S.served_sample(tmp_path) as (client, root):
        registrations = client.registrations  # type: ignore[attr-defined]
        assert [(r.method, r.register_options) for r in registrations] == [
            (lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, {"watchers": [{"globPattern": "**/*"}]})]
        new = root / "feedreader" / "opml.py"
        new.write_text('"""OPML import."""\n\n\ndef import_opml(document: bytes) -> list[str]:\n'
                       '    """Feed URLs listed in an OPML document."""\n    return []\n')
        client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
            lsp.FileEvent(uri=S.uri(root, "feedreader/opml.py"), type=lsp.FileChangeType.Created)]))
        await S.wait_state(client, ("text-only",))
        found = await S.search(client, {"query": "import_opml"})
        top = found["results"][0]
        assert (top["path"], top["symbol"]) == ("feedreader/opml.py", "import_opml")
        assert top["start_line"] <= 4 <= top["end_line"]
        symbols = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="import_opml"))
        assert symbols and S.location(symbols[0].location, root) == ("feedreader/opml.py", 3, 4, 15)
        shutil.rmtree(root / "feedreader")
        client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
            lsp.FileEvent(uri=S.uri(root, "feedreader"), type=lsp.FileChangeType.Deleted)]))
        status = await S.wait_state(client, ("text-only",))
        assert status["roots"][0]["files"] == 4  # README, test, JS, Go remain
        gone = await S.search(client, {"query": "import_opml"})
        assert all(not path.startswith("feedreader/") for path, _, _ in _symbols(gone))


async def test_workspace_folders_added_and_removed(tmp_path: Path) -> None:
    root = S.copy_sample(tmp_path)
    other = tmp_path / "votes"
    other.mkdir()
    (other / "tally.py").write_text(
        "def tally_votes(ballots: list[str]) -> dict[str, int]:\n"
        '    """Count the ballots per candidate."""\n'
        "    counts: dict[str, int] = {}\n"
        "    for name in ballots:\n"
        "        counts[name] = counts.get(name, 0) + 1\n"
        "    return counts\n")
    client = await S.start(root, tmp_path / "index")
    try:
        await S.wait_state(client, ("text-only",))
        client.workspace_did_change_workspace_folders(lsp.DidChangeWorkspaceFoldersParams(
            event=lsp.WorkspaceFoldersChangeEvent(
                added=[lsp.WorkspaceFolder(uri=S.uri(other, ""), name="votes")], removed=[])))
        status = await S.wait_state(client, ("text-only",), roots=2)
        roots = sorted(r["root"] for r in status["roots"])
        assert roots == sorted([str(root.resolve()), str(other.resolve())])
        both = await S.search(client, {"query": "tally_votes"})
        top = both["results"][0]
        assert (top["uri"], top["start_line"], top["symbol"]) == (S.uri(other, "tally.py"), 1, "tally_votes")
        assert len(both["index"]["roots"]) == 2 and both["index"]["files"] == 10
        client.workspace_did_change_workspace_folders(lsp.DidChangeWorkspaceFoldersParams(
            event=lsp.WorkspaceFoldersChangeEvent(
                added=[], removed=[lsp.WorkspaceFolder(uri=S.uri(other, ""), name="votes")])))
        status = await S.wait_state(client, ("text-only",))
        assert [r["root"] for r in status["roots"]] == [str(root.resolve())]
        alone = await S.search(client, {"query": "tally_votes"})
        assert all(not r["uri"].startswith(S.uri(other, "")) for r in alone["results"])
    finally:
        await S.stop(client)


async def test_cli_and_server_share_one_index_per_root(tmp_path: Path) -> None:
    """`--index-dir` and the `indexDir` option name the same base; the key is the root alone, so an
    index the CLI built is reused by the server even when its root is not the first folder."""
    root = S.copy_sample(tmp_path)
    other = tmp_path / "votes"
    other.mkdir()
    (other / "tally.py").write_text("def tally_votes(ballots):\n    return len(ballots)\n")
    base = tmp_path / "base"
    subprocess.run([sys.executable, "-m", "lsp_server.cli", "index", str(root), "--index-dir", str(base),
                    "--no-embed", "--quiet"], check=True, env=S.server_env(tmp_path / "env-base"),
                   cwd=str(S.REPO), capture_output=True)
    client = await S.start([other, root], tmp_path / "env-base", options={"embeddings": False,
                                                                          "indexDir": str(base)})
    try:
        status = await S.wait_state(client, ("text-only",), roots=2)
        by_root = {r["root"]: r for r in status["roots"]}
        for folder in (root, other):
            assert by_root[str(folder.resolve())]["index_dir"] == str(index_dir_for(folder, base))
        assert by_root[str(root.resolve())]["last_job"]["parsed"] == 0  # the CLI's index, as it was
        assert not (tmp_path / "env-base").exists()  # the option wins over $CODESEEK_INDEX_DIR
    finally:
        await S.stop(client)


async def test_bad_options_are_shown_once_and_replaced_by_defaults(tmp_path: Path) -> None:
    root = S.copy_sample(tmp_path)
    bad = {"maxFileSize": "huge", "preset": "fastest", "embeddings": False, "colour": 1}
    client = await S.start(root, tmp_path / "index", options=bad, config={"hover": False, "preset": "quick"})
    try:
        status = await S.wait_state(client, ("text-only",))
        options = status["options"]
        assert (options["maxFileSize"], options["preset"], options["hover"]) == (1_000_000, "quick", False)
        shown = [m.message for m in client.messages]
        assert len(shown) == 3 and all(m.startswith("codeseek: ") for m in shown)
        assert any("'maxFileSize'" in m for m in shown) and any("'colour'" in m for m in shown)
        hover = await S.hover(client, root, "feedreader/parser.py", "def parse_date(", "parse_date")
        assert hover is None  # hover disabled by workspace/configuration
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
        await asyncio.sleep(0.3)
        await S.status(client)
        assert len(client.messages) == 3  # the same problems are not shown twice
    finally:
        await S.stop(client)


def test_tcp_transport(tmp_path: Path) -> None:
    """`codeseek serve --tcp HOST:PORT` (the console script) serves a client over a socket."""
    root = S.copy_sample(tmp_path)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    codeseek = Path(sys.executable).parent / "codeseek"
    proc = subprocess.Popen([str(codeseek), "serve", "--tcp", f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=S.server_env(tmp_path / "index"))
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=30)
                break
            except OSError:
                assert time.monotonic() < deadline, "the server never listened"
                time.sleep(0.1)
        stream = sock.makefile("rwb")

        def call(msg_id: int | None, method: str, params: object) -> dict[str, object] | None:
            doc: dict[str, object] = {"jsonrpc": "2.0", "method": method, "params": params}
            if msg_id is not None:
                doc["id"] = msg_id
            body = json.dumps(doc).encode()
            stream.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            stream.flush()
            while msg_id is not None:
                length = 0
                while (line := stream.readline()) not in (b"\r\n", b""):
                    if line.startswith(b"Content-Length:"):
                        length = int(line.split(b":")[1])
                message = json.loads(stream.read(length))
                if message.get("id") == msg_id and "method" not in message:
                    return dict(message)
            return None

        init = call(1, "initialize", {"processId": None, "rootUri": S.uri(root, ""), "capabilities": {},
                                      "initializationOptions": {"embeddings": False}})
        assert init is not None and "capabilities" in init["result"]  # type: ignore[operator]
        call(None, "initialized", {})
        for attempt in range(300):
            answer = call(2 + attempt, "workspace/semanticSearch", {"query": "parse_feed", "limit": 1})
            assert answer is not None
            results = answer["result"]["results"]  # type: ignore[index]
            if results:
                break
            time.sleep(0.1)
        assert [r["symbol"] for r in results] == ["parse_feed"]
        assert call(1000, "shutdown", None) == {"jsonrpc": "2.0", "id": 1000, "result": None}
        call(None, "exit", None)
        assert proc.wait(timeout=30) == 0
        sock.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def test_configuration_change_rebuilds_the_index(tmp_path: Path) -> None:
    root = S.copy_sample(tmp_path)
    client = await S.start(root, tmp_path / "index", config={})
    try:
        before = await S.wait_state(client, ("text-only",))
        assert before["roots"][0]["files"] == 9
        client.set_configuration({"excludes": ["web/**"]}, section="codeseek")
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
        deadline = time.monotonic() + 60
        while True:
            status = await S.wait_state(client, ("text-only",))
            if status["options"]["excludes"] == ["web/**"] and status["roots"][0]["files"] == 8:
                break
            assert time.monotonic() < deadline, status
            await asyncio.sleep(0.1)
        answer = await S.search(client, {"query": "formatRelativeTime"})
        assert all(r["path"] != "web/timeline.js" for r in answer["results"])
    finally:
        await S.stop(client)


async def test_requests_during_restarts_are_answered_or_asked_again(tmp_path: Path) -> None:
    # Each configuration change stops every root (closing its store) and starts it afresh, while
    # status and search requests that picked the old root may still be reading it. Every request
    # must get an answer or a ContentModified error (-32801, "ask again"), and the server must live.
    root = S.copy_sample(tmp_path)
    client = await S.start(root, tmp_path / "index", config={})
    try:
        await S.wait_state(client, ("text-only",))
        for turn in range(6):
            client.set_configuration({"excludes": ["web/**"] if turn % 2 == 0 else []}, section="codeseek")
            client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
            asks = [S.status(client) if i % 2 else S.search(client, {"query": "format relative time"})
                    for i in range(16)]
            for outcome in await asyncio.gather(*asks, return_exceptions=True):
                if isinstance(outcome, BaseException):
                    assert getattr(outcome, "code", None) == lsp.LSPErrorCodes.ContentModified, outcome
        status = await S.wait_state(client, ("text-only",))
        assert status["options"]["excludes"] == [] and status["roots"][0]["files"] == 9
    finally:
        await S.stop(client)
