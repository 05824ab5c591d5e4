"""The semantic retriever over a tiny real corpus: real model, real SQLite store as the cache."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest

from indexing.records import Chunk
from indexing.store import IndexStore
from retrievers.base import Query, Retriever
from retrievers.semantic.embedded_text import cache_key, embed_text, normalize_code, truncate_path
from retrievers.semantic.embedder import Embedder, default_model_path
from retrievers.semantic.models import shared_embedder
from retrievers.semantic.retriever import SemanticRetriever

CORPUS = {
    "src/httplib/sessions.py": (
        "class SessionRedirectMixin:",
        "def rebuild_auth(self, prepared_request, response):\n"
        "    headers = prepared_request.headers\n"
        "    if 'Authorization' in headers and self.should_strip_auth(response.request.url, url):\n"
        "        # The redirect goes to another host: do not leak the user's password.\n"
        "        del headers['Authorization']\n",
    ),
    "src/httplib/retry.py": (
        "",
        "def backoff_delay(attempt, base=0.5, cap=30.0):\n"
        "    \"\"\"Seconds to sleep before the next attempt, doubling each time.\"\"\"\n"
        "    return min(cap, base * (2 ** attempt))\n",
    ),
    "src/media/images.py": (
        "",
        "def resize_image(img, width, height):\n"
        "    thumb = img.copy()\n"
        "    thumb.thumbnail((width, height))\n"
        "    return thumb\n",
    ),
    "src/web/cookies.py": (
        "",
        "def parse_cookie_header(value):\n"
        "    jar = {}\n"
        "    for part in value.split(';'):\n"
        "        name, _, val = part.strip().partition('=')\n"
        "        jar[name] = val\n"
        "    return jar\n",
    ),
    "src/accounts/passwords.py": (
        "",
        "def hash_password(password, salt):\n"
        "    return hashlib.pbkdf2_hmac('sha256', password.encode(), salt, 100_000)\n",
    ),
    "src/config/loader.py": (
        "",
        "def read_settings(path):\n"
        "    with open(path) as fh:\n"
        "        return tomllib.loads(fh.read())\n",
    ),
}


def make_chunks(root: Path, first_id: int = 1) -> list[Chunk]:
    chunks = []
    for n, (rel, (header, code)) in enumerate(sorted(CORPUS.items())):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(code)
        symbol = code.split("(")[0].removeprefix("def ")
        chunks.append(Chunk(
            path=rel, language="python", start_line=1, end_line=code.count("\n"), start_byte=0,
            end_byte=len(code.encode()), kind="function", symbol=symbol, labels=("source",),
            content_hash=hashlib.sha1(code.encode()).hexdigest(), header=header, id=first_id + n,
        ))
    return chunks


def reader(root: Path):
    def read_text(chunk: Chunk) -> str | None:
        try:
            return (root / chunk.path).read_text()
        except FileNotFoundError:
            return None

    return read_text


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    found = shared_embedder("minilm")
    assert isinstance(found, Embedder)
    return found


@pytest.fixture()
def setup(tmp_path: Path):
    root = tmp_path / "ws"
    store = IndexStore(tmp_path / "index")
    yield root, store, make_chunks(root)
    store.close()


def top_symbol(retriever: SemanticRetriever, chunks: list[Chunk], text: str) -> str | None:
    by_id = {c.id: c.symbol for c in chunks}
    return by_id[retriever.search(Query(text), 3)[0].chunk_id]


def test_embed_text_shape() -> None:
    chunk = Chunk(path="src/requests/packages/urllib3/contrib/emscripten/sessions.py", language="python",
                  start_line=10, end_line=14, start_byte=0, end_byte=1, kind="method", symbol="Session.send",
                  labels=("source",), content_hash="h", header="class Session(SessionRedirectMixin):")
    text = embed_text(chunk, "    def send(self):\n\n        return 1\n")
    assert text.splitlines() == [
        "src/requests/packages/…/emscripten/sessions.py",
        "class Session(SessionRedirectMixin):",
        "Session.send",
        "def send(self):",
        "    return 1",
    ]
    assert truncate_path("src/requests/sessions.py") == "src/requests/sessions.py"
    long = truncate_path("a" * 30 + "/" + "b" * 30 + "/c.py", 40)
    assert long.endswith("/c.py") and "…" in long and len(long) <= 40
    assert normalize_code("\t\tx = 1\n\n\t\ty = 2\n") == "x = 1\ny = 2"


def test_cache_key_depends_on_model_and_content() -> None:
    base = Chunk(path="a.py", language="python", start_line=1, end_line=2, start_byte=0, end_byte=1,
                 kind="function", symbol="f", labels=("source",), content_hash="abc")
    other_content = replace(base, content_hash="abd")
    moved_lines = replace(base, start_line=40, end_line=41, id=9)
    assert cache_key("m1", base) != cache_key("m2", base)
    assert cache_key("m1", base) != cache_key("m1", other_content)
    assert cache_key("m1", base) == cache_key("m1", moved_lines)  # same text embedded: same vector


@pytest.mark.slow
def test_finds_paraphrases(setup, embedder: Embedder) -> None:
    root, store, chunks = setup
    retriever = SemanticRetriever(store, reader(root), embedder)
    assert isinstance(retriever, Retriever) and retriever.name == "semantic"
    seen: list[tuple[int, int]] = []
    retriever.index(chunks, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (len(chunks), len(chunks))
    assert retriever.pending() == 0 and retriever.embedded() == len(chunks)
    assert top_symbol(retriever, chunks, "strip credentials on redirect") == "rebuild_auth"
    assert top_symbol(retriever, chunks, "wait longer between retries") == "backoff_delay"
    assert top_symbol(retriever, chunks, "make a smaller picture") == "resize_image"
    assert top_symbol(retriever, chunks, "load the configuration file") == "read_settings"
    hits = retriever.search(Query("strip credentials on redirect"), 10)
    assert len(hits) == len(chunks) and hits[0].score > hits[-1].score
    assert hits[0].detail.cosine is not None
    assert store.get_meta("embedding.model") == "all-MiniLM-L6-v2"
    assert store.get_meta("embedding.dims") == "384" and store.get_meta("embedding.normalized") == "true"


@pytest.mark.slow
def test_second_run_embeds_nothing_and_needs_no_model(setup, embedder: Embedder) -> None:
    root, store, chunks = setup
    SemanticRetriever(store, reader(root), embedder).index(chunks)
    cold = Embedder()  # a fresh, unloaded instance of the same model
    again = SemanticRetriever(store, reader(root), cold)
    again.index(chunks, embed=False)
    assert again.pending() == 0 and again.embedded() == len(chunks)
    assert again.embed_pending() == 0
    assert not cold.loaded  # vectors came from the cache; the model waits for the first query
    assert not again.model_changed


def test_saved_vectors_are_mapped_and_answer_as_before(setup, embedder: Embedder, tmp_path: Path) -> None:
    """A saved state is a folder of .npy per stamp, opened copy-on-write: the same answers, a change
    stays in memory (the file keeps the saved rows), another stamp's folder replaces it on save."""
    import numpy as np

    root, store, chunks = setup
    built = SemanticRetriever(store, reader(root), embedder)
    built.index(chunks)
    saved = tmp_path / "derived" / "vectors-main"
    built.save(saved, "rev-1")
    (folder,) = saved.parent.glob("vectors-main-*")
    warm = SemanticRetriever(store, reader(root), embedder)
    warm.index(chunks, embed=False, saved=saved, stamp="rev-1")
    assert warm.loaded_saved and warm.embedded() == len(chunks)
    rows = warm._vectors._f16  # type: ignore[union-attr]
    assert isinstance(rows.base, np.memmap) or isinstance(rows, np.memmap)
    for text in ("do not send the password to another host", "wait longer after each failure"):
        expected = [h.chunk_id for h in built.search(Query(text), 3)]
        assert [h.chunk_id for h in warm.search(Query(text), 3)] == expected
    on_disk = np.load(folder / "vectors.npy").copy()
    warm.update([replace(chunks[0], content_hash="changed")], [])  # dropped (rows move) and embedded again
    assert np.array_equal(np.load(folder / "vectors.npy"), on_disk)
    other = SemanticRetriever(store, reader(root), embedder)
    assert not (other.index(chunks, embed=False, saved=saved, stamp="rev-2") or other.loaded_saved)
    built.save(saved, "rev-2")
    assert [p.name for p in saved.parent.glob("vectors-main-*")] != [folder.name] and not folder.exists()


@pytest.mark.slow
def test_update_remove_pending_and_unreadable(setup, embedder: Embedder) -> None:
    root, store, chunks = setup
    retriever = SemanticRetriever(store, reader(root), embedder)
    retriever.index(chunks, embed=False)
    assert retriever.pending() == len(chunks) and retriever.search(Query("cookies"), 3) == []
    (root / "src/media/images.py").unlink()  # a file gone before it was embedded
    assert retriever.embed_pending() == len(chunks) - 1
    assert retriever.pending() == 0
    gone = next(c.id for c in chunks if c.symbol == "resize_image")
    assert gone not in {h.chunk_id for h in retriever.search(Query("resize image"), 10)}

    cookie = next(c for c in chunks if c.symbol == "parse_cookie_header")
    retriever.remove([cookie.id])
    assert cookie.id not in retriever.ids()
    assert cookie.id not in {h.chunk_id for h in retriever.search(Query("parse cookies"), 10)}
    new_code = "def send_email(to, subject, body):\n    smtp.sendmail(FROM, [to], subject + body)\n"
    (root / "src/mail.py").write_text(new_code)
    new = Chunk(path="src/mail.py", language="python", start_line=1, end_line=2, start_byte=0,
                end_byte=len(new_code), kind="function", symbol="send_email", labels=("source",),
                content_hash=hashlib.sha1(new_code.encode()).hexdigest(), id=77)
    retriever.update([new], [])
    assert retriever.search(Query("deliver a message by mail"), 1)[0].chunk_id == 77
    assert retriever.similar(77, 2)[0].chunk_id != 77


@pytest.mark.slow
def test_model_change_reembeds_and_never_mixes(setup, embedder: Embedder, tmp_path: Path) -> None:
    root, store, chunks = setup
    SemanticRetriever(store, reader(root), embedder).index(chunks)
    # The same weights under another name are, to the index, another model.
    other_dir = tmp_path / "other" / "minilm-copy"
    other_dir.mkdir(parents=True)
    for item in default_model_path().iterdir():
        (other_dir / item.name).symlink_to(item)
    other = SemanticRetriever(store, reader(root), str(other_dir))
    assert other.model_changed and other.previous_model == "all-MiniLM-L6-v2"
    assert other.model_id == "other/minilm-copy"
    other.index(chunks, embed=False)
    assert other.pending() == len(chunks)  # nothing borrowed from the first model's cache
    assert other.embed_pending() == len(chunks)
    assert store.get_meta("embedding.model") == "other/minilm-copy"
    assert top_symbol(other, chunks, "strip credentials on redirect") == "rebuild_auth"
    back = SemanticRetriever(store, reader(root), embedder)
    assert back.model_changed  # switching back is announced too; its vectors are still cached
    back.index(chunks, embed=False)
    assert back.pending() == 0


def test_a_pass_writes_the_cache_in_few_transactions_and_keeps_what_it_embedded(
        setup, monkeypatch: pytest.MonkeyPatch) -> None:
    """One cache transaction per `CACHE_WRITE` vectors, not per batch; a pass that stops early still
    leaves every vector it made in the cache (the next pass embeds only the rest)."""
    from retrievers.semantic import embed_pass
    from retrievers.semantic.retriever import SemanticOptions
    from retrievers.semantic.static_embedder import StaticEmbedder

    root, store, chunks = setup
    monkeypatch.setattr(embed_pass, "CACHE_WRITE", 4)
    writes: list[int] = []
    real = store.put_embeddings
    monkeypatch.setattr(store, "put_embeddings", lambda model, items: (writes.append(len(items)),
                                                                        real(model, items))[1])
    one_at_a_time = SemanticOptions(write_batch=1)
    first = SemanticRetriever(store, reader(root), StaticEmbedder(), one_at_a_time)
    first.index(chunks, embed=False)
    asked = iter(range(100))
    assert first.embed_pending(should_stop=lambda: next(asked) >= 5) == 5
    assert writes == [4, 1]  # (six batches of one: five embedded, then stopped)
    writes.clear()
    again = SemanticRetriever(store, reader(root), StaticEmbedder(), one_at_a_time)
    again.index(chunks, embed=False)
    assert again.pending() == 1 and again.embed_pending() == 1 and writes == [1]


def test_a_failing_pass_still_caches_what_it_embedded(setup, monkeypatch: pytest.MonkeyPatch) -> None:
    from retrievers.semantic.retriever import SemanticOptions
    from retrievers.semantic.static_embedder import StaticEmbedder

    root, store, chunks = setup
    embedder = StaticEmbedder()
    real, calls = embedder.encode_documents, []

    def failing(texts, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(texts)
        if len(calls) == 3:
            raise MemoryError("the third batch")
        return real(texts, **kwargs)

    monkeypatch.setattr(embedder, "encode_documents", failing)
    first = SemanticRetriever(store, reader(root), embedder, SemanticOptions(write_batch=1))
    first.index(chunks, embed=False)
    with pytest.raises(MemoryError, match="the third batch"):  # (its own error, not the cache's)
        first.embed_pending()
    assert store.count_embeddings(first.model_id) == 2
