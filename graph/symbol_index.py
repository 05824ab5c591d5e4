"""The name indexes the call resolver works from: definitions by id, name, qualified name, file and
class membership, base-class texts reduced to names, and the `Resolution` record for one call site.

Built once per graph from the parsed records; `graph.resolution.Resolver` applies the lookup rules
(see docs/design.md, "Call graph") on top of it.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from graph.errors import DuplicateIdError
from graph.modules import ModuleIndex, import_tables
from indexing.records import Definition, Import

CLASS_KINDS = frozenset({
    "class", "struct", "interface", "trait", "enum", "impl", "object", "protocol", "record",
    "module", "union", "namespace", "type", "extension", "mixin",
})
FUNCTION_KINDS = frozenset({"function", "method", "constructor", "lambda", "macro", "procedure"})
NOT_CALLABLE = frozenset({"constant", "field", "property", "enum_member", "enum_constant", "attribute"})
_BASE_PREFIX = re.compile(r"^(?:(?:public|private|protected|virtual|internal|open|override)\s+)+")


@dataclass(slots=True)
class Resolution:
    """The outcome for one call site: the caller id (None at module level) and candidate callee ids.

    `status` is "resolved" (one candidate), "ambiguous" (several, each weighted 1/n), "external"
    (builtins, the standard library, dependencies), "too_many" or "unresolved". `evidence` says why
    the callees are believed: "resolved" (scope, import, class or receiver type evidence),
    "by-unique-name" (an unknown receiver, and the only method of that name in the workspace) or
    "ambiguous" (a name shared by several definitions); `weight` is the confidence.
    """

    caller: int | None
    callees: list[int]
    status: str
    rule: str = ""
    weight: float = 1.0  # confidence: 1/n for n scoped candidates, lower for name-only evidence
    evidence: str = ""


RESOLVED = "resolved"
BY_UNIQUE_NAME = "by-unique-name"
AMBIGUOUS = "ambiguous"
CONFIDENT = frozenset({RESOLVED, BY_UNIQUE_NAME})
EVIDENCE_RANK = {RESOLVED: 2, BY_UNIQUE_NAME: 1, AMBIGUOUS: 0}


def _strip_base(text: str) -> str | None:
    """'Generic[T]' -> 'Generic', 'public Base<T>' -> 'Base', 'metaclass=ABCMeta' -> None."""
    text = _BASE_PREFIX.sub("", text.strip())
    if not text or "=" in text or text.startswith("*"):
        return None
    for stop in "[<({":
        text = text.split(stop, 1)[0]
    text = text.strip().replace("::", ".")
    return text or None


class SymbolIndex:
    """Dict indexes over definitions: by id, name, qualified name, file, class members."""

    def __init__(self, definitions: Sequence[Definition], imports: Sequence[Import],
                 extra_paths: Sequence[str] = ()) -> None:
        self.defs: dict[int, Definition] = {}
        self.by_name: dict[str, list[int]] = defaultdict(list)
        self.by_qname: dict[str, list[int]] = defaultdict(list)
        self._folded: tuple[dict[str, list[int]], dict[str, list[int]]] | None = None  # (`_folded_tables`)
        self.by_path: dict[str, list[int]] = defaultdict(list)
        self.by_path_name: dict[tuple[str, str], list[int]] = defaultdict(list)
        self.by_path_qname: dict[tuple[str, str], list[int]] = defaultdict(list)
        for d in definitions:
            if d.id in self.defs:
                raise DuplicateIdError(f"duplicate definition id {d.id} ({d.qualified_name} in {d.path})")
            self.defs[d.id] = d
            self.by_name[d.name].append(d.id)
            self.by_qname[d.qualified_name].append(d.id)
            self.by_path[d.path].append(d.id)
            self.by_path_name[(d.path, d.name)].append(d.id)
            self.by_path_qname[(d.path, d.qualified_name)].append(d.id)
        for ids in self.by_path.values():
            ids.sort(key=lambda i: (self.defs[i].start_line, -self.defs[i].end_line))
        # parent definition (same file first, then same directory: Go methods, C++ out-of-line; the
        # folder table is made only when a parent is not in its child's file).
        self.parent_of: dict[int, int] = {}
        self.ctor_functions: set[int] = set()
        self.members: dict[int, dict[str, list[int]]] = defaultdict(_list_table)
        by_dir_qname: dict[tuple[str, str], list[int]] | None = None
        for d in definitions:
            if not d.parent:
                continue
            parents = self.by_path_qname.get((d.path, d.parent))
            if not parents:
                if by_dir_qname is None:
                    by_dir_qname = defaultdict(list)
                    for e in definitions:
                        by_dir_qname[(posixpath.dirname(e.path), e.qualified_name)].append(e.id)
                parents = by_dir_qname.get((posixpath.dirname(d.path), d.parent)) or []
            parent = self._innermost_containing(parents, d) if len(parents) > 1 else (
                parents[0] if parents else None)
            if parent is not None and parent != d.id:
                self.parent_of[d.id] = parent
                pkind = self.defs[parent].kind
                if pkind in CLASS_KINDS or (pkind == "function" and d.kind == "method"):
                    # `Foo.prototype.m = function` makes the function Foo a class
                    self.members[parent][d.name].append(d.id)
                    if pkind == "function":
                        self.ctor_functions.add(parent)
        self.modules = ModuleIndex(set(self.by_path) | {i.path for i in imports} | set(extra_paths))
        self.local, self.stars = import_tables(imports)
        self._derive_sets()

    def patched(self, paths: Collection[str], new_defs: Sequence[Definition], imports: Sequence[Import],
                extra_paths: Sequence[str]) -> SymbolIndex:
        """This index with the definitions of `paths` replaced by `new_defs` (ids all new, above every
        other: a store writes a file's records anew) and `imports` (every import now): the tables a
        whole build makes from the same records, in O(changed) but for a copy of each table (the graph
        built on this index keeps reading it). The incremental build's (`graph.incremental`)."""
        changed = set(paths)
        gone = {i for p in changed for i in self.by_path.get(p, ())}
        old_defs = [self.defs[i] for i in gone]
        out = SymbolIndex.__new__(SymbolIndex)
        out.defs = {i: d for i, d in self.defs.items() if i not in gone}
        for d in new_defs:
            if d.id in out.defs:
                raise DuplicateIdError(f"duplicate definition id {d.id} ({d.qualified_name} in {d.path})")
            out.defs[d.id] = d
        keys: list[tuple[str, Callable[[Definition], Any]]] = [
            ("by_name", lambda d: d.name), ("by_qname", lambda d: d.qualified_name),
            ("by_path", lambda d: d.path), ("by_path_name", lambda d: (d.path, d.name)),
            ("by_path_qname", lambda d: (d.path, d.qualified_name))]
        patched: dict[str, dict[Any, list[int]]] = {}
        sources = {attr: getattr(self, attr) for attr, _ in keys}
        if self._folded is not None:  # (made here: patched too, so a lookup after the edit waits for none)
            keys += [("by_name_lower", lambda d: d.name.lower()),
                     ("by_qname_lower", lambda d: d.qualified_name.lower())]
            sources.update(by_name_lower=self._folded[0], by_qname_lower=self._folded[1])
        for attr, key in keys:
            table: dict[Any, list[int]] = defaultdict(list, sources[attr])
            for k in {key(d) for d in old_defs}:
                kept = [i for i in table[k] if i not in gone]
                if kept:
                    table[k] = kept
                else:
                    del table[k]
            for d in new_defs:
                table[key(d)] = [*table.get(key(d), ()), d.id]
            patched[attr] = table
        out._folded = None if self._folded is None else (
            patched.pop("by_name_lower"), patched.pop("by_qname_lower"))
        for attr, table in patched.items():
            setattr(out, attr, table)
        for p in changed & set(out.by_path):
            out.by_path[p].sort(key=lambda i: (out.defs[i].start_line, -out.defs[i].end_line))
        out._patch_parents(self, gone, changed)
        out.modules = self.modules
        paths_now = set(out.by_path) | {i.path for i in imports} | set(extra_paths)
        if paths_now != self.modules.paths:
            out.modules = ModuleIndex(paths_now)
        local, stars = import_tables([i for i in imports if i.path in changed])
        out.local = defaultdict(_list_table, {p: t for p, t in self.local.items() if p not in changed})
        out.local.update(local)
        out.stars = defaultdict(list, {p: t for p, t in self.stars.items() if p not in changed})
        out.stars.update(stars)
        out._derive_sets()
        return out

    def _patch_parents(self, before: SymbolIndex, gone: set[int], changed: set[str]) -> None:
        """parent_of, members and ctor_functions after a patch: the links of every definition of the
        changed files' folders made again (a parent is looked up in the same file, then the same folder)."""
        folders = {posixpath.dirname(p) for p in changed}
        again = sorted(i for p, ids in self.by_path.items() if posixpath.dirname(p) in folders for i in ids
                       if self.defs[i].parent)
        redo = set(again) | gone
        self.parent_of = {k: v for k, v in before.parent_of.items() if k not in redo}
        self.members = defaultdict(_list_table, {p: t for p, t in before.members.items() if p not in gone})
        for i in redo:  # (what links these had)
            parent = before.parent_of.get(i)
            if parent is None or parent in gone or i not in before.defs:
                continue
            name = before.defs[i].name
            table = self.members.get(parent)
            if table is not None and i in table.get(name, ()):
                table = self.members[parent] = defaultdict(list, table)
                table[name] = [j for j in table[name] if j != i]
                if not table[name]:
                    del table[name]
                if not table:
                    del self.members[parent]
        by_dir_qname: dict[tuple[str, str], list[int]] = defaultdict(list)
        for p, ids in self.by_path.items():
            if posixpath.dirname(p) in folders:
                for i in ids:
                    by_dir_qname[(posixpath.dirname(p), self.defs[i].qualified_name)].append(i)
        for ids in by_dir_qname.values():
            ids.sort()
        copied: set[int] = set()
        for i in again:
            d = self.defs[i]
            parents = self.by_path_qname.get((d.path, d.parent or "")) or by_dir_qname.get(
                (posixpath.dirname(d.path), d.parent or "")) or []
            parent = self._innermost_containing(parents, d) if len(parents) > 1 else (
                parents[0] if parents else None)
            if parent is None or parent == d.id:
                continue
            self.parent_of[d.id] = parent
            pkind = self.defs[parent].kind
            if pkind in CLASS_KINDS or (pkind == "function" and d.kind == "method"):
                if parent not in copied:
                    self.members[parent] = defaultdict(list, {
                        k: list(v) for k, v in self.members.get(parent, {}).items()})
                    copied.add(parent)
                members = self.members[parent][d.name]
                members.append(d.id)
                members.sort()
        self.ctor_functions = {p for p in self.members if self.defs[p].kind == "function"}

    @property
    def by_name_lower(self) -> dict[str, list[int]]:
        """Definitions by lowercased name (`graph.lookup`'s case-folded lookups; made on first use)."""
        return self._folded_tables()[0]

    @property
    def by_qname_lower(self) -> dict[str, list[int]]:
        """Definitions by lowercased qualified name (made on first use)."""
        return self._folded_tables()[1]

    def fold_names(self) -> None:
        """Make the case-folded name tables now (a server's build, off its request path: made on a
        lookup, the sdist's took 70 ms; an index patched from this one patches them)."""
        self._folded_tables()

    def _folded_tables(self) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
        """The case-folded name tables, in `defs` order: only a lookup by a name typed in another
        case reads them, never the build (~12 MiB of a Django sdist build that nothing read); a
        one-shot command makes them if it looks one up, a server as it builds (`fold_names`)."""
        folded = self._folded
        if folded is None:
            by_name: dict[str, list[int]] = defaultdict(list)
            by_qname: dict[str, list[int]] = defaultdict(list)
            for d in self.defs.values():
                by_name[d.name.lower()].append(d.id)
                by_qname[d.qualified_name.lower()].append(d.id)
            folded = self._folded = (by_name, by_qname)
        return folded

    def _derive_sets(self) -> None:
        classes = frozenset(i for i, d in self.defs.items() if d.kind in CLASS_KINDS)
        self.class_ids = classes | self.ctor_functions
        self.member_ids = frozenset(i for i in self.defs if self._is_member(i))
        self.not_callable = frozenset(i for i, d in self.defs.items() if d.kind in NOT_CALLABLE)

    def _innermost_containing(self, ids: Sequence[int], d: Definition) -> int:
        inside = [i for i in ids if self.defs[i].path == d.path
                  and self.defs[i].start_line <= d.start_line <= self.defs[i].end_line and i != d.id]
        pool = inside or list(ids)
        return min(pool, key=lambda i: self.defs[i].end_line - self.defs[i].start_line)

    def is_class(self, def_id: int) -> bool:
        """A class-like definition, or an ES5 constructor function (`Foo.prototype.m = ...`)."""
        return def_id in self.class_ids

    def _is_member(self, def_id: int) -> bool:
        parent = self.parent_of.get(def_id)
        if parent is not None:
            return self.is_class(parent)
        return self.defs[def_id].kind == "method" or bool(self.defs[def_id].parent)

    def is_member(self, def_id: int) -> bool:
        """A method or other class member (not a nested function, not a top-level function)."""
        return def_id in self.member_ids

    def callable(self, def_id: int) -> bool:
        return def_id not in self.not_callable

    def top_level_named(self, paths: Sequence[str], name: str) -> list[int]:
        """Definitions called `name` in `paths`, not nested in another definition (any, failing that)."""
        found = [i for p in paths for i in self.by_path_name.get((p, name), ())]
        top = [i for i in found if i not in self.parent_of]
        return top or found

    def module_export(self, files: Sequence[str]) -> list[int]:
        """What a whole-module `require('./x')` is when called: `module.exports = function`, and the
        variable it is also assigned to (`var proto = module.exports = function`), whose members
        (`proto.handle = function`) are the instance's methods."""
        ix = self
        out: list[int] = []
        for f in files:
            for i in ix.by_path_qname.get((f, "module.exports"), ()):
                line = ix.defs[i].name_line
                out.extend(j for j in ix.by_path.get(f, ()) if ix.defs[j].name_line == line
                           and j != i and j not in ix.parent_of)
                out.append(i)
        return out

    def same_package(self, ids: Sequence[int], path: str) -> bool:
        """Go and C-family code calls its own package's functions bare, without an import."""
        if not ids or not path.endswith((".go", ".c", ".h", ".cpp", ".cc", ".hpp", ".rs")):
            return False
        folder = posixpath.dirname(path)
        return all(posixpath.dirname(self.defs[i].path) == folder for i in ids)


def _list_table() -> defaultdict[str, list]:  # type: ignore[type-arg]
    """A name -> list table (a named function: the saved call graph is pickled)."""
    return defaultdict(list)
