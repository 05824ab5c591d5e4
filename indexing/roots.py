"""Which folder is the workspace: project-root detection, refused roots, and the stored indexes.

`find_root(start)` walks up from a file or folder to the project root: the nearest folder holding
`.codeseek` (an explicit opt-in), else the nearest repository (`.git`, `.hg`), else the nearest
project file (`pyproject.toml`, `package.json`, `go.mod`, `Cargo.toml`). The repository wins over a
nested project file, so a search from `src/pkg` uses the repository's index. A home directory or a
filesystem root is never a detected root (`refused_root` says why); the caller indexes such a folder,
or a folder without markers, only when the user names it explicitly.

`stored_indexes()` lists the indexes under the index base (`indexing.location`) with the root each
one was built for, and whether it is stale (the root is gone, or no longer maps to that folder);
`remove_index` deletes one (the CLI's `codeseek gc` and `codeseek status --all`).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from indexing.location import index_base, index_key
from indexing.store import DB_NAME

OPT_IN = ".codeseek"
REPOSITORY_MARKERS = (".git", ".hg")
PROJECT_MARKERS = ("pyproject.toml", "package.json", "go.mod", "Cargo.toml")
MARKERS = (OPT_IN, *REPOSITORY_MARKERS, *PROJECT_MARKERS)


class RootError(Exception):
    """No usable project root: nothing marks one, or the folder found must not be indexed whole."""


@dataclass(frozen=True)
class RootInfo:
    """A detected root, the marker that decided it, and the start folder relative to it ("" at the root)."""

    root: Path
    marker: str
    subdir: str


def home_dir() -> Path | None:
    try:
        return Path(os.path.realpath(Path.home()))
    except (RuntimeError, KeyError):  # no HOME and no passwd entry
        return None


def refused_root(path: Path) -> str | None:
    """Why `path` must not be indexed without an explicit request (None when it may be)."""
    real = Path(os.path.realpath(path))
    if real.parent == real:
        return "a filesystem root"
    if real == home_dir():
        return "your home directory"
    return None


def _has(folder: Path, names: tuple[str, ...]) -> str | None:
    for name in names:
        if os.path.lexists(folder / name):
            return name
    return None


def find_root(start: Path) -> RootInfo:
    """The project root above `start` (a file or folder); RootError when there is none to use."""
    start = Path(os.path.realpath(Path(start).expanduser()))
    folder = start if start.is_dir() else start.parent
    chain = [folder, *folder.parents]
    found: tuple[Path, str] | None = None
    for names in ((OPT_IN,), REPOSITORY_MARKERS, PROJECT_MARKERS):
        for candidate in chain:
            marker = _has(candidate, names)
            if marker is not None:
                found = (candidate, marker)
                break
        if found is not None:
            break
    if found is None:
        raise RootError(f"no project root above {folder} (none of {', '.join(MARKERS)} found); "
                        "name the folder to index it anyway (--root DIR)")
    root, marker = found
    why = refused_root(root)
    if why is not None and marker != OPT_IN:
        raise RootError(f"the nearest project marker ({marker}) is in {root}, {why}; not indexing it "
                        f"whole: name the folder to index (--root DIR), or create {root / OPT_IN} to opt in")
    sub = folder.relative_to(root).as_posix()
    return RootInfo(root, marker, "" if sub == "." else sub)


# -- stored indexes ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StoredIndex:
    """One index folder under the cache: the root it belongs to and whether it is stale."""

    index_dir: Path
    root: str | None
    updated_at: float | None
    bytes: int
    stale: str | None  # why it can go ("root is gone", ...); None while its root is there and maps here

    def to_json(self) -> dict[str, object]:
        return {"index_dir": str(self.index_dir), "root": self.root, "updated_at": self.updated_at,
                "bytes": self.bytes, "stale": self.stale}


def folder_bytes(folder: Path) -> int:
    """The bytes of the files under `folder` (links counted as themselves; unreadable entries skipped)."""
    total = 0
    for dirpath, _, names in os.walk(folder):
        for name in names:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                continue
    return total


def _meta(db: Path) -> dict[str, str]:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=2.0)
        try:
            return {str(k): str(v) for k, v in con.execute("SELECT key, value FROM meta")}
        finally:
            con.close()
    except sqlite3.Error:
        return {}


def stored_indexes(base: Path | None = None) -> list[StoredIndex]:
    """Every index folder under `base` (default `index_base()`), sorted by root."""
    base = base or index_base()
    out: list[StoredIndex] = []
    if not base.is_dir():
        return out
    for folder in sorted(p for p in base.iterdir() if p.is_dir() and not p.is_symlink()):
        db = folder / DB_NAME
        if not db.exists():
            if any(folder.iterdir()):  # something else lives here (a model cache): leave it alone
                continue
            out.append(StoredIndex(folder, None, None, 0, "empty folder"))
            continue
        meta = _meta(db)
        root = meta.get("root")
        updated = meta.get("updated_at")
        stale: str | None = None
        if root is None:
            stale = "unreadable or no root recorded"
        elif not Path(root).is_dir():
            stale = "root is gone"
        elif index_key(root) != folder.name:
            stale = "root now maps to another index"
        try:
            when = float(updated) if updated else None
        except ValueError:
            when = None
        out.append(StoredIndex(folder, root, when, folder_bytes(folder), stale))
    return sorted(out, key=lambda s: (s.root or "", str(s.index_dir)))


def remove_index(item: StoredIndex) -> None:
    """Delete one index folder (only folders that hold an index or nothing)."""
    if (item.index_dir / DB_NAME).exists() or not any(item.index_dir.iterdir()):
        shutil.rmtree(item.index_dir)


def age(seconds: float | None) -> str:
    """'3 days ago' style text for an update time."""
    if seconds is None:
        return "never"
    delta = max(0.0, time.time() - seconds)
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if delta >= size:
            n = int(delta // size)
            return f"{n} {unit}{'s' if n != 1 else ''} ago"
    return "just now"
