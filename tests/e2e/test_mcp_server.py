"""`codeseek mcp` end to end: the real console script over stdio, driven by the `mcp` SDK's own client,
over a copy of tests/workspace/engine_sample. `--no-embed` keeps it fast (no model load): semantic
ranking is not what these tests check."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
from pathlib import Path

import pytest

from indexing.location import index_dir_for
from tests.e2e.mcp_support import CODESEEK, call, environment, mcp_session, text_of, wait_indexed

SAMPLE = Path(__file__).resolve().parents[1] / "workspace" / "engine_sample"
TOOLS = {"search", "definition", "callers", "callees", "impact", "related", "status"}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(SAMPLE, root)
    return root


def args(root: Path, *extra: str) -> list[str]:
    return ["mcp", "--root", str(root), "--no-embed", *extra]


async def test_tools_are_listed_read_only_with_advice_on_grep(workspace: Path, tmp_path: Path) -> None:
    async with mcp_session(str(CODESEEK), args(workspace), environment(tmp_path), tmp_path) as session:
        listed = (await session.list_tools()).tools
        assert {t.name for t in listed} == TOOLS
        by_name = {t.name: t for t in listed}
        for name in ("search", "definition", "callers"):
            assert "grep" in (by_name[name].description or ""), name
        for tool in listed:
            assert tool.annotations is not None and tool.annotations.read_only_hint is True
        schema = by_name["search"].input_schema
        assert schema["required"] == ["query"]
        limit = schema["properties"]["limit"]
        assert (limit["default"], limit["maximum"]) == (5, 50)
        assert set(by_name["impact"].input_schema["properties"]) == {"symbol", "depth", "limit"}


async def test_each_tool_answers_with_exact_locations(workspace: Path, tmp_path: Path) -> None:
    async with mcp_session(str(CODESEEK), args(workspace), environment(tmp_path), tmp_path) as session:
        status = await wait_indexed(session)
        assert (status["root"], status["state"], status["files"], status["error"]) == \
            (str(workspace), "text-only", 9, None)

        found = await call(session, "search", query="def apply_discount")
        top = found["results"][0]
        assert (top["path"], top["start_line"], top["end_line"], top["symbol"]) == \
            ("shop/pricing.py", 11, 15, "apply_discount")
        assert top["snippet"].startswith("def apply_discount(amount, percent):\n")
        exact = await call(session, "search", query='"card declined"', include=["shop/**"])
        assert [(r["path"], r["start_line"]) for r in exact["results"]] == [("shop/payments.py", 11)]

        definition = await call(session, "definition", symbol="shop.cart.Cart")
        assert [(d["path"], d["start_line"], d["end_line"]) for d in definition["definitions"]] == \
            [("shop/cart.py", 6, 30)]

        callers = await call(session, "callers", symbol="charge_card")
        [match] = callers["matches"]
        assert (match["definition"]["path"], match["definition"]["start_line"]) == ("shop/payments.py", 8)
        assert match["callers"] == [{"path": "shop/checkout.py", "line": 16, "caller": "checkout",
                                     "code": "charge = charge_card(card_number, amount)"}]

        callees = await call(session, "callees", symbol="handleCheckout")
        assert sorted((c["symbol"], c["path"], c["called_at"][0]) for c in callees["matches"][0]["callees"]) \
            == [("computeTotal", "web/util.js", 10), ("formatPrice", "web/util.js", 11),
                ("validateCart", "web/util.js", 9)]

        impact = await call(session, "impact", symbol="tax_for_region", depth=2)
        assert sorted((i["symbol"], i["path"], i["start_line"], i["depth"])
                      for i in impact["matches"][0]["impact"]) == \
            [("checkout", "shop/checkout.py", 13, 2), ("order_total", "shop/checkout.py", 7, 1)]

        related = await call(session, "related", symbol="Cart.total")
        [info] = related["matches"]
        assert info["signature"] == "def total(self, coupon_percent=0):"
        assert info["doc"] == "What the customer pays after the coupon."
        assert sorted((c["symbol"], c["path"], c["start_line"]) for c in info["called_by"]) == [
            ("order_total", "shop/checkout.py", 7), ("test_cart_total_with_coupon", "tests/test_cart.py", 11)]
        assert sorted(c["symbol"] for c in info["calls"]) == ["Cart.subtotal", "apply_discount"]


async def test_malformed_calls_get_tool_errors_and_the_server_keeps_serving(workspace: Path,
                                                                           tmp_path: Path) -> None:
    async with mcp_session(str(CODESEEK), args(workspace), environment(tmp_path), tmp_path) as session:
        await wait_indexed(session)
        bad: list[tuple[str, dict[str, object], str]] = [
            ("search", {}, "invalid arguments to search: missing required argument query"),
            ("search", {"query": ""}, 'query="": must be a non-empty string'),
            ("search", {"query": "cart", "limit": 0}, "limit=0: must be an integer from 1 to 50"),
            ("search", {"query": "cart", "limit": "abc"}, 'limit="abc": must be an integer from 1 to 50'),
            ("search", {"query": "cart", "limit": -5}, "limit=-5: must be an integer from 1 to 50"),
            ("search", {"query": "cart", "preset": "fastest"},
             'preset="fastest": must be one of quick, default, thorough'),
            ("search", {"query": "cart", "include": ["../secrets/**"]}, "escapes the workspace root"),
            ("definition", {"symbol": "total", "path": "/etc/passwd"}, "outside the workspace"),
            ("definition", {"symbol": "total", "line": 4}, "line needs path"),
            ("impact", {"symbol": "checkout", "depth": 99}, "depth=99: must be an integer from 1 to 6"),
            ("callers", {"symbol": 42}, "symbol=42: must be a string of 1 to 300 characters"),
            ("no_such_tool", {}, "Unknown tool"),
        ]
        for tool, arguments, message in bad:
            result = await session.call_tool(tool, arguments)
            assert result.is_error, (tool, arguments)
            assert message in text_of(result), (tool, arguments, text_of(result))
            assert "pydantic" not in text_of(result) and "\n" not in text_of(result), text_of(result)
        # Still serving, with the same answers.
        callers = await call(session, "callers", symbol="charge_card")
        assert callers["matches"][0]["callers"][0]["line"] == 16
        nothing = await call(session, "definition", symbol="no_such_symbol")
        assert nothing["definitions"] == [] and nothing["total"] == 0


def test_garbage_on_the_wire_is_survived(workspace: Path, tmp_path: Path) -> None:
    """Below the SDK client: a line that is not JSON and requests with a broken envelope or an unknown
    method. The server answers what it can and keeps serving; closing stdin ends it with status 0."""
    proc = subprocess.Popen([str(CODESEEK), *args(workspace)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env={**os.environ, **environment(tmp_path)},
                            bufsize=0)  # unbuffered: select() sees every line not yet read
    assert proc.stdin is not None and proc.stdout is not None

    def receive(timeout: float = 120.0) -> dict:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        assert ready, "no answer from the server"
        line = proc.stdout.readline()
        assert line, "the server closed its output"
        return dict(json.loads(line))

    def send(line: str) -> None:
        assert proc.stdin is not None
        proc.stdin.write(line.encode() + b"\n")
        proc.stdin.flush()

    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {},
                 "clientInfo": {"name": "raw", "version": "0"}}
        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}))
        assert receive()["id"] == 1
        send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        send("this is not JSON")
        send('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search"}}')
        send('{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": "not an object"}')
        send('{"jsonrpc": "2.0", "id": 4, "method": "no/such/method"}')
        send(json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                         "params": {"name": "definition", "arguments": {"symbol": "checkout"}}}))
        answers: dict[object, dict] = {}
        while 5 not in answers:
            message = receive()
            answers[message.get("id")] = message
        assert answers[2]["result"]["isError"] is True
        assert "query" in answers[2]["result"]["content"][0]["text"]
        assert answers[4]["error"]["code"] == -32601
        assert all("error" in m for i, m in answers.items() if i not in (2, 4, 5))  # 3 / parse: if any
        found = json.loads(answers[5]["result"]["content"][0]["text"])
        assert [(d["path"], d["start_line"]) for d in found["definitions"]] == [("shop/checkout.py", 13)]
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def test_serves_the_index_the_cli_built_and_follows_edits(workspace: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    env = environment(tmp_path)
    monkeypatch.delenv("CODESEEK_INDEX_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", env["XDG_CACHE_HOME"])
    cli = subprocess.run([str(CODESEEK), "search", "apply_discount", "--root", str(workspace), "--no-embed",
                          "--json"], env={**os.environ, **env}, capture_output=True, text=True, timeout=300)
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["results"][0]["path"] == "shop/pricing.py"
    (workspace / ".codeseek").touch()  # a marker: the root is found from the working directory
    async with mcp_session(str(CODESEEK), ["mcp", "--no-embed"], env, workspace) as session:  # root: cwd
        status = await wait_indexed(session)
        # Same location as `codeseek search --root` (the user cache per root), nothing parsed again.
        assert status["index_dir"] == str(index_dir_for(workspace))
        assert status["last_refresh"]["parsed"] == 0
        (workspace / "shop" / "gift.py").write_text(
            "from shop.payments import charge_card\n\n\ndef buy_gift_card(card, amount):\n"
            "    return charge_card(card, amount)\n")
        for _ in range(600):  # each call answers at once; one made 5 s after a refresh queues the next
            callers = await call(session, "callers", symbol="charge_card")
            sites = {(c["path"], c["line"]) for c in callers["matches"][0]["callers"]}
            if ("shop/gift.py", 5) in sites:
                break
            await _sleep(0.1)
        assert sites == {("shop/checkout.py", 16), ("shop/gift.py", 5)}


async def _sleep(seconds: float) -> None:
    import asyncio

    await asyncio.sleep(seconds)


@pytest.mark.slow
async def test_with_embeddings_search_is_semantic_and_related_lists_similar_code(workspace: Path,
                                                                                 tmp_path: Path) -> None:
    server_args = ["mcp", "--root", str(workspace)]
    async with mcp_session(str(CODESEEK), server_args, environment(tmp_path), tmp_path) as session:
        status = await wait_indexed(session, timeout=600, states=("ready",))
        assert status["embedded"] == status["chunks"] and status["model"]  # whichever model is packaged
        prose = await call(session, "search", query="take money from the customer's credit card")
        assert "semantic" in prose["modalities"]
        assert (prose["results"][0]["path"], prose["results"][0]["start_line"]) == ("shop/payments.py", 1)
        [info] = (await call(session, "related", symbol="apply_discount"))["matches"]
        similar = [(s["path"], s["start_line"], s["symbol"]) for s in info["similar"]]
        assert len(similar) == 3 and similar[0] == ("shop/checkout.py", 20, "loyalty_price")
        assert not any(path == "shop/pricing.py" and 11 <= start <= 15 for path, start, _ in similar)


async def test_status_at_start_says_loading_for_an_index_on_disk(workspace: Path, tmp_path: Path) -> None:
    """Right after the server starts, an index the CLI completed is being opened, not indexed: status
    says "loading" with the stored counts (never "indexing, embedded 0"), then text-only."""
    env = environment(tmp_path)
    built = subprocess.run([str(CODESEEK), "index", str(workspace), "--no-embed", "--quiet"],
                           env={**os.environ, **env}, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    async with mcp_session(str(CODESEEK), args(workspace), env, tmp_path) as session:
        first = await call(session, "status")
        assert first["state"] in ("loading", "text-only"), first
        assert (first["files"], first["chunks"]) == (9, 17), first
        if first["state"] == "loading":
            assert first["embedded"] is None, first
        assert (await wait_indexed(session))["state"] == "text-only"
