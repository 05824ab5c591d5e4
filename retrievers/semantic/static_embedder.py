"""The static embedding tier: a model2vec model (token vectors, mean-pooled), no torch at run time.

`StaticEmbedder()` embeds with the model `retrievers.semantic.static_model` distils from the packaged
all-MiniLM-L6-v2 (built on first use, then cached); `StaticEmbedder(path)` takes any model2vec
model directory. It has the interface of `retrievers.semantic.embedder.Embedder` (`encode_documents`,
`encode_query`, `load`, `dims`, `model_id`...), so the semantic retriever takes either. Inference is
a tokenizer call and a mean of embedding rows, cheap enough on one core to make semantic search ready
in seconds.

A model trained in the packaged MiniLM's space (the shipped one: its folder holds
`query_projection.npy`) has MiniLM itself read a question (`encode_query_for`: the numpy encoder, one
BLAS thread), projected onto the static vectors' space; identifiers and lookups keep the
static query. The projection is made for the packaged MiniLM only: a projection whose shape does not
fit is ignored, and a MiniLM that cannot load leaves queries static, with one warning.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from retrievers.semantic import embed_worker
from retrievers.semantic.embedder import DEFAULT_MODEL_ID, EmbedderError, LazyModel
from retrievers.semantic.static_model import (
    DistillSettings,
    Progress,
    StaticModelError,
    ensure_static_model,
    is_complete,
    packaged_source,
    static_model_key,
)
from retrievers.semantic.word_pieces import word_piece_ids

STATIC_PREFIX = "static:"
TRANSFORMER_INTENTS = frozenset({"understand_code"})  # questions the transformer reads...
MIN_QUESTION_WORDS = 3  # ...when they are questions: a bare identifier or a two-word phrase is not
QUERY_PROJECTION = "query_projection.npy"  # (source dims, static dims) float32, beside the model
log = logging.getLogger(__name__)


def is_question(text: str, intent: str) -> bool:
    """A query the transformer reads: a question (`TRANSFORMER_INTENTS`, `MIN_QUESTION_WORDS` words or
    more), not a name, a lookup or a two-word phrase."""
    return intent in TRANSFORMER_INTENTS and len(text.split()) >= MIN_QUESTION_WORDS


def is_static_id(model_id: str) -> bool:
    """True for the model id of a static (model2vec) embedder."""
    return model_id.startswith(STATIC_PREFIX)
DEFAULT_STATIC_ID = f"{STATIC_PREFIX}{DEFAULT_MODEL_ID}"


def write_query_projection(directory: Path, basis: np.ndarray) -> None:
    """Save the map from the source model's query vectors into the static vectors' space."""
    np.save(directory / QUERY_PROJECTION, np.ascontiguousarray(basis, dtype=np.float32), allow_pickle=False)


def read_query_projection(directory: Path) -> np.ndarray | None:
    """The saved projection, or None when the model has none (its vectors are not in the source
    model's space) or it is unreadable."""
    path = directory / QUERY_PROJECTION
    if not path.is_file():
        return None
    try:
        basis = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        log.warning("ignoring the query projection %s: %s", path, exc)
        return None
    if basis.ndim != 2 or basis.dtype.kind != "f":
        log.warning("ignoring the query projection %s: shape %s, dtype %s", path, basis.shape, basis.dtype)
        return None
    return np.asarray(basis, dtype=np.float32)


def is_static_model_dir(path: Path) -> bool:
    """A model2vec directory (what `save_pretrained` writes), not a sentence-transformers one."""
    return is_complete(path) and _declares_model2vec(path)


def _declares_model2vec(path: Path) -> bool:
    try:
        text = (path / "config.json").read_text(encoding="utf-8")
    except OSError:
        return False
    return '"model2vec"' in text


class StaticEmbedder(LazyModel):
    """Unit-normalized float32 vectors from a model2vec static model; loads lazily and thread-safely."""

    normalized = True
    # Chunks a step of SemanticRetriever.embed_pending: larger steps raised the peak RSS of a cold
    # index (1,024: +15 MiB on Django) and gained little once a commit became cheap (schema 3).
    write_batch = 64
    configured_prefixes: tuple[str, str] | None = ("", "")
    query_prefix = ""
    document_prefix = ""

    def __init__(self, model_dir: str | Path | None = None, settings: DistillSettings | None = None,
                 build_progress: Progress | None = None, batch_size: int = 128) -> None:
        self.model_dir = Path(model_dir).expanduser() if model_dir is not None else None
        self.settings = settings or DistillSettings()
        self.build_progress = build_progress
        self.batch_size = batch_size
        self._model: Any = None
        self._load_lock = threading.Lock()
        # Queries in the source model's space (a model trained with a folded head saves the projection):
        # the transformer encodes the question, its vector is projected onto the static vectors' space.
        self._projection: np.ndarray | None = None
        self._query_model: Any = None
        self._query_model_failed = False
        self.model = str(self.model_dir) if self.model_dir is not None else None
        self.model_id = self._model_id()

    def _model_id(self) -> str:
        if self.model_dir is not None:
            return STATIC_PREFIX + "/".join(self.model_dir.resolve().parts[-2:])
        try:
            key = static_model_key(packaged_source(), self.settings)
        except EmbedderError:
            key = "unavailable"
        # The distillation key names the model: other settings or another source embed again.
        return f"{DEFAULT_STATIC_ID}-{key}"

    # ----- loading -----------------------------------------------------------------------------

    def prepare(self, progress: Progress | None = None, pending: int = 0) -> None:
        """Load now, reporting a first-use distillation to `progress` ("distilling", done, total); only
        build it when `pending` chunks will go to a worker process (`document_worker`), which loads
        it there: this process loads it for its first query."""
        if self._model is None:
            if progress is not None:
                self.build_progress = progress
            if embed_worker.wanted(pending):
                self._directory()
            else:
                self.load()

    def _directory(self) -> Path:
        """The model's folder, distilled first if it is the default one and missing (EmbedderError)."""
        if self.model_dir is not None:
            return self.model_dir
        try:
            return ensure_static_model(self.build_progress, settings=self.settings)
        except (StaticModelError, OSError) as exc:
            raise EmbedderError(f"cannot load the static embedding model: {exc}") from exc

    @contextmanager
    def document_worker(self, pending: int, root: Path) -> Iterator[embed_worker.DocumentWorker | None]:
        """A worker process that reads and encodes the chunks under `root` for an embedding of
        `pending` chunks, when that many pay for one (`semantic.embed_worker`); None: embed here."""
        if not embed_worker.wanted(pending):
            yield None
            return
        with embed_worker.document_worker(self._directory(), self.batch_size, root) as worker:
            yield worker

    def _load_model(self) -> None:
        """Build (first use only) and load the model."""
        try:
            directory = self._directory()
            if self.model_dir is not None and not is_complete(directory):
                raise EmbedderError(f"{directory} is not a model2vec model (model.safetensors and "
                                    "tokenizer.json expected)")
            self._projection = read_query_projection(directory)
            self._model = _TokenVectors(directory, self.max_tokens)
            if self._projection is not None and self._projection.shape[1] != self._model.dims:
                log.warning("ignoring the query projection of %s: %d columns, %d dims", directory,
                            self._projection.shape[1], self._model.dims)
                self._projection = None
        except (OSError, ValueError, KeyError) as exc:  # an unreadable or malformed model folder
            raise EmbedderError(f"cannot load the static embedding model: {exc}") from exc

    @property
    def dims(self) -> int:
        self.load()
        return int(self._model.dims)

    @property
    def max_tokens(self) -> int:
        return 512

    # ----- encoding ----------------------------------------------------------------------------

    def _encode(self, texts: list[str]) -> np.ndarray:
        self.load()
        matrix = self._model.mean_vectors(texts)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms > 0, norms, 1.0)  # an all-unknown text stays a zero vector

    def encode_documents(self, texts: Sequence[str], batch_size: int | None = None,
                         progress: Callable[[int, int], None] | None = None,
                         threads: int | None = None) -> np.ndarray:
        """Unit vectors (n, dims) float32 in the order of `texts` (`threads`: unused, one product)."""
        size = max(1, batch_size or self.batch_size)
        limit = self.max_tokens * 8  # characters past what the model reads are never tokenized
        prepared = [t[:limit] for t in texts]
        out = np.zeros((len(prepared), self.dims), dtype=np.float32)
        for start in range(0, len(prepared), size):
            out[start : start + size] = self._encode(prepared[start : start + size])
            if progress is not None:
                progress(min(start + size, len(prepared)), len(prepared))
        return out

    @property
    def query_space(self) -> str:
        """"transformer" when queries are encoded by the source model and projected, else "static"."""
        self.load()
        return "transformer" if self._projection is not None and not self._query_model_failed else "static"

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode_query_for(text, "understand_code")[0]

    def encode_query_for(self, text: str, intent: str) -> tuple[np.ndarray, str]:
        """The query's vector and which model read it ("transformer" or "static"). Only a question
        (`TRANSFORMER_INTENTS`, `MIN_QUESTION_WORDS` words or more) is worth the transformer's ~10 ms: a
        bare identifier, a definition, usage or similar-code lookup names code, which the static
        vectors match as well, in ~0.1 ms."""
        read = is_question(text, intent) and self.query_space == "transformer"
        deep = self._project(text) if read else None
        if deep is not None:  # (a half static, half MiniLM vector was measured: no better)
            return deep, "transformer"
        return self._encode([text[: self.max_tokens * 8]])[0], "static"

    def release(self) -> None:
        """Let the token vectors go, and the model that reads questions (`LazyModel.release`)."""
        super().release()
        query_model = self._query_model
        if query_model is not None:
            query_model.release()

    def read_questions_with(self, embedder: Any) -> None:
        """Have `embedder` (the transformer tier's, when it is the packaged MiniLM the projection is
        made for) read questions too, instead of loading a second copy of that model."""
        if self._query_model is None and getattr(embedder, "model_id", None) == DEFAULT_MODEL_ID \
                and getattr(embedder, "model", "unset") is None:
            self._query_model = embedder

    def _project(self, text: str) -> np.ndarray | None:
        """The source model's unit vector of `text` projected onto the static space (unit), or None
        when the source model cannot be loaded (then queries stay static, with one warning)."""
        assert self._projection is not None
        try:
            if self._query_model is None:
                from retrievers.semantic.embedder import Embedder, EmbedderOptions

                # One BLAS thread: a question is a dozen tokens, and a second thread on a loaded
                # 2-core machine made it slower (p50 73 -> 32 ms with one thread, at load 2-3).
                self._query_model = Embedder(None, EmbedderOptions(threads=1))
            vector = self._query_model.encode_query(text)
        except EmbedderError as exc:
            log.warning("queries fall back to the static model: %s", exc)
            self._query_model_failed = True
            return None
        if vector.shape[0] != self._projection.shape[0]:
            log.warning("queries fall back to the static model: the source model gives %d dims, the "
                        "projection expects %d", vector.shape[0], self._projection.shape[0])
            self._query_model_failed = True
            return None
        projected = vector @ self._projection
        norm = float(np.linalg.norm(projected))
        return projected / norm if norm > 0 else None


class _TokenVectors:
    """A model2vec model read directly (safetensors + tokenizers, no model2vec import): the mean of
    the vectors of a text's tokens, unknown tokens left out, the first `max_tokens` tokens only.

    The token vectors are memory-mapped from the safetensors file in its own dtype (`map_safetensors`):
    a query reads the rows of its few tokens, so a search process never holds the whole table (29 MiB
    as float32 for the packaged model); a batch of documents converts the table to float32 once, and
    from then on queries read that copy and the mapping is closed."""

    def __init__(self, directory: Path, max_tokens: int) -> None:
        from tokenizers import Tokenizer

        self.vectors = map_safetensors(directory / "model.safetensors")
        self._dense: np.ndarray | None = None  # float32, made by the first batch of documents
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        if self.tokenizer.get_vocab_size() != len(self.vectors):
            raise ValueError(
                f"{directory}: {self.tokenizer.get_vocab_size()} tokens but {len(self.vectors)} vectors")
        self.unk = self.tokenizer.token_to_id("[UNK]")
        self.max_tokens = max_tokens
        # (each distinct word tokenized once, for an uncased BERT vocabulary: `word_pieces`)
        self._words = word_piece_ids(self.tokenizer, directory / "tokenizer.json")
        self._lock = threading.Lock()

    @property
    def dims(self) -> int:
        return int(self.vectors.shape[1])

    def mean_vectors(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            if self._words is not None:
                indices, counts = self._words.id_arrays(texts, self.max_tokens)
            else:
                encoded = [e.ids[: self.max_tokens]
                           for e in self.tokenizer.encode_batch_fast(texts, add_special_tokens=False)]
                counts = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
                indices = np.fromiter(chain.from_iterable(encoded), dtype=np.int64, count=int(counts.sum()))
        if len(texts) == 1:  # a query: no sparse matrix, and no scipy import (~0.1 s) in a CLI search
            ids = indices
            if self.unk is not None:
                ids = ids[ids != self.unk]
            if not len(ids):
                return np.zeros((1, self.dims), dtype=np.float32)
            return self.vectors[ids].astype(np.float32).mean(axis=0, dtype=np.float32)[None, :]
        from scipy.sparse import csr_matrix

        if self.unk is not None:  # (unknown tokens count toward `max_tokens`, then are left out)
            known = indices != self.unk
            rows = np.repeat(np.arange(len(texts)), counts)[known]
            indices, counts = indices[known], np.bincount(rows, minlength=len(texts))
        indptr = np.concatenate(([0], np.cumsum(counts)))
        weights = np.repeat(1.0 / np.maximum(counts, 1), counts).astype(np.float32)
        # A (texts x vocabulary) matrix of token shares times the vectors: every mean in one product.
        shares = csr_matrix((weights, indices, indptr), shape=(len(texts), len(self.vectors)))
        with self._lock:
            if self._dense is None:
                self._dense = np.array(self.vectors, dtype=np.float32)
                # Queries read their rows from it too: the mapping, read whole to make it, is let go
                # (the packaged model's 15 MiB of file pages stay resident while it is mapped).
                self.vectors = self._dense
        return np.asarray(shares @ self._dense, dtype=np.float32)


def map_safetensors(path: Path) -> np.ndarray:
    """The `embeddings` tensor of a model2vec safetensors file, memory-mapped read-only when it is
    float32 or float16 (little-endian, as the format stores it), else read whole as float32; ValueError
    when the file holds anything else (vocabulary-quantized models need model2vec's mapping)."""
    with open(path, "rb") as fh:
        size = int.from_bytes(fh.read(8), "little")
        if not 0 < size <= 1 << 24:
            raise ValueError(f"{path}: not a safetensors file")
        header = json.loads(fh.read(size))
    header.pop("__metadata__", None)
    if set(header) != {"embeddings"}:
        raise ValueError(f"unsupported model2vec layout in {path.parent}: {sorted(header)}")
    info = header["embeddings"]
    dtype = {"F32": "<f4", "F16": "<f2"}.get(info.get("dtype"))
    shape = tuple(int(n) for n in info.get("shape", ()))
    start, stop = (int(n) for n in info.get("data_offsets", (0, 0)))
    if dtype is None or len(shape) != 2 or stop - start != shape[0] * shape[1] * np.dtype(dtype).itemsize:
        from safetensors.numpy import load_file

        return load_file(str(path))["embeddings"].astype(np.float32, copy=False)
    return np.memmap(path, dtype=dtype, mode="r", offset=8 + size + start, shape=shape)

