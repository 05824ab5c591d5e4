"""Receiver types from local evidence: `x.m()` where the parser saw `x = Foo()`, `x: Foo`, `new Foo()`.

`CallSite.receiver_type` (see `indexing.receivers`) says what the receiver is; here it becomes a
set of workspace classes, or "external" (a builtin value, a type from outside the workspace), or
nothing known. `typed_classes` does the lookup, `resolve_typed` answers a call with it;
`return_evidence` reads a function's declared return type from its signature line (Python/Rust
`-> T`, TypeScript `): T`, Go `) *T`, Java `public T name(`), so `s = make_session(); s.get()`
follows `def make_session() -> Session`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from graph.symbol_index import Resolution
from indexing.receivers import DICT_USED, type_evidence
from indexing.records import CallSite

if TYPE_CHECKING:
    from graph.resolution import Resolver

PY_DICT_METHODS = frozenset(n for n in dir(dict) if not n.startswith("_"))
_ARROW = re.compile(r"->\s*(.+?)\s*(?:where\b.*)?[:{]?\s*$")
_TS_RETURN = re.compile(r"\)\s*:\s*([^{=]+?)\s*\{?\s*$")
_GO_RETURN = re.compile(r"^func\s*(?:\([^)]*\)\s*)?[A-Za-z_]\w*\s*(?:\[[^\]]*\])?\([^)]*\)\s*\(?\s*([^,{)]+)")
_JAVA_RETURN = r"([A-Za-z_][\w.]*(?:<[^()]*>)?(?:\[\])*)\s+{name}\s*\("


def return_evidence(signature: str, name: str, path: str) -> str | None:
    """Evidence (`T:...`, `B:...`, `S`) for what a function returns, from its signature line."""
    sig = signature.strip()
    if path.endswith((".py", ".pyi", ".rs")):
        m = _ARROW.search(sig)
    elif path.endswith((".ts", ".tsx", ".mts", ".cts")):
        m = _TS_RETURN.search(sig)
    elif path.endswith(".go"):
        m = _GO_RETURN.match(sig)
    elif path.endswith((".java", ".cs", ".kt", ".scala")):
        m = re.search(_JAVA_RETURN.format(name=re.escape(name)), sig)
    else:
        return None
    if m is None:
        return None
    text = m.group(1).strip()
    if text in ("void", "None", "()", "this", "self"):
        return "S" if text in ("this", "self") else None
    return type_evidence(text)


def typed_classes(resolver: Resolver, site: CallSite, caller: int | None,
                  evidence: str, depth: int = 0) -> tuple[list[int], bool]:
    """(classes, external) the receiver evidence of `site` denotes; ([], False) when unknown."""
    if evidence.startswith("B:"):
        return [], True
    if evidence == "S":
        classes = resolver.enclosing_classes(caller)
        return classes[:1], False
    if evidence.startswith("T:"):
        ids, external = resolver.lookup_class(evidence[2:], site.path)
        return ids, external and not ids
    if not evidence.startswith("C:") or depth > 2:
        return [], False
    key = (site.path, site.caller, evidence)
    cached = resolver.call_results.get(key)
    if cached is not None:
        return cached
    resolver.call_results[key] = ([], False)  # guards against `x = x.clone()` style cycles
    text = evidence[2:].replace("::", ".")
    receiver, _, name = text.rpartition(".")
    probe = CallSite(site.path, site.line, site.column, site.end_column, name, receiver or None,
                     site.caller, None)
    res = resolver.resolve_call(probe)
    if res.status == "external":
        found: tuple[list[int], bool] = ([], True)
    else:
        ix = resolver.ix
        classes = [i for i in res.callees if ix.is_class(i)]
        if not classes:
            for i in res.callees:
                d = ix.defs[i]
                ev = return_evidence(d.signature, d.name, d.path)
                if ev == "S":
                    classes.extend(resolver.enclosing_classes(ix.parent_of.get(i))[:1])
                elif ev is not None:
                    sub = CallSite(d.path, d.name_line, d.name_column, d.name_column, d.name, None,
                                   d.qualified_name, None)
                    more, external = typed_classes(resolver, sub, i, ev, depth + 1)
                    if external and not classes:
                        resolver.call_results[key] = ([], True)
                        return [], True
                    classes.extend(more)
        found = (list(dict.fromkeys(classes)), False)
    resolver.call_results[key] = found
    return found


def resolve_typed(resolver: Resolver, site: CallSite, caller: int | None, name: str,
                  evidence: str) -> Resolution | None:
    """The call `x.name()` by the receiver's evidence: the method of its class (bases first, then
    subclasses), "external" (a builtin value, a type from outside), or None when nothing is known."""
    if evidence == DICT_USED:  # `d["key"]` elsewhere: its dict methods are the builtin's
        return Resolution(caller, [], "external", "typed") if name in PY_DICT_METHODS else None
    classes, external = typed_classes(resolver, site, caller, evidence)
    if external:
        return Resolution(caller, [], "external", "typed")
    if not classes or len(classes) > resolver.max_candidates:
        return None
    key = (tuple(classes), name)
    found = resolver.typed_cache.get(key)
    if found is None:
        found = resolver.typed_cache[key] = _typed_members(resolver, classes, name)
    ids, external = found
    if ids:
        return resolver.finish(caller, ids, "typed")
    return Resolution(caller, [], "external", "typed") if external else None


def _typed_members(resolver: Resolver, classes: Sequence[int], name: str) -> tuple[list[int], bool]:
    """Methods `name` of the classes or their bases, else of their subclasses; (ids, external)."""
    ix = resolver.ix
    ids = list(dict.fromkeys(i for c in classes for i in resolver.mro_lookup(c, (name,)) if ix.callable(i)))
    if not ids:
        ids = [i for c in classes for sub in resolver.descendants(c)
               for i in ix.members.get(sub, {}).get(name, ()) if ix.callable(i)]
    return ids, not ids and any(resolver.has_open_bases(c) for c in classes)
