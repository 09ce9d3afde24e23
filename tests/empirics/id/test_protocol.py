"""estimate_id's named protocols, the points loader, and the synthetic validation set."""

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.numpy import save_file
from scipy.spatial.distance import pdist

from tmcheck.empirics.id import MLE, VALIDATION_SETS, TwoNN, estimate_id, load_points, validation_points
from tmcheck.empirics.id.protocol import ESTIMATORS


@pytest.fixture(scope="module")
def torus():
    return validation_points("torus", 2600, d=3, D=40, seed=0)


def test_full_protocol_is_the_estimator_on_all_points(torus):
    r = estimate_id(torus, "mle", k=20, protocol="full", bootstrap=50, seed=1)
    assert r.dimension == pytest.approx(MLE(k=20).fit(torus).dimension_, rel=1e-12)
    assert r.ci[0] < r.dimension < r.ci[1]
    assert (r.n_used, r.n_duplicates, r.k, r.protocol["name"]) == (2600, 0, 20, "full")
    assert r.as_dict()["dimension"] == r.dimension


def test_paper_protocol_is_the_mean_of_disjoint_batches(torus):
    r = estimate_id(torus, "mle", protocol="paper", batch_size=1000, seed=3)
    p = r.protocol
    assert (p["n_batches"], p["batch_size"], p["n_dropped_remainder"]) == (2, 1000, 600)
    perm = np.random.default_rng(3).permutation(len(torus))
    want = [MLE(k=20).fit(torus[perm[i * 1000 : (i + 1) * 1000]]).dimension_ for i in range(2)]
    np.testing.assert_allclose(p["batch_estimates"], want, rtol=1e-12)
    assert r.dimension == pytest.approx(np.mean(want), rel=1e-12)
    assert r.ci[0] < r.dimension < r.ci[1] and r.n_used == 2000


def test_paper_protocol_with_fewer_points_than_a_batch_is_one_batch(torus):
    r = estimate_id(torus[:500], "twonn", protocol="paper", bootstrap=30)
    assert r.protocol["n_batches"] == 1 and r.protocol["batch_size"] == 500
    assert r.dimension == pytest.approx(TwoNN().fit(torus[:500]).dimension_, rel=1e-12)


def test_names_are_checked(torus):
    with pytest.raises(ValueError, match="unknown estimator"):
        estimate_id(torus, "fishers")
    with pytest.raises(ValueError, match="unknown protocol"):
        estimate_id(torus, protocol="batched")
    with pytest.raises(ValueError, match="batch_size"):
        estimate_id(torus, protocol="paper", batch_size=10)


def test_load_points_formats(tmp_path):
    X = np.random.default_rng(0).normal(size=(30, 4)).astype(np.float32)
    np.save(tmp_path / "a.npy", X)
    torch.save(torch.from_numpy(X), tmp_path / "b.pt")
    torch.save({"emb": torch.from_numpy(X)}, tmp_path / "c.pt")
    save_file({"emb": X, "other": X[:2]}, str(tmp_path / "d.safetensors"))
    for name, key in [("a.npy", None), ("b.pt", None), ("c.pt", None), ("d.safetensors", "emb")]:
        np.testing.assert_array_equal(load_points(tmp_path / name, key=key), X)
    with pytest.raises(ValueError, match="holds 2 tensors"):
        load_points(tmp_path / "d.safetensors")
    with pytest.raises(ValueError, match="unsupported file type"):
        load_points(tmp_path / "x.csv")


@pytest.mark.parametrize("name", list(VALIDATION_SETS))
def test_synthetic_manifolds_are_isometric_embeddings(name):
    a = validation_points(name, 200, D=64, seed=5)
    b = validation_points(name, 200, D=VALIDATION_SETS[name][1](VALIDATION_SETS[name][0]), seed=5)
    assert a.shape == (200, 64)
    # the same chart under two random isometries: all pairwise distances agree
    np.testing.assert_allclose(pdist(a), pdist(b), rtol=1e-9, atol=1e-12)


def test_sphere_points_have_unit_norm_and_bad_arguments_fail():
    X = validation_points("sphere", 100, d=5, D=30)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    with pytest.raises(ValueError, match="unknown manifold"):
        validation_points("klein", 10)
    with pytest.raises(ValueError, match="needs D >="):
        validation_points("sphere", 10, d=16, D=8)


def test_near_duplicate_rule_is_relative_to_the_points_own_precision():
    """Known answers: rows within 16 eps(dtype) x the larger norm are merged, rows just outside are not,
    and the rule does not depend on units or on how far the data sit from the origin."""
    from tmcheck.empirics.id.points import default_rtol, prepare

    assert default_rtol(np.float32) == 16 * 2.0**-23 and default_rtol(np.float64) == 16 * 2.0**-52
    rng = np.random.default_rng(0)
    base = rng.normal(size=(200, 3)) + 1e3  # far from the origin: |x| ~ 1.7e3
    norm = np.linalg.norm(base[0])
    for factor, merged in ((0.5, True), (2.0, False)):
        X = base.copy()
        X[1] = X[0] + np.array([1.0, 0, 0]) * factor * default_rtol(np.float64) * norm
        for scale in (1.0, 2.0**700, 1e-200):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                p = prepare(X * scale, 5)
            assert p.n_duplicates == int(merged), (factor, scale)
            assert p.representative[1] == (0 if merged else 1)


def test_close_pairs_distinct_at_the_precision_are_reported_not_merged():
    from tmcheck.empirics.id.points import prepare

    X = validation_points("sphere", 1000, d=4, D=10, seed=1)
    Xn = np.concatenate([X, X[:30] + 1e-9])  # distinct in float64, 1e-9 apart
    with pytest.warns(UserWarning, match="60 rows have a neighbour closer than 1e-06 x the median") as rec:
        p = prepare(Xn, 10)
    assert p.n_duplicates == 0 and not any("removed" in str(w.message) for w in rec)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the clean set raises no warning at all
        prepare(X, 10)
    with pytest.warns(UserWarning, match="removed 30 duplicate"):
        assert prepare(Xn, 10, rtol=1e-6).n_duplicates == 30


@settings(max_examples=120, deadline=None)
@given(
    rows=st.integers(2, 12),
    cols=st.integers(1, 4),
    cells=st.lists(
        st.tuples(st.integers(0, 11), st.integers(0, 3), st.sampled_from([np.nan, np.inf, -np.inf, 1e308, -1e308])),
        max_size=6,
    ),
    dtype=st.sampled_from([np.float64, np.float32]),
)
def test_check_points_finds_exactly_the_rows_with_nan_or_inf(rows, cols, cells, dtype):
    """The finite-sum fast path decides as the per-row rule: huge finite values whose sum overflows pass,
    and every NaN or inf is refused with its count and first row (its mutation: a sum that ignores NaN,
    nansum, lets a NaN row through)."""
    from tmcheck.empirics.id.points import check_points

    X = np.arange(rows * cols, dtype=np.float64).reshape(rows, cols)
    for r, c, v in cells:
        if r < rows and c < cols:
            X[r, c] = v
    if dtype == np.float32:  # finite values near float32's largest, so their sum overflows there too
        X = np.where(np.isfinite(X), np.clip(X, -3e38, 3e38), X).astype(np.float32)
    bad = ~np.isfinite(X).all(axis=1)
    if bad.any():
        with pytest.raises(ValueError, match=f"{int(bad.sum())} of {rows} rows contain NaN or inf "):
            check_points(X, 1)
    else:
        assert check_points(X, 1) is X


def test_constant_data_is_found_when_the_last_row_is_the_first():
    """The short cut compares the last row with the first; a cloud whose last row equals its first but
    which is not constant passes, and a constant one is refused."""
    from tmcheck.empirics.id.points import check_points

    X = np.zeros((30, 3))
    X[5] = 1.0
    assert check_points(X, 5) is X
    with pytest.raises(ValueError, match="constant data"):
        check_points(np.zeros((30, 3)), 5)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_each_record_names_its_options_and_says_what_it_is(name):
    record = ESTIMATORS[name]
    assert record.description and set(record.options()) <= {"k", "bootstrap", "seed"}


def test_an_estimator_without_a_sklearn_class_gets_one_from_its_record(torus):
    """A new estimator needs only its fit class and its record: the scikit-learn estimator is built
    from them, computes the same number and pickles."""
    import pickle

    from tmcheck.empirics.id import estimators
    from tmcheck.empirics.id.core import TwoNNFit
    from tmcheck.empirics.id.registry import Estimator

    record = Estimator("twonn-test", TwoNNFit, "TwoNNFromRecord", "a test record", fixed={"method": "mle"})
    cls = estimators.sklearn_class(record)
    assert cls is estimators.sklearn_class(record) and issubclass(cls, estimators.IDEstimator)
    est = cls(method="mle").fit(torus)
    assert est.dimension_ == record.make(bootstrap=0, seed=None).fit(torus).dimension_
    assert pickle.loads(pickle.dumps(est)).dimension_ == est.dimension_


def test_the_full_protocol_refuses_more_points_than_max_points(torus):
    n = len(torus)
    with pytest.raises(ValueError, match=f"refused above max_points {n - 1:,}"):
        estimate_id(torus, max_points=n - 1)
    assert estimate_id(torus, max_points=n, bootstrap=0).dimension == estimate_id(torus, bootstrap=0).dimension
    estimate_id(torus, protocol="paper", batch_size=len(torus) // 2, max_points=n - 1, bootstrap=0)
