"""The order the transformer tier is filled in: the chunks likeliest to answer a question first.

The transformer embeds ~15-30 chunks/s on two cores, so a large tree is only partly covered for
minutes to an hour; what it covers first decides how good the answers are meanwhile (a chunk without a
transformer vector is ranked by the static tier: `retrievers.semantic.tiered`). `fill_key(snap,
read_text, opened)` is the sort key `SearchEngine.embed_transformer` hands the embedding pass:

1. chunks of files open in the editor (`opened`, the language server's buffers): what the user is
   working on now is what they ask about;
2. the file's label tier: source, then tests/docs/examples/config, then vendored/generated/legacy;
3. definitions (functions, methods, classes) before module code, blocks and text sections: the
   answers of natural-language questions are definitions;
4. the chunk's words rarest first (`word_rarity`: the mean inverse document frequency of its distinct
   words): a chunk of distinctive vocabulary is one the static tier places worst and a question's
   answer most often; generic glue (imports, getters, re-exports) comes last;
5. path and line (a stable order).

Measured against the earlier order (label tier, then PageRank), doc comments first, chunk size,
PageRank alone and random, with a tier filled 10-50%, on the vocabulary-gap sets and the public sets
together: `bench/fill_order_bench.py`, docs/tuning/2026-12-02-fill-order.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING

import numpy as np

from indexing.records import Chunk

if TYPE_CHECKING:
    from retrievers.snapshot import Snapshot

__all__ = ["DEFINITION_KINDS", "FillKey", "fill_key", "label_tier", "snapshot_rarity", "word_rarity"]

DEFINITION_KINDS = frozenset({"function", "method", "class"})
_LATE_LABELS = frozenset({"vendor", "generated", "legacy"})
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")  # camelCase and snake_case parts, numbers
MIN_WORD = 3  # shorter parts (i, x, id, of) say nothing of a chunk
_RARITY = "fill_order.rarity"  # the snapshot memo (and heirloom) of `snapshot_rarity`

FillKey = tuple[int, int, int, float, str, int]


def label_tier(chunk: Chunk) -> int:
    """0: source; 1: tests, docs, examples, config; 2: vendored, generated or legacy code."""
    labels = chunk.labels or ("source",)
    if "source" in labels:
        return 0
    return 2 if _LATE_LABELS.intersection(labels) else 1


def word_rarity(chunks: Iterable[Chunk], read_text: Callable[[Chunk], str | None]) -> dict[int, float]:
    """Chunk id -> the mean IDF (log N/df over `chunks`) of its distinct lower-cased words of at least
    `MIN_WORD` letters; 0.0 for a chunk without text or words."""
    vocab: dict[str, int] = {}
    rows: list[tuple[int, np.ndarray]] = []
    for chunk in chunks:
        try:
            text = read_text(chunk) or ""
        except (OSError, UnicodeError, ValueError, KeyError):
            text = ""
        words = {w.lower() for w in _WORD.findall(text) if len(w) >= MIN_WORD}
        ids = np.fromiter((vocab.setdefault(w, len(vocab)) for w in words), dtype=np.int64, count=len(words))
        rows.append((chunk.id, ids))
    if not rows:
        return {}
    df = np.bincount(np.concatenate([ids for _, ids in rows]), minlength=len(vocab))
    idf = np.log(len(rows) / np.maximum(df, 1))
    return {cid: float(idf[ids].mean()) if len(ids) else 0.0 for cid, ids in rows}


def snapshot_rarity(snap: Snapshot, read_text: Callable[[Chunk], str | None]) -> dict[int, float]:
    """`word_rarity` over the snapshot's chunks, computed once per snapshot; a snapshot that replaced
    one keeps its predecessor's figures for the chunks both hold (an edit re-reads nothing: every text
    of the tree was read for the first), and its new chunks, the edited files', count as 0.0 (they are
    the open files, first anyway)."""
    def build() -> dict[int, float]:
        before = snap.handed_down(_RARITY)
        if isinstance(before, dict):
            rarity = {cid: before[cid] for cid in snap.chunks if cid in before}
        else:
            rarity = word_rarity(snap.chunks.values(), read_text)
        snap.hand_down(_RARITY, rarity)
        return rarity

    return snap.memo(_RARITY, build)


def fill_key(snap: Snapshot | None = None, read_text: Callable[[Chunk], str | None] | None = None,
             opened: Collection[str] = ()) -> Callable[[Chunk], FillKey]:
    """The sort key of the transformer fill (module docstring), smaller first. The words' rarity is
    taken over `snap`'s chunks, read with `read_text` (either missing: all alike); `opened` holds
    workspace-relative paths of the files open in the editor."""
    rarity = snapshot_rarity(snap, read_text) if snap is not None and read_text else {}
    first = frozenset(opened)

    def key(chunk: Chunk) -> FillKey:
        return (0 if chunk.path in first else 1, label_tier(chunk),
                0 if chunk.kind in DEFINITION_KINDS else 1, -rarity.get(chunk.id, 0.0),
                chunk.path, chunk.start_line)

    return key
