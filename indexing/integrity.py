"""Index health: clean-close markers, corruption detection, and errors a user can act on.

- `OpenMarker`: each process that opens an index writes `<index_dir>/open-<pid>` and removes it when it
  closes the store. A marker whose process is gone means a run did not close cleanly (killed, crashed,
  power loss): the next open runs `PRAGMA quick_check` before trusting the database.
- `is_corruption(exc)`: the sqlite3 errors that mean a damaged file (malformed image, not a database),
  as opposed to a busy lock or a full disk.
- `describe(exc, where)`: one line a user can act on for disk full, read-only, a name too long, a file
  where a folder should be; None for anything else (a bug keeps its traceback).
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

MARKER_PREFIX = "open-"
SQLITE_MAX_PATH = 512  # SQLite's unix VFS: a database (or journal) path of this many bytes cannot be opened
_CORRUPT = ("malformed", "not a database", "file is encrypted", "corrupt", "database disk image")


class OpenMarker:
    """`<index_dir>/open-<pid>` while this process has the index open."""

    def __init__(self, index_dir: Path) -> None:
        self.index_dir = Path(index_dir)
        self.path = self.index_dir / f"{MARKER_PREFIX}{os.getpid()}"

    def unclean(self) -> bool:
        """Whether an earlier process left its marker behind (those markers are removed)."""
        found = False
        try:
            names = [n for n in os.listdir(self.index_dir) if n.startswith(MARKER_PREFIX)]
        except OSError:
            return False
        for name in names:
            pid = name[len(MARKER_PREFIX):]
            if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
                continue
            found = True
            try:
                os.unlink(self.index_dir / name)
            except OSError:
                pass
        return found

    def create(self) -> None:
        try:
            self.path.write_text("")
        except OSError:  # a read-only index still serves reads
            pass

    def remove(self) -> None:
        try:
            self.path.unlink()
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def is_corruption(exc: BaseException) -> bool:
    """A sqlite3 error that means the database file is damaged."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    text = str(exc).lower()
    return any(word in text for word in _CORRUPT)


def quick_check(db: sqlite3.Connection) -> str:
    """`PRAGMA quick_check`: "ok", or the first problem it reports (or the error it raised)."""
    try:
        rows = db.execute("PRAGMA quick_check(5)").fetchall()
    except sqlite3.DatabaseError as exc:
        return str(exc)
    problems = [str(r[0]) for r in rows if str(r[0]) != "ok"]
    return "ok" if not problems else "; ".join(problems)[:300]


def read_only_uri(db_path: Path) -> str | None:
    """A read-only SQLite URI for an existing database in a folder this process cannot write (a
    read-only mount, permissions), else None. Without a WAL file beside it the database is opened
    `immutable` (WAL's shared-memory file could not be made there); with one, `mode=ro` reads it."""
    folder = db_path.parent
    if not db_path.exists() or os.access(folder, os.W_OK):
        return None
    from urllib.parse import quote

    wal = Path(str(db_path) + "-wal").exists()
    return f"file:{quote(str(db_path))}?{'mode=ro' if wal else 'immutable=1'}"


def is_disk_full(exc: BaseException) -> bool:
    """A write failed for want of space (or quota, or a file size limit): from the OS, SQLite or tantivy
    (whose errors carry only the OS's words)."""
    code = getattr(exc, "errno", None)
    text = str(exc).lower()
    return code in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG) or "disk is full" in text \
        or "no space left" in text or "os error 28)" in text or "quota exceeded" in text


def describe(exc: BaseException, where: Path | str) -> str | None:
    """A one-line, actionable description of an environment error, or None if it is not one."""
    text = str(exc).lower()
    code = getattr(exc, "errno", None)
    filename = getattr(exc, "filename", None) or where
    if is_disk_full(exc) or "disk i/o error" in text:
        return (f"no space left (or a file size limit) writing the index at {where}: free some space or "
                f"put the index elsewhere (--index-dir, $CODESEEK_INDEX_DIR)")
    if code in (errno.EROFS, errno.EACCES, errno.EPERM) or "readonly database" in text \
            or "read-only" in text:
        return (f"the index at {where} is not writable ({exc}): fix its permissions or put the index "
                f"elsewhere (--index-dir, $CODESEEK_INDEX_DIR)")
    if code == errno.ENAMETOOLONG:
        return f"a name in the index path {where} is too long for the file system: use a shorter --index-dir"
    if code in (errno.ENOTDIR, errno.EEXIST) or isinstance(exc, (NotADirectoryError, FileExistsError)):
        return (f"a file stands where the index needs a folder: {filename}: remove or rename it, or put "
                f"the index elsewhere (--index-dir)")
    if "unable to open database file" in text:
        longest = len(os.fsencode(os.path.abspath(os.path.join(where, "index.sqlite3-journal"))))
        if longest >= SQLITE_MAX_PATH:  # SQLite refuses such a path with the same words as a missing folder
            return (f"the index path {where} is too long for SQLite ({longest} bytes with the database's "
                    f"name, at most {SQLITE_MAX_PATH - 1}): use a shorter --index-dir")
        return f"cannot open the index database in {where}: check that the folder exists and is writable"
    return None
