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

A workspace is untrusted input, and so is its `.git/config`: settings there can name programs for git
to run (`core.fsmonitor` runs a hook on every `ls-files`). Every call goes through `_git`, which
overrides each setting that can make git execute something (`SAFE_CONFIG`) on the command line, which
outranks every config file, and points git at no pager, editor or credential prompt. A work tree whose
top level (`core.worktree`) lies outside the folder's own tree is not trusted for the list either.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from indexing.scan import skipped_dir

if TYPE_CHECKING:
    from indexing.scan import Scanner

GIT_TIMEOUT_S = 120.0
MAX_NESTING = 4  # submodules within submodules

# Settings a repository's own config could use to make git run a program, each overridden with a value
# that runs nothing. `ls-files` and `rev-parse` need none of them; the list covers what any git command
# run here could reach, so a later call cannot reopen the hole. `core.hooksPath` points at a folder that
# holds no hooks; filters and diff drivers are named per driver, so they are cut off by refusing
# attributes (`core.attributesFile`) and by the plumbing never reading content.
SAFE_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.untrackedCache", "false"),
    ("core.sshCommand", "false"),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("core.askPass", "false"),
    ("core.attributesFile", os.devnull),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("gpg.program", "false"),
    ("sequence.editor", "false"),
    ("protocol.allow", "never"),
    ("protocol.file.allow", "never"),
    ("uploadpack.packObjectsHook", ""),
    ("safe.bareRepository", "explicit"),
)
# Environment variables through which a config could also arrive, dropped from git's environment.
_UNSAFE_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND",
               "GIT_ASKPASS", "SSH_ASKPASS", "GIT_EDITOR", "GIT_PAGER", "GIT_PROXY_COMMAND",
               "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT")


def safe_git_command(exe: str, *args: str) -> list[str]:
    """`exe args` with every executable setting overridden (see the module docstring)."""
    overrides = [item for key, value in SAFE_CONFIG for item in ("-c", f"{key}={value}")]
    return [exe, "--no-pager", *overrides, *args]


def safe_git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _UNSAFE_ENV and not k.startswith("GIT_CONFIG_KEY_")
           and not k.startswith("GIT_CONFIG_VALUE_")}
    env.update(GIT_OPTIONAL_LOCKS="0", LC_ALL="C", GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat",
               GIT_EDITOR="false", GIT_ASKPASS="false", GIT_SSH_COMMAND="false")
    return env


GITLINK_MODE = "160000"  # a submodule's entry in git's index


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
    try:
        proc = subprocess.run(safe_git_command(exe, *args), cwd=root, capture_output=True, check=False,
                              timeout=GIT_TIMEOUT_S, env=safe_git_env(), stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    return [os.fsdecode(p) for p in proc.stdout.split(b"\0") if p]


def in_work_tree(root: str) -> bool:
    """True when `root` lies inside a git work tree whose top level contains it."""
    out = _git(root, "rev-parse", "--is-inside-work-tree", "--show-toplevel")
    if out is None or not out:
        return False
    lines = out[0].splitlines()
    return len(lines) == 2 and lines[0].strip() == "true" and _contains(lines[1].strip(), root)


def _contains(top: str, root: str) -> bool:
    """Whether the work tree's top level is `root` or one of its parents (a `core.worktree` that
    points elsewhere would make git list another tree's files as this folder's)."""
    top_real, root_real = os.path.realpath(top), os.path.realpath(root)
    return root_real == top_real or root_real.startswith(top_real.rstrip(os.sep) + os.sep)


def _pathspecs(paths: Sequence[str]) -> list[str]:
    return ["--", *(f":(literal){p}" for p in paths)] if paths else []


def list_files(root: str, paths: Sequence[str] = (), with_ignored: bool = True,
               depth: int = 0) -> GitListing | None:
    """git's file list for `root` (restricted to `paths` when given); None outside a work tree."""
    if depth > 0 and not os.path.exists(os.path.join(root, ".git")):
        return None
    if not in_work_tree(root):
        return None
    spec = _pathspecs(paths)
    # Both lists walk the work tree (~40 ms each on 4,000 files): the ignored one runs beside.
    ignored: list[list[str] | None] = []
    beside = threading.Thread(target=lambda: ignored.append(_git(
        root, "ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z", *spec)),
        name="git-ignored", daemon=True) if with_ignored else None
    if beside is not None:
        beside.start()
    # One call: `-t` tags each path, "? " for untracked, a letter (H, S, M, C...) for tracked; `-s`
    # gives a tracked path's mode ("H 100644 <sha> 0<TAB>path"), so a submodule (160000) is known
    # without a stat per file. Outside a work tree git exits non-zero and the caller walks the tree.
    tagged = _git(root, "ls-files", "-z", "-t", "-s", "--cached", "--others", "--exclude-standard", *spec)
    if beside is not None:
        beside.join()
    if tagged is None:
        return None
    listing = GitListing(ignored=(ignored[0] if ignored else None) or [])
    others: list[str] = []
    last = ""
    for entry in tagged:
        if entry.startswith("? "):
            others.append(entry[2:])
            continue
        head, tab, rel = entry.partition("\t")
        if not tab or rel == last:  # an unmerged path is listed once per stage
            continue
        last = rel
        if head.split(" ", 2)[1:2] == [GITLINK_MODE]:
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
        if skipped_dir(parts[depth - 1], full):
            return "/".join(parts[:depth]) + "/"
    return None


def _full(root: str, rel: str) -> str:
    """The absolute path of workspace-relative POSIX `rel` (one concatenation, not a join per part)."""
    return root + os.sep + (rel if os.sep == "/" else rel.replace("/", os.sep))


def _ignored_by_codeseek(scanner: Scanner, rel: str, folders: dict[str, bool]) -> bool:
    """Whether codeseek's own ignore rules drop `rel`: a folder on its way down, or the file itself.
    `folders` keeps each folder's verdict (its own or an ancestor's) for the rest of the listing."""
    folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
    return bool(folder) and _folder_ignored(scanner, folder, folders) or scanner.ignores.ignored(rel, False)


def _folder_ignored(scanner: Scanner, folder: str, folders: dict[str, bool]) -> bool:
    known = folders.get(folder)
    if known is None:
        parent = folder.rsplit("/", 1)[0] if "/" in folder else ""
        known = bool(parent) and _folder_ignored(scanner, parent, folders) \
            or scanner.ignores.ignored(folder, True)
        folders[folder] = known
    return known


def apply_listing(scanner: Scanner, listing: GitListing, under: str = "") -> None:
    """Run the scanner's own rules over git's list (`under`: only paths below this folder)."""
    from indexing.scan import EXCLUDED_DIR, IGNORED

    prefix = under.rstrip("/") + "/" if under else ""
    excluded: set[str] = set()
    folders: dict[str, bool] = {}
    tracked = set(listing.tracked)
    for rel in sorted({*listing.tracked, *listing.untracked}):
        if prefix and not rel.startswith(prefix):
            continue
        full = _full(scanner.real_root, rel)
        try:
            st = os.lstat(full)
        except OSError:  # deleted in the work tree, not yet in the index
            continue
        if rel not in tracked:
            folder = _excluded_dir(scanner, rel)
            if folder is not None:
                if folder not in excluded:
                    excluded.add(folder)
                    scanner.skip(folder, EXCLUDED_DIR)
                continue
        if _ignored_by_codeseek(scanner, rel, folders):
            scanner.skip(rel, IGNORED)
            continue
        scanner.consider_file(rel, full, stat.S_ISLNK(st.st_mode), known_stat=st)
    for rel in listing.ignored:
        if not prefix or rel.startswith(prefix):
            scanner.skip(rel, IGNORED)


def walk(scanner: Scanner, under: str = "") -> bool:
    """Fill `scanner.result` from git's list; False (nothing done) outside a git work tree."""
    listing = list_files(scanner.real_root, [under] if under else ())
    if listing is None:
        return False
    if not under:  # the whole list: it names every ignore file that can matter (see `use_listing`)
        scanner.ignores.use_listing([*listing.tracked, *listing.untracked,
                                     *(p for p in listing.ignored if not p.endswith("/"))])
    apply_listing(scanner, listing, under)
    return True


def check(scanner: Scanner, rels: Sequence[str]) -> bool:
    """Apply git's selection and the scanner's rules to named paths (files or folders); False outside
    a work tree. A named file git ignores is skipped as `ignored`; a vanished one as `vanished`."""
    from indexing.scan import IGNORED, VANISHED

    existing = [r for r in rels if os.path.lexists(_full(scanner.real_root, r))]
    listing = list_files(scanner.real_root, existing, with_ignored=False) if existing else None
    if listing is None:
        if existing or not in_work_tree(scanner.real_root):
            return False
        listing = GitListing()
    listed = {*listing.tracked, *listing.untracked}
    for rel in rels:
        full = _full(scanner.real_root, rel)
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
