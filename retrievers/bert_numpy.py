"""A BERT sentence encoder in numpy: the transformer tier without torch.

`NumpyBertEncoder(model_dir)` runs a sentence-transformers BERT model (BertModel + mean pooling +
normalization, such as the packaged all-MiniLM-L6-v2) from its `model.safetensors` and
`tokenizer.json` with numpy's BLAS: importing it costs milliseconds instead of torch's seconds, a
query encodes in a few milliseconds, and its vectors match sentence-transformers' to float32
rounding (tests/unit/test_bert_numpy.py). `supports(model_dir)` says whether a directory is such a
model; others (other architectures, other pooling) go through sentence-transformers.
"""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path
from typing import Any

import numpy as np


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
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def _gelu(x: np.ndarray) -> np.ndarray:
    from scipy.special import erf

    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


class NumpyBertEncoder:
    """Mean-pooled, unit-normalized sentence vectors from a BERT model, batch by batch."""

    def __init__(self, model_dir: Path, max_tokens: int = 256) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        config = _read_json(model_dir / "config.json") or {}
        st_config = _read_json(model_dir / "sentence_bert_config.json") or {}
        self.layers = int(config["num_hidden_layers"])
        self.heads = int(config["num_attention_heads"])
        self.hidden = int(config["hidden_size"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        limit = int(st_config.get("max_seq_length") or config.get("max_position_embeddings", 512))
        self.max_tokens = min(max_tokens, limit)
        raw = load_file(str(model_dir / "model.safetensors"))
        self.w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in raw.items()}
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(self.max_tokens)
        self.tokenizer.no_padding()
        self._lock = threading.Lock()  # the Rust tokenizer is not shared across threads

    @property
    def dims(self) -> int:
        return self.hidden

    def _tokens(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            encodings = self.tokenizer.encode_batch(texts)
        width = max(1, max(len(e.ids) for e in encodings))
        ids = np.zeros((len(texts), width), dtype=np.int64)
        mask = np.zeros((len(texts), width), dtype=np.float32)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1.0
        return ids, mask

    def encode(self, texts: list[str]) -> np.ndarray:
        """(n, dims) float32 unit vectors; texts of similar length batch best (less padding)."""
        if not texts:
            return np.zeros((0, self.hidden), dtype=np.float32)
        ids, mask = self._tokens(texts)
        w = self.w
        n, length = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:length][None, :, :]
             + w["embeddings.token_type_embeddings.weight"][0][None, None, :])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        head = self.hidden // self.heads
        bias = ((1.0 - mask) * -1e9)[:, None, None, :]  # padded keys get no attention
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def dense(t: np.ndarray, name: str, p: str = p) -> np.ndarray:
                return t @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            def split(t: np.ndarray) -> np.ndarray:
                return t.reshape(n, length, self.heads, head).transpose(0, 2, 1, 3)

            q = split(dense(x, "attention.self.query"))
            k = split(dense(x, "attention.self.key"))
            v = split(dense(x, "attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head) + bias
            scores -= scores.max(axis=-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(axis=-1, keepdims=True)
            context = (probs @ v).transpose(0, 2, 1, 3).reshape(n, length, self.hidden)
            x = _layer_norm(dense(context, "attention.output.dense") + x,
                            w[p + "attention.output.LayerNorm.weight"],
                            w[p + "attention.output.LayerNorm.bias"], self.eps)
            inner = _gelu(dense(x, "intermediate.dense"))
            x = _layer_norm(dense(inner, "output.dense") + x, w[p + "output.LayerNorm.weight"],
                            w[p + "output.LayerNorm.bias"], self.eps)
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.where(norms > 0, norms, 1.0)).astype(np.float32)
