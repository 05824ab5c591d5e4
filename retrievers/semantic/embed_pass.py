"""Embedding a semantic retriever's pending chunks in batches: `EmbedPass.embed_pending`.

A mixin of `semantic.retriever.SemanticRetriever`, which provides the attributes and methods declared
here. Each batch is read, shaped (`embed_text`), encoded, written to the store's embedding cache and
added to the vector index; with the workspace's files known and an embedder that has a
`document_worker` (the static tier on a large tree: `semantic.embed_worker`), a worker process reads
and encodes batches ahead while this thread stores the ones before.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from indexing.records import Chunk
from retrievers.semantic.embedded_text import embed_text
from retrievers.semantic.embedder import foreground_threads

if TYPE_CHECKING:
    from retrievers.semantic.models import TextEmbedder
    from retrievers.semantic.retriever import ChunkFiles, EmbeddingCache, SemanticOptions

__all__ = ["WORKER_AHEAD", "WORKER_BATCH", "EmbedPass", "Progress"]

log = logging.getLogger("retrievers.semantic.retriever")  # the retriever's: its warnings keep their name
# A batch for the embedding worker, unless `SemanticOptions.write_batch` says otherwise: each round trip
# needs this thread, and the pool's own threads, to get the GIL from a main thread that builds the graph
# (a switch interval, 5 ms, each time); in batches of 64 the worker of the Django sdist's cold index
# idled 45% of its embedding waiting for them, in batches of 512 ~15%.
WORKER_BATCH = 512
WORKER_AHEAD = 4  # batches handed to the embedding worker before the oldest is stored
CACHE_WRITE = 1024  # vectors a pass writes to the store's cache in one transaction
Progress = Callable[[int, int], None]


@dataclass
class _Queued:
    """A batch handed to the embedding worker: its chunks, the pending result, its end in the run."""

    chunks: list[Chunk]
    submitted: Any
    end: int


@dataclass
class _Batch:
    """A step of `embed_pending`: its chunks, those with text, and their embedded texts."""

    chunks: list[Chunk]
    ready: list[Chunk]
    texts: list[str]


class EmbedPass:
    """`embed_pending` over the retriever's chunks, pending ids, cache keys and vector index."""

    store: EmbeddingCache
    embedder: TextEmbedder
    options: SemanticOptions
    _files: ChunkFiles | None
    _lock: Any
    _chunks: Mapping[int, Chunk]
    _keys: dict[int, str]
    _pending: set[int]

    @property
    def model_id(self) -> str:
        raise NotImplementedError

    def _key(self, chunk: Chunk) -> str:
        raise NotImplementedError

    def _text_of(self, chunk: Chunk) -> str | None:
        raise NotImplementedError

    def _add_vectors(self, ids: list[int], matrix: np.ndarray, room: int = 0) -> None:
        raise NotImplementedError

    def _settle(self) -> None:
        raise NotImplementedError

    def embed_pending(self, progress: Progress | None = None,
                      should_stop: Callable[[], bool] | None = None,
                      order: Callable[[Chunk], Any] | None = None) -> int:
        """Embed pending chunks in batches (by `order`, default path and line), writing each batch to
        the cache; returns how many. `should_stop` is asked between batches. With the workspace's
        files known and an embedder that has a `document_worker` (the static tier on a large tree:
        `retrievers.semantic.embed_worker`), a worker process reads and encodes a batch while this thread
        stores the one before."""
        with self._lock:
            key = order or (lambda c: (c.path, c.start_line))
            todo = sorted(self._pending, key=lambda i: key(self._chunks[i]))
        total, embedded = len(todo), 0
        step = max(1, self.options.write_batch or getattr(self.embedder, "write_batch", 64))
        opener = getattr(self.embedder, "document_worker", None)
        files = self._files
        queued: deque[_Queued] = deque()  # submitted to the worker, not yet stored (oldest first)
        unsaved: dict[str, bytes] = {}  # vectors for the cache, written CACHE_WRITE at a time
        with opener(total, files.root) if opener is not None and files is not None and total \
                else nullcontext() as worker, self._caching(unsaved):
            overlaid = set(files.overlays()) if worker is not None and files is not None else set()
            if worker is not None and not self.options.write_batch:
                step = max(step, WORKER_BATCH)
            for start in range(0, total, step):
                if should_stop is not None and should_stop():
                    break
                end = min(start + step, total)
                if worker is None:
                    embedded += self._embed_here(todo[start:end], start, total, progress, unsaved=unsaved)
                    continue
                chunks = [c for c in (self._chunks.get(i) for i in todo[start:end]) if c is not None]
                jobs = [(c, (self._text_of(c) or "") if c.path in overlaid else None) for c in chunks]
                try:
                    submitted = worker.submit(jobs, self.options.max_chars, self.options.max_path_chars)
                except Exception as exc:  # a broken pool: this batch and the rest here
                    log.warning("embedding worker unavailable (%s): embedding in process", exc)
                    submitted, worker = None, None
                queued.append(_Queued(chunks, submitted, end))
                # Batches stay queued ahead of the worker: this thread shares the GIL with the main
                # thread's graph and text index, and a worker fed one batch ahead waited for it.
                while len(queued) > WORKER_AHEAD or (queued and worker is None):
                    embedded += self._finish(queued.popleft(), progress, total, unsaved)
            while queued:
                embedded += self._finish(queued.popleft(), progress, total, unsaved)
        with self._lock:
            self._settle()
        return embedded

    def embed_now(self, ids: Sequence[int]) -> int:
        """Embed those of these chunks still pending, now, in this thread (a question's pool); returns
        how many."""
        todo = list(dict.fromkeys(ids))
        embedded = self._embed_here(todo, 0, len(todo), None, foreground_threads())
        with self._lock:
            self._settle()
        return embedded

    def _embed_here(self, ids: Sequence[int], start: int, total: int, progress: Progress | None,
                    threads: int | None = None, unsaved: dict[str, bytes] | None = None) -> int:
        with self._lock:  # a chunk a question's pool embedded meanwhile (`embed_now`) is not embedded again
            ids = [i for i in ids if i in self._pending]
        batch = self._prepare(ids)

        def report(d: int, _t: int) -> None:
            if progress is not None:
                progress(start + d, total)

        matrix = self.embedder.encode_documents(batch.texts, progress=report, threads=threads) \
            if batch.texts else None
        stored = self._store(batch, matrix, unsaved)
        if progress is not None:
            progress(start + len(ids), total)
        return stored

    def _prepare(self, ids: Sequence[int]) -> _Batch:
        batch = [self._chunks.get(i) for i in ids]
        items = [(c, self._text_of(c)) for c in batch if c is not None]
        ready = [(c, t) for c, t in items if t is not None and t.strip()]
        texts = [embed_text(c, t, self.options.max_chars, self.options.max_path_chars) for c, t in ready]
        return _Batch([c for c, _ in items], [c for c, _ in ready], texts)

    @contextmanager
    def _caching(self, unsaved: dict[str, bytes]) -> Iterator[None]:
        """Write what a pass left in `unsaved` to the store's cache as it ends (however it ends: a pass
        that fails still caches what it made, and its own error is the one raised)."""
        try:
            yield
        except BaseException:
            with suppress(Exception):
                self._write_cache(unsaved)
            raise
        self._write_cache(unsaved)

    def _write_cache(self, unsaved: dict[str, bytes]) -> None:
        if unsaved:
            self.store.put_embeddings(self.model_id, unsaved)
            unsaved.clear()

    def _finish(self, queued: _Queued, progress: Progress | None, total: int,
                unsaved: dict[str, bytes] | None = None) -> int:
        """Store what the worker made of a batch (or embed it here if the worker failed)."""
        made = None
        if queued.submitted is not None:
            try:
                made = queued.submitted.result()
            except Exception as exc:  # killed, out of memory: this batch here
                log.warning("embedding worker failed (%s): embedding in process", exc)
        if made is None:
            stored = self._embed_here([c.id for c in queued.chunks], 0, total, None, unsaved=unsaved)
        else:
            shown, matrix = made
            ready = [c for c, ok in zip(queued.chunks, shown, strict=True) if ok]
            stored = self._store(_Batch(queued.chunks, ready, []), matrix, unsaved)
        if progress is not None:
            progress(queued.end, total)
        return stored

    def _store(self, batch: _Batch, matrix: np.ndarray | None,
               unsaved: dict[str, bytes] | None = None) -> int:
        """Cache and index a batch's vectors; returns how many were added. With `unsaved`, the cache's
        share is collected there and written once it holds `CACHE_WRITE` vectors (one transaction
        per batch of 64 cost the Django sdist's cold index ~1 s in commits)."""
        ready = batch.ready
        with self._lock:
            # A chunk removed or replaced while its batch was embedding is not added.
            live = [k for k, c in enumerate(ready) if self._chunks.get(c.id) is c]
            added = 0
            if matrix is not None and live:
                half = matrix[live].astype("<f2")
                for k in live:
                    if ready[k].id not in self._keys:
                        self._keys[ready[k].id] = self._key(ready[k])
                items = {self._keys[ready[k].id]: half[n].tobytes() for n, k in enumerate(live)}
                if unsaved is None:
                    self.store.put_embeddings(self.model_id, items)
                else:
                    unsaved.update(items)
                    if len(unsaved) >= CACHE_WRITE:
                        self._write_cache(unsaved)
                # (room for the rows still pending: the vector index grows once, not at each doubling)
                self._add_vectors([ready[k].id for k in live], half.astype(np.float32),
                                  room=max(0, len(self._pending) - len(batch.chunks)))
                added = len(live)
            for c in batch.chunks:  # unreadable or empty chunks are not retried until they change
                self._pending.discard(c.id)
        return added
