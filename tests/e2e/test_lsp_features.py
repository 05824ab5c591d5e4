"""End-to-end: one real `python -m lsp_server.lsp.server` on a copy of tests/workspace/sample (text, structure
and graph; no embeddings), asserting exact locations for every request the server answers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from tests.e2e import lsp_support as S

pytestmark = pytest.mark.asyncio(loop_scope="module")

PARSER = "feedreader/parser.py"
DIGEST = "feedreader/digest.py"
STORE = "feedreader/store.py"
FETCH = "feedreader/fetch.py"
TESTS = "tests/test_parser.py"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[LanguageClient, Path]]:
    async with S.served_sample(tmp_path_factory.mktemp("lsp-features")) as served:
        yield served


_loc = S.location
_at = S.at


async def test_initialize_advertises_the_presets_and_results_name_theirs(
        served: tuple[LanguageClient, Path]) -> None:
    client, _ = served
    experimental = client.init_result.capabilities.experimental  # type: ignore[attr-defined]
    assert experimental == {"codeseek": {"presets": ["quick", "default", "thorough"],
                                         "defaultPreset": "default"}}
    for preset in experimental["codeseek"]["presets"]:
        answer = await S.search(client, {"query": "how are feed dates parsed", "preset": preset})
        assert answer["preset"] == preset and answer["results"]


async def test_search_identifier_gives_definition_and_lsp_range(served: tuple[LanguageClient, Path]) -> None:
    client, root = served
    answer = await S.search(client, {"query": "parse_date", "limit": 5})
    top = answer["results"][0]
    line = S.line_of(root, PARSER, "def parse_date(")
    assert (top["path"], top["start_line"], top["symbol"]) == (PARSER, line + 1, "parse_date")
    assert top["uri"] == S.uri(root, PARSER)
    assert top["range"]["start"] == {"line": line, "character": 0}
    assert top["range"]["end"]["line"] == top["end_line"]
    assert answer["intent"]["name"] == "find_definition"
    assert answer["index"]["state"] == "text-only" and answer["index"]["files"] == 9
    assert len(answer["results"]) <= 5


async def test_search_scope_and_references_intent(served: tuple[LanguageClient, Path]) -> None:
    client, root = served
    scoped = await S.search(client, {"query": "parse_date", "include": ["tests/**"]})
    assert scoped["results"] and {r["path"] for r in scoped["results"]} == {TESTS}
    callers = await S.search(client, {"query": "who calls parse_date"})
    assert callers["intent"]["name"] == "find_references"
    got = [(r["path"], r["start_line"], r["symbol"]) for r in callers["results"]]
    expected_lines = [S.line_of(root, PARSER, text) + 1 for text in (
        'published = parse_date(item.findtext(f"{ATOM}published"))',
        'published = parse_date(item.findtext(f"{ATOM}updated"))',
        'published=parse_date(item.findtext("pubDate"))')]
    assert [(PARSER, n, "parse_entry") for n in expected_lines] == got[:3]
    prose = await S.search(client, {"query": "retry download with exponential backoff"})
    assert (prose["results"][0]["path"], prose["results"][0]["symbol"]) == (FETCH, "download")


async def test_references_from_declaration_and_call_site(served: tuple[LanguageClient, Path]) -> None:
    client, root = served
    declaration = _at(root, PARSER, "def parse_date(", "parse_date")
    sites = [
        _at(root, PARSER, 'published = parse_date(item.findtext(f"{ATOM}published"))', "parse_date"),
        _at(root, PARSER, 'published = parse_date(item.findtext(f"{ATOM}updated"))', "parse_date"),
        _at(root, PARSER, 'published=parse_date(item.findtext("pubDate"))', "parse_date"),
        _at(root, TESTS, 'assert parse_date("Tue, 10 Jun 2003', "parse_date"),
        _at(root, TESTS, 'assert parse_date("2003-12-13T18:30:02Z")', "parse_date"),
    ]
    with_decl = await S.references(client, root, PARSER, "def parse_date(", "parse_date", True)
    assert with_decl is not None
    assert [_loc(loc, root) for loc in with_decl] == [declaration, *sites]
    without = await S.references(client, root, TESTS, 'assert parse_date("2003-12-13T18:30:02Z")',
                                 "parse_date", False)
    assert without is not None and [_loc(loc, root) for loc in without] == sites


async def test_references_of_a_class_and_textual_fallback(served: tuple[LanguageClient, Path]) -> None:
    client, root = served
    refs = await S.references(client, root, PARSER, "class Entry:", "Entry", False)
    assert refs is not None
    lines = (root / PARSER).read_text().splitlines()
    constructed = [(PARSER, i, lines[i].index("Entry("), lines[i].index("Entry(") + 5)
                   for i, text in enumerate(lines) if "return Entry(" in text]
    store_line = S.line_of(root, STORE, "Entry(url, guid")
    assert len(constructed) == 2
    assert [_loc(loc, root) for loc in refs] == [*constructed, _at(root, STORE, "Entry(url, guid", "Entry")]
    assert store_line > 0
    # A constant has no call sites: its uses are found as identifier occurrences in current text.
    uses = await S.references(client, root, FETCH, 'headers = {"User-Agent": USER_AGENT}', "USER_AGENT", True)
    assert uses is not None
    assert [_loc(loc, root) for loc in uses] == [
        _at(root, FETCH, "USER_AGENT = ", "USER_AGENT"),
        _at(root, FETCH, 'headers = {"User-Agent": USER_AGENT}', "USER_AGENT")]


async def test_call_hierarchy_both_directions(served: tuple[LanguageClient, Path]) -> None:
    client, root = served
    items = await S.prepare(client, root, DIGEST, "def build_digest(", "build_digest")
    assert items is not None and len(items) == 1
    item = items[0]
    line = S.line_of(root, DIGEST, "def build_digest(")
    assert (item.name, item.kind, item.uri) == ("build_digest", lsp.SymbolKind.Function, S.uri(root, DIGEST))
    assert (item.selection_range.start.line, item.selection_range.start.character) == (line, 4)
    outgoing = await client.call_hierarchy_outgoing_calls_async(
        lsp.CallHierarchyOutgoingCallsParams(item=item))
    assert outgoing is not None
    got = [(o.to.name, o.to.uri, S.spans(o.from_ranges)) for o in outgoing]
    assert got == [
        ("unread", S.uri(root, STORE),
         [S.word_range(root, DIGEST, "entries = store.unread(limit)", "unread")]),
        ("format_digest_line", S.uri(root, DIGEST),
         [S.word_range(root, DIGEST, "lines.extend(format_digest_line(", "format_digest_line")]),
        ("mark_read", S.uri(root, STORE), [S.word_range(root, DIGEST, "store.mark_read([", "mark_read")]),
    ]
    save = await S.prepare(client, root, STORE, "def save_entries(", "save_entries")
    assert save is not None
    incoming = await client.call_hierarchy_incoming_calls_async(
        lsp.CallHierarchyIncomingCallsParams(item=save[0]))
    assert incoming is not None
    assert [(i.from_.name, i.from_.uri, S.spans(i.from_ranges)) for i in incoming] == [
        ("refresh_feed", S.uri(root, FETCH),
         [S.word_range(root, FETCH, "return store.save_entries(entries, etag)", "save_entries")])]


async def test_hover_related_code_panel(served: tuple[LanguageClient, Path]) -> None:
    client, root = served
    hover = await S.hover(client, root, PARSER, "entries = [parse_entry(feed_url, item)", "parse_entry")
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    assert hover.contents.kind == lsp.MarkupKind.Markdown
    text = hover.contents.value
    target = S.uri(root, PARSER)
    line = {name: S.line_of(root, rel, text) + 1 for name, rel, text in (
        ("parse_entry", PARSER, "def parse_entry("), ("parse_feed", PARSER, "def parse_feed("),
        ("parse_date", PARSER, "def parse_date("), ("clean_text", PARSER, "def clean_text("),
        ("Entry", PARSER, "class Entry:"))}
    signature = "def parse_entry(feed_url: str, item: ElementTree.Element) -> Entry:"
    assert text.startswith(f"```python\n{signature}\n```\n")
    assert "Build an Entry from an RSS" in text.splitlines()[4]

    def link(name: str) -> str:
        return f"`{name}` [{PARSER}:{line[name]}]({target}#L{line[name]})"

    assert f"*function* {link('parse_entry')}" in text
    called_by = text.split("**Called by**")[1].split("**Calls**")[0]
    assert called_by.strip() == f"- {link('parse_feed')}"
    calls = text.split("**Calls**")[1].strip().splitlines()
    assert sorted(calls) == sorted(f"- {link(n)}" for n in ("parse_date", "clean_text", "Entry"))
    assert "Similar code" not in text  # no vectors: embeddings are off in this module


async def test_workspace_symbols_fuzzy(served: tuple[LanguageClient, Path]) -> None:
    client, root = served
    found = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="prsdt"))
    assert found
    first = found[0]
    # The client may read the (structurally identical) answer as SymbolInformation.
    assert isinstance(first, (lsp.WorkspaceSymbol, lsp.SymbolInformation))
    assert isinstance(first.location, lsp.Location)
    assert first.name == "parse_date" and first.kind == lsp.SymbolKind.Function
    assert _loc(first.location, root) == _at(root, PARSER, "def parse_date(", "parse_date")
    exact = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="unread"))
    assert exact and exact[0].name == "unread" and exact[0].container_name == "FeedStore"
    camel = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="fRT"))
    assert camel and camel[0].name == "formatRelativeTime"
    assert isinstance(camel[0].location, lsp.Location)
    assert _loc(camel[0].location, root) == _at(root, "web/timeline.js", "export function formatRelativeTime",
                                                "formatRelativeTime")
    nothing = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="zzqx"))
    assert nothing == []


async def test_commands_status_and_reindex(served: tuple[LanguageClient, Path]) -> None:
    client, root = served
    status = await S.status(client)
    (state,) = status["roots"]
    assert state["root"] == str(root.resolve())
    assert (state["files"], state["state"], state["embedded"], state["model"]) == (9, "text-only", 0, None)
    assert status["options"]["embeddings"] is False
    queued = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="codeseek.reindex", arguments=[S.uri(root, "")]))
    assert queued == {"queued": [str(root.resolve())]}
    again = await S.wait_state(client, ("text-only",))
    assert again["roots"][0]["last_job"]["parsed"] == 0  # nothing changed: nothing re-parsed
