"""Adversarial inputs for the exact kNN engine's certificate and its range query (empirics/id/knn.py):
ties, duplicates, tight clusters beside spread points, huge and tiny scales. Every answer is compared
with an independent oracle (explicit float64 differences, after an exact power-of-two rescaling where
the raw scale would under- or overflow the oracle); mutation tests show that a wrong error bound is
caught by these comparisons."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist

from tmcheck.empirics.id import knn
from tmcheck.empirics.id.knn import kneighbors


def oracle(X, k, pow2: int = 0):
    """Exact k nearest (distance, then index) from explicit differences of X * 2^pow2 (exact)."""
    D = cdist(np.ldexp(X, pow2), np.ldexp(X, pow2))
    np.fill_diagonal(D, np.inf)
    order = np.argsort(D, axis=1, kind="stable")[:, :k]  # stable: ties by index
    return np.ldexp(np.take_along_axis(D, order, axis=1), -pow2), order


def check(X, k, pow2=0, **kw):
    nb = kneighbors(X, k, **kw)
    d, _ = oracle(X, k, pow2)
    np.testing.assert_allclose(nb.distances, d, rtol=1e-12, atol=0)
    # the reported index is at the reported distance, and self never appears
    got = np.ldexp(np.linalg.norm(np.ldexp(X[nb.indices], pow2) - np.ldexp(X, pow2)[:, None, :], axis=2), -pow2)
    np.testing.assert_allclose(got, nb.distances, rtol=1e-12, atol=0)
    assert np.all(nb.indices != np.arange(len(X))[:, None])
    return nb


def clusters_and_spread(rng, dim=48):
    """360 points in 12 clusters (radius ~0.35) near the origin beside 240 spread points of norm ~7e3
    (in +- pairs, so the mean stays near 0): the regime of clustered real embeddings, where the
    global error maxima (set by the spread points) fail every clustered row."""
    centres = rng.normal(size=(12, dim)) / np.sqrt(dim)
    tight = np.repeat(centres, 30, axis=0) + 0.05 * rng.normal(size=(360, dim))
    half = rng.normal(size=(120, dim)) * 1e3
    return np.concatenate([tight, half, -half])[rng.permutation(600)]


@pytest.mark.parametrize("precision", ["bfloat16", "float32"])
@pytest.mark.parametrize("scale_pow2", [-700, 0, 700])
def test_huge_and_tiny_scales(precision, scale_pow2):
    """2^-700 and 2^700 (squares far outside float64, let alone bf16): same answer as at scale 1."""
    rng = np.random.default_rng(11)
    X = np.ldexp(rng.normal(size=(300, 24)) + 5.0, scale_pow2)
    check(X, 10, pow2=-scale_pow2, precision=precision, block_size=64)


@pytest.mark.parametrize("precision", ["bfloat16", "float32"])
def test_tight_clusters_beside_spread_points(precision):
    rng = np.random.default_rng(12)
    X = clusters_and_spread(rng)
    nb = check(X, 20, precision=precision, block_size=128)
    assert nb.n_recomputed > 0  # the range query was exercised


def test_local_bound_certifies_clustered_rows_the_global_one_cannot(monkeypatch):
    """With the local maxima (points within |x_i| + dk_i of the origin) the clustered rows pass the
    bf16 certificate; with the global maxima every one of them fails (the answer stays exact)."""
    X = clusters_and_spread(np.random.default_rng(12))
    local = kneighbors(X, 20, precision="bfloat16", block_size=128)
    assert local.n_recomputed <= 240
    slack = knn._Points.slack
    monkeypatch.setattr(knn._Points, "slack", lambda self, rows=None, rho=None: slack(self, rows))
    glob = kneighbors(X, 20, precision="bfloat16", block_size=128)
    assert glob.n_recomputed >= 360
    np.testing.assert_array_equal(glob.indices, local.indices)


def test_all_points_identical():
    X = np.tile(np.random.default_rng(13).normal(size=(1, 30)), (64, 1))
    for precision in ("bfloat16", "float32"):
        nb = kneighbors(X, 10, precision=precision, block_size=32)
        assert np.all(nb.distances == 0)
        want = np.array([[j for j in range(64) if j != i][:10] for i in range(64)])
        np.testing.assert_array_equal(nb.indices, want)  # ties by index


def test_duplicate_blocks_larger_than_k_and_margin():
    """Duplicate groups of 40 at k = 10, margin 0: every row's k-th and (k+1)-th values tie."""
    rng = np.random.default_rng(14)
    X = np.repeat(rng.normal(size=(10, 16)), 40, axis=0)[rng.permutation(400)]
    for precision in ("bfloat16", "float32"):
        d, i = oracle(X, 10)
        nb = kneighbors(X, 10, precision=precision, margin=0, block_size=64)
        np.testing.assert_array_equal(nb.distances, d)
        np.testing.assert_array_equal(nb.indices, i)


@settings(deadline=None, max_examples=25)
@given(
    seed=st.integers(0, 2**16),
    pow2=st.integers(-300, 300),
    dup=st.integers(0, 30),
    spread=st.sampled_from([1e-9, 1e-4, 1.0]),
    margin=st.sampled_from([0, 2, None]),
    precision=st.sampled_from(["bfloat16", "float32"]),
)
def test_exact_on_random_mixtures(seed, pow2, dup, spread, margin, precision):
    """Clusters of random tightness at a random power-of-two scale, with duplicated rows."""
    rng = np.random.default_rng(seed)
    X = np.repeat(rng.normal(size=(8, 12)), 20, axis=0) + spread * rng.normal(size=(160, 12))
    X[:dup] = X[dup : 2 * dup]
    X = np.ldexp(X, pow2)
    check(X, 7, pow2=-pow2, precision=precision, margin=margin, block_size=64)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_range_search_is_exact_from_any_upper_bound_and_refuses_a_wrong_one(dtype):
    rng = np.random.default_rng(15)
    x = torch.as_tensor(rng.normal(size=(200, 10)))
    pts = knn._Points(x, dtype)
    rows = torch.arange(0, 200, 7)
    _, want = oracle(x.numpy(), 5)
    far = torch.full((len(rows),), 100.0, dtype=torch.float64)  # every point is a hit
    rho = pts.sq[rows].sqrt() + far
    d, i = knn._range_search(x, pts, rows, far**2, rho, 5, 64)
    np.testing.assert_array_equal(i.numpy(), want[rows.numpy()])
    with pytest.raises(RuntimeError, match="fewer than k"):
        tiny = torch.full((len(rows),), 1e-3, dtype=torch.float64)  # not an upper bound of the 5th distance
        knn._range_search(x, pts, rows, tiny**2, pts.sq[rows].sqrt() + tiny, 5, 64)


def near_tie_data():
    rng = np.random.default_rng(6)
    X = np.repeat(rng.normal(size=(40, 64)), 20, axis=0) + 1e-2 * rng.normal(size=(800, 64))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def test_mutation_no_slack_in_the_certificate_is_caught(monkeypatch):
    """If the certificate ignored the rounding error (slack 0), rows with neighbour gaps below bf16's
    resolution would be certified wrongly: the oracle comparison catches it."""
    X = near_tie_data()
    want, _ = oracle(X, 10)
    monkeypatch.setattr(knn._Points, "slack", lambda self, rows=None, rho=None: torch.zeros(()))
    nb = kneighbors(X, 10, precision="bfloat16", margin=2, block_size=100)
    assert not np.allclose(nb.distances, want, rtol=1e-12, atol=0)


def test_mutation_range_query_without_slack_is_caught(monkeypatch):
    """A range query at exactly dk^2 (no float32 error allowance) misses neighbours: caught either as a
    wrong answer or by the fewer-than-k guard."""
    X = near_tie_data()
    want, _ = oracle(X, 10)
    monkeypatch.setattr(knn._Points, "upper", lambda self, t, rows=None, rho=None: t * (1 - 2.0**-12))
    try:
        nb = kneighbors(X, 10, precision="float32", margin=0, block_size=100)
    except RuntimeError:
        return
    assert not np.allclose(nb.distances, want, rtol=1e-12, atol=0)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_points_are_refused(bad):
    X = np.random.default_rng(16).normal(size=(20, 3))
    X[4, 1] = bad
    with pytest.raises(ValueError, match="finite"):
        kneighbors(X, 3)
    kneighbors(np.nan_to_num(X, nan=0.0, posinf=0.0, neginf=0.0), 3)  # the same points made finite pass


def simplex(n=400, seed=3):
    """The corners of a regular simplex (the unit vectors of R^n), moved by 1e-4: every distance is
    sqrt(2) to within a few 1e-4, far below bf16's resolution (2^-8) and far above float32's, so a
    bf16 range query's threshold takes in every point of each row that fails the certificate."""
    return np.eye(n) + 1e-4 * np.random.default_rng(seed).normal(size=(n, n))


def test_a_bf16_range_query_is_exact_and_hands_a_crowded_chunk_to_float32(monkeypatch):
    """Without a projection the range query runs on the bf16 search points; a chunk whose hits exceed
    RANGE_HITS_PER_ROW a row is searched again in float32. Both answers are the oracle's."""
    X = simplex()
    calls = []
    real = knn._range_hits
    monkeypatch.setattr(knn, "_range_hits", lambda pts, *a: calls.append(pts.dtype) or real(pts, *a))
    nb = check(X, 5, precision="bfloat16", margin=0, block_size=128, project=0)
    assert nb.n_recomputed > 0 and calls[0] == torch.bfloat16  # the bf16 points first
    assert torch.float32 in calls  # the simplex crowds the bf16 threshold: the float32 fallback ran
    calls.clear()
    monkeypatch.setattr(knn, "RANGE_HITS_PER_ROW", len(X))  # never crowded: bf16 alone, still exact
    check(X, 5, precision="bfloat16", margin=0, block_size=128, project=0)
    assert set(calls) == {torch.bfloat16}


def test_mutation_a_bf16_range_threshold_without_the_output_rounding_is_caught(monkeypatch):
    """bf16 rounds each search value once, by up to 2^-8 of it: a threshold that leaves that out (or
    any other part of the bound) misses neighbours near the k-th distance."""
    X = near_tie_data()
    want, _ = oracle(X, 10)
    monkeypatch.setattr(knn, "RANGE_HITS_PER_ROW", len(X))  # no float32 fallback to hide the error
    monkeypatch.setattr(knn._Points, "upper", lambda self, t, rows=None, rho=None: t * (1 - 2.0**-9))
    try:
        nb = kneighbors(X, 10, precision="bfloat16", margin=0, block_size=100, project=0)
    except RuntimeError:
        return
    assert not np.allclose(nb.distances, want, rtol=1e-12, atol=0)


def test_a_bf16_range_threshold_covers_the_output_rounding():
    """Integer points scaled by 2^-6 (every entry exact in bf16, the mean exactly 0): the sums before
    rounding are exact up to float32 accumulation, so the slack is tiny (about 1e-5 of the k-th
    squared distance) and bf16's one rounding of the output, up to 2^-8 of it, is what can lift a true
    neighbour above t + slack. With the exact k-th distance as reach the query must find the oracle's
    neighbours; the mutant threshold t + slack (no (1 + 2^-8)) finds fewer than k."""
    half = np.random.default_rng(0).integers(-7, 8, size=(150, 16)).astype(float)
    X = np.ldexp(np.concatenate([half, -half]), -6)
    x = torch.as_tensor(X)
    pts = knn._Points(x, torch.bfloat16)
    assert float(pts.en.max()) == 0.0
    d, want = oracle(X, 10)
    rows = torch.arange(len(X))
    kth = torch.as_tensor(d[:, -1])
    dd, ii = knn._range_search(x, pts, rows, kth**2, pts.sq.sqrt() + kth, 10, 64)
    np.testing.assert_array_equal(ii.numpy(), want)
    np.testing.assert_allclose(dd.numpy(), d, rtol=1e-12, atol=0)
