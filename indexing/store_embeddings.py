"""The embedding cache table of the index store: vectors by (model, embedded-text key).

`EmbeddingCache` is the part of `indexing.store.IndexStore` that reads and writes the `embeddings`
table (schema in docs/design.md, "The SQLite store"): a vector is keyed by the model and a hash of
the text embedded, so a model change or an edit re-embeds only what the cache does not hold.

A row names its model by a number (the `models` table) and its key by the key's 16 bytes when the key
is a cache key's 32 lowercase hex digits (any other key is kept as text): the table's primary-key index
then holds ~25 bytes an entry instead of ~80 (the model's name and the hex key in every row), and
caching the Django sdist's 45k static vectors took 0.18 s of CPU instead of 0.46 s (schema 4;
`migrate_hex_keys` converts a schema 3 cache in place).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager

__all__ = ["EMBEDDINGS_SCHEMA", "EmbeddingCache", "create_cache_tables", "migrate_hex_keys", "pack_key",
           "unpack_key"]

EMBEDDINGS_SCHEMA = """
CREATE TABLE IF NOT EXISTS models (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS embeddings (
    model INTEGER NOT NULL, key BLOB NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (model, key));
"""
_BATCH = 500  # keys per `IN (...)` query (SQLite's default limit on host parameters is 999)
_ROWS = 300  # rows per INSERT (3 parameters each: within that limit too)
_HEX_KEY = re.compile(r"[0-9a-f]{32}")


def pack_key(key: str) -> bytes | str:
    """A key as the table holds it: a cache key's 16 bytes, any other key as it is."""
    return bytes.fromhex(key) if _HEX_KEY.fullmatch(key) else key


def unpack_key(stored: bytes | str) -> str:
    return stored.hex() if isinstance(stored, bytes) else str(stored)


def create_cache_tables(db: sqlite3.Connection) -> None:
    """`EMBEDDINGS_SCHEMA`, a statement at a time (in the caller's transaction: `executescript` would
    commit it)."""
    for statement in EMBEDDINGS_SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)


def migrate_hex_keys(db: sqlite3.Connection) -> None:
    """Convert a schema 3 cache (model name and hex key in every row) to schema 4's, in the caller's
    transaction: the cached vectors stay (a transformer tier may hold hours of work). A store without
    an `embeddings` table gets an empty cache."""
    if db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='embeddings'").fetchone() is None:
        create_cache_tables(db)
        return
    db.execute("ALTER TABLE embeddings RENAME TO embeddings_hex")
    create_cache_tables(db)
    db.execute("INSERT OR IGNORE INTO models(name) SELECT DISTINCT model FROM embeddings_hex")
    db.create_function("codeseek_pack_key", 1, pack_key, deterministic=True)
    db.execute("INSERT OR REPLACE INTO embeddings(model, key, vector) SELECT m.id, codeseek_pack_key(e.key), "
               "e.vector FROM embeddings_hex e JOIN models m ON m.name = e.model")
    db.execute("DROP TABLE embeddings_hex")


class EmbeddingCache:
    """get/put/count vectors of the `embeddings` table over the store's connections."""

    _db: sqlite3.Connection

    @property
    def _reader(self) -> sqlite3.Connection:
        raise NotImplementedError

    def transaction(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def _model_number(self, db: sqlite3.Connection, model_id: str) -> int | None:
        row = db.execute("SELECT id FROM models WHERE name=?", (model_id,)).fetchone()
        return None if row is None else int(row[0])

    def get_embeddings(self, model_id: str, keys: Sequence[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        model = self._model_number(self._reader, model_id)
        if model is None:
            return out
        unique = list(dict.fromkeys(map(pack_key, keys)))
        for i in range(0, len(unique), _BATCH):
            part = unique[i:i + _BATCH]
            marks = ",".join("?" * len(part))
            rows = self._reader.execute(
                f"SELECT key, vector FROM embeddings WHERE model=? AND key IN ({marks})", (model, *part))
            out.update((unpack_key(k), bytes(v)) for k, v in rows)
        return out

    def count_embeddings(self, model_id: str) -> int:
        """Vectors of `model_id` in the cache (a freshness stamp for saved vector files)."""
        row = self._reader.execute("SELECT count(*) FROM embeddings WHERE model=(SELECT id FROM models "
                                   "WHERE name=?)", (model_id,)).fetchone()
        return int(row[0])

    def has_embeddings(self, model_id: str) -> bool:
        """True when any vector of `model_id` is cached."""
        row = self._reader.execute("SELECT 1 FROM embeddings WHERE model=(SELECT id FROM models WHERE "
                                   "name=?) LIMIT 1", (model_id,)).fetchone()
        return row is not None

    def put_embeddings(self, model_id: str, items: Mapping[str, bytes]) -> None:
        """Cache `items` (key -> vector bytes) for `model_id`, `_ROWS` rows a statement: `executemany`
        releases the GIL around every row's step, and the embedding thread that writes them must
        then wait for a busy main thread (building the call graph) to hand it back, once a row (the
        Django sdist's 42k: its graph, built beside the embedding, took 2.77 s, now 2.5-2.6 s)."""
        with self.transaction():
            model = self._model_number(self._db, model_id)
            if model is None:
                added = self._db.execute("INSERT INTO models(name) VALUES (?)", (model_id,))
                model = int(added.lastrowid or 0)
            rows = [(model, pack_key(k), sqlite3.Binary(v)) for k, v in items.items()]
            for i in range(0, len(rows), _ROWS):
                part = rows[i:i + _ROWS]
                values = ",".join(("(?, ?, ?)",) * len(part))
                self._db.execute(f"INSERT OR REPLACE INTO embeddings(model, key, vector) VALUES {values}",
                                 [field for row in part for field in row])
