"""GraphState, the one holder of a workspace's call graph: cached per index change, persisted beside the
index for a warm process, never persisted with unsaved buffers open; the real parser, store and graph."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from graph.callgraph import CallGraph
from retrievers.engine.graph_state import GraphState
from tests.unit.alpha_gamma import ALPHA, GAMMA, open_ws, write_tree


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path)


def callers(graph: CallGraph, name: str) -> set[str]:
    (target,) = graph.resolve(name)
    return {graph.definition(c).name for _, c in graph.callers(target.id) if c is not None}


def test_built_once_per_index_change(tree: Path, tmp_path: Path) -> None:
    with open_ws(tree, tmp_path) as ws:
        ws.update()
        holder = GraphState(ws)
        assert holder.current is None
        graph = holder.build()
        assert callers(graph, "beta") == {"alpha"} and holder.current is graph
        assert holder.build() is graph
        ws.update()  # nothing changed: same graph
        assert holder.build() is graph
        (tree / "alpha.py").write_text(ALPHA + "\n\ndef gamma_caller():\n    return beta(1)\n")
        ws.update()
        assert holder.current is graph  # readers keep the previous graph until the next build
        fresh = holder.build()
        assert fresh is not graph and callers(fresh, "beta") == {"alpha", "gamma_caller"}
        assert not (tmp_path / "index" / "derived" / "callgraph.pickle").exists()  # persist is off


def test_persisted_graph_warm_start(tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build saves the flat form and the caller arrays, not the whole graph; the first process that
    needs the whole graph builds it from the store and saves it, and the next one reads it."""
    import graph.callgraph

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the signing key lives there
    derived = tmp_path / "index" / "derived"
    whole = derived / "callgraph.pickle"
    with open_ws(tree, tmp_path) as ws:
        ws.update()
        cold = GraphState(ws, persist=True)
        built = cold.build()
        assert not cold.loaded and list(derived.glob("flatgraph-*/ids.npy"))
        assert list(derived.glob("callers-*/in_ptr.npy")) and not whole.exists()
        cold_key = cold.derived_key()  # read while its store is open (a closed one refuses reads)
    with open_ws(tree, tmp_path) as ws:  # a new process on the same index revision
        assert ws.update().parsed == 0
        warm = GraphState(ws, persist=True)
        loaded = warm.build()
        assert warm.loaded and loaded is not built
        assert callers(loaded, "beta") == {"alpha"} and loaded.pagerank == built.pagerank
        assert not whole.exists()  # nothing above needed the whole graph
        assert loaded.stats() == built.stats() and whole.is_file()  # built from the store, then saved
        assert loaded.succ == built.succ and loaded.pred == built.pred
        assert loaded.unresolved == built.unresolved
        assert set(loaded.graph.edges) == set(built.graph.edges)  # the networkx view, made on demand
    real_build = graph.callgraph.build_call_graph

    def no_build(*args: object, **kwargs: object) -> CallGraph:
        raise AssertionError("the saved whole graph should have been read")
    with open_ws(tree, tmp_path) as ws:  # the next process reads the whole graph its predecessor saved
        ws.update()
        warm = GraphState(ws, persist=True)
        loaded = warm.build()
        monkeypatch.setattr(graph.callgraph, "build_call_graph", no_build)
        assert warm.loaded and loaded.succ == built.succ
        assert loaded._unresolved is None  # saved apart, read on first use
        assert loaded.unresolved == built.unresolved and loaded.stats() == built.stats()
        assert warm.derived_key() == cold_key != ""
        monkeypatch.setattr(graph.callgraph, "build_call_graph", real_build)
        (tree / "gamma.py").write_text(GAMMA + "\n\ndef beta_user():\n    return beta(2)\n")
        ws.update()  # a new revision: the saved graph no longer applies
        rebuilt = warm.build()
        assert not warm.loaded and "beta_user" in {d.name for d in rebuilt.definitions()}


def test_a_primed_graph_serves_as_the_whole_one(tree: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A server primes its incremental builds after a warm start (`GraphState.prime`): the graph that
    built is the loaded graph's whole one, nothing built again; one primed from another revision is not."""
    import graph.callgraph

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with open_ws(tree, tmp_path) as ws:
        ws.update()
        built = GraphState(ws, persist=True).build()
    real_build = graph.callgraph.build_call_graph
    builds: list[int] = []

    def counted(*args: object, **kwargs: object) -> CallGraph:
        builds.append(1)
        return real_build(*args, **kwargs)  # type: ignore[arg-type]
    monkeypatch.setattr(graph.callgraph, "build_call_graph", counted)
    with open_ws(tree, tmp_path) as ws:
        ws.update()
        warm = GraphState(ws, persist=True, incremental=True)
        loaded = warm.build()
        assert warm.loaded and warm.prime() and builds == [1]
        assert loaded.stats() == built.stats() and builds == [1]  # the primed graph, not a new build
        assert not (tmp_path / "index" / "derived" / "callgraph.pickle").exists()
    with open_ws(tree, tmp_path) as ws:
        ws.update()
        warm = GraphState(ws, persist=True, incremental=True)
        loaded = warm.build()
        assert warm.prime() and builds == [1, 1]
        warm._built = ("another revision", warm._built[1])  # type: ignore[index]
        assert loaded.stats() == built.stats() and builds == [1, 1, 1]
    (tmp_path / "index" / "derived" / "callgraph.pickle").unlink()  # (saved by the build just above)
    with open_ws(tree, tmp_path) as ws:  # the whole graph asked for before the prime: it primes
        ws.update()
        warm = GraphState(ws, persist=True, incremental=True)
        loaded = warm.build()
        assert warm.primable and loaded.stats() == built.stats() and builds == [1, 1, 1, 1]
        assert not warm.primable and not warm.prime() and builds == [1, 1, 1, 1]


def test_no_persistence_with_unsaved_buffers(tree: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with open_ws(tree, tmp_path) as ws:
        ws.set_overlay("alpha.py", ALPHA + "\n\ndef buffered():\n    return beta(0)\n")
        ws.update()
        holder = GraphState(ws, persist=True)
        assert holder.derived_key() == ""
        assert callers(holder.build(), "beta") == {"alpha", "buffered"}
        assert not holder.loaded and not (tmp_path / "index" / "derived" / "callgraph.pickle").exists()


def test_a_loaded_graph_needs_no_networkx(tree: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that loads the saved graph and walks it never imports networkx (its import is a tenth
    of a warm CLI start); asking for the networkx view imports it then."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with open_ws(tree, tmp_path) as ws:
        ws.update()
        GraphState(ws, persist=True).build()
    code = (
        "import sys; from pathlib import Path; from indexing.workspace import Workspace, WorkspaceOptions; "
        "from retrievers.engine.graph_state import GraphState; "
        f"ws = Workspace(Path({str(tree)!r}), "
        f"WorkspaceOptions(index_dir=Path({str(tmp_path / 'index')!r}))); "
        "ws.update(); state = GraphState(ws, persist=True); g = state.build(); assert state.loaded; "
        "(beta,) = g.resolve('beta'); names = sorted(g.definition(c).name for _, c in g.callers(beta.id)); "
        "names += [g.definition(c).name for c in g.callees(g.resolve('alpha')[0].id)]; "
        "print(names, 'networkx' in sys.modules, g.graph.number_of_edges() > 0, 'networkx' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["['alpha',", "'beta']", "False", "True", "True"]


def test_unresolved_sites_saved_apart(tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The unresolved call sites live in their own file, saved with the whole graph by the first process
    that needs it: without that file the whole pickle is not taken (built and saved again); if it
    vanishes after the whole graph loaded, they are built again from the store."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tree / "delta.py").write_text("def delta():\n    return nowhere(1)\n")
    sites = tmp_path / "index" / "derived" / "callgraph-unresolved.pickle"
    with open_ws(tree, tmp_path) as ws:
        ws.update()
        built = GraphState(ws, persist=True).build()
        assert [s.callee for s in built.unresolved_named("nowhere")] == ["nowhere"] and not sites.exists()
        first = GraphState(ws, persist=True)
        assert first.build().unresolved_named("nowhere") and first.loaded and sites.is_file()
        sites.unlink()
        missing = GraphState(ws, persist=True)
        assert missing.build().unresolved_named("nowhere") and missing.loaded and sites.is_file()
        late = GraphState(ws, persist=True)
        graph = late.build()
        assert late.loaded and graph.succ == built.succ  # (the whole graph, read from its pickle)
        sites.unlink()
        assert [s.callee for s in graph.unresolved_named("nowhere")] == ["nowhere"]


def test_a_warm_graph_opens_from_its_flat_arrays(tree: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A warm process opens the saved graph from its mapped arrays and definitions: PageRank, the
    definitions around a line and each definition's neighbours answer as the built graph's do, without
    the whole pickle; anything else (name resolution) loads it then, and the answers stay the same."""
    from graph.flat import SavedCallGraph

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tree / "delta.py").write_text("from gamma import Gamma\n\n\nclass Delta(Gamma):\n    pass\n")
    (tree / "epsilon.py").write_text("class Outer:\n    class Inner:\n        def method(self):\n"
                                     "            return 1\n")
    with open_ws(tree, tmp_path) as ws:
        ws.update()
        built = GraphState(ws, persist=True).build()
    with open_ws(tree, tmp_path) as ws:
        ws.update()
        warm = GraphState(ws, persist=True)
        opened = warm.build()
        assert warm.loaded and isinstance(opened, SavedCallGraph)
        assert opened.__dict__["_flat"]["defs"] is None  # read when first asked for
        ids = [d.id for d in built.definitions()]
        assert [d.id for d in opened.definitions()] == ids and opened.pagerank == built.pagerank
        assert [opened.neighbours(i) for i in ids] == [built.neighbours(i) for i in ids]
        assert opened.definitions_at("gamma.py", 6) == built.definitions_at("gamma.py", 6)
        assert opened.definition(ids[0]) == built.definition(ids[0])
        for name in ("beta", "BETA()", "run", "Gamma", "nowhere", ""):  # bare names: the saved definitions
            assert opened.resolve(name) == built.resolve(name), name
        for name in ("Gamma.run", "gamma.Gamma.run", "gamma.Gamma", "alpha.beta()"):  # dotted ones too
            assert opened.resolve(name) and opened.resolve(name) == built.resolve(name), name
        # dotted ones no module of the index can re-export (graph.flat_names): a qualified-name suffix,
        # the case-folded pass and a name the index lacks answer from them too
        for name in ("Inner.method", "gamma.GAMMA.RUN", "GAMMA.Run", "Outer.INNER.Method"):
            assert opened.resolve(name) and opened.resolve(name) == built.resolve(name), name
        for name in ("json.loads", "nowhere.Gamma.run", "gamma.beta", "alpha.Gamma"):  # (gamma.py neither
            assert opened.resolve(name) == built.resolve(name) == [], name  # defines nor imports beta)
        for i in ids:  # a definition's callers, subclasses and call weights: the saved caller arrays
            assert opened.callers_marked(i) == built.callers_marked(i)
            assert opened.incoming_calls(i) == built.incoming_calls(i)
            assert opened.subclasses(i) == built.subclasses(i)
            assert [opened.call_weight(c, i) for _, c in built.callers(i) if c is not None] == \
                [built.call_weight(c, i) for _, c in built.callers(i) if c is not None]
        for i in ids:  # and the calls out of it, with each edge's evidence and weight
            assert opened.outgoing_calls(i) == built.outgoing_calls(i)
            assert opened.outgoing_calls(i, confident=True) == built.outgoing_calls(i, confident=True)
            assert opened.callees(i) == built.callees(i)
            others = [*ids, -1]
            assert [opened.edge_evidence(i, c) for c in others] == [built.edge_evidence(i, c) for c in others]
            assert [opened.call_weight(i, c) for c in built.callees(i)] == \
                [built.call_weight(i, c) for c in built.callees(i)]
        assert any(opened.callers_marked(i) for i in ids) and any(opened.subclasses(i) for i in ids)
        assert any(opened.outgoing_calls(i) for i in ids)
        assert [sorted(opened.caller_ids(i)) for i in ids] == [sorted(built.caller_ids(i)) for i in ids]
        assert [opened.impact(i, 3) for i in ids] == [built.impact(i, 3) for i in ids]
        assert [opened.impact(i, 3, confident=True) for i in ids] == [built.impact(i, 3, True) for i in ids]
        assert opened.__dict__["_whole"] is None  # nothing above needed the pickle
        first = opened.definition(ids[0])
        assert opened.resolve("gamma.alpha") == built.resolve("gamma.alpha")  # an import: the whole graph's
        assert opened.__dict__["_whole"]
        assert opened.index.defs[ids[0]] is first  # the whole graph names the definitions already read
        assert callers(opened, "beta") == {"alpha"}
        assert [opened.neighbours(i) for i in ids] == [built.neighbours(i) for i in ids]
        assert opened.stats() == built.stats()


def test_a_flat_graph_whose_definitions_went_missing_loads_the_whole(tree: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The definitions of a flat graph come from its own columns (`indexing.definition_table`): the
    pickled list going bad changes nothing, and the whole graph still loads over the columns. Columns
    that do not fit fall back to the pickled list; with both gone, the whole graph is loaded instead.
    Every way answers the same."""
    import numpy as np

    from graph.flat import PREFIX, save_flat
    from indexing.array_folder import keyed_folder

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    pickled = tmp_path / "index" / "derived" / "callgraph-definitions.pickle"
    with open_ws(tree, tmp_path) as ws:
        ws.update()
        state = GraphState(ws, persist=True)
        built = state.build()
        key = state.derived_key()
        folder = keyed_folder(tmp_path / "index" / "derived", PREFIX, key)
        assert not pickled.exists()
        GraphState(ws, persist=True).build().stats()  # the first process needing the whole graph saves it
        good = pickled.read_bytes()
        opened = GraphState(ws, persist=True).build()
        assert type(opened).__name__ == "SavedCallGraph"
        pickled.write_bytes(b"garbage")  # (after the flat form opened)
        assert opened.definitions() == built.definitions() and opened.__dict__["_whole"] is None
        assert opened.definitions_at("gamma.py", 6) == built.definitions_at("gamma.py", 6)
        first = opened.definition(built.definitions()[0].id)
        assert opened.resolve("gamma.alpha") == built.resolve("gamma.alpha")  # an import: the whole graph
        assert opened.__dict__["_whole"] is not None and opened.index.defs[first.id] is first
        pickled.write_bytes(good)
        np.save(folder / "def_codes.npy", np.zeros((1, 8), dtype=np.int32))  # columns that do not fit
        fallback = GraphState(ws, persist=True).build()
        assert fallback.definitions() == built.definitions() and fallback.__dict__["_whole"] is None
        whole = GraphState(ws, persist=True).build()
        pickled.write_bytes(b"garbage")
        assert whole.definitions() == built.definitions() and whole.__dict__["_whole"] is not None
        assert whole.definitions_at("gamma.py", 6) == built.definitions_at("gamma.py", 6)
        assert save_flat(folder.parent, key, built)


def test_flat_positions_and_ranks_answer_like_dicts_in_either_id_order() -> None:
    """The flat graph's id positions and PageRank mapping: a binary search over ids in increasing
    order, a dict otherwise; both answer as the dicts they replace (NaN kept, unknown ids absent)."""
    import math

    import numpy as np

    from graph.flat import ArrayRanks, Positions

    for ids in ([3, 7, 12, 40], [12, 3, 40, 7]):
        position = Positions(np.asarray(ids, dtype=np.int64))
        ranks = ArrayRanks(position, np.asarray([0.5, 1.5, np.nan, 2.0]))
        assert [position.get(i) for i in ids] == [0, 1, 2, 3]
        assert position.get(5) is None and position.get(99) is None and position.get(0) is None
        assert 7 in position and 5 not in position and "7" not in position
        assert ranks[ids[1]] == 1.5 and math.isnan(ranks[ids[2]]) and ranks.get(5) is None
        assert ranks.get(5, 0.0) == 0.0 and 5 not in ranks and ids[3] in ranks
        assert list(ranks) == ids and len(ranks) == 4
        known = {i: v for i, v in ranks.items() if not math.isnan(v)}
        assert known == {ids[0]: 0.5, ids[1]: 1.5, ids[3]: 2.0}


def test_caller_arrays_that_do_not_fit_load_the_whole_graph(tree: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Caller arrays that are missing, of another shape or naming sites they do not hold are not read:
    the whole graph answers, the same as the built one. The signed shards an earlier version saved in
    their place are removed by the next save."""
    import numpy as np

    from graph.caller_arrays import PREFIX
    from indexing.array_folder import keyed_folder

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    derived = tmp_path / "index" / "derived"
    derived.mkdir(parents=True)
    (derived / "callgraph-callers-07.pickle").write_bytes(b"an older layout")
    with open_ws(tree, tmp_path) as ws:
        ws.update()
        state = GraphState(ws, persist=True)
        built = state.build()
        assert not (derived / "callgraph-callers-07.pickle").exists()
        folder = keyed_folder(derived, PREFIX, state.derived_key())
        ids = [d.id for d in built.definitions()]
        opened = GraphState(ws, persist=True).build()
        assert [opened.callers_marked(i) for i in ids] == [built.callers_marked(i) for i in ids]
        assert opened.__dict__["_whole"] is None  # (the arrays answered)
        good = np.load(folder / "in_site.npy")
        for broken in (good[:-1], np.full_like(good, 10**6)):  # one short; rows past the site table
            np.save(folder / "in_site.npy", broken)
            opened = GraphState(ws, persist=True).build()
            assert [opened.outgoing_calls(i) for i in ids] == [built.outgoing_calls(i) for i in ids]
            assert opened.__dict__["_whole"] is not None
            assert [opened.callers_marked(i) for i in ids] == [built.callers_marked(i) for i in ids]
        np.save(folder / "in_site.npy", good)
        (folder / "key").unlink()  # (half a folder: not of this key)
        opened = GraphState(ws, persist=True).build()
        assert [opened.subclasses(i) for i in ids] == [built.subclasses(i) for i in ids]
        assert opened.__dict__["_whole"] is not None
