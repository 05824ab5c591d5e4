"""The name indexes the call resolver works from: definitions by id, name, qualified name, file and
class membership, base-class texts reduced to names, and the `Resolution` record for one call site.

Built once per graph from the parsed records; `graph.resolution.Resolver` applies the lookup rules
(see docs/design.md, "Call graph") on top of it.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

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
        self.by_name_lower: dict[str, list[int]] = defaultdict(list)
        self.by_qname_lower: dict[str, list[int]] = defaultdict(list)
        self.by_path: dict[str, list[int]] = defaultdict(list)
        self.by_path_name: dict[tuple[str, str], list[int]] = defaultdict(list)
        self.by_path_qname: dict[tuple[str, str], list[int]] = defaultdict(list)
        by_dir_qname: dict[tuple[str, str], list[int]] = defaultdict(list)
        for d in definitions:
            if d.id in self.defs:
                raise DuplicateIdError(f"duplicate definition id {d.id} ({d.qualified_name} in {d.path})")
            self.defs[d.id] = d
            self.by_name[d.name].append(d.id)
            self.by_qname[d.qualified_name].append(d.id)
            self.by_name_lower[d.name.lower()].append(d.id)
            self.by_qname_lower[d.qualified_name.lower()].append(d.id)
            self.by_path[d.path].append(d.id)
            self.by_path_name[(d.path, d.name)].append(d.id)
            self.by_path_qname[(d.path, d.qualified_name)].append(d.id)
            by_dir_qname[(posixpath.dirname(d.path), d.qualified_name)].append(d.id)
        for ids in self.by_path.values():
            ids.sort(key=lambda i: (self.defs[i].start_line, -self.defs[i].end_line))
        # parent definition (same file first, then same directory: Go methods, C++ out-of-line).
        self.parent_of: dict[int, int] = {}
        self.ctor_functions: set[int] = set()
        self.members: dict[int, dict[str, list[int]]] = defaultdict(_list_table)
        for d in definitions:
            if not d.parent:
                continue
            parents = self.by_path_qname.get((d.path, d.parent)) or by_dir_qname.get(
                (posixpath.dirname(d.path), d.parent)) or []
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
