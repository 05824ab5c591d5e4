"""One writer at a time per index, across processes: an advisory `flock` on `<index_dir>/writer.lock`.

The CLI, the language server and any other front end may open the same index. Readers never take the
lock (SQLite WAL and tantivy readers see the last commit). A writer that finds the lock taken waits
(polling, so a stopping server can give up) and says so once, after `notice_after` seconds, through
`on_wait`; it fails only after `timeout` seconds, with a one-line `StoreError` naming the holder's pid.
The lock is re-entrant within a process (threads of one process share it through an RLock).
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_NAME = "writer.lock"
POLL_S = 0.05


class LockTimeout(Exception):
    """Another process held the writer lock for longer than the timeout."""


class WriterLock:
    """Re-entrant inter-process writer lock over one index directory."""

    def __init__(self, index_dir: Path, on_wait: Callable[[str], None] | None = None,
                 timeout: float = 900.0, notice_after: float = 1.0) -> None:
        self.path = Path(index_dir) / LOCK_NAME
        self.on_wait = on_wait
        self.timeout, self.notice_after = timeout, notice_after
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None
        self.read_only = False  # an index nobody here may write: threads still take turns, no file

    def _holder(self) -> str:
        try:
            return self.path.read_text().strip() or "?"
        except OSError:
            return "?"

    def _acquire_file(self, cancelled: Callable[[], bool] | None) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        started, said = time.monotonic(), False
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EACCES):
                        raise
                waited = time.monotonic() - started
                if not said and waited >= self.notice_after and self.on_wait is not None:
                    said = True
                    self.on_wait(f"waiting for another codeseek process (pid {self._holder()}) to finish "
                                 f"writing the index at {self.path.parent}")
                if waited >= self.timeout or (cancelled is not None and cancelled()):
                    raise LockTimeout(f"the index at {self.path.parent} is being written by another codeseek "
                                      f"process (pid {self._holder()}); gave up after {waited:.0f} s")
                time.sleep(POLL_S)
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    @contextmanager
    def hold(self, cancelled: Callable[[], bool] | None = None) -> Iterator[None]:
        """Hold the lock for the block (waiting for other processes as needed)."""
        with self._thread_lock:
            if self._depth == 0 and not self.read_only:
                self._acquire_file(cancelled)
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._fd is not None:
                    fd, self._fd = self._fd, None
                    try:
                        fcntl.flock(fd, fcntl.LOCK_UN)
                    finally:
                        os.close(fd)
