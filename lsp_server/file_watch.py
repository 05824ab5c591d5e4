"""The servers' own file watcher: the language server's for clients that cannot watch files (Neovim
0.11 on Linux offers no `workspace/didChangeWatchedFiles` registration), the MCP server's always, so
files changed outside the editor (git pull, a branch switch, an agent's edits) reach the index
without a tool call waiting for a rescan.

`RootWatcher` runs `watchfiles` (inotify on Linux) over one root on a daemon thread. watchfiles
groups the raw events: a batch is handed over once no new change came for `STEP_MS` (at most
`MAX_BATCH_MS` after the first), so a branch switch that rewrites hundreds of files is one batch and
one refresh (`request_paths`, the path `didChangeWatchedFiles` takes); while a refresh runs,
later batches merge into the next one. `relevant` drops what the scan would never index, with the
scan's own rules (`indexing.scan`): VCS folders, folders skipped by name (`node_modules`, `.venv`,
caches...), `.gitignore`/`.ignore`/`.codeseekignore`/`excludes` matches, files of no known language,
and the index folder -- except paths the index holds (a tracked file in such a folder, a file that
became ignored). A change to an ignore file asks for a full rescan. The refresh itself applies every
scan rule again (git's list included), so this filter only decides when to wake up.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indexing.ignore_files import IGNORE_FILES, IgnoreFiles, is_inside
from indexing.languages import language_for_path
from indexing.scan import skipped_dir

if TYPE_CHECKING:
    from retrievers.codebase import Codebase
    from retrievers.engine.keeper import IndexKeeper


log = logging.getLogger("codeseek.watch")

# A batch ends once no new change arrived for this long: every change outside the editor waits it
# out before its refresh starts (250 until 2026-12-07; git writes a checkout's files back to back, and
# a batch cut short only merges its rest into the next refresh).
STEP_MS = 100
MAX_BATCH_MS = 3000  # ... and at the latest this long after its first change
VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr"})
RESCAN_FILES = frozenset({*IGNORE_FILES, ".git/info/exclude"})  # a change to one rescans the root


class Batch:
    """What one batch of changes asks of the index: a full rescan, or these paths."""

    def __init__(self) -> None:
        self.full = False
        self.paths: set[str] = set()


def _skipped_dir(parts: list[str], root: str) -> bool:
    """Whether a folder on the path is one the scan skips by name."""
    return any(skipped_dir(name, os.path.join(root, *parts[:depth]))
               for depth, name in enumerate(parts[:-1], start=1))


def _ignored(ignores: IgnoreFiles, parts: list[str], is_dir: bool) -> bool:
    for depth in range(1, len(parts)):
        if ignores.ignored("/".join(parts[:depth]), True):
            return True
    return ignores.ignored("/".join(parts), is_dir)


def relevant(root: Path, changes: Iterable[tuple[bool, str]], indexed: Collection[str],
             ignores: IgnoreFiles, index_dir: Path | None = None) -> Batch:
    """The batch one set of changes `(added, absolute path)` asks for; `indexed`: the stored paths."""
    batch = Batch()
    real_root = str(root)
    skip_under = os.path.realpath(index_dir) if index_dir is not None else None
    folders: tuple[str, ...] | None = None
    for added, path in changes:
        if not is_inside(path, real_root) or path == real_root:
            continue
        if skip_under is not None and is_inside(path, skip_under):
            continue
        rel = Path(os.path.relpath(path, real_root)).as_posix()
        if rel in RESCAN_FILES or rel.rsplit("/", 1)[-1] in IGNORE_FILES:
            batch.full = True
            continue
        parts = rel.split("/")
        if parts[0] in VCS_DIRS:
            continue
        if rel in indexed:  # changed or deleted: the refresh decides what becomes of it
            batch.paths.add(rel)
            continue
        is_dir = os.path.isdir(path) and not os.path.islink(path)
        if _skipped_dir(parts + ([""] if is_dir else []), real_root) or _ignored(ignores, parts, is_dir):
            continue
        if is_dir:
            if added:  # a new folder: walk it (files written before its watch existed included)
                batch.paths.add(rel)
            continue
        if language_for_path(rel) is not None:
            batch.paths.add(rel)
            continue
        if folders is None:  # a deleted or renamed folder the index holds files under
            folders = tuple(indexed)
        if not os.path.lexists(path) and any(p.startswith(rel + "/") for p in folders):
            batch.paths.add(rel)
    return batch


class RootWatcher:
    """watchfiles over one keeper's root, asking it for refreshes; `stop()` ends the thread."""

    def __init__(self, keeper: IndexKeeper, codebase: Codebase,
                 notify: Callable[[str], None] | None = None) -> None:
        self.keeper, self.codebase = keeper, codebase
        self.notify = notify
        self.batches = 0  # batches that asked for a refresh
        self.paths = 0  # paths they named
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"codeseek-watch:{keeper.root.name}",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def status(self) -> dict[str, Any]:
        return {"batches": self.batches, "paths": self.paths, "error": self.error,
                "running": self._thread.is_alive()}

    def _run(self) -> None:
        try:
            from watchfiles import Change, watch
        except ImportError as exc:  # an install without it: say so once, keep serving
            self._failed(f"watchfiles is not installed ({exc})")
            return
        try:
            for changes in watch(self.keeper.root, watch_filter=None, debounce=MAX_BATCH_MS, step=STEP_MS,
                                 stop_event=self._stop, raise_interrupt=False,
                                 ignore_permission_denied=True):
                if self._stop.is_set():
                    return
                self._handle([(change == Change.added, path) for change, path in changes])
        except Exception as exc:  # an inotify limit, a vanished root: the editor's saves still index
            if not self._stop.is_set():
                self._failed(str(exc) or type(exc).__name__)

    def _handle(self, changes: list[tuple[bool, str]]) -> None:
        keeper, root = self.keeper, self.keeper.root
        options = keeper.workspace.options.scan
        try:
            indexed = set(self.codebase.files())
        except Exception as exc:  # the root is stopping (its store closed)
            log.info("watch %s: %s", root, exc)
            return
        ignores = IgnoreFiles(root, options.excludes, options.use_ignore_files)
        batch = relevant(root, changes, indexed, ignores, keeper.workspace.index_dir)
        if not (batch.full or batch.paths):
            return
        self.batches += 1
        self.paths += len(batch.paths)
        said = "an ignore file changed: full rescan" if batch.full else f"{len(batch.paths)} changed path(s)"
        log.info("watch %s: %s", root.name, said)
        if batch.full:
            keeper.request_full()
        else:
            keeper.request_paths(batch.paths)

    def _failed(self, why: str) -> None:
        self.error = why
        message = (f"codeseek: cannot watch {self.keeper.root} for changes made outside the editor ({why}); "
                   "files you save in the editor are still indexed")
        log.warning(message)
        if self.notify is not None:
            self.notify(message)
