"""The kNN engine is exact: it agrees with scikit-learn's brute-force search (an independent oracle)
on distances and indices, excludes self by index, and its fallback (a float32 range query) gives the same answer.
Both candidate-search types (bfloat16 and float32) give the same, exact answer, and the GEMM behaves
as the bf16 certificate assumes."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist
from sklearn.neighbors import NearestNeighbors

from tmcheck.empirics.id import knn
from tmcheck.empirics.id.knn import _rerank, kneighbors, resolve_device


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


@given(
    n=st.integers(12, 120),
    dim=st.integers(1, 9),
    k=st.integers(1, 10),
    block=st.integers(3, 50),
    seed=st.integers(0, 2**16),
    precision=st.sampled_from(["bfloat16", "float32"]),
)
def test_exact_for_any_tiling(n, dim, k, block, seed, precision):
    X = np.random.default_rng(seed).normal(size=(n, dim))
    k = min(k, n - 1)
    nb = kneighbors(X, k, block_size=block, precision=precision)
    np.testing.assert_allclose(nb.distances, exact_oracle(X, k), rtol=1e-12, atol=1e-15)
    # the reported index really is at the reported distance
    np.testing.assert_allclose(
        np.linalg.norm(X[nb.indices] - X[:, None, :], axis=2), nb.distances, rtol=1e-12, atol=1e-15
    )


@pytest.mark.parametrize("precision", ["bfloat16", "float32"])
def test_the_locality_order_changes_nothing_the_caller_sees(precision):
    """Above one tile the engine reorders the points (near points at near positions); answers come back
    in the caller's rows and indices: a permuted input gives the permuted answer, with the certificate's
    fallback forced (margin 0) and not."""
    from tmcheck.empirics.id.knn import _locality_order

    rng = np.random.default_rng(3)
    X = rng.normal(size=(900, 12))
    x = torch.as_tensor(X)
    order = _locality_order(x, x.mean(dim=0, keepdim=True)).numpy()
    assert sorted(order) == list(range(900)) and not np.array_equal(order, np.arange(900))  # a real reordering
    perm = rng.permutation(900)
    for margin in (0, None):
        a = kneighbors(X, 7, block_size=128, margin=margin, precision=precision)
        b = kneighbors(X[perm], 7, block_size=128, margin=margin, precision=precision)
        np.testing.assert_array_equal(b.distances, a.distances[perm])
        np.testing.assert_array_equal(perm[b.indices], a.indices[perm])
        np.testing.assert_allclose(a.distances, exact_oracle(X, 7), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("n, block", [(400, 3072), (900, 128)])
def test_certificate_fallback_gives_same_answer(n, block):
    """A row answered by the range query gets the very numbers the re-ranking would have given it
    (one float64 formula for every pair distance), with and without the locality order."""
    X = np.random.default_rng(1).normal(size=(n, 20)) * 3.0  # not a power of two: the frame's scaling is used
    full = kneighbors(X, 8, block_size=block)
    forced = kneighbors(X, 8, margin=0, block_size=block)  # no slack: every row goes to the range query
    assert full.n_recomputed == 0 and forced.n_recomputed > 0
    np.testing.assert_array_equal(forced.distances, full.distances)
    np.testing.assert_array_equal(forced.indices, full.indices)


PEAK_SCRIPT = """
import resource, numpy as np
from tmcheck.empirics.id.knn import kneighbors
X = np.random.default_rng(2).normal(size=(4096, 2048)) * 3.0
keep = X.copy()
kneighbors(X[:200], 5)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
kneighbors(X, 10)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print((after - before) / X.nbytes, bool((X == keep).all()))
"""


def test_the_callers_array_is_read_in_place_and_never_modified():
    """The engine makes no float64 copy of the input (its rows are scaled, reordered and centred chunk by
    chunk) and never writes to it. Peak memory of a fresh process, in units of the input's size: 3.0
    (bf16 GEMM operands, the float32 range-query copy, tiles and chunks), against 4.6 when the scaled and
    the centred copies of the whole input existed."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", PEAK_SCRIPT], capture_output=True, text=True, check=True).stdout
    growth, unchanged = out.split()
    assert unchanged == "True"
    assert float(growth) < 3.8, f"peak memory grew by {growth} x the input's size"


def lattice_oracle(X, k):
    """Integer points: squared distances are exact integers, so (distance, index) order is exact."""
    D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)  # (N, N) exact in int64
    np.fill_diagonal(D2, np.iinfo(np.int64).max)
    order = np.argsort(D2, axis=1, kind="stable")[:, :k]  # stable: ties by index
    return np.sqrt(np.take_along_axis(D2, order, axis=1).astype(np.float64)), order


@pytest.mark.parametrize("precision", ["bfloat16", "float32"])
@pytest.mark.parametrize("margin", [0, 1, None])
def test_exact_with_ties_and_duplicates(precision, margin):
    """Lattice points in {0..2}^40 (thousands of exactly tied distances), exact duplicates, and an
    offset of 1e3 (large float32 Gram cancellation): indices equal the brute-force order exactly."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 3, size=(600, 40))
    X[100:110] = X[7]  # a duplicate cluster bigger than nothing, smaller than k
    X[200:230] = X[8]  # a duplicate cluster bigger than k
    d, i = lattice_oracle(X, 12)
    nb = kneighbors(X + 1000.0, 12, block_size=128, margin=margin, precision=precision)
    np.testing.assert_array_equal(nb.distances, d)
    np.testing.assert_array_equal(nb.indices, i)


@pytest.mark.parametrize("precision", ["bfloat16", "float32"])
def test_exact_with_near_ties(precision):
    """Tight clusters on a sphere, neighbour gaps far below bf16's resolution: every row fails the
    bf16 certificate and is answered by the range query; all come out exact."""
    rng = np.random.default_rng(6)
    base = rng.normal(size=(40, 64))
    X = np.repeat(base, 20, axis=0) + 1e-2 * rng.normal(size=(800, 64))  # 40 tight clusters of 20
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    nb = kneighbors(X, 10, block_size=100, margin=2, precision=precision)
    # atol: centring in float64 moves each distance by ~1e-16
    np.testing.assert_allclose(nb.distances, exact_oracle(X, 10), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(
        np.linalg.norm(X[nb.indices] - X[:, None, :], axis=2), nb.distances, rtol=1e-12, atol=1e-15
    )
    assert nb.n_recomputed > 0
    assert np.all(nb.indices != np.arange(len(X))[:, None])


@pytest.mark.parametrize("shape", [(3, 5, 7), (33, 17, 70), (300, 200, 784)])
def test_bf16_gemm_rounds_once_from_float32_accumulation(shape):
    """The bf16 certificate assumes torch's CPU bf16 matmul accumulates exact products in float32
    and rounds once to bf16: check |out - y| <= 2^-8 |y| + gamma_K sum |a_k b_k| against exact y."""
    m, n, K = shape
    rng = np.random.default_rng(K)
    a = torch.as_tensor(rng.normal(size=(m, K)) * rng.choice([1e-3, 1.0, 1e3], size=(m, 1))).bfloat16()
    b = torch.as_tensor(rng.normal(size=(n, K))).bfloat16()
    out = torch.mm(a, b.T).double()
    y = a.double() @ b.double().T  # products of bf16 are exact in float64; the sum is within 1e-13
    mag = a.double().abs() @ b.double().abs().T
    gamma = K * 2.0**-24 / (1 - K * 2.0**-24)
    assert torch.all((out - y).abs() <= 2.0**-8 * y.abs() + gamma * mag * (1 + 2.0**-8) + 1e-12 * mag)


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
    with pytest.raises(ValueError, match="precision"):
        kneighbors(np.zeros((5, 2)), 2, precision="float16")
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


def test_reduced_precision_matmul_setting_is_overridden_and_restored():
    """With float32 matmuls allowed to use bf16/TF32 passes the certificate would not hold: the
    engine must force IEEE float32 during the search and give the caller's setting back."""
    import torch

    from tmcheck.empirics.id.knn import kneighbors

    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 30)) * 1e-3 + 10.0
    old = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("medium")
        nb = kneighbors(X, 5, device="cpu", precision="float32")
        assert torch.get_float32_matmul_precision() == "medium"
    finally:
        torch.set_float32_matmul_precision(old)
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(D, np.inf)
    want = np.sort(D, axis=1)[:, :5]
    assert np.allclose(nb.distances, want, rtol=1e-12, atol=0)


@pytest.mark.parametrize("precision", ["bfloat16", "float32"])
@pytest.mark.parametrize("margin", [0, None])
def test_queries_answer_those_rows_as_the_whole_search_does(precision, margin):
    """kneighbors(X, k, queries=rows) is the whole search's answer for those rows, bit for bit, in the
    given order (a repeated row too), with the range query forced (margin 0) and not, over several tiles."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(700, 9)) * 3.0
    full = kneighbors(X, 6, block_size=128, precision=precision)
    rows = np.array([699, 0, 5, 5, 128, 127, 300])
    sub = kneighbors(X, 6, block_size=128, precision=precision, margin=margin, queries=rows)
    np.testing.assert_array_equal(sub.indices, full.indices[rows])
    np.testing.assert_array_equal(sub.distances, full.distances[rows])
    assert sub.indices.shape == (len(rows), 6)
    if margin == 0:
        assert sub.n_recomputed == len(rows)


@pytest.mark.parametrize("queries", [np.array([[0, 1]]), np.array([0.5]), np.array([-1]), np.array([700])])
def test_bad_queries_are_refused(queries):
    X = np.random.default_rng(0).normal(size=(700, 3))
    with pytest.raises(ValueError, match="queries"):
        kneighbors(X, 3, queries=queries)


def _spy_on_searches(monkeypatch) -> list:
    """The searches ``points.prepare`` makes, in order: a whole search as its row count, a re-search of
    some rows as ("queries", how many)."""
    from tmcheck.empirics.id import points

    calls = []

    def spy(X, k, **kw):
        calls.append(len(X) if kw.get("queries") is None else ("queries", len(kw["queries"])))
        return kneighbors(X, k, **kw)

    monkeypatch.setattr(points, "kneighbors", spy)
    return calls


def test_removing_duplicates_searches_again_exactly_the_rows_that_lost_a_neighbour(monkeypatch):
    """After a removal only the rows with a removed neighbour are searched again (the rest keep theirs):
    the result equals a whole search of the kept rows, bit for bit, and the rows searched again are few.
    The copies differ from their rows in one coordinate by one ulp, so they are near-duplicates that only
    the kNN finds (equal rows are merged before the search: the next test)."""
    from tmcheck.empirics.id import points

    calls = _spy_on_searches(monkeypatch)
    rng = np.random.default_rng(6)
    base = rng.normal(size=(3000, 16))
    near = base[:40].copy()
    near[:, 0] = np.nextafter(near[:, 0], np.inf)  # 40 near-duplicates, none equal to its row
    X = np.concatenate([base, near])
    p = points.prepare(X, 10)
    assert p.n_duplicates == 40
    first = kneighbors(X, 10).indices
    lost = np.isin(first, np.arange(3000, 3040)).any(axis=1)[:3000].sum()  # kept rows with a removed neighbour
    assert calls == [3040, ("queries", lost)] and 40 < lost < 3040 / 4
    fresh = kneighbors(X[p.kept], 10)
    np.testing.assert_array_equal(p.neighbors.indices, fresh.indices)
    np.testing.assert_array_equal(p.neighbors.distances, fresh.distances)


@pytest.mark.parametrize("spread", [1e-3, 1e-12])
def test_a_small_cloud_far_from_the_origin_is_exact(spread, monkeypatch):
    """The search scales the centred points to unit size in the pass that rounds them (s1 <= 2^32), or, for a
    cloud whose unscaled rounding would be subnormal (here spread 1e-12 at distance 1), in a second pass:
    both exact, and the second pass is taken exactly when s1 exceeds the limit."""
    from tmcheck.empirics.id import knn

    calls = []
    init = knn._Points.__init__

    def spy(self, xs, dtype, sq=None, unit=False):
        calls.append((unit, sq is None))
        return init(self, xs, dtype, sq, unit)

    monkeypatch.setattr(knn._Points, "__init__", spy)
    rng = np.random.default_rng(8)
    X = 1.0 + spread * rng.normal(size=(600, 6))
    nb = kneighbors(X, 5, block_size=256)
    np.testing.assert_allclose(nb.distances, exact_oracle(X, 5), rtol=1e-12)
    assert calls[0] == (True, True)
    assert ((False, True) in calls) == (spread < 2.0**-32)  # the second pass, a rebuild without `unit`


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_tiles_share_one_buffer_and_a_smaller_tile_after_a_larger_is_exact(precision):
    """tile() writes into one buffer (a fresh 36 MiB tensor per tile was a new zero-filled mapping each
    time): the buffer's memory stays the same across tiles, and a smaller tile that follows a larger
    one holds exactly the values a fresh computation gives. A mutant that allocates per tile fails
    the first check; one that views the buffer with the previous tile's shape fails the second."""
    from tmcheck.empirics.id.knn import _Points

    rng = np.random.default_rng(3)
    x = torch.as_tensor(rng.normal(size=(300, 24)))
    pts = _Points(x, getattr(torch, precision), unit=True)
    big = pts.tile(slice(0, 200), slice(0, 300))
    ptr = big.data_ptr()
    small = pts.tile(slice(200, 300), slice(50, 120))
    assert small.shape == (100, 70) and small.data_ptr() == ptr
    fresh = _Points(x, getattr(torch, precision), unit=True).tile(slice(200, 300), slice(50, 120)).clone()
    assert torch.equal(small, fresh)


def test_equal_rows_are_merged_before_the_one_search(monkeypatch):
    """Rows equal to an earlier row are dropped before the search, so one search of the kept rows answers
    (no second pass), with the same kept rows, representatives, count and neighbours, bit for bit, as the
    kNN-driven merge that would otherwise find them (its mutation: identical_rows switched off)."""
    from tmcheck.empirics.id import points

    calls = _spy_on_searches(monkeypatch)
    rng = np.random.default_rng(6)
    base = rng.normal(size=(3000, 16))
    X = np.concatenate([base, base[:40], base[5:6].repeat(30, axis=0)])  # 40 copies, and 30 of one row (> k)
    with pytest.warns(UserWarning, match="removed 70 duplicate"):
        p = points.prepare(X, 10)
    assert calls == [3000] and p.n_duplicates == 70
    monkeypatch.setattr(points, "identical_rows", lambda X, norms: np.arange(len(X)))
    with pytest.warns(UserWarning, match="removed 70 duplicate"):
        q = points.prepare(X, 10)
    assert len(calls) > 2  # the kNN-driven merge: a second and third pass
    for a, b in ((p.kept, q.kept), (p.representative, q.representative)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(p.neighbors.indices, q.neighbors.indices)
    np.testing.assert_array_equal(p.neighbors.distances, q.neighbors.distances)


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(2, 40),
    dim=st.integers(1, 5),
    copies=st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39)), max_size=30),
    signed_zero=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_identical_rows_is_the_lowest_equal_row(n, dim, copies, signed_zero, seed):
    """Against brute force: for every row the lowest index of a row equal to it as numbers (so -0.0 equals
    0.0, at distance 0); few values, so norms tie often without the rows being equal."""
    from tmcheck.empirics.id.points import _row_norms, identical_rows

    X = np.random.default_rng(seed).integers(-1, 2, size=(n, dim)).astype(np.float64)
    for a, b in copies:
        if a < n and b < n:
            X[b] = X[a]
    if signed_zero:
        even = X[::2]  # a view: the zeros of every other row become -0.0
        even[even == 0] = -0.0
    brute = np.array([min(j for j in range(n) if np.array_equal(X[j], X[i])) for i in range(n)])
    np.testing.assert_array_equal(identical_rows(X, _row_norms(X)), brute)


# The certificate and its range query on adversarial inputs: ties, duplicates, tight clusters beside
# spread points, huge and tiny scales, each against an exact oracle.


def ordered_oracle(X, k, pow2: int = 0):
    """Exact k nearest (distance, then index) from explicit differences of X * 2^pow2 (exact)."""
    D = cdist(np.ldexp(X, pow2), np.ldexp(X, pow2))
    np.fill_diagonal(D, np.inf)
    order = np.argsort(D, axis=1, kind="stable")[:, :k]  # stable: ties by index
    return np.ldexp(np.take_along_axis(D, order, axis=1), -pow2), order


def check(X, k, pow2=0, **kw):
    nb = kneighbors(X, k, **kw)
    d, _ = ordered_oracle(X, k, pow2)
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
        d, i = ordered_oracle(X, 10)
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
    _, want = ordered_oracle(x.numpy(), 5)
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
    resolution would be certified wrongly: the ordered_oracle comparison catches it."""
    X = near_tie_data()
    want, _ = ordered_oracle(X, 10)
    monkeypatch.setattr(knn._Points, "slack", lambda self, rows=None, rho=None: torch.zeros(()))
    nb = kneighbors(X, 10, precision="bfloat16", margin=2, block_size=100)
    assert not np.allclose(nb.distances, want, rtol=1e-12, atol=0)


def test_mutation_range_query_without_slack_is_caught(monkeypatch):
    """A range query at exactly dk^2 (no float32 error allowance) misses neighbours: caught either as a
    wrong answer or by the fewer-than-k guard."""
    X = near_tie_data()
    want, _ = ordered_oracle(X, 10)
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
    RANGE_HITS_PER_ROW a row is searched again in float32. Both answers are the ordered_oracle's."""
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
    want, _ = ordered_oracle(X, 10)
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
    neighbour above t + slack. With the exact k-th distance as reach the query must find the ordered_oracle's
    neighbours; the mutant threshold t + slack (no (1 + 2^-8)) finds fewer than k."""
    half = np.random.default_rng(0).integers(-7, 8, size=(150, 16)).astype(float)
    X = np.ldexp(np.concatenate([half, -half]), -6)
    x = torch.as_tensor(X)
    pts = knn._Points(x, torch.bfloat16)
    assert float(pts.en.max()) == 0.0
    d, want = ordered_oracle(X, 10)
    rows = torch.arange(len(X))
    kth = torch.as_tensor(d[:, -1])
    dd, ii = knn._range_search(x, pts, rows, kth**2, pts.sq.sqrt() + kth, 10, 64)
    np.testing.assert_array_equal(ii.numpy(), want)
    np.testing.assert_allclose(dd.numpy(), d, rtol=1e-12, atol=0)


def test_the_default_margin_follows_the_search_type():
    """max(8, k // 2) candidates beyond k for a bf16 search, max(8, k // 8) for float32 (whose error is 2^16
    times smaller); the answer is the same at any margin and equals the oracle, a row that fails the
    certificate going to the range query. The mutant margin 0 sends rows there (n_recomputed > 0) and
    still gives the same answer."""
    assert knn.default_margin(100, torch.bfloat16) == 50 and knn.default_margin(100, torch.float32) == 12
    assert knn.default_margin(20, torch.float32) == knn.default_margin(20, torch.bfloat16) - 2 == 8
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1200, 6)) @ rng.normal(size=(6, 48)) + 1e-3 * rng.normal(size=(1200, 48))
    wide = kneighbors(X, 40, precision="float32", margin=20)
    default = kneighbors(X, 40, precision="float32")
    none = kneighbors(X, 40, precision="float32", margin=0)
    assert none.n_recomputed > 0
    for nb in (default, none):
        np.testing.assert_array_equal(nb.indices, wide.indices)
        np.testing.assert_array_equal(nb.distances, wide.distances)
    np.testing.assert_allclose(default.distances, exact_oracle(X, 40), rtol=1e-12, atol=1e-15)
