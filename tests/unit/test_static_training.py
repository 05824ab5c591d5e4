"""Unit tests of retrievers.semantic.static_training: the training corpus, the vocabulary and the fitting."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from retrievers.semantic.static_training import (
    QueryPairs,
    TrainSettings,
    collect_texts,
    corpus_fingerprint,
    first_sentence,
    fit_embeddings,
    identifier_vocabulary,
    pca_targets,
    projection_basis,
    question_pairs,
    stdlib_files,
    stdlib_root,
)

MODULE = '''"""Tools for parsing configuration files."""

def read_config(path, strict=False):
    """Read a configuration file and return its sections as a dict.

    More text here.
    """
    with open(path) as fh:
        return parse_sections(fh.read(), strict=strict)


def parse_sections(text, strict):
    """x"""
    sections = {}
    for line in text.splitlines():
        if line.startswith("["):
            sections[line.strip("[]")] = {}
    return sections
'''


def test_first_sentence_takes_prose_from_docstrings_and_jsdoc() -> None:
    assert first_sentence('def f():\n    """Read a file and return it.  Then more."""\n') == \
        "Read a file and return it."
    assert first_sentence("/**\n * Parse the cookie header into an object.\n * @param {string} s\n */") == \
        "Parse the cookie header into an object."
    assert first_sentence('def f():\n    """x"""\n') is None  # not prose
    assert first_sentence("def f():\n    return 1\n") is None


def test_identifier_vocabulary_splits_snake_and_camel_case_and_skips_known_words() -> None:
    texts = ["getAttributeNode(node_list)", "node_list = getAttributeNode(x)"] * 3
    vocab = identifier_vocabulary(texts, known={"node", "list", "get"}, size=10, min_count=5)
    assert set(vocab) == {"getattributenode", "attribute"}
    # "node" is in both identifiers of each text: the most frequent word comes first
    assert identifier_vocabulary(texts, known=set(), size=1, min_count=5) == ["node"]
    assert identifier_vocabulary(texts, known=set(), size=10, min_count=6) == [
        "node", "attribute", "get", "getattributenode", "list"]


def test_collect_texts_is_deterministic_shaped_like_indexed_chunks_and_capped(tmp_path: Path) -> None:
    for name in ("config_a.py", "config_b.py", "config_c.py"):
        (tmp_path / name).write_text(MODULE.replace("read_config", f"read_{name[:-3]}"))
    files = sorted(tmp_path.glob("*.py"))
    settings = TrainSettings(chunks=2, per_file=2, query_share=0.5)
    chunks, queries = collect_texts(files, tmp_path, settings)
    assert (chunks, queries) == collect_texts(files, tmp_path, settings)
    assert len(chunks) == 2  # the corpus stops at `chunks`
    paths = [text.split("\n", 1)[0] for text in chunks]
    assert len(set(paths)) == 2 and set(paths) <= {"config_a.py", "config_b.py", "config_c.py"}
    assert all("def read_config_" in text for text in chunks)  # embed_text: path line, then the code
    assert queries and set(queries) <= {"Read a configuration file and return its sections as a dict.",
                                        "Tools for parsing configuration files."}
    seeds = {corpus_fingerprint(collect_texts(files, tmp_path, TrainSettings(chunks=2, seed=s))[0])
             for s in range(6)}
    assert len(seeds) > 1  # the seed picks the files


def test_stdlib_files_leave_tests_out() -> None:
    files = stdlib_files()
    root = stdlib_root()
    rel = {f.relative_to(root).as_posix() for f in files}
    assert "json/decoder.py" in rel
    assert not any(r.startswith(("test/", "idlelib/", "encodings/")) for r in rel)


def test_pca_targets_reduce_to_centred_components() -> None:
    rng = np.random.default_rng(0)
    targets = rng.normal(size=(50, 12)).astype(np.float32)
    reduced = pca_targets(targets, 4)
    assert reduced.shape == (50, 4)
    assert np.allclose(reduced.mean(axis=0), 0, atol=1e-5)


def test_fit_embeddings_moves_pooled_vectors_towards_the_targets() -> None:
    pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    vocab, dims, pad = 40, 8, 0
    truth = rng.normal(size=(vocab, dims)).astype(np.float32)
    start = rng.normal(size=(vocab, dims)).astype(np.float32)
    texts = [rng.integers(1, vocab, size=rng.integers(3, 9)).tolist() for _ in range(600)]
    targets = np.stack([truth[t].mean(axis=0) for t in texts])

    def fit_error(matrix: np.ndarray) -> float:
        pooled = np.stack([matrix[t].mean(axis=0) for t in texts])
        # the best linear map from pooled vectors to the targets (what the fitted out layer learns)
        solution, residual, *_ = np.linalg.lstsq(np.c_[pooled, np.ones(len(texts))], targets, rcond=None)
        return float(residual.sum())

    settings = TrainSettings(epochs=30, batch_size=32, lr=2e-2)
    fitted = fit_embeddings(start, texts, targets, pad, settings)
    assert fitted.shape == start.shape
    assert np.all(fitted[pad] == 0)
    assert fit_error(fitted) < 0.5 * fit_error(start)
    unused = 39 if all(39 not in t for t in texts) else None
    if unused is not None:  # a token the corpus never uses keeps its vector
        assert np.allclose(fitted[unused], start[unused])


# Keeps a few dozen tokens, so the distillation takes seconds.
TINY_VOCABULARY = r"^(?!(?:the|def|return|self|file|read|parse|open|path|name|data|[a-z]|\[PAD\]|\[UNK\])$).*"


@pytest.mark.slow
def test_build_trains_on_the_stdlib_in_the_child_and_keys_the_model(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from model2vec import StaticModel

    from retrievers.semantic.static_model import DistillSettings, ensure_static_model, static_model_dir

    monkeypatch.setenv("CODESEEK_MODEL_DIR", str(tmp_path / "models"))
    plain = DistillSettings(token_remove_pattern=TINY_VOCABULARY, train_chunks=0)  # distilled only
    trained = DistillSettings(token_remove_pattern=TINY_VOCABULARY, train_chunks=40, train_epochs=2)
    assert static_model_dir(settings=plain) != static_model_dir(settings=trained)
    phases: list[str] = []
    plain_dir = ensure_static_model(settings=plain)
    trained_dir = ensure_static_model(lambda phase, done, total: phases.append(phase), settings=trained)
    assert trained_dir == static_model_dir(settings=trained)
    assert "embedding the training corpus" in phases and "training" in phases
    before = StaticModel.from_pretrained(str(plain_dir)).embedding.astype(np.float32)
    after = StaticModel.from_pretrained(str(trained_dir)).embedding.astype(np.float32)
    assert before.shape == after.shape
    assert not np.allclose(before, after, atol=1e-3)  # the corpus's tokens moved


def test_projection_basis_is_orthonormal_and_keeps_the_main_directions() -> None:
    rng = np.random.default_rng(1)
    mixing = rng.normal(size=(3, 12))
    targets = (rng.normal(size=(200, 3)) @ mixing).astype(np.float32)  # rank 3 in 12 dims
    basis = projection_basis(targets, 3)
    assert basis.shape == (12, 3)
    assert np.allclose(basis.T @ basis, np.eye(3), atol=1e-5)
    # every target lies in the span: projecting keeps its length (cosines survive the projection)
    assert np.allclose(np.linalg.norm(targets @ basis, axis=1), np.linalg.norm(targets, axis=1), rtol=1e-4)


@pytest.mark.parametrize("loss", ["mse", "cosine"])
def test_folded_head_puts_pooled_vectors_in_the_target_space(loss: str) -> None:
    pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    vocab, dims, out_dims, pad = 40, 8, 5, 0
    truth = rng.normal(size=(vocab, out_dims)).astype(np.float32)
    start = rng.normal(size=(vocab, dims)).astype(np.float32)
    texts = [rng.integers(1, vocab, size=rng.integers(3, 9)).tolist() for _ in range(600)]
    targets = np.stack([truth[t].mean(axis=0) for t in texts])
    settings = TrainSettings(epochs=40, batch_size=32, lr=2e-2, loss=loss)
    folded = fit_embeddings(start, texts, targets, pad, settings, fold_head=True)
    assert folded.shape == (vocab, out_dims)  # rows now live in the targets' space
    pooled = np.stack([folded[t].mean(axis=0) for t in texts])
    norms = np.linalg.norm(pooled, axis=1) * np.linalg.norm(targets, axis=1)
    cosine = np.sum(pooled * targets, axis=1) / norms
    assert float(np.median(cosine)) > 0.9  # no map left to learn: plain mean pooling hits the targets


def test_contrastive_pairs_pull_code_towards_its_question() -> None:
    pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    vocab, dims, pad = 60, 8, 0
    start = rng.normal(size=(vocab, dims)).astype(np.float32)
    texts = [rng.integers(1, vocab, size=6).tolist() for _ in range(200)]
    targets = rng.normal(size=(200, dims)).astype(np.float32)  # unrelated regression targets
    questions = rng.normal(size=(64, dims)).astype(np.float32)
    code = [rng.integers(1, vocab, size=4).tolist() for _ in range(64)]
    settings = TrainSettings(epochs=30, batch_size=16, lr=2e-2)

    def accuracy(matrix: np.ndarray) -> float:
        pooled = np.stack([matrix[t].mean(axis=0) for t in code])
        pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
        q = questions / np.linalg.norm(questions, axis=1, keepdims=True)
        return float(np.mean(np.argmax(q @ pooled.T, axis=1) == np.arange(len(code))))

    plain = fit_embeddings(start, texts, targets, pad, settings, fold_head=True)
    paired = fit_embeddings(start, texts, targets, pad, settings, fold_head=True,
                            pairs=QueryPairs(code, questions, weight=1.0, temperature=0.1))
    assert accuracy(paired) > accuracy(plain) + 0.3


@pytest.mark.parametrize("text, question", [
    ('def f(x):\n    """Return the delay after failed logins.\n\n    More."""\n'
     '    return x * 2 + some_call(x, y)\n',
     "Return the delay after failed logins."),
    ("/**\n * Parse the header into a list of values.\n */\n"
     "function parse(h) { return h.split(',').map(trim); }\n",
     "Parse the header into a list of values."),
    ("// Clean returns the shortest path name equivalent to path.\nfunc Clean(path string) string {\n"
     "    return doClean(path, options)\n}\n", "returns the shortest path name equivalent to path."),
])
def test_question_pairs_take_the_doc_sentence_and_the_code_without_it(text: str, question: str) -> None:
    pairs = question_pairs([text])
    assert [q for q, _ in pairs] == [question]
    assert question.split()[1] not in pairs[0][1]  # the doc block is gone from the code side
