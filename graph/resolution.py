"""Name indexes over definitions and the rules that resolve a call site to its candidate callees.

Precedence for one call site `receiver.callee(...)` in file P inside definition D (first rule that
yields candidates wins; see docs/design.md, "Call graph"):

1. `self`/`this`/`cls` receivers (and, in Java, C#, Kotlin, Scala, C++, Ruby and Swift, bare calls
   inside a class body): methods of the enclosing class, then of its bases, recursively, breadth
   first, the first class that defines the name wins. `super()`/`super` skip the class itself.
2. Bare calls: a definition of that name in the same file (not a method), then an imported name
   (`from m import f as g`, a named or default JS import, a `require`, a Java import), then a
   star import, then a unique global name; an ambiguous name links to every candidate.
3. Module-qualified calls: the receiver is an imported module or namespace (`utils.f`, `np.f`,
   `pkg.Func` in Go, a `require`d module): definitions of that name in the module's files.
   A class receiver (`Session.request`, `Foo::new`) resolves to that class's methods and bases.
4. Any other receiver (`resp.json()`): methods of that name anywhere, each weighted 1/n.

A name imported from a module outside the workspace, a Python builtin or a receiver rooted in one
is external and stays unresolved. More than `max_candidates` candidates is noise: unresolved too.
Calling a class links to the class and its constructor (`__init__`, `constructor`, ...).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from graph.externals import (
    BUILTIN_METHOD_FACTOR,
    JS_BUILTIN_METHODS,
    JS_GLOBAL_FUNCTIONS,
    JS_GLOBALS,
    PY_BUILTIN_METHODS,
    PY_BUILTINS,
)
from graph.hierarchy import ClassHierarchy
from graph.modules import ImportTarget
from graph.symbol_index import AMBIGUOUS, BY_UNIQUE_NAME, RESOLVED, Resolution, SymbolIndex
from graph.typed import resolve_typed
from indexing.receivers import LOCAL
from indexing.records import CallSite

__all__ = ["Resolution", "Resolver", "SymbolIndex"]

CONSTRUCTOR_NAMES = ("__init__", "constructor", "initialize", "new", "init")
SELF_RECEIVERS = frozenset({"self", "this", "cls", "$this", "@", "Self", "static", "me"})
SUPER_RECEIVERS = frozenset({"super", "super()", "parent", "base"})
# Languages where a bare call inside a class body calls a method of that class.
CLASS_BODY_EXTS = (".java", ".cs", ".kt", ".kts", ".scala", ".cpp", ".cc", ".cxx", ".hpp", ".hh",
                   ".hxx", ".h", ".rb", ".swift", ".m", ".mm")
PY_EXTS = (".py", ".pyi")
JS_EXTS = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")
_ROOT_SPLIT = re.compile(r"\.|\(|\[|->|::|\?\.")
_IDENT_PATH = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*$")
_LITERAL = re.compile(r"""^(?:[rbfuRBFU]{0,2}["']|`|-?\d|\[|\{)""")
_GO_RECEIVER = re.compile(r"^func\s*\(\s*([A-Za-z_]\w*)\s")


class Resolver(ClassHierarchy):
    """Applies the precedence rules of the module docstring to call sites, bases and names."""

    def __init__(self, index: SymbolIndex, max_candidates: int = 8) -> None:
        self.ix = index
        self.max_candidates = max_candidates
        self._reset_caches()

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the index and settings only: the memo tables below refill on use, and leaving them
        out makes a persisted call graph ~35% faster to load (Django: 0.35 s -> 0.23 s)."""
        return {"ix": self.ix, "max_candidates": self.max_candidates}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.ix = state["ix"]
        self.max_candidates = state["max_candidates"]
        self._reset_caches()

    def _reset_caches(self) -> None:
        self._bases: dict[int, list[int]] = {}
        self._open_bases: set[int] = set()
        self._subclasses: dict[int, list[int]] | None = None
        self._descendants: dict[int, list[int]] = {}
        self._open_cache: dict[int, bool] = {}
        self.typed_cache: dict[tuple[tuple[int, ...], str], tuple[list[int], bool]] = {}
        self._enclosing: dict[int, list[int]] = {}
        self._method_cache: dict[str, list[int]] = {}
        self._global_cache: dict[tuple[str, Callable[[int], bool]], list[int]] = {}
        self._target_cache: dict[tuple[ImportTarget, str, int], tuple[list[int], list[str], bool]] = {}
        self.call_results: dict[tuple[str, str | None, str], tuple[list[int], bool]] = {}
        self.last_global = False  # whether the last lookup_bare answer came from the global pool

    # --- classes (the hierarchy walks: graph.hierarchy) -------------------------------------------
    def lookup_class(self, name: str, path: str) -> tuple[list[int], bool]:
        """Classes a (possibly dotted) name written in `path` denotes; the flag says 'external'."""
        if "." in name:
            head, _, last = name.rpartition(".")
            module_paths, external = self._module_paths_for_local(head, path)
            if module_paths:
                ids = [i for i in self.names_in_module(module_paths, last) if self.ix.is_class(i)]
                if ids:
                    return ids, False
            if external:
                return [], True
            name = last
        return self.lookup_bare(name, path, self.ix.is_class)

    # --- names ---------------------------------------------------------------------------------
    def _targets(self, target: ImportTarget, path: str, depth: int = 0) -> tuple[list[int], list[str], bool]:
        """(definition ids, module files, external) for what an import target denotes."""
        key = (target, path, depth)
        cached = self._target_cache.get(key)
        if cached is None:
            cached = self._target_cache[key] = self._targets_uncached(target, path, depth)
        return cached

    def _targets_uncached(self, target: ImportTarget, path: str,
                          depth: int) -> tuple[list[int], list[str], bool]:
        files = self.ix.modules.files_for(target.module, path)
        if not files:
            return [], [], True
        if target.name is None:
            return [], files, False
        ids = self.names_in_module(files, target.name, depth)
        if ids:
            return ids, [], False
        sep = "" if target.module.endswith((".", "/")) else ("/" if "/" in target.module else ".")
        sub = self.ix.modules.files_for(target.module + sep + target.name, path)
        if sub:
            return [], sub, False
        return [], [], False

    def names_in_module(self, files: Sequence[str], name: str, depth: int = 0) -> list[int]:
        """Definitions of `name` in a module's files, following re-exports (`from .m import name`)."""
        ids = self.ix.top_level_named(files, name)
        if ids or depth >= 4:
            return ids
        for f in files:
            for t in self.ix.local.get(f, {}).get(name, ()):
                found, _, _ = self._targets(t, f, depth + 1)
                if found:
                    return found
        for f in files:  # `export * from './common'`, `from .base import *` in a package
            for module in self.ix.stars.get(f, ()):
                found = self.names_in_module(self.ix.modules.files_for(module, f), name, depth + 1)
                if found:
                    return found
        return []

    def _module_paths_for_local(self, local: str, path: str) -> tuple[list[str], bool]:
        """Files of the module a local name or dotted receiver denotes; the flag says 'external'."""
        targets = self.ix.local.get(path, {}).get(local)
        if not targets:
            return [], False
        files: list[str] = []
        external = True
        for t in targets:
            _, mods, ext = self._targets(t, path)
            files.extend(mods)
            external = external and ext
        return files, external and not files

    def lookup_bare(self, name: str, path: str, want: Callable[[int], bool]) -> tuple[list[int], bool]:
        """Definitions a bare name in `path` denotes (same file, imports, star imports, global).

        Returns (ids, external): external is True when the name is imported from outside the
        workspace or is a builtin, so no global fallback applies.
        """
        ix = self.ix
        self.last_global = False
        same = [i for i in ix.by_path_name.get((path, name), ()) if want(i) and not ix.is_member(i)]
        if same:
            return same, False
        targets = ix.local.get(path, {}).get(name)
        if targets:
            external = True
            for t in targets:
                ids, mods, ext = self._targets(t, path)
                ids = ([i for i in ids if want(i)] or [i for i in self.names_in_module(mods, name) if want(i)]
                       or [i for i in self.ix.module_export(mods) if want(i)])
                if ids:
                    return ids, False
                external = external and ext
            if external:
                return [], True
        for module in ix.stars.get(path, ()):
            files = ix.modules.files_for(module, path)
            ids = [i for i in self.names_in_module(files, name) if want(i)]
            if ids:
                return ids, False
        if (path.endswith(PY_EXTS) and name in PY_BUILTINS) or (
                path.endswith(JS_EXTS) and name in JS_GLOBAL_FUNCTIONS):
            return [], True
        self.last_global = True
        key = (name, want)
        found = self._global_cache.get(key)
        if found is None:
            found = self._global_cache[key] = [
                i for i in ix.by_name.get(name, ()) if want(i) and i not in ix.member_ids]
        return list(found), False

    # --- call sites ----------------------------------------------------------------------------
    def caller_of(self, site: CallSite) -> int | None:
        if not site.caller:
            return None
        ids = self.ix.by_path_qname.get((site.path, site.caller))
        if not ids:
            return None
        if len(ids) == 1:
            return ids[0]
        inside = [i for i in ids if self.ix.defs[i].start_line <= site.line <= self.ix.defs[i].end_line]
        pool = inside or ids
        return min(pool, key=lambda i: self.ix.defs[i].end_line - self.ix.defs[i].start_line)

    def _with_constructors(self, ids: list[int]) -> list[int]:
        out = list(ids)
        for i in ids:
            if self.ix.is_class(i):
                d = self.ix.defs[i]
                for ctor in self.mro_lookup(i, (*CONSTRUCTOR_NAMES, d.name)):
                    if ctor not in out and ctor != i:
                        out.append(ctor)
        return out

    def finish(self, caller: int | None, ids: list[int], rule: str, evidence: str = RESOLVED,
                factor: float = 1.0) -> Resolution:
        """A resolution for `ids`; `evidence` "by-name" grades a name-only match by its count."""
        if not ids:
            return Resolution(caller, [], "unresolved", rule)
        if len(ids) > self.max_candidates:
            return Resolution(caller, [], "too_many", rule)
        n = len(ids)
        weight = factor / n
        if evidence == "by-name":
            evidence = BY_UNIQUE_NAME if n == 1 and factor == 1.0 else AMBIGUOUS
            weight *= UNIQUE_NAME_CONFIDENCE if n == 1 else 1.0
        elif evidence == RESOLVED and n > 1 and len({self.ix.parent_of.get(i) for i in ids}) > 1:
            evidence = AMBIGUOUS  # overloads of one class are one target; several owners are not
        return Resolution(caller, self._with_constructors(ids), "resolved" if n == 1 else "ambiguous",
                          rule, weight, evidence)

    def _by_name(self, caller: int | None, name: str, path: str, rule: str = "method") -> Resolution:
        """Rule 4: an unknown receiver, every method of that name (a builtin's name weighs less)."""
        builtin = (path.endswith(PY_EXTS) and name in PY_BUILTIN_METHODS) or (
            path.endswith(JS_EXTS) and name in JS_BUILTIN_METHODS)
        return self.finish(caller, self._method_candidates(name), rule, "by-name",
                            BUILTIN_METHOD_FACTOR if builtin else 1.0)

    def _method_candidates(self, name: str) -> list[int]:
        found = self._method_cache.get(name)
        if found is None:
            ix = self.ix
            found = self._method_cache[name] = [
                i for i in ix.by_name.get(name, ()) if i in ix.member_ids and i not in ix.not_callable]
        return list(found)

    def resolve_call(self, site: CallSite) -> Resolution:
        return self.resolve_call_of(site, self.caller_of(site))

    def resolve_call_of(self, site: CallSite, caller: int | None) -> Resolution:
        """`resolve_call` of a site whose caller (`caller_of(site)`) is known."""
        name = site.callee.strip()
        receiver = (site.receiver or "").strip()
        if not name:
            return Resolution(caller, [], "unresolved", "empty")
        classes = self.enclosing_classes(caller)
        if not receiver:
            return self._resolve_bare(site, caller, name, classes)
        is_super = receiver in SUPER_RECEIVERS or receiver.startswith("super(")
        if receiver in SELF_RECEIVERS or is_super or site.receiver_type == "S" or (
                site.path.endswith(".go") and receiver == self._go_receiver(caller)):
            return self._resolve_self(site, caller, name, classes, is_super)
        if _LITERAL.match(receiver):  # ", ".join(...), [1, 2].index(...), `x`.trim()
            return Resolution(caller, [], "external", "literal")
        if site.receiver_type:
            typed = resolve_typed(self, site, caller, name, site.receiver_type)
            if typed is not None:
                return typed
        root = _ROOT_SPLIT.split(receiver, 1)[0]
        if _IDENT_PATH.match(receiver) and root not in SELF_RECEIVERS:
            found = self._resolve_dotted(site, caller, name, receiver, root)
            if found is not None:
                return found
        elif self._external_root(root, site.path):
            return Resolution(caller, [], "external", "method")
        return self._by_name(caller, name, site.path)

    def _resolve_bare(self, site: CallSite, caller: int | None, name: str, classes: list[int]) -> Resolution:
        """A call without a receiver: `f()`, a method of the enclosing class, a local callable."""
        ix = self.ix
        if site.receiver_type == LOCAL:  # a parameter or local variable holding a callable
            return Resolution(caller, [], "unresolved", "local")
        if classes and site.path.endswith(CLASS_BODY_EXTS):
            for cls in classes:
                ids = [i for i in self.mro_lookup(cls, (name,)) if ix.callable(i)]
                if ids:
                    return self.finish(caller, ids, "class")
        ids, external = self.lookup_bare(name, site.path, ix.callable)
        if external:
            return Resolution(caller, [], "external", "bare")
        if self.last_global and not ix.same_package(ids, site.path):
            return self.finish(caller, ids, "global", "by-name")
        return self.finish(caller, ids, "bare")

    def _resolve_self(self, site: CallSite, caller: int | None, name: str, classes: list[int],
                      is_super: bool) -> Resolution:
        """`self.f()`, `this.f()`, `super().f()`, a Go method's receiver."""
        ix = self.ix
        if not classes:  # `this` in a function assigned to an object: `app.x = function`
            parent = ix.defs[caller].parent if caller is not None else None
            ids = list(ix.by_path_qname.get((site.path, f"{parent}.{name}"), ())) if parent else []
            if not ids:  # `this.route()` in a callback: the one object method of the file
                ids = [i for i in ix.by_path_name.get((site.path, name), ()) if i in ix.member_ids]
                if len(ids) != 1:
                    return self._by_name(caller, name, site.path)
            return self.finish(caller, ids, "method")
        cls = classes[0]
        ids = [i for i in self.mro_lookup(cls, (name,), not is_super) if ix.callable(i)]
        if ids:
            return self.finish(caller, ids, "self")
        if not is_super:  # a mixin or abstract base calling what its subclasses define
            ids = [i for sub in self.descendants(cls)
                   for i in ix.members.get(sub, {}).get(name, ()) if ix.callable(i)]
            if ids:
                return self.finish(caller, ids, "subclass")
        if is_super or self.has_open_bases(cls):
            return Resolution(caller, [], "external", "self")
        return self._by_name(caller, name, site.path)

    def _resolve_dotted(self, site: CallSite, caller: int | None, name: str, receiver: str,
                        root: str) -> Resolution | None:
        """`mod.f()`, `pkg.sub.f()`, `Class.f()`, Go's `pkg.Func()`; None: fall back to the name."""
        ix = self.ix
        dotted = receiver.replace("::", ".")
        files, external = self._module_paths_for_local(dotted, site.path)
        if files:
            ids = [i for i in self.names_in_module(files, name) if ix.callable(i)]
            if ids:
                return self.finish(caller, ids, "module")
            members = [i for f in files for i in ix.by_path_name.get((f, name), ()) if ix.callable(i)]
            return self.finish(caller, members, "module")
        if external or self._external_root(root, site.path):
            return Resolution(caller, [], "external", "module")
        qualified = f"{dotted}.{name}"  # `res.send` where the code defines `res.send = ...`
        ids = list(ix.by_path_qname.get((site.path, qualified), ()) or ix.by_qname.get(qualified, ()))
        if ids and len(ids) <= self.max_candidates:
            return self.finish(caller, ids, "qualified")
        cls_ids, cls_external = self.lookup_class(dotted, site.path)
        if cls_external:
            return Resolution(caller, [], "external", "class")
        if cls_ids and len(cls_ids) <= self.max_candidates:
            ids = [i for c in cls_ids for i in self.mro_lookup(c, (name,)) if ix.callable(i)]
            if ids:
                return self.finish(caller, ids, "class")
        if site.path.endswith(".go") and "." not in dotted:  # Go: pkg.Func, pkg = directory name
            files = [p for p in ix.modules.dir_keys.get((dotted,), ()) if p.endswith(".go")]
            ids = [i for i in ix.top_level_named(files, name) if ix.callable(i)]
            if ids:
                return self.finish(caller, ids, "module")
        return None

    def _go_receiver(self, def_id: int | None) -> str | None:
        """The receiver variable of the Go method around `def_id` (`s` in `func (s *Server) ...`)."""
        steps = 0
        while def_id is not None and steps < 16:
            m = _GO_RECEIVER.match(self.ix.defs[def_id].signature)
            if m:
                return m.group(1)
            def_id = self.ix.parent_of.get(def_id)
            steps += 1
        return None

    def _external_root(self, root: str, path: str) -> bool:
        """A receiver rooted in a builtin, a JS global or a name imported from outside the workspace."""
        if path.endswith(PY_EXTS) and root in PY_BUILTINS and not self.ix.by_path_name.get((path, root)):
            return True
        if path.endswith(JS_EXTS) and root in JS_GLOBALS:
            return True
        targets = self.ix.local.get(path, {}).get(root)
        if targets:
            return all(self._targets(t, path)[2] for t in targets)
        return False


UNIQUE_NAME_CONFIDENCE = 0.8
