"""How the `codeseek` commands choose their workspace root, and `codeseek gc` / `status --all`.

`choose_root(explicit, start)`: a root the user named (`--root DIR` or the positional ROOT) is used
as given; otherwise the project root is detected from `start` (the current directory, or the file a
command is about) with `indexing.roots.find_root`, and `subdir` says where below the root the
command was started, so a search from a subfolder uses the repository's index scoped to it.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

from indexing.location import index_base
from indexing.roots import RootError, StoredIndex, age, find_root, remove_index, stored_indexes


class RootChoiceError(Exception):
    """The root could not be chosen (missing, not a folder, or none detected); exit status 2."""


@dataclass(frozen=True)
class Chosen:
    root: Path
    subdir: str  # "" when the command runs at the root (or the root was named)
    detected: bool  # True when found from markers, False when named by the user


def choose_root(explicit: str | None, start: Path | None = None) -> Chosen:
    """The named root, else the project root detected from `start` (default: the current directory)."""
    if explicit:
        root = Path(explicit).expanduser()
        if not root.exists():
            raise RootChoiceError(f"root does not exist: {root}")
        if not root.is_dir():
            raise RootChoiceError(f"root is not a directory: {root}")
        return Chosen(root.resolve(), "", False)
    try:
        info = find_root(start or Path.cwd())
    except RootError as exc:
        raise RootChoiceError(str(exc)) from exc
    return Chosen(info.root, info.subdir, True)


def subdir_globs(subdir: str, globs: tuple[str, ...]) -> tuple[str, ...]:
    """Include globs restricted to `subdir`: a glob without a slash matches at any depth below it;
    a glob with a slash is relative to the root (as documented) and kept."""
    if not subdir:
        return globs
    if not globs:
        return (f"{subdir}/",)
    return tuple(g if "/" in g.rstrip("/") else f"{subdir}/**/{g}" for g in globs)


# -- codeseek status --all / gc ------------------------------------------------------------------------
def _human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _rows(items: list[StoredIndex]) -> list[str]:
    lines = []
    for item in items:
        state = f"stale: {item.stale}" if item.stale else "current"  # its root is there; not a lock
        lines.append(f"{item.root or '?'}\n    {item.index_dir}  {_human_bytes(item.bytes)}  "
                     f"updated {age(item.updated_at)}  ({state})")
    return lines


def cmd_status_all(args: argparse.Namespace) -> int:
    """Every index under the index base (`--index-dir`, else $CODESEEK_INDEX_DIR or the user cache), with
    its root, size, age and whether it is stale."""
    base = index_base(getattr(args, "index_dir", None))
    items = stored_indexes(base)
    if args.json:
        print(json.dumps({"base": str(base), "indexes": [i.to_json() for i in items]}, indent=2))
        return 0
    if not items:
        print(f"no indexes under {base}")
        return 0
    stale = sum(1 for i in items if i.stale)
    print("\n".join(_rows(items)))
    print(f"{len(items)} indexes under {base}, {stale} stale"
          + (" (`codeseek gc` removes them)" if stale else ""))
    return 0


def cmd_gc(args: argparse.Namespace) -> int:
    """Remove stale indexes (the root is gone or maps elsewhere); `--dry-run` only lists them."""
    items = [i for i in stored_indexes() if i.stale]
    freed = 0
    for item in items:
        if not args.dry_run:
            remove_index(item)
        freed += item.bytes
    if args.json:
        print(json.dumps({"removed" if not args.dry_run else "would_remove": [i.to_json() for i in items],
                          "bytes": freed}, indent=2))
        return 0
    verb = "would remove" if args.dry_run else "removed"
    for item in items:
        print(f"{verb} {item.index_dir} ({item.root or '?'}: {item.stale})")
    print(f"{verb} {len(items)} stale indexes, {_human_bytes(freed)}")
    return 0
