"""Experiment: the shipped model's recipe at scale, on a CUDA machine: MiniLM targets and the fits.

    python bench/static_train_gpu.py --teacher DIR --base DIR --texts texts.json.xz --out DIR \
        --variant all4=chunks:4 --variant all8=chunks:8 --variant q4=chunks+queries:4

`--texts`: an xz-compressed JSON object, corpus part -> {"chunks": [...], "queries": [...]}, as
`collect_texts` makes them (each text cut at the 1,536 characters MiniLM reads of it). `--teacher`:
the packaged all-MiniLM-L6-v2 folder (float16 weights travel; the model runs in float32). `--base`:
the plain model2vec distillation (`tokenizer.json` and `model.safetensors`) the fit starts from.
Each variant (name=what:epochs; what is `chunks` or `chunks+queries`, then `-part` for each part
left out) writes `<name>.safetensors` (float16 token vectors, folded head) and
`<name>-projection.npy` to `--out`, with the recipe of
`bench/shipped_model.py` otherwise: the targets projected on their top singular directions,
`fit_embeddings(fold_head=True)`. The 2-core development machine embeds 15-30 chunks a second, so
a corpus of this size (~200,000 texts) is a GPU job; the fit is the same code on either device.
"""

from __future__ import annotations

import argparse
import json
import lzma
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from bench.shipped_model import TEACHER_TOKENS  # noqa: E402
from retrievers.semantic.static_training import TrainSettings, projection_basis  # noqa: E402
from retrievers.semantic.token_fit import fit_embeddings  # noqa: E402


def teacher_vectors(teacher: Path, texts: list[str], device: str) -> np.ndarray:
    """MiniLM's unit vectors of `texts` (float32 model, longest-first batches)."""
    import torch
    from sentence_transformers import SentenceTransformer

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = SentenceTransformer(str(teacher), device=device, local_files_only=True).float()
    model.max_seq_length = TEACHER_TOKENS
    started = time.monotonic()
    out = model.encode(texts, batch_size=256, normalize_embeddings=True, convert_to_numpy=True,
                       show_progress_bar=False)
    print(f"teacher: {len(texts)} texts in {time.monotonic() - started:.1f} s", flush=True)
    return np.asarray(out, dtype=np.float32)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--teacher", required=True, type=Path)
    parser.add_argument("--base", required=True, type=Path)
    parser.add_argument("--texts", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--variant", action="append", default=[])
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    from safetensors.numpy import load_file, save_file
    from tokenizers import Tokenizer

    parts = json.loads(lzma.decompress(args.texts.read_bytes()))
    unique = list(dict.fromkeys(t for p in parts.values() for t in p["chunks"] + p["queries"]))
    vectors = dict(zip(unique, teacher_vectors(args.teacher, unique, args.device), strict=True))
    tokenizer = Tokenizer.from_file(str(args.base / "tokenizer.json"))
    pad_id = tokenizer.token_to_id("[PAD]") or 0
    base = np.asarray(load_file(str(args.base / "model.safetensors"))["embeddings"], dtype=np.float32)
    args.out.mkdir(parents=True, exist_ok=True)
    for spec in args.variant:
        name, _, rest = spec.partition("=")
        what, _, epochs = rest.partition(":")
        kinds, *left_out = what.split("-")
        texts = [t for part, p in parts.items() if part not in left_out
                 for t in p["chunks"] + (p["queries"] if "queries" in kinds else [])]
        targets = np.stack([vectors[t] for t in texts])
        basis = projection_basis(targets, base.shape[1])
        ids = [e.ids for e in tokenizer.encode_batch_fast(texts, add_special_tokens=False)]
        started = time.monotonic()
        fitted = fit_embeddings(base, ids, targets @ basis, pad_id, TrainSettings(epochs=int(epochs)),
                                fold_head=True, device=args.device)
        print(f"{name}: {len(texts)} texts, {epochs} epochs, fitted in {time.monotonic() - started:.0f} s",
              flush=True)
        save_file({"embeddings": fitted.astype(np.float16)}, str(args.out / f"{name}.safetensors"))
        np.save(args.out / f"{name}-projection.npy", basis.astype(np.float32), allow_pickle=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
