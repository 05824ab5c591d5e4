"""lsp_server/mcp/service.py over a copy of tests/workspace/engine_sample (real index, no embeddings):
argument checks, default limits and trimming, per-definition answers, background refresh."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_server.mcp.service import Limits, McpOptions, McpService, ToolInputError

SAMPLE = Path(__file__).resolve().parents[1] / "workspace" / "engine_sample"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpService]:
    tmp = tmp_path_factory.mktemp("mcp")
    shutil.copytree(SAMPLE, tmp / "ws")
    svc = McpService(tmp / "ws", McpOptions(index_dir=tmp / "index", embeddings=False, refresh_interval=1.0))
    svc.start()
    assert svc.phase1_done.wait(120)
    yield svc
    svc.stop()


def wait_idle(svc: McpService, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while svc.refreshing():
        assert time.monotonic() < deadline, "refresh did not finish"
        time.sleep(0.05)


@pytest.mark.parametrize("call, message", [
    (lambda s: s.search("cart", limit=0), "limit must be between 1 and 50, got 0"),
    (lambda s: s.search("cart", limit=True), "limit must be an integer"),
    (lambda s: s.search("cart", snippet_lines=201), "snippet_lines must be between 0 and 200"),
    (lambda s: s.search("   "), "query is empty"),
    (lambda s: s.search("cart", preset="fast"), "unknown preset 'fast'"),
    (lambda s: s.search("cart", exclude=["/etc/**"]), "is absolute"),
    (lambda s: s.definition(""), "symbol is empty"),
    (lambda s: s.definition("a\nb"), "symbol must be one name"),
    (lambda s: s.definition("total", line=3), "line needs path"),
    (lambda s: s.definition("total", path="shop/cart.py", line=0), "line must be 1 or more"),
    (lambda s: s.definition("total", path="../outside.py"), "outside the workspace"),
    (lambda s: s.impact("checkout", depth=7), "depth must be between 1 and 6"),
    (lambda s: s.callers("checkout", limit=501), "limit must be between 1 and 500"),
])
def test_bad_arguments_say_what_is_wrong(service: McpService, call, message: str) -> None:
    with pytest.raises(ToolInputError, match=message.replace("(", r"\(")):
        call(service)


def test_search_defaults_are_small_and_more_can_be_asked(service: McpService) -> None:
    doc = service.search("cart total price")
    assert 1 <= len(doc["results"]) <= Limits().results
    assert "timings_ms" not in doc and set(doc) >= {"query", "intent", "strategy", "results", "index"}
    for r in doc["results"]:
        assert "uri" not in r and "explain" not in r
        assert len(r["snippet"].splitlines()) <= Limits().snippet_lines + 1  # + the "..." line
    more = service.search("cart total price", limit=8, explain=True)
    assert len(more["results"]) == 8 and "timings_ms" in more
    assert all("explain" in r for r in more["results"])
    top = service.search("def apply_discount", snippet_lines=2)["results"][0]
    assert (top["path"], top["start_line"], top["end_line"]) == ("shop/pricing.py", 11, 15)
    assert top["snippet"] == ('def apply_discount(amount, percent):\n'
                              '    """Take a percentage off an amount, never below zero."""\n...')
    assert service.search("def apply_discount", snippet_lines=0)["results"][0]["snippet"] == ""
    full = service.search("def apply_discount", snippet_lines=50)["results"][0]["snippet"]
    assert full.splitlines()[-1] == "    return round_money(max(amount * (100 - percent) / 100, 0))"


def test_definition_with_code_and_unknown_names(service: McpService) -> None:
    doc = service.definition("Cart.total")
    assert doc["total"] == 1 and doc["index_state"] == "text-only"
    [d] = doc["definitions"]
    assert (d["symbol"], d["kind"], d["path"], d["start_line"], d["end_line"]) == \
        ("Cart.total", "method", "shop/cart.py", 28, 30)
    assert d["signature"] == "def total(self, coupon_percent=0):"
    assert d["doc"] == "What the customer pays after the coupon."
    assert d["snippet"].endswith("return apply_discount(self.subtotal(), coupon_percent)")
    assert service.definition("no_such_thing") == {"symbol": "no_such_thing", "definitions": [], "total": 0,
                                                    "no_match": 'no definition named "no_such_thing"',
                                                    "index_state": "text-only"}


def test_graph_tools_answer_per_definition_with_counts(service: McpService) -> None:
    callers = service.callers("apply_discount", limit=2)
    [match] = callers["matches"]
    assert match["definition"]["path"] == "shop/pricing.py" and match["count"] == 3
    assert len(match["callers"]) == 2
    everyone = service.callers("apply_discount")["matches"][0]["callers"]
    assert sorted((c["path"], c["line"], c["caller"]) for c in everyone) == [
        ("shop/cart.py", 30, "Cart.total"), ("shop/checkout.py", 22, "loyalty_price"),
        ("tests/test_cart.py", 8, "test_discount_takes_a_percentage_off")]
    assert {c["code"] for c in everyone} >= {"return apply_discount(amount, 5)"}
    impact = service.impact("tax_for_region", depth=1)
    assert impact["depth"] == 1
    assert [(i["symbol"], i["depth"]) for i in impact["matches"][0]["impact"]] == [("order_total", 1)]
    related = service.related("order_total")["matches"][0]
    assert [c["symbol"] for c in related["called_by"]] == ["checkout"]
    assert related["calls_count"] == 2 and related["similar"] == []


def test_refresh_in_the_background_picks_up_edits(service: McpService) -> None:
    wait_idle(service)
    new = service.root / "shop" / "gift.py"
    new.write_text("from shop.payments import charge_card\n\n\ndef buy_gift_card(card, amount):\n"
                   "    return charge_card(card, amount)\n")
    try:
        deadline = time.monotonic() + 60
        while not service.definition("buy_gift_card")["definitions"]:  # answers while it refreshes
            assert time.monotonic() < deadline, "the new definition never appeared"
            time.sleep(0.1)
        callers = service.callers("charge_card")["matches"][0]["callers"]
        assert ("shop/gift.py", 5, "buy_gift_card") in {(c["path"], c["line"], c["caller"]) for c in callers}
        assert service.status()["error"] is None
    finally:
        new.unlink()


def test_without_a_watcher_a_call_waits_for_the_refresh_it_starts(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE, tmp_path / "ws")
    options = McpOptions(index_dir=tmp_path / "index", embeddings=False, refresh_interval=0.2,
                         fresh_wait=60.0, watch=False)
    svc = McpService(tmp_path / "ws", options)
    svc.start()
    try:
        assert svc.definition("apply_discount")["total"] == 1  # waits for the first phase 1
        wait_idle(svc)
        (svc.root / "shop" / "pricing.py").write_text("def apply_discount(amount):\n    return amount\n")
        time.sleep(0.3)  # past refresh_interval: the next call starts a refresh and waits for phase 1
        [d] = svc.definition("apply_discount")["definitions"]
        assert (d["start_line"], d["end_line"], d["signature"]) == (1, 2, "def apply_discount(amount):")
        assert svc.definition("tax_for_region")["total"] == 0
    finally:
        svc.stop()


def test_with_the_watcher_calls_never_wait_and_an_edit_shows_within_two_seconds(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE, tmp_path / "ws")
    options = McpOptions(index_dir=tmp_path / "index", embeddings=False, refresh_interval=0.2,
                         fresh_wait=60.0)  # were it asked, a refresh would be waited for a minute
    svc = McpService(tmp_path / "ws", options)
    svc.start()
    try:
        assert svc.definition("apply_discount")["total"] == 1  # waits for the first phase 1
        wait_idle(svc)
        deadline = time.monotonic() + 10
        while not svc.watching():
            assert time.monotonic() < deadline, "the watcher never started"
            time.sleep(0.05)
        time.sleep(0.5)  # past refresh_interval: without the watcher the next call would refresh
        started = time.monotonic()
        svc.definition("apply_discount")
        assert time.monotonic() - started < 0.5  # it started no refresh and waited for none
        (svc.root / "shop" / "pricing.py").write_text("def apply_discount(amount):\n    return amount\n")
        written = time.monotonic()
        while True:
            [d] = svc.definition("apply_discount")["definitions"]
            if d["signature"] == "def apply_discount(amount):":
                break
            assert time.monotonic() - written < 2.0, "the edit was not visible within 2 s"
            time.sleep(0.05)
    finally:
        svc.stop()


def test_the_transformer_tier_fills_in_the_background_and_status_says_how_much(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE, tmp_path / "ws")
    svc = McpService(tmp_path / "ws", McpOptions(index_dir=tmp_path / "index"))  # the packaged models
    svc.start()
    try:
        deadline = time.monotonic() + 120
        while True:
            deep = svc.status()["transformer"]
            if deep and deep["embedded"] and not deep["pending"]:
                break
            assert time.monotonic() < deadline, f"the transformer tier never filled: {svc.status()}"
            time.sleep(0.2)
        assert deep["model"] == "all-MiniLM-L6-v2" and deep["embedded"] == svc.status()["chunks"]
    finally:
        svc.stop()


def test_no_transformer_fill_when_asked_not_to(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE, tmp_path / "ws")
    svc = McpService(tmp_path / "ws", McpOptions(index_dir=tmp_path / "index", transformer_background=False))
    svc.start()
    try:
        wait_idle(svc)
        deep = svc.status()["transformer"]
        assert deep is not None and deep["embedded"] == 0 and deep["pending"] == svc.status()["chunks"]
    finally:
        svc.stop()
