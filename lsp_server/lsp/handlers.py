"""The LSP handlers of codeseek: each gets its params, asks the domain facade (`RootIndex.codebase`) and
returns its answer converted to LSP types.

`create_server()` builds a `CodeseekServer` and registers every handler on it. Requests that read
the index are `async` and run their work in the server's query pool (`ls.run_query`), which makes
them cancellable with `$/cancelRequest`; notifications only record state and schedule indexing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types as lsp

from lsp_server.lsp import convert, hover, navigation, search
from lsp_server.lsp.indexer import RootIndex
from lsp_server.lsp.options import to_json
from lsp_server.lsp.server import DEBOUNCE_S, SEARCH_METHOD, CodeseekServer, bad_params
from lsp_server.process_tuning import release_memory
from retrievers.codebase import DefinitionKey, Target
from retrievers.engine.lifecycle import STARTING

log = logging.getLogger("codeseek.lsp")
T = TypeVar("T")
INDEX_OPTIONS = ("model", "index_dir", "excludes", "max_file_size", "embeddings", "transformer",
                 "transformer_background", "share_engine")
BIG_BUFFER = 1 << 20  # closing a buffer this large returns freed memory to the OS


# --- lifecycle ------------------------------------------------------------------------------------


def initialize(ls: CodeseekServer, params: lsp.InitializeParams) -> None:
    ls.init_options = params.initialization_options


async def initialized(ls: CodeseekServer, params: lsp.InitializedParams) -> None:
    config = await _configuration(ls)
    ls.apply_options(ls.init_options, config)
    folders = list(ls.workspace.folders.values())
    paths = [convert.uri_to_path(f.uri) for f in folders]
    if not paths and ls.workspace.root_uri:
        paths = [convert.uri_to_path(ls.workspace.root_uri)]
    for path in paths:
        if path is not None:
            ls.add_root(path)
    ls.started = True
    if not await _register_watchers(ls):  # the client cannot watch files: the server does (file_watch)
        ls.watch_files = True
        for root in list(ls.roots.values()):
            root.watch(ls.notify_user)


async def _configuration(ls: CodeseekServer) -> Any:
    caps = ls.client_capabilities.workspace
    if not (caps and caps.configuration):
        return None
    try:
        items = [lsp.ConfigurationItem(section="codeseek")]
        answer = await asyncio.wait_for(
            ls.workspace_configuration_async(lsp.ConfigurationParams(items=items)), 5.0)
    except Exception as exc:
        log.warning("workspace/configuration failed: %s", exc)
        return None
    return answer[0] if answer else None


async def _register_watchers(ls: CodeseekServer) -> bool:
    """Ask the client to watch the workspace; False when it cannot (or refused)."""
    caps = ls.client_capabilities.workspace
    watched = caps.did_change_watched_files if caps else None
    if not (watched and watched.dynamic_registration):
        return False
    options = lsp.DidChangeWatchedFilesRegistrationOptions(
        watchers=[lsp.FileSystemWatcher(glob_pattern="**/*")])
    registration = lsp.Registration(id="codeseek-watch", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                    register_options=options)
    try:
        await ls.client_register_capability_async(lsp.RegistrationParams(registrations=[registration]))
    except Exception as exc:
        log.warning("file watcher registration failed: %s", exc)
        return False
    return True


def shutdown(ls: CodeseekServer, params: Any) -> None:
    ls.stop_roots()


async def did_change_configuration(ls: CodeseekServer, params: lsp.DidChangeConfigurationParams) -> None:
    before = ls.options
    config = await _configuration(ls)
    if config is None and isinstance(params.settings, dict):
        config = params.settings.get("codeseek", params.settings)
    after = ls.apply_options(ls.init_options, config)
    if any(getattr(before, k) != getattr(after, k) for k in INDEX_OPTIONS):
        await ls.restart_roots()


# --- documents and files --------------------------------------------------------------------------


def _overlay(ls: CodeseekServer, uri: str, text: str | None) -> bool:
    """Record (or, with None, drop) a buffer's text as its file's content; True if `uri` is in a root."""
    found = ls.locate(uri)
    if found is None:
        return False
    root, rel = found
    if text is None:
        if root.workspace.clear_overlay(rel) >= BIG_BUFFER and ls.loop is not None:
            ls.loop.run_in_executor(None, release_memory)  # give a big buffer's memory back
    elif not root.workspace.set_overlay(rel, text):
        log.info("%s: the buffer (%d characters) is larger than maxFileSize; not indexed", rel, len(text))
    return True


def did_open(ls: CodeseekServer, params: lsp.DidOpenTextDocumentParams) -> None:
    if _overlay(ls, params.text_document.uri, params.text_document.text):
        ls.schedule(params.text_document.uri, DEBOUNCE_S)


def did_change(ls: CodeseekServer, params: lsp.DidChangeTextDocumentParams) -> None:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    if _overlay(ls, doc.uri, doc.source):
        ls.schedule(doc.uri, DEBOUNCE_S)


def did_save(ls: CodeseekServer, params: lsp.DidSaveTextDocumentParams) -> None:
    if params.text is not None:
        _overlay(ls, params.text_document.uri, params.text)
    ls.schedule(params.text_document.uri, 0.0)


def did_close(ls: CodeseekServer, params: lsp.DidCloseTextDocumentParams) -> None:
    if _overlay(ls, params.text_document.uri, None):
        ls.schedule(params.text_document.uri, 0.0)


def did_change_watched_files(ls: CodeseekServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    by_root: dict[RootIndex, set[str]] = {}
    deleted: dict[RootIndex, set[str]] = {}
    for change in params.changes:
        found = ls.locate(change.uri)
        if found is None:
            continue
        root, rel = found
        by_root.setdefault(root, set()).add(rel)
        if change.type == lsp.FileChangeType.Deleted:
            deleted.setdefault(root, set()).add(rel)
    for root, gone in deleted.items():  # a deleted folder: every file under it (one read of the files)
        prefixes = tuple(rel + "/" for rel in gone)
        by_root[root].update(p for p in root.codebase.files() if p.startswith(prefixes))
    for root, paths in by_root.items():
        root.request_paths(paths)


def did_change_workspace_folders(ls: CodeseekServer, params: lsp.DidChangeWorkspaceFoldersParams) -> None:
    for folder in params.event.removed:
        path = convert.uri_to_path(folder.uri)
        if path is not None:
            ls.remove_root(path)
    for folder in params.event.added:
        path = convert.uri_to_path(folder.uri)
        if path is not None:
            ls.add_root(path)


# --- requests -------------------------------------------------------------------------------------


async def semantic_search(ls: CodeseekServer, params: Any) -> dict[str, Any]:
    request = search.parse_params(params, ls.options.preset)
    if not ls.started:
        return search.empty_result(request, STARTING)
    return await ls.run_query(search.search_roots, list(ls.roots.values()), request, ls.encoding())


def _target(ls: CodeseekServer, uri: str, position: lsp.Position) -> tuple[RootIndex, Target] | None:
    """The root of `uri` and what the identifier at `position` names (the facade decides)."""
    found = ls.locate(uri)
    if found is None:
        return None
    root, rel = found
    try:
        doc = ls.workspace.get_text_document(uri)
        lines = doc.lines
        if not 0 <= position.line < len(lines):
            return None
        where = doc.position_codec.position_from_client_units(lines, position)
    except (OSError, ValueError) as exc:  # the file is gone or unreadable
        log.info("no text for %s: %s", uri, exc)
        return None
    target = root.codebase.definitions(rel, position.line + 1, lines[position.line], where.character)
    return None if target is None else (root, target)


async def references(ls: CodeseekServer, params: lsp.ReferenceParams) -> list[lsp.Location] | None:
    def run() -> list[lsp.Location] | None:
        found = _target(ls, params.text_document.uri, params.position)
        if found is None:
            return None
        return navigation.references(*found, params.context.include_declaration, ls.encoding())
    return await ls.run_query(run)


async def definition(ls: CodeseekServer, params: lsp.DefinitionParams) -> list[lsp.Location] | None:
    def run() -> list[lsp.Location] | None:
        found = _target(ls, params.text_document.uri, params.position)
        return None if found is None else navigation.definition(*found, ls.encoding()) or None
    return await ls.run_query(run)


async def implementation(ls: CodeseekServer, params: lsp.ImplementationParams) -> list[lsp.Location] | None:
    def run() -> list[lsp.Location] | None:
        found = _target(ls, params.text_document.uri, params.position)
        return None if found is None else navigation.implementation(*found, ls.encoding()) or None
    return await ls.run_query(run)


async def prepare_call_hierarchy(ls: CodeseekServer, params: lsp.CallHierarchyPrepareParams
                                 ) -> list[lsp.CallHierarchyItem] | None:
    def run() -> list[lsp.CallHierarchyItem] | None:
        found = _target(ls, params.text_document.uri, params.position)
        if found is None or not found[1].definitions:
            return None
        root, target = found
        return [navigation.hierarchy_item(root, target.definitions[0], ls.encoding())]
    return await ls.run_query(run)


def _item(ls: CodeseekServer, item: lsp.CallHierarchyItem) -> tuple[RootIndex, DefinitionKey] | None:
    """The root and definition key a call-hierarchy item names (root from its data, else its URI)."""
    data = item.data if isinstance(item.data, dict) else {}
    root = ls.roots.get(Path(str(data.get("root", ""))))
    if root is None:
        found = ls.locate(item.uri)
        root = found[0] if found else None
    key = convert.item_key(data)
    return None if root is None or key is None else (root, key)


async def _hierarchy_calls(ls: CodeseekServer, item: lsp.CallHierarchyItem,
                           calls: Callable[[RootIndex, DefinitionKey, str], list[T] | None]
                           ) -> list[T] | None:
    """`calls` of the definition a call-hierarchy item names (None when it names none any more)."""
    def run() -> list[T] | None:
        found = _item(ls, item)
        return None if found is None else calls(*found, ls.encoding())
    return await ls.run_query(run)


async def incoming_calls(ls: CodeseekServer, params: lsp.CallHierarchyIncomingCallsParams
                         ) -> list[lsp.CallHierarchyIncomingCall] | None:
    return await _hierarchy_calls(ls, params.item, navigation.incoming_calls)


async def outgoing_calls(ls: CodeseekServer, params: lsp.CallHierarchyOutgoingCallsParams
                         ) -> list[lsp.CallHierarchyOutgoingCall] | None:
    return await _hierarchy_calls(ls, params.item, navigation.outgoing_calls)


async def on_hover(ls: CodeseekServer, params: lsp.HoverParams) -> lsp.Hover | None:
    if not ls.options.hover:
        return None

    def run() -> lsp.Hover | None:
        found = _target(ls, params.text_document.uri, params.position)
        if found is None or not found[1].definitions:
            return None
        root, target = found
        d = target.definitions[0]
        indexed_as = root.codebase.language(d.path)
        language = indexed_as if indexed_as is not None else \
            ls.workspace.get_text_document(params.text_document.uri).language_id
        similar = hover.MAX_SIMILAR if ls.options.embeddings else 0
        info = root.codebase.related(d, similar, per_definition=True)
        text = hover.build(root, d, info, language)
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text))
    return await ls.run_query(run)


async def workspace_symbol(ls: CodeseekServer, params: lsp.WorkspaceSymbolParams
                           ) -> list[lsp.WorkspaceSymbol]:
    return await ls.run_query(navigation.workspace_symbols, list(ls.roots.values()), params.query,
                              ls.encoding())


# --- commands -------------------------------------------------------------------------------------


def _roots_for(ls: CodeseekServer, args: tuple[Any, ...]) -> list[RootIndex]:
    if not args:
        return list(ls.roots.values())
    spec = args[0]
    uri = spec.get("root") if isinstance(spec, dict) else spec
    if not isinstance(uri, str):
        raise bad_params(f"codeseek command argument must be a root URI or {{root: URI}}, got {spec!r}")
    found = ls.locate(uri.rstrip("/") + "/x") or ls.locate(uri)
    if found is None:
        raise bad_params(f"{uri} is not a workspace folder")
    return [found[0]]


async def cmd_reindex(ls: CodeseekServer, *args: Any) -> dict[str, Any]:
    roots = _roots_for(ls, args)
    for root in roots:
        root.request_full()
    return {"queued": [str(r.root) for r in roots]}


async def cmd_status(ls: CodeseekServer, *args: Any) -> dict[str, Any]:
    roots = _roots_for(ls, args)
    states = await ls.run_query(lambda: [r.status() for r in roots])
    for root, state in zip(roots, states, strict=True):
        state["idle"] = ls.idle(root)
    return {"version": ls.version, "roots": states, "options": to_json(ls.options)}


def create_server() -> CodeseekServer:
    """A server with every codeseek feature registered."""
    ls = CodeseekServer()
    features: list[tuple[str, Any, Any]] = [
        (lsp.INITIALIZE, initialize, None),
        (lsp.INITIALIZED, initialized, None),
        (lsp.SHUTDOWN, shutdown, None),
        (lsp.WORKSPACE_DID_CHANGE_CONFIGURATION, did_change_configuration, None),
        (lsp.TEXT_DOCUMENT_DID_OPEN, did_open, None),
        (lsp.TEXT_DOCUMENT_DID_CHANGE, did_change, None),
        (lsp.TEXT_DOCUMENT_DID_SAVE, did_save, lsp.SaveOptions(include_text=False)),
        (lsp.TEXT_DOCUMENT_DID_CLOSE, did_close, None),
        (lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, did_change_watched_files, None),
        (lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, did_change_workspace_folders, None),
        (SEARCH_METHOD, semantic_search, None),
        (lsp.TEXT_DOCUMENT_REFERENCES, references, None),
        (lsp.TEXT_DOCUMENT_DEFINITION, definition, None),
        (lsp.TEXT_DOCUMENT_IMPLEMENTATION, implementation, None),
        (lsp.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY, prepare_call_hierarchy, None),
        (lsp.CALL_HIERARCHY_INCOMING_CALLS, incoming_calls, None),
        (lsp.CALL_HIERARCHY_OUTGOING_CALLS, outgoing_calls, None),
        (lsp.TEXT_DOCUMENT_HOVER, on_hover, None),
        (lsp.WORKSPACE_SYMBOL, workspace_symbol, None),
    ]
    for method, handler, options in features:
        ls.feature(method, options)(handler)
    ls.command("codeseek.reindex")(cmd_reindex)
    ls.command("codeseek.status")(cmd_status)
    return ls
