"""File selection inside a git work tree: git's own list, so codeseek indexes what git sees.

`git ls-files --cached --others --exclude-standard -z` run at the workspace root gives the tracked
files plus the untracked files git does not ignore, under every rule git applies: `.gitignore` at
every level including the parents of the root, `.git/info/exclude` and the global excludes file
(`core.excludesFile`). Ignored files are listed once more (`--ignored --directory`) so the scan can
report them as skipped. Submodules and nested repositories are listed the same way, recursively.

On top of git's list the scanner applies its own rules: `.ignore`, `.codeseekignore` and
`ScanOptions.excludes`, the always-skipped directory names (only for files git does not track: a
tracked `src/build/__init__.py` is indexed), then the per-file checks (language, size, binary...).
Outside a git work tree, or when git is missing or refuses the folder, `list_files` answers None and
the scanner walks the tree with its pathspec rules instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from indexing.scan import Scanner

GIT_TIMEOUT_S = 120.0
MAX_NESTING = 4  # submodules within submodules


@dataclass
class GitListing:
    """Paths relative to the listed folder (POSIX): tracked, untracked-not-ignored, ignored."""

    tracked: list[str] = field(default_factory=list)
    untracked: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # folders end with "/"


def _git(root: str, *args: str) -> list[str] | None:
    """`git args` at `root`, NUL-separated output as paths; None when git fails or is missing."""
    exe = shutil.which("git")
    if exe is None:
        return None
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    try:
        proc = subprocess.run([exe, *args], cwd=root, capture_output=True, timeout=GIT_TIMEOUT_S,
                              env=env, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    return [os.fsdecode(p) for p in proc.stdout.split(b"\0") if p]


def in_work_tree(root: str) -> bool:
    out = _git(root, "rev-parse", "--is-inside-work-tree")
    return out is not None and bool(out) and out[0].strip() == "true"


def _pathspecs(paths: Sequence[str]) -> list[str]:
    return ["--", *(f":(literal){p}" for p in paths)] if paths else []


def list_files(root: str, paths: Sequence[str] = (), with_ignored: bool = True,
               depth: int = 0) -> GitListing | None:
    """git's file list for `root` (restricted to `paths` when given); None outside a work tree."""
    if depth > 0 and not os.path.exists(os.path.join(root, ".git")):
        return None
    spec = _pathspecs(paths)
    # One call: `-t` tags each path, "? " for untracked, a letter (H, S, M, C...) for tracked. Outside
    # a work tree git exits non-zero and the caller walks the tree instead.
    tagged = _git(root, "ls-files", "-z", "-t", "--cached", "--others", "--exclude-standard", *spec)
    if tagged is None:
        return None
    cached = [t[2:] for t in tagged if len(t) > 2 and t[0] != "?"]
    others = [t[2:] for t in tagged if len(t) > 2 and t[0] == "?"]
    listing = GitListing()
    if with_ignored:
        listing.ignored = _git(root, "ls-files", "--others", "--ignored", "--exclude-standard",
                               "--directory", "-z", *spec) or []
    for rel in cached:
        full = os.path.join(root, rel)
        if os.path.isdir(full) and not os.path.islink(full):  # a submodule (gitlink)
            _nested(root, rel, listing, tracked=True, depth=depth)
        else:
            listing.tracked.append(rel)
    for rel in others:
        if rel.endswith("/"):  # an untracked nested repository
            _nested(root, rel.rstrip("/"), listing, tracked=False, depth=depth)
        else:
            listing.untracked.append(rel)
    return listing


def _nested(root: str, rel: str, listing: GitListing, tracked: bool, depth: int) -> None:
    if depth >= MAX_NESTING:
        return
    inner = list_files(os.path.join(root, rel), (), with_ignored=True, depth=depth + 1)
    if inner is None:
        return
    (listing.tracked if tracked else listing.untracked).extend(f"{rel}/{p}" for p in inner.tracked)
    listing.untracked.extend(f"{rel}/{p}" for p in inner.untracked)
    listing.ignored.extend(f"{rel}/{p}" for p in inner.ignored)


# -- the scanner's git mode ------------------------------------------------------------------------------
def _excluded_dir(scanner: Scanner, rel: str) -> str | None:
    """The first always-skipped folder on `rel`'s way down (as "dir/"), else None."""
    parts = rel.split("/")
    for depth in range(1, len(parts)):
        full = os.path.join(scanner.real_root, *parts[:depth])
        if scanner.skip_dir_by_name(parts[depth - 1], full):
            return "/".join(parts[:depth]) + "/"
    return None


def _ignored_by_codeseek(scanner: Scanner, rel: str) -> bool:
    parts = rel.split("/")
    for depth in range(1, len(parts)):
        if scanner.ignores.ignored("/".join(parts[:depth]), True):
            return True
    return scanner.ignores.ignored(rel, False)


def apply_listing(scanner: Scanner, listing: GitListing, under: str = "") -> None:
    """Run the scanner's own rules over git's list (`under`: only paths below this folder)."""
    from indexing.scan import EXCLUDED_DIR, IGNORED

    prefix = under.rstrip("/") + "/" if under else ""
    excluded: set[str] = set()
    tracked = set(listing.tracked)
    for rel in sorted({*listing.tracked, *listing.untracked}):
        if prefix and not rel.startswith(prefix):
            continue
        full = os.path.join(scanner.real_root, *rel.split("/"))
        if not os.path.lexists(full):  # deleted in the work tree, not yet in the index
            continue
        if rel not in tracked:
            folder = _excluded_dir(scanner, rel)
            if folder is not None:
                if folder not in excluded:
                    excluded.add(folder)
                    scanner.skip(folder, EXCLUDED_DIR)
                continue
        if _ignored_by_codeseek(scanner, rel):
            scanner.skip(rel, IGNORED)
            continue
        scanner.consider_file(rel, full, os.path.islink(full))
    for rel in listing.ignored:
        if not prefix or rel.startswith(prefix):
            scanner.skip(rel, IGNORED)


def walk(scanner: Scanner, under: str = "") -> bool:
    """Fill `scanner.result` from git's list; False (nothing done) outside a git work tree."""
    listing = list_files(scanner.real_root, [under] if under else ())
    if listing is None:
        return False
    apply_listing(scanner, listing, under)
    return True


def check(scanner: Scanner, rels: Sequence[str]) -> bool:
    """Apply git's selection and the scanner's rules to named paths (files or folders); False outside
    a work tree. A named file git ignores is skipped as `ignored`; a vanished one as `vanished`."""
    from indexing.scan import IGNORED, VANISHED

    existing = [r for r in rels if os.path.lexists(os.path.join(scanner.real_root, *r.split("/")))]
    listing = list_files(scanner.real_root, existing, with_ignored=False) if existing else None
    if listing is None:
        if existing or not in_work_tree(scanner.real_root):
            return False
        listing = GitListing()
    listed = {*listing.tracked, *listing.untracked}
    for rel in rels:
        full = os.path.join(scanner.real_root, *rel.split("/"))
        if not os.path.lexists(full):
            scanner.skip(rel, VANISHED)
        elif os.path.isdir(full) and not os.path.islink(full):
            apply_listing(scanner, listing, rel)
        elif rel not in listed:
            scanner.skip(rel, IGNORED)
        else:
            apply_listing(scanner, GitListing(
                tracked=[rel] if rel in listing.tracked else [],
                untracked=[rel] if rel not in listing.tracked else []))
    return True
