"""retrievers/navigation/graph_queries.py on real call graphs:
 a tiny workspace with two same-named functions, and
tests/workspace/engine_sample (real tree-sitter parses, SQLite, networkx)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from graph.callgraph import CallGraph
from indexing.workspace import Workspace, WorkspaceOptions
from retrievers.engine.graph_state import GraphState
from retrievers.navigation import graph_queries

SAMPLE = Path(__file__).resolve().parents[1] / "workspace" / "engine_sample"

TWINS = {
    "store/disk.py": "def save(record):\n    return record\n",
    "store/memory.py": ("def save(record):\n    return [record]\n\n\n"
                        "def keep(record):\n    return save(record)\n"),
    "app.py": "from store.disk import save\n\n\ndef run(record):\n    return save(record)\n",
}


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CallGraph]:
    tmp = tmp_path_factory.mktemp("twins")
    root = tmp / "ws"
    for rel, text in TWINS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    with Workspace(root, WorkspaceOptions(index_dir=tmp / "index")) as ws:
        ws.update()
        yield GraphState(ws).build()


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workspace, CallGraph]]:
    tmp = tmp_path_factory.mktemp("shop")
    shutil.copytree(SAMPLE, tmp / "ws")
    with Workspace(tmp / "ws", WorkspaceOptions(index_dir=tmp / "index")) as ws:
        ws.update()
        yield ws, GraphState(ws).build()


def paths(defs: list) -> list[str]:
    return [d.path for d in defs]


def test_rank_candidates_prefers_the_call_resolved_on_that_line_then_the_file(twins: CallGraph) -> None:
    both = twins.resolve("save")
    assert sorted(paths(both)) == ["store/disk.py", "store/memory.py"]
    # app.py line 5 calls the imported store.disk.save: that one first, whatever the input order.
    for order in (both, both[::-1]):
        assert paths(graph_queries.rank_candidates(twins, order, "app.py", 5, "save")) == \
            ["store/disk.py", "store/memory.py"]
    # memory.py line 6 calls its own save.
    mine = graph_queries.rank_candidates(twins, both, "store/memory.py", 6, "save")
    assert paths(mine)[0] == "store/memory.py"
    # No call on the line: the file where the name is used decides.
    assert paths(graph_queries.rank_candidates(twins, both[::-1], "store/disk.py", 1, "save"))[0] == \
        "store/disk.py"


def test_lookup_takes_written_forms_and_the_place_of_use(twins: CallGraph) -> None:
    assert paths(graph_queries.lookup(twins, "store/memory.py:save")) == ["store/memory.py"]
    assert paths(graph_queries.lookup(twins, "save()", "app.py", 5))[0] == "store/disk.py"
    assert paths(graph_queries.lookup(twins, "save", "store/memory.py"))[0] == "store/memory.py"
    assert graph_queries.lookup(twins, "no_such_name") == []


def test_callers_and_callees_are_distinct_definitions(shop: tuple[Workspace, CallGraph]) -> None:
    _, graph = shop
    [apply_discount] = graph.resolve("apply_discount")
    callers = {d.qualified_name for d in graph_queries.callers_of(graph, apply_discount)}
    assert callers == {"Cart.total", "loyalty_price", "test_discount_takes_a_percentage_off"}
    [checkout] = graph.resolve("shop/checkout.py:checkout")
    callees = graph_queries.callees_of(graph, checkout)
    assert {d.qualified_name for d in callees} == {"order_total", "charge_card"}
    ranks = [graph.pagerank.get(d.id, 0.0) for d in callees]
    assert ranks == sorted(ranks, reverse=True)  # most central first


def test_related_without_vectors_has_no_similar_code(shop: tuple[Workspace, CallGraph]) -> None:
    ws, graph = shop
    [order_total] = graph.resolve("order_total")
    info = graph_queries.related(graph, order_total)
    assert [d.qualified_name for d in info.callers] == ["checkout"]
    assert {d.qualified_name for d in info.callees} == {"Cart.total", "tax_for_region"}
    assert info.similar == []
    assert graph_queries.similar_to(None, ws.store, order_total) == []
