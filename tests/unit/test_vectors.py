"""VectorIndex: exact and Hamming-prefiltered cosine search against brute force."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from indexing.array_folder import map_arrays, save_arrays
from retrievers.semantic.vectors import VectorIndex, VectorOptions


def as_stored(matrix: np.ndarray) -> np.ndarray:
    """What the index keeps: unit rows rounded to float16."""
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    return unit.astype(np.float16).astype(np.float32)


def brute_force(
    ids: list[int], matrix: np.ndarray, query: np.ndarray, k: int, stored: bool = False
) -> list[int]:
    f16 = matrix if stored else as_stored(matrix)
    scores = f16 @ (query / np.linalg.norm(query))
    return [ids[i] for i in np.argsort(-scores, kind="stable")[:k]]


@pytest.fixture(scope="module")
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


def test_exact_search_equals_brute_force_on_random_data(rng: np.random.Generator) -> None:
    ids = list(range(1000, 3000))
    matrix = rng.standard_normal((len(ids), 96)).astype(np.float32)
    index = VectorIndex(96)
    index.add(ids, matrix)
    for _ in range(10):
        q = rng.standard_normal(96).astype(np.float32)
        got = index.search(q, 10, exact=True)
        assert [i for i, _ in got] == brute_force(ids, matrix, q, 10)
        assert all(a[1] >= b[1] for a, b in zip(got, got[1:], strict=False))
        assert -1.0 <= got[-1][1] <= got[0][1] <= 1.0


def test_hamming_with_all_candidates_is_exact(rng: np.random.Generator) -> None:
    ids = list(range(500))
    matrix = rng.standard_normal((500, 100)).astype(np.float32)  # 100 dims: padded sign words
    index = VectorIndex(100, VectorOptions(exact_below=0))
    index.add(ids, matrix)
    q = rng.standard_normal(100).astype(np.float32)
    assert [i for i, _ in index.search(q, 10, candidates=500)] == brute_force(ids, matrix, q, 10)


def test_hamming_prefilter_keeps_true_neighbours_on_clustered_data(rng: np.random.Generator) -> None:
    # Embeddings cluster around topics; queries land near a topic. Random offset shared by all rows
    # (a common direction, as sentence embeddings have) exercises the centring.
    dims, n = 384, 20_000
    centres = rng.standard_normal((200, dims)).astype(np.float32)
    shared = 3.0 * rng.standard_normal(dims).astype(np.float32)
    noise = 0.8 * rng.standard_normal((n, dims)).astype(np.float32)
    matrix = centres[rng.integers(0, 200, n)] + noise + shared
    ids = list(range(n))
    index = VectorIndex(dims)
    index.add(ids[:5000], matrix[:5000])
    index.add(ids[5000:], matrix[5000:])
    assert len(index) == n and index.options.exact_below < n
    stored = as_stored(matrix)
    recalls = []
    for t in range(20):
        q = matrix[t * 97] + 0.5 * rng.standard_normal(dims).astype(np.float32)
        got = [i for i, _ in index.search(q, 10)]
        recalls.append(len(set(got) & set(brute_force(ids, stored, q, 10, stored=True))) / 10)
    assert np.mean(recalls) >= 0.95


def test_hamming_matches_unpacked_popcount(rng: np.random.Generator) -> None:
    index = VectorIndex(70, VectorOptions(center=False))
    matrix = rng.standard_normal((50, 70)).astype(np.float32)
    index.add(list(range(50)), matrix)
    q = rng.standard_normal(70).astype(np.float32)
    expected = ((matrix > 0) != (q > 0)).sum(axis=1)
    assert np.array_equal(index.hamming(q), expected)


def test_cached_search_state_follows_every_change(rng: np.random.Generator) -> None:
    # the word-major sign bits and float32 rows are kept between searches: each change must reset them
    index = VectorIndex(256, VectorOptions(center=False, exact_below=0))
    matrix = rng.standard_normal((40, 256)).astype(np.float32)
    index.add(list(range(40)), matrix)
    q = rng.standard_normal(256).astype(np.float32)
    assert np.array_equal(index.hamming(q), ((matrix > 0) != (q > 0)).sum(axis=1))
    assert np.array_equal(index.hamming(-matrix[3])[3], 256)  # every bit differs: no 8-bit wrap-around
    first = index.search(q, 5)  # converts its candidates only; the second search keeps float32 rows
    assert index.search(q, 5) == first
    index.add([3], -matrix[3:4])  # replace a row between two searches
    index.remove([0])
    changed = matrix.copy()
    changed[3] = -matrix[3]
    changed[0] = changed[39]  # the last row moved into the freed slot
    got = index.hamming(q)
    assert np.array_equal(got, ((changed[:39] > 0) != (q > 0)).sum(axis=1))
    assert index.search(-matrix[3], 1, exact=False)[0][0] == 3


def test_add_replace_remove(rng: np.random.Generator) -> None:
    index = VectorIndex(8)
    vecs = np.eye(8, dtype=np.float32)
    index.add([10, 11, 12, 13], vecs[:4])
    assert index.search(vecs[2], 1) == [(12, pytest.approx(1.0, abs=1e-3))]
    index.add([12], vecs[7:8])  # replace in place
    assert len(index) == 4
    assert index.search(vecs[7], 1)[0][0] == 12
    index.remove([10, 99])  # the last row moves into the freed slot; unknown ids are ignored
    assert index.ids() == {11, 12, 13} and 10 not in index
    assert index.search(vecs[3], 1)[0][0] == 13
    assert [i for i, _ in index.search(vecs[3], 5, allowed=lambda i: i != 13)] == [11, 12]
    np.testing.assert_allclose(index.vector(11), vecs[1], atol=1e-3)
    index.remove([11, 12, 13])
    assert len(index) == 0 and index.search(vecs[0], 3) == []


def test_bad_shapes_are_named_errors() -> None:
    index = VectorIndex(4)
    with pytest.raises(ValueError, match="4-dimensional"):
        index.add([1], np.ones((1, 5), dtype=np.float32))
    index.add([1], np.ones((1, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="4-dimensional"):
        index.search(np.ones(3, dtype=np.float32), 1)
    with pytest.raises(ValueError):
        VectorIndex(0)


def test_restored_state_answers_exactly_as_the_saved_index(rng: np.random.Generator) -> None:
    # Added in batches, the centre is taken at each doubling (here from the first 1,024 rows of 1,500);
    # the same vectors added in one go would take the mean of all 1,500, and other Hamming candidates.
    matrix = (rng.standard_normal((1500, 64)) + 2.0 * rng.standard_normal((1, 64))).astype(np.float32)
    built = VectorIndex(64, VectorOptions(exact_below=0, candidates=20))
    for start in range(0, 1500, 100):
        built.add(list(range(start, start + 100)), matrix[start:start + 100])
    restored = VectorIndex(64, VectorOptions(exact_below=0, candidates=20))
    restored.restore(built.export_state())
    in_one_go = VectorIndex(64, VectorOptions(exact_below=0, candidates=20))
    in_one_go.add(list(range(1500)), matrix)
    queries = rng.standard_normal((30, 64)).astype(np.float32)
    assert all(restored.search(q, 10) == built.search(q, 10) for q in queries)
    assert any(in_one_go.search(q, 10) != built.search(q, 10) for q in queries)  # what restore avoids
    keep = np.arange(1500) % 3 != 0
    part = VectorIndex(64, VectorOptions(exact_below=0, candidates=20))
    part.restore(built.export_state(), keep)
    assert part.ids() == {i for i in range(1500) if i % 3 != 0}
    exact = [r for r in built.search(queries[0], 1500, exact=True) if r[0] % 3 != 0][:10]
    assert part.search(queries[0], 10, exact=True) == exact


def test_restore_refuses_other_dimensions(rng: np.random.Generator) -> None:
    index = VectorIndex(8)
    index.add([1, 2], rng.standard_normal((2, 8)).astype(np.float32))
    with pytest.raises(ValueError, match="dimensions"):
        VectorIndex(16).restore(index.export_state())


def sorted_reference(ids: list[int], matrix: np.ndarray, q: np.ndarray, limit: int,
                     allowed: object = None) -> list[tuple[int, float]]:
    """Every row scored and sorted by (score, id), the first `limit` allowed: what `search` must equal
    (rows stored as unit float16 vectors, as `add` keeps them)."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    f32 = (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32).astype(np.float16).astype(np.float32)
    unit = q / float(np.linalg.norm(q))
    scores = f32 @ unit
    out = []
    for row in np.lexsort((np.asarray(ids), -scores)):
        if allowed is None or allowed(ids[row]):  # type: ignore[operator]
            out.append((ids[row], float(scores[row])))
            if len(out) == limit:
                break
    return out


def test_partial_sort_keeps_the_full_sorts_order_ties_and_filtering(rng: np.random.Generator) -> None:
    # Rounded vectors tie often: equal scores must come by id (the ids here are shuffled against the
    # rows), and a filter that leaves out most rows must still fill the list from beyond the sorted head.
    for trial in range(40):
        n = int(rng.integers(1, 1500))
        matrix = rng.standard_normal((n, 16)).astype(np.float32)
        if trial % 2 == 0:
            matrix = np.round(matrix)
        ids = [int(i) for i in rng.permutation(n) + 7]
        index = VectorIndex(16)
        index.add(ids, matrix)
        q = rng.standard_normal(16).astype(np.float32)
        limit = int(rng.integers(1, 40))
        step = int(rng.integers(2, 6))
        allowed = None if trial % 3 == 0 else (lambda cid, m=step: cid % m == 0)
        assert index.search(q, limit, allowed=allowed, exact=True) == \
            sorted_reference(ids, matrix, q, limit, allowed)


def test_a_settled_index_answers_alike_however_its_rows_arrived(rng: np.random.Generator) -> None:
    # Embeddings share a direction (the offset), so the centre matters to the Hamming candidates.
    ids = list(range(6000))
    matrix = (rng.standard_normal((6000, 64)) + 0.8).astype(np.float32)
    options = VectorOptions(candidates=40, exact_below=1000)
    at_once = VectorIndex(64, options)
    at_once.add(ids, matrix)
    in_batches = VectorIndex(64, options)
    order = rng.permutation(len(ids))
    for start in range(0, len(ids), 64):  # as an embedding run stores them, in another order
        part = order[start:start + 64]
        in_batches.add([ids[i] for i in part], matrix[part])
    in_batches.settle()
    at_once.settle()
    for _ in range(20):
        q = (rng.standard_normal(64) + 0.8).astype(np.float32)
        assert in_batches.search(q, 10) == at_once.search(q, 10)


def test_mapped_rows_are_read_from_their_file_until_the_index_changes(
        rng: np.random.Generator, tmp_path: Path) -> None:
    matrix = rng.standard_normal((600, 32)).astype(np.float32)
    built = VectorIndex(32, VectorOptions(exact_below=0, candidates=40))
    built.add(list(range(600)), matrix)
    assert save_arrays(tmp_path / "v", built.export_state())
    mapped = map_arrays(tmp_path / "v", ["ids", "vectors", "bits", "center", "centered_at"])
    assert mapped is not None
    restored = VectorIndex(32, VectorOptions(exact_below=0, candidates=40))
    restored.restore(mapped)
    assert restored._rows_file is not None  # a one-query process reads its candidates from the file
    query = rng.standard_normal(32).astype(np.float32)
    assert restored.search(query, 10) == built.search(query, 10)
    restored.add([600], rng.standard_normal((1, 32)).astype(np.float32))
    assert restored._rows_file is None  # the rows are no longer the file's
    restored.restore(mapped, np.arange(600) % 2 == 0)
    assert restored._rows_file is None  # kept rows are a copy, not the file's order


def test_rows_still_to_come_are_made_room_for_at_once(rng: np.random.Generator) -> None:
    """An embedding pass's batches with the rows still to come: one allocation, the same index."""
    matrix = rng.standard_normal((1000, 16)).astype(np.float32)
    plain, roomy = VectorIndex(16), VectorIndex(16)
    capacities = set()
    for start in range(0, 1000, 100):
        ids = list(range(start, start + 100))
        plain.add(ids, matrix[start:start + 100])
        roomy.add(ids, matrix[start:start + 100], room=1000 - start - 100)
        capacities.add(len(roomy._ids))
    assert capacities == {1000}
    plain.settle()
    roomy.settle()
    query = rng.standard_normal(16).astype(np.float32)
    for exact in (True, False):
        assert roomy.search(query, 10, exact=exact) == plain.search(query, 10, exact=exact)
    assert [a.tolist() for a in roomy.export()] == [a.tolist() for a in plain.export()]
