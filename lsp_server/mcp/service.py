"""The MCP server's engine side: one workspace's index kept fresh in the background, and each tool's
answer as a small JSON document (protocol-free; `lsp_server.mcp.server` registers the tools).

`McpService(root, options)` opens the same index as `codeseek search --root ROOT` (`--index-dir`, else
`$CODESEEK_INDEX_DIR`, else the user cache per root) and a `SearchEngine` over it. A worker thread
refreshes it as the language server does: phase 1 (changed files, text index, call graph), then phase 2
(embeddings for new chunks, then the model is loaded). A tool call made `refresh_interval` seconds or
more after the last refresh starts another one and waits up to `fresh_wait` seconds for its phase 1 (on
a small change that is enough for the agent's own edits to be in the answer); past that, and while
embeddings run, tools answer from the current snapshot. Before the first phase 1 has finished they wait
for it up to `first_wait` seconds.

Answers stay small for an agent's context: few results and trimmed snippets by default, with
parameters to ask for more (bounds in `Limits`). Bad arguments raise `ToolInputError` with a message
saying what is wrong; nothing here raises for a name that matches nothing (the answer is empty).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from indexing.records import Definition
from indexing.workspace import Workspace, WorkspaceError, WorkspaceOptions
from lsp_server.process_tuning import release_memory
from lsp_server.worker import StoppableWorker
from retrievers.base import QueryError
from retrievers.codebase import Codebase
from retrievers.engine.results import SNIPPET_MAX_LINE_CHARS, SourceCache, match_fields, snippet_for
from retrievers.engine.search_engine import EngineOptions, SearchEngine, SearchRequest
from retrievers.navigation import graph_queries

log = logging.getLogger("codeseek.mcp")


class ToolInputError(ValueError):
    """A tool was called with arguments it cannot use; the message says which and why."""


class RefreshStopped(Exception):
    """Raised from a progress callback to abandon a refresh when the service stops."""


@dataclass(frozen=True)
class Limits:
    """Defaults (small, for an agent's context) and the most a call may ask for."""

    results: int = 5  # search results
    max_results: int = 50
    snippet_lines: int = 8
    max_snippet_lines: int = 200
    sites: int = 20  # call sites, callees, impacted definitions per definition
    max_sites: int = 500
    definitions: int = 5  # same-named definitions answered per call
    impact_depth: int = 2
    max_impact_depth: int = 6


@dataclass
class McpOptions:
    """How `codeseek mcp` runs."""

    index_base: Path | None = None  # base of the per-root index folders (indexing.location), as the CLI/LSP
    index_dir: Path | None = None  # the index folder itself (tests); None: under index_base
    embeddings: bool = True  # False: no semantic retriever, the model is never loaded
    model: str | None = None
    preset: str = "default"
    refresh_interval: float = 5.0  # seconds after a refresh before a tool call starts the next one
    fresh_wait: float = 1.0  # seconds a call waits for the phase 1 of the refresh it started
    first_wait: float = 30.0  # seconds a call waits for the first phase 1
    limits: Limits = field(default_factory=Limits)


class McpService(StoppableWorker):
    """A workspace, its engine and a background refresher; one method per tool."""

    def __init__(self, root: Path, options: McpOptions | None = None) -> None:
        self.options = options or McpOptions()
        self.workspace = Workspace(root, WorkspaceOptions(index_dir=self.options.index_dir,
                                                          index_base=self.options.index_base,
                                                          parse_workers=None))
        # One engine per process: it builds its own embedder from `model` (nothing to share).
        self.engine = SearchEngine(self.workspace, EngineOptions(
            model=self.options.model, embeddings=self.options.embeddings))
        self.codebase = Codebase.of(self.engine)  # every tool asks the domain facade
        self.root = self.workspace.root
        self.phase1_done = threading.Event()
        self.error: str | None = None
        self.last_refresh: dict[str, Any] = {}
        self._cond = threading.Condition()
        self._pending = False
        self._busy = False
        self._stop = False
        self._finished_at = 0.0
        self._phase1_runs = 0  # phase 1 ends (done or failed) so far
        self._thread = threading.Thread(target=self._run, name="codeseek-mcp-refresh", daemon=True)

    # -- lifecycle -----------------------------------------------------------------------------------
    def start(self) -> None:
        self.request_refresh()
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        if not self._halt(timeout):  # stuck in one long step (a model load): leave the store open
            log.warning("the refresh of %s did not stop within %.1f s", self.root, timeout)
            return
        self.engine.close()
        self.workspace.close()

    def request_refresh(self) -> None:
        with self._cond:
            self._pending = True
            self._cond.notify_all()

    def refreshing(self) -> bool:
        with self._cond:
            return self._busy or self._pending

    def _touch(self) -> None:
        """Before each tool call: start a refresh when the last one is old and wait briefly for its
        phase 1; wait for the very first phase 1."""
        with self._cond:
            idle = not (self._busy or self._pending)
            stale = time.monotonic() - self._finished_at >= self.options.refresh_interval
            if idle and stale and self.phase1_done.is_set():
                self._pending = True
                self._cond.notify_all()
                target = self._phase1_runs + 1
                self._cond.wait_for(lambda: self._phase1_runs >= target or self._stop,
                                    self.options.fresh_wait)
        self.phase1_done.wait(self.options.first_wait)

    def _phase1_end(self) -> None:
        self.phase1_done.set()  # a failed first refresh answers from what exists, not never
        with self._cond:
            self._phase1_runs += 1
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stop:
                    self._busy = False
                    self._cond.notify_all()
                    self._cond.wait()
                if self._stop:
                    self._busy = False
                    return
                self._pending, self._busy = False, True
                runs = self._phase1_runs
            try:
                self._refresh()
                self.error = None
            except RefreshStopped:
                return
            except Exception as exc:  # keep serving the last snapshot; status says what failed
                if self._stop:
                    return
                log.exception("refreshing the index of %s failed", self.root)
                self.error = f"{type(exc).__name__}: {exc}"
                if self._phase1_runs == runs:  # failed in phase 1: its waiters stop waiting
                    self._phase1_end()
            finally:
                with self._cond:
                    self._finished_at = time.monotonic()

    def _progress(self, phase: str, done: int, total: int) -> None:
        if self._stop:
            raise RefreshStopped()  # each file is committed atomically: stopping here loses nothing

    def _refresh(self) -> None:
        started = time.perf_counter()
        result = self.engine.refresh(embed=False, progress=self._progress)
        self._phase1_end()
        self.last_refresh = {"parsed": result.parsed, "unchanged": result.unchanged,
                             "phase1_s": round(time.perf_counter() - started, 3), "notes": result.notes}
        changed = result.reconciled or bool(result.update is not None and result.update.changed)
        semantic = self.engine.semantic
        if semantic is not None and not self._stop:
            if semantic.pending():
                done = self.engine.refresh(embed=True, progress=self._progress, paths=[])
                self.last_refresh["embedded"] = done.embedded
                self.last_refresh["notes"] = result.notes + done.notes
                changed = changed or done.embedded > 0
            semantic.embedder.load()  # so the first semantic query does not wait for it
            deep = semantic.deep  # transformer vectors the language server or the CLI made are used
            if deep is not None and deep.embedded():
                deep.embedder.load()
        if changed:  # collect, trim and freeze what the refresh left, as the language server does
            release_memory()

    # -- tools ---------------------------------------------------------------------------------------
    def search(self, query: str, limit: int | None = None, preset: str | None = None,
               intent: str | None = None, include: list[str] | None = None,
               exclude: list[str] | None = None, snippet_lines: int | None = None,
               explain: bool = False) -> dict[str, Any]:
        """The result schema with trimmed snippets (no `uri`; `explain` and `timings_ms` on request)."""
        limits = self.options.limits
        limit = _bounded("limit", limit, limits.results, 1, limits.max_results)
        lines = _bounded("snippet_lines", snippet_lines, limits.snippet_lines, 0, limits.max_snippet_lines)
        self._touch()
        request = SearchRequest(query=query, limit=limit, preset=preset or self.options.preset,
                                intent=intent or None, include=tuple(include or ()),
                                exclude=tuple(exclude or ()))
        try:
            doc = self.codebase.search(request)
        except QueryError as exc:
            raise ToolInputError(str(exc)) from exc
        sources = SourceCache(self.workspace.read_bytes)
        for r in doc["results"]:
            r.pop("uri", None)
            r["snippet"] = _snippet(sources, r["path"], r["start_line"], r["end_line"], lines)
            if not explain:
                r.pop("explain", None)
            if r.get("also"):
                r["also"] = r["also"][:3]
        if not explain:
            doc.pop("timings_ms", None)
        return doc

    def definition(self, symbol: str, path: str | None = None, line: int | None = None,
                   limit: int | None = None, snippet_lines: int | None = None) -> dict[str, Any]:
        """The definitions `symbol` names, best first, each with its code."""
        limits = self.options.limits
        limit = _bounded("limit", limit, limits.definitions, 1, limits.max_results)
        lines = _bounded("snippet_lines", snippet_lines, max(limits.snippet_lines, 12), 0,
                         limits.max_snippet_lines)
        if line is not None and path is None:
            raise ToolInputError("line needs path (the file where the symbol is used)")
        if line is not None and line < 1:
            raise ToolInputError(f"line must be 1 or more, got {line}")
        name = _symbol(symbol)
        self._touch()
        rel = self._relpath(path) if path is not None else None
        looked_up = self.codebase.lookup(name, rel, line)
        found = looked_up or []
        sources = SourceCache(self.workspace.read_bytes)
        out = []
        for d in found[:limit]:
            entry = _brief(d)
            entry.update(signature=d.signature, doc=d.doc or None,
                         snippet=_snippet(sources, d.path, d.start_line, d.end_line, lines))
            out.append(entry)
        return {"symbol": name, **_no_definition(name, found), "definitions": out, "total": len(found),
                **self._state(looked_up is not None)}

    def callers(self, symbol: str, limit: int | None = None) -> dict[str, Any]:
        """Every call site of each definition `symbol` names, with the calling definition and line."""
        limit = self._sites_limit(limit)
        sources = SourceCache(self.workspace.read_bytes)

        def answer(d: Definition) -> dict[str, Any]:
            sites = self.codebase.call_sites(d)
            items = [{"path": s.path, "line": s.line, "caller": c.qualified_name if c is not None else None,
                      "code": _line(sources, s.path, s.line)} for s, c in sites[:limit]]
            return {"callers": items, "count": len(sites)}

        return self._per_definition(symbol, answer)

    def callees(self, symbol: str, limit: int | None = None) -> dict[str, Any]:
        """The definitions each definition `symbol` names calls, with the lines of the calls."""
        limit = self._sites_limit(limit)

        def answer(d: Definition) -> dict[str, Any]:
            out = self.codebase.call_hierarchy(d, "outgoing", confident=False) or []
            items = [{**_brief(c.definition), "called_at": sorted({s.line for s in c.sites})}
                     for c in out[:limit]]
            return {"callees": items, "count": len(out)}

        return self._per_definition(symbol, answer)

    def impact(self, symbol: str, depth: int | None = None, limit: int | None = None) -> dict[str, Any]:
        """Definitions that call each definition `symbol` names, directly (depth 1) or transitively."""
        limits = self.options.limits
        depth = _bounded("depth", depth, limits.impact_depth, 1, limits.max_impact_depth)
        limit = self._sites_limit(limit)

        def answer(d: Definition) -> dict[str, Any]:
            hits = self.codebase.impact(d, depth)
            items = [{**_brief(i), "depth": dep} for i, dep in hits[:limit]]
            return {"impact": items, "count": len(hits)}

        out = self._per_definition(symbol, answer)
        return {**out, "depth": depth}

    def related(self, symbol: str, limit: int | None = None) -> dict[str, Any]:
        """What the editor hover shows: signature, doc, callers, callees and similar code."""
        limit = _bounded("limit", limit, graph_queries.MAX_CALLERS, 1, self.options.limits.max_sites)

        def answer(d: Definition) -> dict[str, Any]:
            info = self.codebase.related(d, graph_queries.MAX_SIMILAR)
            return {"signature": d.signature, "doc": d.doc or None,
                    "called_by": [_brief(c) for c in info.callers[:limit]],
                    "called_by_count": len(info.callers),
                    "calls": [_brief(c) for c in info.callees[:limit]], "calls_count": len(info.callees),
                    "similar": [{"path": s.chunk.path, "start_line": s.chunk.start_line,
                                 "end_line": s.chunk.end_line, "symbol": s.chunk.symbol, "kind": s.chunk.kind,
                                 "score": round(s.score, 4)} for s in info.similar]}

        return self._per_definition(symbol, answer)

    def status(self) -> dict[str, Any]:
        """The index: where it is, its state and counts, the last refresh, the last error."""
        info = self.codebase.status()
        if not self.phase1_done.is_set() and info["files"]:  # an index on disk, not opened yet
            info.update(state="loading", embedded=None)  # the vectors are counted once they are loaded
        return {"root": str(self.root), "index_dir": str(self.workspace.index_dir), "state": info["state"],
                "refreshing": self.refreshing(), "files": info["files"],
                "chunks": info["chunks"], "definitions": info["definitions"],
                "embedded": info["embedded"], "model": info["model"],
                "last_refresh": dict(self.last_refresh), "error": self.error}

    # -- helpers -------------------------------------------------------------------------------------
    def _state(self, has_graph: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"index_state": self.engine.index_info()["state"]}
        if not has_graph:
            out["note"] = "no call graph yet (or building it failed: see the status tool); try again soon"
        return out

    def _sites_limit(self, limit: int | None) -> int:
        limits = self.options.limits
        return _bounded("limit", limit, limits.sites, 1, limits.max_sites)

    def _relpath(self, path: str) -> str:
        try:
            return self.workspace.relpath(path)
        except WorkspaceError as exc:
            raise ToolInputError(str(exc)) from exc

    def _per_definition(self, symbol: str, answer: Any) -> dict[str, Any]:
        """`answer(d)` for each definition `symbol` names (up to `Limits.definitions`)."""
        name = _symbol(symbol)
        self._touch()
        looked_up = self.codebase.lookup(name)
        found = looked_up or []
        shown = found[:self.options.limits.definitions]
        matches = [{"definition": _brief(d), **answer(d)} for d in shown]
        return {"symbol": name, **_no_definition(name, found), "matches": matches,
                "more_definitions": len(found) - len(shown), **self._state(looked_up is not None)}


def _no_definition(name: str, found: list[Definition]) -> dict[str, Any]:
    """`no_match` (the words of the search tool's, `retrievers.engine.results.match_fields`) when no
    definition has the name, else nothing."""
    if found:
        return {}
    return {"no_match": match_fields("find_definition", name, False)["no_match"]}


def _bounded(name: str, value: int | None, default: int, low: int, high: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolInputError(f"{name} must be an integer, got {value!r}")
    if not low <= value <= high:
        raise ToolInputError(f"{name} must be between {low} and {high}, got {value}")
    return value


def _symbol(symbol: str) -> str:
    if not isinstance(symbol, str) or not symbol.strip():
        raise ToolInputError("symbol is empty: give a name such as `parse_date`, `Cart.total` or "
                             "`shop/cart.py:Cart.total`")
    if len(symbol) > 300 or "\n" in symbol.strip():
        raise ToolInputError("symbol must be one name of at most 300 characters (use search for text)")
    return symbol.strip()


def _brief(d: Definition) -> dict[str, Any]:
    return {"symbol": d.qualified_name, "kind": d.kind, "path": d.path, "start_line": d.start_line,
            "end_line": d.end_line}


def _snippet(sources: SourceCache, path: str, start: int, end: int, lines: int) -> str:
    if lines == 0:
        return ""
    return snippet_for(sources.lines(path), start, end, max_lines=lines, max_chars=lines * 120)


def _line(sources: SourceCache, path: str, line: int) -> str:
    text = sources.lines(path)
    if text is None or not 1 <= line <= len(text):
        return ""
    return text[line - 1].strip()[:SNIPPET_MAX_LINE_CHARS]
