"""Training the static model on code (model2vec's tokenlearn recipe, written here with torch).

The distilled static model gives every token the vector MiniLM gives that token alone. Training fits
those vectors so that the mean-pooled static vector of a code chunk approximates MiniLM's vector of
the whole chunk: the targets are MiniLM's (unit) vectors of a code corpus, reduced by PCA to the
static model's dimensions; the model is the token embeddings, a per-token weight and a linear map to
the target space (dropped after training), fitted with AdamW on the mean squared error, as in
tokenlearn 0.2. The corpus is code the machine has offline: the Python standard library of the running
interpreter, chunked by codeseek's own chunker and shaped by `embed_text` as indexed chunks are, plus
query-like texts (the first sentence of a docstring).

`collect_texts` runs anywhere; `fit_embeddings` (semantic.token_fit) needs torch (the build's child
process has it).
"""

from __future__ import annotations

import hashlib
import re
import sysconfig
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from retrievers.semantic.token_fit import Progress, fit_embeddings
from retrievers.semantic.token_fit import QueryPairs as QueryPairs  # (callers import it from here)

# Stdlib folders that are tests, tools or vendored copies, not library code a user would search.
STDLIB_SKIP = frozenset({"test", "tests", "idlelib", "lib2to3", "turtledemo", "site-packages",
                         "dist-packages", "ensurepip", "__pycache__", "tkinter", "pydoc_data",
                         "encodings"})
_DOCSTRING = re.compile(r'^\s*(?:[rRuU]?)("""|\'\'\')\s*(.+?)(?:\1|$)', re.M | re.S)
_JSDOC = re.compile(r"/\*\*\s*(.+?)\*/", re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n\s*\n")


@dataclass(frozen=True)
class TrainSettings:
    """How the static model is trained; every field is part of the model's cache key."""

    chunks: int = 0  # code chunks in the training corpus (0: no training)
    query_share: float = 0.0  # query-like texts (docstring sentences), as a share of `chunks`
    per_file: int = 24  # at most this many chunks from one file (spreads the corpus over files)
    epochs: int = 4
    batch_size: int = 64
    lr: float = 1e-3
    max_tokens: int = 256  # what MiniLM reads of a text
    seed: int = 0
    loss: str = "mse"  # "mse" (tokenlearn's) or "cosine" (1 - cosine: only the direction, what ranks)


def stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def stdlib_files(root: Path | None = None) -> list[Path]:
    """The standard library's .py files (tests, tools and vendored folders left out), sorted."""
    base = root or stdlib_root()
    out = []
    for path in base.rglob("*.py"):
        parts = path.relative_to(base).parts
        if any(part in STDLIB_SKIP for part in parts[:-1]) or parts[0].startswith(("test_", "_pydev")):
            continue
        out.append(path)
    return sorted(out)


def _hash_key(text: str, seed: int) -> bytes:
    return hashlib.blake2b(f"{seed}\0{text}".encode(), digest_size=8).digest()


def _hash_order(items: Iterable[Any], key: Callable[[Any], str], seed: int) -> list[Any]:
    return sorted(items, key=lambda x: _hash_key(key(x), seed))


_LINE_DOC = re.compile(r"(?m)(?:^[ \t]*(?://[/!]?|#)[^\n]*\n)+")


def first_sentence(text: str, limit: int = 200) -> str | None:
    """A docstring's (JSDoc/Javadoc comment's, or leading `//`, `///` or `#` comment block's) first
    sentence, when it is prose."""
    found = _DOCSTRING.search(text) or _JSDOC.search(text)
    if found:
        body = found.group(found.lastindex or 1)
    else:
        block = _LINE_DOC.search(text)
        if block is None:
            return None
        body = re.sub(r"(?m)^[ \t]*(?://[/!]?|#)[ \t]?", "", block.group(0))
        body = re.sub(r"^[A-Za-z_][A-Za-z0-9_]* (?=[a-z])", "", body.strip())  # Go: "Name does ..."
    body = re.sub(r"^\s*\*\s?", "", body, flags=re.M).strip()
    sentence = _SENTENCE_END.split(body, maxsplit=1)[0].strip()
    sentence = " ".join(sentence.split())[:limit]
    words = re.findall(r"[A-Za-z]{2,}", sentence)
    return sentence if len(words) >= 3 and not sentence.startswith(("@", ">>>")) else None


def collect_texts(files: Sequence[Path], root: Path, settings: TrainSettings,
                  progress: Progress | None = None) -> tuple[list[str], list[str]]:
    """(chunk texts, query-like texts) from `files`, sampled deterministically by `settings.seed`.

    Files are visited in a seeded hash order; from each, up to `per_file` chunks (again hash-chosen)
    are shaped by `embed_text` exactly as the semantic retriever embeds them.
    """
    from indexing.labels import labels_for
    from indexing.languages import language_for_path
    from indexing.parse import parse_file
    from retrievers.semantic.embedded_text import embed_text

    chunks: list[str] = []
    queries: list[str] = []
    seen: set[str] = set()
    want_queries = int(settings.chunks * settings.query_share)
    ordered = _hash_order(files, lambda p: p.relative_to(root).as_posix(), settings.seed)
    for n, path in enumerate(ordered):
        if len(chunks) >= settings.chunks:
            break
        rel = path.relative_to(root).as_posix()
        try:
            source = path.read_bytes()
        except OSError:
            continue
        if len(source) > 400_000:
            continue
        result = parse_file(rel, source, language_for_path(rel), labels_for(rel))
        keyed = [(_hash_key(f"{rel}:{c.start_byte}", settings.seed), c) for c in result.chunks]
        picked = [c for _, c in sorted(keyed, key=lambda pair: pair[0])][: settings.per_file]
        for chunk in picked:
            code = source[chunk.start_byte : chunk.end_byte].decode("utf-8", "replace")
            if len(code.strip()) < 40:
                continue
            text = embed_text(chunk, code)
            if text in seen:
                continue
            seen.add(text)
            chunks.append(text)
            sentence = first_sentence(code) if len(queries) < want_queries else None
            if sentence and sentence not in seen:
                seen.add(sentence)
                queries.append(sentence)
        if progress is not None and n % 50 == 0:
            progress("collecting the training corpus", len(chunks), settings.chunks)
    return chunks[: settings.chunks], queries


_DOC_BLOCK = re.compile(r'("""|\'\'\')(?:.*?)\1|/\*\*.*?\*/|(?m:(?:^[ \t]*(?://[/!]?|#)[^\n]*\n)+)', re.S)


def question_pairs(texts: Iterable[str], min_code_chars: int = 40) -> list[tuple[str, str]]:
    """(question, code) pairs from chunk texts that carry a doc comment: the question is the doc's
    first sentence (`first_sentence`), the code is the text with that whole doc block removed, so the
    pair teaches what code that does not say it means."""
    pairs: list[tuple[str, str]] = []
    for text in texts:
        sentence = first_sentence(text)
        block = _DOC_BLOCK.search(text)
        if not sentence or block is None:
            continue
        code = (text[: block.start()] + text[block.end():]).strip()
        if len(code) >= min_code_chars:
            pairs.append((sentence, code))
    return pairs


_IDENT_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def identifier_vocabulary(texts: Iterable[str], known: set[str], size: int, min_count: int = 5) -> list[str]:
    """The `size` most frequent lowercased identifiers and identifier parts (snake_case and camelCase
    split) of `texts` that are not whole tokens of the `known` vocabulary, most frequent first."""
    counts: dict[str, int] = {}
    for text in texts:
        for ident in _IDENTIFIER.findall(text):
            words = {ident.lower().strip("_")}
            for piece in ident.split("_"):
                words.add(piece.lower())
                words.update(p.lower() for p in _IDENT_PART.findall(piece))
            for word in words:
                if len(word) >= 3 and word.isalpha() and word not in known:
                    counts[word] = counts.get(word, 0) + 1
    ranked = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
    return ranked[:size]


def corpus_fingerprint(texts: Sequence[str]) -> str:
    digest = hashlib.blake2b(digest_size=16)
    for text in texts:
        digest.update(text.encode("utf-8", "replace") + b"\0")
    return digest.hexdigest()


def pca_targets(targets: np.ndarray, dims: int) -> np.ndarray:
    """Targets reduced to `dims` principal components (centred), as tokenlearn does."""
    centred = targets - targets.mean(axis=0, keepdims=True)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    return (centred @ vt[:dims].T).astype(np.float32)


def projection_basis(targets: np.ndarray, dims: int) -> np.ndarray:
    """The (source dims, `dims`) basis of the top right singular vectors of `targets`, uncentred, so a
    source-model vector `v` maps to `v @ basis` and cosines in the subspace approximate full cosines
    (centring would move every query by the corpus mean)."""
    _, _, vt = np.linalg.svd(np.asarray(targets, dtype=np.float64), full_matrices=False)
    return np.ascontiguousarray(vt[:dims].T, dtype=np.float32)


def minilm_targets(source: Path, texts: Sequence[str], progress: Progress | None = None,
                   batch_size: int = 8) -> np.ndarray:
    """The source model's unit vectors of `texts` (sentence-transformers, local files only)."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(source), device="cpu", local_files_only=True)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    dims = getattr(model, "get_embedding_dimension", model.get_sentence_embedding_dimension)()
    out = np.zeros((len(texts), dims or 384), dtype=np.float32)
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        out[rows] = model.encode([texts[i][:1536] for i in rows], batch_size=len(rows),
                                 normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        if progress is not None:
            progress("embedding the training corpus", min(start + batch_size, len(order)), len(order))
    return out


def train_static_model(model: Any, source: Path, texts: Sequence[str], settings: TrainSettings,
                       progress: Progress | None = None) -> Any:
    """A model2vec StaticModel whose token vectors are fitted to `source`'s vectors of `texts`."""
    from model2vec import StaticModel

    targets = minilm_targets(source, texts, progress)
    pad_id = model.tokenizer.token_to_id("[PAD]")
    if pad_id is None:
        pad_id = 0
    ids = model.tokenize(list(texts))  # as inference reads them: no special tokens, unknowns dropped
    base = np.asarray(model.embedding, dtype=np.float32)
    fitted = fit_embeddings(base, ids, pca_targets(targets, model.dim), pad_id, settings, progress)
    return StaticModel(vectors=fitted, tokenizer=model.tokenizer, config=model.config, normalize=True)
