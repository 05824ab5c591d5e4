"""Each definition's call sites in and out and its subclasses, as arrays a warm process maps.

Of a saved call graph, `codeseek graph X --callers` (or `--callees`) and a references search need only
the call sites of the few definitions a name resolves to (each with its caller and evidence,
`CallGraph.incoming_sites`; the calls out of it, `CallGraph.outgoing_calls`, with each edge's evidence)
and their subclasses. `caller_arrays(graph)` lays these out as CSR arrays over the graph's definitions
(in `graph.definitions()` order: the flat form's, `graph.flat`), every call site once in a site table
(`indexing.site_table`): per definition its incoming sites (site row, caller id, evidence code), its
subclasses, and its calls out (callee, evidence code, whether confident, and their site rows).
`retrievers.engine.graph_state` saves them beside the flat form (`.npy`, read with
`allow_pickle=False`, memory-mapped); `CallerArrays.entry(position)` makes one definition's entry, its
sites from their rows. (They were 256 signed pickled shards: every site object pickled twice, ~1 s of
the Django sdist's cold build and ~1.3 s of sympy's.)
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from graph.traversal import site_key
from indexing.array_folder import open_keyed, save_keyed
from indexing.columns import StringCodes, Strings
from indexing.site_table import SITE_COLUMNS, SiteTable, site_columns

if TYPE_CHECKING:
    from graph.callgraph import CallGraph
    from indexing.records import CallSite

__all__ = ["ARRAYS", "EMPTY", "NEIGHBOURS", "CallerArrays", "CallerEntry", "Outgoing", "caller_arrays",
           "open_callers", "save_callers"]

# The calls out of a definition, in `CallGraph.outgoing_calls` order: (callee, its call sites, the call
# edge's evidence, whether the edge is confident)
Outgoing = list[tuple[int, list["CallSite"], str, bool]]
# (incoming sites, subclasses, outgoing calls)
CallerEntry = tuple[list[tuple["CallSite", "int | None", str]], list[int], Outgoing]
EMPTY: CallerEntry = ([], [], [])
NO_CALLER = np.iinfo(np.int64).min  # an incoming site at module level (its caller id is None)
ARRAYS = ("in_ptr", "in_site", "in_caller", "in_evidence", "sub_ptr", "sub_ids", "out_ptr", "out_callee",
          "out_evidence", "out_confident", "out_site_ptr", "out_sites", "evidence_strings",
          "evidence_string_offsets", *SITE_COLUMNS)
PREFIX = "callers-"  # the folder's name: this prefix and a digest of the key (`indexing.array_folder`)
NEIGHBOURS = ("indptr", "other", "caller", "weight")  # what `caller_arrays` makes for the flat form


def caller_arrays(graph: CallGraph) -> dict[str, np.ndarray]:
    """The arrays `CallerArrays` reads (module docstring), read straight from the graph's adjacency (as
    `incoming_sites`, `subclasses` and `outgoing_calls` give them: this runs as a cold build saves),
    and in the same pass the flat form's neighbour lists (`NEIGHBOURS`, `graph.flat`: per definition
    `CallGraph.neighbours`, as CSR), which `save_callers` leaves to it."""
    incoming, succ, pred = graph.incoming_index, graph.succ, graph.pred
    # Columns grow as C arrays (8 bytes an entry, not a list slot and an int object: on sympy the lists
    # were ~75 MiB at their peak, the cold command's highest point once it wrote them after its
    # answer). Each call site is listed by `id` wherever it is met (`met`, `met_ids`) and numbered in
    # order of first meeting after the loop (`_first_met`), one site table row each.
    met: list[CallSite] = []
    met_ids, in_at, out_at = array("q"), array("q"), array("q")  # (in_at, out_at: places in `met`)
    evidence = StringCodes()
    code = evidence.code
    in_ptr, in_caller, in_evidence = array("q", [0]), array("q"), array("i")  # (per incoming site)
    sub_ptr, sub_ids = array("q", [0]), array("q")  # (per definition, per subclass)
    out_ptr, out_callee, out_evidence = array("q", [0]), array("q"), array("i")  # (per call edge)
    out_site_ptr, out_confident = array("q", [0]), array("b")
    indptr, other, is_caller, weight = array("q", [0]), array("q"), array("b"), array("d")  # (neighbours)
    for d in graph.definitions():
        callers: dict[int, None] = {}
        for site, caller, marked in incoming.get(d.id, ()):
            in_at.append(len(met))
            met.append(site)
            met_ids.append(id(site))
            if caller is None:
                in_caller.append(NO_CALLER)
            else:
                in_caller.append(caller)
                callers[caller] = None
            in_evidence.append(code(marked))
        in_ptr.append(len(in_at))
        into = pred.get(d.id)
        if into:
            sub_ids.extend(u for u, data in into.items()
                           if data.get("type") == "inherits" or data.get("inherits"))
        sub_ptr.append(len(sub_ids))
        edges = succ.get(d.id)
        if edges:
            calls = [(callee, data) for callee, data in edges.items() if data.get("type") == "call"]
            calls.sort(key=_outgoing_order)
            for callee, data in calls:
                out_callee.append(callee)
                out_evidence.append(code(str(data.get("evidence", ""))))
                out_confident.append(bool(data.get("confident", True)))
                sites = data["sites"]
                out_at.extend(range(len(met), len(met) + len(sites)))
                met.extend(sites)
                met_ids.extend(map(id, sites))
                out_site_ptr.append(len(out_at))
                if callee >= 0:  # (no module nodes among the neighbours)
                    other.append(callee)
                    is_caller.append(False)
                    weight.append(float(data.get("weight", 1.0)))
        out_ptr.append(len(out_callee))
        for node in callers:
            if node >= 0:
                edge = succ.get(node, {}).get(d.id)
                other.append(node)
                is_caller.append(True)
                weight.append(1.0 if edge is None else float(edge.get("weight", 1.0)))
        indptr.append(len(other))
    rows, firsts = _first_met(np.frombuffer(met_ids, dtype=np.int64))
    sites_table = site_columns([met[k] for k in firsts.tolist()])
    del met
    ints = {"in_ptr": in_ptr, "in_caller": in_caller, "sub_ptr": sub_ptr, "sub_ids": sub_ids,
            "out_ptr": out_ptr, "out_callee": out_callee, "out_site_ptr": out_site_ptr, "indptr": indptr,
            "other": other}
    return {**{name: np.array(values, dtype=np.int64) for name, values in ints.items()},
            "in_site": rows[np.frombuffer(in_at, dtype=np.int64)],
            "out_sites": rows[np.frombuffer(out_at, dtype=np.int64)],
            "caller": np.array(is_caller, dtype=np.bool_), "weight": np.array(weight, dtype=np.float64),
            "in_evidence": np.array(in_evidence, dtype=np.int32),
            "out_evidence": np.array(out_evidence, dtype=np.int32),
            "out_confident": np.array(out_confident, dtype=np.bool_),
            **evidence.saved("evidence_"), **sites_table}


def _first_met(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For a column of object ids: each entry's row (the objects numbered in order of first
    appearance) and, per row, the place the object first appears."""
    if not len(ids):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(first), dtype=np.int64)
    rank[order] = np.arange(len(first), dtype=np.int64)
    return rank[inverse.reshape(-1)], first[order]


def _outgoing_order(item: tuple[int, dict[str, Any]]) -> tuple[tuple[str, int, int], int]:
    """`CallGraph.outgoing_calls`'s order (`graph.traversal`): by first call site, then callee."""
    sites = item[1]["sites"]
    return (site_key(sites[0]) if sites else ("", 0, 0), item[0])


class CallerArrays:
    """The saved caller arrays of a graph of `count` definitions (ValueError when they do not fit)."""

    def __init__(self, arrays: Mapping[str, np.ndarray], count: int) -> None:
        # (plain views of mapped arrays: a memmap's own indexing costs several times a view's)
        a = {name: np.asarray(arrays[name]) for name in ARRAYS}
        self._a = a
        self._sites = SiteTable(a)
        for ptr, over in (("in_ptr", "in_site"), ("sub_ptr", "sub_ids"), ("out_ptr", "out_callee"),
                          ("out_site_ptr", "out_sites")):
            size = count if ptr != "out_site_ptr" else len(a["out_callee"])
            if len(a[ptr]) != size + 1 or int(a[ptr][-1]) != len(a[over]) or int(a[ptr][0]) != 0:
                raise ValueError("the saved caller arrays do not fit together")
        for column, over in (("in_caller", "in_site"), ("in_evidence", "in_site"),
                             ("out_evidence", "out_callee"), ("out_confident", "out_callee")):
            if len(a[column]) != len(a[over]):
                raise ValueError("the saved caller arrays do not fit together")
        for rows in (a["in_site"], a["out_sites"]):
            if rows.size and (int(rows.min()) < 0 or int(rows.max()) >= len(self._sites)):
                raise ValueError("the saved caller arrays name call sites they do not hold")
        self._evidence = Strings(a, "evidence_", np.concatenate((a["in_evidence"], a["out_evidence"])))

    def entry(self, k: int) -> CallerEntry:
        """The entry of the definition at position `k`: (incoming sites with caller and evidence,
        subclasses, outgoing calls)."""
        a, site, evidence = self._a, self._sites.at, self._evidence
        start, stop = a["in_ptr"][k:k + 2].tolist()
        incoming = [(site(r), None if c == NO_CALLER else c, evidence(e)) for r, c, e in
                    zip(a["in_site"][start:stop].tolist(), a["in_caller"][start:stop].tolist(),
                        a["in_evidence"][start:stop].tolist(), strict=True)]
        start, stop = a["sub_ptr"][k:k + 2].tolist()
        subclasses: list[int] = a["sub_ids"][start:stop].tolist()
        start, stop = a["out_ptr"][k:k + 2].tolist()
        bounds = a["out_site_ptr"][start:stop + 1].tolist()
        out: Outgoing = [(callee, [site(r) for r in a["out_sites"][lo:hi].tolist()], evidence(e), sure)
                         for callee, e, sure, lo, hi in
                         zip(a["out_callee"][start:stop].tolist(), a["out_evidence"][start:stop].tolist(),
                             a["out_confident"][start:stop].tolist(), bounds[:-1], bounds[1:], strict=True)]
        return incoming, subclasses, out


def save_callers(derived: Path, key: str, arrays: Mapping[str, np.ndarray]) -> bool:
    """Write a graph's caller arrays (`caller_arrays(graph)`) for `key` (a folder renamed into place
    whole; those of other keys go); False when they could not be written."""
    return save_keyed(derived, PREFIX, key, {name: arrays[name] for name in ARRAYS})


def open_callers(derived: Path, key: str, count: int) -> CallerArrays | None:
    """The caller arrays saved for `key` over `count` definitions, memory-mapped; None when absent, of
    another key or inconsistent."""
    arrays = open_keyed(derived, PREFIX, key, ARRAYS)
    if arrays is None:
        return None
    try:
        return CallerArrays(arrays, count)
    except (KeyError, ValueError):
        return None
