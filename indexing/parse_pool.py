"""Parsing many files on several cores, results in file order.

A cold index spends about a third of its time in `indexing.parse.parse_file` (tree-sitter plus the
Python that walks its trees), which holds the GIL. `parse_in_order(plans, workers)` hands the parses
to worker processes (`forkserver`: the workers start from a clean interpreter that has imported the
parser once, never from a fork of a process with threads) and yields each plan with its result in
the order the plans came, reading ahead a few batches per worker; the caller keeps hashing, reading and
writing to SQLite on its own process meanwhile. Files go to the workers in batches (`BATCH_FILES` or
`BATCH_BYTES`, whichever comes first): each task costs the caller's threads a few GIL handoffs (submit,
the pool's wake-up pipe, its management thread); one file a task, the Django sdist's 4,046 files cost
its main thread ~1.1 s of them. A plan without data (a file that needs no parse) passes straight
through in its place, with the result None. With `prepare` (an update's
`indexing.file_feed.FileFeed.prepare`), each parse's `prepared` is `prepare(chunks, data)`, made where
the file was parsed.

Only worth it for a large update: the pool takes a fraction of a second to start. `worker_count(files)`
says how many workers an update of that many files gets (0: parse in process). If the pool breaks (a
worker killed), the remaining files are parsed in process; `parse_file` itself never raises. A worker
ends itself within a second of its owner's death (a killed indexer leaves no worker or fork server
behind).
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from indexing.records import FileInfo, ParseResult

if TYPE_CHECKING:
    from concurrent.futures import Future
    from multiprocessing.context import BaseContext

    from indexing.file_feed import Prepare

__all__ = ["MIN_FILES", "PRELOAD", "Plan", "fork_context", "parse_in_order", "start_fork_server",
           "start_worker", "worker_count", "worth_a_pool"]

log = logging.getLogger(__name__)
MIN_FILES = 400  # files to parse before a pool pays for its start
BATCH_FILES = 16  # files a worker task parses at most
BATCH_BYTES = 128 * 1024  # and bytes: a batch is sent once either is reached
AHEAD_PER_WORKER = 3  # batches handed to each worker before the oldest result is taken
PRELOAD = ["indexing.parse"]  # what the fork server imports once, for every worker it forks


@dataclass
class Plan:
    """One candidate file: what was read (None: nothing to parse) and what storing the result needs."""

    info: FileInfo
    data: bytes | None = None
    digest: str = ""
    wrote: int = 0  # store writes made while planning (a touched or vanished file)


def worker_count(files: int, chosen: int | None = None, cpus: int | None = None) -> int:
    """Worker processes for parsing `files` files (0: in process): `chosen` when it is a number, by
    machine and size when None (`WorkspaceOptions.parse_workers`); `$CODESEEK_PARSE_WORKERS` overrides."""
    configured = os.environ.get("CODESEEK_PARSE_WORKERS")
    if configured is not None:
        try:
            chosen = max(0, int(configured))
        except ValueError:
            log.warning("ignoring CODESEEK_PARSE_WORKERS=%r: not a whole number", configured)
    if chosen is not None:
        return chosen if files > 0 else 0
    if cpus is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if files < MIN_FILES or cpus < 2:
        return 0
    return min(cpus, 4)


def worth_a_pool(root: str | os.PathLike[str]) -> bool:
    """Whether a first index of `root` will likely parse on workers: `worker_count` gives some for
    `MIN_FILES` files and the tree holds that many files of a known language outside the folders a
    scan skips by name (a quick count that stops there; it reads no ignore file and follows no link,
    so it may count files the scan would skip: then a fork server starts for nothing)."""
    if worker_count(MIN_FILES) == 0:
        return False
    from indexing.languages import language_for_name
    from indexing.scan import skipped_dir

    seen, folders = 0, [os.fspath(root)]
    while folders:
        try:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if not skipped_dir(entry.name, entry.path):
                            folders.append(entry.path)
                    elif language_for_name(entry.name) is not None:
                        seen += 1
                        if seen >= MIN_FILES:
                            return True
        except OSError:  # (an unreadable or vanished folder: the scan says so)
            continue
    return False


def parse_one(path: str, data: bytes, language: str | None, labels: tuple[str, ...],
              prepare: Prepare | None = None) -> ParseResult:
    """`indexing.parse.parse_file`, with a crash reported as the file's error instead of raised; with
    `prepare`, its `prepared` made from the chunks (None when `prepare` fails: the feed makes it up)."""
    from indexing.parse import parse_file

    try:
        result = parse_file(path, data, language, labels)
    except Exception as exc:  # parse_file promises not to raise; keep indexing if it does
        return ParseResult(status="error", error=f"parser-crash: {type(exc).__name__}: {exc}")
    if prepare is not None:
        try:
            result.prepared = prepare(result.chunks, data)
        except Exception as exc:  # a feed never fails a parse: it makes up what is missing
            log.debug("preparing %s for the update's feed failed: %s", path, exc)
    return result


def _parse(plan: Plan, prepare: Prepare | None = None) -> ParseResult | None:
    if plan.data is None:
        return None
    return parse_one(plan.info.path, plan.data, plan.info.language, plan.info.labels, prepare)


def parse_in_order(plans: Iterable[Plan], workers: int, prepare: Prepare | None = None
                   ) -> Iterator[tuple[Plan, ParseResult | None]]:
    """(plan, its parse) for each plan in order; None for a plan without data."""
    if workers <= 0:
        for plan in plans:
            yield plan, _parse(plan, prepare)
        return
    from concurrent.futures import ProcessPoolExecutor  # (~20 ms to import: only a large update needs it)

    context = fork_context()
    if context is None:  # no fork server on this platform (Windows): parse here
        yield from parse_in_order(plans, 0, prepare)
        return
    pending: deque[list[Any]] = deque()  # [plan, its batch's future (None: parse here), place, last of it]
    batch: list[list[Any]] = []  # the entries of the batch not sent yet
    flights: deque[Future[list[ParseResult]]] = deque()  # sent batches not all taken, oldest first
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=start_worker,
                             initargs=(os.getpid(),)) as pool:
        broken, size = False, 0  # (size: the open batch's bytes)

        def send() -> None:
            nonlocal broken, size
            size = 0
            if batch and not broken:
                jobs = [(e[0].info.path, e[0].data, e[0].info.language, e[0].info.labels) for e in batch]
                try:
                    future = pool.submit(parse_batch, jobs, prepare)
                except Exception as exc:  # a broken pool: the rest is parsed here
                    log.warning("parse workers unavailable (%s): parsing in process", exc)
                    broken = True
                else:
                    for entry in batch:
                        entry[1] = future
                    batch[-1][3] = True
                    flights.append(future)
            batch.clear()

        def ready() -> bool:
            """Whether the oldest entry goes now: parsed (or nothing to wait for), or too much is ahead
            of it (then it is waited for; the open batch is sent first if it holds it)."""
            head = pending[0]
            crowded = len(pending) > workers * AHEAD_PER_WORKER * BATCH_FILES
            if batch and head is batch[0]:  # (in the batch not sent yet)
                if not crowded:
                    return False
                send()  # (a long run of files that need no parse behind it)
            future = head[1]
            return future is None or future.done() or crowded or len(flights) > workers * AHEAD_PER_WORKER

        for plan in plans:
            entry = [plan, None, len(batch), False]
            pending.append(entry)
            if plan.data is not None and not broken:
                batch.append(entry)
                size += len(plan.data)
                if len(batch) >= BATCH_FILES or size >= BATCH_BYTES:
                    send()
            while pending and ready():
                yield _take(pending.popleft(), flights, prepare)
        send()
        while pending:
            yield _take(pending.popleft(), flights, prepare)


def fork_context() -> BaseContext | None:
    """The `forkserver` context the parse and embedding pools start their workers in, the fork server
    set to preload `PRELOAD`; None where the platform has no fork server."""
    import multiprocessing

    try:
        context = multiprocessing.get_context("forkserver")
    except ValueError:
        return None
    context.set_forkserver_preload(PRELOAD)
    return context


def start_fork_server() -> None:
    """Start the fork server the parse and embedding pools fork their workers from, without waiting
    for it: where a cold index is about to be built, it imports the parser on another core while this
    process is still importing and scanning, and the first workers fork at once (a pool that starts
    it waits ~0.15 s for it). Nothing where there is no fork server; a failure is logged, and a pool
    then starts it as before."""
    if fork_context() is None:
        return
    try:
        from multiprocessing import forkserver

        forkserver.ensure_running()
    except Exception as exc:  # (spawning failed: the pool tries again, or parses in process)
        log.debug("the fork server could not start ahead of the parse: %s", exc)


def parse_batch(jobs: list[tuple[str, bytes, str | None, tuple[str, ...]]], prepare: Prepare | None = None
                ) -> list[ParseResult]:
    """`parse_one` over a batch of (path, data, language, labels), in a worker."""
    return [parse_one(path, data, language, labels, prepare) for path, data, language, labels in jobs]


def start_worker(owner: int) -> None:
    """In a worker process (the parse pool's, `retrievers.semantic.embed_worker`'s): anything written to
    stdout goes to stderr (the language server speaks on stdout), and the worker ends itself once the
    process that owns the pool is gone (killed: a normal exit shuts the pool down), which also lets
    the fork server go."""
    import sys
    import threading
    import time

    sys.stdout.flush()
    os.dup2(2, 1)

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if _gone(owner):
                os._exit(0)

    threading.Thread(target=watch, name="codeseek-parse-owner", daemon=True).start()


def _gone(pid: int) -> bool:
    """Whether process `pid` has ended: no longer there, or a zombie its parent has not reaped yet."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except FileNotFoundError:
        return True
    except (OSError, IndexError):  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except OSError:  # alive, but not ours to signal
            return False
        return False


def _take(entry: list[Any], flights: deque[Future[list[ParseResult]]], prepare: Prepare | None
          ) -> tuple[Plan, ParseResult | None]:
    plan, future, place, last = entry
    if last:
        flights.popleft()  # (its batch's results are all taken after this one)
    if future is None:
        return plan, _parse(plan, prepare)
    try:
        return plan, future.result()[place]
    except Exception as exc:  # the worker died (killed, out of memory): parse this one here
        log.warning("a parse worker failed on %s (%s): parsing it in process", plan.info.path, exc)
        return plan, _parse(plan, prepare)
