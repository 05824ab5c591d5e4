"""The text retriever: a tantivy index beside the SQLite store, BM25 with field boosts plus exact strings.

The index's fields, documents and fingerprints are `sources.text_schema`'s; this module opens the
index (a read-only folder through a private copy, a full disk in memory), keeps it in step with the
store (a document a chunk, and a trigram document a file: `sources.text_files`, written after the rest
by a one-shot command: `sources.text_deferred`), and searches it with BM25; exact strings are
`sources.text_exact`'s.

BM25 queries are built programmatically from term queries (never parsed), so user text with tantivy
syntax characters is safe. Exact strings: every trigram of the string must be in a file's document (ngram
terms carry no positions), then the chunks of those files an occurrence lies in are verified against
their text and answered with the absolute line numbers that match (verbatim, else in a joined run of
literals: the lines of the literals it covers); case-sensitive matches rank above case-insensitive ones.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import tantivy

from indexing.chunk_table import by_id
from indexing.integrity import is_disk_full
from indexing.records import Chunk
from retrievers.base import Hit, Query, RetrieverError, TextDetail
from retrievers.scope import EVERYWHERE, Scope
from retrievers.sources.text_deferred import BackgroundCommit, DeferredFiles
from retrievers.sources.text_exact import ExactStrings
from retrievers.sources.text_files import FileChunks, FileWrites, Wanted, file_documents
from retrievers.sources.text_identity import foreign, matches, read_marker, write_marker
from retrievers.sources.text_schema import (
    SCHEMA_VERSION,
    STOPWORDS,
    TextOptions,
    analyzers,
    bm25_query,
    document,
    fingerprint,
    open_writer,
    path_key,
    schema,
    writer_heap,
)

__all__ = ["SCHEMA_VERSION", "STOPWORDS", "TextOptions", "TextRetriever", "fingerprint", "writer_heap"]

log = logging.getLogger("codeseek.index")
BM25 = TextDetail("bm25")  # every BM25 hit's detail (one record: it is never changed)


class TextRetriever(ExactStrings, DeferredFiles):
    """tantivy BM25 + trigram exact search over chunks; see the module docstring."""

    name = "text"

    def __init__(
        self,
        index_dir: Path,
        read_text: Callable[[Chunk], str | None],
        options: TextOptions | None = None,
        read_file: Callable[[str], bytes] | None = None,
    ) -> None:
        """`read_text`: a chunk's text as it is now; `read_file`: a file's bytes (its chunks' offsets
        index them), so a file document reads its file once (else each chunk's text is read)."""
        self.options = options or TextOptions()
        self._read_text = read_text
        self._read_file = read_file
        self._files: FileChunks | None = None  # `_chunks` by file (`_by_file`), made when first needed
        self._later: list[Callable[[], object]] | None = None  # `defer_files`
        self._deferred: FileWrites | None = None  # file documents a deferred write still owes
        self._dir = Path(index_dir) / "tantivy"
        self._lock = threading.RLock()
        self._chunks: Mapping[int, Chunk] = {}
        self._analyzers = analyzers()
        self._schema = schema()
        self._writer: tantivy.IndexWriter | None = None
        self._committing: BackgroundCommit | None = None  # a feed's commit on a thread (`commit_behind`)
        self._reset = False
        self._copied = False  # searching a copy of a read-only index's folder (`_copy`)
        self._in_memory = False  # no space on disk: the index lives in memory (`_memory`)
        self._index = self._open()

    # ----- opening -----------------------------------------------------------------------------

    def _open(self) -> tantivy.Index:
        if self._dir.parent.is_dir() and not os.access(self._dir.parent, os.W_OK) and not self._copied:
            self._dir = self._copy()
        held = read_marker(self._dir)
        current = held.get("version") == SCHEMA_VERSION
        self._reset = not current  # a new, old-layout or broken index: adopt() must build it
        if not current and self._dir.exists():
            shutil.rmtree(self._dir, ignore_errors=True)  # an old or broken index: rebuilt by index()
        try:
            self._dir.mkdir(parents=True, exist_ok=True)
            try:
                index = tantivy.Index(self._schema, path=str(self._dir), reuse=True)
            except ValueError as exc:
                if is_disk_full(exc):  # a full disk is no broken index: keep it for later
                    raise
                self._reset = True
                shutil.rmtree(self._dir, ignore_errors=True)
                self._dir.mkdir(parents=True, exist_ok=True)
                index = tantivy.Index(self._schema, path=str(self._dir), reuse=False)
        except (ValueError, OSError) as exc:
            if not is_disk_full(exc):
                raise
            return self._memory(exc)
        self._register(index)
        if not current or self._reset:
            write_marker(self._dir, SCHEMA_VERSION)  # no owner yet: mark() names it after a sync
        return index

    def _register(self, index: tantivy.Index) -> None:
        for name, analyzer in self._analyzers.items():  # tokenizers are not persisted: every open
            index.register_tokenizer(name, analyzer)

    def _memory(self, exc: BaseException) -> tantivy.Index:
        """No space for the text index on disk: an in-memory one, built from the store's chunks by
        this process (the folder on disk is left as it was, its marker naming its last sync)."""
        log.warning("no space left for the text index at %s: searching with one built in memory", self._dir)
        log.debug("the text index's write failed: %s", exc)
        self._in_memory = self._reset = True
        index = tantivy.Index(self._schema)
        self._register(index)
        return index

    def _copy(self) -> Path:
        """A read-only index (tantivy must lock its folder even to read): its text index is searched
        from a private copy, removed when this retriever goes (an index never synced is built there)."""
        copy = Path(tempfile.mkdtemp(prefix="codeseek-text-"))
        weakref.finalize(self, shutil.rmtree, copy, True)
        if self._dir.is_dir():
            shutil.copytree(self._dir, copy, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".tantivy-*"))
        self._copied = True
        return copy

    def _wipe(self) -> None:
        """Start an empty index (a folder that belongs to another index is not reconciled)."""
        self.close()
        if not self._in_memory:
            shutil.rmtree(self._dir, ignore_errors=True)
        self._index = self._open() if not self._in_memory else self._memory(RetrieverError("as before"))
        self._reset = True

    def _wipe_if_foreign(self, owner: str) -> None:
        if foreign(read_marker(self._dir), owner):
            log.warning("the text index at %s belongs to another index; rebuilding it", self._dir)
            self._wipe()

    def mark(self, owner: str, synced: str) -> None:
        """Record that the folder now belongs to the store of generation `owner`, synced to key
        `synced` ("" when it holds editor buffers no other process may adopt): `sources.text_identity`."""
        with self._lock:
            deferred = self._deferred
            if deferred is not None and deferred.pending:
                deferred.mark = (owner, synced)  # named once they are written: until then nothing
                synced = ""  # adopts the folder (a process killed before that reconciles it)
            if not self._in_memory:
                write_marker(self._dir, SCHEMA_VERSION, owner, synced)

    def _get_writer(self, adding: int = 0, wait_s: float | None = None, threads: int = 1
                    ) -> tantivy.IndexWriter:
        """The index's writer, made on first use for `adding` chunks (`open_writer`: the rest)."""
        self._settle()
        if self._writer is None:
            try:
                self._writer = open_writer(self._index, writer_heap(self.options, adding), wait_s, threads)
            except ValueError as exc:
                raise RetrieverError(
                    f"the text index at {self._dir} is being written by another codeseek process: {exc}"
                ) from exc
        return self._writer

    def close(self) -> None:
        """Release the writer (and its lock on the index directory)."""
        self._settle()
        with self._lock:
            if self._writer is not None:
                writer, self._writer = self._writer, None
                try:
                    writer.wait_merging_threads()
                except (ValueError, OSError) as exc:  # a merge that found no space: the segments stay
                    if not is_disk_full(exc):
                        raise

    # ----- writing -----------------------------------------------------------------------------

    def _text_of(self, chunk: Chunk) -> str | None:
        try:
            return self._read_text(chunk)
        except (OSError, UnicodeError, ValueError, KeyError):
            return None

    def _document(self, chunk: Chunk, fp: int | None = None) -> tantivy.Document:
        fp = fingerprint(chunk) if fp is None else fp
        return document(chunk, fp, self._text_of(chunk), self.options.max_index_chars)

    def _write(self, delete_ids: Iterable[int], add: Sequence[Chunk],
               fps: Mapping[int, int] | None = None, drop_files: Iterable[int] = (),
               add_files: Mapping[int, Wanted] | None = None) -> None:
        """One commit: the chunk documents of `delete_ids` and `add` deleted, `add`'s written; the file
        documents of the `drop_files` keys deleted and `add_files`' written."""
        self._commit_deferred()  # (documents a deferred write left in the writer go in first)
        delete = sorted({int(i) for i in delete_ids} | {c.id for c in add})
        drop = sorted({int(k) for k in drop_files} | set(add_files or ()))
        if not delete and not add and not drop:
            return
        writer = self._get_writer(len(add))
        full: BaseException | None = None
        try:
            for field_name, keys in (("chunk_id", delete), ("path_key", drop)):
                for start in range(0, len(keys), 1000):
                    part = keys[start : start + 1000]
                    query = tantivy.Query.term_set_query(self._schema, field_name, part)
                    writer.delete_documents_by_query(query)
            for chunk in add:
                writer.add_document(self._document(chunk, fps.get(chunk.id) if fps else None))
            if add_files:
                for doc, _ in file_documents(add_files, self._by_file(), self._read_file, self._text_of,
                                             self.options.max_index_chars):
                    writer.add_document(doc)
            writer.commit()
        except (ValueError, OverflowError, OSError) as exc:
            writer.rollback()  # nothing half-written survives into the next commit
            if not is_disk_full(exc) or self._in_memory:
                raise RetrieverError(f"writing the text index at {self._dir} failed: {exc}") from exc
            full = exc
        finally:
            self.close()  # release tantivy's directory lock: other processes write this index too
        if full is not None:  # the disk filled up: the whole index in memory instead
            self._index = self._memory(full)
            self._deferred = None
            self._write([], list(self._chunks.values()), add_files=self._by_file().wanted())
            return
        self._index.reload()

    def _by_file(self) -> FileChunks:
        files = self._files
        if files is None:
            files = self._files = FileChunks.of(self._chunks)
        return files

    def writer_for_feed(self, owner: str, adding: int) -> tantivy.IndexWriter | None:
        """The writer a `sources.text_feed.TextFeed` adds to, released by `close()`: only for an empty
        index on disk (a folder of another index is wiped first, as `index()` would); None when the
        index holds documents or cannot be written now."""
        with self._lock:
            self._settle()
            if self._in_memory or self._writer is not None:
                return None
            self._wipe_if_foreign(owner)
            self._index.reload()
            if self._index.searcher().num_docs:
                return None
            try:
                return self._get_writer(adding, wait_s=0.0)  # (busy: left to `index()`, which waits)
            except RetrieverError as exc:
                log.debug("no writer for the text feed: %s", exc)
                return None

    def index(self, chunks: Sequence[Chunk] | Mapping[int, Chunk], owner: str = "") -> None:
        """Make the index hold exactly `chunks`, re-adding only those that differ from what is on disk
        (a folder whose marker names another index than `owner` is wiped first)."""
        with self._lock:
            self._wipe_if_foreign(owner)
            self._chunks, self._files = by_id(chunks), None
            self._index.reload()  # see what other processes committed
            held, held_files = self._fingerprints()
            stale = [i for i, fps in held.items() if len(fps) != 1 or i not in self._chunks]
            every = list(self._chunks.values())
            fps = {c.id: fingerprint(c) for c in every}
            add = [c for c in every if held.get(c.id) != [fps[c.id]]]
            wanted = self._by_file().wanted(fps=fps)
            drop = [k for k, prints in held_files.items() if len(prints) != 1 or k not in wanted]
            missing = {k: w for k, w in wanted.items() if held_files.get(k) != [w[1]]}
            if missing and self.deferring:
                self._write(stale, add, fps, drop + list(missing))
                self._defer(missing)
            else:
                self._deferred = None  # (nothing left owed: written here)
                self._write(stale, add, fps, drop, missing)
            self._reset = False

    def adopt(self, chunks: Sequence[Chunk] | Mapping[int, Chunk], owner: str = "", synced: str = "") -> None:
        """Hold `chunks` without reading the index's documents (the caller knows it was written for
        exactly these: the engine records the store revision each successful sync reached). An index
        this process found missing, of an older layout or broken, or whose marker does not say it is
        the one `owner`'s sync `synced` left (`text_identity.matches`) is reconciled instead."""
        if self._reset or not matches(self._dir, owner, synced):
            self.index(chunks, owner)
            return
        with self._lock:
            self._chunks = by_id(chunks)  # (a saved table is held as it is: update() copies it)
            self._files = None

    def update(self, added: Sequence[Chunk], removed_ids: Sequence[int]) -> None:
        """Add new or changed chunks and drop removed ones; one commit."""
        with self._lock:
            chunks = dict(self._chunks)  # swapped whole: searches iterate it without the lock
            removed = [c for c in (chunks.pop(i, None) for i in removed_ids) if c is not None]
            chunks.update((c.id, c) for c in added)
            files, touched = self._by_file().patched(added, removed)
            self._chunks, self._files = chunks, files
            self._write(removed_ids, added, drop_files=[path_key(p) for p in touched],
                        add_files=files.wanted(touched))

    def remove(self, ids: Sequence[int]) -> None:
        self.update([], ids)

    # ----- reading -----------------------------------------------------------------------------

    def _fingerprints(self) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
        """The fingerprints the index holds: by chunk id, and the file documents' by path key."""
        searcher = self._searcher()
        if searcher.num_docs == 0:
            return {}, {}
        addrs = [a for _, a in searcher.search(tantivy.Query.all_query(), searcher.num_docs).hits]
        chunks: dict[int, list[int]] = {}
        files: dict[int, list[int]] = {}
        ids = searcher.fast_field_values("chunk_id", addrs)
        keys = searcher.fast_field_values("path_key", addrs)
        fps = searcher.fast_field_values("fp", addrs)
        for cid, key, fp in zip(ids, keys, fps, strict=True):
            if key is not None:
                files.setdefault(int(key), []).append(int(fp or 0))
            else:
                chunks.setdefault(int(cid or 0), []).append(int(fp or 0))
        return chunks, files

    def ids(self) -> set[int]:
        """Chunk ids the on-disk index holds."""
        return set(self._fingerprints()[0])

    def _run(self, query: tantivy.Query, limit: int, field_name: str = "chunk_id") -> list[tuple[int, float]]:
        """The top `limit` hits: (their `field_name`, a chunk's id or a file's key; score)."""
        if limit <= 0:
            return []
        searcher = self._searcher()
        hits = searcher.search(query, limit, count=False).hits  # (no total: the top `limit` only)
        if not hits:
            return []
        ids = searcher.fast_field_values(field_name, [a for _, a in hits])
        return [(int(cid or 0), float(score)) for (score, _), cid in zip(hits, ids, strict=True)]

    def bm25_query(self, text: str, symbol: str | None = None) -> tantivy.Query | None:
        """The boosted BM25 query for free text (None when the text has no searchable term)."""
        return bm25_query(self._schema, self._analyzers["cs_body"], self.options, text, symbol)

    def search(self, query: Query, limit: int, scope: Scope = EVERYWHERE) -> list[Hit]:
        """BM25 hits for the query text within `scope`; when the query names an exact string, its
        verified matches first."""
        hits: list[Hit] = []
        if query.exact:
            hits = self.exact(query.exact, limit + min(len(query.exclude), limit), scope)
            if query.exclude:
                hits = [h for h in hits if h.chunk_id not in query.exclude][:limit]
        if len(hits) < limit:
            seen = {h.chunk_id for h in hits}
            for h in self.bm25(query.text, limit, query.symbol, scope, query.exclude):
                if h.chunk_id not in seen and len(hits) < limit:
                    hits.append(h)
        return hits

    def _admits(self, scope: Scope) -> Callable[[int], bool]:
        """Whether a chunk id is in a file `scope` admits (a chunk read back from disk but not yet
        adopted has no known path: only an unrestricted scope admits it)."""
        chunks = self._chunks

        def admits(chunk_id: int) -> bool:
            chunk = chunks.get(chunk_id)
            return scope.unrestricted if chunk is None else scope.admits(chunk.path)

        return admits

    def bm25(self, text: str, limit: int, symbol: str | None = None, scope: Scope = EVERYWHERE,
             exclude: frozenset[int] = frozenset()) -> list[Hit]:
        """Ranked BM25 hits within `scope`, none of the `exclude` ids (`detail.match == "bm25"`)."""
        q = self.bm25_query(text, symbol)
        if q is None or limit <= 0:
            return []
        if scope.unrestricted and not exclude:
            return [Hit(cid, score, BM25) for cid, score in self._run(q, limit)]
        admits = None if scope.unrestricted else self._admits(scope)
        # Over-fetched (the scope and `exclude` may leave some out), then twice as many while too few
        # are left and more exist: the limit counts hits the scope admits.
        want = limit + min(len(exclude), limit) + (0 if admits is None else limit * 3 + 50)
        while True:
            found = self._run(q, want)
            kept = [Hit(cid, score, BM25) for cid, score in found
                    if cid not in exclude and (admits is None or admits(cid))][:limit]
            if len(kept) >= limit or len(found) < want:
                return kept
            want *= 2
