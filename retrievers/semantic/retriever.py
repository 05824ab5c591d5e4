"""The semantic retriever: chunk embeddings cached in the store, searched in an in-memory VectorIndex.

Each chunk is embedded as `embed_text(chunk, text)` (`retrievers.semantic.embedded_text`): its path (middle
dropped when long), its enclosing-scope header, its symbol and its code with the common indent and
blank lines removed.
Vectors are cached in the store's `embeddings` table under `cache_key(model_id, chunk)`, so an
unchanged chunk is embedded once, across runs; a warm start reads vectors without loading the model
(the model loads at the first query). The store meta records the model id, dims and normalization;
when another model is configured `model_changed` is set (the engine announces it) and every chunk
is embedded again under the new model's keys; vectors of two models never meet. The embedding of
pending chunks in batches (`embed_pending`) is `semantic.embed_pass`'s.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from indexing.array_folder import open_keyed, save_keyed
from indexing.chunk_table import by_id
from indexing.records import Chunk
from retrievers.base import Hit, Query, RetrieverError, SemanticDetail
from retrievers.scope import EVERYWHERE, Scope
from retrievers.semantic.embed_pass import EmbedPass, Progress
from retrievers.semantic.embedded_text import EMBED_TEXT_VERSION, cache_key
from retrievers.semantic.vectors import VectorIndex, VectorOptions

if TYPE_CHECKING:
    from retrievers.semantic.models import TextEmbedder

VECTOR_STATE_VERSION = 3  # in the saved vectors' stamp (2: centre settled over every row; 3: in blocks)


STATE_ARRAYS = ("ids", "vectors", "bits", "center", "centered_at")  # VectorIndex.export_state


class EmbeddingCache(Protocol):
    """What the retriever needs from the store (indexing.store.IndexStore provides it)."""

    def get_embeddings(self, model_id: str, keys: Sequence[str]) -> dict[str, bytes]: ...
    def has_embeddings(self, model_id: str) -> bool: ...
    def count_embeddings(self, model_id: str) -> int: ...
    def put_embeddings(self, model_id: str, items: Mapping[str, bytes]) -> None: ...
    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...


@dataclass
class SemanticOptions:
    """Embedding text shape, write batching and vector search tuning."""

    max_path_chars: int = 48
    max_chars: int = 1500  # of normalized code per chunk (the default model reads 256 tokens)
    # Chunks embedded and written to the cache per step; None: the embedder's `write_batch`
    # (64 for both tiers: a transformer's stop or progress line is never more than a batch of forward
    # passes away; the static tier's larger steps cost peak RSS).
    write_batch: int | None = None
    vectors: VectorOptions | None = None


class ChunkFiles(Protocol):
    """Where chunks are read from (indexing.workspace.Workspace): for a worker process that reads them."""

    root: Path

    def overlays(self) -> list[str]: ...


class SemanticRetriever(EmbedPass):
    """Embeds chunks (cache first), answers queries by cosine similarity; name "semantic"."""

    name = "semantic"

    def __init__(self, store: EmbeddingCache, read_text: Callable[[Chunk], str | None],
                 embedder: TextEmbedder | str | None = None, options: SemanticOptions | None = None,
                 meta_prefix: str = "embedding", files: ChunkFiles | None = None) -> None:
        from retrievers.semantic.models import make_embedder

        self._files = files  # read_text's files, for a worker process that reads them itself
        self.store = store
        self.embedder: TextEmbedder = (
            make_embedder(embedder) if embedder is None or isinstance(embedder, str) else embedder)
        self.options = options or SemanticOptions()
        self._read_text = read_text
        self._lock = threading.RLock()
        self._chunks: Mapping[int, Chunk] = {}  # a dict of its own once changed (`_own_chunks`)
        self._keys: dict[int, str] = {}
        self._pending: set[int] = set()
        self._vectors: VectorIndex | None = None
        self.loaded_saved = False  # the last index() read a saved vector file
        self.meta_prefix = meta_prefix  # one per tier: "embedding" (the main one), "embedding.deep"
        self.previous_model = store.get_meta(f"{meta_prefix}.model")
        self.model_changed = self.previous_model is not None and self.previous_model != self.model_id

    @property
    def model_id(self) -> str:
        return self.embedder.model_id

    def _key(self, chunk: Chunk) -> str:
        # Only the prefix known without loading the model is keyed: a model's own prompts are part
        # of the model, named by its id already.
        prefix = (self.embedder.configured_prefixes or ("", ""))[1]
        o = self.options
        if chunk.content_hash:
            return cache_key(self.model_id, chunk, prefix, max_chars=o.max_chars,
                             max_path_chars=o.max_path_chars)
        text = self._text_of(chunk) or ""
        return cache_key(self.model_id, chunk, prefix, text=text, max_chars=o.max_chars,
                         max_path_chars=o.max_path_chars)

    def _text_of(self, chunk: Chunk) -> str | None:
        try:
            return self._read_text(chunk)
        except (OSError, UnicodeError, ValueError, KeyError):
            return None

    def _record_meta(self, dims: int) -> None:
        prefix = self.meta_prefix
        if self.store.get_meta(f"{prefix}.model") != self.model_id:
            self.store.set_meta(f"{prefix}.model", self.model_id)
        if self.store.get_meta(f"{prefix}.dims") != str(dims):
            self.store.set_meta(f"{prefix}.dims", str(dims))
        if self.store.get_meta(f"{prefix}.normalized") != "true":
            self.store.set_meta(f"{prefix}.normalized", "true")

    def _add_vectors(self, ids: list[int], matrix: np.ndarray, room: int = 0) -> None:
        if not ids:
            return
        if self._vectors is None or self._vectors.dims != matrix.shape[1]:
            self._vectors = VectorIndex(matrix.shape[1], self.options.vectors)
        self._vectors.add(ids, matrix, room)
        self._record_meta(matrix.shape[1])

    def _load_cached(self, chunks: Sequence[Chunk]) -> None:
        """Take vectors for `chunks` from the cache; the rest become pending. Caller holds the lock."""
        if chunks and not self.store.has_embeddings(self.model_id):
            self._pending.update(c.id for c in chunks)  # nothing cached: keys are made when embedding
            return
        keys = {c.id: self._key(c) for c in chunks}
        self._keys.update(keys)
        cached = self.store.get_embeddings(self.model_id, list(dict.fromkeys(keys.values())))
        dims = self._vectors.dims if self._vectors is not None else None
        ids: list[int] = []
        rows: list[np.ndarray] = []
        for c in chunks:
            blob = cached.get(keys[c.id])
            if blob is not None and len(blob) % 2 == 0 and (dims is None or len(blob) == 2 * dims):
                dims = len(blob) // 2
                ids.append(c.id)
                rows.append(np.frombuffer(blob, dtype="<f2"))
            else:
                self._pending.add(c.id)
        if ids:
            self._add_vectors(ids, np.vstack(rows).astype(np.float32))

    def _stamp(self, stamp: str) -> str:
        return (f"{stamp}|{self.model_id}|{EMBED_TEXT_VERSION}|{VECTOR_STATE_VERSION}|"
                f"{self.store.count_embeddings(self.model_id)}")

    def _settle(self) -> None:
        """Once nothing is pending, the vector index's centre is taken over all its rows (caller
        holds the lock): the same chunks give the same Hamming candidates however they were embedded."""
        if not self._pending and self._vectors is not None:
            self._vectors.settle()

    def _own_chunks(self) -> dict[int, Chunk]:
        """The chunks held, as this retriever's own dict (a mapping it was given is copied at its first
        change; caller holds the lock)."""
        if not isinstance(self._chunks, dict):
            self._chunks = dict(self._chunks)
        return self._chunks

    def _load_saved(self, chunks: Mapping[int, Chunk], saved: Path, stamp: str) -> bool:
        """Map the vectors saved for this index revision and this cache state (False: use the cache):
        copy-on-write, so a search reads only the rows it scores and a change stays in memory."""
        state = open_keyed(saved.parent, f"{saved.name}-", self._stamp(stamp), STATE_ARRAYS, private=True)
        if state is None or state["centered_at"].shape != (1,):
            return False
        state["centered_at"] = np.array(int(state["centered_at"][0]))
        ids = state["ids"]
        ids_of = getattr(chunks, "ids", None)  # (a saved table names its ids without making chunks)
        wanted = ids_of if isinstance(ids_of, np.ndarray) else \
            np.fromiter(chunks, dtype=np.int64, count=len(chunks))
        keep = np.isin(ids, wanted)
        if keep.any():
            dims = int(state["vectors"].shape[1]) if state["vectors"].ndim == 2 else 0
            try:
                index = VectorIndex(dims, self.options.vectors)
                index.restore(state, None if keep.all() else keep)
            except ValueError:
                return False
            self._vectors = index
            self._record_meta(dims)
        missing = wanted[~np.isin(wanted, ids[keep])] if keep.any() else wanted  # (no 10^5-id sets)
        self._pending.update(missing.tolist())
        self._settle()  # (a saved state is settled; some of its rows left out is another set)
        self.loaded_saved = True
        return True

    def save(self, path: Path, stamp: str) -> None:
        """Write the vector index's state (ids, float16 rows, sign bits, centre) for `_load_saved`, as a
        folder of `.npy` per stamp beside `path` (`indexing.array_folder.save_keyed`: those of other
        stamps go). Silent when not writable."""
        with self._lock:
            state = (self._vectors or VectorIndex(1)).export_state()
            stamp_text = self._stamp(stamp)
        state["centered_at"] = np.asarray(state["centered_at"]).reshape(1)
        if save_keyed(path.parent, f"{path.name}-", stamp_text, state):
            path.with_name(path.name + ".npz").unlink(missing_ok=True)  # (an older version's single file)

    # ----- Retriever ---------------------------------------------------------------------------

    def index(self, chunks: Sequence[Chunk] | Mapping[int, Chunk], *, embed: bool = True,
              progress: Progress | None = None, saved: Path | None = None, stamp: str = "") -> None:
        """Hold exactly `chunks` (a list, or a mapping by id: held as it is until a change, so a saved
        table's chunks are made only as they are read): cached vectors are loaded, the rest embedded
        (unless `embed=False`). With `saved`, vectors that `save()` wrote there under the same `stamp`
        are read in one go."""
        with self._lock:
            self._chunks = by_id(chunks)
            self._keys, self._pending, self._vectors = {}, set(), None
            if saved is None or not self._load_saved(self._chunks, saved, stamp):
                self._load_cached(list(self._chunks.values()))
                self._settle()
        if embed:
            self.embed_pending(progress)

    def update(self, added: Sequence[Chunk], removed_ids: Sequence[int], *, embed: bool = True,
               progress: Progress | None = None) -> None:
        with self._lock:
            self._drop(list(removed_ids) + [c.id for c in added])
            self._own_chunks().update((c.id, c) for c in added)
            self._load_cached(added)
            self._settle()
        if embed:
            self.embed_pending(progress)

    def remove(self, ids: Sequence[int]) -> None:
        with self._lock:
            self._drop(ids)
            self._settle()

    def _drop(self, ids: Sequence[int]) -> None:
        own = self._own_chunks()
        for i in ids:
            own.pop(i, None)
            self._keys.pop(i, None)
            self._pending.discard(i)
        if self._vectors is not None:
            self._vectors.remove(ids)

    def ids(self) -> set[int]:
        """Chunk ids held, embedded or pending."""
        with self._lock:
            return set(self._chunks)

    def pending(self) -> int:
        """Chunks not yet embedded."""
        return len(self._pending)

    def embedded(self) -> int:
        return len(self._vectors) if self._vectors is not None else 0

    def has_vector(self, chunk_id: int) -> bool:
        with self._lock:
            return self._vectors is not None and chunk_id in self._vectors

    def search(self, query: Query, limit: int, scope: Scope = EVERYWHERE, *,
               skip: Callable[[int], bool] | None = None, tier: str | None = None) -> list[Hit]:
        """Chunks within `scope` nearest to the query's embedding (`detail.cosine`, and `tier` when
        given), leaving out the ids `skip` names (the tiered retriever's chunks another tier ranks);
        loads the model if needed."""
        with self._lock:
            vectors = self._vectors
            chunks = self._chunks
        if vectors is None or len(vectors) == 0 or limit <= 0 or not query.text.strip():
            return []
        read_for = getattr(self.embedder, "encode_query_for", None)
        if read_for is not None:  # a static model that can have the transformer read a question
            q, reader = read_for(query.text, query.intent)
        else:
            q, reader = self.embedder.encode_query(query.text), ""
        if q.shape[0] != vectors.dims:
            raise RetrieverError(f"query vector has {q.shape[0]} dims, the index {vectors.dims}")

        exclude = query.exclude

        def allowed(chunk_id: int) -> bool:
            chunk = chunks.get(chunk_id)
            if chunk is None or chunk_id in exclude or not scope.admits(chunk.path):
                return False
            return skip is None or not skip(chunk_id)

        plain = scope.unrestricted and skip is None and not exclude  # then only a chunk's presence matters
        with self._lock:
            found = vectors.search(q, limit, allowed=chunks.__contains__ if plain else allowed)
        # A static model trained in the source model's space reads the question with the transformer.
        read_by = "transformer" if tier is not None and reader == "transformer" else None
        return [Hit(cid, score, SemanticDetail(round(score, 4), tier, read_by)) for cid, score in found]

    def similar(self, chunk_id: int, limit: int) -> list[Hit]:
        """Chunks nearest to a chunk's own vector (itself excluded)."""
        with self._lock:
            if self._vectors is None:
                return []
            vec = self._vectors.vector(chunk_id)
            if vec is None:
                return []
            found = self._vectors.search(vec, limit, allowed=lambda i: i != chunk_id)
        return [Hit(cid, score, SemanticDetail(round(score, 4))) for cid, score in found]
