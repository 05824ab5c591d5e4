"""Dotted names resolved over a saved call graph's flat form, as `graph.lookup` resolves them.

`graph.lookup._lookup` tries a dotted name (`QuerySet.filter`, `utils.select_proxy`) exactly, then
case-folded; each pass takes the qualified name itself and every split into leading parts that name
the definition's file as a module (`ModuleIndex` keys), then (exact pass only) the names a module of
the workspace re-exports, then qualified-name suffixes (`Inner.method` finds `Outer.Inner.method`).
All but the re-exports read only definitions, so `graph.flat.SavedCallGraph` answers them from its
saved name tables; the re-exports need the import tables of the whole graph, and only where some file
of the workspace is the module the leading parts name: the flat form saves the set of those module
keys (`MODULE_TABLE`). A name like `json.loads` on a tree without a `json` module, or
`models.Model.full_clean` where no file is `models/Model`, is then answered without loading the whole
graph (on the Django sdist ~0.5 s and ~320 MB of a warm CLI call).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from graph.modules import ModuleIndex
from indexing.name_table import NameTable
from indexing.records import Definition

__all__ = ["MODULE_TABLE", "dotted", "module_key_arrays", "suffixed"]

MODULE_TABLE = "module_"  # prefix of the saved module keys' arrays (a `NameTable` without members)


def module_key_arrays(modules: ModuleIndex) -> dict[str, np.ndarray]:
    """The arrays of the module keys some file of the index has, joined by dots."""
    keys = {".".join(key): () for key, files in modules.file_keys.items() if files and
            all("\0" not in part for part in key)}
    return NameTable.build(keys).to_arrays(MODULE_TABLE)


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
