"""A large static-tier embedding runs its tokenizer in a worker process, beside the text index and graph.

A cold index builds the text index and the call graph on its main thread (Python: it holds the GIL)
while its embedding phase runs on a second thread (`retrievers.engine.embedding_phase`). The static
model's tokenizer releases the GIL, but every call back into Python then waits for the main thread to
give the GIL up, and the two compete for the same cores: beside the main thread the phase runs much
slower than alone (figures: docs/tuning/2026-12-02-module-docstrings.md). `DocumentWorker` moves the
tokenizing and mean pooling (`StaticEmbedder.encode_documents`) into one process of its own, started
from the parse pool's fork server (`indexing.parse_pool`), together with reading each chunk's bytes and
shaping its embedded text (`embedded_text.embed_text`): the embedding thread sends chunk records (with
the text of a chunk whose file an editor buffer overlays), waits with the GIL released, and writes the
vectors it gets back. The worker reads a chunk's file as `Workspace.read_bytes` does (the workspace root
joined with the indexed relative path; a path that is not plainly inside the root is read as nothing).

A process takes a fraction of a second to start and the model's memory a second time (the main process
loads it only for its first query), so only an embedding of at least `MIN_CHUNKS` chunks uses one
(`$CODESEEK_EMBED_WORKER=0` turns it off, `=1` forces it). If the worker cannot start or dies, the
caller embeds the batch in process: the vectors are the same either way (same model file, same code).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from concurrent.futures import Future

    from indexing.records import Chunk

__all__ = ["MIN_CHUNKS", "DocumentWorker", "Job", "document_worker", "wanted"]

log = logging.getLogger(__name__)
MIN_CHUNKS = 4_000  # pending chunks from which a worker process pays (cold search, 2 cores: 2,886 chunks
# +3% wall, 4,156 -3%, 5,770 -5%, 9,726 -8%, Django's `django/` 14,896 -11%; peak RSS no higher)

Job = tuple["Chunk", "str | None"]  # a chunk, and its text when an editor buffer holds it (else read)
# per job: embedded or not (no text); the embedded ones' rows, as float16: what the caller keeps of them
# (`EmbedPass._store`), and half the bytes through the pipe the worker's results wait on
Encoded = tuple[list[bool], np.ndarray]

_worker: dict[str, Any] = {}  # in the worker: its embedder and the root's path prefix


def wanted(pending: int) -> bool:
    """Whether an embedding of `pending` chunks gets a worker process (`$CODESEEK_EMBED_WORKER`)."""
    configured = os.environ.get("CODESEEK_EMBED_WORKER", "").strip()
    if configured in ("0", "1"):
        return configured == "1" and pending > 0
    return pending >= MIN_CHUNKS


def _start(owner: int, model_dir: str, batch_size: int, root: str) -> None:
    from indexing.parse_pool import start_worker
    from retrievers.semantic.static_embedder import StaticEmbedder

    start_worker(owner)  # stdout to stderr; ends itself when its owner is gone
    embedder = StaticEmbedder(model_dir, batch_size=batch_size)
    embedder.load()
    _worker.update(embedder=embedder, prefix=os.path.join(root, ""))


def _embed(jobs: list[Job], max_chars: int, max_path_chars: int) -> Encoded:
    from indexing.scan import plain_relative
    from indexing.source_encoding import as_utf8
    from retrievers.semantic.embedded_text import embed_text

    prefix, embedder = _worker["prefix"], _worker["embedder"]
    shown: list[bool] = []
    texts: list[str] = []
    read_path, data = None, b""
    for chunk, text in jobs:
        if text is None:
            if chunk.path != read_path:  # jobs come in path order: each file is read once a batch
                read_path, data = chunk.path, b""
                if plain_relative(chunk.path):  # as Workspace.relpath reads an indexed path
                    try:
                        with open(prefix + chunk.path, "rb") as fh:
                            data = as_utf8(chunk.path, fh.read())
                    except OSError:  # gone or unreadable: nothing to embed (as in process)
                        data = b""
            text = data[chunk.start_byte:chunk.end_byte].decode("utf-8", "replace")
        shown.append(bool(text.strip()))
        if shown[-1]:
            texts.append(embed_text(chunk, text, max_chars, max_path_chars))
    matrix = embedder.encode_documents(texts) if texts else np.zeros((0, embedder.dims), np.float32)
    return shown, np.asarray(matrix, dtype=np.float32).astype("<f2")


class DocumentWorker:
    """`submit(jobs, max_chars, max_path_chars)`: a Future of (embedded per job, their vectors),
    computed in the worker process; the caller embeds in process when it raises."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    def submit(self, jobs: Sequence[Job], max_chars: int, max_path_chars: int) -> Future[Encoded]:
        return self._pool.submit(_embed, list(jobs), max_chars, max_path_chars)  # type: ignore[no-any-return]


@contextmanager
def document_worker(model_dir: Path, batch_size: int, root: Path) -> Iterator[DocumentWorker | None]:
    """A worker process loaded with the static model in `model_dir`, reading chunks under `root`
    (None where there is no fork server: the caller embeds in process); shut down after the block."""
    from concurrent.futures import ProcessPoolExecutor

    from indexing.parse_pool import fork_context

    context = fork_context()
    if context is None:  # no fork server on this platform
        yield None
        return
    pool = ProcessPoolExecutor(max_workers=1, mp_context=context, initializer=_start,
                               initargs=(os.getpid(), str(model_dir), batch_size, str(root)))
    try:
        yield DocumentWorker(pool)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
