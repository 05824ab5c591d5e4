"""The domain facade (retrievers/codebase.py) and the navigation it serves
(retrievers/navigation/references.py,
graph_queries.py, workspace_symbols.py) on tests/workspace/engine_sample: real tree-sitter parses,
SQLite, the call graph, with exact places."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from indexing.records import Definition
from indexing.workspace import Workspace, WorkspaceOptions
from retrievers.codebase import Codebase, DefinitionKey, RetrieverError, Span, Target
from retrievers.engine.graph_state import GraphState
from retrievers.engine.search_engine import SearchRequest
from retrievers.navigation import graph_queries
from retrievers.navigation.references import word_at
from retrievers.navigation.workspace_symbols import Symbol, fuzzy_score, merge
from tests.unit.engine_sample import copy_sample, sample_engine


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Codebase]:
    with sample_engine(tmp_path_factory.mktemp("codebase")) as engine:
        yield Codebase.of(engine)


def _at(codebase: Codebase, path: str, line: int, word: str) -> Target | None:
    """What the cursor one character into `word` on `line` names."""
    text = codebase.read_bytes(path).decode().splitlines()[line - 1]
    return codebase.definitions(path, line, text, text.index(word) + 1)


def test_search_and_status_answer_from_the_engine(shop: Codebase) -> None:
    result = shop.search(SearchRequest("apply_discount", limit=3)).to_json()
    assert (result["results"][0]["path"], result["results"][0]["start_line"]) == ("shop/pricing.py", 11)
    status = shop.status()
    assert {k: status[k] for k in ("state", "files", "chunks", "definitions", "embedded", "model")} == {
        "state": "text-only", "files": 9, "chunks": 17, "definitions": 23, "embedded": 0, "model": None}


def test_definitions_at_a_call_name_the_callee(shop: Codebase) -> None:
    target = _at(shop, "shop/checkout.py", 15, "order_total")
    assert target is not None and target.word == "order_total"
    assert [(d.path, d.name_line) for d in target.definitions] == [("shop/checkout.py", 7)]
    assert shop.definitions("shop/checkout.py", 15, "    amount = order_total(cart)", 2) is None  # blanks
    assert [d.qualified_name for d in shop.lookup("order_total") or []] == ["order_total"]


def test_references_are_call_sites_then_the_declaration(shop: Codebase) -> None:
    target = _at(shop, "shop/pricing.py", 11, "apply_discount")
    assert target is not None
    assert shop.references(target, True) == [
        Span("shop/pricing.py", 11, 4, 18), Span("shop/cart.py", 30, 15, 29),
        Span("shop/checkout.py", 22, 11, 25), Span("tests/test_cart.py", 8, 11, 25)]
    assert shop.references(target, False)[0] == Span("shop/cart.py", 30, 15, 29)


def test_references_of_a_name_without_calls_are_its_occurrences(shop: Codebase) -> None:
    target = _at(shop, "shop/pricing.py", 3, "TAX_RATES")
    assert target is not None and [d.kind for d in target.definitions] == ["constant"]
    assert shop.references(target, True) == [Span("shop/pricing.py", 3, 0, 9),
                                             Span("shop/pricing.py", 20, 11, 20)]
    assert shop.references(target, False) == [Span("shop/pricing.py", 20, 11, 20)]


def test_call_hierarchy_both_ways(shop: Codebase) -> None:
    [apply_discount] = shop.lookup("apply_discount") or []
    incoming = shop.call_hierarchy(apply_discount, "incoming") or []
    assert [(c.definition.qualified_name, [(s.path, s.line) for s in c.sites]) for c in incoming] == [
        ("Cart.total", [("shop/cart.py", 30)]), ("loyalty_price", [("shop/checkout.py", 22)]),
        ("test_discount_takes_a_percentage_off", [("tests/test_cart.py", 8)])]
    [checkout] = shop.lookup("shop/checkout.py:checkout") or []
    outgoing = shop.call_hierarchy(checkout, "outgoing") or []
    assert {c.definition.qualified_name: [s.line for s in c.sites] for c in outgoing} == {
        "order_total": [15], "charge_card": [16]}
    assert [(s.line, c.qualified_name if c else None) for s, c in shop.call_sites(apply_discount)] == [
        (30, "Cart.total"), (22, "loyalty_price"), (8, "test_discount_takes_a_percentage_off")]
    assert [(d.qualified_name, depth) for d, depth in shop.impact(apply_discount, 2)] == [
        ("Cart.total", 1), ("loyalty_price", 1), ("test_discount_takes_a_percentage_off", 1),
        ("order_total", 2), ("test_cart_total_with_coupon", 2)]


def test_find_takes_an_item_back_by_id_else_by_name_near_its_line(shop: Codebase) -> None:
    [total] = shop.lookup("Cart.total") or []
    assert shop.find(DefinitionKey.of(total)) == total
    moved = DefinitionKey(10**9, "Cart.total", "shop/cart.py", 1)  # a stale id
    assert shop.find(moved) == total
    assert shop.find(DefinitionKey(None, "no_such_thing", None)) is None
    assert shop.call_hierarchy(DefinitionKey(None, "no_such_thing", None), "incoming") is None


def test_related_is_callers_callees_and_no_similar_code_without_vectors(shop: Codebase) -> None:
    [order_total] = shop.lookup("order_total") or []
    info = shop.related(order_total, per_definition=True)
    assert [d.qualified_name for d in info.callers] == ["checkout"]
    assert {d.qualified_name for d in info.callees} == {"Cart.total", "tax_for_region"}
    assert info.similar == [] and shop.similar(order_total) == []


def test_symbols_rank_by_match_then_merge_across_roots(shop: Codebase) -> None:
    assert [s.definition.name for s in shop.symbols("apply")] == ["apply_discount"]
    dotted = shop.symbols("Cart.tot")
    assert dotted[0].definition.qualified_name == "Cart.total" and dotted[0].score == pytest.approx(83.0)
    assert [(s.definition.name, s.score) for s in shop.symbols("total")][:2] == [("total", 100.0),
                                                                                ("subtotal", 66.25)]


def _symbol(name: str, score: float, rank: float, path: str = "m.py") -> Symbol:
    return Symbol(Definition(name, name, "function", path, 1, 2, 0, 9, 1, 4, f"def {name}():"), score, rank)


def test_merge_orders_several_roots_as_one_list() -> None:
    a = [_symbol("parse", 100.0, 0.1), _symbol("parser", 85.0, 0.9)]
    b = [_symbol("parse", 100.0, 0.5), _symbol("parse", 100.0, 0.1, "a.py"), _symbol("parse_all", 84.0, 1.0)]
    merged = merge([("a", a), ("b", b)], limit=4)
    assert [(owner, s.definition.path, s.rank) for owner, s in merged] == [
        ("b", "m.py", 0.5), ("b", "a.py", 0.1), ("a", "m.py", 0.1), ("a", "m.py", 0.9)]


def test_graph_report_renders_each_definition(shop: Codebase) -> None:
    report = shop.graph_report("apply_discount", "callers", "json")
    assert [d.name for d in report.definitions] == ["apply_discount"] and report.listing == ""
    assert len(json.loads(report.outputs[0])["callers"]) == 3
    assert shop.graph_report("no_such_name", "callees").definitions == []


def test_a_definition_from_an_older_snapshot_is_found_again(tmp_path: Path) -> None:
    with sample_engine(tmp_path) as engine:
        codebase = Codebase.of(engine)
        [before] = codebase.lookup("apply_discount") or []
        pricing = tmp_path / "ws" / "shop" / "pricing.py"
        pricing.write_text("# moved down two lines\n\n" + pricing.read_text())
        engine.refresh()
        [after] = codebase.lookup("apply_discount") or []
        assert after.name_line == before.name_line + 2
        callers = codebase.call_hierarchy(before, "incoming") or []
        assert [c.definition.qualified_name for c in callers] == [
            "Cart.total", "loyalty_price", "test_discount_takes_a_percentage_off"]
        assert codebase.related(before).definition == after


def test_navigation_only_codebase_has_no_search(tmp_path: Path) -> None:
    with Workspace(copy_sample(tmp_path), WorkspaceOptions(index_dir=tmp_path / "index")) as ws:
        ws.update()
        codebase = Codebase(ws, GraphState(ws).build)
        assert codebase.has_graph() and codebase.status()["state"] == "empty"
        assert [d.path for d in codebase.lookup("charge_card") or []] == ["shop/payments.py"]
        with pytest.raises(RetrieverError, match="navigation only"):
            codebase.search(SearchRequest("x"))


def test_similar_code_is_listed_once_per_definition_at_its_name_line(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    body = "".join(f"    value_{i} = compute({i})\n" for i in range(60))
    method_body = "    " + body.replace("\n", "\n    ")
    (root / "a.py").write_text(f"import x\n\n\n@decorate\ndef target():\n{body}    return 1\n\n\n"
                               f"class Other:\n    def url_for(self):\n{method_body}    return 2\n")
    with Workspace(root, WorkspaceOptions(index_dir=tmp_path / "index")) as ws:
        ws.update()
        parts = [c for c in ws.store.chunks() if c.symbol == "Other.url_for"]
        own = next(c for c in ws.store.chunks() if c.symbol == "target")
        target = next(d for d in ws.store.definitions() if d.name == "target")
        near = [(parts[1], 0.9), (parts[0], 0.8), (own, 0.75), (parts[2], 0.7)]
        kept = graph_queries.distinct_similar(target, near)
        name_line = graph_queries.name_line_of(parts[1], ws.store.definitions_for_path("a.py"))
    assert len(parts) >= 2  # a long method split into several chunks
    assert kept == [(parts[1], 0.9)]  # its other parts and the definition itself are dropped
    assert parts[1].start_line != 70 and name_line == 70  # a later part points at the method's name


def test_fuzzy_score_orders_match_quality() -> None:
    names = ["parse_date", "parse_feed", "test_parse_date_iso", "Parse_Date", "prepare_statement"]
    scored = sorted((s, n) for n in names if (s := fuzzy_score("parse_date", n)) is not None)
    assert [n for _, n in reversed(scored)] == ["parse_date", "Parse_Date", "test_parse_date_iso"]
    assert fuzzy_score("fRT", "formatRelativeTime") is not None
    assert fuzzy_score("zz", "formatRelativeTime") is None
    boundary = fuzzy_score("pd", "parse_date")
    inner = fuzzy_score("pd", "spudding")
    assert boundary is not None and inner is not None and boundary > inner


def test_word_at() -> None:
    line = "    return parse_date(item.findtext('x')) + $el"
    assert word_at(line, line.index("parse_date") + 3) == "parse_date"
    assert word_at(line, line.index("parse_date") + len("parse_date")) == "parse_date"  # just after
    assert word_at(line, line.index("$el")) == "$el"
    assert word_at(line, 1) is None
