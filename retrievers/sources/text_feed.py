"""The text index built as a cold update stores its files (`indexing.file_feed.FileFeed`).

Built after the update, the text index reads every chunk's text back from its file and derives its
documents on the main thread: on the whole Django sdist ~5.4 s of a ~19 s cold command, most of it
splitting identifiers and joining string literals while the second core idles. Fed by the update
instead, the parse workers make those two fields beside the parse (`sources.text_prepare`), the main
thread adds each file's documents as the file is stored (tantivy indexes them on its own thread,
outside the GIL) and the update commits them before it releases the store's writer lock; a one-shot
command's update leaves that commit to a thread (`TextRetriever.commit_behind`) and goes on to read its
chunks and start embedding them while tantivy finishes on the other core.

Only an empty index on disk is fed (a cold build, a rebuilt or wiped folder): `TextRetriever.index()`
then finds every document it needs already there (by fingerprint) and writes only what the feed
missed. Any failure (a full disk, a writer another process holds) rolls the feed back and leaves the
whole index to `index()`, as without a feed.
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING, Any

import tantivy

from indexing.file_feed import Prepare
from indexing.records import Chunk
from retrievers.sources.text_files import file_texts
from retrievers.sources.text_prepare import chunk_text, prepare_chunks
from retrievers.sources.text_schema import document, file_document, file_fingerprint, fingerprint, path_key
from retrievers.sources.tokenize import identifier_text

if TYPE_CHECKING:
    from retrievers.sources.text import TextRetriever

__all__ = ["TextFeed"]

log = logging.getLogger("codeseek.index")
CHUNKS_PER_FILE = 16  # for the writer's memory budget before the chunks are known


class TextFeed:
    """Feeds one update's stored chunks into an empty text index; see the module docstring."""

    def __init__(self, text: TextRetriever, owner: str) -> None:
        self._text = text
        self._owner = owner
        self._max_chars = text.options.max_index_chars
        self._writer: tantivy.IndexWriter | None = None
        self.documents = 0  # added by this feed (committed when `finish(True)` succeeded)
        self.committed = False

    @property
    def prepare(self) -> Prepare:
        return functools.partial(prepare_chunks, self._max_chars)

    def begin(self, files: int) -> bool:
        self.documents, self.committed = 0, False
        if files <= 0:
            return False
        try:
            self._writer = self._text.writer_for_feed(self._owner, files * CHUNKS_PER_FILE)
        except Exception as exc:  # (a folder that cannot be wiped or reopened: `index()` deals with it)
            log.warning("the text index cannot be built alongside the update (%s): building it after", exc)
            self._writer = None
        return self._writer is not None

    def stored(self, chunks: list[Chunk], prepared: Any, data: bytes) -> None:
        writer = self._writer
        if writer is None or not chunks:
            return
        if not isinstance(prepared, list) or len(prepared) != len(chunks):
            prepared = [None] * len(chunks)  # (the worker could not prepare them: made here)
        path_terms = identifier_text(chunks[0].path)
        try:
            fps: list[int] = []
            for chunk, fields in zip(chunks, prepared, strict=True):
                text = chunk_text(chunk, data, self._max_chars)
                fps.append(fingerprint(chunk))
                doc = document(chunk, fps[-1], text, self._max_chars, fields, path_terms)
                writer.add_document(doc)
                self.documents += 1
            if not self._text.deferring:  # (else written after the rest: `TextRetriever.defer_files`)
                self._file_document(chunks, fps, data, writer)
        except Exception as exc:  # (a full disk, a malformed field: a feed never fails the update)
            log.warning("building the text index alongside the update failed (%s): building it after", exc)
            self._end(commit=False)

    def _file_document(self, chunks: list[Chunk], fps: list[int], data: bytes,
                       writer: tantivy.IndexWriter) -> None:
        """The file's document (`text_schema.file_document`)."""
        order = sorted(range(len(chunks)), key=lambda k: chunks[k].id)
        texts = file_texts([chunks[k] for k in order], data, self._max_chars)
        fp = file_fingerprint([fps[k] for k in order])
        writer.add_document(file_document(path_key(chunks[0].path), fp, texts))

    def finish(self, completed: bool) -> None:
        if self._writer is not None:
            self._end(commit=completed)

    def _end(self, commit: bool) -> None:
        """Commit (`TextRetriever.commit_behind`: waited for, but on a thread for a one-shot command)
        or roll back what was added, and release the writer (`TextRetriever.close`)."""
        writer, self._writer = self._writer, None
        if writer is None:
            return
        if commit:
            self.committed = self._text.commit_behind(writer, wait=not self._text.deferring)
        else:
            try:
                writer.rollback()
            except Exception as exc:  # (the writer broke)
                log.warning("the text index built alongside the update was not saved (%s): built after", exc)
            try:
                self._text.close()  # (the writer is let go even when its merges fail)
            except Exception as exc:
                log.warning("closing the text index's writer after the update failed: %s", exc)
        if not self.committed:
            self.documents = 0
