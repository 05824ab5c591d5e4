"""File documents a one-shot command's cold build writes after its answer: `DeferredFiles`.

The trigrams exact strings are found by (one document a file: `sources.text_files`) are most of the text
index's indexing work, and a cold `codeseek search` whose question names no exact string does not need
them to answer. Such a command holds its derived saves back until it has answered
(`indexing.persist.WriteBehind`) and then writes them on one core while the other idles; its text index
reconciles every chunk's document as it builds (`TextRetriever.index`) but owes the files' until then.
Two steps in the held-back queue write them: the first (`_add_deferred`) starts a thread that hands the
documents to tantivy's writer, which indexes them on its own thread beside the other saves (paced at
`FEED_RATE`; on two threads when no other save is left behind them: `_feed_threads`), and then commits
them, still beside those saves (the answer is given: Django sdist, the command's end ~0.2 s sooner
than when the last step committed them after the saves), and queues the last (`_complete_files`),
which waits for it and only then writes the folder's mark (`TextRetriever.mark`): until then the mark
adopts nothing, so a process killed in between leaves an index the next process reconciles (`index`
writes what is missing). An exact-string search before then writes them first
(`TextRetriever._exact_candidates`). Both steps are marked `uses_other_cores`: a command waiting for
its embedding writes its other held-back saves meanwhile (`WriteBehind.flush_alone`) but not these,
whose indexing would take the core the embedding runs on (Django sdist: answer and exit ~0.2 s
sooner); they start once it has answered, or, once those saves are written, in the wait if the
embedding should outlast them on one thread (`start_files_within`: transformers waits ~4 s), and then
the last step commits them, after the answer.

Such a command's update also leaves the commit of the chunk documents its feed added
(`sources.text_feed`) to a thread (`commit_behind`): tantivy releases the GIL while it indexes what is
still queued and writes the segments, so the command goes on to read its chunks and start embedding
them while the second core finishes the text index (on the Django sdist the update's end otherwise
waited ~0.4 s on that one thread). The retriever waits for that commit (`_settle`) before it next
reads or writes the index.

A mixin of `sources.text.TextRetriever`, which provides the attributes and methods declared here.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import suppress
from typing import TYPE_CHECKING, Any

import tantivy

from indexing.persist import uses_other_cores
from retrievers.base import RetrieverError
from retrievers.sources.text_files import FileWrites, Wanted, file_documents

if TYPE_CHECKING:
    from indexing.records import Chunk
    from retrievers.sources.text_files import FileChunks
    from retrievers.sources.text_schema import TextOptions

__all__ = ["FEED_RATE", "INDEX_RATE", "START_MARGIN_S", "BackgroundCommit", "DeferredFiles"]

log = logging.getLogger("codeseek.index")
FEED_RATE = 32_000_000  # characters a second handed to one tantivy thread (it indexes ~25-30M a second here)
FEED_AHEAD = 4_000_000  # characters handed beyond the rate before the feeding thread waits
INDEX_RATE = 25_000_000  # bytes of files a second one thread indexes, for `start_files_within`
START_MARGIN_S = 0.5  # and the time their commit and the thread switches take beyond that


class DeferredFiles:
    """`defer_files` and the steps that write the owed file documents (module docstring)."""

    options: TextOptions
    _lock: Any
    _later: list[Callable[[], object]] | None
    _deferred: FileWrites | None
    _in_memory: bool
    _read_file: Callable[[str], bytes] | None
    _writer: tantivy.IndexWriter | None
    _index: tantivy.Index
    _committing: BackgroundCommit | None

    if TYPE_CHECKING:
        def _get_writer(self, adding: int = 0, wait_s: float | None = None, threads: int = 1
                        ) -> tantivy.IndexWriter: ...
        def _by_file(self) -> FileChunks: ...
        def _text_of(self, chunk: Chunk) -> str | None: ...
        def close(self) -> None: ...
        def mark(self, owner: str, synced: str) -> None: ...

    def defer_files(self, later: list[Callable[[], object]] | None) -> None:
        """Write the file documents a reconciliation (`index`) finds missing through `later` (a
        one-shot command's held-back saves; None: as it goes)."""
        with self._lock:
            self._later = later

    @property
    def deferring(self) -> bool:
        """Whether file documents go through `defer_files`' queue (a feed then leaves them out)."""
        return self._later is not None and not self._in_memory

    def _defer(self, wanted: Mapping[int, Wanted]) -> None:
        """Owe the file documents `wanted`: a step first in the queue starts them and queues the one
        that ends them last (after whatever was queued meanwhile: tantivy gets the most time)."""
        deferred = self._deferred = self._deferred or FileWrites()
        deferred.pending.update(wanted)
        later = self._later
        assert later is not None
        later.insert(0, self._add_deferred)

    @uses_other_cores
    def _add_deferred(self) -> None:
        """Start handing the owed file documents to the writer (after the answer: the queue's steps run
        once it is given); the thread commits them once handed over, beside the saves still queued, and
        `_complete_files` waits for it."""
        self._start_feed(commit=True)

    def _start_feed(self, commit: bool) -> None:
        """Start the thread handing the owed file documents to the writer; with `commit`, it commits
        them too (else `_complete_files` does, after the answer)."""
        with self._lock:
            deferred = self._deferred
            if deferred is None or not deferred.pending or deferred.feeding is not None:
                return
            threads = self._feed_threads()
            try:
                writer = self._get_writer(len(deferred.pending), threads=threads)
            except RetrieverError as exc:  # (another process writes the index: left to the next one)
                log.warning("the text index's file documents were not written: %s", exc)
                self._deferred = None
                return
            documents = file_documents(deferred.pending, self._by_file(), self._read_file, self._text_of,
                                       self.options.max_index_chars)
            deferred.feeding = threading.Thread(target=_feed, args=(writer, documents, deferred,
                                                                    FEED_RATE * threads, commit),
                                                name="codeseek-file-documents", daemon=True)
            deferred.feeding.start()
            if self._later is not None:
                self._later.append(self._complete_files)

    def start_files_within(self, seconds: float) -> bool:
        """Start handing the owed file documents to the writer now if one indexing thread should be
        done with them within `seconds` (their files' bytes at `INDEX_RATE`, plus `START_MARGIN_S`):
        a command waiting for its embedding, its own saves written, leaves a core idle for that long
        (transformers: ~2.5 s). True when started; their commit stays queued for after the answer."""
        with self._lock:
            deferred = self._deferred
            if deferred is None or not deferred.pending or deferred.feeding is not None:
                return False
            files = self._by_file()
            size = 0
            for path, _ in deferred.pending.values():
                chunks = files.chunks_of(path)
                size += max((c.end_byte for c in chunks), default=0)
            if size / INDEX_RATE + START_MARGIN_S > seconds:
                return False
            # (one thread: its own step is still queued, and the embedding runs; the commit waits for
            # the answer: a searcher would see the documents, and BM25 their count, as they commit)
            self._start_feed(commit=False)
            return deferred.feeding is not None

    def _feed_threads(self) -> int:
        """tantivy's indexing threads for the file documents: two, on two cores or more, when no other
        held-back save is queued behind them (the command's main thread then only waits for their
        commit: the graph's save was written while it waited for its embedding); else one, beside
        the main thread's saves (a second would only share their core, and hold another budget at
        what is then the highest point of a command on some trees)."""
        if self._later or (os.cpu_count() or 1) < 2:
            return 1
        return 2

    def commit_behind(self, writer: tantivy.IndexWriter, wait: bool = False) -> bool:
        """Commit `writer` (the retriever's, a feed's documents added) on a thread of its own; the
        retriever's next read or write waits for it (`_settle`). With `wait`, waited for now: False
        when that commit failed (rolled back)."""
        with self._lock:
            self._settle()
            commit = self._committing = BackgroundCommit(writer)
            commit.start()
            return self._settle() if wait else True

    def _settle(self) -> bool:
        """Wait for a commit `commit_behind` started, then let its writer go; one that failed is rolled
        back (the documents it held are written again by the next `index`) and makes this False."""
        if self._committing is None:
            return True
        with self._lock:
            commit, self._committing = self._committing, None
            if commit is None:
                return True
            commit.join()
            if commit.failed is not None:
                log.warning("the text index built alongside the update was not saved (%s): built after",
                            commit.failed)
                with suppress(ValueError, OSError):
                    commit.writer.rollback()  # (nothing of it survives into a later commit)
            try:
                self.close()  # (the writer is let go even when its merges fail)
            except Exception as exc:
                log.warning("closing the text index's writer after the update failed: %s", exc)
                self._writer = None
            self._index.reload()
            return commit.failed is None

    def _searcher(self) -> tantivy.Searcher:
        """A searcher of the index, once a commit `commit_behind` started is done."""
        self._settle()
        return self._index.searcher()

    @uses_other_cores
    def _complete_files(self) -> None:
        """Write the owed file documents now (or wait for those being written) and commit them, then
        write the mark they held back."""
        self._settle()
        with self._lock:
            deferred = self._deferred
            if deferred is None or not deferred.pending:
                return
            if deferred.feeding is None:
                self._start_feed(commit=False)  # (committed just below)
            self._commit_deferred()

    def _commit_deferred(self) -> None:
        """Commit what the feeding thread handed to the writer (nothing when none was started)."""
        deferred = self._deferred
        if deferred is None or deferred.feeding is None:
            return
        deferred.feeding.join()
        self._deferred = None
        writer = self._writer
        try:
            if deferred.failed is not None:
                raise RetrieverError(f"handing them to the writer failed: {deferred.failed}")
            if writer is None:
                raise RetrieverError("the writer holding them was let go")
            if not deferred.committed:
                writer.commit()
        except (RetrieverError, ValueError, OverflowError, OSError) as exc:
            log.warning("the text index's file documents were not saved (the next process to open "
                        "it writes them): %s", exc)
            if writer is not None:
                writer.rollback()
            self.close()
            return
        self.close()
        self._index.reload()
        if deferred.mark is not None:
            self.mark(*deferred.mark)


class BackgroundCommit(threading.Thread):
    """`writer.commit()` on its own thread; what it raised is kept in `failed`."""

    def __init__(self, writer: tantivy.IndexWriter) -> None:
        super().__init__(name="codeseek-text-commit", daemon=True)
        self.writer = writer
        self.failed: Exception | None = None

    def run(self) -> None:
        try:
            self.writer.commit()
        except Exception as exc:  # (a full disk, a broken writer: `_settle` reports and rolls back)
            self.failed = exc


def _feed(writer: tantivy.IndexWriter, documents: Iterator[tuple[tantivy.Document, int]],
          deferred: FileWrites, rate: float = FEED_RATE, commit: bool = False) -> None:
    """Hand `documents` ((document, its characters)) to `writer`, at most `FEED_AHEAD` characters
    ahead of `rate` a second, then with `commit` commit them (`deferred.committed`); a failure is kept
    in `deferred.failed` for the commit to report (and roll back)."""
    try:
        sent, started = 0, time.monotonic()
        for document, size in documents:
            writer.add_document(document)
            sent += size
            ahead = sent - FEED_AHEAD - rate * (time.monotonic() - started)
            if ahead > 0:
                time.sleep(ahead / rate)
        if commit:
            writer.commit()
            deferred.committed = True
    except Exception as exc:  # (whatever tantivy raised: reported by the commit, which then rolls back)
        deferred.failed = exc
