"""Walks over the class hierarchy of the call graph's definitions: bases, descendants, member lookup.

`ClassHierarchy` is the part of `graph.resolution.Resolver` that answers "which classes does this one
derive from (resolved, memoized)", "which derive from it", "which member of that name does the class
or its nearest base define" and "which classes enclose this definition". Resolving a base's written
name is the resolver's (`lookup_class`); a base that does not resolve, or resolves to too many
classes, marks the class as having open bases (outside the workspace).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from graph.symbol_index import SymbolIndex, _strip_base

__all__ = ["ClassHierarchy"]


class ClassHierarchy:
    """Memoized hierarchy lookups; the subclass sets `ix`, `max_candidates` and the memo tables."""

    ix: SymbolIndex
    max_candidates: int
    _bases: dict[int, list[int]]
    _open_bases: set[int]
    _subclasses: dict[int, list[int]] | None
    _descendants: dict[int, list[int]]
    _open_cache: dict[int, bool]
    _enclosing: dict[int, list[int]]

    def lookup_class(self, name: str, path: str) -> tuple[list[int], bool]:
        raise NotImplementedError  # the resolver's: classes a name written in `path` denotes

    def bases(self, class_id: int) -> list[int]:
        """Resolved base classes of a class, as written in its declaration."""
        cached = self._bases.get(class_id)
        if cached is not None:
            return cached
        self._bases[class_id] = []  # guards against cyclic base declarations
        d = self.ix.defs[class_id]
        found: list[int] = []
        for written in d.bases:
            name = _strip_base(written)
            if not name:
                continue
            ids, _ = self.lookup_class(name, d.path)
            ids = [i for i in ids if i != class_id]
            if not ids or len(ids) > self.max_candidates:
                self._open_bases.add(class_id)
                continue
            found.extend(i for i in ids if i not in found)
        self._bases[class_id] = found
        return found

    def resolved_bases(self) -> tuple[dict[int, list[int]], set[int]]:
        """Copies of the bases resolved so far and of the classes found with bases outside the
        workspace (`take_bases` starts a later resolver from them). Copies: searches may resolve more on
        this resolver meanwhile, and each copy is made in one step."""
        return dict(self._bases), set(self._open_bases)

    def take_bases(self, bases: dict[int, list[int]], open_bases: set[int]) -> None:
        """Start from bases resolved before (an incremental build's `Reuse`: classes whose bases still
        resolve the same), and which of those classes have bases outside the workspace."""
        self._bases.update(bases)
        self._open_bases.update(open_bases)

    def has_open_bases(self, class_id: int) -> bool:
        """Whether some base of the class (or of its bases) is outside the workspace or unresolved."""
        cached = self._open_cache.get(class_id)
        if cached is None:
            cached = self._open_cache[class_id] = self._has_open_bases(class_id)
        return cached

    def _has_open_bases(self, class_id: int) -> bool:
        seen: set[int] = set()
        stack = [class_id]
        while stack:
            cls = stack.pop()
            if cls in seen:
                continue
            seen.add(cls)
            bases = self.bases(cls)
            if cls in self._open_bases:
                return True
            stack.extend(bases)
        return False

    def descendants(self, class_id: int) -> list[int]:
        """Classes deriving from `class_id`, directly or not, nearest first (memoized)."""
        cached = self._descendants.get(class_id)
        if cached is None:
            cached = self._descendants[class_id] = self._descendants_uncached(class_id)
        return cached

    def _descendants_uncached(self, class_id: int) -> list[int]:
        if self._subclasses is None:
            subs: dict[int, list[int]] = defaultdict(list)
            for i, d in self.ix.defs.items():
                if d.bases and self.ix.is_class(i):
                    for b in self.bases(i):
                        subs[b].append(i)
            self._subclasses = dict(subs)
        out: list[int] = []
        seen = {class_id}
        queue = [class_id]
        while queue:
            nxt: list[int] = []
            for cls in queue:
                for sub in self._subclasses.get(cls, ()):
                    if sub not in seen:
                        seen.add(sub)
                        out.append(sub)
                        nxt.append(sub)
            queue = nxt
        return out

    def mro_lookup(self, class_id: int, names: Sequence[str], include_self: bool = True) -> list[int]:
        """Members called one of `names` in the class (unless not include_self) or its bases, BFS."""
        queue = [class_id] if include_self else list(self.bases(class_id))
        seen = set(queue)
        while queue:
            level: list[int] = []
            for cls in queue:
                members = self.ix.members.get(cls)
                if members:
                    for name in names:
                        if name in members:
                            return list(members[name])
                for base in self.bases(cls):
                    if base not in seen:
                        seen.add(base)
                        level.append(base)
            queue = level
        return []

    def enclosing_classes(self, def_id: int | None) -> list[int]:
        """Classes around a definition, innermost first (the definition itself if it is a class)."""
        if def_id is None:
            return []
        cached = self._enclosing.get(def_id)
        if cached is not None:
            return cached
        out: list[int] = []
        cur: int | None = def_id
        steps = 0
        while cur is not None and steps < 64:
            if self.ix.is_class(cur):
                out.append(cur)
            cur = self.ix.parent_of.get(cur)
            steps += 1
        self._enclosing[def_id] = out
        return out
