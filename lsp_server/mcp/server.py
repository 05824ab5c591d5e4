"""`codeseek mcp`: a Model Context Protocol server over stdio, for coding agents.

Built on the official `mcp` SDK (`MCPServer`). Seven read-only tools, `search`, `definition`,
`callers`, `callees`, `impact`, `related` and `status`, each a thin conversion over
`lsp_server.mcp.service.McpService` (the same engine and index as `codeseek search` and the language
server). Tool functions are synchronous: the SDK runs them on worker threads, so a slow call never
blocks the protocol. Arguments are checked against the advertised JSON schema by the SDK and again by
the service; a bad call gets a tool error (`isError: true`, the message says what is wrong) and the
server keeps serving. Answers are compact JSON text, also sent as `structuredContent`.

No `from __future__ import annotations` here: the SDK reads the tools' annotations at run time, and
the parameter types are local to `_tools` (their bounds come from the service's `Limits`).
"""

import argparse
import faulthandler
import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

from indexing.workspace import WorkspaceError
from lsp_server.mcp.service import McpOptions, McpService, ToolInputError
from lsp_server.process_tuning import serving
from retrievers.codebase import RetrieverError, StoreError
from retrievers.ranking.profile import PresetName

log = logging.getLogger("codeseek.mcp")

INSTRUCTIONS = """\
codeseek has indexed this workspace: tree-sitter definitions and call sites (Python, JavaScript,
TypeScript, Go, Rust, Java, C/C++, C# and more), a call graph, a BM25 text index and (unless turned
off) code embeddings. Use `search` for questions in words and half-remembered names, `definition` to
jump to a symbol, `callers` / `callees` / `impact` for the call graph, `related` for a one-call
summary of a symbol. Lines are 1-based. Answers are kept short: ask for more with `limit` or
`snippet_lines`. The index follows file edits within seconds."""

SEARCH = """\
Ranked code search over the whole workspace: embeddings + BM25 text + definitions + call graph, fused
and explained. Prefer it to grep when you do not know the exact text: a question in words ("where do
we retry failed downloads?"), a concept, a half-remembered or partial name. It also answers "who calls
X", "what breaks if I change X", a quoted exact string ("card declined") and a pasted traceback.
Each result: path, start_line-end_line (1-based, inclusive), symbol, kind, labels, score and a snippet
of the code (trimmed: raise snippet_lines for more). Use grep instead when you need every occurrence
of a literal string."""

DEFINITION = """\
Where a symbol is defined: path, lines, signature, docstring and its code. Faster and more precise
than grepping for `def X` / `class X` / `function X`: it knows the declarations of every indexed
language and takes `name`, `Class.method`, `module.name` (shop.cart.Cart) or `path:Symbol`
(shop/cart.py:Cart.total).
Several definitions with the name come best first; give `path` (and `line`) of the place where the
name is used to rank the one that call resolves to first."""

CALLERS = """\
Every call site of a function, method or class (constructor calls), from the call graph: path, line,
the calling definition (null for module-level code) and the line of code. Prefer it to grep for "who
calls X": it lists calls resolved to this definition, not comments, strings or same-named methods of
other classes. Only calls: for other uses (a constant read, a type annotation) use grep."""

CALLEES = """\
What a function or method calls: each called definition (path, lines) with the lines of the calls,
from the call graph. An outline of a function's dependencies without opening every callee."""

IMPACT = """\
What could break if you change a symbol: the definitions that call it directly (depth 1) or through
other callers (depth 2 and more), from the call graph, nearest first. Use it before changing a
signature or behaviour to find the code to check and the tests to run."""

RELATED = """\
A one-call summary of a symbol, what an editor's hover panel shows: signature, docstring, who calls
it, what it calls (most central first) and the most similar code elsewhere (when embeddings are on).
Quick orientation before reading or editing a function."""

STATUS = """\
The workspace index: root, index location, state (loading = opening the index stored on disk, with its
stored counts; indexing, embedding, text-only = no embeddings,
ready, empty), counts, the last refresh and any error. Call it when results look empty or stale."""

def _field(description: str, **kw: Any) -> Any:
    from pydantic import Field

    return Field(description=description, **kw)


def _answer(call: Callable[[], dict[str, Any]]) -> Any:
    """Run a service call: its document as compact JSON text and structured content, or a tool error."""
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import CallToolResult, TextContent

    try:
        with serving():  # (a due full collection waits for a pause in the calls)
            doc = call()
    except ToolInputError as exc:
        raise ToolError(str(exc)) from exc
    except (StoreError, RetrieverError) as exc:
        raise ToolError(f"the index could not answer: {exc}") from exc
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=doc)


def build_server(service: McpService) -> Any:
    """An `MCPServer` with the seven tools over `service` (started and stopped by its lifespan)."""
    import anyio
    from mcp.types import ToolAnnotations

    @asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        service.start()
        try:
            yield None
        finally:
            await anyio.to_thread.run_sync(service.stop)

    server: Any = _server_class()("codeseek", instructions=_flow(INSTRUCTIONS), version=_version(),
                                  lifespan=lifespan)
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                open_world_hint=False)
    for fn, doc in _tools(service):
        server.add_tool(fn, description=_flow(doc), annotations=read_only)
    return server


def _server_class() -> Any:
    """`MCPServer` whose schema-rejected arguments get one line naming each and what it allows (not
    pydantic's report with its documentation URL)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
    from pydantic import ValidationError

    class _Server(MCPServer):  # type: ignore[misc]
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                cause = exc.__cause__
                if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                    raise
                tool = self._tool_manager.get_tool(name)
                schema = tool.parameters if tool is not None else {}
                raise ToolError(argument_errors(name, cause, schema)) from cause

    return _Server


def _tools(service: McpService) -> list[tuple[Callable[..., Any], str]]:
    """The tool functions over `service` and their descriptions, in the order they are listed; their
    parameters' bounds come from the service's `Limits`."""
    from mcp.types import CallToolResult

    lim = service.options.limits
    Limit = Annotated[int, _field("how many results", ge=1, le=lim.max_results)]  # noqa: N806
    Sites = Annotated[int, _field("how many entries per definition", ge=1, le=lim.max_sites)]  # noqa: N806
    Lines = Annotated[int, _field("snippet lines per result (0: none)",  # noqa: N806
                                  ge=0, le=lim.max_snippet_lines)]
    Name = Annotated[str, _field("the symbol: a name (parse_date), Class.method, module.name or "  # noqa: N806
                                 "path:Symbol (shop/cart.py:Cart.total)", min_length=1, max_length=300)]

    def search(
        query: Annotated[str, _field("a question, a name, a quoted exact string, a traceback",
                                     min_length=1)],
        limit: Limit = lim.results,
        preset: Annotated[PresetName,
                          _field("quick: fastest; thorough: deeper, for hard questions")] = "default",
        include: Annotated[list[str] | None, _field("only paths matching these gitignore-style globs "
                                                    "(src/**, *.py)")] = None,
        exclude: Annotated[list[str] | None, _field("drop paths matching these globs (tests/)")] = None,
        snippet_lines: Lines = lim.snippet_lines,
        explain: Annotated[bool, _field("add why each result ranks, and timings")] = False,
    ) -> CallToolResult:
        return _answer(lambda: service.search(query, limit, preset, None, include, exclude, snippet_lines,
                                              explain))

    def definition(
        symbol: Name,
        path: Annotated[str | None, _field("workspace-relative file where the symbol is used "
                                           "(ranks the definition it resolves to first)")] = None,
        line: Annotated[int | None, _field("1-based line of that use in path", ge=1)] = None,
        limit: Limit = lim.definitions,
        snippet_lines: Lines = 12,
    ) -> CallToolResult:
        return _answer(lambda: service.definition(symbol, path, line, limit, snippet_lines))

    def callers(symbol: Name, limit: Sites = lim.sites) -> CallToolResult:
        return _answer(lambda: service.callers(symbol, limit))

    def callees(symbol: Name, limit: Sites = lim.sites) -> CallToolResult:
        return _answer(lambda: service.callees(symbol, limit))

    def impact(
        symbol: Name,
        depth: Annotated[int, _field("1: direct callers; 2: their callers too; ...",
                                     ge=1, le=lim.max_impact_depth)] = lim.impact_depth,
        limit: Sites = lim.sites,
    ) -> CallToolResult:
        return _answer(lambda: service.impact(symbol, depth, limit))

    def related(symbol: Name, limit: Annotated[int, _field("callers and callees listed", ge=1,
                                                           le=lim.max_sites)] = 5) -> CallToolResult:
        return _answer(lambda: service.related(symbol, limit))

    def status() -> CallToolResult:
        return _answer(service.status)

    return [(search, SEARCH), (definition, DEFINITION), (callers, CALLERS), (callees, CALLEES),
            (impact, IMPACT), (related, RELATED), (status, STATUS)]


def argument_errors(tool: str, error: Any, schema: dict[str, Any]) -> str:
    """One line for a `ValidationError` of `tool`'s arguments: each bad argument, what was given and
    what its JSON schema allows."""
    props = schema.get("properties", {})
    parts = []
    for err in error.errors():
        name = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "missing":
            parts.append(f"missing required argument {name}")
            continue
        allowed = _allowed(props.get(str(err["loc"][0]), {})) if err["loc"] else ""
        given = json.dumps(err.get("input"), ensure_ascii=False, default=str)
        if len(given) > 60:
            given = given[:57] + "..."
        parts.append(f"{name}={given}: " + (f"must be {allowed}" if allowed else str(err["msg"]).lower()))
    return f"invalid arguments to {tool}: " + "; ".join(dict.fromkeys(parts))


def _allowed(prop: dict[str, Any]) -> str:
    """What a JSON schema property admits, in words ("an integer from 1 to 50")."""
    options = [o for o in prop.get("anyOf", [prop]) if o.get("type") != "null"]
    prop = options[0] if len(options) == 1 else prop
    if "enum" in prop:
        return "one of " + ", ".join(str(v) for v in prop["enum"])
    kind = prop.get("type")
    if kind == "integer":
        low, high = prop.get("minimum"), prop.get("maximum")
        if low is not None and high is not None:
            return f"an integer from {low} to {high}"
        if low is not None:
            return f"an integer of {low} or more"
        return "an integer"
    if kind == "string":
        low, high = prop.get("minLength"), prop.get("maxLength")
        if low and high:
            return f"a string of {low} to {high} characters"
        return "a non-empty string" if low else "a string"
    if kind == "boolean":
        return "true or false"
    if kind == "array":
        return "a list of strings"
    return ""


def _flow(text: str) -> str:
    """One paragraph: the line breaks of the source are not the client's."""
    return " ".join(text.split())


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("codeseek")
    except PackageNotFoundError:
        return "0"


def _root(value: str | None) -> Path:
    """The workspace root as the CLI finds it (`--root`, else the project root detected from the
    current directory: `.codeseek`, the repository, a project file); never a home folder or `/` by
    accident, so an agent and `codeseek search` share one index."""
    from lsp_server.roots import RootChoiceError, choose_root

    try:
        return choose_root(value).root
    except RootChoiceError as exc:
        raise ToolInputError(str(exc)) from exc


def serve(args: argparse.Namespace) -> int:
    """Entry point of `codeseek mcp`: serve until the client closes stdin."""
    logging.basicConfig(handlers=[logging.StreamHandler(sys.stderr)],
                        level=os.environ.get("CODESEEK_LOG", "INFO").upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    faulthandler.enable(file=sys.stderr, all_threads=True)  # a native crash leaves each thread's stack
    try:
        root = _root(getattr(args, "root", None))
    except ToolInputError as exc:
        print(f"codeseek: error: {exc}", file=sys.stderr)
        return 2
    base = Path(args.index_dir).expanduser().resolve() if getattr(args, "index_dir", None) else None
    options = McpOptions(index_base=base, embeddings=not getattr(args, "no_embed", False),
                         share_engine=not getattr(args, "no_share_engine", False),
                         watch=not getattr(args, "no_watch", False),
                         transformer_background=not getattr(args, "no_transformer", False))
    try:
        service = McpService(root, options)
    except WorkspaceError as exc:  # e.g. the index folder belongs to another root
        print(f"codeseek: error: {exc}", file=sys.stderr)
        return 2
    server = build_server(service)
    log.info("codeseek mcp: serving %s (index %s)", service.root, service.workspace.index_dir)
    server.run("stdio")
    return 0
