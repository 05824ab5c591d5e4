"""A build's resolution of its call sites (`resolve_sites`), where sites that ask what another asked
resolve once (`CallMemo`).

Most call sites of a tree repeat another's question: `self.assertEqual(...)` in every method of a test
class, `models.CharField(...)` down a models file. What `Resolver.resolve_call` finds for a site
depends on its file, callee and receiver and, of its caller, only on the classes around it, except
where a rule reads the caller itself: receiver evidence (`graph.typed`, a local callable), a Go
method's receiver, and `self`/`this`/`super` outside any class. `CallMemo.resolve(site)` answers a site
whose (file, callee, receiver, enclosing classes) it has met before from what it kept of that
resolution (callees, status, rule, weight, evidence; the caller is the site's own) and resolves every
other site, and those the rules read the caller for, in full, in the order the build meets them. The
Django sdist's 176k call sites ask 67k questions. Only the questions of the file at hand are kept (a
build meets the sites file by file): the graph's build runs beside the embedding worker, at a cold
command's highest memory, where every question of the sdist kept to the end cost ~20 MiB.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from graph.resolution import SELF_RECEIVERS, SUPER_RECEIVERS
from graph.symbol_index import Resolution

if TYPE_CHECKING:
    from graph.resolution import Resolver
    from indexing.records import CallSite

__all__ = ["CallMemo", "resolve_sites"]


def resolve_sites(resolver: Resolver, calls: Sequence[CallSite], known: Sequence[Resolution | None] | None,
                  touched: set[int] | None, into: list[Resolution]) -> list[Resolution]:
    """A build's resolution of each of `calls`, in order, appended to `into` (returned): `known[i]`
    where it is not None (an incremental build's), else resolved through one `CallMemo`, whose callees
    are added to `touched` when given. Sites that resolve to nothing (builtins, unknown receivers)
    share one object per outcome and caller: each held its own only until the build ended (sympy's
    355k sites: its peak 7-9 MiB lower)."""
    nothing: dict[tuple[object, ...], Resolution] = {}
    resolve = CallMemo(resolver).resolve
    for i, site in enumerate(calls):
        res = known[i] if known is not None else None
        if res is None:
            res = resolve(site)
            if not res.callees:
                res = nothing.setdefault((res.caller, res.status, res.rule, res.weight, res.evidence), res)
            elif touched is not None:
                touched.update(res.callees)
        into.append(res)
    return into


class CallMemo:
    """`resolve(site)`: `resolver.resolve_call(site)`, each question resolved once (module docstring)."""

    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        self._kept: dict[tuple[object, ...], Resolution] = {}  # (of the file `_path`)
        self._path = ""

    def resolve(self, site: CallSite) -> Resolution:
        resolver = self.resolver
        caller = resolver.caller_of(site)
        if site.path != self._path:
            self._kept.clear()
            self._path = site.path
        key = self._question(site, caller)
        if key is None:
            return resolver.resolve_call_of(site, caller)
        kept = self._kept.get(key)
        if kept is None:
            kept = self._kept[key] = resolver.resolve_call_of(site, caller)
            return kept
        return Resolution(caller, list(kept.callees), kept.status, kept.rule, kept.weight, kept.evidence)

    def _question(self, site: CallSite, caller: int | None) -> tuple[object, ...] | None:
        """What the site's resolution depends on besides its file, or None where the rules read its
        caller."""
        if site.receiver_type or site.path.endswith(".go"):
            return None
        classes = self.resolver.enclosing_classes(caller)
        if not classes and site.receiver:
            receiver = site.receiver.strip()
            if receiver in SELF_RECEIVERS or receiver in SUPER_RECEIVERS or receiver.startswith("super("):
                return None
        return (site.callee, site.receiver, *classes)
