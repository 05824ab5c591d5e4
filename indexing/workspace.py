"""One workspace root and its persisted index, kept current incrementally.

`Workspace.update()` scans the root, parses only what changed (size and mtime first, then the
content hash), removes what was deleted, and reports the chunks it added and the chunk ids it
removed so retrievers can follow. Unsaved editor buffers (overlays) take precedence over the working
tree for reading and indexing. `generation` and `state_key()` name the index state, so structures
derived from it (the call graph: `retrievers.engine.graph_state`) know when to rebuild.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from indexing.file_feed import FileFeed
from indexing.file_updates import OVERLAY_MTIME, UpdateResult, plan_file, store_parse, unchanged
from indexing.freshness import content_hash, error_reasons, parser_fingerprint
from indexing.location import index_dir_for
from indexing.record_log import RecordLog
from indexing.records import CallSite, Chunk, Definition, FileInfo, Import, ParseResult
from indexing.scan import VANISHED, ScanOptions, ScanResult, plain_relative, relative_path, scan, scan_paths
from indexing.source_encoding import as_utf8
from indexing.store import FileRow, IndexStore, StoreError, database_path

__all__ = [
    "OVERLAY_MTIME", "IndexRootMismatch", "Progress", "StoreError", "UpdateResult", "Workspace",
    "WorkspaceError", "WorkspaceOptions", "content_hash", "has_index", "index_dir_for", "set_aside_damaged",
]

Progress = Callable[[int, int, str], None]
_COMMIT_FILES = 200  # files per commit; each file stays atomic on its own
_COMMIT_SECONDS = 0.5


class WorkspaceError(Exception):
    """A workspace operation was given something it cannot work with (bad root, path outside it...)."""


class IndexRootMismatch(WorkspaceError):
    """The index folder holds the index of another root: it is left as it is (it may be in use)."""


def has_index(index_dir: Path) -> bool:
    """Whether `index_dir` holds an index database (front ends ask before opening one to report on)."""
    return database_path(index_dir).exists()


def set_aside_damaged(index_dir: Path, reason: BaseException) -> None:
    """After a corruption error from the index in `index_dir`: check it and, when damaged, start a
    fresh database so that the retried command rebuilds it (`IndexStore.rebuild_if_damaged`)."""
    store = IndexStore(index_dir)
    try:
        store.rebuild_if_damaged(reason)
    finally:
        store.close()


@dataclass
class WorkspaceOptions:
    index_base: Path | None = None  # base folder of the per-root index folders (indexing.location)
    index_dir: Path | None = None  # the index folder itself (tests, bench/); None: index_dir_for(root, base)
    scan: ScanOptions = field(default_factory=ScanOptions)
    # Worker processes that parse a large update (indexing.parse_pool): None picks by machine and
    # update size (the command line and the servers); 0, the library default, parses in process,
    # since worker processes re-import the caller's main script, which must guard its top level.
    parse_workers: int | None = 0


class Workspace:
    """A root directory, its index (`store`) and the overlays of unsaved buffers."""

    def __init__(self, root: Path, options: WorkspaceOptions | None = None) -> None:
        root = Path(root).expanduser()
        if not root.is_dir():
            raise WorkspaceError(f"workspace root is not a directory: {root}")
        self.root = Path(os.path.realpath(root))
        self._root_prefix = str(self.root) + os.sep  # read_bytes joins strings: pathlib costs more
        self.options = options or WorkspaceOptions()
        index_dir = self.options.index_dir
        self.index_dir = Path(index_dir) if index_dir else index_dir_for(self.root, self.options.index_base)
        self.store = IndexStore(self.index_dir)
        recorded = self.store.get_meta("root")
        if recorded is None and not self.store.read_only:
            self.store.set_meta("root", str(self.root))
        elif recorded != str(self.root):
            # Refuse rather than rebuild: the folder was named for another root, whose index (and
            # whoever serves it) a rebuild would destroy.
            self.store.close()
            raise IndexRootMismatch(f"the index at {self.index_dir} belongs to {recorded}, not {self.root}; "
                                    "use another index folder for this root")
        self._overlays: dict[str, bytes] = {}
        self._lock = threading.RLock()  # one update at a time
        self._generation_lock = threading.Lock()
        self._generation = 0
        self._seen = ""  # the store's stamp this process last brought itself up to date with
        self._bytes_cache: OrderedDict[str, tuple[int, int, bytes]] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._mismatched: set[str] = set()  # files whose chunk rows do not match their bytes (chunk_text)
        self._said_read_only = False

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- paths, overlays, reading ------------------------------------------------------------------
    def relpath(self, path: str | os.PathLike[str]) -> str:
        """Workspace-relative POSIX form of an absolute or relative path; WorkspaceError outside the root."""
        p = os.fspath(path)
        if plain_relative(p):
            return p  # already relative and normal (every indexed path): no realpath of the root per read
        rel = relative_path(self.root, path)
        if rel is None:
            raise WorkspaceError(f"path is outside the workspace {self.root}: {os.fspath(path)}")
        return rel

    def stays_inside(self, rel: str) -> bool:
        """Whether a workspace-relative path still lies inside the root once symlinks are followed
        (front ends check paths from clients with it; scanned files are checked by the scan)."""
        real = os.path.realpath(self.root / rel)
        return real == str(self.root) or real.startswith(str(self.root) + os.sep)

    def set_overlay(self, path: str, text: str) -> bool:
        """Make an editor buffer the file's content; False (and no overlay) when it is larger than
        `max_file_size`, the limit files on disk have too."""
        rel = self.relpath(path)
        limit = self.options.scan.max_file_size
        data = None if len(text) > limit else text.encode("utf-8", "surrogateescape")
        with self._cache_lock:
            if data is None or len(data) > limit:
                self._overlays.pop(rel, None)
                return False
            self._overlays[rel] = data
        return True

    def clear_overlay(self, path: str) -> int:
        """Drop a buffer's overlay; returns its size in bytes (0 if there was none)."""
        rel = self.relpath(path)
        with self._cache_lock:
            return len(self._overlays.pop(rel, b""))

    def overlays(self) -> list[str]:
        with self._cache_lock:
            return sorted(self._overlays)

    def read_bytes(self, path: str) -> bytes:
        """A file's bytes: the editor buffer if one is open, else the working tree."""
        rel = self.relpath(path)
        with self._cache_lock:
            overlay = self._overlays.get(rel)
            if overlay is not None:
                return overlay
        full = self._root_prefix + rel
        try:
            st = os.stat(full)
            with self._cache_lock:
                hit = self._bytes_cache.get(rel)
                if hit is not None and hit[0] == st.st_size and hit[1] == st.st_mtime_ns:
                    self._bytes_cache.move_to_end(rel)
                    return hit[2]
            with open(full, "rb") as fh:
                data = as_utf8(rel, fh.read())  # what the index parsed (indexing.source_encoding)
        except OSError as exc:
            raise WorkspaceError(f"cannot read {rel}: {exc.strerror or exc}") from exc
        with self._cache_lock:
            self._bytes_cache[rel] = (st.st_size, st.st_mtime_ns, data)
            while len(self._bytes_cache) > 64:
                self._bytes_cache.popitem(last=False)
        return data

    def chunk_text(self, chunk: Chunk) -> str:
        """The chunk's text as it is now ("" if the file can no longer be read, or if the bytes at the
        chunk's offsets are not those it recorded the hash of: the file changed since it was indexed,
        or the row's offsets are wrong; the file is then marked for re-indexing: `take_mismatched`)."""
        try:
            data = self.read_bytes(chunk.path)
        except WorkspaceError:
            return ""
        piece = data[chunk.start_byte:chunk.end_byte]
        if chunk.content_hash and content_hash(piece) != chunk.content_hash:
            self._mismatch(chunk.path)
            return ""
        return piece.decode("utf-8", "replace")

    def _mismatch(self, rel: str) -> None:
        with self._cache_lock:
            if rel in self._mismatched or rel in self._overlays:  # a buffer is indexed when it settles
                return
            self._mismatched.add(rel)
        try:
            self.store.mark_stale(rel)  # any process's next update re-parses it
        except (StoreError, OSError, sqlite3.Error):
            pass  # a read-only index: this process re-indexes it when it can (take_mismatched)

    def take_mismatched(self) -> list[str]:
        """Files whose chunk rows did not match their bytes since the last call (to re-index)."""
        with self._cache_lock:
            out, self._mismatched = sorted(self._mismatched), set()
        return out

    # -- update ------------------------------------------------------------------------------------
    def update(self, progress: Progress | None = None, paths: Iterable[str] | None = None,
               feed: FileFeed | None = None) -> UpdateResult:
        """Bring the index up to date with the tree (or just with `paths`) and the overlays; `feed`
        follows each file as it is stored (`indexing.file_feed`)."""
        started = time.perf_counter()
        if self.store.read_only:  # searched as it is: nothing here may change it
            if not self._said_read_only:
                self._said_read_only = True
                self.store.notice(f"the index at {self.index_dir} is read-only: answering from it as it "
                                  "is (changes since it was written are not seen)")
            return UpdateResult()
        with self.store.writer.hold(), self._lock:  # one writing process at a time (others wait)
            out = UpdateResult()
            version = parser_fingerprint()
            if self.store.get_meta("parser_version") != version:
                # Chunks from another parser version are stale: mark every file for re-parsing, once,
                # so an interrupted re-index resumes rather than starting over.
                self.store.invalidate_all()
                self.store.set_meta("parser_version", version)
            stored = self.store.files()
            with self._cache_lock:
                overlays = dict(self._overlays)
            if paths is None:
                known = {p: (r.size, r.mtime_ns) for p, r in stored.items()}
                result = scan(self.root, self.options.scan, known)
                candidates = self._with_overlays(result, overlays, None)
                keep = {f.path for f in candidates}
                gone = [p for p in stored if p not in keep]
            else:
                wanted = list(paths)
                result = scan_paths(self.root, wanted, self.options.scan)
                candidates = self._with_overlays(result, overlays, wanted)
                keep = {f.path for f in candidates}
                gone = self._gone_under(wanted, stored, keep)
            out.scanned = len(candidates)
            out.skipped_paths = [s for s in result.skipped if s[0] not in keep]
            self._remove(gone, out)
            self._index(candidates, stored, overlays, out, progress, feed)
            if paths is None:
                self.store.set_meta("updated_at", str(time.time()))
            out.skipped = dict(Counter(reason for _, reason in out.skipped_paths))
            out.errors = dict(Counter(reason for _, reason in out.error_paths))
            out.languages = self.store.languages()
            if out.changed:
                self._generation += 1
                self.store.set_meta("revision", str(self.revision + 1))
            if out.records is not None:
                out.records.revision = self.revision
            self._seen = self.store.stamp()
            out.seconds = time.perf_counter() - started
            return out

    def _gone_under(self, wanted: list[str], stored: dict[str, FileRow], keep: set[str]) -> list[str]:
        """Indexed files that a targeted update names (or that lie under a named directory, or under
        a named path that no longer exists) and that the scan no longer accepts."""
        rels = [r for r in (relative_path(self.root, p) for p in wanted) if r is not None]
        exact = set(rels)
        prefixes = tuple(r + "/" for r in rels if not (self.root / r).is_file())
        return [p for p in stored if p not in keep and (p in exact or (prefixes and p.startswith(prefixes)))]

    def _with_overlays(self, result: ScanResult, overlays: dict[str, bytes],
                       wanted: list[str] | None) -> list[FileInfo]:
        """Scanned files plus open buffers that have no file on disk yet (new, unsaved files)."""
        from indexing.labels import labels_for
        from indexing.languages import language_for_path

        files = list(result.files)
        have = {f.path for f in files}
        vanished = {p for p, reason in result.skipped if reason == VANISHED}
        names = overlays if wanted is None else [p for p in overlays if p in vanished]
        for rel in names:
            if rel in have or (wanted is None and os.path.lexists(self.root / rel)):
                continue
            language = language_for_path(rel)
            if language is not None:
                files.append(FileInfo(rel, language, len(overlays[rel]), OVERLAY_MTIME, labels_for(rel)))
        return files

    def _remove(self, paths: list[str], out: UpdateResult) -> None:
        if not paths:
            return
        with self.store.transaction():
            for rel in paths:
                out.removed_ids.extend(self.store.remove_file(rel))
                out.removed_paths.append(rel)

    def _index(self, candidates: list[FileInfo], stored: dict[str, FileRow], overlays: dict[str, bytes],
               out: UpdateResult, progress: Progress | None, feed: FileFeed | None = None) -> None:
        """Plan, parse (on worker processes for a large update: `indexing.parse_pool`) and store each
        candidate, in order; `feed` follows each stored file."""
        from indexing.parse_pool import parse_in_order, worker_count

        total = len(candidates)
        maybe_changed = sum(1 for info in candidates if not unchanged(info, stored.get(info.path)))
        if feed is not None and not feed.begin(maybe_changed):
            feed = None
        plans = (plan_file(self.root, self.store, info, stored.get(info.path), overlays.get(info.path), out,
                    self._remove) for info in candidates)
        parsed = parse_in_order(plans, worker_count(maybe_changed, self.options.parse_workers),
                                feed.prepare if feed is not None else None)
        kept = RecordLog() if not stored else None  # (from an empty store: what it will hold)
        done, completed = 0, False
        try:
            while done < total:
                # One commit per batch of files (or half a second); each file is still atomic on its own.
                with self.store.transaction():
                    batch_started, pending = time.perf_counter(), 0
                    for plan, result in parsed:
                        done += 1
                        pending += plan.wrote
                        if result is not None:
                            first = len(out.added)
                            pending += store_parse(self.store, plan, result, out, kept)
                            if feed is not None and plan.data is not None:
                                feed.stored(out.added[first:], result.prepared, plan.data)
                        if progress is not None:
                            progress(done, total, plan.info.path)
                        if pending >= _COMMIT_FILES or time.perf_counter() - batch_started > _COMMIT_SECONDS:
                            break
            completed = True
            out.records = kept.records if kept is not None else None
        finally:
            if feed is not None:
                feed.finish(completed)

    # -- records and state ---------------------------------------------------------------------------
    def definitions(self) -> list[Definition]:
        return self.store.definitions()

    def calls(self) -> list[CallSite]:
        return self.store.calls()

    def imports(self) -> list[Import]:
        return self.store.imports()

    @property
    def revision(self) -> int:
        """A persisted counter that increments whenever an update changes the index."""
        return int(self.store.get_meta("revision") or 0)

    def error_files(self) -> list[tuple[str, str]]:
        """(path, reason) of each problem an indexed file's parse reported, by path."""
        return [(path, reason) for path, row in sorted(self.store.files().items()) if row.error
                for reason in error_reasons(ParseResult(status=row.status, error=row.error))]

    def changed_elsewhere(self, consume: bool = True) -> bool:
        """Whether another process committed changes to the index (or rebuilt it) since this one last
        updated or synced; `consume` marks them as seen (a new generation: derived structures rebuild)."""
        stamp = self.store.stamp()
        if stamp == self._seen:
            return False
        if consume:
            self._seen = stamp
            with self._generation_lock:
                self._generation += 1
        return True

    @property
    def generation(self) -> int:
        """Increments whenever an update changes the index."""
        return self._generation

    def state_key(self) -> str:
        """Names one index state: the index's uid and revision ("" while unsaved buffers are open);
        structures derived from the index are saved under it (with their code's fingerprint)."""
        if self._overlays:
            return ""
        uid = self.store.get_meta("index_uid")
        if not uid:
            uid = secrets.token_hex(8)
            self.store.set_meta("index_uid", uid)
        return f"{uid}:{self.revision}"

    def status(self) -> dict[str, Any]:
        """Counts and metadata for `codeseek status` and the LSP status command."""
        counts: dict[str, Any] = dict(self.store.counts())
        updated = self.store.get_meta("updated_at")
        return {"root": str(self.root), "index_dir": str(self.index_dir), **counts,
                "languages": self.store.languages(), "updated_at": float(updated) if updated else None,
                "overlays": len(self._overlays)}

