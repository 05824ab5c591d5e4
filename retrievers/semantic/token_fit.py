"""Fitting a static model's token vectors with torch: the training step of `semantic.static_training`.

The model is the token embeddings, a per-token weight and a linear map to the target space, fitted
with AdamW so that the weighted mean of a text's token vectors, through the map, approximates the
text's target vector (tokenlearn 0.2's recipe); optionally an in-batch contrastive term pulls code
texts towards their questions. `fit_embeddings` is the entry; `_Fit` holds one fit's tensors.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from retrievers.semantic.static_training import TrainSettings

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class QueryPairs:
    """Question/code pairs for the contrastive term: the token ids of each code text (its docstring
    sentence removed) and the source model's vector of the question, in the targets' space."""

    code_ids: Sequence[Sequence[int]]
    query_vectors: np.ndarray
    weight: float = 1.0
    temperature: float = 0.05


def fit_embeddings(embeddings: np.ndarray, token_ids: Sequence[Sequence[int]], targets: np.ndarray,
                   pad_id: int, settings: TrainSettings, progress: Progress | None = None,
                   time_budget_s: float | None = None, fold_head: bool = False,
                   pairs: QueryPairs | None = None, device: str = "cpu") -> np.ndarray:
    """Token vectors fitted so mean-pooled texts approximate `targets` (rows of `token_ids`).

    The last tenth of the texts (at most 2,000) is held out; the weights of the epoch with the lowest
    held-out loss are kept. Returns the new (vocabulary, dims) float32 matrix: each row the token's
    fitted vector times its fitted weight, so plain mean pooling (model2vec inference) reproduces it.

    `fold_head`: the linear map to the target space has no bias and is folded into every row (mean
    pooling is linear), so the returned rows live in the targets' space: a document's static vector is
    comparable with the source model's own (projected) vector of a query. `pairs` adds an in-batch
    contrastive term (InfoNCE) pulling each code text's pooled vector towards its question's vector;
    it needs `fold_head` (both sides must be in one space). `device`: the torch device the fit runs on
    (`bench/static_train_gpu.py` passes "cuda").
    """
    import torch

    torch.manual_seed(settings.seed)
    full = np.asarray(embeddings, dtype=np.float32)
    fit = _Fit(full, token_ids, targets, pad_id, settings, fold_head, pairs, device)
    vectors_out, weights_out, head = (t.cpu() for t in fit.train(progress, time_budget_s))
    if not fold_head:
        fitted = full.copy()
        fitted[fit.used] = (vectors_out * weights_out[:, None]).numpy()
        fitted[pad_id] = 0.0
        return fitted
    head_t = head.numpy().T.astype(np.float32)  # (static dims, target dims)
    folded = full @ head_t  # tokens the corpus never used: their distilled vector through the head
    folded[fit.used] = (vectors_out * weights_out[:, None]).numpy() @ head_t
    folded[pad_id] = 0.0
    return np.ascontiguousarray(folded, dtype=np.float32)


class _Fit:
    """One fit: the compact token table (only the tokens the corpus uses are trained: each step stays
    cheap), the model's parameters and optimizer, the training/held-out split and the pairs."""

    def __init__(self, full: np.ndarray, token_ids: Sequence[Sequence[int]], targets: np.ndarray,
                 pad_id: int, settings: TrainSettings, fold_head: bool, pairs: QueryPairs | None,
                 device: str = "cpu") -> None:
        import torch
        from torch import nn

        self.settings, self.pairs, self.nn, self.torch = settings, pairs, nn, torch
        self.device = device
        clipped = [np.asarray(ids[: settings.max_tokens], dtype=np.int64) for ids in token_ids]
        pair_clipped = [np.asarray(ids[: settings.max_tokens], dtype=np.int64)
                        for ids in (pairs.code_ids if pairs is not None else [])]
        self.used = used = np.unique(np.concatenate([*clipped, *pair_clipped,
                                                     np.array([pad_id], dtype=np.int64)]))
        remap = np.full(len(full), -1, dtype=np.int64)
        remap[used] = np.arange(len(used))
        self.pad_id = pad_id = int(remap[pad_id])
        vectors = torch.from_numpy(full[used].copy())
        norms = vectors.norm(dim=1).clamp_min(1e-8)
        self.emb = nn.Embedding.from_pretrained(vectors / norms[:, None], freeze=False,
                                                padding_idx=pad_id).to(device)
        self.weight = nn.Parameter(norms.clone().to(device))
        self.out_layer = nn.Linear(vectors.shape[1], targets.shape[1], bias=not fold_head).to(device)
        params = [*self.emb.parameters(), self.weight, *self.out_layer.parameters()]
        self.optimizer = torch.optim.AdamW(params, lr=settings.lr)

        self.rows = [remap[ids].tolist() or [pad_id] for ids in clipped]
        self.y = torch.from_numpy(np.asarray(targets, dtype=np.float32)).to(device)
        order = np.random.default_rng(settings.seed).permutation(len(self.rows))
        held = min(2000, len(self.rows) // 10)
        self.val_idx, self.train_idx = order[:held], order[held:]

        self.pair_rows = [remap[ids].tolist() or [pad_id] for ids in pair_clipped]
        self.pair_y = torch.from_numpy(np.asarray(pairs.query_vectors if pairs is not None
                                                  else np.zeros((0, 1)), dtype=np.float32)).to(device)
        self.pair_order = np.random.default_rng(settings.seed + 2).permutation(len(self.pair_rows))

    def train(self, progress: Progress | None, time_budget_s: float | None) -> tuple[Any, Any, Any]:
        """The epochs (within the time budget); the (vectors, weights, head) of the best held-out loss."""
        settings = self.settings
        started = time.monotonic()
        best_loss = self.held_out_loss()
        best = self.parameters()
        steps = max(1, -(-len(self.train_idx) // settings.batch_size)) * settings.epochs
        step = 0
        rng = np.random.default_rng(settings.seed + 1)
        for _ in range(settings.epochs):
            shuffled = rng.permutation(self.train_idx)
            for s in range(0, len(shuffled), settings.batch_size):
                self.step(shuffled[s : s + settings.batch_size], step)
                step += 1
                if progress is not None and step % 20 == 0:
                    progress("training", step, steps)
            if progress is not None:
                progress("training", step, steps)
            loss_now = self.held_out_loss()
            if loss_now < best_loss:
                best_loss = loss_now
                best = self.parameters()
            if time_budget_s is not None and time.monotonic() - started > time_budget_s:
                break
        return best

    def step(self, indices: Any, step: int) -> None:
        """One optimizer step on a batch of texts (and, with pairs, the contrastive term)."""
        ids, target = self.batch(indices)
        self.optimizer.zero_grad()
        loss = self.fit_loss(self.out_layer(self.pooled(ids)), target)
        if self.pairs is not None and len(self.pair_rows) >= 2:
            loss = loss + self.contrastive(step)
        loss.backward()
        self.optimizer.step()

    def parameters(self) -> tuple[Any, Any, Any]:
        return (self.emb.weight.detach().clone(), self.weight.detach().clone(),
                self.out_layer.weight.detach().clone())

    def padded(self, table: list[list[int]], indices: Any) -> Any:
        torch = self.torch
        width = max(len(table[i]) for i in indices)
        ids = torch.full((len(indices), width), self.pad_id, dtype=torch.long)
        for k, i in enumerate(indices):
            ids[k, : len(table[i])] = torch.tensor(table[i], dtype=torch.long)
        return ids.to(self.device)

    def batch(self, indices: Any) -> tuple[Any, Any]:
        return self.padded(self.rows, indices), self.y[list(indices)]

    def contrastive(self, step: int) -> Any:
        """InfoNCE over one batch of pairs (the batch's other questions are the negatives)."""
        pairs, nn = self.pairs, self.nn
        assert pairs is not None
        size = self.settings.batch_size
        start = (step * size) % max(1, len(self.pair_order) - size + 1)
        picked = self.pair_order[start : start + size]
        pooled = self.pooled(self.padded(self.pair_rows, picked))
        code = nn.functional.normalize(self.out_layer(pooled), dim=1)
        question = nn.functional.normalize(self.pair_y[list(picked)], dim=1)
        logits = question @ code.T / pairs.temperature
        labels = self.torch.arange(len(picked), device=self.device)
        return pairs.weight * nn.functional.cross_entropy(logits, labels)

    def pooled(self, ids: Any) -> Any:
        mask = (ids != self.pad_id).float()
        w = self.weight[ids] * mask
        summed = self.torch.bmm(w[:, None, :], self.emb(ids)).squeeze(1)
        return summed / mask.sum(1).clamp_min(1.0)[:, None]

    def fit_loss(self, predicted: Any, target: Any) -> Any:
        nn = self.nn
        if self.settings.loss == "cosine":
            return (1.0 - nn.functional.cosine_similarity(predicted, target, dim=1)).mean()
        return nn.functional.mse_loss(predicted, target)

    def held_out_loss(self) -> float:
        val_idx = self.val_idx
        if not len(val_idx):
            return 0.0
        with self.torch.no_grad():
            batches = (self.batch(val_idx[s : s + 256]) for s in range(0, len(val_idx), 256))
            losses = [self.fit_loss(self.out_layer(self.pooled(ids)), target).item() * len(target)
                      for ids, target in batches]
        return float(sum(losses) / len(val_idx))
