"""The shipped model's large-corpus recipe (`bench/static_train_gpu.py`) run end to end on the CPU:
the real packaged MiniLM embeds a tiny packed corpus, each variant fits and writes its files."""

from __future__ import annotations

import json
import lzma
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "retrievers" / "semantic" / "data" / "static-minilm-code"


def test_variants_fit_on_their_parts_and_write_vectors_and_projection(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("sentence_transformers")
    from safetensors.numpy import load_file

    from retrievers.semantic.static_model import packaged_source

    code = ["def read_config(path):\n    return open(path).read()",
            "func Dial(addr string) (*Conn, error) {\n\treturn dial(addr)\n}",
            "fn parse(input: &str) -> Result<Value> {\n    parser::run(input)\n}",
            "function retry(fn, times) {\n  return fn().catch(() => retry(fn, times - 1));\n}"]
    parts = {"one": {"chunks": code[:2] * 6, "queries": ["Read the configuration file."]},
             "two": {"chunks": code[2:] * 6, "queries": []}}
    texts = tmp_path / "texts.json.xz"
    texts.write_bytes(lzma.compress(json.dumps(parts).encode()))
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, str(REPO / "bench" / "static_train_gpu.py"),
                          "--teacher", str(packaged_source()), "--base", str(SHIPPED), "--texts", str(texts),
                          "--out", str(out), "--device", "cpu", "--variant", "both=chunks+queries:1",
                          "--variant", "first=chunks-two:1"],
                         capture_output=True, text=True, timeout=300, env={"HF_HUB_OFFLINE": "1",
                                                                           "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr[-2000:]
    assert "both: 25 texts, 1 epochs" in run.stdout
    assert "first: 12 texts, 1 epochs" in run.stdout
    shipped = load_file(str(SHIPPED / "model.safetensors"))["embeddings"]
    for name in ("both", "first"):
        vectors = load_file(str(out / f"{name}.safetensors"))["embeddings"]
        basis = np.load(out / f"{name}-projection.npy", allow_pickle=False)
        # the top singular directions: 256, or as many as a corpus this small has
        assert basis.shape == (384, min(shipped.shape[1], 25 if name == "both" else 12))
        assert vectors.shape == (shipped.shape[0], basis.shape[1]) and vectors.dtype == np.float16
        assert np.isfinite(vectors.astype(np.float32)).all()
        np.testing.assert_allclose(basis.T @ basis, np.eye(basis.shape[1]), atol=1e-3)
