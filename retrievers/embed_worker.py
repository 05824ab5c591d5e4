"""A large static-tier embedding runs its tokenizer in a worker process, beside the text index and graph.

A cold index builds the text index and the call graph on its main thread (Python: it holds the GIL)
while its embedding phase runs on a second thread (`retrievers.embedding_phase`). The static model's
tokenizer releases the GIL, but every call back into Python then waits for the main thread to give the
GIL up, and the two compete for the same two cores: on the Django sdist (45,433 chunks) the phase took
~2x as long beside the main thread as alone. `DocumentWorker` moves the tokenizing and mean pooling
(`StaticEmbedder.encode_documents`) into one process of its own, started from the parse pool's fork
server (`indexing.parse_pool`), so the embedding thread only reads and shapes texts, waits with the
GIL released, and writes the vectors it gets back.

A process costs ~0.4 s to start and the model's memory a second time (the main process loads it only
for its first query), so only an embedding of at least `MIN_CHUNKS` chunks uses one
(`$CODESEEK_EMBED_WORKER=0` turns it off, `=1` forces it). If the worker cannot start or dies, the
batch is embedded in process: the vectors are the same either way (same model file, same code).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from concurrent.futures import Future

__all__ = ["MIN_CHUNKS", "DocumentWorker", "document_worker", "wanted"]

log = logging.getLogger(__name__)
MIN_CHUNKS = 20_000  # pending chunks from which a worker process pays (Django's `django/`: 14,896)

Encode = Callable[[list[str]], "Future[np.ndarray] | np.ndarray"]

_worker_embedder: Any = None  # in the worker: its StaticEmbedder


def wanted(pending: int) -> bool:
    """Whether an embedding of `pending` chunks gets a worker process (`$CODESEEK_EMBED_WORKER`)."""
    configured = os.environ.get("CODESEEK_EMBED_WORKER", "").strip()
    if configured in ("0", "1"):
        return configured == "1" and pending > 0
    return pending >= MIN_CHUNKS


def _start(owner: int, model_dir: str, batch_size: int) -> None:
    from indexing.parse_pool import _start_worker
    from retrievers.static_embedder import StaticEmbedder

    global _worker_embedder
    _start_worker(owner)  # stdout to stderr; ends itself when its owner is gone
    _worker_embedder = StaticEmbedder(model_dir, batch_size=batch_size)
    _worker_embedder.load()


def _encode(texts: list[str]) -> np.ndarray:
    return np.asarray(_worker_embedder.encode_documents(texts), dtype=np.float32)


class DocumentWorker:
    """`submit(texts)`: a Future of `encode_documents(texts)` computed in the worker process."""

    def __init__(self, pool: Any, fallback: Callable[[list[str]], np.ndarray]) -> None:
        self._pool = pool
        self._fallback = fallback

    def submit(self, texts: Sequence[str]) -> Future[np.ndarray] | np.ndarray:
        try:
            return self._pool.submit(_encode, list(texts))  # type: ignore[no-any-return]
        except Exception as exc:  # a broken pool: embed here
            log.warning("embedding worker unavailable (%s): embedding in process", exc)
            return self._fallback(list(texts))

    def result(self, pending: Future[np.ndarray] | np.ndarray, texts: Sequence[str]) -> np.ndarray:
        """The vectors of a `submit`; embedded here when the worker died meanwhile."""
        if isinstance(pending, np.ndarray):
            return pending
        try:
            return pending.result()
        except Exception as exc:  # killed, out of memory: this batch (and the rest) in process
            log.warning("embedding worker failed (%s): embedding in process", exc)
            return self._fallback(list(texts))


@contextmanager
def document_worker(model_dir: Path, batch_size: int,
                    fallback: Callable[[list[str]], np.ndarray]) -> Iterator[DocumentWorker | None]:
    """A worker process loaded with the static model in `model_dir` (None where there is no fork
    server: the caller embeds in process); shut down when the block ends."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    try:
        context = multiprocessing.get_context("forkserver")
    except ValueError:  # no fork server on this platform
        yield None
        return
    context.set_forkserver_preload(["indexing.parse"])
    pool = ProcessPoolExecutor(max_workers=1, mp_context=context, initializer=_start,
                               initargs=(os.getpid(), str(model_dir), batch_size))
    try:
        yield DocumentWorker(pool, fallback)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
