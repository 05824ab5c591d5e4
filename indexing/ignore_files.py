"""Gitignore-style ignore files for the scan: `.gitignore`, `.ignore`, `.codeseekignore` at every level.

`IgnoreFiles` reads each directory's ignore files once (patterns anchored to their own directory;
`.git/info/exclude` at the root) plus the user's `excludes` (highest precedence), and answers
`ignored(rel, is_dir)`: the deepest ignore file with a matching pattern decides, as git does. Inside a
git work tree git has applied `.gitignore` already, so only codeseek's own files are read. An ignore
file that is a symlink out of the root is not read.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import pathspec

__all__ = ["IGNORE_FILES", "IgnoreFiles", "is_inside"]

IGNORE_FILES = (".gitignore", ".ignore", ".codeseekignore")


def is_inside(path: str, root: str) -> bool:
    """Whether the absolute `path` is `root` or lies under it."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class IgnoreFiles:
    """Gitignore-style matchers keyed by the directory (relative POSIX, "" for the root) they sit in."""

    def __init__(self, root: Path, excludes: Sequence[str] = (), use_ignore_files: bool = True,
                 git: bool = False) -> None:
        self.root = root
        self.use_ignore_files = use_ignore_files
        # In git mode git has applied .gitignore and .git/info/exclude; codeseek's own files remain.
        self.names = IGNORE_FILES[1:] if git else IGNORE_FILES
        self.root_names = self.names if git else (".git/info/exclude", *IGNORE_FILES)
        self._specs: dict[str, pathspec.GitIgnoreSpec | None] = {}
        self._active: dict[str, tuple[tuple[str, pathspec.GitIgnoreSpec], ...]] = {}
        self._listed: dict[str, frozenset[str]] | None = None  # folder -> its ignore files (`use_listing`)
        self._extra = pathspec.GitIgnoreSpec.from_lines(excludes) if excludes else None

    def use_listing(self, paths: Iterable[str]) -> None:
        """Take the folders' ignore files from a complete list of the tree's files (git's tracked,
        untracked and ignored files) instead of looking in every folder. A folder git ignores whole is
        not on the list, and neither is any file below it that could ask."""
        listed: dict[str, set[str]] = {}
        for path in paths:
            folder, _, name = path.rpartition("/")
            if name in self.names:
                listed.setdefault(folder, set()).add(name)
        self._listed = {folder: frozenset(names) for folder, names in listed.items()}

    def spec_for(self, rel_dir: str,
                 present: frozenset[str] | None = None) -> pathspec.GitIgnoreSpec | None:
        """The combined spec of `rel_dir`'s ignore files (`present`: its entry names, when known)."""
        if rel_dir in self._specs:
            return self._specs[rel_dir]
        if present is None and self._listed is not None:
            present = self._listed.get(rel_dir, frozenset())
        lines: list[str] = []
        if self.use_ignore_files:
            names = self.names if rel_dir else self.root_names
            for name in names:
                if present is not None and name.split("/", 1)[0] not in present:
                    continue
                path = os.path.join(self.root, rel_dir, name)
                if not os.path.lexists(path):  # (most folders have none: one lstat, not a realpath)
                    continue
                if not is_inside(os.path.realpath(path), str(self.root)):
                    continue  # an ignore file that is a symlink out of the root is not read
                try:
                    with open(path, encoding="utf-8", errors="replace") as fh:
                        text = fh.read()
                except OSError:
                    continue
                lines.extend(text.splitlines())
        spec = pathspec.GitIgnoreSpec.from_lines(lines) if lines else None
        self._specs[rel_dir] = spec
        return spec

    def active(self, rel_dir: str) -> tuple[tuple[str, pathspec.GitIgnoreSpec], ...]:
        """The specs that apply inside `rel_dir`, deepest first (kept: a folder's files ask in turn)."""
        known = self._active.get(rel_dir)
        if known is not None:
            return known
        parent = rel_dir.rsplit("/", 1)[0] if "/" in rel_dir else ""
        spec = self.spec_for(rel_dir)
        above = self.active(parent) if rel_dir else ()
        found = ((rel_dir, spec), *above) if spec is not None else above
        self._active[rel_dir] = found
        return found

    def ignored(self, rel: str, is_dir: bool,
                specs: tuple[tuple[str, pathspec.GitIgnoreSpec], ...] | None = None) -> bool:
        """Whether `rel` is ignored; the deepest ignore file with a matching pattern decides.

        `specs`: the active specs of `rel`'s directory (deepest first), when the caller has them.
        """
        if self._extra is not None:
            verdict = self._extra.check_file(rel + "/" if is_dir else rel).include
            if verdict is not None:
                return verdict
        if specs is None:
            specs = self.active(rel.rsplit("/", 1)[0] if "/" in rel else "")
        for rel_dir, spec in specs:
            sub = rel[len(rel_dir) + 1:] if rel_dir else rel
            verdict = spec.check_file(sub + "/" if is_dir else sub).include
            if verdict is not None:
                return verdict
        return False
