"""The tantivy text retriever: BM25 with field boosts, exact strings verified on lines, persistence."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

import pytest

from indexing.records import Chunk
from retrievers.base import IndexedRetriever, Query, Retriever, RetrieverError
from retrievers.scope import Scope
from retrievers.sources.literals import match_lines
from retrievers.sources.text import TextOptions, TextRetriever, writer_heap

FILES = {
    "src/netlib/utils.py": '''\
import os


def select_proxy(url, proxies):
    """Select a proxy for the url, if applicable."""
    proxies = proxies or {}
    return proxies.get(url)


def send(self, request, proxy=None):
    proxy = proxy or self.proxy
    conn = self.get_connection(request.url, proxy)
    proxy_headers = self.proxy_headers(proxy)
    return conn.urlopen(proxy=proxy, headers=proxy_headers)


def prepare_url(url):
    if not url.startswith("http"):
        raise InvalidURL("Invalid URL %r: No scheme supplied" % url)
    return url
''',
    "src/netlib/decoys.py": '''\
def decoy_trigrams():
    x = "invalid id"
    y = "bad url %r"
    return x + y


def lower_message():
    return "the invalid url %r was rejected"


def call_shapes():
    value = foo(bar)
    mapping = {"a:b": 1}
    cmd = ["ls", "-x"]
    return value, mapping, cmd
''',
}

# (path, start, end, symbol) for each chunk; ids are assigned below.
SPANS = [
    ("src/netlib/utils.py", 1, 1, None),
    ("src/netlib/utils.py", 4, 7, "select_proxy"),
    ("src/netlib/utils.py", 10, 14, "send"),
    ("src/netlib/utils.py", 17, 20, "prepare_url"),
    ("src/netlib/decoys.py", 1, 4, "decoy_trigrams"),
    ("src/netlib/decoys.py", 7, 8, "lower_message"),
    ("src/netlib/decoys.py", 11, 15, "call_shapes"),
]


def make_chunk(root: Path, cid: int, path: str, start: int, end: int, symbol: str | None) -> Chunk:
    lines = (root / path).read_text().splitlines(keepends=True)
    text = "".join(lines[start - 1 : end])
    return Chunk(
        path=path, language="python", start_line=start, end_line=end, start_byte=0,
        end_byte=len(text.encode()), kind="function" if symbol else "block", symbol=symbol,
        labels=("source",), content_hash=hashlib.sha1(text.encode()).hexdigest(), id=cid,
    )


def write_files(root: Path, files: dict[str, str]) -> Path:
    """`files` (relative path -> text) written below `root`; `root`."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    return write_files(tmp_path / "ws", FILES)


def reader(root: Path):
    def read_text(chunk: Chunk) -> str | None:
        try:
            lines = (root / chunk.path).read_text().splitlines(keepends=True)
        except FileNotFoundError:
            return None
        return "".join(lines[chunk.start_line - 1 : chunk.end_line])

    return read_text


@pytest.fixture()
def chunks(workspace: Path) -> list[Chunk]:
    return [make_chunk(workspace, i + 1, *span) for i, span in enumerate(SPANS)]


@pytest.fixture()
def retriever(tmp_path: Path, workspace: Path, chunks: list[Chunk]):
    r = TextRetriever(tmp_path / "index", reader(workspace))
    r.index(chunks)
    yield r
    r.close()


def by_symbol(chunks: list[Chunk]) -> dict[int, str | None]:
    return {c.id: c.symbol for c in chunks}


def test_implements_retriever_protocol(retriever: TextRetriever) -> None:
    assert isinstance(retriever, Retriever) and isinstance(retriever, IndexedRetriever)
    assert retriever.name == "text"


def test_split_identifier_query_finds_definition_first(retriever: TextRetriever, chunks) -> None:
    names = by_symbol(chunks)
    hits = retriever.search(Query("proxy"), 5)
    assert names[hits[0].chunk_id] == "select_proxy"
    assert names[hits[1].chunk_id] == "send"  # uses "proxy" six times but defines nothing by that name
    hits = retriever.search(Query("selectProxy"), 3)  # camelCase query, snake_case code
    assert names[hits[0].chunk_id] == "select_proxy"
    hits = retriever.search(Query("where is url prepared"), 3)  # stemming on body words
    assert names[hits[0].chunk_id] == "prepare_url"


def test_path_terms_are_searchable(retriever: TextRetriever, chunks) -> None:
    hits = retriever.search(Query("decoys"), 10)
    assert {chunks[i].id for i in (4, 5, 6)} <= {h.chunk_id for h in hits}


@pytest.mark.parametrize(
    "needle",
    ['"Invalid URL %r', "foo(bar)", "a:b", "-x", 'title:"x" AND (y OR z*) -w \\', "*", "", "   ", "(((",
     "\x00\x01 ctrl\x7f", "é€😀 ünïcode", "x" * 10_000, "def f(): pass " * 700],
)
def test_syntax_characters_never_raise(retriever: TextRetriever, needle: str) -> None:
    retriever.search(Query(needle, exact=needle), 5)
    retriever.search(Query(needle), 5)
    retriever.exact(needle, 5)


def test_exact_string_verified_with_lines(retriever: TextRetriever, chunks) -> None:
    names = by_symbol(chunks)
    hits = retriever.exact("Invalid URL %r", 10)
    # decoy_trigrams holds every trigram of the string but not the string: a candidate, not a match.
    decoy = next(c.id for c in chunks if c.symbol == "decoy_trigrams")
    assert decoy in retriever._exact_candidates("Invalid URL %r")
    assert [names[h.chunk_id] for h in hits] == ["prepare_url", "lower_message"]
    assert hits[0].detail.as_dict() == {"match": "exact", "lines": [19], "case_sensitive": True}
    assert hits[1].detail.case_sensitive is False and list(hits[1].detail.lines) == [8]
    assert hits[0].score > hits[1].score


@pytest.mark.parametrize(("needle", "line"), [("foo(bar)", 12), ("a:b", 13), ("-x", 14), ('"ls"', 14)])
def test_exact_special_characters(retriever: TextRetriever, chunks, needle: str, line: int) -> None:
    hits = retriever.exact(needle, 5)
    assert [by_symbol(chunks)[h.chunk_id] for h in hits] == ["call_shapes"]
    assert list(hits[0].detail.lines) == [line]


def test_exact_via_search_and_filter(retriever: TextRetriever, chunks) -> None:
    hits = retriever.search(Query('"Invalid URL %r"', exact="Invalid URL %r"), 3)
    assert by_symbol(chunks)[hits[0].chunk_id] == "prepare_url"
    assert hits[0].detail.match == "exact"
    decoys = next(c.path for c in chunks if c.path.endswith("decoys.py"))
    hits = retriever.exact("Invalid URL %r", 5, Scope.build([decoys]))
    assert [by_symbol(chunks)[h.chunk_id] for h in hits] == ["lower_message"]
    assert retriever.exact("no such string anywhere", 5) == []


def test_match_lines_multiline_and_case() -> None:
    text = "a = 1\nB = foo(\n  bar)\nfoo(\n  bar)\n"
    assert match_lines(text, "foo(\n  bar)", 10) == ([11, 12, 13, 14], True)
    assert match_lines(text, "b = FOO", 1) == ([2], False)
    assert match_lines(text, "zzz", 1) == ([], False)


def test_update_remove_and_ids(retriever: TextRetriever, workspace: Path, chunks) -> None:
    assert retriever.ids() == {c.id for c in chunks}
    proxy_id = chunks[1].id
    retriever.remove([proxy_id])
    assert proxy_id not in retriever.ids()
    assert proxy_id not in {h.chunk_id for h in retriever.search(Query("select_proxy"), 10)}
    # The file changes: the store gives the new chunk a new id.
    path = workspace / "src/netlib/utils.py"
    path.write_text(path.read_text().replace("def select_proxy(", "def choose_proxy("))
    new = make_chunk(workspace, 100, "src/netlib/utils.py", 4, 7, "choose_proxy")
    retriever.update([new], [])
    assert retriever.search(Query("choose_proxy"), 1)[0].chunk_id == 100
    assert retriever.ids() == {c.id for c in chunks} - {proxy_id} | {100}


def test_persisted_and_reconciled_after_reopen(tmp_path: Path, workspace: Path, chunks) -> None:
    first = TextRetriever(tmp_path / "index", reader(workspace))
    first.index(chunks)
    first.close()
    assert (tmp_path / "index" / "tantivy").is_dir()

    again = TextRetriever(tmp_path / "index", reader(workspace))
    assert again.ids() == {c.id for c in chunks}  # read back from disk, nothing re-added yet
    assert by_symbol(chunks)[again.search(Query("select proxy"), 1)[0].chunk_id] == "select_proxy"
    # A killed indexer: the store now has chunk 7 removed and a new chunk 50; index() reconciles.
    current = chunks[:6] + [make_chunk(workspace, 50, "src/netlib/decoys.py", 11, 15, "call_shapes")]
    again.index(current)
    assert again.ids() == {c.id for c in current}
    assert [h.chunk_id for h in again.exact("foo(bar)", 5)] == [50]
    again.close()


def test_split_literals_are_found_and_an_old_layout_is_rebuilt_on_adopt(tmp_path: Path) -> None:
    """Issue 9: a message split over adjacent literals; a v1 index adopted after the upgrade is rebuilt."""
    root = tmp_path / "split"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/errors.py").write_text(
        'def fail():\n    raise RuntimeError("the index at this path "\n'
        '                       "was written by another version")\n')
    chunk = make_chunk(root, 1, "pkg/errors.py", 1, 3, "fail")
    index_dir = tmp_path / "split-index"
    first = TextRetriever(index_dir, reader(root))
    first.index([chunk])
    [hit] = first.exact("path was written by another", 5)
    assert hit.detail.as_dict() == {"match": "exact", "lines": [2, 3], "case_sensitive": True,
                                    "split_literals": True}
    first.close()
    marker = index_dir / "tantivy" / "codeseek-text.json"
    marker.write_text('{"version": 1}')  # as an index written before joined literals existed
    second = TextRetriever(index_dir, reader(root))
    second.adopt([chunk])  # the engine adopts an index synced to the same store revision
    assert [h.chunk_id for h in second.exact("path was written by another", 5)] == [1]
    second.close()


def test_writer_budget_grows_with_the_first_write_within_bounds() -> None:
    options = TextOptions()
    assert writer_heap(options, 0) == writer_heap(options, 100) == options.heap_size  # tantivy's minimum
    assert writer_heap(options, 10_000) == 10_000 * options.heap_per_chunk
    assert writer_heap(options, 10_000_000) == options.max_heap_size
    assert writer_heap(TextOptions(heap_size=80_000_000), 10) == 80_000_000  # a raised minimum wins


def test_excluded_chunks_leave_the_list_and_the_limit_counts_the_rest(retriever: TextRetriever,
                                                                     chunks) -> None:
    ranked = [h.chunk_id for h in retriever.search(Query("url proxy"), 10)]
    assert len(ranked) >= 3
    skip = frozenset(ranked[:2])  # the two best: more than the one extra asked for a limit of 1
    hits = retriever.search(Query("url proxy", exclude=skip), 1)
    assert [h.chunk_id for h in hits] == [ranked[2]]
    every = retriever.search(Query("url proxy", exclude=skip), 10)
    assert [h.chunk_id for h in every] == ranked[2:]
    scoped = retriever.search(Query("url proxy", exclude=skip), 10, Scope.build(["src/netlib/*.py"]))
    assert skip.isdisjoint(h.chunk_id for h in scoped)


def test_a_narrow_scope_still_gets_its_limit(tmp_path: Path) -> None:
    # 60 strong matches outside the scope rank above the one inside: one over-fetch (4 x limit + 50)
    # does not reach it, so the retriever asks again for more
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src/a.py").write_text("".join(f"def f{i}():\n    return proxy_proxy(proxy)\n\n\n"
                                           for i in range(60)))
    (root / "src/b.py").write_text("def lone():\n    x = 1\n    y = 2\n    return proxy\n")
    chunks = [make_chunk(root, i + 1, "src/a.py", 4 * i + 1, 4 * i + 2, f"f{i}") for i in range(60)]
    chunks.append(make_chunk(root, 61, "src/b.py", 1, 4, "lone"))
    r = TextRetriever(tmp_path / "index", reader(root))
    try:
        r.index(chunks)
        assert len(r.search(Query("proxy"), 100)) == 61
        assert [h.chunk_id for h in r.search(Query("proxy"), 1, Scope.build(["src/b.py"]))] == [61]
    finally:
        r.close()


def test_a_write_waits_for_the_writer_another_one_holds(tmp_path: Path, workspace: Path, chunks) -> None:
    """tantivy lets one writer hold a folder (another codeseek process's, while it writes a one-shot
    command's file documents after its answer): a write waits for it; a feed does not."""
    holder = TextRetriever(tmp_path / "index", reader(workspace))
    other = TextRetriever(tmp_path / "index", reader(workspace))
    holder._get_writer()
    try:
        assert other.writer_for_feed("", len(chunks)) is None  # (busy: the feed is left out at once)
        done: list[float] = []
        writing = threading.Thread(target=lambda: (other.index(chunks), done.append(time.monotonic())))
        started = time.monotonic()
        writing.start()
        time.sleep(0.4)
        assert not done  # still waiting for the writer
        released = time.monotonic()
        holder.close()
        writing.join(30)
        assert done and done[0] >= released > started
        assert other.ids() == {c.id for c in chunks}
    finally:
        holder.close()
        other.close()


def test_a_writer_held_too_long_is_a_clear_error(tmp_path: Path, workspace: Path, chunks,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("retrievers.sources.text_schema.WRITER_WAIT_S", 0.2)
    holder = TextRetriever(tmp_path / "index", reader(workspace))
    other = TextRetriever(tmp_path / "index", reader(workspace))
    holder._get_writer()
    try:
        with pytest.raises(RetrieverError, match="being written by another codeseek process"):
            other.index(chunks)
    finally:
        holder.close()
        other.close()
