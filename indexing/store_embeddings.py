"""The embedding cache table of the index store: vectors by (model id, embedded-text key).

`EmbeddingCache` is the part of `indexing.store.IndexStore` that reads and writes the `embeddings`
table (schema in docs/design.md, "The SQLite store"): a vector is keyed by the model and a hash of
the text embedded, so a model change or an edit re-embeds only what the cache does not hold.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager

__all__ = ["EmbeddingCache"]

_BATCH = 500  # keys per `IN (...)` query (SQLite's default limit on host parameters is 999)
_ROWS = 300  # rows per INSERT (3 parameters each: within that limit too)


class EmbeddingCache:
    """get/put/count vectors of the `embeddings` table over the store's connections."""

    _db: sqlite3.Connection

    @property
    def _reader(self) -> sqlite3.Connection:
        raise NotImplementedError

    def transaction(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def get_embeddings(self, model_id: str, keys: Sequence[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        unique = list(dict.fromkeys(keys))
        for i in range(0, len(unique), _BATCH):
            part = unique[i:i + _BATCH]
            marks = ",".join("?" * len(part))
            rows = self._reader.execute(
                f"SELECT key, vector FROM embeddings WHERE model=? AND key IN ({marks})", (model_id, *part))
            out.update((str(k), bytes(v)) for k, v in rows)
        return out

    def count_embeddings(self, model_id: str) -> int:
        """Vectors of `model_id` in the cache (a freshness stamp for saved vector files)."""
        row = self._reader.execute("SELECT count(*) FROM embeddings WHERE model=?", (model_id,)).fetchone()
        return int(row[0])

    def has_embeddings(self, model_id: str) -> bool:
        """True when any vector of `model_id` is cached."""
        row = self._reader.execute("SELECT 1 FROM embeddings WHERE model=? LIMIT 1", (model_id,)).fetchone()
        return row is not None

    def put_embeddings(self, model_id: str, items: Mapping[str, bytes]) -> None:
        """Cache `items` (key -> vector bytes) for `model_id`, `_ROWS` rows a statement: `executemany`
        releases the GIL around every row's step, and the embedding thread that writes them must
        then wait for a busy main thread (building the call graph) to hand it back, once a row (the
        Django sdist's 42k: its graph, built beside the embedding, took 2.77 s, now 2.5-2.6 s)."""
        rows = [(model_id, k, sqlite3.Binary(v)) for k, v in items.items()]
        with self.transaction():
            for i in range(0, len(rows), _ROWS):
                part = rows[i:i + _ROWS]
                values = ",".join(("(?, ?, ?)",) * len(part))
                self._db.execute(f"INSERT OR REPLACE INTO embeddings(model, key, vector) VALUES {values}",
                                 [field for row in part for field in row])
