"""The call graph's flat form: what a search reads of a saved graph, as arrays mapped from disk.

A question's search reads four things of the call graph: each definition's PageRank, the definitions
around a line (`definitions_at`), a definition by id, and the callees and callers of the few seed
definitions it expands (`CallGraph.neighbours`). Unpickling the whole graph for that cost a warm CLI
call on the whole Django sdist about a second and most of its memory (every edge's call sites, the
symbol index, the resolver's tables). `save_flat` writes one folder per index revision
(`<derived>/flatgraph-<digest of the key>/`): the definition ids in the graph's order, their PageRank,
the neighbour lists as CSR (`indptr`, `other`, `caller`, `weight`), the definitions' columns and the
symbol index's exact name tables (qualified name and name to ids, `indexing.name_table`), all `.npy` read with
`allow_pickle=False` (no code can run from them) and memory-mapped, with the key itself in `key`.
The folder is written under a temporary name and renamed whole, so a reader never sees half of it.

`SavedCallGraph` answers those four from the arrays and the definitions (their columns here,
`indexing.definition_table`), a definition's callers and subclasses and its calls out (sites and
evidence) from the caller arrays saved beside them (`graph.caller_arrays`), and loads the whole graph
on first use of anything else (re-exports, the networkx view), after which it is that graph.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from graph import flat_names
from graph.caller_arrays import NEIGHBOURS, CallerArrays, CallerEntry, caller_arrays
from graph.callgraph import CallGraph
from graph.flat_names import EXPORT_TABLE, MODULE_TABLE, STARRED, dotted, suffixed
from graph.symbol_index import CONFIDENT, EVIDENCE_RANK
from indexing.array_folder import open_keyed, save_keyed
from indexing.columns import Positions
from indexing.definition_table import COLUMNS, DefinitionTable, definition_columns
from indexing.name_table import NameTable
from indexing.records import CallSite, Definition

__all__ = ["SavedCallGraph", "flat_arrays", "open_flat", "save_flat"]

_BARE = re.compile(r"[^\W\d][\w$]*|\$[\w$]*")  # a name without dots, paths or separators
_DOTTED = re.compile(r"[^\W\d$][\w$]*(?:\.[^\W\d$][\w$]*)+")  # names joined by dots, nothing else
NAME_TABLES = ("qualified_", "name_")  # prefixes of the saved name tables' arrays (`_name_tables`)
FOLDED_TABLES = ("qualified_folded_", "name_folded_")  # the same, lower-cased
ARRAYS = ("ids", "pagerank", "indptr", "other", "caller", "weight",
          *(f"{table}{part}" for table in (*NAME_TABLES, *FOLDED_TABLES, MODULE_TABLE, EXPORT_TABLE)
            for part in ("names", "ptr", "members")), STARRED, *COLUMNS)
PREFIX = "flatgraph-"


def flat_arrays(graph: CallGraph, neighbours: Mapping[str, np.ndarray] | None = None
                ) -> dict[str, np.ndarray]:
    """The arrays `save_flat` writes: per definition (in `graph.definitions()` order) its PageRank
    and its `CallGraph.neighbours` (CSR: `neighbours`, made with the caller arrays in one pass over the
    adjacency, `graph.caller_arrays`; made here when not given)."""
    if neighbours is None:
        neighbours = caller_arrays(graph)
    ids = [d.id for d in graph.definitions()]
    rank = graph.pagerank
    # (names holding a NUL, which no query names, are left out: they cannot be saved as arrays)
    clean = [d for d in graph.definitions() if "\0" not in d.qualified_name and "\0" not in d.name]
    tables = {}
    for folded, prefixes in ((False, NAME_TABLES), (True, FOLDED_TABLES)):
        by_q, by_n = _name_lists(clean, folded)
        tables.update({**NameTable.build(by_q).to_arrays(prefixes[0]),
                       **NameTable.build(by_n).to_arrays(prefixes[1])})
    return {"ids": np.asarray(ids, dtype=np.int64),
            "pagerank": np.asarray([rank.get(i, np.nan) for i in ids], dtype=np.float64),
            **{name: neighbours[name] for name in NEIGHBOURS}, **tables,
            **flat_names.reexport_arrays(graph.index), **definition_columns(graph.definitions())}


def _name_lists(defs: Iterable[Definition], folded: bool
                ) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """Qualified name -> ids and name -> ids (lower-cased when `folded`), in the order of `defs`."""
    by_q: dict[str, list[int]] = {}
    by_n: dict[str, list[int]] = {}
    for d in defs:
        q, n = (d.qualified_name.lower(), d.name.lower()) if folded else (d.qualified_name, d.name)
        by_q.setdefault(q, []).append(d.id)
        by_n.setdefault(n, []).append(d.id)
    return by_q, by_n


def _name_tables(flat: dict[str, Any], folded: bool) -> tuple[NameTable, NameTable]:
    """The symbol index's name tables (qualified name, name; lower-cased when `folded`), each name's
    ids in definition order, as saved with the arrays (read on first use: the folded ones only when an
    exact lookup found nothing; building them from `defs` made every definition)."""
    slot = "names_folded" if folded else "names"
    tables = flat.get(slot)
    if tables is None:
        arrays, prefixes = flat["arrays"], FOLDED_TABLES if folded else NAME_TABLES
        tables = tuple(NameTable.from_arrays(arrays, prefix) for prefix in prefixes)
        flat[slot] = tables
    return tables  # type: ignore[no-any-return]


def _reexports(flat: dict[str, Any]) -> tuple[NameTable, NameTable, np.ndarray]:
    """`graph.flat_names.may_reexport`'s tables, read on first use."""
    tables = flat.get("reexports")
    if tables is None:
        arrays = flat["arrays"]
        tables = flat["reexports"] = (NameTable.from_arrays(arrays, MODULE_TABLE),
                                      NameTable.from_arrays(arrays, EXPORT_TABLE),
                                      np.asarray(arrays[STARRED]))
    return tables  # type: ignore[no-any-return]


def save_flat(derived: Path, key: str, graph: CallGraph,
              neighbours: Mapping[str, np.ndarray] | None = None) -> bool:
    """Write the flat form of `graph` for `key` (module docstring; `neighbours` as `flat_arrays`
    takes them); False when it could not be written. Folders of other keys are removed (a reader that
    mapped their files keeps them)."""
    return save_keyed(derived, PREFIX, key, flat_arrays(graph, neighbours))


def open_flat(derived: Path, key: str) -> dict[str, np.ndarray] | None:
    """The arrays saved for `key`, memory-mapped; None when absent, of another key or inconsistent."""
    arrays = open_keyed(derived, PREFIX, key, ARRAYS)
    if arrays is None:
        return None
    n, edges = len(arrays["ids"]), len(arrays["other"])
    if len(arrays["pagerank"]) != n or len(arrays["indptr"]) != n + 1 or \
            len(arrays["caller"]) != edges or len(arrays["weight"]) != edges or \
            (n and int(arrays["indptr"][-1]) != edges):
        return None
    return arrays


class ArrayRanks(Mapping[int, float]):
    """Definition id -> PageRank, read from the flat arrays (`CallGraph.pagerank`'s mapping, with NaN
    where the saved graph had none, as the pickled dict had)."""

    def __init__(self, position: Positions, values: np.ndarray) -> None:
        self._position, self._values = position, values

    def __getitem__(self, def_id: int) -> float:
        k = self._position.get(def_id) if isinstance(def_id, (int, np.integer)) else None
        if k is None:
            raise KeyError(def_id)
        return float(self._values[k])

    def __iter__(self) -> Iterator[int]:
        return iter(self._position.ids.tolist())

    def __len__(self) -> int:
        return len(self._position)


class SavedCallGraph(CallGraph):
    """A saved call graph opened from its flat arrays (module docstring): PageRank and `neighbours` from
    them, `definitions`, `definition` and `definitions_at` from the saved definitions (`load_definitions`,
    read on first use: a command that resolves names loads the whole graph and never needs them);
    anything else loads `whole()` (the pickled graph) once, whose state this object then takes on."""

    def __init__(self, arrays: dict[str, np.ndarray], load_definitions: Callable[[], object],
                 load_whole: Callable[[Mapping[int, Definition] | None], CallGraph],
                 load_callers: Callable[[], CallerArrays | None] | None = None) -> None:
        # (no CallGraph.__init__: its state is lazy; `load_whole` is given the definitions once read)
        position = Positions(arrays["ids"])
        flat = {"position": position, "arrays": arrays,
                "load_defs": load_definitions, "defs": None, "load": load_whole, "lock": threading.Lock(),
                "by_path": None, "load_callers": load_callers, "callers": None}
        self.__dict__.update(_flat=flat, _whole=None, _nx=None, _around={},
                             _pagerank=ArrayRanks(position, arrays["pagerank"]))

    def __getattr__(self, name: str) -> Any:
        """An attribute of the whole graph, loading it on first use."""
        if name.startswith("__") or "_flat" not in self.__dict__:
            raise AttributeError(name)
        return getattr(self.whole(), name)

    def whole(self) -> CallGraph:
        """The whole graph (loaded once); this object holds its state from then on."""
        flat = self.__dict__["_flat"]
        with flat["lock"]:
            whole = self.__dict__["_whole"]
            if whole is None:
                whole = flat["load"](flat["defs"] or None)  # (the definitions it names, when read)
                state = dict(whole.__dict__)
                state.pop("_around", None)  # (the answers already given stay true)
                self.__dict__.update(state)
                self.__dict__["_whole"] = whole
        return whole  # type: ignore[no-any-return]

    def __reduce_ex__(self, protocol: Any) -> Any:  # a copy or a pickle is of the whole graph
        return self.whole().__reduce_ex__(protocol)

    def _flat_only(self) -> dict[str, Any] | None:
        return self.__dict__["_flat"] if self.__dict__["_whole"] is None else None

    def _saved_definitions(self) -> Mapping[int, Definition] | None:
        """The saved definitions by id: the table over the arrays' definition columns
        (`indexing.definition_table`: each made when first read), else the pickled list (read on first
        use); None once the whole graph is loaded, or when they are missing or are not the arrays' (then
        it is loaded)."""
        flat = self._flat_only()
        if flat is None:
            return None
        with flat["lock"]:
            if flat["defs"] is None:
                arrays = flat["arrays"]
                try:
                    flat["defs"] = DefinitionTable(arrays["ids"], arrays)
                except (KeyError, ValueError):
                    saved = flat["load_defs"]()
                    fits = isinstance(saved, list) and \
                        [getattr(d, "id", None) for d in saved] == arrays["ids"].tolist()
                    flat["defs"] = {d.id: d for d in saved} if fits else False  # type: ignore[union-attr]
        if flat["defs"] is False:
            self.whole()
            return None
        return flat["defs"]  # type: ignore[no-any-return]

    def definitions(self) -> list[Definition]:
        defs = self._saved_definitions()
        return list(defs.values()) if defs is not None else super().definitions()

    def definition_map(self) -> Mapping[int, Definition]:
        """Every definition by id, in `definitions()` order: the saved table's, made as they are read."""
        defs = self._saved_definitions()
        return defs if defs is not None else {d.id: d for d in super().definitions()}

    def definition(self, def_id: int) -> Definition:
        defs = self._saved_definitions()
        found = defs.get(def_id) if defs is not None else None  # (one lookup, not `in` and then [])
        return found if found is not None else super().definition(def_id)

    def definitions_at(self, path: str, line: int) -> list[Definition]:
        defs = self._saved_definitions()
        flat = self._flat_only()
        if defs is None or flat is None:
            return super().definitions_at(path, line)
        known = self._around.get((path, line))
        if known is None:
            # the symbol index's by_path: a file's definitions in start order
            if isinstance(defs, DefinitionTable):  # (the file's that hold the line, from the columns)
                known = sorted(defs.around(path, line), key=lambda d: (d.start_line, -d.end_line))
                known.sort(key=lambda d: (d.end_line - d.start_line, -d.start_line))
                if len(self._around) < 65536:
                    self._around[(path, line)] = known
                return list(known)
            if flat["by_path"] is None:
                by_path: dict[str, list[Definition]] = {}
                for d in defs.values():
                    by_path.setdefault(d.path, []).append(d)
                for items in by_path.values():
                    items.sort(key=lambda d: (d.start_line, -d.end_line))
                flat["by_path"] = by_path
            known = [d for d in flat["by_path"].get(path, ()) if d.start_line <= line <= d.end_line]
            known.sort(key=lambda d: (d.end_line - d.start_line, -d.start_line))
            if len(self._around) < 65536:
                self._around[(path, line)] = known
        return list(known)

    def resolve(self, name: str) -> list[Definition]:
        """A bare name (`parse_header`, `get_or_create()`) or a dotted one (`QuerySet.filter`,
        `utils.select_proxy`) from the saved definitions, as `graph.lookup.resolve_name` finds it
        (qualified then plain name, exact then case-folded; a dotted name's leading parts as a module
        key of the file, then qualified-name suffixes) and `CallGraph.resolve` orders it; a dotted name
        a module of the index may re-export (`graph.flat_names.may_reexport`), and any other form,
        from the whole graph (re-exports, paths)."""
        text = name.strip()
        text = text[:-2].strip() if text.endswith("()") else text
        if not text:
            return []
        bare = _BARE.fullmatch(text) is not None
        defs = self._saved_definitions() if bare or _DOTTED.fullmatch(text) else None
        flat = self._flat_only()
        if defs is None or flat is None:
            return super().resolve(name)
        by_q, by_n = _name_tables(flat, folded=False)
        if bare:
            ids = list(dict.fromkeys([*by_q.get(text), *by_n.get(text)]))
        else:  # (graph.flat_names)
            ids = dotted(text, by_q, defs)
            if not ids:
                if flat_names.may_reexport(text, *_reexports(flat)):  # (the whole graph's re-exports)
                    return super().resolve(name)
                ids = suffixed(text, by_n, defs)
        if not ids:  # the case-folded pass
            by_q, by_n = _name_tables(flat, folded=True)
            low = text.lower()
            ids = list(dict.fromkeys([*by_q.get(low), *by_n.get(low)])) if bare else \
                dotted(low, by_q, defs, folded=True) or suffixed(low, by_n, defs, folded=True)
        if len(ids) > 1:
            rank = self.pagerank
            ids.sort(key=lambda i: (-rank.get(i, 0.0), defs[i].path, defs[i].start_line))
        return [defs[i] for i in ids]

    def _callers_entry(self, def_id: int) -> CallerEntry | None:
        """A definition's incoming call sites, subclasses and calls out from the saved caller arrays
        (`graph.caller_arrays`, opened on first use); None when the whole graph must answer (loaded,
        no arrays, not a definition)."""
        flat = self._flat_only()
        k = flat["position"].get(def_id) if flat is not None and flat["load_callers"] is not None else None
        if flat is None or k is None:
            return None
        with flat["lock"]:
            if flat["callers"] is None:
                flat["callers"] = flat["load_callers"]() or False
        callers = flat["callers"]
        return callers.entry(k) if callers else None

    def incoming_sites(self, def_id: int) -> list[tuple[CallSite, int | None, str]]:
        entry = self._callers_entry(def_id)
        return list(entry[0]) if entry is not None else super().incoming_sites(def_id)

    def subclasses(self, def_id: int) -> list[int]:
        entry = self._callers_entry(def_id)
        return list(entry[1]) if entry is not None else super().subclasses(def_id)

    def outgoing_calls(self, def_id: int, confident: bool = False) -> list[tuple[int, list[CallSite]]]:
        entry = self._callers_entry(def_id)
        if entry is None:
            return super().outgoing_calls(def_id, confident)
        return [(callee, list(sites)) for callee, sites, _, sure in entry[2] if sure or not confident]

    def edge_evidence(self, caller: int, callee: int) -> str | None:
        entry = self._callers_entry(caller)
        if entry is None:
            return super().edge_evidence(caller, callee)
        return next((evidence for other, _, evidence, _ in entry[2] if other == callee), None)

    def caller_ids(self, def_id: int, confident: bool = False) -> list[int]:
        """From the neighbour lists (the callers there are the graph's: the same set on all 42,673
        definitions of the Django sdist); the confident ones from the caller arrays: a caller whose
        call edge is confident, i.e. whose best site evidence (`EVIDENCE_RANK`, as the build ranks it) is."""
        flat = self._flat_only()
        entry = self._callers_entry(def_id) if confident else None
        if flat is None or def_id not in flat["position"] or (confident and entry is None):
            return super().caller_ids(def_id, confident)
        if not confident:
            return [c for c, is_caller, _ in self.neighbours(def_id) if is_caller and c != def_id]
        assert entry is not None
        best: dict[int, str] = {}
        for _, caller, evidence in entry[0]:
            if caller is not None and caller != def_id and (
                    caller not in best or EVIDENCE_RANK[evidence] > EVIDENCE_RANK[best[caller]]):
                best[caller] = evidence
        return [c for c, evidence in best.items() if evidence in CONFIDENT]

    def call_weight(self, caller: int, callee: int) -> float:
        """From the callee's neighbour list (a caller of it is there with the edge's weight)."""
        flat = self._flat_only()
        k = flat["position"].get(callee) if flat is not None else None
        if flat is not None and k is not None:
            arrays = flat["arrays"]
            start, stop = int(arrays["indptr"][k]), int(arrays["indptr"][k + 1])
            for j in range(start, stop):
                if int(arrays["other"][j]) == caller and bool(arrays["caller"][j]):
                    return float(arrays["weight"][j])
        return super().call_weight(caller, callee)

    def neighbours(self, def_id: int) -> list[tuple[int, bool, float]]:
        flat = self._flat_only()
        k = flat["position"].get(def_id) if flat is not None else None
        if flat is None or k is None:
            return super().neighbours(def_id)
        arrays = flat["arrays"]
        start, stop = int(arrays["indptr"][k]), int(arrays["indptr"][k + 1])
        return list(zip(arrays["other"][start:stop].tolist(), arrays["caller"][start:stop].tolist(),
                        arrays["weight"][start:stop].tolist(), strict=True))

