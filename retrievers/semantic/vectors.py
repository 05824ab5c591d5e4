"""An in-memory vector index: float16 vectors plus packed sign bits, searched by cosine similarity.

Rows hold unit-normalized vectors (float16, half the memory of float32) and their sign bits packed
into uint64 words. A search over a small collection (fewer than `exact_below` rows) scores every row
exactly. Over a larger one, a Hamming pass over the sign bits of all rows (XOR + popcount, vectorized)
picks the `candidates` nearest rows, which are then rescored exactly (a float32 copy of the rows, made
at the first search after a change, keeps the float16 conversion off each query).
Sign bits are taken after subtracting a centre (the mean of the rows, refreshed whenever the
collection has doubled, and by `settle` once a run of changes is complete): sentence embeddings share
a common direction, and signs relative to the mean carry more information than raw signs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from indexing.array_folder import RowReader, rows_of

_HAS_BITCOUNT = hasattr(np, "bitwise_count")
RECENTER_BLOCK = 4096  # rows converted at a time when the centre and every sign bit are taken again
_POPCOUNT8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


@dataclass
class VectorOptions:
    """Search tuning: exact scoring below `exact_below` rows, else Hamming + `candidates` rescored."""

    candidates: int = 300
    exact_below: int = 4096
    center: bool = True


class VectorIndex:
    """Vectors by integer id; `search` returns `(id, cosine)` best first."""

    def __init__(self, dims: int, options: VectorOptions | None = None) -> None:
        if dims <= 0:
            raise ValueError(f"dims must be positive, got {dims}")
        self.dims = dims
        self.options = options or VectorOptions()
        self._words = (dims + 63) // 64
        self._n = 0
        self._ids = np.zeros(0, dtype=np.int64)
        self._f16 = np.zeros((0, dims), dtype=np.float16)
        # float32 rows, kept between searches (reset by every change; twice the float16 rows' memory,
        # for a searched index only): float16 -> float32 conversion per search was a sixth of a warm
        # query on requests, and a third of the semantic retriever's time on Django's candidates
        self._f32: np.ndarray | None = None
        # the sign bits word-major (words x rows), kept between Hamming passes (reset by every change):
        # a popcount per word row and three adds is ~6x faster than a sum over each row's 4 words
        self._bits_t: np.ndarray | None = None
        # searches since the last change: the first one over a large index makes no float32 copy (a
        # one-query process, or an index changing between searches while it embeds, converts candidates)
        self._searched = 0
        self._bits = np.zeros((0, self._words), dtype=np.uint64)
        # the rows' file, while they are the saved ones unchanged (`restore` of mapped rows): a one-query
        # process reads its candidates' rows from it instead of faulting in the mapping around each
        self._rows_file: RowReader | None = None
        self._row_of: dict[int, int] | None = {}  # id -> row; None: not built since `restore` (`_row`)
        self._center = np.zeros(dims, dtype=np.float32)
        self._centered_at = 0  # row count when the centre was last computed

    def __len__(self) -> int:
        return self._n

    @property
    def _row(self) -> dict[int, int]:
        """Each id's row, built on first use after a `restore`: a search process that never asks for a
        row by id (a warm CLI call ranks by Hamming distance and rows) never builds it (5 MiB for the
        45k rows of the Django sdist)."""
        rows = self._row_of
        if rows is None:
            rows = self._row_of = {int(cid): row for row, cid in enumerate(self._ids[: self._n].tolist())}
        return rows

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._row

    def ids(self) -> set[int]:
        return set(self._row)

    def vector(self, chunk_id: int) -> np.ndarray | None:
        """The stored (normalized, float16-rounded) vector as float32, or None."""
        row = self._row.get(chunk_id)
        return None if row is None else self._f16[row].astype(np.float32)

    def export(self) -> tuple[np.ndarray, np.ndarray]:
        """(ids int64, float16 rows) of every stored vector, for saving."""
        return self._ids[: self._n].copy(), self._f16[: self._n].copy()

    def export_state(self) -> dict[str, np.ndarray]:
        """Everything a search depends on (rows, sign bits, centre and when it was taken), for
        `restore`: an index loaded from it answers exactly as the one that saved it, whereas adding
        the same vectors in one go would take another centre and so other Hamming candidates."""
        ids, rows = self.export()
        return {"ids": ids, "vectors": rows, "bits": self._bits[: self._n].copy(),
                "center": self._center.copy(), "centered_at": np.array(self._centered_at)}

    def restore(self, state: dict[str, np.ndarray], keep: np.ndarray | None = None) -> None:
        """Replace the contents with an `export_state` (the rows where `keep` is True, if given)."""
        ids, rows, bits = state["ids"], state["vectors"], state["bits"]
        if keep is not None:
            ids, rows, bits = ids[keep], rows[keep], bits[keep]
        if rows.ndim != 2 or rows.shape[1] != self.dims or bits.shape != (len(ids), self._words):
            raise ValueError("saved vectors do not match this index's dimensions")
        self._ids = np.ascontiguousarray(ids, dtype=np.int64)
        self._f16 = np.ascontiguousarray(rows, dtype=np.float16)
        self._changed()
        self._rows_file = RowReader.of(rows) if rows.dtype == np.float16 else None
        self._bits = np.ascontiguousarray(bits, dtype=np.uint64)
        self._n = len(self._ids)
        self._row_of = None
        self._center = np.asarray(state["center"], dtype=np.float32).reshape(self.dims)
        self._centered_at = int(state["centered_at"])

    # ----- writing -----------------------------------------------------------------------------

    def _changed(self) -> None:
        """Drop what searches keep between them (rows or ids changed)."""
        self._f32 = self._bits_t = None
        self._searched = 0
        self._rows_file = None

    def _signs(self, vectors: np.ndarray) -> np.ndarray:
        positive = (vectors.astype(np.float32) - self._center) > 0
        packed = np.packbits(positive, axis=1)
        pad = self._words * 8 - packed.shape[1]
        if pad:
            packed = np.pad(packed, ((0, 0), (0, pad)))
        return np.ascontiguousarray(packed).view(np.uint64)

    def _grow(self, need: int, room: int = 0) -> None:
        """Room for `need` rows: twice the rows held, or `need + room` when that is more (an embedding
        pass says how many rows are still to come: one allocation for all of them instead of a copy at
        each doubling, which held both copies at once: +17 MiB at the Django sdist's 32,768th row)."""
        cap = self._ids.shape[0]
        if need <= cap:
            return
        new = max(need + room, cap * 2, 64)
        ids = np.zeros(new, dtype=np.int64)
        f16 = np.zeros((new, self.dims), dtype=np.float16)
        bits = np.zeros((new, self._words), dtype=np.uint64)
        ids[: self._n], f16[: self._n], bits[: self._n] = (
            self._ids[: self._n], self._f16[: self._n], self._bits[: self._n])
        self._ids, self._f16, self._bits = ids, f16, bits

    def add(self, ids: Sequence[int], vectors: np.ndarray, room: int = 0) -> None:
        """Insert or replace vectors (rows of `vectors`, any float dtype) for `ids`; `room`: rows still
        to come (`_grow`)."""
        matrix = np.asarray(vectors, dtype=np.float32).reshape(len(ids), -1)
        if matrix.shape[1] != self.dims:
            raise ValueError(f"expected {self.dims}-dimensional vectors, got {matrix.shape[1]}")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix = (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32)
        rows = np.empty(len(ids), dtype=np.int64)
        fresh = 0
        for k, cid in enumerate(ids):
            row = self._row.get(int(cid))
            if row is None:
                row = self._n + fresh
                self._row[int(cid)] = row
                fresh += 1
            rows[k] = row
        self._grow(self._n + fresh, room)
        self._n += fresh
        self._ids[rows] = np.asarray(ids, dtype=np.int64)
        self._f16[rows] = matrix.astype(np.float16)
        self._changed()
        self._bits[rows] = self._signs(matrix)
        if self.options.center and self._n >= 64 and self._n >= 2 * self._centered_at:
            self._recenter()

    def settle(self) -> None:
        """Take the centre (and the sign bits) over every row now held, unless it was taken at this
        row count: called when a run of changes is complete, so the Hamming candidates depend on the
        rows, not on the order and batches they arrived in."""
        if self.options.center and self._n >= 64 and self._centered_at != self._n:
            self._recenter()

    def _recenter(self) -> None:
        # Summed in float64 (the centre does not depend on the rows' order beyond float32 rounding) and
        # in blocks of rows, as the signs are: a whole-index float32 copy cost Django's cold index ~19 MiB.
        total = np.zeros(self.dims, dtype=np.float64)
        for start in range(0, self._n, RECENTER_BLOCK):
            total += self._f16[start:min(start + RECENTER_BLOCK, self._n)].sum(axis=0, dtype=np.float64)
        self._center = (total / max(self._n, 1)).astype(np.float32)
        for start in range(0, self._n, RECENTER_BLOCK):
            end = min(start + RECENTER_BLOCK, self._n)
            self._bits[start:end] = self._signs(self._f16[start:end])
        self._bits_t = None
        self._centered_at = self._n

    def remove(self, ids: Iterable[int]) -> None:
        """Drop ids (unknown ids are ignored); the last row moves into each freed slot."""
        for cid in ids:
            row = self._row.pop(int(cid), None)
            if row is None:
                continue
            self._changed()
            last = self._n - 1
            if row != last:
                moved = int(self._ids[last])
                self._ids[row] = self._ids[last]
                self._f16[row] = self._f16[last]
                self._bits[row] = self._bits[last]
                self._row[moved] = row
            self._n = last

    # ----- searching ---------------------------------------------------------------------------

    def hamming(self, query: np.ndarray) -> np.ndarray:
        """Hamming distance between the query's sign bits and every row's."""
        qbits = self._signs(np.asarray(query, dtype=np.float32).reshape(1, -1))
        if not _HAS_BITCOUNT:
            xor = self._bits[: self._n] ^ qbits
            return _POPCOUNT8[xor.view(np.uint8)].sum(axis=1, dtype=np.int32)
        if self._bits_t is None or self._bits_t.shape[1] != self._n:
            self._bits_t = np.ascontiguousarray(self._bits[: self._n].T)
        counts = np.bitwise_count(self._bits_t ^ qbits.reshape(-1, 1))
        total = counts[0].astype(np.int32)
        for word in counts[1:]:
            total += word
        return total

    def search(
        self,
        query: np.ndarray,
        limit: int,
        allowed: Callable[[int], bool] | None = None,
        candidates: int | None = None,
        exact: bool | None = None,
    ) -> list[tuple[int, float]]:
        """The `limit` rows most similar to `query`: `(id, cosine)`, best first.

        `allowed` filters ids; `exact` forces (True) or forbids (False) scoring every row.
        """
        if limit <= 0 or self._n == 0:
            return []
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.dims:
            raise ValueError(f"expected a {self.dims}-dimensional query, got {q.shape[0]}")
        norm = float(np.linalg.norm(q))
        q = q / norm if norm > 0 else q
        use_exact = exact if exact is not None else self._n < self.options.exact_below
        f32 = self._f32 if self._f32 is not None and len(self._f32) == self._n else None
        if f32 is None and (use_exact or self._searched):
            f32 = self._f32 = self._f16[: self._n].astype(np.float32)
        self._searched += 1
        if use_exact:
            assert f32 is not None
            rows = np.arange(self._n)
            scores = f32 @ q
        else:
            dist = self.hamming(q)
            k = min(self._n, max(candidates or self.options.candidates, limit))
            rows = self._nearest(dist, k) if k < self._n else np.arange(self._n)
            scores = (self._candidate_rows(rows) if f32 is None else f32[rows]) @ q
        head = 2 * limit  # usually enough after `allowed`: sort only the rows scoring at least its last
        if head < len(scores):
            least = np.partition(scores, len(scores) - head)[len(scores) - head]
            found = self._ranked(rows, scores, np.flatnonzero(scores >= least), limit, allowed)
            if len(found) == limit:
                return found
        return self._ranked(rows, scores, np.arange(len(scores)), limit, allowed)

    def _candidate_rows(self, rows: np.ndarray) -> np.ndarray:
        """The rows at positions `rows` as float32: from the saved file when it holds them (`RowReader`),
        else from memory."""
        return rows_of(self._f16, rows, self._rows_file).astype(np.float32)

    def _nearest(self, dist: np.ndarray, k: int) -> np.ndarray:
        """The `k` rows nearest by Hamming distance; among rows at the k-th distance, the smallest ids
        (not whichever the partition met first: the candidates do not depend on the rows' order)."""
        kth = np.partition(dist, k - 1)[k - 1]
        below = np.flatnonzero(dist < kth)
        tied = np.flatnonzero(dist == kth)
        if len(below) + len(tied) > k:
            tied = tied[np.argsort(self._ids[tied], kind="stable")[: k - len(below)]]
        return np.concatenate((below, tied))

    def _ranked(self, rows: np.ndarray, scores: np.ndarray, picked: np.ndarray, limit: int,
                allowed: Callable[[int], bool] | None) -> list[tuple[int, float]]:
        """The first `limit` allowed of the `picked` positions by score, equal scores (identical chunks)
        by id: what sorting every score gives when `picked` holds every position scoring above the rest."""
        order = picked[np.lexsort((self._ids[rows[picked]], -scores[picked]))]
        ids = self._ids[rows[order]].tolist()  # (Python ints and floats at once, not per element)
        ranked = scores[order].tolist()
        if allowed is None:
            return list(zip(ids[:limit], ranked[:limit], strict=True))
        out: list[tuple[int, float]] = []
        for cid, score in zip(ids, ranked, strict=True):
            if allowed(cid):
                out.append((cid, score))
                if len(out) == limit:
                    break
        return out
