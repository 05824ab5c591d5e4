"""What a server that shares its engine answers `codeseek search` (`lsp_server.engine_socket` is the
transport): `share_engine(keeper, codebase, kind)` listens on the keeper's index folder.

A server answers only the CLI that would search as it does (else `mismatch`): the same search code
(`engine_socket.code_stamp`: a server started before an upgrade or an edit does not answer) and the
same profile (`engine_profile`: the model and its tiers, embeddings, the span cut, the ranking
overrides, the scan options) as `codeseek search` with the request's `options`. The CLI searches in
its own process on any answer but a result or a `query` error (a bad query: the words the engine has
in process too). Before it answers, the server brings its index up to date as the CLI would in
process: a full refresh begun after the request (changed files, then the vectors of new chunks). It
answers `busy` before its first indexing ends, when that refresh does not end within READY_WAIT_S, and
while unsaved editor buffers differ from the files. A malformed request gets an error line; the
server keeps serving.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from lsp_server.engine_socket import PROTOCOL, EngineListener, code_stamp, error

if TYPE_CHECKING:
    from indexing.scan import ScanOptions
    from indexing.workspace import Workspace
    from retrievers.codebase import Codebase
    from retrievers.engine.keeper import IndexKeeper
    from retrievers.engine.options import EngineOptions
    from retrievers.engine.request import CheckedRequest, SearchRequest

READY_WAIT_S = 10.0  # how long a request waits for the refresh it asked for, then `busy`
REQUEST_KEYS: dict[str, type | tuple[type, ...]] = {
    "query": str, "limit": int, "preset": str, "intent": (str, type(None)), "include": list, "exclude": list}
OPTION_KEYS = {"embeddings", "max_span_lines", "question_pool"}


def engine_profile(engine: EngineOptions, scan: ScanOptions) -> dict[str, Any]:
    """What, besides the request, shapes an answer: equal profiles give equal answers on one index."""
    profile = {"model": engine.model, "transformer": engine.transformer or None,
               "embeddings": engine.embeddings, "max_span_lines": engine.max_span_lines,
               "ranking": engine.ranking, "tier_blend": asdict(engine.tier_blend),
               "scan": {**asdict(scan), "excludes": list(scan.excludes)}}
    out: dict[str, Any] = json.loads(json.dumps(profile, sort_keys=True, default=str))
    return out


def result_document(codebase: Codebase, request: SearchRequest | CheckedRequest) -> dict[str, Any]:
    """The result document `codeseek search --json` prints (before its `timings_ms.process`): the
    CLI in process and the shared engine both answer with it."""
    return codebase.search(request).to_json()


class SearchService:
    """The protocol's answers over one root's keeper and facade (`kind`: "lsp" or "mcp")."""

    def __init__(self, keeper: IndexKeeper, codebase: Codebase, kind: str) -> None:
        self.keeper, self.codebase, self.kind = keeper, codebase, kind
        self.profile = engine_profile(keeper.engine.options, keeper.workspace.options.scan)
        self.code = code_stamp()  # the code this process runs (loaded by now, or soon)

    def __call__(self, line: bytes) -> dict[str, Any]:
        try:
            doc = json.loads(line)
        except ValueError as exc:
            return error(f"invalid JSON: {exc}", "request")
        if not isinstance(doc, dict):
            return error("expected a JSON object", "request")
        if doc.get("v") != PROTOCOL:
            return error(f"unsupported protocol version {doc.get('v')!r} (this server speaks {PROTOCOL})",
                         "version")
        if doc.get("op") != "search":
            return error(f"unknown op {doc.get('op')!r} (known: search)", "request")
        same = self._same_search(doc.get("code"), doc.get("options"))
        if doc.get("root") != str(self.keeper.root) or not same:
            return error("this server searches with other code, options or another root", "mismatch")
        try:
            request = _search_request(doc.get("request"))
        except (TypeError, ValueError) as exc:
            return error(str(exc), "request")
        return self._search(request)

    def _same_search(self, code: Any, options: Any) -> bool:
        """Whether `codeseek search` with `options` would search as this server does."""
        from indexing.scan import ScanOptions
        from retrievers.engine.options import EngineOptions

        if code != self.code or not isinstance(options, dict) or set(options) != OPTION_KEYS:
            return False
        from retrievers.semantic.tiered import TierBlend

        embeddings, lines, pool = options["embeddings"], options["max_span_lines"], options["question_pool"]
        if not isinstance(embeddings, bool) or any(not isinstance(n, int) or isinstance(n, bool)
                                                   for n in (lines, pool)):
            return False
        cli = EngineOptions(embeddings=embeddings, max_span_lines=lines,
                            tier_blend=TierBlend(question_pool=pool))
        return engine_profile(cli, ScanOptions()) == self.profile  # the CLI's workspace: the default scan

    def _search(self, request: SearchRequest) -> dict[str, Any]:
        from retrievers.base import QueryError

        if not self.keeper.attempted.is_set():
            return error("the first indexing is still running", "busy")
        busy = self._refresh()
        if busy is None and unsaved_buffers(self.keeper.workspace):
            busy = "unsaved editor buffers differ from the files"
        if busy is not None:
            return error(busy, "busy")
        try:
            result = result_document(self.codebase, request)
        except QueryError as exc:
            return error(str(exc), "query")
        return {"v": PROTOCOL, "server": {"kind": self.kind, "pid": os.getpid()}, "result": result}

    def _refresh(self) -> str | None:
        """Bring the index up to date as `codeseek search` does in its own process: a full refresh that
        starts after this request (its phase 1, then the vectors of new chunks). Why it could not
        within READY_WAIT_S, or None."""
        from retrievers.engine.lifecycle import ERROR, INDEXING, READY

        keeper = self.keeper
        runs = keeper.phase1_runs  # read before the state: a phase 1 that ends between the two counts
        runs += 2 if keeper.state == INDEXING else 1  # one under way began before this request
        keeper.request_full()
        deadline = time.monotonic() + READY_WAIT_S
        while keeper.phase1_runs < runs or keeper.state != READY:
            failed = keeper.phase1_runs >= runs and keeper.state == ERROR  # the CLI would say why
            if failed or keeper.stopping or time.monotonic() > deadline:
                return f"the index is {keeper.state}"
            time.sleep(0.002)
        return None


def _search_request(raw: Any) -> SearchRequest:
    from retrievers.engine.request import SearchRequest

    if not isinstance(raw, dict):
        raise TypeError("request must be a JSON object")
    unknown = sorted(set(raw) - set(REQUEST_KEYS))
    if unknown or "query" not in raw:
        raise ValueError(f"request keys: {', '.join(REQUEST_KEYS)} (query required); got {sorted(raw)}")
    for key, kinds in REQUEST_KEYS.items():
        value = raw.get(key)
        if key in raw and (not isinstance(value, kinds) or isinstance(value, bool)):
            raise TypeError(f"request {key} has the wrong type: {type(value).__name__}")
        if isinstance(value, list) and not all(isinstance(v, str) for v in value):
            raise TypeError(f"request {key} must be a list of strings")
    defaults = SearchRequest(query="")
    return SearchRequest(query=raw["query"], limit=raw.get("limit", defaults.limit),
                         preset=raw.get("preset", defaults.preset), intent=raw.get("intent"),
                         include=tuple(raw.get("include", ())), exclude=tuple(raw.get("exclude", ())))


def unsaved_buffers(workspace: Workspace) -> bool:
    """Whether an open editor buffer differs from its file (the CLI in process reads the file)."""
    from indexing.source_encoding import as_utf8

    for rel in workspace.overlays():
        try:
            with open(workspace.root / rel, "rb") as fh:
                disk = as_utf8(rel, fh.read())
            if workspace.read_bytes(rel) != disk:
                return True
        except Exception:  # gone, unreadable: not what the CLI would read
            return True
    return False


def share_engine(keeper: IndexKeeper, codebase: Codebase, kind: str) -> EngineListener | None:
    """Listen for `codeseek search` on `keeper`'s index folder; None when there can be no socket."""
    listener = EngineListener(keeper.workspace.index_dir, SearchService(keeper, codebase, kind))
    return listener if listener.start() else None
