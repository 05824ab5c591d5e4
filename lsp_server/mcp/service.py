"""The MCP server's engine side: one workspace's index kept fresh in the background, and each tool's
answer as a small JSON document (protocol-free; `lsp_server.mcp.server` registers the tools).

`McpService(root, options)` opens the same index as `codeseek search --root ROOT` (`--index-dir`, else
`$CODESEEK_INDEX_DIR`, else the user cache per root) with an index keeper over it
(`retrievers.engine.keeper`, the language server's too): its worker runs phase 1 (changed files, text
index, call graph), then phase 2 (embeddings for new chunks, then the model is loaded), then, while
idle and at low priority, the transformer tier (`transformer_background`; every process, the CLI
included, ranks with the vectors it stores; `retrievers.engine.fill_order` decides which come first).
The service watches the root (`lsp_server.file_watch`): a changed file is indexed in the background about a
quarter second after the last write, and tool calls answer from the current snapshot at once, never
waiting for a rescan. Without a watcher (`watch=False`, or inotify unavailable), a tool call made
`refresh_interval` seconds or more after the last refresh starts another one and waits up to
`fresh_wait` seconds for its phase 1. Before the first phase 1 has ended calls wait for it up to
`first_wait` seconds.

Answers stay small for an agent's context: few results and trimmed snippets by default, with
parameters to ask for more (bounds in `Limits`). Bad arguments raise `ToolInputError` with a message
saying what is wrong; nothing here raises for a name that matches nothing (the answer is empty).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from indexing.records import Definition
from indexing.workspace import WorkspaceError, WorkspaceOptions
from lsp_server.engine_share import share_engine
from lsp_server.engine_socket import EngineListener
from lsp_server.file_watch import RootWatcher
from lsp_server.process_tuning import lower_priority, release_memory
from retrievers.base import QueryError
from retrievers.codebase import Codebase
from retrievers.engine.keeper import IndexKeeper, KeeperOptions
from retrievers.engine.options import EngineOptions
from retrievers.engine.request import SearchRequest
from retrievers.engine.results import SNIPPET_MAX_LINE_CHARS, SourceCache, match_fields, snippet_for
from retrievers.navigation import graph_queries


class ToolInputError(ValueError):
    """A tool was called with arguments it cannot use; the message says which and why."""


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
    share_engine: bool = True  # answer `codeseek search` over a socket (lsp_server.engine_socket)
    watch: bool = True  # watch the root (lsp_server.file_watch): tool calls then never wait for a rescan
    transformer_background: bool = True  # fill the transformer tier while idle, as the language server does


class McpService:
    """A workspace, its engine and index keeper (a background refresher); one method per tool."""

    def __init__(self, root: Path, options: McpOptions | None = None) -> None:
        self.options = options or McpOptions()
        # One engine per process: it builds its own embedder from `model` (nothing to share).
        self.keeper = IndexKeeper.open(
            root, WorkspaceOptions(index_dir=self.options.index_dir, index_base=self.options.index_base,
                                   parse_workers=None),
            # (as the language server: a restart loads what the first refresh saved; saving the
            # derived state again on every change cost a refresh on the Django sdist ~5 s)
            EngineOptions(model=self.options.model, embeddings=self.options.embeddings, persist_once=True,
                          freeze_after_refresh=True, incremental_graph=True),
            KeeperOptions(transformer_background=self.options.transformer_background,
                          after_work=release_memory,  # collect, trim and freeze what a refresh left
                          low_priority=lower_priority))
        self.workspace = self.keeper.workspace
        self.engine = self.keeper.engine
        self.codebase = Codebase.of(self.engine)  # every tool asks the domain facade
        self.root = self.workspace.root
        self.phase1_done = self.keeper.attempted  # a failed first refresh answers from what exists
        self.shared: EngineListener | None = None
        self.watcher: RootWatcher | None = None

    # -- lifecycle -----------------------------------------------------------------------------------
    def start(self) -> None:
        self.keeper.start()
        if self.options.watch:
            self.watcher = RootWatcher(self.keeper, self.codebase)
            self.watcher.start()
        if self.options.share_engine:
            self.shared = share_engine(self.keeper, self.codebase, "mcp")

    def stop(self, timeout: float = 5.0) -> None:
        if self.watcher is not None:
            self.watcher.stop()
        if self.shared is not None:
            self.shared.close()
        self.keeper.stop(timeout)  # stuck in one long step (a model load): the store stays open

    def request_refresh(self) -> None:
        self.keeper.request_full()

    def watching(self) -> bool:
        """Whether the watcher runs: changes then reach the index without a tool call asking."""
        watcher = self.watcher
        return watcher is not None and watcher.error is None and watcher.status()["running"]

    def refreshing(self) -> bool:
        return not self.keeper.idle()

    @property
    def error(self) -> str | None:
        """What the last refresh failed with (None once one succeeds)."""
        return self.keeper.error

    @property
    def last_refresh(self) -> dict[str, Any]:
        """What the last refresh did: its counts, phase 1's seconds, its notes, what it embedded."""
        report = self.keeper.last
        if report is None:
            return {}
        out: dict[str, Any] = {"parsed": report.parsed, "unchanged": report.unchanged,
                               "phase1_s": report.phase1_s, "notes": report.notes}
        if report.embedded is not None:
            out.update(notes=report.notes + report.embed_notes, embedded=report.embedded)
        return out

    def _touch(self) -> None:
        """Before each tool call: without a watcher, start a refresh when the last one is old and wait
        briefly for its phase 1; wait for the very first phase 1."""
        if not self.watching():
            self.keeper.refresh_if_stale(self.options.refresh_interval, self.options.fresh_wait)
        self.keeper.attempted.wait(self.options.first_wait)

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
            doc = self.codebase.search(request).to_json()
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
                "embedded": info["embedded"], "model": info["model"], "transformer": info["transformer"],
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
