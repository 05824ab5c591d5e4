"""A BERT sentence encoder in numpy: the transformer tier without torch.

`NumpyBertEncoder(model_dir)` runs a sentence-transformers BERT model (BertModel + mean pooling +
normalization, such as the packaged all-MiniLM-L6-v2) from its `model.safetensors` and
`tokenizer.json` with numpy's BLAS: importing it costs milliseconds instead of torch's seconds, a
query encodes on its own (`encode_one`) without a batch, and its vectors match sentence-transformers'
(GELU in its tanh form; the tolerance is tests/unit/test_bert_numpy.py's). `supports(model_dir)`
says whether a directory is such a model; others (other architectures, other pooling) go through
sentence-transformers. Given a `weights_cache` folder, the weights are converted into it once (.npy
files, `load_weights`) and memory-mapped after that: a load costs the tokenizer's ~25 ms, not 0.2 s,
and only the pages an encode reads become resident (docs/tuning/2026-12-02-question-encoder-mmap.md).
A process's first questions read the layers' large matrices from those files instead (`pread`, one
layer at a time): a one-question CLI search peaks ~34 MiB lower for ~10 ms more. The word vectors of
a mapped table are always read (`pread`, each distinct token's row once an encode): indexing the
mapping made the kernel map the pages around every row as well (~23 MiB of a cold Django sdist
search's question pool, for ~9,000 rows of 1.5 KiB). The feed-forward part of a layer runs on
`FFN_ROWS` tokens at a time, so its two (tokens x 1536) intermediates stay small.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from indexing.array_folder import RowReader, map_arrays, save_arrays


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def supports(model_dir: Path) -> bool:
    """A BERT model with mean pooling, safetensors weights and a fast tokenizer."""
    config = _read_json(model_dir / "config.json") or {}
    pooling = _read_json(model_dir / "1_Pooling" / "config.json") or {}
    absolute = config.get("position_embedding_type", "absolute") == "absolute"
    return (config.get("model_type") == "bert" and absolute
            and config.get("hidden_act") == "gelu" and bool(pooling.get("pooling_mode_mean_tokens"))
            and (model_dir / "model.safetensors").is_file() and (model_dir / "tokenizer.json").is_file())


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis of a 2-D float32 array, in place (x is overwritten and returned)."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x)[:, None] * np.float32(1.0 / x.shape[1])
    var += np.float32(eps)
    np.sqrt(var, out=var)
    x /= var
    x *= weight
    x += bias
    return x


_GELU_C = np.float32(math.sqrt(2.0 / math.pi))


def _gelu(x: np.ndarray) -> np.ndarray:
    """GELU, tanh form, in place: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). Its largest error
    against the exact (erf) form is 5e-4; the sentence vectors stay within cosine 0.99999 of the exact
    ones (tests/unit/test_bert_numpy.py) and it costs a tenth of scipy's erf."""
    t = x * x
    t *= np.float32(0.044715)
    t += np.float32(1.0)
    t *= x
    t *= _GELU_C
    np.tanh(t, out=t)
    t += np.float32(1.0)
    t *= np.float32(0.5)
    x *= t
    return x


@dataclass
class _Layer:
    """One encoder layer's weights, laid out for `tokens @ weight` on contiguous arrays; the query
    weights and bias carry the attention's 1/sqrt(head size)."""

    qkv: np.ndarray  # (hidden, 3 * hidden): query | key | value
    qkv_bias: np.ndarray
    out: np.ndarray  # (hidden, hidden)
    out_bias: np.ndarray
    norm1: tuple[np.ndarray, np.ndarray]
    inner: np.ndarray  # (hidden, intermediate)
    inner_bias: np.ndarray
    down: np.ndarray  # (intermediate, hidden)
    down_bias: np.ndarray
    norm2: tuple[np.ndarray, np.ndarray]


# The large matrices (42.5 of MiniLM's 43 MiB of layer weights): a process's first questions read each
# layer's from the mapped files into a buffer of their own (`_layer_streams`) instead of faulting every
# page of them into the process; after `STREAMED_QUESTIONS` questions the mapping serves (a server).
_STREAMED = ("qkv", "out", "inner", "down")
FFN_ROWS = 256  # tokens per feed-forward block: its intermediates are 4x hidden wide
STREAMED_QUESTIONS = 3
WEIGHTS_FORMAT = 1  # bump when `_prepare` changes what it writes (the cache is keyed by it)
_EMBEDDINGS = ("words", "positions", "norm0_weight", "norm0_bias")
# Every layer's arrays of one kind stacked into one (layers, ...) array: [i] is layer i's, contiguous.
_STACKED = ("qkv", "qkv_bias", "out", "out_bias", "norm1_weight", "norm1_bias", "inner", "inner_bias",
            "down", "down_bias", "norm2_weight", "norm2_bias")


def _layer_arrays(w: dict[str, np.ndarray], i: int, scale: float) -> tuple[np.ndarray, ...]:
    """Layer i's arrays in `_STACKED` order."""
    def g(name: str) -> np.ndarray:
        return w[f"encoder.layer.{i}.{name}"]

    a = "attention.self."
    qkv = np.concatenate([g(a + "query.weight") * np.float32(scale), g(a + "key.weight"),
                          g(a + "value.weight")])
    bias = np.concatenate([g(a + "query.bias") * np.float32(scale), g(a + "key.bias"),
                           g(a + "value.bias")])
    return (np.ascontiguousarray(qkv.T), bias,
            np.ascontiguousarray(g("attention.output.dense.weight").T), g("attention.output.dense.bias"),
            g("attention.output.LayerNorm.weight"), g("attention.output.LayerNorm.bias"),
            np.ascontiguousarray(g("intermediate.dense.weight").T), g("intermediate.dense.bias"),
            np.ascontiguousarray(g("output.dense.weight").T), g("output.dense.bias"),
            g("output.LayerNorm.weight"), g("output.LayerNorm.bias"))


def _prepare(model_dir: Path, count: int, scale: float) -> dict[str, np.ndarray]:
    """The arrays the encoder runs on (`_EMBEDDINGS` and `_STACKED`), from `model.safetensors`."""
    from safetensors.numpy import load_file

    raw = load_file(str(model_dir / "model.safetensors"))
    w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in raw.items()}
    arrays = {
        "words": w["embeddings.word_embeddings.weight"],
        # Position embeddings with the token type 0 embedding (the only one a sentence uses) added.
        "positions": (w["embeddings.position_embeddings.weight"]
                      + w["embeddings.token_type_embeddings.weight"][0]),
        "norm0_weight": w["embeddings.LayerNorm.weight"], "norm0_bias": w["embeddings.LayerNorm.bias"]}
    layers = [_layer_arrays(w, i, scale) for i in range(count)]
    for j, name in enumerate(_STACKED):
        arrays[name] = np.stack([layer[j] for layer in layers])
    return arrays


def load_weights(model_dir: Path, count: int, scale: float, cache: Path | None) -> dict[str, np.ndarray]:
    """The encoder's arrays: mapped from `cache` (a folder of .npy files) when it holds them, else
    prepared from the safetensors file and written there first; in memory when `cache` is None or
    cannot be written. A mapped process reads no weights it does not use: of the 30522-row word
    table a question touches a few dozen rows."""
    names = (*_EMBEDDINGS, *_STACKED)
    mapped = map_arrays(cache, names) if cache is not None else None
    if mapped is not None:
        return _as_arrays(mapped)
    arrays = _prepare(model_dir, count, scale)
    if cache is None or not save_arrays(cache, arrays, durable=True):  # a read-only cache: in memory
        return arrays
    mapped = map_arrays(cache, names)
    return _as_arrays(mapped) if mapped is not None else arrays


def _as_arrays(mapped: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {name: np.asarray(array) for name, array in mapped.items()}


def _layer_streams(w: dict[str, np.ndarray], count: int) -> dict[str, RowReader] | None:
    """Readers of the `_STREAMED` matrices, one row per layer, from the files `load_weights` mapped them
    from (a plain view's base); None when they are in memory or any cannot be read."""
    readers = {}
    for name in _STREAMED:
        mapped = w[name].base
        reader = RowReader.of(mapped.reshape(count, -1)) \
            if isinstance(mapped, np.memmap) and len(mapped) == count else None
        if reader is None:
            return None
        readers[name] = reader
    return readers


def _layers(w: dict[str, np.ndarray], count: int) -> list[_Layer]:
    return [_Layer(w["qkv"][i], w["qkv_bias"][i], w["out"][i], w["out_bias"][i],
                   (w["norm1_weight"][i], w["norm1_bias"][i]), w["inner"][i], w["inner_bias"][i],
                   w["down"][i], w["down_bias"][i], (w["norm2_weight"][i], w["norm2_bias"][i]))
            for i in range(count)]


def _attend(qkv: np.ndarray, heads: int, out: np.ndarray) -> None:
    """Self-attention of one sequence (no padding): `qkv` (length, 3 * hidden) -> `out` (length, hidden).
    Every product runs on contiguous (heads, length, head size) arrays."""
    length, hidden = out.shape
    q, k, v = np.ascontiguousarray(qkv.reshape(length, 3, heads, hidden // heads).transpose(1, 2, 0, 3))
    scores = np.matmul(q, k.transpose(0, 2, 1))  # (heads, length, length); q carries 1/sqrt(head size)
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    context = np.matmul(scores, v)  # normalized after the product: (heads, length, head) is smaller
    context /= scores.sum(axis=-1, keepdims=True)
    out[:] = context.transpose(1, 0, 2).reshape(length, hidden)


class NumpyBertEncoder:
    """Mean-pooled, unit-normalized sentence vectors from a BERT model, batch by batch.

    A batch is packed, not padded: the dense layers run on all its tokens at once (one matrix
    product each) and attention runs sequence by sequence, so no work is spent on padding whatever
    the lengths. `threads` > 1 splits a batch's sequences between that many Python threads, each
    with one BLAS thread (numpy releases the GIL in its loops): on a loaded machine a BLAS thread
    pool waits for its slowest thread at every product, which made two BLAS threads 6-30x slower than
    one (bench/embed_bench.py); whole sequences per thread meet only once a batch.
    """

    def __init__(self, model_dir: Path, max_tokens: int = 256, threads: int = 1,
                 weights_cache: Path | None = None) -> None:
        from tokenizers import Tokenizer

        config = _read_json(model_dir / "config.json") or {}
        st_config = _read_json(model_dir / "sentence_bert_config.json") or {}
        self.layers = int(config["num_hidden_layers"])
        self.heads = int(config["num_attention_heads"])
        self.hidden = int(config["hidden_size"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        limit = int(st_config.get("max_seq_length") or config.get("max_position_embeddings", 512))
        self.max_tokens = min(max_tokens, limit)
        self.threads = max(1, threads)
        w = load_weights(model_dir, self.layers, 1.0 / math.sqrt(self.hidden // self.heads), weights_cache)
        self._words, self._positions = w["words"], w["positions"]
        words = w["words"].base
        self._word_rows = RowReader.of(words) if isinstance(words, np.memmap) else None
        self._norm0 = (w["norm0_weight"], w["norm0_bias"])
        self._layers = _layers(w, self.layers)
        self._streams = _layer_streams(w, self.layers)
        self._questions = 0  # questions encoded (`encode_one`), the first ones on streamed layers
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(self.max_tokens)
        self.tokenizer.no_padding()
        self._lock = threading.Lock()  # the Rust tokenizer is not shared across threads
        self._pools: dict[int, ThreadPoolExecutor] = {}  # helper threads per thread count asked for

    @property
    def dims(self) -> int:
        return self.hidden

    def _tokens(self, texts: list[str]) -> list[np.ndarray]:
        with self._lock:
            encodings = self.tokenizer.encode_batch(texts)
        return [np.asarray(e.ids or [0], dtype=np.intp) for e in encodings]

    def _word_vectors(self, flat: np.ndarray) -> np.ndarray:
        """A new (tokens, hidden) array of the word vectors of the token ids `flat`: read from the file
        when the table is mapped (each distinct row once), else taken from it."""
        if self._word_rows is not None:
            distinct, inverse = np.unique(flat, return_inverse=True)
            try:
                return self._word_rows.take(distinct)[inverse.reshape(-1)]
            except OSError:  # (the file cannot give them: the mapping can)
                pass
        return self._words[flat]

    def _streamed(self, i: int, layer: _Layer) -> _Layer:
        """Layer i with its large matrices read from their files (the mapped ones if a read fails)."""
        assert self._streams is not None
        try:
            read = {name: self._streams[name].take(np.array([i]))[0].reshape(getattr(layer, name).shape)
                    for name in _STREAMED}
        except OSError:
            return layer
        return replace(layer, **read)

    def _forward(self, ids: list[np.ndarray], streamed: bool = False) -> np.ndarray:
        """(len(ids), hidden) unit vectors of the tokenized sequences `ids`, packed into one array;
        `streamed`: each layer's large matrices read from the files for this call only."""
        lengths = [len(i) for i in ids]
        starts = np.cumsum([0, *lengths[:-1]])
        x = self._word_vectors(np.concatenate(ids))
        x += self._positions[np.concatenate([np.arange(n) for n in lengths])]
        x = _layer_norm(x, *self._norm0, self.eps)
        context = np.empty_like(x)
        for i, layer in enumerate(self._layers):
            if streamed:
                layer = self._streamed(i, layer)
            qkv = x @ layer.qkv
            qkv += layer.qkv_bias
            for start, n in zip(starts, lengths, strict=True):
                _attend(qkv[start:start + n], self.heads, context[start:start + n])
            h = context @ layer.out
            h += layer.out_bias
            h += x
            x = _layer_norm(h, *layer.norm1, self.eps)
            for block in range(0, len(x), FFN_ROWS):  # (each token's row on its own: in place by blocks)
                rows = x[block:block + FFN_ROWS]
                inner = rows @ layer.inner
                inner += layer.inner_bias
                h = _gelu(inner) @ layer.down
                h += layer.down_bias
                h += rows
                rows[:] = _layer_norm(h, *layer.norm2, self.eps)
        pooled = np.add.reduceat(x, starts, axis=0)
        pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)  # the mean's 1/n cancels here
        return pooled.astype(np.float32, copy=False)

    def encode(self, texts: list[str], threads: int | None = None) -> np.ndarray:
        """(n, dims) float32 unit vectors, in the order of `texts`; `threads` instead of the encoder's
        own count for this call (a question waiting on its pool takes every core)."""
        if not texts:
            return np.zeros((0, self.hidden), dtype=np.float32)
        ids = self._tokens(texts)
        count = max(1, threads or self.threads)
        with _one_blas_thread():
            parts = _split(ids, count)
            if len(parts) == 1:
                return self._forward(ids)
            # One executor per count asked for: its threads start on first use and keep the priority
            # of the thread that started them (the language server's background fill runs niced), so a
            # question's pool never runs on the fill's. (An executor that loses the race starts none.)
            pool = self._pools.get(count) or self._pools.setdefault(
                count, ThreadPoolExecutor(count - 1, thread_name_prefix="bert-numpy"))
            rest = [pool.submit(self._forward, [ids[i] for i in part]) for part in parts[1:]]
            out = np.empty((len(ids), self.hidden), dtype=np.float32)
            out[parts[0]] = self._forward([ids[i] for i in parts[0]])
            for part, future in zip(parts[1:], rest, strict=True):
                out[part] = future.result()
            return out

    def encode_one(self, text: str) -> np.ndarray:
        """(dims,) float32 unit vector of one text (a query): a batch of one, no padding, one thread.
        A process's first questions read the layers' large matrices rather than map them in (a CLI
        search's peak RSS: ~35 MiB less on MiniLM)."""
        ids = self._tokens([text])
        streamed = self._streams is not None and self._questions < STREAMED_QUESTIONS
        self._questions += 1
        with _one_blas_thread():
            return self._forward(ids, streamed)[0]


_blas_lock = threading.Lock()
_blas_users = 0
_blas_limit: Any = None
_blas_controller: Any = None


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    """BLAS on one thread while any encoder of this process runs (the setting is process-wide: two
    overlapping encodes must not restore it under each other)."""
    global _blas_users, _blas_limit, _blas_controller
    with _blas_lock:
        if _blas_users == 0:
            if _blas_controller is None:  # finding the BLAS libraries takes ~0.1 ms: once
                from threadpoolctl import ThreadpoolController

                _blas_controller = ThreadpoolController()
            _blas_limit = _blas_controller.limit(limits=1, user_api="blas")
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0:
                _blas_limit.restore_original_limits()
                _blas_limit = None


def _split(ids: list[np.ndarray], parts: int) -> list[list[int]]:
    """Indexes of `ids` in up to `parts` groups of about equal cost (tokens, attention included)."""
    if parts <= 1 or len(ids) < 2:
        return [list(range(len(ids)))]
    groups: list[list[int]] = [[] for _ in range(min(parts, len(ids)))]
    cost = [0.0] * len(groups)
    for i in sorted(range(len(ids)), key=lambda i: -len(ids[i])):  # longest first, to the lightest
        g = cost.index(min(cost))
        groups[g].append(i)
        cost[g] += len(ids[i]) * (1.0 + len(ids[i]) / 1500.0)
    return [g for g in groups if g]
