"""The embedder: lazy offline loading, model ids, prefixes, batched normalized encoding, errors."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from retrievers.semantic.embedder import (
    DEFAULT_MODEL_ID,
    Embedder,
    EmbedderError,
    EmbedderOptions,
    default_model_path,
    model_id_for,
    prefixes_for,
)
from retrievers.semantic.models import shared_embedder

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    found = shared_embedder("minilm")
    assert isinstance(found, Embedder)
    return found


def test_constructing_imports_nothing_heavy() -> None:
    code = (
        "import sys; from retrievers.semantic.embedder import Embedder; e = Embedder(); "
        "assert e.model_id == 'all-MiniLM-L6-v2' and not e.loaded; "
        "heavy = [m for m in ('sentence_transformers', 'torch', 'transformers') if m in sys.modules]; "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, timeout=60)


def test_model_ids(tmp_path: Path) -> None:
    assert model_id_for(None) == DEFAULT_MODEL_ID
    assert model_id_for(str(default_model_path())) == DEFAULT_MODEL_ID
    assert model_id_for("BAAI/bge-small-en-v1.5") == "BAAI/bge-small-en-v1.5"
    snapshot = tmp_path / "hub" / "models--nomic-ai--CodeRankEmbed" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    assert model_id_for(str(snapshot)) == "nomic-ai/CodeRankEmbed"
    local = tmp_path / "mine" / "code-model"
    local.mkdir(parents=True)
    assert model_id_for(str(local)) == "mine/code-model"


@pytest.mark.parametrize(
    ("model", "query", "document"),
    [
        ("nomic-ai/CodeRankEmbed", "Represent this query for searching relevant code: ", ""),
        ("intfloat/e5-base-v2", "query: ", "passage: "),
        ("intfloat/multilingual-e5-small", "query: ", "passage: "),
        ("BAAI/bge-small-en-v1.5", "Represent this sentence for searching relevant passages: ", ""),
        ("nomic-ai/nomic-embed-text-v1.5", "search_query: ", "search_document: "),
    ],
)
def test_prefix_table(model: str, query: str, document: str) -> None:
    assert prefixes_for(model) == (query, document)
    e = Embedder(model)
    assert (e.query_prefix, e.document_prefix) == (query, document)  # known without loading
    assert not e.loaded


def test_prefix_table_leaves_others_alone() -> None:
    assert prefixes_for("sentence-transformers/all-MiniLM-L6-v2") is None
    assert prefixes_for("some/berte5x") is None
    e = Embedder("intfloat/e5-base-v2", EmbedderOptions(query_prefix="q: "))
    assert (e.query_prefix, e.document_prefix) == ("q: ", "passage: ")


def test_missing_path_is_a_named_error_without_loading(tmp_path: Path) -> None:
    e = Embedder(str(tmp_path / "no-such-model"))
    with pytest.raises(EmbedderError, match="no-such-model"):
        e.load()
    with pytest.raises(EmbedderError):
        e.encode_query("anything")


@pytest.mark.slow
def test_unloadable_models_name_the_model_and_the_offline_hub(tmp_path: Path) -> None:
    empty = tmp_path / "empty-model"
    empty.mkdir()
    for name in (str(empty), "no-such-org/no-such-model-xyz"):
        with pytest.raises(EmbedderError) as info:
            Embedder(name).load()
        assert name in str(info.value) and "offline" in str(info.value)


@pytest.mark.slow
def test_encode_documents_normalized_in_input_order(embedder: Embedder) -> None:
    texts = ["def select_proxy(url, proxies):\n    return proxies.get(url)", "x", "a much longer text " * 20]
    seen: list[tuple[int, int]] = []
    matrix = embedder.encode_documents(texts, batch_size=2, progress=lambda d, t: seen.append((d, t)))
    assert matrix.shape == (3, embedder.dims) == (3, 384)
    assert matrix.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    for i, text in enumerate(texts):  # sorting by length must not reorder the output
        np.testing.assert_allclose(matrix[i], embedder.encode_documents([text])[0], atol=1e-5)
    assert seen == [(2, 3), (3, 3)]
    assert embedder.encode_documents([]).shape == (0, 384)


@pytest.mark.slow
def test_query_meaning_and_thread_safety(embedder: Embedder) -> None:
    docs = embedder.encode_documents([
        "def rebuild_auth(self, prepared_request, response):\n"
        "    # strip the Authorization header when redirected to another host",
        "def resize_image(img, width, height):\n    return img.resize((width, height))",
    ])
    q = embedder.encode_query("remove credentials when following a redirect")
    assert q.shape == (384,) and abs(float(np.linalg.norm(q)) - 1) < 1e-5
    assert docs[0] @ q > docs[1] @ q + 0.1
    results: list[np.ndarray] = []
    threads = [threading.Thread(target=lambda: results.append(embedder.encode_query("shrink a picture")))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and all(np.allclose(r, results[0], atol=1e-5) for r in results)
    assert embedder.max_tokens == 256 and embedder.normalized
