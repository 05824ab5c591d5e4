"""What a workspace update does per candidate file, and what it reports (`UpdateResult`).

`plan_file` reads and hashes a candidate and says whether it needs parsing (an unchanged file is not
even read; one whose content is the same under a new mtime is touched; a vanished one is removed);
`store_parse` writes one file's parse. `Workspace._index` runs them in file order around the parse
(`indexing.parse_pool`: in process, or on worker processes for a large update).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from indexing.freshness import content_hash, error_reasons
from indexing.parse_pool import Plan
from indexing.record_log import RecordLog, StoredRecords
from indexing.records import Chunk, FileInfo, ParseResult
from indexing.scan import UNREADABLE, VANISHED
from indexing.source_encoding import as_utf8
from indexing.store import STALE, FileRow, IndexStore

__all__ = ["OVERLAY_MTIME", "UpdateResult", "plan_file", "store_parse", "unchanged"]

OVERLAY_MTIME = -1  # mtime recorded for a file indexed from an editor buffer: the disk always differs


@dataclass
class UpdateResult:
    """What one update did. `parsed == 0` on an unchanged tree."""

    added: list[Chunk] = field(default_factory=list)
    removed_ids: list[int] = field(default_factory=list)
    changed_paths: list[str] = field(default_factory=list)  # re-indexed (new or modified)
    removed_paths: list[str] = field(default_factory=list)
    languages: dict[str, int] = field(default_factory=dict)  # indexed files per language, after the update
    scanned: int = 0  # files the scan accepted (or paths examined, for a targeted update)
    parsed: int = 0
    hashed: int = 0  # files read and hashed because size or mtime changed
    unchanged: int = 0
    skipped: dict[str, int] = field(default_factory=dict)  # by reason
    skipped_paths: list[tuple[str, str]] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)  # by reason
    error_paths: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    # An update from an empty store that completed: the records it stored (`indexing.record_log`)
    records: StoredRecords | None = None

    @property
    def changed(self) -> bool:
        return bool(self.changed_paths or self.removed_paths)


def _same_meta(info: FileInfo, row: FileRow | None) -> bool:
    """Stored with the same language and labels, and not marked stale."""
    return row is not None and row.language == info.language and row.labels == info.labels \
        and row.hash != STALE


def unchanged(info: FileInfo, row: FileRow | None) -> bool:
    """Same language, labels, size and mtime as stored: not even read."""
    return _same_meta(info, row) and row is not None \
        and (row.size, row.mtime_ns) == (info.size, info.mtime_ns)


def plan_file(root: Path, store: IndexStore, info: FileInfo, row: FileRow | None, overlay: bytes | None,
              out: UpdateResult, remove: Callable[[list[str], UpdateResult], None]) -> Plan:
    """Read and hash a candidate: a plan with its data when it needs parsing, else without (an
    unchanged file; one whose content is the same under a new mtime, touched; a vanished one, removed)."""
    same_meta = _same_meta(info, row)
    if overlay is None and unchanged(info, row):
        out.unchanged += 1
        return Plan(info)
    if overlay is not None:
        data = overlay
        info = FileInfo(info.path, info.language, len(data), OVERLAY_MTIME, info.labels)
    else:
        try:
            data = (root / info.path).read_bytes()
        except OSError as exc:
            reason = VANISHED if isinstance(exc, FileNotFoundError) else UNREADABLE
            out.skipped_paths.append((info.path, reason))
            if row is not None:
                remove([info.path], out)
            return Plan(info, wrote=1 if row is not None else 0)
        if len(data) != info.size:  # changed between scan and read: record what was read
            info = FileInfo(info.path, info.language, len(data), info.mtime_ns, info.labels)
        data = as_utf8(info.path, data)  # a PEP 263 declaration of another encoding (source_encoding)
    digest = content_hash(data)
    out.hashed += 1
    if same_meta and row is not None and row.hash == digest:
        if (row.size, row.mtime_ns) != (info.size, info.mtime_ns):
            store.touch_file(info)
            return Plan(info, wrote=1)
        out.unchanged += 1
        return Plan(info)
    return Plan(info, data, digest)


def store_parse(store: IndexStore, plan: Plan, result: ParseResult, out: UpdateResult,
                kept: RecordLog | None = None) -> int:
    """Write one file's parse (its records then `kept`); returns 1 (a store write)."""
    info = plan.info
    out.parsed += 1
    out.error_paths.extend((info.path, reason) for reason in error_reasons(result))
    added, removed = store.replace_file_diff(info, plan.digest, result)
    if kept is not None:
        kept.add(info.path, result)
    out.added.extend(added)
    out.removed_ids.extend(removed)
    out.changed_paths.append(info.path)
    return 1
