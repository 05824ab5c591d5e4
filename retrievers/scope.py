"""Search scope: `--include` / `--exclude` globs over workspace-relative POSIX paths.

Globs use gitignore syntax (pathspec's `gitignore` patterns): `*.py` matches at any depth, `src/**` or
`src/` a folder, `!` is not allowed (use `--exclude`). A glob that could reach outside the workspace
(an absolute path, a drive letter, a `..` segment, a home `~`) is refused with `QueryError`, as are
empty, over-long or control-character globs. A path is in scope when it matches some include (or
there are none) and no exclude.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import pathspec

from retrievers.base import QueryError

MAX_GLOBS = 64
MAX_GLOB_CHARS = 500
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
# Words in a glob that mean the user asked for these kinds of files (and so for no demotion).
_LABEL_HINTS = {
    "test": re.compile(r"(^|[/*_.-])(tests?|spec|specs|__tests__)([/*_.-]|$)", re.IGNORECASE),
    "doc": re.compile(r"(^|[/*_.-])(docs?|documentation|readme)([/*_.-]|$)|\.(md|rst|txt)$", re.IGNORECASE),
    "example": re.compile(r"(^|[/*_.-])(examples?|samples?|demos?)([/*_.-]|$)", re.IGNORECASE),
    "vendor": re.compile(r"(^|[/*_.-])(vendor|vendored|_vendor|third_party|node_modules)([/*_.-]|$)",
                         re.IGNORECASE),
}


def check_glob(glob: object, option: str = "include") -> str:
    """The glob, normalized (backslashes to slashes, `./` dropped); QueryError when unusable."""
    if not isinstance(glob, str):
        raise QueryError(f"--{option} glob must be a string, got {type(glob).__name__}")
    text = glob.strip()
    if not text:
        raise QueryError(f"--{option} glob is empty")
    if len(text) > MAX_GLOB_CHARS:
        raise QueryError(f"--{option} glob is longer than {MAX_GLOB_CHARS} characters")
    if _CONTROL.search(text):
        raise QueryError(f"--{option} glob {glob!r} contains control characters")
    text = text.replace("\\", "/")
    if text.startswith("!"):
        raise QueryError(f"--{option} glob {glob!r}: negation is not supported; use --exclude")
    if text.startswith("/") or _DRIVE.match(glob.strip()) or text.startswith("~"):
        raise QueryError(f"--{option} glob {glob!r} is absolute; globs are relative to the workspace root")
    parts = text.split("/")
    if ".." in parts:
        raise QueryError(f"--{option} glob {glob!r} escapes the workspace root ('..')")
    while text.startswith("./"):
        text = text[2:]
    if not text or text == ".":
        text = "**"
    return text


def _spec(globs: Iterable[str]) -> pathspec.PathSpec:
    try:
        return pathspec.PathSpec.from_lines("gitignore", list(globs))
    except Exception as exc:  # pathspec raises several types for malformed patterns
        raise QueryError(f"invalid glob: {exc}") from exc


@dataclass(frozen=True)
class Scope:
    """Compiled include/exclude globs; `Scope()` admits every path."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    _inc: pathspec.PathSpec | None = field(default=None, repr=False, compare=False)
    _exc: pathspec.PathSpec | None = field(default=None, repr=False, compare=False)

    @classmethod
    def build(cls, include: Iterable[object] = (), exclude: Iterable[object] = ()) -> Scope:
        """Validate and compile; QueryError names the offending glob."""
        if isinstance(include, str) or isinstance(exclude, str):
            raise QueryError("include/exclude must be lists of globs, not a single string")
        inc = tuple(check_glob(g, "include") for g in include)
        exc = tuple(check_glob(g, "exclude") for g in exclude)
        if len(inc) + len(exc) > MAX_GLOBS:
            raise QueryError(f"at most {MAX_GLOBS} include/exclude globs")
        return cls(inc, exc, _spec(inc) if inc else None, _spec(exc) if exc else None)

    @property
    def unrestricted(self) -> bool:
        return not self.include and not self.exclude

    def admits(self, path: str) -> bool:
        """True when the workspace-relative path is in scope."""
        if self._inc is not None and not self._inc.match_file(path):
            return False
        return not (self._exc is not None and self._exc.match_file(path))

    def asks_for(self, label: str) -> bool:
        """True when an include glob names this kind of file (tests, docs...): no demotion then."""
        hint = _LABEL_HINTS.get(label)
        return hint is not None and any(hint.search(g) for g in self.include)


EVERYWHERE = Scope()  # the scope of a request without globs: every path
