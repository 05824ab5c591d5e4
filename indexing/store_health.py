"""The health half of `IndexStore`: notices, rebuilding a damaged database, the cross-process stamp.

A mixin so that `indexing/store.py` keeps to the records. `IndexStore` provides the connections
(`_connect`, `_init_schema`, `_reader`, `_close_readers`) and the attributes declared here.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path
from typing import Any

from indexing.integrity import is_corruption, quick_check
from indexing.locking import WriterLock

log = logging.getLogger("codeseek.index")


class StoreHealth:
    """Notices, `rebuild_if_damaged`, `check`, `stamp` over the store's connections."""

    index_dir: Path
    path: Path
    notices: list[str]
    writer: WriterLock
    _db: sqlite3.Connection
    _write_lock: Any
    _inode: int

    def _connect(self) -> sqlite3.Connection:
        raise NotImplementedError

    def _init_schema(self) -> None:
        raise NotImplementedError

    def _close_readers(self) -> None:
        raise NotImplementedError

    @property
    def _reader(self) -> sqlite3.Connection:
        raise NotImplementedError

    def notice(self, message: str) -> None:
        """Record (and log) a one-line notice for the front end to show."""
        log.warning("%s", message)
        self.notices.append(message)

    def take_notices(self) -> list[str]:
        out, self.notices = self.notices, []
        return out

    def _set_aside(self) -> None:
        try:
            self._db.close()
        except (AttributeError, sqlite3.Error):
            pass
        for suffix in ("", "-wal", "-shm"):
            part = Path(str(self.path) + suffix)
            if part.exists():
                os.replace(part, Path(str(part) + ".corrupt"))

    def rebuild_if_damaged(self, reason: BaseException, force: bool = True) -> bool:
        """After a corruption error: check the database and, when it is damaged, start a fresh one
        (another process may have done so already: then just reconnect). `force`: `reason` came from
        this database, so a corruption error is proof enough. True if a rebuild happened."""
        with self.writer.hold(), self._write_lock:
            self._close_readers()
            if not self._replaced() and (quick_check(self._db) != "ok" or (force and is_corruption(reason))):
                self.notice(f"the index at {self.index_dir} was damaged ({reason}); rebuilding it")
                self._set_aside()
                self._db = self._connect()
                self._init_schema()
                return True
            self._reopen()
            return False

    def _reopen(self) -> None:
        self._db.close()
        self._db = self._connect()
        self._init_schema()

    def _replaced(self) -> bool:
        """Whether the database file was replaced (rebuilt by another process) since we opened it."""
        try:
            return os.stat(self.path).st_ino != self._inode
        except OSError:
            return True

    def check(self) -> str:
        """`PRAGMA quick_check` of the database: "ok" or the first problems."""
        return quick_check(self._reader)

    def stamp(self) -> str:
        """`<generation>:<revision>`: changes whenever any process commits a change to the index (or
        rebuilds it); a replaced database file is reopened first."""
        if self._replaced():
            with self._write_lock:
                self._close_readers()
                self._reopen()
        rows = dict(self._reader.execute(
            "SELECT key, value FROM meta WHERE key IN ('generation', 'revision')"))
        return f"{rows.get('generation', '')}:{rows.get('revision', '0')}"
