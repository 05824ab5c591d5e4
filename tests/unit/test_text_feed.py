"""retrievers.sources.text_feed: the text index built while an update stores its files holds exactly the
documents `TextRetriever.index()` builds afterwards (fields made in the parse workers or in process),
only an empty index is fed, and an update that fails leaves nothing half-written. Real grammars,
SQLite store, tantivy and parse worker processes on the sample workspace."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from indexing.records import Chunk
from indexing.workspace import Workspace, WorkspaceOptions
from retrievers.base import Query
from retrievers.sources.text import TextRetriever
from retrievers.sources.text_deferred import BackgroundCommit
from retrievers.sources.text_feed import TextFeed
from retrievers.sources.text_identity import meta_digest
from retrievers.sources.text_prepare import prepare_chunks

SAMPLE = Path(__file__).resolve().parents[1] / "workspace" / "engine_sample"
EXTRA = {
    # split literals (the trigram field's joined runs), Unicode identifiers, a camelCase JS name
    "pkg/messages.py": 'def fail():\n    raise RuntimeError("the cache at this path "\n'
                       '                       "was written by another version")\n\n\n'
                       'def größeWert(maßZahl):\n    return maßZahl * 2\n',
    "web/static/widget.js": "export function renderCheckoutBanner(cartTotal) {\n"
                            "  return `Total: ${cartTotal}`;\n}\n",
}
QUERIES = ["checkout banner", "größe wert", "cart total", "payment", "order", "render", "user login"]
EXACT = ["cache at this path was written", "Total: ${cartTotal}", "maßZahl * 2", "def"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    out = tmp_path / "ws"
    shutil.copytree(SAMPLE, out)
    for rel, text in EXTRA.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text, encoding="utf-8")
    return out


def build(root: Path, index: Path, workers: int, fed: bool
          ) -> tuple[Workspace, TextRetriever, list[Chunk], tuple[str, str]]:
    """A fresh index of `root`; the text index fed by the update or left for `index()`; the meta digest
    of the text index before and after the update."""
    ws = Workspace(root, WorkspaceOptions(index_dir=index, parse_workers=workers))
    text = TextRetriever(index, ws.chunk_text)
    owner = ws.store.get_meta("generation") or ""
    before = meta_digest(index / "tantivy")
    ws.update(feed=TextFeed(text, owner) if fed else None)
    after = meta_digest(index / "tantivy")
    chunks = ws.store.chunks()
    text.index(chunks, owner)
    return ws, text, chunks, (before, after)


def answers(text: TextRetriever) -> list[object]:
    out: list[object] = [[(h.chunk_id, round(h.score, 4)) for h in text.search(Query(q), 20)]
                         for q in QUERIES]
    out += [[(h.chunk_id, h.detail.as_dict()) for h in text.exact(e, 20)] for e in EXACT]
    return out


@pytest.mark.parametrize("workers", [0, 2])
def test_a_fed_index_answers_as_one_built_after_the_update(root: Path, tmp_path: Path, workers: int,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODESEEK_PARSE_WORKERS", raising=False)
    ws, fed, chunks, (before, after) = build(root, tmp_path / "fed", workers, fed=True)
    plain_ws, plain, plain_chunks, (plain_before, plain_after) = build(root, tmp_path / "plain", 0, fed=False)
    try:
        assert [(c.id, c.path) for c in chunks] == [(c.id, c.path) for c in plain_chunks]
        assert plain_after == plain_before and after != before  # only the feed wrote during the update...
        assert meta_digest(tmp_path / "fed" / "tantivy") == after  # ...and index() had nothing left
        assert fed._fingerprints() == plain._fingerprints()
        assert answers(fed) == answers(plain)
        assert any(answers(fed)[len(QUERIES) + i] for i in range(3))  # (the queries do find things)
    finally:
        for closing in (fed, plain, ws, plain_ws):
            closing.close()


def test_only_an_empty_index_is_fed(root: Path, tmp_path: Path) -> None:
    ws, text, chunks, _ = build(root, tmp_path / "index", 0, fed=True)
    try:
        (root / "pkg" / "late.py").write_text("def settle_late_invoice():\n    return 1\n")
        feed = TextFeed(text, ws.store.get_meta("generation") or "")
        before = meta_digest(tmp_path / "index" / "tantivy")
        update = ws.update(feed=feed)
        assert update.parsed == 1 and feed.documents == 0  # the index holds documents: left to update()
        assert meta_digest(tmp_path / "index" / "tantivy") == before
        text.update(update.added, update.removed_ids)
        assert text.search(Query("settle late invoice"), 1)[0].chunk_id == update.added[0].id
    finally:
        text.close()
        ws.close()


def test_a_failed_update_leaves_the_index_empty(root: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace(root, WorkspaceOptions(index_dir=tmp_path / "index"))
    text = TextRetriever(tmp_path / "index", ws.chunk_text)
    feed = TextFeed(text, ws.store.get_meta("generation") or "")
    real, calls = ws.store.replace_file_diff, []

    def failing(*args: object) -> object:
        calls.append(args)
        if len(calls) == 3:
            raise OSError("disk unplugged")
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(ws.store, "replace_file_diff", failing)
    try:
        with pytest.raises(OSError, match="disk unplugged"):
            ws.update(feed=feed)
        assert feed.documents == 0 and not feed.committed
        assert text.ids() == set()  # what the feed added for the first two files was rolled back
        monkeypatch.setattr(ws.store, "replace_file_diff", real)
        ws.update()  # the retried update: the writer was released, the usual pass builds the index
        chunks = ws.store.chunks()
        text.index(chunks)
        assert text.ids() == {c.id for c in chunks}
    finally:
        text.close()
        ws.close()


class PreparedBy:
    """A text feed whose prepare step (run where each file is parsed) is replaced by `prepare`."""

    def __init__(self, feed: TextFeed, prepare: Callable[[list[Chunk], bytes], object]) -> None:
        self.prepare = prepare
        self.begin, self.stored, self.finish = feed.begin, feed.stored, feed.finish


@pytest.fixture
def opened(root: Path, tmp_path: Path) -> Iterator[tuple[Workspace, TextRetriever, TextFeed]]:
    ws = Workspace(root, WorkspaceOptions(index_dir=tmp_path / "index"))
    text = TextRetriever(tmp_path / "index", ws.chunk_text)
    yield ws, text, TextFeed(text, ws.store.get_meta("generation") or "")
    text.close()
    ws.close()


def fail(chunks: list[Chunk], data: bytes) -> object:
    raise ZeroDivisionError("a worker that cannot prepare")


def test_fields_a_worker_could_not_make_are_made_as_the_file_is_stored(opened) -> None:
    ws, text, feed = opened
    ws.update(feed=PreparedBy(feed, fail))  # (`prepared` stays None)
    assert feed.committed and feed.documents == len(ws.store.chunks())
    text.index(ws.store.chunks())
    [hit] = text.search(Query("größe wert"), 1)
    assert {c.id: c.path for c in ws.store.chunks()}[hit.chunk_id] == "pkg/messages.py"


def test_malformed_fields_end_the_feed_not_the_update(opened) -> None:
    ws, text, feed = opened
    update = ws.update(feed=PreparedBy(feed, lambda chunks, data: [7] * len(chunks)))  # (not pairs)
    assert update.parsed > 3 and not feed.committed and feed.documents == 0
    assert text.ids() == set()  # nothing half-written; the usual pass builds it
    text.index(ws.store.chunks())
    assert text.ids() == {c.id for c in ws.store.chunks()}


def test_prepared_fields_are_cut_where_the_index_cuts_the_text(tmp_path: Path) -> None:
    data = ("alphaBeta " * 50 + '"ab" "cd"').encode()
    chunk = Chunk("a.py", "python", 1, 1, 0, len(data), "block", None, (), "h")
    [(idents, joined)] = prepare_chunks(30, [chunk], data)
    assert idents.split() == ["alphabeta", "alpha", "beta"] * 3
    assert joined == ()
    [(_, joined)] = prepare_chunks(10_000, [chunk], data)
    assert joined == ("abcd",)


def test_a_writer_that_cannot_be_had_leaves_the_feed_out(opened, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, text, feed = opened

    def broken(owner: str, adding: int) -> None:
        raise OSError("the folder cannot be reopened")

    monkeypatch.setattr(text, "writer_for_feed", broken)
    update = ws.update(feed=feed)  # (the update goes on without it)
    assert update.parsed > 3 and not feed.committed and feed.documents == 0
    monkeypatch.undo()
    text.index(ws.store.chunks())
    assert text.ids() == {c.id for c in ws.store.chunks()}


def flushed_as(later: list[Callable[[], object]], text: TextRetriever, plain: TextRetriever) -> None:
    """Run a one-shot command's held-back steps (as `WriteBehind.flush`: the first step queues the
    last); `text` then holds and answers exactly what `plain`, built whole, does."""
    while later:
        later.pop(0)()
    assert text._fingerprints() == plain._fingerprints()
    assert answers(text) == answers(plain)


def test_a_deferring_index_is_fed_its_chunks_and_writes_its_files_last(root: Path, tmp_path: Path) -> None:
    """A one-shot command's feed leaves the file documents out; the queued steps write them, and the
    index then answers as a plain one."""
    plain_ws, plain, _, _ = build(root, tmp_path / "plain", 0, fed=False)
    ws = Workspace(root, WorkspaceOptions(index_dir=tmp_path / "late", parse_workers=0))
    text = TextRetriever(tmp_path / "late", ws.chunk_text, read_file=ws.read_bytes)
    later: list[Callable[[], object]] = []
    text.defer_files(later)
    try:
        owner = ws.store.get_meta("generation") or ""
        ws.update(feed=TextFeed(text, owner))
        text._index.reload()
        held, files = text._fingerprints()
        assert held and not files  # the chunks' documents only
        text.index(ws.store.chunks(), owner)
        assert len(later) == 1 and not text._fingerprints()[1]
        flushed_as(later, text, plain)
    finally:
        for closing in (text, plain, ws, plain_ws):
            closing.close()


def deferring(root: Path, index: Path, later: list[Callable[[], object]]
              ) -> tuple[Workspace, TextRetriever, str]:
    """A workspace and a text index whose file documents go through `later` (a one-shot command's)."""
    ws = Workspace(root, WorkspaceOptions(index_dir=index, parse_workers=0))
    text = TextRetriever(index, ws.chunk_text, read_file=ws.read_bytes)
    text.defer_files(later)
    return ws, text, ws.store.get_meta("generation") or ""


def test_a_deferring_update_returns_before_its_feed_is_committed(root: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-shot command's update leaves the feed's commit to a thread: the update returns while it
    is held, and the next read of the index waits for it and finds every chunk's document."""
    released = threading.Event()
    real_run = BackgroundCommit.run

    def held_run(self: BackgroundCommit) -> None:
        assert released.wait(30)
        real_run(self)

    monkeypatch.setattr(BackgroundCommit, "run", held_run)
    ws, text, owner = deferring(root, tmp_path / "index", [])
    written: list[int] = []
    real_document = text._document

    def document(chunk: Chunk, fp: int | None = None) -> object:
        written.append(chunk.id)
        return real_document(chunk, fp)

    monkeypatch.setattr(text, "_document", document)
    try:
        before = meta_digest(tmp_path / "index" / "tantivy")
        ws.update(feed=TextFeed(text, owner))  # (would hang here if the update waited for the commit)
        assert meta_digest(tmp_path / "index" / "tantivy") == before  # nothing committed yet
        released.set()
        chunks = ws.store.chunks()
        assert set(text._fingerprints()[0]) == {c.id for c in chunks}  # (waited for it)
        assert meta_digest(tmp_path / "index" / "tantivy") != before
        text.index(chunks, owner)
        assert written == []  # no chunk's document written again
    finally:
        released.set()
        text.close()
        ws.close()


def test_a_feed_commit_failing_behind_is_written_by_the_next_index(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    def failing_run(self: BackgroundCommit) -> None:
        self.failed = OSError("no space left on device")

    monkeypatch.setattr(BackgroundCommit, "run", failing_run)
    plain_ws, plain, _, _ = build(root, tmp_path / "plain", 0, fed=False)
    later: list[Callable[[], object]] = []
    ws, text, owner = deferring(root, tmp_path / "index", later)
    try:
        ws.update(feed=TextFeed(text, owner))
        assert text.ids() == set()  # the failed commit was rolled back, its writer let go
        assert "was not saved (no space left on device)" in caplog.text
        text.index(ws.store.chunks(), owner)
        flushed_as(later, text, plain)
    finally:
        for closing in (text, plain, ws, plain_ws):
            closing.close()


def test_a_server_feed_whose_commit_fails_is_left_to_index(root: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    """A feed that does not defer waits for its commit: one that fails leaves nothing, and says so."""
    def failing_run(self: BackgroundCommit) -> None:
        self.failed = OSError("no space left on device")

    monkeypatch.setattr(BackgroundCommit, "run", failing_run)
    ws = Workspace(root, WorkspaceOptions(index_dir=tmp_path / "index", parse_workers=0))
    text = TextRetriever(tmp_path / "index", ws.chunk_text)
    feed = TextFeed(text, ws.store.get_meta("generation") or "")
    try:
        ws.update(feed=feed)
        assert not feed.committed and feed.documents == 0 and text.ids() == set()
        assert "was not saved (no space left on device)" in caplog.text
        monkeypatch.undo()
        text.index(ws.store.chunks())
        assert text.ids() == {c.id for c in ws.store.chunks()}
    finally:
        text.close()
        ws.close()
