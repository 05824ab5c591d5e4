"""Walk a workspace root and decide which files get indexed, recording a reason for every skip.

Inside a git work tree the candidate files are git's own list (`indexing.gitfiles`: tracked files plus
untracked files git does not ignore, honouring parent ignore files and the global excludes file); the
directory names below skip only files git does not track, and `.gitignore` is left to git. Outside
git (or with `ScanOptions.use_git` off) the tree is walked and these rules apply, in order:
- directories always skipped by name (`.git`, `node_modules`, `dist`, `build`, virtual envs, caches...);
- `.gitignore` files at every level (patterns anchored to their own directory), `.ignore` and
  `.codeseekignore` (same syntax, higher precedence), `.git/info/exclude` at the root, and
  `ScanOptions.excludes` (highest precedence), all gitignore-style via pathspec;
- lockfiles by full name; files whose language `indexing.languages.language_for_path` does not know;
- symlinks that are broken, loop, or leave the root (never followed: nothing outside the root is read);
  a file reached through a link inside the root (a file link or a linked folder) is indexed once, under
  its real path when that path is indexed itself, else under the first link path (the other copies:
  `symlink-duplicate`); files larger than `max_file_size`; unreadable
  files; files that vanish while scanning; binary files (a NUL byte in the first 512 bytes);
  minified files (long lines in the first 8 KB of a file of 16 KB or more); files and folders whose
  name is not valid UTF-8 (`non-utf8-name`, recorded with the bad bytes written as `\\xNN`).

Paths are workspace-relative POSIX strings. `scan` never raises for a bad file: it records
`(path, reason)` in `ScanResult.skipped`. A skipped directory is recorded once, as `dir/`.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from indexing.ignore_files import IgnoreFiles, is_inside
from indexing.labels import labels_for
from indexing.records import FileInfo

# Skip reasons (stable strings: the CLI summary and tests count them).
EXCLUDED_DIR = "excluded-dir"
IGNORED = "ignored"
LOCKFILE = "lockfile"
UNSUPPORTED = "unsupported-language"
TOO_LARGE = "too-large"
BINARY = "binary"
MINIFIED = "minified"
SYMLINK_OUTSIDE = "symlink-outside-root"
SYMLINK_LOOP = "symlink-loop"
BROKEN_SYMLINK = "broken-symlink"
UNREADABLE = "unreadable"
VANISHED = "vanished"
NOT_A_FILE = "not-a-file"
OUTSIDE_ROOT = "outside-root"
NON_UTF8_NAME = "non-utf8-name"  # paths are stored as UTF-8 text: such a file cannot be indexed
SYMLINK_DUPLICATE = "symlink-duplicate"  # a second path to a file already indexed

ALWAYS_SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", ".bzr", "node_modules", "bower_components", "jspm_packages", "dist", "build",
    ".venv", "venv", ".env", "__pycache__", "target", ".tox", ".nox", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".pytype", ".pyre", ".hypothesis", ".idea", ".vscode-test", ".next",
    ".nuxt", ".svelte-kit", ".turbo", ".parcel-cache", ".cache", ".gradle", ".eggs", ".terraform",
    ".serverless", ".angular", ".yarn", ".pnpm-store", ".nyc_output", "htmlcov", ".coverage_html",
    ".codeseek",
})
# Skipped by name unless it is a Python package (coverage.py's own source lives in coverage/).
COVERAGE_DIRS = frozenset({"coverage", "lcov-report"})
LOCKFILES = frozenset({
    "package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock", "bun.lockb", "Cargo.lock",
    "poetry.lock", "uv.lock", "Pipfile.lock", "pdm.lock", "composer.lock", "Gemfile.lock", "go.sum",
    "flake.lock", "mix.lock", "pubspec.lock", "Podfile.lock", "packages.lock.json", "gradle.lockfile",
})
BINARY_SNIFF = 512
MINIFIED_SNIFF = 8192
MINIFIED_MIN_SIZE = 16_384
MINIFIED_MEAN_LINE = 300


@dataclass(frozen=True)
class ScanOptions:
    """What the scanner accepts."""

    max_file_size: int = 1_000_000
    excludes: tuple[str, ...] = ()  # extra gitignore-style patterns, anchored at the root
    use_ignore_files: bool = True  # honour .gitignore / .ignore / .codeseekignore
    skip_minified: bool = True
    use_git: bool = True  # inside a git work tree, take the file list from git


@dataclass
class ScanResult:
    """Accepted files (sorted by path) and skipped `(path, reason)` pairs."""

    files: list[FileInfo] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def skipped_by_reason(self) -> dict[str, int]:
        return dict(Counter(reason for _, reason in self.skipped))


def skipped_dir(name: str, full: str) -> bool:
    """Whether every scan skips the folder `full` by its name (`ALWAYS_SKIP_DIRS`, `*.egg-info`, a
    `COVERAGE_DIRS` folder that is not a Python package)."""
    if name in ALWAYS_SKIP_DIRS or name.endswith(".egg-info"):
        return True
    return name in COVERAGE_DIRS and not os.path.exists(os.path.join(full, "__init__.py"))


def _language_for_name(name: str) -> str | None:
    from indexing.languages import language_for_name  # (not at import: the grammars' module)

    return language_for_name(name)


def utf8_name(name: str) -> bool:
    """Whether a file name (as os.scandir gives it, undecodable bytes as surrogates) is valid UTF-8."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable(path: str) -> str:
    """`path` with undecodable bytes written as \\xNN, safe to store, print and log."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _ignores(root: Path, options: ScanOptions, git: bool = False) -> IgnoreFiles:
    return IgnoreFiles(root, options.excludes, options.use_ignore_files, git=git)


class Scanner:
    """One scan of one root; `walk()` for the whole tree, `check()` for named paths."""

    def __init__(self, root: Path, options: ScanOptions,
                 known: Mapping[str, tuple[int, int]] | None = None) -> None:
        self.known = known or {}
        self.root = Path(os.path.realpath(root))
        self.real_root = str(self.root)
        self.options = options
        self.ignores = _ignores(self.root, options)
        self.result = ScanResult()
        self.linked: dict[str, str] = {}  # accepted path reached through a link -> its real path

    def use_git(self) -> None:
        """Switch the ignore rules to git mode (git's list already applied .gitignore)."""
        self.ignores = _ignores(self.root, self.options, git=True)

    def skip(self, rel: str, reason: str) -> None:
        self.result.skipped.append((rel, reason))

    # -- files -------------------------------------------------------------------------------------
    def consider_file(self, rel: str, full: str, is_link: bool, via_link: bool = False,
                      known_stat: os.stat_result | None = None) -> None:
        """Accept or skip one file; `via_link`: a folder above it was reached through a link;
        `known_stat`: its lstat, when the caller took one (for a file that is not a link, its stat)."""
        name = rel.rsplit("/", 1)[-1]
        if name in LOCKFILES:
            self.skip(rel, LOCKFILE)
            return
        language = _language_for_name(name)
        if language is None:
            self.skip(rel, UNSUPPORTED)
            return
        try:
            st = known_stat if known_stat is not None and not is_link else os.stat(full)
        except FileNotFoundError:
            self.skip(rel, BROKEN_SYMLINK if is_link and os.path.lexists(full) else VANISHED)
            return
        except OSError as exc:
            self.skip(rel, SYMLINK_LOOP if exc.errno == errno.ELOOP else UNREADABLE)
            return
        if is_link and not is_inside(os.path.realpath(full), self.real_root):
            self.skip(rel, SYMLINK_OUTSIDE)
            return
        if not stat.S_ISREG(st.st_mode):
            self.skip(rel, NOT_A_FILE)
            return
        if st.st_size > self.options.max_file_size:
            self.skip(rel, TOO_LARGE)
            return
        # A file accepted before with the same size and mtime need not be read again.
        same = self.known.get(rel) == (st.st_size, st.st_mtime_ns)
        reason = None if same else self.sniff(full, st.st_size)
        if reason is not None:
            self.skip(rel, reason)
            return
        self.result.files.append(FileInfo(rel, language, st.st_size, st.st_mtime_ns, labels_for(rel)))
        if is_link or via_link:
            self.linked[rel] = os.path.realpath(full)

    def drop_link_copies(self, complete: bool) -> None:
        """Keep one path per real file among the accepted files reached through links (`indexing.links`:
        the real path wins when it is indexed itself). `complete`: a whole walk, else named paths."""
        if not self.linked:
            return
        from indexing.links import link_copies

        drop = link_copies(self.linked, self.real_root, {f.path for f in self.result.files},
                           None if complete else self._indexable)
        if drop:
            self.result.files = [f for f in self.result.files if f.path not in drop]
            self.result.skipped.extend((rel, SYMLINK_DUPLICATE) for rel in sorted(drop))
        self.linked = {}

    def _indexable(self, rel: str) -> bool:
        """Whether the scan rules accept `rel` (a real path: no links on its way)."""
        return any(f.path == rel for f in scan_paths(self.root, [rel], self.options).files)

    def sniff(self, full: str, size: int) -> str | None:
        """Read the head of a file: binary, minified, unreadable or vanished, else None."""
        want_minified = self.options.skip_minified and size >= MINIFIED_MIN_SIZE
        try:
            with open(full, "rb") as fh:
                head = fh.read(MINIFIED_SNIFF if want_minified else BINARY_SNIFF)
        except FileNotFoundError:
            return VANISHED
        except OSError:
            return UNREADABLE
        if b"\0" in head[:BINARY_SNIFF]:
            return BINARY
        if want_minified:
            lines = head.count(b"\n")
            if lines == 0 or len(head) / lines > MINIFIED_MEAN_LINE:
                return MINIFIED
        return None

    # -- directories -------------------------------------------------------------------------------
    def walk(self, start: str = "") -> ScanResult:
        """Walk the tree below `start` (a workspace-relative directory already checked, "" for all)."""
        if self.options.use_git and not start:
            from indexing import gitfiles

            self.use_git()
            if gitfiles.walk(self):
                self.drop_link_copies(complete=True)
                self.result.files.sort(key=lambda f: f.path)
                return self.result
            self.ignores = _ignores(self.root, self.options)
        Specs = tuple[tuple[str, pathspec.GitIgnoreSpec], ...]
        full_start = os.path.join(self.real_root, *start.split("/")) if start else self.real_root
        parent = start.rsplit("/", 1)[0] if "/" in start else ""
        inherited = self.ignores.active(parent) if start else ()
        # Stack of (relative dir, absolute dir, real paths of the dirs on the way down, parent's specs,
        # whether a link led there).
        real_start = os.path.realpath(full_start)
        stack: list[tuple[str, str, frozenset[str], Specs, bool]] = [
            (start, full_start, frozenset({self.real_root, real_start}), inherited,
             real_start != os.path.normpath(full_start))]
        while stack:
            rel_dir, full_dir, ancestors, parent_specs, via_link = stack.pop()
            try:
                entries = sorted(os.scandir(full_dir), key=lambda e: e.name)
            except FileNotFoundError:
                self.skip(rel_dir + "/", VANISHED)
                continue
            except OSError:
                self.skip(rel_dir + "/", UNREADABLE)
                continue
            own = self.ignores.spec_for(rel_dir, frozenset(e.name for e in entries))
            specs = ((rel_dir, own), *parent_specs) if own is not None else parent_specs
            subdirs: list[tuple[str, str, frozenset[str], Specs, bool]] = []
            for entry in entries:
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                if not utf8_name(entry.name):
                    self.skip(printable(rel), NON_UTF8_NAME)
                    continue
                try:
                    is_link = entry.is_symlink()
                    is_dir = entry.is_dir(follow_symlinks=True)
                except OSError:
                    is_link, is_dir = True, False
                if is_dir:
                    if skipped_dir(entry.name, entry.path):
                        self.skip(rel + "/", EXCLUDED_DIR)
                        continue
                    if self.ignores.ignored(rel, True, specs):
                        self.skip(rel + "/", IGNORED)
                        continue
                    real = os.path.realpath(entry.path) if is_link else entry.path
                    if is_link and not is_inside(real, self.real_root):
                        self.skip(rel + "/", SYMLINK_OUTSIDE)
                    elif real in ancestors:
                        self.skip(rel + "/", SYMLINK_LOOP)
                    else:
                        subdirs.append((rel, entry.path, ancestors | {real}, specs, via_link or is_link))
                    continue
                if self.ignores.ignored(rel, False, specs):
                    self.skip(rel, IGNORED)
                    continue
                if is_link or entry.is_file(follow_symlinks=False):
                    self.consider_file(rel, entry.path, is_link, via_link)
                else:
                    self.skip(rel, NOT_A_FILE)
            stack.extend(reversed(subdirs))
        if not start:
            self.drop_link_copies(complete=True)
        self.result.files.sort(key=lambda f: f.path)
        return self.result

    def check(self, rel: str) -> None:
        """Apply every rule to one workspace-relative path; a directory is walked."""
        if not utf8_name(rel):
            self.skip(printable(rel), NON_UTF8_NAME)
            return
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            sub = "/".join(parts[:depth])
            full = os.path.join(self.real_root, *parts[:depth])
            if skipped_dir(parts[depth - 1], full):
                self.skip(rel, EXCLUDED_DIR)
                return
            if self.ignores.ignored(sub, True):
                self.skip(rel, IGNORED)
                return
        if self.ignores.ignored(rel, False):
            self.skip(rel, IGNORED)
            return
        full = os.path.join(self.real_root, *parts)
        if not is_inside(os.path.realpath(full), self.real_root):
            self.skip(rel, SYMLINK_OUTSIDE)
            return
        if not os.path.lexists(full):
            self.skip(rel, VANISHED)
            return
        if os.path.isdir(full):
            if skipped_dir(parts[-1], full):
                self.skip(rel + "/", EXCLUDED_DIR)
            elif self.ignores.ignored(rel, True):
                self.skip(rel + "/", IGNORED)
            else:
                self.walk(rel)
            return
        parent = os.path.dirname(full)
        self.consider_file(rel, full, os.path.islink(full),
                           os.path.realpath(parent) != os.path.normpath(parent))


def scan(root: Path, options: ScanOptions | None = None,
         known: Mapping[str, tuple[int, int]] | None = None) -> ScanResult:
    """Walk `root` and return the indexable files and every skip with its reason.

    `known`: (size, mtime_ns) of files accepted by an earlier scan; those are not read again when
    they still match (the binary and minified checks would give the same answer).
    """
    return Scanner(root, options or ScanOptions(), known).walk()


def plain_relative(path: str) -> bool:
    """Whether `path` is already a normalized workspace-relative path that stays inside the root
    ("a/b.py", not "/a", "../a", "a/../b" or "."): what `relative_path` would return unchanged, on
    POSIX, without resolving the root (every indexed path is one)."""
    return os.sep == "/" and path not in (".", "..") and not path.startswith(("/", "../")) \
        and path == posixpath.normpath(path)


def relative_path(root: Path, path: str | os.PathLike[str]) -> str | None:
    """`path` (absolute, or relative to `root`) as a normalized workspace-relative POSIX path.

    None when it is the root itself or lies outside it. Only the root's own symlinks are resolved.
    """
    p = os.fspath(path)
    bases = [os.path.realpath(root)]
    if os.path.isabs(p) and os.path.abspath(root) != bases[0]:
        bases.append(os.path.abspath(root))
    for base in bases:
        full = os.path.normpath(os.path.join(base, p))
        if full != base and is_inside(full, base):
            return Path(os.path.relpath(full, base)).as_posix()
    return None


def scan_paths(root: Path, paths: Iterable[str], options: ScanOptions | None = None) -> ScanResult:
    """Apply the scan rules to the named paths only (absolute or workspace-relative); directories
    among them are walked."""
    scanner = Scanner(root, options or ScanOptions())
    rels: list[str] = []
    for path in paths:
        rel = relative_path(root, path)
        if rel is None:
            scanner.skip(os.fspath(path), OUTSIDE_ROOT)
        else:
            rels.append(rel)
    done = False
    if scanner.options.use_git and rels:
        from indexing import gitfiles

        scanner.use_git()
        done = gitfiles.check(scanner, rels)
        if not done:
            scanner.ignores = _ignores(scanner.root, scanner.options)
    if not done:
        for rel in rels:
            scanner.check(rel)
    scanner.drop_link_copies(complete=False)
    scanner.result.files.sort(key=lambda f: f.path)
    return scanner.result
