"""The text retriever: a tantivy index beside the SQLite store, BM25 with field boosts plus exact strings.

The index's fields, documents and fingerprints are `sources.text_schema`'s; this module opens the
index (a read-only folder through a private copy, a full disk in memory), keeps it in step with the
store, and searches it.

BM25 queries are built programmatically from term queries (never parsed), so user text with tantivy
syntax characters is safe. Exact strings: every trigram of the string must be present (ngram terms
carry no positions), then each candidate is verified against the chunk text and answered with the
absolute line numbers that match (verbatim, else in a joined run of literals: the lines of the
literals it covers); case-sensitive matches rank above case-insensitive ones.
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
from retrievers.sources.literals import joined_lines, match_lines
from retrievers.sources.text_identity import foreign, matches, read_marker, write_marker
from retrievers.sources.text_schema import (
    SCHEMA_VERSION,
    STOPWORDS,
    TextOptions,
    analyzers,
    bm25_query,
    document,
    fingerprint,
    schema,
    trigram_text,
    writer_heap,
)

__all__ = ["SCHEMA_VERSION", "STOPWORDS", "TextOptions", "TextRetriever", "fingerprint", "writer_heap"]

log = logging.getLogger("codeseek.index")
BM25 = TextDetail("bm25")  # every BM25 hit's detail (one record: it is never changed)


class TextRetriever:
    """tantivy BM25 + trigram exact search over chunks; see the module docstring."""

    name = "text"

    def __init__(
        self,
        index_dir: Path,
        read_text: Callable[[Chunk], str | None],
        options: TextOptions | None = None,
    ) -> None:
        self.options = options or TextOptions()
        self._read_text = read_text
        self._dir = Path(index_dir) / "tantivy"
        self._lock = threading.RLock()
        self._chunks: Mapping[int, Chunk] = {}
        self._analyzers = analyzers()
        self._schema = schema()
        self._writer: tantivy.IndexWriter | None = None
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
            if not self._in_memory:
                write_marker(self._dir, SCHEMA_VERSION, owner, synced)

    def _get_writer(self, adding: int = 0) -> tantivy.IndexWriter:
        """The index's writer, made on first use with a memory budget for `adding` chunks."""
        if self._writer is None:
            try:
                self._writer = self._index.writer(heap_size=writer_heap(self.options, adding), num_threads=1)
            except ValueError as exc:
                raise RetrieverError(
                    f"the text index at {self._dir} is being written by another codeseek process: {exc}"
                ) from exc
        return self._writer

    def close(self) -> None:
        """Release the writer (and its lock on the index directory)."""
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
               fps: Mapping[int, int] | None = None) -> None:
        delete = sorted({int(i) for i in delete_ids} | {c.id for c in add})
        if not delete and not add:
            return
        writer = self._get_writer(len(add))
        full: BaseException | None = None
        try:
            for start in range(0, len(delete), 1000):
                part = delete[start : start + 1000]
                writer.delete_documents_by_query(tantivy.Query.term_set_query(self._schema, "chunk_id", part))
            for chunk in add:
                writer.add_document(self._document(chunk, fps.get(chunk.id) if fps else None))
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
            self._write([], list(self._chunks.values()))
            return
        self._index.reload()

    def writer_for_feed(self, owner: str, adding: int) -> tantivy.IndexWriter | None:
        """The writer a `sources.text_feed.TextFeed` adds to, released by `close()`: only for an empty
        index on disk (a folder of another index is wiped first, as `index()` would); None when the
        index holds documents or cannot be written now."""
        with self._lock:
            if self._in_memory or self._writer is not None:
                return None
            self._wipe_if_foreign(owner)
            self._index.reload()
            if self._index.searcher().num_docs:
                return None
            try:
                return self._get_writer(adding)
            except RetrieverError as exc:
                log.debug("no writer for the text feed: %s", exc)
                return None

    def index(self, chunks: Sequence[Chunk] | Mapping[int, Chunk], owner: str = "") -> None:
        """Make the index hold exactly `chunks`, re-adding only those that differ from what is on disk
        (a folder whose marker names another index than `owner` is wiped first)."""
        with self._lock:
            self._wipe_if_foreign(owner)
            self._chunks = by_id(chunks)
            self._index.reload()  # see what other processes committed
            held = self._fingerprints()
            stale = [i for i, fps in held.items() if len(fps) != 1 or i not in self._chunks]
            every = list(self._chunks.values())
            fps = {c.id: fingerprint(c) for c in every}
            add = [c for c in every if held.get(c.id) != [fps[c.id]]]
            self._write(stale, add, fps)
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

    def update(self, added: Sequence[Chunk], removed_ids: Sequence[int]) -> None:
        """Add new or changed chunks and drop removed ones; one commit."""
        with self._lock:
            chunks = dict(self._chunks)  # swapped whole: searches iterate it without the lock
            for i in removed_ids:
                chunks.pop(i, None)
            chunks.update((c.id, c) for c in added)
            self._chunks = chunks
            self._write(removed_ids, added)

    def remove(self, ids: Sequence[int]) -> None:
        self.update([], ids)

    # ----- reading -----------------------------------------------------------------------------

    def _fingerprints(self) -> dict[int, list[int]]:
        searcher = self._index.searcher()
        if searcher.num_docs == 0:
            return {}
        addrs = [a for _, a in searcher.search(tantivy.Query.all_query(), searcher.num_docs).hits]
        out: dict[int, list[int]] = {}
        ids = searcher.fast_field_values("chunk_id", addrs)
        fps = searcher.fast_field_values("fp", addrs)
        for cid, fp in zip(ids, fps, strict=True):
            out.setdefault(int(cid or 0), []).append(int(fp or 0))
        return out

    def ids(self) -> set[int]:
        """Chunk ids the on-disk index holds."""
        return set(self._fingerprints())

    def _run(self, query: tantivy.Query, limit: int) -> list[tuple[int, float]]:
        if limit <= 0:
            return []
        searcher = self._index.searcher()
        hits = searcher.search(query, limit, count=False).hits  # (no total: the top `limit` only)
        if not hits:
            return []
        ids = searcher.fast_field_values("chunk_id", [a for _, a in hits])
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

    def _exact_candidates(self, needle: str) -> list[int]:
        limit = self.options.max_verify
        grams = list(dict.fromkeys(self._analyzers["cs_tri"].analyze(trigram_text(needle))))
        if len(needle) < 3 or not grams:
            # Too short for a trigram: candidates from BM25 on its words, else every chunk (bounded).
            q = self.bm25_query(needle)
            if q is not None:
                found = [cid for cid, _ in self._run(q, limit)]
                if found:
                    return found
            return sorted(self._chunks)[:limit]
        searcher = self._index.searcher()
        if len(grams) > self.options.max_trigrams:
            freq = {g: searcher.doc_freq("trigram", g) for g in grams}
            grams = sorted(grams, key=lambda g: freq[g])[: self.options.max_trigrams]
        musts = [(tantivy.Occur.Must, tantivy.Query.term_query(self._schema, "trigram", g)) for g in grams]
        return [cid for cid, _ in self._run(tantivy.Query.boolean_query(musts), limit)]

    def exact(self, text: str, limit: int, scope: Scope = EVERYWHERE) -> list[Hit]:
        """Chunks within `scope` containing `text` verbatim, `detail.lines` the absolute matching lines.

        Case-sensitive matches score 2, case-insensitive 1 (plus a small bonus per occurrence line);
        ties go to the shorter chunk. A string found nowhere gives []. Candidates are verified in
        trigram-BM25 order; a string so common that `4 * limit` (at least 40) chunks match it
        case-sensitively stops the scan there.
        """
        if not text or not text.strip() or limit <= 0:
            return []
        hits: list[tuple[float, int, Hit]] = []
        enough, sensitive_hits = max(4 * limit, 40), 0
        for cid in self._exact_candidates(text):
            if sensitive_hits >= enough:
                break
            chunk = self._chunks.get(cid)
            if chunk is None or not scope.admits(chunk.path):
                continue
            body = self._text_of(chunk)
            if not body:
                continue
            lines, sensitive = match_lines(body, text, chunk.start_line)
            split = False
            if not lines and len(text) >= 3:  # a message split over literals (not a 2-letter scan)
                lines, sensitive = joined_lines(body, text, chunk.start_line)
                split = bool(lines)
            if not lines:
                continue
            sensitive_hits += sensitive
            score = (2.0 if sensitive else 1.0) + min(len(lines), 20) * 0.001
            detail = TextDetail("exact", tuple(lines), sensitive, split)
            hits.append((score, chunk.end_line - chunk.start_line, Hit(cid, score, detail)))
        hits.sort(key=lambda t: (-t[0], t[1], t[2].chunk_id))
        return [h for _, _, h in hits[:limit]]
