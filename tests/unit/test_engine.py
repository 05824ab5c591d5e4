"""SearchEngine on a small real workspace (tests/workspace/engine_sample: Python + JavaScript).

Real tree-sitter parses, tantivy, SQLite and the call graph; the semantic retriever (the packaged
model) only in the tests marked slow.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from indexing.workspace import Workspace, WorkspaceOptions
from retrievers.base import QueryError
from retrievers.engine.answer import RESULT_KEYS, TOP_KEYS
from retrievers.engine.request import MAX_QUERY_CHARS
from retrievers.engine.search_engine import EngineOptions, SearchEngine, SearchRequest
from retrievers.ranking.profile import INTENT_WEIGHTS
from tests.unit.engine_sample import copy_sample, opened, sample_engine


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with sample_engine(tmp_path_factory.mktemp("engine")) as eng:
        yield eng


def search(engine: SearchEngine, query: str, **kw: Any) -> dict[str, Any]:
    return engine.search(SearchRequest(query, **kw)).to_json()


def places(result: dict[str, Any]) -> list[tuple[str, int, int]]:
    return [(r["path"], r["start_line"], r["end_line"]) for r in result["results"]]


# -- schema -------------------------------------------------------------------------------------------

def test_result_has_exactly_the_schema(engine: SearchEngine) -> None:
    result = search(engine, "apply_discount")
    assert tuple(result) == TOP_KEYS
    assert set(result["intent"]) == {"name", "confidence", "source"}
    assert result["strategy"] in ("direct", "fused")
    assert set(result["index"]) >= {"state", "files", "chunks", "embedded", "model"}
    assert result["index"]["state"] == "text-only"  # embeddings off: says so
    assert result["index"]["model"] is None
    assert result["index"]["files"] == 9
    first = result["results"][0]
    assert tuple(first)[: len(RESULT_KEYS)] == RESULT_KEYS
    assert first["uri"].startswith("file://") and first["uri"].endswith("/shop/pricing.py")
    assert isinstance(first["score"], float) and first["labels"] == ["source"]
    assert "timings_ms" in result and result["timings_ms"]["total"] >= 0


# -- definitions, identifiers -------------------------------------------------------------------------

def test_identifier_finds_its_definition_first(engine: SearchEngine) -> None:
    result = search(engine, "apply_discount")
    assert result["intent"]["name"] == "find_definition"
    assert places(result)[0] == ("shop/pricing.py", 11, 15)
    assert result["results"][0]["symbol"] == "apply_discount"
    assert result["results"][0]["snippet"].startswith("def apply_discount(amount, percent):")


def test_def_keyword_takes_the_direct_structural_route(engine: SearchEngine) -> None:
    result = search(engine, "class Cart")
    assert result["strategy"] == "direct" and result["modalities"] == ["structural"]
    top = result["results"][0]
    assert (top["path"], top["start_line"], top["symbol"]) == ("shop/cart.py", 6, "Cart")
    assert top["kind"] == "class"
    assert "explain" in top and top["explain"]["route"] == "direct"


def test_javascript_function_definition(engine: SearchEngine) -> None:
    result = search(engine, "computeTotal")
    assert places(result)[0] == ("web/util.js", 6, 12)
    assert result["results"][0]["language"] == "javascript"


def test_unknown_definition_falls_back_to_fused(engine: SearchEngine) -> None:
    result = search(engine, "def no_such_function_anywhere")
    assert result["strategy"] == "fused"


# -- exact strings ------------------------------------------------------------------------------------

def test_exact_string_points_at_the_matching_line(engine: SearchEngine) -> None:
    result = search(engine, '"card declined"')
    assert result["intent"]["name"] == "exact_match"
    assert result["strategy"] == "direct" and result["modalities"] == ["text"]
    assert places(result) == [("shop/payments.py", 11, 11)]
    assert "card declined" in result["results"][0]["snippet"]


def test_exact_string_lists_every_occurrence_source_first(engine: SearchEngine) -> None:
    result = search(engine, '"validateCart("')
    assert places(result) == [("web/server.js", 9, 9), ("web/server.js", 18, 18), ("web/util.js", 17, 17)]
    calls = search(engine, '"apply_discount("')
    assert places(calls) == [("shop/cart.py", 30, 30), ("shop/checkout.py", 22, 22),
                             ("shop/pricing.py", 11, 11), ("tests/test_cart.py", 8, 8)]


def test_regex_like_string_is_literal(engine: SearchEngine) -> None:
    result = search(engine, '"(amount * (100 - percent)"')
    assert places(result) == [("shop/pricing.py", 15, 15)]
    assert search(engine, "a.*(b[")["results"] is not None  # no regex error


# -- references and impact ----------------------------------------------------------------------------

def test_who_calls_returns_every_call_site(engine: SearchEngine) -> None:
    result = search(engine, "who calls apply_discount")
    assert result["intent"]["name"] == "find_references"
    assert result["strategy"] == "direct"
    sites = {(r["path"], r["start_line"], r["symbol"]) for r in result["results"]}
    assert sites == {
        ("shop/cart.py", 30, "Cart.total"),
        ("shop/checkout.py", 22, "loyalty_price"),
        ("tests/test_cart.py", 8, "test_discount_takes_a_percentage_off"),
    }
    assert all(r["start_line"] == r["end_line"] for r in result["results"])
    assert result["results"][-1]["labels"] == ["test"]  # source call sites first


def test_who_calls_a_javascript_function(engine: SearchEngine) -> None:
    result = search(engine, "who calls validateCart")
    assert {(r["path"], r["start_line"]) for r in result["results"]} == {("web/server.js", 9),
                                                                           ("web/server.js", 18)}


def test_impact_returns_transitive_callers_with_depth(engine: SearchEngine) -> None:
    result = search(engine, "what breaks if I change round_money")
    assert result["intent"]["name"] == "impact_analysis"
    depths = {r["symbol"]: r["depth"] for r in result["results"]}
    assert depths["apply_discount"] == 1 and depths["tax_for_region"] == 1
    assert depths["Cart.subtotal"] == 1
    assert depths["Cart.total"] == 2 and depths["order_total"] == 2 and depths["loyalty_price"] == 2
    assert [r["depth"] for r in result["results"]] == sorted(r["depth"] for r in result["results"])


# -- natural language, labels, scope ------------------------------------------------------------------

def test_question_finds_code_and_demotes_tests_and_docs(engine: SearchEngine) -> None:
    result = search(engine, "take a percentage off the price with a coupon")
    assert result["strategy"] == "fused"
    paths = [r["path"] for r in result["results"]]
    assert paths[0].startswith("shop/")
    first_test = min((i for i, p in enumerate(paths) if p.startswith(("tests/", "docs/"))), default=99)
    first_source = min(i for i, p in enumerate(paths) if p.startswith("shop/"))
    assert first_source < first_test


def test_file_saturation_and_folding(tmp_path: Path) -> None:
    with sample_engine(tmp_path, EngineOptions(embeddings=False, ranking={"file_decay": 0.0})) as strict:
        result = search(strict, "cart item quantity price")
        paths = [r["path"] for r in result["results"]]
        assert len(paths) == len(set(paths))  # one result per file...
        cart = next(r for r in result["results"] if r["path"] == "shop/cart.py")
        assert cart["also"]  # ...the file's other hits folded under it
        assert all(a["start_line"] != cart["start_line"] for a in cart["also"])


def test_default_saturation_lists_a_file_again_only_when_strong(engine: SearchEngine) -> None:
    result = search(engine, "cart item quantity price", limit=20)
    scores = [r["score"] for r in result["results"]]
    assert scores == sorted(scores, reverse=True)
    decay = engine.profiles["default"].file_decay
    seen: dict[str, int] = {}
    for r in result["results"]:  # a file's (n+1)-th result is scored x decay**n
        n = seen.get(r["path"], 0)
        assert r["explain"].get("saturation", 1.0) == pytest.approx(decay ** n)
        seen[r["path"]] = n + 1
    assert max(seen.values()) > 1


def test_include_and_exclude_globs(engine: SearchEngine) -> None:
    only_js = search(engine, "total", include=("web/**",))
    assert only_js["results"] and all(r["path"].startswith("web/") for r in only_js["results"])
    no_shop = search(engine, "who calls apply_discount", exclude=("shop/",))
    assert [r["path"] for r in no_shop["results"]] == ["tests/test_cart.py"]
    py_only = search(engine, "apply_discount", include=("*.py",))
    assert all(r["path"].endswith(".py") for r in py_only["results"])


def test_limit_is_respected(engine: SearchEngine) -> None:
    assert len(search(engine, "cart", limit=1)["results"]) == 1
    assert len(search(engine, "who calls apply_discount", limit=2)["results"]) == 2


def test_the_collector_waits_during_a_search_and_runs_again_after(engine: SearchEngine,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import retrievers.engine.search_engine as engine_module

    seen: list[bool] = []
    real = engine_module.fused_route.fused

    def watched(ctx: Any) -> Any:
        seen.append(gc.isenabled())
        return real(ctx)

    monkeypatch.setattr(engine_module.fused_route, "fused", watched)
    assert gc.isenabled()
    assert search(engine, "how is the cart total computed")["results"]
    assert seen == [False] and gc.isenabled()
    gc.disable()  # a caller that turned it off itself keeps it off
    try:
        search(engine, "how is the cart total computed")
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(QueryError):
        search(engine, "")
    assert gc.isenabled()  # and back on after a rejected request


def test_quick_preset_uses_semantic_and_structural_only(engine: SearchEngine) -> None:
    result = search(engine, "what the customer pays", preset="quick")
    assert set(result["modalities"]) <= {"semantic", "structural"}


def test_intent_override(engine: SearchEngine) -> None:
    result = search(engine, "round_money", intent="find_references")
    assert result["intent"] == {"name": "find_references", "confidence": 1.0, "source": "request"}
    assert {r["path"] for r in result["results"]} == {"shop/pricing.py", "shop/cart.py"}


def test_modalities_restrict_the_fused_route(engine: SearchEngine) -> None:
    result = search(engine, "apply_discount", modalities=("text",))
    assert result["strategy"] == "fused" and result["modalities"] == ["text"]
    assert set(result["results"][0]["explain"]) >= {"text", "rrf"}
    assert "structural" not in result["results"][0]["explain"]


def test_a_model_that_cannot_load_leaves_text_search_working(tmp_path: Path) -> None:
    missing_model = EngineOptions(model=str(tmp_path / "no-such-model"))
    with opened(copy_sample(tmp_path), tmp_path / "index", missing_model) as (_, eng):
        result = eng.refresh()
        assert any("embeddings unavailable" in note and "no-such-model" in note for note in result.notes)
        assert result.state == "text-only" and result.pending > 0
        answer = search(eng, "take a percentage off")
        assert answer["results"] and "semantic" not in answer["modalities"]
        assert answer["index"]["model"] == str(tmp_path / "no-such-model")


# -- bad input ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, message", [
    ({"query": ""}, "query is empty"),
    ({"query": "   \n\t "}, "query is empty"),
    ({"query": "\x00\x01\x02"}, "query is empty"),
    ({"query": "x", "intent": "find_everything"}, "unknown intent"),
    ({"query": "x", "preset": "fastest"}, "unknown preset"),
    ({"query": "x", "limit": 0}, "limit must be between 1 and 200"),
    ({"query": "x", "limit": 201}, "limit must be between 1 and 200"),
    ({"query": "x", "limit": "ten"}, "limit must be an integer"),
    ({"query": "x", "include": ("/etc/**",)}, "absolute"),
    ({"query": "x", "include": ("../outside/*.py",)}, "escapes the workspace root"),
    ({"query": "x", "exclude": ("src/../../x",)}, "escapes the workspace root"),
    ({"query": "x", "include": ("C:\\Windows\\*",)}, "absolute"),
    ({"query": "x", "include": ("",)}, "empty"),
    ({"query": 42}, "query must be a string"),
])
def test_bad_requests_raise_query_error(engine: SearchEngine, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(QueryError, match=message):
        engine.search(SearchRequest(**kwargs))


def test_control_characters_are_stripped(engine: SearchEngine) -> None:
    result = search(engine, "apply\x00_disc\x07ount")
    assert result["query"] == "apply _disc ount"
    clean = search(engine, "round\x1b_money")
    assert "\x1b" not in clean["query"]


def test_huge_query_is_truncated_not_refused(engine: SearchEngine) -> None:
    words = ("discount coupon percentage cart total " * 400).strip()
    result = search(engine, words)
    assert len(result["query"]) <= MAX_QUERY_CHARS
    assert result["results"]
    traceback = "Traceback (most recent call last):\n" + "  File \"x.py\", line 1, in f\n" * 500 + \
        "ValueError: discount percent out of range: 120"
    tb = search(engine, traceback)
    assert tb["query"].endswith("ValueError: discount percent out of range: 120")


def test_search_before_refresh_answers_empty(tmp_path: Path) -> None:
    with opened(copy_sample(tmp_path), tmp_path / "index") as (_, eng):
        result = eng.search(SearchRequest("apply_discount")).to_json()
        assert result["results"] == [] and result["index"]["state"] == "empty"


# -- refresh ------------------------------------------------------------------------------------------

def test_refresh_follows_edits_deletions_and_overlays(tmp_path: Path) -> None:
    root = copy_sample(tmp_path)
    with opened(root, tmp_path / "index") as (ws, eng):
        phases: list[str] = []
        first = eng.refresh(progress=lambda phase, done, total: phases.append(phase))
        assert first.reconciled and first.chunks > 0 and "indexing" in phases
        (root / "shop" / "gift.py").write_text("def wrap_present(item):\n    return ('wrapped', item)\n")
        (root / "web" / "server.js").unlink()
        second = eng.refresh()
        assert second.update is not None and "shop/gift.py" in second.update.changed_paths
        assert places(search(eng, "wrap_present"))[0] == ("shop/gift.py", 1, 2)
        after = search(eng, "who calls validateCart")
        assert after["strategy"] == "fused"  # no call site left: the direct route falls back
        assert "web/server.js" not in {r["path"] for r in after["results"]}
        ws.set_overlay("shop/gift.py", "# moved down\n\ndef wrap_present(item):\n    return item\n")
        eng.refresh(paths=["shop/gift.py"])
        top = search(eng, "wrap_present")["results"][0]
        assert (top["start_line"], top["snippet"]) == (3, "def wrap_present(item):\n    return item")


def test_restart_reconciles_with_the_store(tmp_path: Path) -> None:
    root, index = copy_sample(tmp_path), tmp_path / "index"
    with opened(root, index) as (ws, eng):
        eng.refresh()
        # The store moves on without the text index (a run killed between the two).
        (root / "shop" / "extra.py").write_text("def shiny_new_helper():\n    return 1\n")
        ws.update()
    with opened(root, index) as (ws2, eng2):
        result = eng2.refresh(paths=[])
        assert result.reconciled
        assert eng2.text.ids() == {c.id for c in ws2.store.chunks()}
        assert places(search(eng2, "shiny_new_helper"))[0][0] == "shop/extra.py"


def test_write_behind_answers_first_and_saves_on_close(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # `codeseek search`'s engine answers before it writes the call graph, the structural tables and
    # the file cards beside the index; closing writes them, and the next process loads them.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the signing key lives there
    root, index = copy_sample(tmp_path), tmp_path / "index"
    derived = index / "derived"
    names = {"structural.pickle", "filecards.pickle"}
    with opened(root, index, EngineOptions(embeddings=False, write_behind=True)) as (_, eng):
        eng.refresh()
        answer = places(search(eng, "checkout"))
        assert answer and not any((derived / name).exists() for name in names)
        assert not list(derived.glob("flatgraph-*")) and not list(derived.glob("callers-*"))
        assert not eng.text._fingerprints()[1]  # the trigram documents are held back too
    assert {p.name for p in derived.glob("*.pickle")} >= names
    assert list(derived.glob("flatgraph-*/ids.npy")) and list(derived.glob("callers-*/in_ptr.npy"))
    with opened(root, index) as (_, eng):
        eng.refresh()
        assert eng.graphs.loaded and places(search(eng, "checkout")) == answer
        assert eng.text._fingerprints()[1]  # (adopted as written: not reconciled)
        assert places(search(eng, '"def apply_discount"'))[0][0] == "shop/pricing.py"
        assert eng.flush_writes() == 0  # nothing held back without write_behind


def test_write_behind_lets_the_embedders_models_go_before_it_writes(tmp_path: Path) -> None:
    from retrievers.semantic.static_embedder import StaticEmbedder

    embedder = StaticEmbedder()
    with opened(copy_sample(tmp_path), tmp_path / "index",
                EngineOptions(embedder=embedder, write_behind=True)) as (_, eng):
        eng.refresh()
        assert search(eng, "where is the discount applied")["results"]
        assert embedder.loaded
    assert not embedder.loaded  # (released on close, before the held-back saves)
    assert embedder.encode_query("discount").shape == (embedder.dims,)  # and loaded again when asked


def test_searches_answer_while_a_refresh_runs(tmp_path: Path) -> None:
    root = copy_sample(tmp_path)
    with opened(root, tmp_path / "index") as (_, eng):
        eng.refresh()
        errors: list[BaseException] = []
        stop = threading.Event()

        def searcher() -> None:
            try:
                while not stop.is_set():
                    assert search(eng, "apply_discount")["results"]
                    search(eng, "who calls round_money")
            except BaseException as exc:  # noqa: BLE001 - collected for the assertion below
                errors.append(exc)

        thread = threading.Thread(target=searcher)
        thread.start()
        try:
            for n in range(5):
                (root / "shop" / f"gen_{n}.py").write_text(f"def generated_{n}(x):\n    return x + {n}\n")
                eng.refresh()
        finally:
            stop.set()
            thread.join(10)
    assert not errors


# -- with the embedding model -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def semantic_engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[SearchEngine]:
    with sample_engine(tmp_path_factory.mktemp("semantic"), EngineOptions(embedder=embedder)) as eng:
        yield eng


@pytest.fixture(scope="module")
def embedder() -> Any:
    from retrievers.semantic.embedder import Embedder

    model = Embedder()
    model.load()
    return model


@pytest.mark.slow
def test_semantic_phase_two_and_ready_state(semantic_engine: SearchEngine) -> None:
    info = semantic_engine.index_info()
    assert info["state"] == "ready" and info["embedded"] == info["chunks"] > 0
    assert info["model"] == "all-MiniLM-L6-v2"
    result = search(semantic_engine, "money the processor gives back to the customer")
    assert "semantic" in result["modalities"]
    payments = next(r for r in result["results"] if r["path"] == "shop/payments.py")
    assert payments["explain"]["semantic"]["rank"] == 1  # refund's docstring says just that
    assert result["results"].index(payments) < 3
    assert payments["start_line"] <= 15 <= payments["end_line"]  # the chunk holding refund()


@pytest.mark.slow
def test_phase_one_answers_before_embeddings(tmp_path: Path, embedder: Any) -> None:
    with opened(copy_sample(tmp_path), tmp_path / "index", EngineOptions(embedder=embedder)) as (_, eng):
        eng.refresh(embed=False)
        early = search(eng, "apply_discount")
        assert early["index"]["state"] == "text-only" and "semantic" not in early["modalities"]
        assert places(early)[0][0] == "shop/pricing.py"
        seen: list[tuple[str, int, int]] = []
        done = eng.refresh(embed=True, paths=[], progress=lambda p, d, t: seen.append((p, d, t)))
        assert done.embedded == done.chunks and done.pending == 0
        assert seen[-1] == ("embedding", done.chunks, done.chunks)
        assert search(eng, "apply_discount")["index"]["state"] == "ready"


@pytest.mark.slow
def test_fused_search_skips_semantic_while_the_model_loads(tmp_path: Path, embedder: Any) -> None:
    from retrievers.engine.fused_route import MODEL_LOADING
    from retrievers.semantic.embedder import Embedder

    root, index = copy_sample(tmp_path), tmp_path / "index"
    with opened(root, index, EngineOptions(embedder=embedder)) as (_, eng):
        eng.refresh()
    # A warm restart: the vectors come from the cache, the model is not loaded yet.
    fresh = Embedder()
    with opened(root, index, EngineOptions(embedder=fresh)) as (_, eng):
        eng.refresh(embed=False)
        assert eng.semantic is not None and eng.semantic.embedded() > 0 and not fresh.loaded
        question = "money the processor gives back to the customer"
        loading, release = threading.Event(), threading.Event()

        def load_in_background() -> None:  # holds the lock Embedder.load holds while it loads
            with fresh._load_lock:
                loading.set()
                release.wait(120)

        holder = threading.Thread(target=load_in_background)
        holder.start()
        answers: list[dict[str, Any]] = []
        try:
            assert loading.wait(10)
            asker = threading.Thread(target=lambda: answers.extend(
                [search(eng, question), search(eng, "class Cart")]))
            asker.start()
            asker.join(60)
            assert answers, "the search waited for the model"
        finally:
            release.set()
            holder.join()
        result, direct = answers
        assert result["strategy"] == "fused" and "semantic" not in result["modalities"]
        assert result["index"]["notes"] == [MODEL_LOADING]
        assert {"text", "structural"} <= set(result["modalities"]) and result["results"]
        weights = {m: e["weight"] for r in result["results"] for m, e in r["explain"].items()
                   if m in ("text", "structural")}
        own = INTENT_WEIGHTS["understand_code"]
        assert weights == {"text": own["text"], "structural": own["structural"]}  # not equal shares
        assert direct["strategy"] == "direct" and "notes" not in direct["index"]  # never needed the model
        assert not fresh.loaded


# -- ranking profile and retrievers -------------------------------------------------------------------

def test_the_result_names_its_profile_and_overrides_reach_every_preset(tmp_path: Path,
                                                                       engine: SearchEngine) -> None:
    assert search(engine, "cart item quantity price")["preset"] == "default"
    assert search(engine, "cart item quantity price", preset="thorough")["preset"] == "thorough"
    assert search(engine, "apply_discount", preset="quick")["preset"] == "quick"  # direct route too
    ws = Workspace(copy_sample(tmp_path), WorkspaceOptions(index_dir=tmp_path / "index"))
    try:
        tuned = SearchEngine(ws, EngineOptions(embeddings=False, ranking={"k": 40, "file_decay": 0.5}))
        assert {(p.k, p.file_decay) for p in tuned.profiles.values()} == {(40, 0.5)}
        tuned.close()
        with pytest.raises(QueryError, match="no ranking setting named 'rrf_k'"):
            SearchEngine(ws, EngineOptions(embeddings=False, ranking={"rrf_k": 20}))
    finally:
        ws.close()


def test_one_set_of_retrievers_per_refresh_behind_one_protocol(engine: SearchEngine) -> None:
    from retrievers.base import Retriever

    view = engine._view
    assert view is not None
    snap, retrievers = view
    held = [retrievers.get(name) for name in ("text", "structural", "graph")]
    assert all(isinstance(r, Retriever) for r in held)
    search(engine, "who calls apply_discount")
    search(engine, "how is the cart total computed")
    assert engine._view is view and retrievers.graph is held[2]  # not rebuilt per search
    with pytest.raises(QueryError, match="unknown modality 'bm25'"):
        retrievers.get("bm25")


def test_a_one_letter_query_finds_the_module_of_that_name(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "g.py").write_text('"""Request-scoped values."""\n\n_values = {}\n\n\n'
                                       "def put(name, value):\n    _values[name] = value\n")
    (root / "pkg" / "app.py").write_text("from pkg import g\n\n\ndef handle(request):\n    g.put('user', 1)\n"
                                         "    g.put('lang', 2)\n    return g\n")
    (root / "pkg" / "util.py").write_text("def g_sum(a, b):\n    g = a + b\n    return g\n")
    with opened(root, tmp_path / "index") as (_, eng):
        eng.refresh()
        first = search(eng, "g")["results"][0]
        assert first["path"] == "pkg/g.py" and first["explain"]["bonus"]["path_keyword"] > 0


LICENCE = ("// Layout kit\n// Copyright (c) the layout kit authors\n//\n"
           "// Permission is hereby granted, free of\n"
           "// charge, to any person obtaining a copy of this software, to deal in the layout\n"
           "// software without restriction, including the rights to use, copy and modify it.\n\n"
           '"use strict";\n\n')


def test_repeated_licence_blocks_leave_questions_but_not_exact_strings(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    topics = {"priority.js": ("setPriority", "layoutPriority"), "insets.js": ("applyInsets", "edgeInsets"),
              "anchor.js": ("anchorTo", "anchorPoint")}
    for name, (function, field) in topics.items():
        helpers = "".join(
            f"function {function}Step{k}(view, value) {{\n  const next = Object.assign({{}}, view);\n"
            f"  next.{field} = value + {k};\n  next.changed = true;\n  next.steps = (view.steps || 0) + 1;\n"
            f"  if (next.steps > 100) {{\n    throw new Error('too many steps');\n  }}\n"
            "  return next;\n}\n\n"
            for k in range(8))
        body = f"function {function}(view, value) {{\n  return {function}Step0(view, value);\n}}\n\n"
        (root / name).write_text(LICENCE + helpers + body)
    with opened(root, tmp_path / "index") as (_, eng):
        eng.refresh()
        view = eng._view
        assert view is not None and len(view[0].boilerplate(3)) == 3 and not view[0].boilerplate(4)
        question = search(eng, "how does the layout software set a view priority")
        assert question["results"] and all(r["start_line"] > 1 for r in question["results"])
        assert question["results"][0]["path"] == "priority.js"  # "layoutPriority", "setPriority"
        quoted = search(eng, '"Permission is hereby granted, free of"')
        assert sorted(r["path"] for r in quoted["results"]) == ["anchor.js", "insets.js", "priority.js"]
        eng.profiles = {name: replace(p, boilerplate_min_files=0) for name, p in eng.profiles.items()}
        kept = search(eng, "how does the layout software set a view priority")
        assert any(r["start_line"] == 1 for r in kept["results"])  # the knob turns it off


def test_file_cards_answer_a_question_about_a_module(tmp_path: Path) -> None:
    ws = Workspace(copy_sample(tmp_path), WorkspaceOptions(index_dir=tmp_path / "index"))
    cards = SearchEngine(ws, EngineOptions(embeddings=False, ranking={"file_card_weight": 0.5}))
    plain = SearchEngine(ws, EngineOptions(embeddings=False, ranking={"file_card_weight": 0.0}))
    try:
        cards.refresh()
        plain.refresh()
        question = "how are declined charges and refunds handled"
        result = search(cards, question)
        first = result["results"][0]
        assert first["path"] == "shop/payments.py"
        assert first["explain"]["file"]["detail"] == {"match": "file_card", "path": "shop/payments.py"}
        assert all("file" not in r["explain"] for r in search(plain, question)["results"])
        scoped = search(cards, question, exclude=("shop/payments.py",))
        assert all(r["explain"].get("file", {}).get("detail", {}).get("path") != "shop/payments.py"
                   for r in scoped["results"])
        assert all("file" not in r["explain"] for r in search(cards, "apply_discount")["results"])
    finally:
        cards.close()
        plain.close()
        ws.close()


def test_a_later_refresh_splices_the_changed_files_chunks_into_the_last_read(tmp_path: Path) -> None:
    """A refresh that saves nothing (a server's later ones) keeps the chunk objects of the files that did
    not change and reads the changed and removed files' again: the same chunks, in the same order, as
    reading them all; the view searches them."""
    root = copy_sample(tmp_path)
    with opened(root, tmp_path / "index") as (ws, eng):
        eng.refresh()
        eng.graphs.persist = False  # (as a server after its first refresh: `persist_once`)
        eng.refresh(paths=[])
        before = eng._chunks_read
        assert before is not None
        edited = sorted(root.rglob("*.py"))[0]
        gone = sorted(root.rglob("*.js"))[0]
        edited.write_text(edited.read_text() + "\n\ndef spliced_probe():\n    return 1\n")
        gone.unlink()
        eng.refresh()
        after = eng._chunks_read
        assert after is not None and after == ws.store.chunks()
        edited_rel, gone_rel = (p.relative_to(root).as_posix() for p in (edited, gone))
        kept = [c for c in before if c.path not in (edited_rel, gone_rel)]
        assert kept and all(any(c is k for k in after) for c in kept)  # the same objects, not read again
        assert not any(c.path == gone_rel for c in after)
        results = search(eng, "spliced_probe", limit=3)["results"]
        assert results and results[0]["path"] == edited_rel
