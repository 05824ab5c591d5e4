"""Shared pytest configuration: offline model loading and a per-session cache for indexes."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# The static embedding model is built once per machine (`make setup`); tests that point
# XDG_CACHE_HOME at a temporary folder still find it here instead of distilling it again.
if "CODESEEK_MODEL_DIR" not in os.environ:
    from retrievers.semantic.static_model import model_cache_root

    os.environ["CODESEEK_MODEL_DIR"] = str(model_cache_root())
