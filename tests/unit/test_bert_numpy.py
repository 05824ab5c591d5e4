"""The numpy BERT encoder: the packaged MiniLM's vectors equal sentence-transformers' (cosine >= 0.9999),
whatever the batch, its order, the thread split or the query path; a batch costs its tokens, not its
padding; encoding imports no torch; weights mapped from the .npy cache give bitwise the same vectors."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from retrievers.semantic.bert_numpy import STREAMED_QUESTIONS, NumpyBertEncoder, supports
from retrievers.semantic.embedder import default_model_path, numpy_weights_cache

REPO = Path(__file__).resolve().parents[2]
LONG = "def handle(request):\n" + "".join(
    f"    value_{i} = request.headers.get('X-Field-{i}', default_{i})  # field {i} of the form\n"
    for i in range(60))  # well past the 256 tokens the encoder reads
TEXTS = [
    "remove credentials when following a redirect",
    "def rebuild_auth(self, prepared_request, response):\n"
    "    # strip the Authorization header when redirected to another host\n"
    "    headers = prepared_request.headers\n    url = prepared_request.url",
    "x",
    "class RetryPolicy:\n    \"\"\"Back off exponentially between failed connection attempts.\"\"\"\n"
    "    def sleep_for(self, attempt: int) -> float:\n        return min(60.0, 0.5 * 2 ** attempt)",
    "const cooldown = (user) => { user.lockedUntil = Date.now() + 15 * 60 * 1000; };",
    LONG,
    "Ünïcödé, emoji 🚀 and CJK 文字 in one comment",
]


@pytest.fixture(scope="module")
def encoder() -> NumpyBertEncoder:
    return NumpyBertEncoder(default_model_path(), max_tokens=256)


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    """sentence-transformers on torch, the same packaged model and sequence length."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(default_model_path()), device="cpu", local_files_only=True)
    model.max_seq_length = 256
    return np.asarray(model.encode(TEXTS, batch_size=4, normalize_embeddings=True, convert_to_numpy=True))


def test_the_packaged_model_is_supported() -> None:
    assert supports(default_model_path())


@pytest.mark.slow
def test_vectors_equal_sentence_transformers(encoder: NumpyBertEncoder, reference: np.ndarray) -> None:
    batch = encoder.encode(TEXTS)
    assert batch.shape == (len(TEXTS), 384) and batch.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    cosines = (batch * reference).sum(axis=1)
    assert cosines.min() >= 0.9999, cosines
    one_by_one = np.vstack([encoder.encode([t]) for t in TEXTS])
    queries = np.vstack([encoder.encode_one(t) for t in TEXTS])
    reordered = encoder.encode(TEXTS[::-1])[::-1]
    for other in (one_by_one, queries, reordered):
        np.testing.assert_allclose(other, batch, atol=2e-5)
    assert encoder.encode([]).shape == (0, 384)


@pytest.mark.slow
def test_two_threads_give_the_same_vectors(encoder: NumpyBertEncoder) -> None:
    threaded = NumpyBertEncoder(default_model_path(), max_tokens=256, threads=2)
    np.testing.assert_allclose(threaded.encode(TEXTS), encoder.encode(TEXTS), atol=2e-5)
    np.testing.assert_allclose(threaded.encode(TEXTS[:1]), encoder.encode(TEXTS[:1]), atol=2e-5)


@pytest.mark.slow
def test_a_call_may_take_more_threads_than_the_encoder_has(encoder: NumpyBertEncoder) -> None:
    """A question's pool asks for every CPU of a one-thread encoder: the same vectors, split."""
    np.testing.assert_allclose(encoder.encode(TEXTS, threads=2), encoder.encode(TEXTS), atol=2e-5)
    assert set(encoder._pools) == {2}  # helper threads made for that count only


@pytest.mark.slow
def test_overlapping_encodes_agree_and_give_blas_its_threads_back(encoder: NumpyBertEncoder) -> None:
    from threadpoolctl import threadpool_info

    before = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    expected = encoder.encode(TEXTS)
    batches: list[np.ndarray] = []
    worker = threading.Thread(target=lambda: batches.extend(encoder.encode(TEXTS) for _ in range(3)))
    worker.start()
    queries = [encoder.encode_one(TEXTS[0]) for _ in range(10)]
    worker.join()
    assert len(batches) == 3 and all(np.allclose(b, expected, atol=2e-5) for b in batches)
    assert all(np.allclose(q, expected[0], atol=2e-5) for q in queries)
    assert [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"] == before


QUESTIONS = ["parse the http accept header", "where are credentials removed when a redirect is followed",
             "how does the session retry failed connections", "Ünïcödé question about caching 🚀"]


def test_mapped_weights_give_bitwise_the_same_vectors(encoder: NumpyBertEncoder, tmp_path: Path) -> None:
    """The first encoder converts the weights into the cache (a temp folder renamed), the next maps
    them: both give the in-memory encoder's vectors bit for bit."""
    cache = tmp_path / "weights"
    built = NumpyBertEncoder(default_model_path(), max_tokens=256, weights_cache=cache)
    assert [p.name for p in tmp_path.iterdir()] == ["weights"]  # no temporary folder left
    assert len(list(cache.glob("*.npy"))) == 16
    mapped = NumpyBertEncoder(default_model_path(), max_tokens=256, weights_cache=cache)
    assert isinstance(mapped._words.base, np.memmap) and not mapped._words.flags.writeable
    assert mapped._streams is not None and encoder._streams is None  # the first questions read layers
    assert len(QUESTIONS) > STREAMED_QUESTIONS  # so both ways of reading the layers are compared
    for question in QUESTIONS:
        expected = encoder.encode_one(question).tobytes()
        assert built.encode_one(question).tobytes() == expected
        assert mapped.encode_one(question).tobytes() == expected
    assert mapped.encode(TEXTS).tobytes() == encoder.encode(TEXTS).tobytes()


class _Unread:
    """Stands in for a mapped table that must not be indexed."""

    def __getitem__(self, _rows: object) -> np.ndarray:
        raise AssertionError("the mapped word table was indexed")


def test_a_mapped_word_table_is_read_not_indexed(encoder: NumpyBertEncoder, tmp_path: Path) -> None:
    """A mapped encoder reads the word vectors it needs from the file (indexing the mapping would make
    the pages around every row resident: ~23 MiB of a question pool on the Django sdist) and gives the
    in-memory encoder's vectors bit for bit, for questions and batches."""
    cache = tmp_path / "weights"
    NumpyBertEncoder(default_model_path(), max_tokens=256, weights_cache=cache)  # converts
    mapped = NumpyBertEncoder(default_model_path(), max_tokens=256, weights_cache=cache)
    assert mapped._word_rows is not None and encoder._word_rows is None
    mapped._words = _Unread()  # type: ignore[assignment]
    assert mapped.encode(TEXTS).tobytes() == encoder.encode(TEXTS).tobytes()
    assert mapped.encode_one(QUESTIONS[0]).tobytes() == encoder.encode_one(QUESTIONS[0]).tobytes()


def test_feed_forward_blocks_give_the_vectors_of_one_block(encoder: NumpyBertEncoder,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The feed-forward part runs on `FFN_ROWS` tokens at a time: blocks that split sequences (7
    tokens) give the vectors of a single block of every token, within float rounding."""
    from retrievers.semantic import bert_numpy

    monkeypatch.setattr(bert_numpy, "FFN_ROWS", 1 << 20)
    whole = encoder.encode(TEXTS)
    monkeypatch.setattr(bert_numpy, "FFN_ROWS", 7)
    blocks = encoder.encode(TEXTS)
    assert np.allclose(blocks, whole, atol=1e-5)
    assert not np.array_equal(blocks, np.zeros_like(blocks))


def test_the_weights_cache_is_keyed_by_the_model_files(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "model.safetensors").write_bytes(b"one")
    first = numpy_weights_cache(model)
    (model / "model.safetensors").write_bytes(b"other")
    assert first is not None and numpy_weights_cache(model) not in (None, first)


def _best_of(runs: int, work: object) -> float:
    assert callable(work)
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.slow
def test_short_texts_beside_a_long_one_cost_their_own_tokens(encoder: NumpyBertEncoder) -> None:
    """Seven 5-token texts batched with one 256-token text: padded to 256 they would cost about 8x the
    long one alone; packed, about 1.1x."""
    short = [f"token {i}" for i in range(7)]
    alone = _best_of(5, lambda: encoder.encode([LONG]))
    mixed = _best_of(5, lambda: encoder.encode([LONG, *short]))
    assert mixed < 2.5 * alone, (mixed, alone)


def test_encoding_imports_no_torch() -> None:
    code = (
        "import sys; from retrievers.semantic.bert_numpy import NumpyBertEncoder; "
        "from retrievers.semantic.embedder import default_model_path; "
        "v = NumpyBertEncoder(default_model_path(), threads=2).encode(['a query', 'def f(): pass']); "
        "assert v.shape == (2, 384); "
        "heavy = [m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules]; "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, timeout=120)
