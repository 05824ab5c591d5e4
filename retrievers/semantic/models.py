"""Which embedder a `model` option names: the static tier by default, a transformer on request.

| `model` value | embedder |
|---|---|
| None, `""`, `"static"` | `StaticEmbedder()`: model2vec distilled from the packaged all-MiniLM-L6-v2 |
| a model2vec directory, or `"static:PATH"` | `StaticEmbedder(PATH)` |
| `"minilm"`, `"transformer"`, `"all-MiniLM-L6-v2"` | `Embedder()`: the packaged MiniLM (numpy backend) |
| any other id or path | `Embedder(model)`: a sentence-transformers model (local files only) |

Both embedders share one interface (`TextEmbedder`); only `Embedder` imports torch, and only when it
loads. `shared_embedder(model)` gives one instance per model and process, so a model loads once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from retrievers.semantic.embedder import DEFAULT_MODEL_ID, Embedder, EmbedderOptions
from retrievers.semantic.static_embedder import STATIC_PREFIX, StaticEmbedder, is_static_model_dir

STATIC_NAMES = ("", "static")
TRANSFORMER_NAMES = ("minilm", "transformer", DEFAULT_MODEL_ID.lower())


class TextEmbedder(Protocol):
    """What the semantic retriever needs from an embedding model."""

    model_id: str
    normalized: bool
    configured_prefixes: tuple[str, str] | None

    @property
    def loaded(self) -> bool: ...
    @property
    def loading(self) -> bool: ...
    def load(self) -> None: ...
    @property
    def dims(self) -> int: ...
    def encode_documents(self, texts: Sequence[str], batch_size: int | None = None,
                         progress: Callable[[int, int], None] | None = None,
                         threads: int | None = None) -> np.ndarray: ...
    def encode_query(self, text: str) -> np.ndarray: ...


def is_static(model: str | None) -> bool:
    """True when `model` names the static tier (the default)."""
    if model is None or model.strip().lower() in STATIC_NAMES or model.startswith(STATIC_PREFIX):
        return True
    path = Path(model).expanduser()
    return path.is_dir() and is_static_model_dir(path)


def make_embedder(model: str | None = None, options: EmbedderOptions | None = None) -> TextEmbedder:
    """The embedder `model` names (module docstring); `options` apply to transformer models."""
    if is_static(model):
        if model is None or model.strip().lower() in STATIC_NAMES:
            return StaticEmbedder()
        path = model[len(STATIC_PREFIX):] if model.startswith(STATIC_PREFIX) else model
        return StaticEmbedder(path)
    assert model is not None
    if model.strip().lower() in TRANSFORMER_NAMES:
        return Embedder(None, options)
    return Embedder(model, options)


_shared: dict[str | None, TextEmbedder] = {}
_shared_lock = threading.Lock()


def shared_embedder(model: str | None = None) -> TextEmbedder:
    """One embedder per model name in this process (a model loads once, whoever asks)."""
    with _shared_lock:
        if model not in _shared:
            _shared[model] = make_embedder(model)
        return _shared[model]
