"""Process and thread tuning for the language server's background work: allocator, memory, priority.

- `tune_allocator`: glibc serves big allocations with mmap, so embedding batches' temporaries go back
  to the OS when freed.
- `release_memory`: trim the heap after a burst of work (`trim_heap`: when it grew) and freeze what is
  left (`gc.freeze`), so the collections a search triggers do not walk the index's millions of
  objects; every `FULL_EVERY`-th call (the first included) thaws and collects everything first.
- `lower_priority`: run the indexing thread (Linux: per-thread nice) below the request handlers.
- `reap_worker_processes`: at the end of a command, stop the fork server the parse and embedding pools
  started, and wait for it, so the process's own accounting (`time`, wait4) includes its workers' CPU.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import threading
from collections.abc import Iterator

__all__ = ["lower_priority", "reap_worker_processes", "release_memory", "resident_bytes", "trim_heap",
           "tune_allocator"]

M_MMAP_THRESHOLD = -3  # glibc mallopt parameter
MMAP_THRESHOLD = 4 * 1024 * 1024


def tune_allocator() -> None:
    """Serve allocations of 4 MiB and more with mmap (glibc), so embedding batches' big temporaries go
    back to the OS when freed: on requests 2.32.3 the peak RSS of phase 2 drops from ~855 to ~675 MB
    for ~12% slower embedding (the dynamic threshold otherwise grows to 32 MiB and fragments the heap)."""
    try:
        ctypes.CDLL("libc.so.6").mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    except (OSError, AttributeError):  # not glibc
        pass


FULL_EVERY = 16  # calls of release_memory per full collection


_calls = 0
_calls_lock = threading.Lock()


def release_memory(full: bool | None = None) -> None:
    """Give freed heap back to the OS (glibc): embedding batches leave hundreds of MB of free arenas.

    Then the objects still alive (the snapshot, the index tables) move to the permanent generation:
    the full collections that allocation triggers, now and then on a request thread, no longer walk
    them (Django `django/`, 320 warm searches in a loop: the slowest 107 -> 9 ms, the mean 4.7 -> 4.4).
    A `full` call (default: the first and every `FULL_EVERY`-th) thaws them and collects first, so
    cyclic garbage among frozen objects goes too. The others collect nothing: a refresh's old
    snapshot and graph go by reference counting (none holds itself in a cycle), and a collection
    walks every object made since the last freeze, i.e. the new snapshot: on the Django sdist it held
    the GIL 0.84 s after each refresh, stalling every request meanwhile."""
    global _calls
    with _calls_lock:
        _calls += 1
        due = (_calls - 1) % FULL_EVERY == 0
    if full if full is not None else due:
        gc.unfreeze()
        gc.collect()
    trim_heap(force=due)
    gc.freeze()


TRIM_GROWTH = 64 << 20  # bytes of resident growth since the last trim that make the next one worth it
_trimmed_at = 0  # resident bytes after the last trim


def trim_heap(force: bool = False) -> bool:
    """`malloc_trim` (glibc), when the process grew by `TRIM_GROWTH` since the last trim (or `force`);
    whether it trimmed. A trim walks the whole heap holding the allocator's locks: on the Django sdist
    ~150 ms after every refresh, in which every other thread's allocation waited (a search then took
    three times its time), while a refresh of one file frees next to nothing worth returning."""
    global _trimmed_at
    now = resident_bytes()
    if not force and now is not None and now - _trimmed_at < TRIM_GROWTH:
        return False
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        return False
    _trimmed_at = resident_bytes() or 0
    return True


def resident_bytes() -> int | None:
    """The process's resident set size now (Linux `/proc/self/statm`; None elsewhere)."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


@contextlib.contextmanager
def lower_priority(niceness: int = 10) -> Iterator[None]:
    """Run this thread (Linux: per-thread nice) below the editor's and the request handlers' priority."""
    tid = threading.get_native_id()
    try:
        before = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(19, before + niceness))
    except (OSError, AttributeError):
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(OSError):  # raising it back needs privileges: a new job starts nicer
            os.setpriority(os.PRIO_PROCESS, tid, before)


def reap_worker_processes() -> None:
    """Stop this process's multiprocessing fork server, if one was started, and wait for it to exit.

    The pools' workers are the fork server's children (it reaps them); the fork server is ours, but
    left running it exits only after we do, unreaped, so `time codeseek ...` missed the workers' CPU.
    Uses the fork server's own stop (a private method, hence the guard): without it nothing changes."""
    import sys

    forkserver = sys.modules.get("multiprocessing.forkserver")
    server = getattr(forkserver, "_forkserver", None)
    stop = getattr(server, "_stop", None)
    if stop is None or getattr(server, "_forkserver_pid", None) is None:
        return
    with contextlib.suppress(Exception):
        stop()
