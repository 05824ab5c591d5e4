"""What a server that shares its engine answers (`lsp_server.engine_share.SearchService`): the result
document of a request the CLI would search the same way, an error line for anything else."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from indexing.workspace import WorkspaceOptions
from lsp_server import engine_share as share
from lsp_server.engine_socket import code_stamp
from retrievers.base import QueryError
from retrievers.engine.lifecycle import INDEXING, READY
from retrievers.engine.options import EngineOptions


class FakeKeeper:
    """The keeper's state as the service reads it; each asked-for refresh ends its phase 1 at once."""

    def __init__(self, root: Path, embeddings: bool = False) -> None:
        self.root = root
        self.engine = SimpleNamespace(options=EngineOptions(embeddings=embeddings))
        self.buffers: dict[str, bytes] = {}
        self.workspace = SimpleNamespace(options=WorkspaceOptions(), root=root,
                                         overlays=lambda: sorted(self.buffers),
                                         read_bytes=lambda rel: self.buffers[rel])
        self.attempted = threading.Event()
        self.attempted.set()
        self.state, self.phase1_runs, self.stopping, self.asked = READY, 0, False, 0
        self.refreshes = True  # False: an asked-for refresh never runs

    def request_full(self) -> None:
        self.asked += 1
        if self.refreshes:
            self.phase1_runs += 1


class FakeCodebase:
    def __init__(self) -> None:
        self.requests: list[Any] = []

    def search(self, request: Any) -> SimpleNamespace:
        self.requests.append(request)
        if request.query == "bad":
            raise QueryError("limit must be between 1 and 200")
        doc = {"query": request.query, "results": [], "timings_ms": {"total": 1.0}}
        return SimpleNamespace(to_json=lambda: doc)  # a `SearchAnswer`'s one method used here


def message(where: Path, **changes: Any) -> bytes:
    doc: dict[str, Any] = {"v": 1, "op": "search", "root": str(where), "code": code_stamp(),
                           "options": {"embeddings": False, "max_span_lines": 60, "question_pool": 40},
                           "request": {"query": "apply discount", "limit": 3, "preset": "default",
                                       "intent": None, "include": ["shop/**"], "exclude": []}}
    doc.update(changes)
    return json.dumps(doc).encode()


@pytest.fixture
def keeper(tmp_path: Path) -> FakeKeeper:
    return FakeKeeper(tmp_path)


@pytest.fixture
def codebase() -> FakeCodebase:
    return FakeCodebase()


def serve(keeper: FakeKeeper, codebase: FakeCodebase) -> share.SearchService:
    return share.SearchService(keeper, codebase, "mcp")  # type: ignore[arg-type]


def test_a_request_gets_the_result_document_after_a_refresh(keeper: FakeKeeper,
                                                            codebase: FakeCodebase) -> None:
    answer = serve(keeper, codebase)(message(keeper.root))
    assert answer["result"] == {"query": "apply discount", "results": [], "timings_ms": {"total": 1.0}}
    assert answer["server"]["kind"] == "mcp" and answer["v"] == 1
    [request] = codebase.requests
    assert (request.limit, request.include, request.exclude, request.intent) == (3, ("shop/**",), (), None)
    assert keeper.asked == 1  # a full refresh, as the CLI runs in process


@pytest.mark.parametrize(("line", "kind", "words"), [
    (b"not json", "request", "invalid JSON"),
    (b"[1, 2]", "request", "a JSON object"),
    (b"", "request", "invalid JSON"),
    (json.dumps({"v": 2, "op": "search"}).encode(), "version", "unsupported protocol version 2"),
    (json.dumps({"op": "search"}).encode(), "version", "unsupported protocol version None"),
])
def test_malformed_lines_get_an_error(keeper: FakeKeeper, codebase: FakeCodebase, line: bytes, kind: str,
                                      words: str) -> None:
    answer = serve(keeper, codebase)(line)
    assert answer["kind"] == kind and words in answer["error"] and "result" not in answer
    assert codebase.requests == []


@pytest.mark.parametrize(("changes", "kind"), [
    ({"op": "delete"}, "request"),
    ({"root": "/elsewhere"}, "mismatch"),
    ({"code": "0123456789abcdef"}, "mismatch"),  # a server started before an upgrade or an edit
    ({"options": {"embeddings": True, "max_span_lines": 60, "question_pool": 40}}, "mismatch"),  # --no-embed
    ({"options": {"embeddings": False, "max_span_lines": 0, "question_pool": 40}}, "mismatch"),  # --max-lines
    ({"options": {"embeddings": False, "max_span_lines": 60, "question_pool": 0}}, "mismatch"),  # the pool
    ({"options": {"embeddings": False, "max_span_lines": 60, "question_pool": True}}, "mismatch"),
    ({"options": {"embeddings": False, "max_span_lines": 60}}, "mismatch"),  # an older CLI
    ({"options": {"embeddings": "no", "max_span_lines": 60, "question_pool": 40}}, "mismatch"),
    ({"options": None}, "mismatch"),
    ({"request": {"query": "x", "limit": "ten"}}, "request"),
    ({"request": {"query": "x", "limit": True}}, "request"),
    ({"request": {"query": "x", "include": [1]}}, "request"),
    ({"request": {"query": "x", "modalities": ["text"]}}, "request"),
    ({"request": {"limit": 3}}, "request"),
    ({"request": "x"}, "request"),
])
def test_requests_this_server_would_not_answer_identically(keeper: FakeKeeper, codebase: FakeCodebase,
                                                           changes: dict[str, Any], kind: str) -> None:
    answer = serve(keeper, codebase)(message(keeper.root, **changes))
    assert answer["kind"] == kind, answer
    assert codebase.requests == []


def test_a_bad_query_is_the_engines_error(keeper: FakeKeeper, codebase: FakeCodebase) -> None:
    answer = serve(keeper, codebase)(message(keeper.root, request={"query": "bad"}))
    assert answer == {"v": 1, "error": "limit must be between 1 and 200", "kind": "query"}


def test_busy_before_the_first_indexing_and_when_the_refresh_does_not_end(
        keeper: FakeKeeper, codebase: FakeCodebase, monkeypatch: pytest.MonkeyPatch) -> None:
    keeper.attempted.clear()
    assert serve(keeper, codebase)(message(keeper.root))["kind"] == "busy"
    keeper.attempted.set()
    keeper.refreshes = False
    monkeypatch.setattr(share, "READY_WAIT_S", 0.05)
    answer = serve(keeper, codebase)(message(keeper.root))
    assert answer["kind"] == "busy" and codebase.requests == []


def test_a_phase_1_under_way_does_not_count_as_the_refresh(keeper: FakeKeeper, codebase: FakeCodebase,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A phase 1 that began before the request may have read a file before the user's edit: the
    answer waits for the next one."""
    keeper.state, keeper.refreshes = INDEXING, False
    monkeypatch.setattr(share, "READY_WAIT_S", 2.0)

    def worker() -> None:  # the phase 1 under way ends, then the one the request asked for
        for _ in range(2):
            threading.Event().wait(0.1)
            keeper.phase1_runs += 1
        keeper.state = READY

    thread = threading.Thread(target=worker)
    thread.start()
    answer = serve(keeper, codebase)(message(keeper.root))
    thread.join()
    assert "result" in answer and keeper.phase1_runs == 2


def test_unsaved_buffers_that_differ_from_the_files_make_it_busy(keeper: FakeKeeper,
                                                                 codebase: FakeCodebase) -> None:
    (keeper.root / "a.py").write_bytes(b"x = 1\n")
    keeper.buffers["a.py"] = b"x = 1\n"  # open, unchanged: the CLI reads the same
    assert "result" in serve(keeper, codebase)(message(keeper.root))
    keeper.buffers["a.py"] = b"x = 2\n"
    answer = serve(keeper, codebase)(message(keeper.root))
    assert answer["kind"] == "busy" and "unsaved" in answer["error"]


def test_the_profile_names_what_shapes_an_answer() -> None:
    base = share.engine_profile(EngineOptions(), WorkspaceOptions().scan)
    assert share.engine_profile(EngineOptions(), WorkspaceOptions().scan) == base
    assert share.engine_profile(EngineOptions(model="minilm"), WorkspaceOptions().scan) != base
    assert share.engine_profile(EngineOptions(ranking={"k": 20}), WorkspaceOptions().scan) != base
    assert share.engine_profile(EngineOptions(embedder=object(), write_behind=True),  # type: ignore[arg-type]
                                WorkspaceOptions().scan) == base  # how it runs, not what it answers
