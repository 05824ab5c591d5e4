"""Incremental call-graph builds: the records one build was made from, and which of its call-site
resolutions the next build may keep.

A language server or MCP server builds the call graph again after every edit. On the Django sdist
(42k definitions, 176k call sites) a whole build is ~4 s: ~0.9 s reading every record from SQLite and
~1.6 s resolving every call site. `GraphInputs` keeps, per build, the records it was made from, each
file's stamp (`IndexStore.file_stamps`) and each call site's `Resolution`; `GraphInputs.changed_paths`
names the files whose stamp moved, and `GraphInputs.next` splices their records (read alone,
`IndexStore.records_for`) into the rest and says which resolutions still hold:

- a call site in a changed file is resolved again;
- a site elsewhere keeps its resolution unless it names (its callee, a word of its receiver or of its
  receiver type) a name whose definitions or imports changed shape (`_shapes`: a definition's name,
  qualified name, kind, parent, bases and signature; an import's module, name and alias; lines and
  ids do not count), or a local name an import binds to such a name, or its resolution names a
  definition that is gone (every definition of a changed file is written again, with a new id);
- a site whose one callee is a definition of a changed file kept there in all but its lines and id
  (`_renamed`: its qualified name unique in its file before and after, the same kind, parent, bases and
  signature) keeps its resolution, moved to the new id (`_carried`): an edit of `QuerySet`'s file
  otherwise resolved ~12,000 calls into it again on the Django sdist; a site of several callees is
  resolved again (their order is that of the definitions, which the new ids change);
- a file added or removed changes what module specifiers denote: its module names (stem, folder) and
  every name an import mentioning them binds count as changed too;
- what could change a resolution in another way builds everything again (`next` returns None): a
  class given other bases, or added or removed where a base anywhere names it (a subclass resolves
  its methods through its bases), a constructor name among the changed names (a class's call then
  means another constructor), more than `MAX_SHARE` of the files changed. So does every
  `WHOLE_EVERY`-th build, which bounds whatever the rules miss.

The build then patches the previous symbol index (`SymbolIndex.patched`), takes over the previous
graph's edges of every callee no re-resolved or dropped site reaches (`graph.call_edges`, `Reuse`)
and, when no file was added or removed, the resolved bases of every class outside the changed files
none of whose bases is gone and none of whose written bases names a changed name (`_bases_kept`).
The spliced lists are the ones a whole read gives, in the same order (definitions by id, sites and
imports by row id: a file's new rows come after every other file's), so the graph is the one a whole
build makes; `tests/unit/test_graph_incremental.py` and `bench/incremental_graph_bench.py` compare the
two on edits of real code.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from graph.call_edges import Reuse
from graph.resolution import CONSTRUCTOR_NAMES
from graph.symbol_index import CLASS_KINDS, Resolution
from indexing.records import CallSite, Definition, Import

if TYPE_CHECKING:
    from graph.callgraph import CallGraph

__all__ = ["MAX_SHARE", "WHOLE_EVERY", "GraphInputs", "Stamps"]

Stamps = Mapping[str, tuple[int, str, "int | None"]]  # path -> (file row id, hash, highest definition id)
MAX_SHARE = 0.05  # more changed files than this share (and more than MIN_FILES): build everything
MIN_FILES = 32
WHOLE_EVERY = 32  # every this many incremental builds, a whole one
_WORD = re.compile(r"\w+")


@dataclass
class GraphInputs:
    """What one build was made from: the index's file stamps, its records, each site's resolution
    (`resolutions[i]` of `calls[i]`), and how many incremental builds led to it."""

    stamps: Stamps
    definitions: list[Definition]
    calls: list[CallSite]
    imports: list[Import]
    resolutions: list[Resolution]
    incremental_builds: int = 0
    graph: CallGraph | None = None  # the graph built from them (what the next build takes over)

    def share_resolutions(self, known: Sequence[Resolution | None] | None) -> None:
        """One object for equal resolutions among those made afresh (`known[i]` None, or all of them):
        kept for the next build, 176k on the Django sdist are 25 MiB, 102k of them distinct."""
        seen: dict[tuple[object, ...], Resolution] = {}
        resolutions = self.resolutions
        for i, res in enumerate(resolutions):
            if known is not None and known[i] is not None:
                continue
            key = (res.caller, tuple(res.callees), res.status, res.rule, res.weight, res.evidence)
            resolutions[i] = seen.setdefault(key, res)

    def changed_paths(self, stamps: Stamps) -> list[str] | None:
        """The files whose records changed since this build, added and removed ones included, or None
        when the next build must be whole (too many changed, `WHOLE_EVERY` incremental builds made)."""
        if self.incremental_builds + 1 >= WHOLE_EVERY:
            return None
        changed = sorted(p for p in stamps.keys() | self.stamps.keys() if stamps.get(p) != self.stamps.get(p))
        if len(changed) > max(MIN_FILES, MAX_SHARE * len(stamps)):
            return None
        return changed

    def next(self, stamps: Stamps, changed: Sequence[str], fresh: tuple[list[Definition], list[CallSite],
             list[Import]]) -> tuple[GraphInputs, list[Resolution | None], Reuse | None] | None:
        """The inputs of the next build, `changed` files' records replaced by `fresh` (their records
        now), the resolutions it may keep (None: resolve again) and what it may take over from this
        build's graph (`graph.call_edges`: the callees of every site resolved again or gone are
        touched); None when it must be whole."""
        paths = set(changed)
        new_defs, new_calls, new_imports = fresh
        old_defs = [d for d in self.definitions if d.path in paths]
        old_imports = [i for i in self.imports if i.path in paths]
        if not _classes_hold(old_defs, new_defs, self.definitions):
            return None
        names = _shapes(old_defs, new_defs, old_imports, new_imports)
        if names & set(CONSTRUCTOR_NAMES):
            return None
        definitions = [d for d in self.definitions if d.path not in paths] + new_defs
        imports = [i for i in self.imports if i.path not in paths] + new_imports
        moved = {p for p in paths if (p in stamps) != (p in self.stamps)}
        _modules_moved(names, moved, imports)
        _bound_to(names, imports)
        gone = {d.id for d in old_defs}  # (every other definition keeps its id)
        renamed = _renamed(old_defs, new_defs)
        named = _Named(names)
        calls: list[CallSite] = []
        known: list[Resolution | None] = []
        touched: set[int] = set()
        check_names = bool(names)  # (a body edit changes no name: the sites' words need no look)
        for site, res in zip(self.calls, self.resolutions, strict=True):
            if site.path in paths:
                touched.update(res.callees)
                continue
            calls.append(site)
            # (whether its resolution holds: inline, as 176k sites on the Django sdist pass here)
            if res.caller not in gone and gone.isdisjoint(res.callees) and not (
                    check_names and _names_changed(site, named)):
                known.append(res)
            elif (carried := _carried(site, res, named, renamed)) is not None:
                touched.update(carried.callees)  # (a new node: its incoming sites are made afresh)
                known.append(carried)
            else:
                touched.update(res.callees)
                known.append(None)
        calls += new_calls
        known += [None] * len(new_calls)
        reuse = None
        if self.graph is not None:
            reuse = Reuse(self.graph, frozenset(paths), new_defs, touched)
            if not moved:
                reuse.bases, reuse.open_bases = _bases_kept(self.graph, paths, gone, named)
        return GraphInputs(stamps, definitions, calls, imports, [], self.incremental_builds + 1), known, reuse


def _classes(defs: Sequence[Definition]) -> Counter[tuple[str, str, tuple[str, ...]]]:
    return Counter((d.qualified_name, d.kind, d.bases) for d in defs if d.kind in CLASS_KINDS)


def _classes_hold(old_defs: Sequence[Definition], new_defs: Sequence[Definition],
                  every: Sequence[Definition]) -> bool:
    """Whether every class keeps its bases: no class of the changed files kept with other bases, and
    none added or removed whose name a base anywhere mentions (a subclass would resolve its methods
    through other classes)."""
    old, new = _classes(old_defs), _classes(new_defs)
    if old == new:
        return True
    gone, added = old - new, new - old
    kept = {(q, k) for q, k, _ in new}
    if any((q, k) in kept for q, k, _ in gone):
        return False
    named = {w for q, _k, _b in (*gone, *added) for w in _WORD.findall(q)[-1:]}
    return not any(not named.isdisjoint(_WORD.findall(b)) for d in (*every, *new_defs) if d.bases
                   for b in d.bases)


def _shapes(old_defs: Sequence[Definition], new_defs: Sequence[Definition], old_imports: Sequence[Import],
            new_imports: Sequence[Import]) -> set[str]:
    """The names whose definitions or imports differ between the old and new records of the changed
    files, other than in their lines and ids."""
    names: set[str] = set()
    defs: Counter[tuple[str, str, str, str, str | None, tuple[str, ...], str]] = Counter(
        (d.path, d.name, d.qualified_name, d.kind, d.parent, d.bases, d.signature) for d in old_defs)
    defs.subtract(
        (d.path, d.name, d.qualified_name, d.kind, d.parent, d.bases, d.signature) for d in new_defs)
    for (_path, name, qualified, *_rest), n in defs.items():
        if n:
            names.add(name)
            names.update(_WORD.findall(qualified))
    imps: Counter[tuple[str, str, str | None, str | None]] = Counter(
        (i.path, i.module, i.name, i.alias) for i in old_imports)
    imps.subtract((i.path, i.module, i.name, i.alias) for i in new_imports)
    for (_path, module, imported, alias), n in imps.items():
        if n:
            names.update(x for x in (imported, alias) if x)
            parts = _WORD.findall(module)
            names.update(parts[:1] + parts[-1:])  # what `import a.b` binds, and the module's own name
    return names


def _modules_moved(names: set[str], moved: set[str], imports: Sequence[Import]) -> None:
    """A file added or removed changes what module specifiers denote: add to `names` the file's
    module names (its stem and folder: `pkg/new.py`, `pkg/index.js`) and every name an import
    whose specifier mentions one of them binds (it may now come from elsewhere)."""
    if not moved:
        return
    modules = set()
    for path in moved:
        folder, base = posixpath.split(path)
        modules.add(base.split(".", 1)[0])
        modules.add(posixpath.basename(folder))
    modules.discard("")
    names.update(modules)
    for imp in imports:
        if not modules.isdisjoint(_WORD.findall(imp.module)) or imp.name in modules:
            parts = _WORD.findall(imp.module)
            names.update(x for x in (imp.alias, imp.name, *parts[:1]) if x)


def _bound_to(names: set[str], imports: Sequence[Import]) -> None:
    """Add to `names` every local name an import binds to one of them (`from m import a as b`), to a
    fixed point: a site calling `b` resolves through `a`."""
    grew = True
    while grew:
        grew = False
        for imp in imports:
            if imp.alias and imp.name in names and imp.alias not in names:
                names.add(imp.alias)
                grew = True


class _Named:
    """Whether a text (a receiver, a receiver type) has a word among `names`; answered once per text
    (receivers repeat: `self`, `self.request`, `models`)."""

    def __init__(self, names: set[str]) -> None:
        self.names = names
        self._seen: dict[str, bool] = {}

    def __call__(self, text: str) -> bool:
        hit = self._seen.get(text)
        if hit is None:
            hit = self._seen[text] = not self.names.isdisjoint(_WORD.findall(text))
        return hit


def _names_changed(site: CallSite, named: _Named) -> bool:
    """Whether `site` names a changed name: its callee, a word of its receiver or receiver type."""
    if site.callee.strip() in named.names:
        return True
    receiver, typed = site.receiver, site.receiver_type
    return bool((receiver and named(receiver)) or (typed and named(typed[2:])))


def _bases_kept(graph: CallGraph, paths: set[str], gone: set[int], named: _Named
                ) -> tuple[dict[int, list[int]], set[int]]:
    """The previous build's resolved bases of the classes the next build may take over (and which of
    them have bases outside the workspace): a class outside the changed files none of whose bases is a
    definition that is gone and none of whose written bases names a changed name. No file was added or
    removed (else nothing is taken over): the module specifiers a base is written with denote the same
    files, and no class appeared or went where a base names it (`_classes_hold`)."""
    resolved, open_bases = graph.resolver.resolved_bases()  # (the graph searches read: copies)
    defs = graph.index.defs
    kept: dict[int, list[int]] = {}
    for class_id, bases in resolved.items():
        d = defs.get(class_id)
        if d is None or d.path in paths or not gone.isdisjoint(bases) \
                or any(named(written) for written in d.bases):
            continue
        kept[class_id] = bases
    return kept, open_bases.intersection(kept)


def _renamed(old_defs: Sequence[Definition], new_defs: Sequence[Definition]) -> dict[int, int]:
    """Old id -> new id of each definition of the changed files kept in all but its lines and id: its
    (path, qualified name) held by one definition before and one after, of the same name, kind,
    parent, bases and signature (a name defined twice in a file is left out: which one a call means
    may follow their order)."""
    def unique(defs: Sequence[Definition]) -> dict[tuple[str, str], Definition]:
        out: dict[tuple[str, str], Definition] = {}
        twice: set[tuple[str, str]] = set()
        for d in defs:
            key = (d.path, d.qualified_name)
            if key in out:
                twice.add(key)
            out[key] = d
        for key in twice:
            del out[key]
        return out

    after = unique(new_defs)
    renamed: dict[int, int] = {}
    for key, d in unique(old_defs).items():
        n = after.get(key)
        if n is not None and (d.name, d.kind, d.parent, d.bases, d.signature) == (
                n.name, n.kind, n.parent, n.bases, n.signature):
            renamed[d.id] = n.id
    return renamed


def _carried(site: CallSite, res: Resolution, named: _Named, renamed: Mapping[int, int]) -> Resolution | None:
    """The last build's resolution of `site` (in an unchanged file, calling into a changed one) moved to
    its callee's new id, when it has one callee, kept (`_renamed`), and the site names no changed name;
    else None (resolve it again)."""
    if len(res.callees) != 1:
        return None
    new = renamed.get(res.callees[0])
    if new is None or _names_changed(site, named):
        return None
    return Resolution(res.caller, [new], res.status, res.rule, res.weight, res.evidence)
