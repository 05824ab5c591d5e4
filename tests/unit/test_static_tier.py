"""The static embedding tier: offline distillation and its cache, the embedder, no torch on the search
path, tier blending, model switches that re-embed only what the cache lacks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from indexing.workspace import Workspace, WorkspaceOptions
from retrievers.base import Hit, SemanticDetail
from retrievers.engine.search_engine import EngineOptions, SearchEngine
from retrievers.semantic.embedder import foreground_threads
from retrievers.semantic.models import is_static, make_embedder
from retrievers.semantic.static_embedder import StaticEmbedder, is_static_model_dir
from retrievers.semantic.static_model import DistillSettings, ensure_static_model, static_model_dir
from retrievers.semantic.tiered import TierBlend, blend_rankings
from tests.unit.engine_sample import SAMPLE, copy_sample, opened

REPO = Path(__file__).resolve().parents[2]
# A few hundred tokens (those starting "re", "qu", "ur" plus [UNK]/[PAD]): distils in seconds.
TINY = DistillSettings(pca_dims=16, token_remove_pattern=r"^(?!(re|qu|ur|\[UNK\]|\[PAD\]))", train_chunks=0)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@contextmanager
def models_in(folder: Path) -> Iterator[None]:
    """CODESEEK_MODEL_DIR at `folder` for the block only: the other tests (and the processes they
    start) keep the shared model `make setup` built, instead of training one for minutes."""
    before = os.environ.get("CODESEEK_MODEL_DIR")
    os.environ["CODESEEK_MODEL_DIR"] = str(folder)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("CODESEEK_MODEL_DIR", None)
        else:
            os.environ["CODESEEK_MODEL_DIR"] = before


@pytest.fixture(scope="module")
def tiny(model_dir: Path) -> Path:
    phases: list[str] = []
    with models_in(model_dir):
        built = ensure_static_model(lambda phase, done, total: phases.append(phase), settings=TINY)
    assert "distilling" in phases and phases[-1] == "distilled"
    return built


@pytest.mark.slow
def test_tiny_distillation_is_cached_and_keyed_by_settings(tiny: Path, model_dir: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODESEEK_MODEL_DIR", str(model_dir))
    assert tiny.parent == model_dir and tiny == static_model_dir(settings=TINY)
    assert is_static_model_dir(tiny)
    assert json.loads((tiny / "codeseek.json").read_text())["settings"]["pca_dims"] == 16
    calls: list[str] = []
    assert ensure_static_model(lambda *a: calls.append(a[0]), settings=TINY) == tiny
    assert calls == []  # cached: nothing is distilled again
    other = DistillSettings(pca_dims=8, token_remove_pattern=TINY.token_remove_pattern, train_chunks=0)
    assert static_model_dir(settings=other) != tiny  # other settings, another model
    assert not [p for p in model_dir.iterdir() if p.name.startswith(".static")]  # no temp dirs left


@pytest.mark.slow
def test_static_embedder_matches_model2vec(tiny: Path) -> None:
    from model2vec import StaticModel

    reference = StaticModel.from_pretrained(str(tiny), normalize=True)
    embedder = StaticEmbedder(tiny)
    texts = ["request the url", "query requests", "re qu"]
    ours = embedder.encode_documents(texts)
    theirs = reference.encode(texts, normalize=True)
    assert ours.shape == (3, 16) and embedder.dims == 16
    assert np.allclose((ours * theirs).sum(axis=1), 1.0, atol=1e-3)
    assert np.allclose(embedder.encode_query(texts[0]), ours[0], atol=1e-6)


@pytest.mark.slow
def test_text_without_known_tokens_is_a_zero_vector(tiny: Path) -> None:
    vector = StaticEmbedder(tiny).encode_query("zzz 日本")
    assert not np.isnan(vector).any() and float(np.abs(vector).sum()) == 0.0


def test_model_names() -> None:
    assert is_static(None) and is_static("static") and is_static("static:/x/y")
    assert not is_static("minilm") and not is_static("BAAI/bge-small-en-v1.5")
    assert isinstance(make_embedder(None), StaticEmbedder)
    assert make_embedder("minilm").model_id == "all-MiniLM-L6-v2"


def test_blend_rankings_fuses_both_tiers() -> None:
    fast = [Hit(cid, cosine, SemanticDetail(cosine)) for cid, cosine in ((1, 0.9), (2, 0.8), (3, 0.7))]
    deep = [Hit(3, 0.6, SemanticDetail(0.6)), Hit(4, 0.5, SemanticDetail(0.5))]
    out = blend_rankings(fast, deep, TierBlend(k=10, fast=0.3, deep=0.7), limit=3)
    assert [h.chunk_id for h in out] == [3, 4, 1]  # the transformer's first two outrank static's first
    assert out[0].detail.static_rank == 3 and out[0].detail.transformer_rank == 1
    assert out[0].detail.cosine == 0.6 and out[2].detail.transformer_rank is None


@pytest.mark.slow
def test_static_search_never_imports_torch(tmp_path: Path) -> None:
    code = (
        "import sys, json; from lsp_server.cli.main import main; "
        f"status = main(['search', 'apply a discount to a price', '--root', {str(SAMPLE)!r}, "
        f"'--index-dir', {str(tmp_path / 'idx')!r}, '--json']); "
        "heavy = [m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules]; "
        "assert not heavy, heavy; sys.exit(status)"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["index"]["state"] == "ready" and result["index"]["model"].startswith("static:")
    assert "semantic" in result["modalities"] and result["results"]
    assert result["timings_ms"]["process"] >= result["timings_ms"]["total"]


@pytest.mark.slow
def test_model_switches_reembed_only_what_the_cache_lacks(tmp_path: Path) -> None:
    root = copy_sample(tmp_path)

    def refresh(model: str | None) -> tuple[int, int, list[str]]:
        with opened(root, tmp_path / "idx", EngineOptions(model=model, transformer=None)) as (_, engine):
            result = engine.refresh()
            assert engine.semantic is not None
            return result.embedded, engine.semantic.embedded(), result.notes

    made, held, _ = refresh(None)
    assert made == held > 0
    made_tx, held_tx, notes = refresh("minilm")  # the transformer embeds everything once...
    assert made_tx == held_tx == held and any("model changed" in n for n in notes)
    assert refresh(None)[:2] == (0, held)  # ...and going back re-embeds nothing: both are cached
    assert refresh("minilm")[:2] == (0, held)


@pytest.mark.slow
def test_transformer_tier_fills_in_and_blends(tmp_path: Path) -> None:
    from retrievers.engine.request import SearchRequest

    # (no question pool: the fill alone puts transformer vectors in the tier)
    no_pool = EngineOptions(tier_blend=TierBlend(question_pool=0))
    with opened(SAMPLE, tmp_path / "idx", no_pool) as (_, engine):
        engine.refresh()
        info = engine.index_info()
        assert info["state"] == "ready" and info["transformer"]["embedded"] == 0
        before = engine.search(SearchRequest(query="apply a discount to a price")).to_json()
        seen: list[tuple[str, int, int]] = []
        made = engine.embed_transformer(lambda phase, done, total: seen.append((phase, done, total)))
        info = engine.index_info()
        assert made == info["transformer"]["embedded"] == info["chunks"] and seen[-1][0] == "transformer"
        after = engine.search(SearchRequest(query="apply a discount to a price")).to_json()
    assert before["results"] and after["results"]
    tiers_before = {r["explain"]["semantic"]["detail"].get("tier") for r in before["results"]
                    if "semantic" in r["explain"]}
    tiers_after = {r["explain"]["semantic"]["detail"].get("tier") for r in after["results"]
                   if "semantic" in r["explain"]}
    assert tiers_before == {"static"} and tiers_after == {"transformer"}  # complete: the transformer ranks


@pytest.mark.slow
def test_a_question_has_the_transformer_embed_and_rank_its_static_pool(tmp_path: Path) -> None:
    """A cold index (no transformer vectors): a question's static top 3, and through the engine the text
    retriever's first hits, are embedded by the transformer then and there, once, ranked by it, and
    saved for the next process; an identifier embeds nothing."""
    from retrievers.base import Query
    from retrievers.engine.request import SearchRequest

    question = "apply a discount to a price"
    options = EngineOptions(tier_blend=TierBlend(question_pool=3))
    with opened(SAMPLE, tmp_path / "idx", options) as (_, engine):
        engine.refresh()
        semantic = engine.semantic
        assert semantic is not None and semantic.deep is not None and semantic.deep.embedded() == 0
        engine.search(SearchRequest(query="apply_discount"))
        assert semantic.deep.embedded() == 0  # not a question: the static tier answers alone
        pool = [h.chunk_id for h in semantic.fast.search(Query(question, "understand_code"), 3)]
        asked: list[int | None] = []  # the threads each pool batch was encoded with
        encode = semantic.deep.embedder.encode_documents

        def recorded(texts: Any, batch_size: Any = None, progress: Any = None, threads: Any = None) -> Any:
            asked.append(threads)
            return encode(texts, batch_size, progress, threads)

        semantic.deep.embedder.encode_documents = recorded  # type: ignore[method-assign]
        ranked = semantic.search(Query(question, "understand_code"), 5)
        assert asked == [foreground_threads()]  # the user waits on a pool: every CPU encodes it
        assert semantic.deep.embedded() == 3 and all(semantic.deep.has_vector(c) for c in pool)
        assert {h.chunk_id for h in ranked[:3]} == set(pool)  # the pool first, ranked by the transformer
        assert [h.detail.tier for h in ranked] == ["transformer"] * 3 + ["static"] * 2  # type: ignore[union-attr]
        answer = engine.search(SearchRequest(query=question)).to_json()
        text = [x.chunk.id for x in engine.retrieve(SearchRequest(query=question), "text", 10)]
        made = semantic.deep.embedded()
        assert text and all(semantic.deep.has_vector(c) for c in text) and made == len(set(pool) | set(text))
        tiers = {r["explain"]["semantic"]["detail"]["tier"] for r in answer["results"]
                 if "semantic" in r["explain"]}
        assert "transformer" in tiers
        again = engine.search(SearchRequest(query=question)).to_json()
        assert semantic.deep.embedded() == made and again["results"] == answer["results"]
    no_pool = EngineOptions(tier_blend=TierBlend(question_pool=0))
    with opened(SAMPLE, tmp_path / "idx", no_pool) as (_, engine):
        engine.refresh()
        assert engine.semantic is not None and engine.semantic.deep is not None
        assert engine.semantic.deep.loaded_saved and engine.semantic.deep.embedded() == made


def test_partial_transformer_coverage_ranks_the_rest_statically() -> None:
    from retrievers.base import Query
    from retrievers.semantic.tiered import TieredSemantic

    class Tier:
        def __init__(self, hits: list[Hit], covered: set[int], pending: int) -> None:
            self.hits, self.covered, self._pending = hits, covered, pending
            self.embedder = type("E", (), {"loading": False})()
            self.model_id = "static:tiny"
            self.asked: list[int] = []

        def search(self, query: Query, limit: int, scope: object = None, *,
                   skip: Callable[[int], bool] | None = None, tier: str | None = None) -> list[Hit]:
            keep = [h for h in self.hits if skip is None or not skip(h.chunk_id)]
            self.asked = [h.chunk_id for h in keep]
            return keep[:limit]

        def embedded(self) -> int:
            return len(self.covered)

        def pending(self) -> int:
            return self._pending

        def has_vector(self, chunk_id: int) -> bool:
            return chunk_id in self.covered

    fast = Tier([Hit(1, 0.9), Hit(2, 0.8), Hit(3, 0.7)], {1, 2, 3}, 0)
    deep = Tier([Hit(2, 0.6), Hit(1, 0.5)], {1, 2}, 1)
    tiered = TieredSemantic(fast, deep, TierBlend(k=10, fast=0.3, deep=0.7))  # type: ignore[arg-type]
    hits = tiered.search(Query("how are prices discounted", "understand_code"), 3)
    assert fast.asked == [3]  # the static tier ranks only what the transformer has not embedded
    assert [(h.chunk_id, h.detail.tier) for h in hits] == [(2, "transformer"), (1, "transformer"),
                                                               (3, "static")]
    # a name, while the transformer covers only part of the index: the static tier alone
    assert [h.chunk_id for h in tiered.search(Query("discount", "find_definition"), 3)] == [1, 2, 3]


@pytest.mark.slow
def test_a_large_embedding_encodes_in_a_worker_process_with_the_same_vectors(
        tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from retrievers.semantic import embed_worker

    edited = "def request_quota(query):\n    return query.quota_remaining()\n"

    def vectors(worker: str, index: Path) -> tuple[dict[tuple[str, int], bytes], bool]:
        monkeypatch.setenv("CODESEEK_EMBED_WORKER", worker)
        embedder = StaticEmbedder(tiny)
        with Workspace(SAMPLE, WorkspaceOptions(index_dir=index)) as ws:
            ws.set_overlay("shop/cart.py", edited)  # an unsaved editor buffer: embedded as the buffer
            engine = SearchEngine(ws, EngineOptions(embedder=embedder, transformer=None))
            try:
                assert engine.refresh().embedded > 0 and engine.semantic is not None
                fast = engine.semantic.fast
                held = {(c.path, c.start_line): fast._vectors.vector(cid).tobytes()  # type: ignore[union-attr]
                        for cid, c in fast._chunks.items()}
                return held, embedder._model is not None
            finally:
                engine.close()

    assert embed_worker.wanted(embed_worker.MIN_CHUNKS) and not embed_worker.wanted(100)
    here, loaded_here = vectors("0", tmp_path / "here")
    # The worker gets batches of WORKER_BATCH (fewer round trips through the GIL), not the embedder's
    # smaller write_batch (what the in-process pass uses).
    from retrievers.semantic import embed_pass

    sizes: list[int] = []
    submit = embed_worker.DocumentWorker.submit

    def counted(self: embed_worker.DocumentWorker, jobs: list[object], *args: int) -> object:
        sizes.append(len(jobs))
        return submit(self, jobs, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(embed_worker.DocumentWorker, "submit", counted)
    monkeypatch.setattr(StaticEmbedder, "write_batch", 2)
    monkeypatch.setattr(embed_pass, "WORKER_BATCH", 5)
    there, loaded_there = vectors("1", tmp_path / "there")
    assert len(sizes) > 2 and set(sizes[:-1]) == {5} and 0 < sizes[-1] <= 5
    monkeypatch.setattr(embed_worker.DocumentWorker, "submit", submit)
    assert here and there == here  # the worker's vectors are the in-process ones, bit for bit
    assert ("shop/cart.py", 1) in here and len([k for k in here if k[0] == "shop/cart.py"]) == 1
    assert loaded_here and not loaded_there  # the worker loaded the model; this process did not

    def broken(self: object, *args: object) -> object:
        raise RuntimeError("worker killed")

    monkeypatch.setattr(embed_worker.DocumentWorker, "submit", broken)
    fallen_back, loaded = vectors("1", tmp_path / "fallback")
    assert fallen_back == here and loaded  # a failed worker: every batch embedded here, same vectors


def test_a_model_with_a_query_projection_reads_questions_with_the_transformer(tiny: Path,
                                                                             tmp_path: Path) -> None:
    """The query is encoded by the packaged MiniLM (numpy, no torch) and projected onto the static
    space; a projection of the wrong shape is ignored and queries stay static."""
    from retrievers.semantic.embedder import Embedder
    from retrievers.semantic.static_embedder import write_query_projection

    folder = tmp_path / "projected"
    shutil.copytree(tiny, folder)
    plain = StaticEmbedder(tiny)
    rng = np.random.default_rng(0)
    basis = rng.normal(size=(384, plain.dims)).astype(np.float32)
    write_query_projection(folder, basis)
    projected = StaticEmbedder(folder)
    assert projected.query_space == "transformer" and plain.query_space == "static"
    question = "where do we refuse requests after too many attempts"
    expected = Embedder().encode_query(question) @ basis
    got = projected.encode_query(question)
    assert np.allclose(got, expected / np.linalg.norm(expected), atol=1e-5)
    assert np.allclose(projected.encode_documents([question]), plain.encode_documents([question]))

    write_query_projection(folder, basis[:, :-1])  # one column short of the static dims
    wrong = StaticEmbedder(folder)
    assert wrong.query_space == "static"
    assert np.allclose(wrong.encode_query(question), plain.encode_query(question))


def test_token_vectors_are_mapped_from_the_safetensors_file(tmp_path: Path) -> None:
    """The packaged model's token vectors are memory-mapped in their own dtype and read as safetensors
    reads them; a file of another layout is refused with the names it holds."""
    from safetensors.numpy import load_file, save_file

    from retrievers.semantic.static_embedder import map_safetensors

    packaged = REPO / "retrievers" / "semantic" / "data" / "static-minilm-code" / "model.safetensors"
    mapped = map_safetensors(packaged)
    assert isinstance(mapped, np.memmap) and not mapped.flags.writeable
    assert np.array_equal(mapped, load_file(str(packaged))["embeddings"])
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    save_file({"embeddings": table}, str(tmp_path / "f32.safetensors"))
    assert np.array_equal(map_safetensors(tmp_path / "f32.safetensors"), table)
    save_file({"embeddings": table, "mappings": np.zeros(4, dtype=np.int64)}, str(tmp_path / "q.safetensors"))
    with pytest.raises(ValueError, match="mappings"):
        map_safetensors(tmp_path / "q.safetensors")
    (tmp_path / "junk.safetensors").write_bytes(b"\xff" * 64)
    with pytest.raises(ValueError):
        map_safetensors(tmp_path / "junk.safetensors")


def test_a_batch_of_documents_lets_the_mapped_table_go(tmp_path: Path) -> None:
    """The first batch of documents converts the mapped float16 table to float32; from then on
    queries read that copy (the same vectors) and the mapping is closed, so its pages are not
    resident beside the copy."""
    import gc
    import weakref

    from retrievers.semantic.static_embedder import StaticEmbedder

    packaged = REPO / "retrievers" / "semantic" / "data" / "static-minilm-code"
    embedder = StaticEmbedder(packaged)
    query, tier = embedder.encode_query_for("account_lockout cooldown", "find_definition")
    assert tier == "static"  # (read from the token table, not by the transformer)
    table = embedder._model.vectors
    assert isinstance(table, np.memmap)
    mapping = weakref.ref(table._mmap)
    del table
    docs = embedder.encode_documents(["def cooldown(user): user.locked = True", "class Throttle: pass"])
    assert docs.shape == (2, embedder.dims)
    assert type(embedder._model.vectors) is np.ndarray and embedder._model.vectors.dtype == np.float32
    gc.collect()
    assert mapping() is None or mapping().closed
    again, tier = embedder.encode_query_for("account_lockout cooldown", "find_definition")
    assert tier == "static" and np.allclose(again, query, atol=1e-6)
