"""Process and thread tuning for the language server's background work: allocator, memory, priority.

- `tune_allocator`: glibc serves big allocations with mmap, so embedding batches' temporaries go back
  to the OS when freed.
- `release_memory`: trim the heap after a burst of work (`trim_heap`: when it grew) and freeze what is
  left (`gc.freeze`), so the collections a search triggers do not walk the index's millions of
  objects. The first call thaws and collects everything first; after every `FULL_EVERY` calls one
  such full collection runs again, but only once the process has served no request for `QUIET_S`.
- `serving`: marks a request being answered (the servers' one query path), the clock of that quiet.
- `lower_priority`: run the indexing thread (Linux: per-thread nice) below the request handlers.
- `reap_worker_processes`: at the end of a command, stop the fork server the parse and embedding pools
  started, and wait for it, so the process's own accounting (`time`, wait4) includes its workers' CPU.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import os
import threading
import time
from collections.abc import Iterator

__all__ = ["lower_priority", "reap_worker_processes", "release_memory", "resident_bytes", "serving",
           "trim_heap", "tune_allocator"]

M_MMAP_THRESHOLD = -3  # glibc mallopt parameter
MMAP_THRESHOLD = 4 * 1024 * 1024


@functools.cache
def _libc() -> ctypes.CDLL | None:
    """glibc, loaded once: every `CDLL` makes a function-pointer class that sits in a reference cycle,
    so one per call left cyclic garbage that only a full collection frees."""
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc
        return None


def tune_allocator() -> None:
    """Serve allocations of 4 MiB and more with mmap (glibc), so embedding batches' big temporaries go
    back to the OS when freed: on requests 2.32.3 the peak RSS of phase 2 drops from ~855 to ~675 MB
    for ~12% slower embedding (the dynamic threshold otherwise grows to 32 MiB and fragments the heap)."""
    libc = _libc()
    if libc is not None and hasattr(libc, "mallopt"):
        libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)


FULL_EVERY = 16  # calls of release_memory per full collection
QUIET_S = 30.0  # seconds without a request before a due full collection runs
QUIET_POLL_S = 1.0  # how often a due full collection checks for that quiet


class _Gc:
    """The collector's state across threads: release_memory's calls, requests in flight, the quiet."""

    lock = threading.Lock()  # one thaw/collect/freeze at a time
    state = threading.Lock()  # the counters below
    calls = 0  # release_memory calls
    since_full = 0  # calls since the last full collection
    busy = 0  # requests being answered
    active_at = 0.0  # time.monotonic() when the last request began or ended
    waiter: threading.Thread | None = None  # the thread that waits for the quiet to collect


@contextlib.contextmanager
def serving() -> Iterator[None]:
    """Mark a request being answered: a due full collection waits until none is, for `QUIET_S`."""
    with _Gc.state:
        _Gc.busy += 1
        _Gc.active_at = time.monotonic()
    try:
        yield
    finally:
        with _Gc.state:
            _Gc.busy -= 1
            _Gc.active_at = time.monotonic()


def quiet_for() -> float:
    """Seconds since the last request began or ended (0.0 while one is being answered)."""
    with _Gc.state:
        return 0.0 if _Gc.busy else time.monotonic() - _Gc.active_at


def release_memory(full: bool | None = None) -> None:
    """Give freed heap back to the OS (glibc): embedding batches leave hundreds of MB of free arenas.

    Then the objects still alive (the snapshot, the index tables) move to the permanent generation:
    the full collections that allocation triggers, now and then on a request thread, no longer walk
    them (Django `django/`, 320 warm searches in a loop: the slowest 107 -> 9 ms, the mean 4.7 -> 4.4).
    A full collection thaws them and collects first, so cyclic garbage among frozen objects goes too:
    on the first call (what indexing left), on `full=True`, and, `FULL_EVERY` calls after the last
    one, once no request came for `QUIET_S` (a daemon thread waits for that). It walks every object
    (Django sdist: 1.2-1.4 s holding the interpreter): run right after a refresh, it held a search
    that long. A refresh's old snapshot and graph go by reference counting (on the Django sdist a
    full collection after sixteen refreshes finds nothing of theirs), and a plain collection would
    walk every object made since the last freeze, i.e. the new snapshot (0.84 s on the sdist), so the
    other calls collect nothing."""
    with _Gc.state:
        _Gc.calls += 1
        _Gc.since_full += 1
        first = _Gc.calls == 1
        due = _Gc.since_full >= FULL_EVERY and _Gc.waiter is None
    if full if full is not None else first:
        _collect_all()
    else:
        with _Gc.lock:
            gc.freeze()
        if full is None and due:
            _wait_for_quiet()
    trim_heap(force=first)


def _collect_all() -> None:
    with _Gc.lock:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
    with _Gc.state:
        _Gc.since_full = 0


def _wait_for_quiet() -> None:
    def wait() -> None:
        try:
            while quiet_for() < QUIET_S:
                time.sleep(QUIET_POLL_S)
            _collect_all()
            trim_heap(force=True)
        finally:
            with _Gc.state:
                _Gc.waiter = None
    thread = threading.Thread(target=wait, name="codeseek-quiet-gc", daemon=True)
    with _Gc.state:
        if _Gc.waiter is not None:
            return
        _Gc.waiter = thread
    thread.start()


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
    libc = _libc()
    if libc is None or not hasattr(libc, "malloc_trim"):
        return False
    libc.malloc_trim(0)
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
