"""Module specifiers to workspace files, and per-file import tables, for call resolution.

An import names a module as written in its language: `requests.utils`, `.utils`, `..compat`
(Python), `./router`, `../lib/express` (JavaScript/TypeScript), `github.com/x/y/render` (Go),
`com.acme.Widget` (Java), `crate::util` (Rust). `ModuleIndex` maps such a specifier to the workspace
files it can denote:

- relative specifiers are joined to the importing file's directory and matched exactly
  (`./router` -> `router.js`, `router.ts`, ..., `router/index.js`; `.utils` -> `utils.py` or
  `utils/__init__.py`);
- absolute specifiers are matched as a suffix of a file path without its extension (`requests.utils`
  -> `src/requests/utils.py`), of a package file's directory (`requests` -> `requests/__init__.py`,
  `router` -> `router/index.js`) or of a directory (a Go package: every file in it). Slash-separated
  specifiers (Go, npm subpaths) may also drop leading components (`github.com/x/y/render` -> a
  directory `render/` under `y/`, or failing that any `render/`); dotted ones must match whole, so
  `os.path` never lands on a workspace `path.py`.

A specifier that matches no file is external (the standard library, a dependency).
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from indexing.records import Import

# File stems that stand for their directory (a package's or module folder's own file).
PACKAGE_STEMS = frozenset({"__init__", "index", "mod"})
# Extensions tried, in order, for an extension-less relative JS/TS specifier.
JS_EXTS = (".js", ".ts", ".tsx", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".d.ts")
# Languages (by file extension) whose whole-module imports bind the last component of the name.
LAST_COMPONENT_BINDS = (".go", ".java", ".kt", ".kts", ".scala", ".cs", ".rs", ".swift")


@dataclass(frozen=True)
class ImportTarget:
    """What a local name in a file is bound to: `module`'s `name`, or the module itself (name None)."""

    module: str
    name: str | None
    line: int


def _split_spec(spec: str) -> tuple[str, ...]:
    """The components of an absolute module specifier."""
    spec = spec.strip().strip("'\"`<>")
    if "::" in spec:
        parts = [p for p in spec.split("::") if p]
        while parts and parts[0] in ("crate", "self", "super"):
            parts = parts[1:]
        return tuple(parts)
    if "/" in spec:
        return tuple(p for p in spec.split("/") if p and p != ".")
    return tuple(p for p in spec.split(".") if p)


def _suffixes(parts: Sequence[str]) -> Iterable[tuple[str, ...]]:
    for i in range(len(parts)):
        yield tuple(parts[i:])


class ModuleIndex:
    """Maps module specifiers to the workspace files they can denote (see the module docstring)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths: set[str] = set(paths)
        self.file_keys: dict[tuple[str, ...], list[str]] = defaultdict(list)
        self.dir_keys: dict[tuple[str, ...], list[str]] = defaultdict(list)
        self.path_keys: dict[str, set[tuple[str, ...]]] = {}
        for path in sorted(self.paths):
            keys = self.keys_for_path(path)
            self.path_keys[path] = keys
            for key in keys:
                self.file_keys[key].append(path)
            directory = posixpath.dirname(path)
            dir_parts = [p for p in directory.split("/") if p]
            for key in _suffixes(dir_parts):
                self.dir_keys[key].append(path)
        self._lower_path_keys: dict[str, set[tuple[str, ...]]] | None = None
        # `files_for`'s answers: a pure function of the paths (fixed for an index's life: a patched
        # symbol index keeps this one only while its paths are the same), keyed by the specifier as
        # written and, for a relative one, the importing file's folder. Imports repeat specifiers
        # (`django.db.models` in ~1,000 files of the Django sdist); an incremental build asks again
        # for every import of the workspace.
        self._files_memo: dict[tuple[str, str], tuple[str, ...]] = {}

    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        state["_files_memo"] = {}  # (answers are found again: a saved graph stays small)
        return state

    @staticmethod
    def keys_for_path(path: str) -> set[tuple[str, ...]]:
        """The module keys of a file of the index (`keys_of` without the index): a pure function of
        its path."""
        stem_path = path
        while True:  # strip every extension: "index.d.ts" -> "index"
            stem_path, ext = posixpath.splitext(stem_path)
            if not ext or not posixpath.basename(stem_path):
                break
        parts = [p for p in stem_path.split("/") if p]
        keys = set(_suffixes(parts))
        if parts and parts[-1] in PACKAGE_STEMS:
            keys.update(_suffixes(parts[:-1]))
        return keys

    def keys_of(self, path: str, fold: bool = False) -> set[tuple[str, ...]]:
        """Every module key (tuple of components) that denotes `path`; lower-cased when `fold`."""
        if not fold:
            return self.path_keys.get(path, set())
        if self._lower_path_keys is None:
            self._lower_path_keys = {
                p: {tuple(c.lower() for c in key) for key in keys} for p, keys in self.path_keys.items()
            }
        return self._lower_path_keys.get(path, set())

    def _relative(self, spec: str, from_path: str) -> list[str]:
        base = posixpath.dirname(from_path)
        if spec.startswith("."):
            if spec.startswith(("./", "../")) or spec in (".", ".."):
                joined = posixpath.normpath(posixpath.join(base, spec))
                if joined.startswith(".."):
                    return []
                joined = "" if joined == "." else joined
                if posixpath.splitext(joined)[1] and joined in self.paths:
                    return [joined]
                prefix = f"{joined}/" if joined else ""
                candidates = [joined + ext for ext in JS_EXTS] + [
                    f"{prefix}{stem}{ext}" for stem in ("index", "__init__") for ext in (*JS_EXTS, ".py")
                ]
                return [c for c in candidates if c in self.paths][:1]
            # Python: one dot per level, the first dot is the importing file's package.
            dots = len(spec) - len(spec.lstrip("."))
            rest = spec[dots:]
            for _ in range(dots - 1):
                base = posixpath.dirname(base)
            stem = posixpath.join(base, *rest.split(".")) if rest else base
            prefix = f"{stem}/" if stem else ""
            candidates = [f"{stem}.py", f"{prefix}__init__.py", f"{stem}.pyi", f"{prefix}__init__.pyi"]
            return [c for c in candidates if c in self.paths and c][:1]
        return []

    def files_for(self, spec: str, from_path: str) -> list[str]:
        """Workspace files `spec` (as written in `from_path`) can denote; [] when it is external."""
        spec = spec.strip().strip("'\"`<>")
        key = (spec, posixpath.dirname(from_path) if spec.startswith(".") else "")
        found = self._files_memo.get(key)
        if found is None:
            found = self._files_memo[key] = tuple(self._files_for(spec, from_path))
        return list(found)

    def _files_for(self, spec: str, from_path: str) -> list[str]:
        if not spec:
            return []
        if spec.startswith("."):
            return self._relative(spec, from_path)
        parts = _split_spec(spec)
        if not parts:
            return []
        droppable = "/" in spec or "::" in spec
        while parts:
            found = self.file_keys.get(parts) or self.dir_keys.get(parts)
            if found:
                return list(found)
            if not droppable or len(parts) == 1:
                return []
            parts = parts[1:]
        return []


def import_tables(
    imports: Sequence[Import],
) -> tuple[dict[str, dict[str, list[ImportTarget]]], dict[str, list[str]]]:
    """Per-file local-name tables (`{path: {local name: [targets]}}`) and star imports (`{path: [modules]}`).

    `from m import f as g` binds `g` to (m, f); `import m` binds `m` to the module (and, in Go, Java
    and the like, also the last component: `import "net/http"` binds `http`); `import m as n`, a JS
    `require`, `import * as ns` and a default import bind their alias to the module.
    """
    tables: dict[str, dict[str, list[ImportTarget]]] = defaultdict(_list_table)
    stars: dict[str, list[str]] = defaultdict(list)
    for imp in imports:
        module = (imp.module or "").strip().strip("'\"`<>")
        if not module:
            continue
        table = tables[imp.path]
        name = imp.name.strip() if imp.name else None
        if name == "*" and not imp.alias:
            stars[imp.path].append(module)
            continue
        whole = name in (None, "*", "default")
        target = ImportTarget(module, None if whole else name, imp.line)
        if imp.alias:
            table[imp.alias.strip()].append(target)
        elif name and not whole:
            table[name].append(target)
        else:
            table[module].append(target)
            if imp.path.endswith(LAST_COMPONENT_BINDS):
                last = _split_spec(module)
                if last and last[-1] != module:
                    table[last[-1]].append(target)
    return {p: dict(t) for p, t in tables.items()}, dict(stars)


def _list_table() -> defaultdict[str, list]:  # type: ignore[type-arg]
    """A name -> list table (a named function: the saved call graph is pickled)."""
    return defaultdict(list)
