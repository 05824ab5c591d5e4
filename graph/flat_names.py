"""Dotted names resolved over a saved call graph's flat form, as `graph.lookup` resolves them.

`graph.lookup._lookup` tries a dotted name (`QuerySet.filter`, `utils.select_proxy`) exactly, then
case-folded; each pass takes the qualified name itself and every split into leading parts that name
the definition's file as a module (`ModuleIndex` keys), then (exact pass only) the names a module of
the workspace re-exports, then qualified-name suffixes (`Inner.method` finds `Outer.Inner.method`).
All but the re-exports read only definitions, so `graph.flat.SavedCallGraph` answers them from its
saved name tables; the re-exports need the import tables of the whole graph, and only where some file
of the workspace is the module the leading parts name and that file could hand the last part on: it
defines something of that name, imports something under it, or imports a whole module (`import *`,
`export * from`). The flat form saves which files each module key denotes (`MODULE_TABLE`), which
files define or import each name (`EXPORT_TABLE`) and which import whole modules (`STARRED`), so
`may_reexport` tells the whole graph's cases (`db.models.Model`: `django/db/models/__init__.py`
imports `Model`) from the rest (`json.loads` on Django: its `json` module neither defines nor imports
`loads`; `models.Model.full_clean`: no file is `models/Model`), which are answered without loading the
whole graph (on the Django sdist ~0.5 s and ~320 MB of a warm CLI call).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from graph.modules import ModuleIndex
from graph.symbol_index import SymbolIndex
from indexing.name_table import NameTable
from indexing.records import Definition

__all__ = ["EXPORT_TABLE", "MODULE_TABLE", "STARRED", "dotted", "may_reexport", "reexport_arrays", "suffixed"]

MODULE_TABLE = "module_"  # module key (joined by dots) -> the files it denotes (by their sorted order)
EXPORT_TABLE = "exported_"  # name -> the files that define or import something of that name
STARRED = "starred"  # the files that import whole modules


def reexport_arrays(ix: SymbolIndex) -> dict[str, np.ndarray]:
    """The arrays `may_reexport` reads, for a symbol index's files (module docstring)."""
    number = {path: n for n, path in enumerate(sorted(ix.modules.paths))}
    modules = {".".join(key): sorted(number[f] for f in files if f in number)
               for key, files in ix.modules.file_keys.items() if files}
    exported: dict[str, set[int]] = {}
    for d in ix.defs.values():
        if d.path in number:
            exported.setdefault(d.name, set()).add(number[d.path])
    for path, names in ix.local.items():
        for name in names if path in number else ():
            exported.setdefault(name, set()).add(number[path])
    starred = sorted(number[path] for path, specs in ix.stars.items() if specs and path in number)
    return {**_table(modules).to_arrays(MODULE_TABLE),
            **_table({k: sorted(v) for k, v in exported.items()}).to_arrays(EXPORT_TABLE),
            STARRED: np.asarray(starred, dtype=np.int64)}


def _table(lists: dict[str, list[int]]) -> NameTable:
    return NameTable.build({k: v for k, v in lists.items() if "\0" not in k})  # (a NUL cannot be saved)


def may_reexport(text: str, modules: NameTable, exported: NameTable, starred: np.ndarray) -> bool:
    """Whether the whole graph could find dotted `text` as a name a module of the index re-exports:
    a file the leading parts denote defines or imports the last part, or imports a whole module."""
    head, _, last = text.rpartition(".")
    files = modules.ids(head)
    if not len(files):
        return False
    return bool(np.intersect1d(files, starred).size or np.intersect1d(files, exported.ids(last)).size)


def dotted(text: str, by_q: NameTable, defs: Mapping[int, Definition], folded: bool = False) -> list[int]:
    """A pass's first steps for a dotted name (`text` lower-cased when `folded`, with `by_q` the
    matching table): the qualified name itself, then each split into leading parts naming the
    definition's file as a module and the qualified name of the rest."""
    found = by_q.get(text)
    parts = text.split(".")
    for i in range(1, len(parts)):
        module, rest = tuple(parts[:i]), ".".join(parts[i:])
        found.extend(d for d in by_q.get(rest) if module in _keys(defs[d].path, folded))
    return list(dict.fromkeys(found))


def suffixed(text: str, by_n: NameTable, defs: Mapping[int, Definition], folded: bool = False) -> list[int]:
    """A pass's last step: definitions named as `text`'s last part whose qualified name ends with
    `.text` (`text` and the table lower-cased when `folded`)."""
    suffix = "." + text
    found = []
    for i in by_n.get(text.rsplit(".", 1)[-1]):
        qname = defs[i].qualified_name
        if (qname.lower() if folded else qname).endswith(suffix):
            found.append(i)
    return list(dict.fromkeys(found))


def _keys(path: str, folded: bool) -> set[tuple[str, ...]]:
    keys = ModuleIndex.keys_for_path(path)
    return {tuple(part.lower() for part in key) for key in keys} if folded else keys
