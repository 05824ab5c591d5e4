"""The persisted index: one SQLite database (WAL) holding files, chunks, definitions, calls, imports
and the embedding cache. It stores coordinates, hashes and symbol metadata, never source text.

Writes go through one connection guarded by a lock; each file's row and all its records are written
in one transaction (`replace_file`), so a killed indexer leaves every file fully old or fully new.
`transaction()` groups several files into one commit for speed without weakening that guarantee.
Readers use their own per-thread connection and see the last committed state without waiting
(WAL), so an LSP worker thread can search while the indexer writes. Several processes share one
index: writers hold `writer` (an inter-process lock, `indexing/locking.py`); damage is detected and
rebuilt (`indexing/integrity.py`, `indexing/store_health.py`). The reads of the records are
`indexing/store_records.py`'s, those of the embedding cache `indexing/store_embeddings.py`'s.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from indexing.integrity import OpenMarker, describe, is_corruption, quick_check, read_only_uri
from indexing.location import DB_NAME
from indexing.locking import WriterLock
from indexing.records import Chunk, FileInfo, ParseResult
from indexing.store_embeddings import EMBEDDINGS_SCHEMA, EmbeddingCache, migrate_hex_keys
from indexing.store_health import StoreHealth
from indexing.store_records import RecordReads, labels_of

SCHEMA_VERSION = "4"  # 3: embeddings in a rowid table; 4: their model by number, cache keys as bytes
MIGRATES = {"3": migrate_hex_keys}  # layouts converted in place (any other is rebuilt)
STALE = ""  # the hash of a file row marked for re-parsing

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    hash TEXT NOT NULL, language TEXT, labels TEXT NOT NULL, status TEXT NOT NULL, error TEXT);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT, file_id INTEGER NOT NULL, start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL, start_byte INTEGER NOT NULL, end_byte INTEGER NOT NULL, kind TEXT NOT NULL,
    symbol TEXT, content_hash TEXT NOT NULL, header TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id);
CREATE TABLE IF NOT EXISTS definitions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, file_id INTEGER NOT NULL, name TEXT NOT NULL,
    qualified_name TEXT NOT NULL, kind TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
    start_byte INTEGER NOT NULL, end_byte INTEGER NOT NULL, name_line INTEGER NOT NULL,
    name_column INTEGER NOT NULL, signature TEXT NOT NULL, doc TEXT NOT NULL, parent TEXT,
    bases TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS definitions_file ON definitions(file_id);
CREATE INDEX IF NOT EXISTS definitions_name ON definitions(name);
CREATE TABLE IF NOT EXISTS calls (
    file_id INTEGER NOT NULL, line INTEGER NOT NULL, col INTEGER NOT NULL, end_col INTEGER NOT NULL,
    callee TEXT NOT NULL, receiver TEXT, caller TEXT, receiver_type TEXT);
CREATE INDEX IF NOT EXISTS calls_file ON calls(file_id);
CREATE TABLE IF NOT EXISTS imports (
    file_id INTEGER NOT NULL, line INTEGER NOT NULL, module TEXT NOT NULL, name TEXT, alias TEXT);
CREATE INDEX IF NOT EXISTS imports_file ON imports(file_id);
""" + EMBEDDINGS_SCHEMA
TABLES = ("meta", "files", "chunks", "definitions", "calls", "imports", "models", "embeddings")


class StoreError(Exception):
    """The index database could not be opened or written."""


class StoreClosed(StoreError):
    """The store was closed (its root stopped or restarted) before this read."""


@dataclass(frozen=True)
class FileRow:
    """What the index knows about one file."""

    path: str
    size: int
    mtime_ns: int
    hash: str
    language: str | None
    labels: tuple[str, ...]
    status: str
    error: str | None
    id: int = 0


class IndexStore(StoreHealth, RecordReads, EmbeddingCache):
    """SQLite index at `<index_dir>/index.sqlite3`; created (or rebuilt on a schema change) on open."""

    def __init__(self, index_dir: Path) -> None:
        self.index_dir = Path(index_dir)
        self.path = self.index_dir / DB_NAME
        self._write_lock = threading.RLock()
        self._local = threading.local()  # each thread's reader connection
        self._closed = False
        self._depth = 0  # nesting of transaction()
        self._next_ids: dict[str, int] = {}
        self.notices: list[str] = []  # one line each: damage found and repaired, waits for other writers
        self.marker = OpenMarker(self.index_dir)
        self.writer = WriterLock(self.index_dir, on_wait=self.notice)
        try:
            self.index_dir.mkdir(parents=True, exist_ok=True)
            # An index this process cannot write is still searched as it is (no updates: workspace.py).
            self._uri = read_only_uri(self.path)
            self.read_only = self.writer.read_only = self._uri is not None
            unclean = self.marker.unclean()
            try:
                self._db = self._connect()
                problem = quick_check(self._db) if unclean else "ok"
                if problem != "ok":
                    raise sqlite3.DatabaseError(f"database disk image is malformed ({problem})")
                self._init_schema()
            except sqlite3.DatabaseError as exc:
                if not is_corruption(exc):
                    raise
                # The index is a cache: set a damaged file aside and start afresh.
                self.notice(f"the index at {self.index_dir} was damaged ({exc}); rebuilding it")
                self._set_aside()
                self._db = self._connect()
                self._init_schema()
            self.marker.create()
        except (OSError, sqlite3.Error) as exc:
            message = describe(exc, self.index_dir) or f"cannot open index at {self.path}: {exc}"
            raise StoreError(message) from exc

    # -- connections -------------------------------------------------------------------------------
    def _open_db(self) -> sqlite3.Connection:
        if self._uri is not None:
            return sqlite3.connect(self._uri, uri=True, timeout=30.0, isolation_level=None,
                                   check_same_thread=False)
        return sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)

    def _connect(self) -> sqlite3.Connection:
        db = self._open_db()
        if self._uri is not None:
            self._inode = os.stat(self.path).st_ino
            return db
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA temp_store=MEMORY")
        self._inode = os.stat(self.path).st_ino
        return db

    def _init_schema(self) -> None:
        with self._write_lock:
            row = None
            try:
                row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            except sqlite3.OperationalError:
                pass  # a new database
            if row is not None and row[0] in MIGRATES and not self.read_only:
                self._migrate(MIGRATES[row[0]])
                row = (SCHEMA_VERSION,)
            have = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            missing = [t for t in TABLES if t not in have]
            if self.read_only:
                if row is None or missing or row[0] != SCHEMA_VERSION:
                    raise StoreError(f"the index at {self.index_dir} is read-only and cannot be used as "
                                     "it is (another layout, or incomplete): make it writable or put the "
                                     "index elsewhere (--index-dir, $CODESEEK_INDEX_DIR)")
                return
            if row is not None and missing:
                # A table was lost (dropped by hand, a damaged schema): rebuild the records from the
                # files, keeping the embedding cache (keyed by content hash) when it is there whole
                # (its rows name their model by a number only the `models` table resolves).
                self.notice(f"the index at {self.index_dir} lacks table(s) {', '.join(missing)}; "
                            "rebuilding it")
                kept = () if "models" in missing else ("models", "embeddings")
                for table in TABLES:
                    if table not in kept:
                        self._db.execute(f"DROP TABLE IF EXISTS {table}")
            elif row is not None and row[0] != SCHEMA_VERSION:
                # The index is a cache: a different layout is rebuilt, not migrated.
                for table in TABLES:
                    self._db.execute(f"DROP TABLE IF EXISTS {table}")
            self._db.executescript(SCHEMA)
            self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)",
                             (SCHEMA_VERSION,))
            # A token that changes whenever the database is created afresh (ids start over), so
            # indexes kept beside the store (tantivy, vectors) can tell they are stale.
            self._db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('generation', ?)",
                             (uuid.uuid4().hex,))

    def _migrate(self, convert: Callable[[sqlite3.Connection], None]) -> None:
        """Bring an earlier layout to this one in one transaction (`convert`: its embedding cache; the
        other tables are as they were)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if row is not None and row[0] == SCHEMA_VERSION:  # another process converted it meanwhile
                self._db.execute("COMMIT")
                return
            convert(self._db)
            self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)",
                             (SCHEMA_VERSION,))
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    @property
    def _reader(self) -> sqlite3.Connection:
        """This thread's read connection (made on first use); StoreClosed once the store is closed."""
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            self._refuse_if_closed()
            db = self._open_db()
            self._local.db = db
        return db

    def _close_readers(self) -> None:
        """Let go of every thread's reader connection. None is closed here: another thread may be in
        the middle of a statement on it, and closing a connection under a running statement crashes
        the interpreter. Each connection closes when its last user drops it (at once when idle)."""
        self._local = threading.local()

    def _refuse_if_closed(self) -> None:
        if self._closed:
            raise StoreClosed(f"the index at {self.index_dir} is closed")

    def close(self) -> None:
        self._closed = True
        self._close_readers()
        with self._write_lock:
            self._db.close()
        self.marker.remove()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group writes into one commit (nestable); rolled back whole if the block raises."""
        with self._write_lock:
            self._refuse_if_closed()
            if self._depth == 0:
                self._db.execute("BEGIN IMMEDIATE")
                self._next_ids.clear()
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                if self._depth == 0:
                    if self._db.in_transaction:  # (SQLite rolls back itself on a full disk)
                        self._db.execute("ROLLBACK")
                    self._next_ids.clear()
                raise
            self._depth -= 1
            if self._depth == 0:
                self._db.execute("COMMIT")
                self._next_ids.clear()

    def _take_ids(self, table: str, count: int) -> int:
        """First of `count` fresh ids for `table` (AUTOINCREMENT: ids are never reused)."""
        start = self._next_ids.get(table)
        if start is None:
            row = self._db.execute("SELECT seq FROM sqlite_sequence WHERE name=?", (table,)).fetchone()
            start = (row[0] if row else 0) + 1
        self._next_ids[table] = start + count
        return start

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads in this block (on this thread) see one consistent committed state."""
        db = self._reader
        if db.in_transaction:
            yield
            return
        db.execute("BEGIN")
        try:
            yield
        finally:
            db.execute("COMMIT")

    # -- meta --------------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self._reader.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction():
            self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    # -- files -------------------------------------------------------------------------------------
    def files(self) -> dict[str, FileRow]:
        rows = self._reader.execute(
            "SELECT path, size, mtime_ns, hash, language, labels, status, error, id FROM files")
        return {r[0]: FileRow(r[0], r[1], r[2], r[3], r[4], labels_of(r[5]), r[6], r[7], r[8]) for r in rows}

    def file(self, path: str) -> FileRow | None:
        r = self._reader.execute("SELECT path, size, mtime_ns, hash, language, labels, status, error, id "
                                 "FROM files WHERE path=?", (path,)).fetchone()
        return None if r is None else FileRow(r[0], r[1], r[2], r[3], r[4], labels_of(r[5]), r[6], r[7], r[8])

    def _delete_records(self, file_id: int) -> list[int]:
        ids = [r[0] for r in self._db.execute("SELECT id FROM chunks WHERE file_id=?", (file_id,))]
        for table in ("chunks", "definitions", "calls", "imports"):
            self._db.execute(f"DELETE FROM {table} WHERE file_id=?", (file_id,))
        return ids

    def replace_file(self, info: FileInfo, content_hash: str, result: ParseResult) -> list[Chunk]:
        """Write a file's row and all its records in one transaction; returns the chunks with ids."""
        return self.replace_file_diff(info, content_hash, result)[0]

    def replace_file_diff(self, info: FileInfo, content_hash: str,
                          result: ParseResult) -> tuple[list[Chunk], list[int]]:
        """`replace_file`, also returning the ids of the chunks it replaced."""
        labels = ",".join(info.labels)
        with self.transaction():
            row = self._db.execute("SELECT id FROM files WHERE path=?", (info.path,)).fetchone()
            if row is None:
                cur = self._db.execute(
                    "INSERT INTO files(path, size, mtime_ns, hash, language, labels, status, error) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (info.path, info.size, info.mtime_ns, content_hash, info.language, labels,
                     result.status, result.error))
                file_id = int(cur.lastrowid or 0)
                removed: list[int] = []
            else:
                file_id = int(row[0])
                removed = self._delete_records(file_id)
                self._db.execute(
                    "UPDATE files SET size=?, mtime_ns=?, hash=?, language=?, labels=?, status=?, error=? "
                    "WHERE id=?",
                    (info.size, info.mtime_ns, content_hash, info.language, labels, result.status,
                     result.error, file_id))
            chunks = self._insert_records(file_id, info, result)
        return chunks, removed

    def _insert_records(self, file_id: int, info: FileInfo, result: ParseResult) -> list[Chunk]:
        start = self._take_ids("chunks", len(result.chunks))
        chunks: list[Chunk] = []
        rows = []
        for offset, c in enumerate(result.chunks):
            cid = start + offset
            rows.append((cid, file_id, c.start_line, c.end_line, c.start_byte, c.end_byte, c.kind, c.symbol,
                         c.content_hash, c.header))
            chunks.append(Chunk(info.path, info.language, c.start_line, c.end_line, c.start_byte, c.end_byte,
                                c.kind, c.symbol, info.labels, c.content_hash, c.header, cid))
        self._db.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        dstart = self._take_ids("definitions", len(result.definitions))
        for i, d in enumerate(result.definitions):  # (the ids they are stored under: `indexing.record_log`)
            d.id = dstart + i
        self._db.executemany(
            "INSERT INTO definitions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(dstart + i, file_id, d.name, d.qualified_name, d.kind, d.start_line, d.end_line, d.start_byte,
              d.end_byte, d.name_line, d.name_column, d.signature, d.doc, d.parent,
              json.dumps(list(d.bases)) if d.bases else "") for i, d in enumerate(result.definitions)])
        self._db.executemany(
            "INSERT INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(file_id, s.line, s.column, s.end_column, s.callee, s.receiver, s.caller, s.receiver_type)
             for s in result.calls])
        self._db.executemany(
            "INSERT INTO imports VALUES (?, ?, ?, ?, ?)",
            [(file_id, i.line, i.module, i.name, i.alias) for i in result.imports])
        return chunks

    def touch_file(self, info: FileInfo) -> None:
        """Record a new size/mtime for a file whose content (hash) did not change."""
        with self.transaction():
            self._db.execute("UPDATE files SET size=?, mtime_ns=? WHERE path=?",
                             (info.size, info.mtime_ns, info.path))

    def mark_stale(self, path: str) -> None:
        """Mark one file for re-parsing (its chunk rows did not match its bytes)."""
        with self.transaction():
            self._db.execute("UPDATE files SET hash=? WHERE path=?", (STALE, path))

    def invalidate_all(self) -> None:
        """Mark every file for re-parsing (its records stay until it is replaced)."""
        with self.transaction():
            self._db.execute("UPDATE files SET hash=?", (STALE,))

    def remove_file(self, path: str) -> list[int]:
        """Drop a file and its records; returns the removed chunk ids."""
        with self.transaction():
            row = self._db.execute("SELECT id FROM files WHERE path=?", (path,)).fetchone()
            if row is None:
                return []
            removed = self._delete_records(int(row[0]))
            self._db.execute("DELETE FROM files WHERE id=?", (row[0],))
        return removed

    def integrity_check(self) -> str:
        """`PRAGMA integrity_check` ("ok" when the database is sound)."""
        return str(self._reader.execute("PRAGMA integrity_check").fetchone()[0])


def database_path(index_dir: Path | str) -> Path:
    return Path(os.fspath(index_dir)) / DB_NAME
