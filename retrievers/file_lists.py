"""File-level lists: a retriever's chunk list folded into one entry per file.

A question about a module's role is often answered by a file whose evidence is spread over several
chunks, each only middling in its retriever's list (issue 9: "the file is the answer, but no single
chunk wins"). `file_list` sums a retriever's reciprocal ranks per file and lists each file once, as
its best chunk, ordered by that sum: a file holding ranks 1, 3, 4 and 6 of the text list leads it,
above a file with one hit at rank 2. The fused route adds such a list as one more weighted RRF
modality (`RankingConfig.file_lists`), so the file's best chunk gains where its file is consistently
matched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from retrievers.base import Hit


def file_list(hits: Sequence[Hit], path_of: Callable[[int], str | None], k: int,
              depth: int = 30) -> list[Hit]:
    """One hit per file among the first `depth` hits: its best chunk, scored by the sum over the file's
    chunks of 1 / (k + rank) (rank from 1), best first (ties: the earlier best chunk)."""
    sums: dict[str, float] = {}
    best: dict[str, tuple[int, int]] = {}  # path -> (rank of its best chunk, chunk id)
    for rank, hit in enumerate(hits[:depth], 1):
        path = path_of(hit.chunk_id)
        if path is None:
            continue
        sums[path] = sums.get(path, 0.0) + 1.0 / (k + rank)
        best.setdefault(path, (rank, hit.chunk_id))
    ordered = sorted(sums, key=lambda p: (-sums[p], best[p][0]))
    return [Hit(best[p][1], sums[p], {"path": p}) for p in ordered]
