"""The text index's file documents: exact strings found through one trigram document a file, kept in
step by updates, and written after the rest when a one-shot command defers them."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from indexing.records import Chunk
from retrievers.sources.text import TextRetriever
from retrievers.sources.text_files import FileChunks
from retrievers.sources.text_identity import matches, read_marker
from tests.unit.test_text_retriever import write_files

FILES = {
    "pkg/messages.py": (
        'def refuse(url):\n'
        '    raise ValueError("Invalid URL %r: No scheme supplied" % url)\n'
        '\n'
        '\n'
        'def split_message():\n'
        '    return ("the connection pool " "is full, discarding")\n'
    ),
    "pkg/other.py": (
        "def unrelated():\n"
        "    return 'invalid url'\n"
    ),
}


def chunks_of(root: Path, path: str, first_id: int) -> list[Chunk]:
    """One chunk a blank-line-separated block, with the file's real byte offsets."""
    data = (root / path).read_bytes()
    out, start = [], 0
    for n, block in enumerate(data.split(b"\n\n\n")):
        end = start + len(block)
        line = data[:start].count(b"\n") + 1
        out.append(Chunk(path=path, language="python", start_line=line, end_line=line + block.count(b"\n"),
                         start_byte=start, end_byte=end, kind="function", symbol=f"f{first_id + n}",
                         labels=("source",), content_hash=hashlib.sha1(block).hexdigest(), id=first_id + n))
        start = end + 3
    return out


def text_reader(root: Path) -> Callable[[Chunk], str | None]:
    def read_text(chunk: Chunk) -> str | None:
        try:
            return (root / chunk.path).read_bytes()[chunk.start_byte:chunk.end_byte].decode()
        except FileNotFoundError:
            return None
    return read_text


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    return write_files(tmp_path / "ws", FILES)


@pytest.fixture()
def chunks(root: Path) -> list[Chunk]:
    return chunks_of(root, "pkg/messages.py", 1) + chunks_of(root, "pkg/other.py", 10)


def retriever(tmp_path: Path, root: Path) -> TextRetriever:
    return TextRetriever(tmp_path / "index", text_reader(root), read_file=lambda p: (root / p).read_bytes())


def found(r: TextRetriever, needle: str) -> list[int]:
    return [h.chunk_id for h in r.exact(needle, 10)]


def test_exact_strings_are_found_through_one_document_a_file(tmp_path: Path, root: Path, chunks) -> None:
    r = retriever(tmp_path, root)
    r.index(chunks)
    assert found(r, "Invalid URL") == [1, 10]  # (case-sensitive first; the other file's lower case)
    assert found(r, "pool is full") == [2]  # a message split over two literals
    assert found(r, "no such text anywhere") == []
    held, files = r._fingerprints()
    assert sorted(held) == [1, 2, 10] and len(files) == 2  # a document a chunk, and one a file
    r.close()


def test_an_update_rewrites_the_documents_of_the_files_it_touches(tmp_path: Path, root: Path, chunks) -> None:
    r = retriever(tmp_path, root)
    r.index(chunks)
    (root / "pkg/other.py").write_text("def unrelated():\n    return 'a brand new message'\n")
    r.update(chunks_of(root, "pkg/other.py", 20), [10])
    assert found(r, "brand new message") == [20]
    assert found(r, "Invalid URL %r") == [1]  # the old text is gone with its file's document
    r.update([], [1, 2])  # the whole file gone
    assert found(r, "Invalid URL") == [] and found(r, "pool is full") == []
    assert len(r._fingerprints()[1]) == 1
    r.close()


def test_a_deferred_write_comes_after_the_rest_and_marks_the_folder_last(tmp_path: Path, root: Path,
                                                                         chunks) -> None:
    later: list[Callable[[], object]] = []
    r = retriever(tmp_path, root)
    r.defer_files(later)
    r.index(chunks, "owner")
    r.mark("owner", "key-1")
    assert len(later) == 1 and r._fingerprints()[1] == {}  # chunk documents only, so far
    assert not matches(r._dir, "owner", "key-1")  # nothing adopts the folder before they are in
    while later:  # (as `WriteBehind.flush`: the first step queues the last)
        later.pop(0)()
    assert len(r._fingerprints()[1]) == 2
    assert matches(r._dir, "owner", "key-1")
    assert found(r, "pool is full") == [2]
    r.close()
    again = retriever(tmp_path, root)  # the next process adopts it as it is
    again.adopt(chunks, "owner", "key-1")
    assert found(again, "Invalid URL") == [1, 10]
    again.close()


def test_an_exact_search_before_the_deferred_write_makes_it_first(tmp_path: Path, root: Path, chunks) -> None:
    later: list[Callable[[], object]] = []
    r = retriever(tmp_path, root)
    r.defer_files(later)
    r.index(chunks, "owner")
    r.mark("owner", "key-1")
    assert found(r, "Invalid URL") == [1, 10]
    assert matches(r._dir, "owner", "key-1")
    for write in later:  # (the queued steps find nothing left to do)
        write()
    assert len(r._fingerprints()[1]) == 2
    r.close()


def test_a_process_killed_before_the_deferred_write_leaves_an_index_the_next_one_completes(
        tmp_path: Path, root: Path, chunks) -> None:
    r = retriever(tmp_path, root)
    r.defer_files([])
    r.index(chunks, "owner")
    r.mark("owner", "key-1")
    r.close()  # (its queued steps never run)
    assert read_marker(r._dir).get("synced") == ""
    again = retriever(tmp_path, root)
    again.adopt(chunks, "owner", "key-1")  # not adoptable: reconciled, the file documents written
    assert found(again, "pool is full") == [2]
    assert len(again._fingerprints()[1]) == 2
    again.close()


def test_file_chunks_group_by_file_and_patch_what_an_update_touched(chunks) -> None:
    files = FileChunks.of({c.id: c for c in chunks})
    assert files.paths() == ["pkg/messages.py", "pkg/other.py"]
    assert [c.id for c in files.chunks_of("pkg/messages.py")] == [1, 2]
    moved = replace(chunks[1], id=7)
    patched, touched = files.patched([moved], [chunks[1]])
    assert touched == {"pkg/messages.py"}
    assert [c.id for c in patched.chunks_of("pkg/messages.py")] == [1, 7]
    assert [c.id for c in files.chunks_of("pkg/messages.py")] == [1, 2]  # (the old grouping is kept)
    before, after = files.wanted(), patched.wanted()
    assert before.keys() == after.keys()
    assert [after[k][1] != before[k][1] for k in sorted(after)].count(True) == 1


def test_a_file_that_cannot_be_read_gets_an_empty_document(tmp_path: Path, root: Path, chunks) -> None:
    def read_file(path: str) -> bytes:
        if path == "pkg/other.py":
            raise PermissionError(path)
        return (root / path).read_bytes()
    r = TextRetriever(tmp_path / "index", text_reader(root), read_file=read_file)
    r.index(chunks)
    assert len(r._fingerprints()[1]) == 2  # (written, so a reconciliation does not retry it each time)
    assert found(r, "Invalid URL") == [1]  # the unreadable file's chunk is found by no exact string
    r.close()


def test_a_deferred_write_that_fails_is_rolled_back_and_left_unmarked(
        tmp_path: Path, root: Path, chunks, monkeypatch: pytest.MonkeyPatch) -> None:
    import retrievers.sources.text_files as text_files

    def broken(key: int, fp: int, texts: list[str]) -> object:
        raise ValueError("no document")
    later: list[Callable[[], object]] = []
    r = retriever(tmp_path, root)
    r.defer_files(later)
    r.index(chunks, "owner")
    r.mark("owner", "key-1")
    monkeypatch.setattr(text_files, "file_document", broken)
    while later:
        later.pop(0)()  # (the failure is logged, not raised)
    assert r._fingerprints()[1] == {} and not matches(r._dir, "owner", "key-1")
    r.close()
    monkeypatch.undo()
    again = retriever(tmp_path, root)
    again.adopt(chunks, "owner", "key-1")  # not adoptable: reconciled, the file documents written
    assert found(again, "pool is full") == [2] and len(again._fingerprints()[1]) == 2
    again.close()


def test_the_file_documents_get_two_indexing_threads_when_nothing_else_is_queued_behind_them(
        tmp_path: Path, root: Path, chunks, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command whose other saves were written while it waited for its embedding only waits for the
    file documents after its answer: tantivy indexes them on both cores. Beside the graph's save they
    get one thread. Either way the index holds the same documents."""
    import os

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    for behind in (0, 1):
        later: list[Callable[[], object]] = []
        r = retriever(tmp_path / str(behind), root)
        r.defer_files(later)
        r.index(chunks, "owner")
        r.mark("owner", "key-1")
        later.extend(lambda: None for _ in range(behind))  # (a graph save queued behind)
        first = later.pop(0)  # (the step that starts them, as `WriteBehind.flush_one` takes it)
        assert r._feed_threads() == (1 if behind else 2)
        first()
        while later:
            later.pop(0)()
        assert len(r._fingerprints()[1]) == 2 and matches(r._dir, "owner", "key-1")
        assert found(r, "pool is full") == [2] and found(r, "Invalid URL") == [1, 10]
        r.close()
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert retriever(tmp_path / "one", root)._feed_threads() == 1


def test_after_the_answer_the_thread_that_hands_over_the_file_documents_commits_them(
        tmp_path: Path, root: Path, chunks) -> None:
    """Started after the answer (the queue's first step), the file documents are committed by the
    thread that hands them over, beside the saves still queued; the last step waits for it and only then
    marks the folder."""
    later: list[Callable[[], object]] = []
    r = retriever(tmp_path, root)
    r.defer_files(later)
    r.index(chunks, "owner")
    r.mark("owner", "key-1")
    later.pop(0)()  # (the step that starts them)
    feeding = r._deferred.feeding if r._deferred is not None else None
    assert feeding is not None
    feeding.join()
    r._index.reload()
    assert r._deferred is not None and r._deferred.committed and len(r._fingerprints()[1]) == 2
    assert not matches(r._dir, "owner", "key-1")  # (the mark waits for the last step)
    assert len(later) == 1
    later.pop(0)()
    assert matches(r._dir, "owner", "key-1") and found(r, "pool is full") == [2]
    r.close()


def test_a_wait_long_enough_starts_the_file_documents_and_leaves_their_commit_queued(
        tmp_path: Path, root: Path, chunks) -> None:
    """A command waiting for its embedding starts its file documents on the idle core when one thread
    should be done within the time left (their bytes at `INDEX_RATE` plus a margin), not when it
    should not; their commit and the folder's mark wait for the queued step, after the answer."""
    from retrievers.sources.text_deferred import START_MARGIN_S

    later: list[Callable[[], object]] = []
    r = retriever(tmp_path, root)
    r.defer_files(later)
    r.index(chunks, "owner")
    r.mark("owner", "key-1")
    assert not r.start_files_within(START_MARGIN_S)  # (no time for them beyond the margin)
    assert r._deferred is not None and r._deferred.feeding is None
    assert r.start_files_within(START_MARGIN_S + 1.0)
    assert not r.start_files_within(60.0)  # (once)
    feeding = r._deferred.feeding
    assert feeding is not None
    feeding.join()  # (all handed to the writer: a searcher still sees none of them)
    r._index.reload()
    assert not r._deferred.committed and r._fingerprints()[1] == {}
    assert not matches(r._dir, "owner", "key-1")  # nothing committed or marked yet
    assert len(later) == 2  # (the starting step, now nothing to do, and the commit it queued)
    while later:
        later.pop(0)()
    assert len(r._fingerprints()[1]) == 2 and matches(r._dir, "owner", "key-1")
    assert found(r, "pool is full") == [2]
    r.close()
