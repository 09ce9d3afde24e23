"""The kNN engine is exact: it agrees with scikit-learn's brute-force search (an independent oracle)
on distances and indices, excludes self by index, and its certificate fallback gives the same answer."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from scipy.spatial.distance import cdist
from sklearn.neighbors import NearestNeighbors

from tmcheck.empirics.knn import _rerank, kneighbors, resolve_device


def oracle(X, k):
    d, i = NearestNeighbors(n_neighbors=k, algorithm="brute").fit(X).kneighbors()
    return d, i


def exact_oracle(X, k):
    """Sorted distances from explicit differences (sklearn's Gram trick loses digits for close pairs)."""
    D = cdist(X, X)
    np.fill_diagonal(D, np.inf)
    return np.sort(D, axis=1)[:, :k]


def test_matches_sklearn_on_uncentred_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(700, 64)) + 1e3  # large offset: float32 Gram distances would fail
    nb = kneighbors(X, 10, block_size=256)
    d, i = oracle(X, 10)
    np.testing.assert_allclose(nb.distances, d, rtol=1e-9)
    assert (nb.indices == i).mean() > 0.999  # exact up to ties
    assert np.all(nb.indices != np.arange(len(X))[:, None])


@given(n=st.integers(12, 120), dim=st.integers(1, 9), k=st.integers(1, 10), block=st.integers(3, 50),
       seed=st.integers(0, 2**16))
def test_exact_for_any_tiling(n, dim, k, block, seed):
    X = np.random.default_rng(seed).normal(size=(n, dim))
    k = min(k, n - 1)
    nb = kneighbors(X, k, block_size=block)
    np.testing.assert_allclose(nb.distances, exact_oracle(X, k), rtol=1e-12, atol=1e-15)
    # the reported index really is at the reported distance
    np.testing.assert_allclose(np.linalg.norm(X[nb.indices] - X[:, None, :], axis=2), nb.distances, rtol=1e-12)


def test_certificate_fallback_gives_same_answer():
    X = np.random.default_rng(1).normal(size=(400, 20))
    full = kneighbors(X, 8)
    forced = kneighbors(X, 8, margin=0)  # no slack: every row must be recomputed exhaustively
    assert full.n_recomputed == 0 and forced.n_recomputed > 0
    np.testing.assert_allclose(forced.distances, full.distances, rtol=1e-12)
    np.testing.assert_array_equal(forced.indices, full.indices)


def test_torch_rerank_path_equals_numpy_path():
    """The CUDA re-ranking code path (torch tensors) run on CPU agrees with the CPU (numpy) path."""
    rng = np.random.default_rng(2)
    x = torch.as_tensor(rng.normal(size=(300, 16)))
    cand = np.stack([rng.permutation(np.delete(np.arange(300), i))[:12] for i in range(300)])
    d1, i1 = _rerank(x, cand, 5, 2**20)
    d2, i2 = _rerank(x, torch.as_tensor(cand), 5, 2**20)
    torch.testing.assert_close(d1, d2)
    assert torch.equal(i1, i2)


def test_duplicates_are_exact_zeros_and_ties_break_by_index():
    X = np.random.default_rng(3).normal(size=(50, 300)).astype(np.float32)
    X[10] = X[3]
    X[11] = X[3]
    nb = kneighbors(X, 3)
    assert nb.distances[3, 0] == 0.0 and nb.distances[3, 1] == 0.0
    assert list(nb.indices[3, :2]) == [10, 11]
    assert list(nb.indices[10, :2]) == [3, 11]


def test_bad_arguments():
    with pytest.raises(ValueError, match="k < N"):
        kneighbors(np.zeros((5, 2)), 5)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA"):
            resolve_device("cuda")
    assert resolve_device("auto").type in ("cpu", "cuda")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cpu_and_gpu_agree():
    X = np.random.default_rng(4).normal(size=(3000, 128))
    a, b = kneighbors(X, 20, device="cpu"), kneighbors(X, 20, device="cuda")
    np.testing.assert_allclose(a.distances, b.distances, rtol=1e-12)
    assert (a.indices == b.indices).mean() > 0.999
