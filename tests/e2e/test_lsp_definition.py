"""End-to-end: go-to-definition, go-to-implementation, and the confident-only hover and call
hierarchy, through one real `python -m lsp_server.lsp.server` on a copy of tests/workspace/graph_sample,
asserting exact locations (the definition's name, the call's name)."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from tests.e2e import lsp_support as S

pytestmark = pytest.mark.asyncio(loop_scope="module")

GRAPH_SAMPLE = S.REPO / "tests" / "workspace" / "graph_sample"
INDEX = "express/router/index.js"
ROUTE = "express/router/route.js"
LAYER = "express/router/layer.js"
RESPONSE = "express/response.js"
SESSIONS = "requests/sessions.py"
UTILS = "requests/utils.py"
SHAPES = "shapes/base.py"
Served = tuple[LanguageClient, Path]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[LanguageClient, Path]]:
    tmp = tmp_path_factory.mktemp("lsp-definition")
    root = tmp / "graph_sample"
    shutil.copytree(GRAPH_SAMPLE, root)
    client = await S.start(root, tmp / "index")
    try:
        await S.wait_state(client, ("text-only",))
        yield client, root
    finally:
        await S.stop(client)


async def _definition(client: LanguageClient, root: Path, rel: str, text: str,
                      word: str) -> list[tuple[str, int, int, int]]:
    found = await client.text_document_definition_async(lsp.DefinitionParams(
        text_document=S.doc_id(root, rel), position=S.position_of(root, rel, text, word)))
    return _locations(found, root)


async def _implementation(client: LanguageClient, root: Path, rel: str, text: str,
                          word: str) -> list[tuple[str, int, int, int]]:
    found = await client.text_document_implementation_async(lsp.ImplementationParams(
        text_document=S.doc_id(root, rel), position=S.position_of(root, rel, text, word)))
    return _locations(found, root)


def _locations(found: object, root: Path) -> list[tuple[str, int, int, int]]:
    if found is None:
        return []
    items: Sequence[lsp.Location] = found if isinstance(found, list) else [found]  # type: ignore[list-item]
    return [S.location(loc, root) for loc in items]


async def test_definition_of_prototype_method_on_untyped_receiver(served: Served) -> None:
    client, root = served
    name = S.at(root, LAYER, "Layer.prototype.handle_error = function", "handle_error")
    assert await _definition(client, root, INDEX, "layer.handle_error(layerError", "handle_error") == [name]
    assert await _definition(client, root, ROUTE, "layer.handle_error(err", "handle_error") == [name]
    assert await _definition(client, root, INDEX, "route._handles_method(", "_handles_method") == [
        S.at(root, ROUTE, "Route.prototype._handles_method = function", "_handles_method")]


async def test_definition_of_this_set_in_response_is_res_set(served: tuple[LanguageClient, Path]) -> None:
    client, root = served
    assert await _definition(client, root, RESPONSE, "this.set('Content-Type'", "set") == [
        S.at(root, RESPONSE, "res.set = res.header = function", "set")]


async def test_definition_follows_imports_and_local_types(served: tuple[LanguageClient, Path]) -> None:
    client, root = served
    select_proxy = S.at(root, UTILS, "def select_proxy(", "select_proxy")
    got = await _definition(client, root, SESSIONS, "proxy = select_proxy(", "select_proxy")
    assert got == [select_proxy]
    assert await _definition(client, root, SESSIONS, "from .utils import select_proxy", "select_proxy") == [
        select_proxy]
    session_get = S.at(root, SESSIONS, "def get(self, url", "get")
    assert await _definition(client, root, SESSIONS, "return s.get(url)", "get") == [session_get]
    assert await _definition(client, root, SESSIONS, "first = s.get(url)", "get") == [session_get]
    assert await _definition(client, root, SESSIONS, 'token = self.cookies.get("token")', "get") == [
        S.at(root, "requests/cookies.py", "def get(self, name", "get")]
    # the cursor on a declaration names that declaration
    assert await _definition(client, root, UTILS, "def select_proxy(", "select_proxy") == [select_proxy]


async def test_definition_on_a_dict_method_is_empty(served: tuple[LanguageClient, Path]) -> None:
    client, root = served
    assert await _definition(client, root, UTILS, 'return proxies.get("all://"', "get") == []


async def test_implementation_lists_overrides_and_subclasses(served: tuple[LanguageClient, Path]) -> None:
    client, root = served
    square = S.at(root, SHAPES, "class Square(Shape):", "Square")
    circle = S.at(root, SHAPES, "class Circle(Shape):", "Circle")
    assert await _implementation(client, root, SHAPES, "class Shape:", "Shape") == [square, circle]
    lines = (root / SHAPES).read_text().splitlines()
    overrides = [(SHAPES, n, line.index("area"), line.index("area") + 4)
                 for n, line in enumerate(lines) if "def area(self)" in line][1:]
    assert len(overrides) == 2
    base_area = S.line_of(root, SHAPES, "raise NotImplementedError") - 1
    found = await client.text_document_implementation_async(lsp.ImplementationParams(
        text_document=S.doc_id(root, SHAPES), position=lsp.Position(line=base_area, character=9)))
    assert _locations(found, root) == overrides


async def test_hover_and_call_hierarchy_show_confident_links_only(served: Served) -> None:
    client, root = served
    hover = await S.hover(client, root, UTILS, "def select_proxy(", "select_proxy")
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    text = hover.contents.value
    assert "**Calls**" not in text  # proxies.get(...) is a dict's get, not LookupDict/Session/jar.get
    assert "`Session.request`" in text.split("**Called by**", 1)[1]
    items = await S.prepare(client, root, SESSIONS, "def request(self, method", "request")
    assert items is not None and len(items) == 1
    params = lsp.CallHierarchyOutgoingCallsParams(item=items[0])
    outgoing = await client.call_hierarchy_outgoing_calls_async(params)
    assert outgoing is not None
    got = sorted((o.to.name, S.spans(o.from_ranges)) for o in outgoing)
    assert got == [
        ("get", [S.word_range(root, SESSIONS, 'token = self.cookies.get("token")', "get")]),
        ("select_proxy", [S.word_range(root, SESSIONS, "proxy = select_proxy(", "select_proxy")]),
    ]


async def test_references_point_at_call_names(served: tuple[LanguageClient, Path]) -> None:
    client, root = served
    refs = await S.references(client, root, LAYER, "Layer.prototype.handle_error = function", "handle_error",
                              True)
    assert refs is not None
    assert [S.location(loc, root) for loc in refs] == [
        S.at(root, LAYER, "Layer.prototype.handle_error = function", "handle_error"),
        S.at(root, INDEX, "layer.handle_error(layerError", "handle_error"),
        S.at(root, ROUTE, "layer.handle_error(err", "handle_error"),
    ]
