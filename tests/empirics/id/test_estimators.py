"""Known answers for every ID estimator, and the bad-input policy.

Oracles: the Levina-Bickel and TwoNN formulas written out with numpy on scikit-learn's kNN;
samples with a known law (Pareto ratios for TwoNN); uniform samples of manifolds of known d.
"""

import warnings
from itertools import pairwise

import numpy as np
import pytest
from sklearn.neighbors import NearestNeighbors

from tmcheck.empirics.id import MLE, MLECurve, MLEScaling, TwoNN, validation_points
from tmcheck.empirics.id.core import MLECurveFit


def test_mle_matches_formula_on_independent_knn():
    X = validation_points("torus", 1500, d=3, D=10, seed=0)
    T, _ = NearestNeighbors(n_neighbors=12, algorithm="brute").fit(X).kneighbors()
    pw = (12 - 1) / np.log(T[:, -1:] / T[:, :-1]).sum(axis=1)
    inv = MLE(k=12, combine="inverse").fit(X)
    mean = MLE(k=12, combine="mean").fit(X)
    np.testing.assert_allclose(inv.dimension_pw_, pw, rtol=1e-9)
    assert inv.dimension_ == pytest.approx(1 / np.mean(1 / pw), rel=1e-12)
    assert mean.dimension_ == pytest.approx(np.mean(pw), rel=1e-12)
    assert inv.dimension_ < mean.dimension_  # harmonic <= arithmetic mean


def test_mle_known_answer_hand_distances():
    # T_j = j^(1/d): the Poisson-process expectation in dimension d, so each pointwise value is
    # (k-1) / sum_j log(T_k/T_j) = (k-1) d / sum_j log(k/j), a closed form
    d, k = 4.0, 20
    T = np.tile(np.arange(1, k + 1) ** (1 / d), (5, 1))
    est = MLE(k=k).fit_distances(T)
    want = (k - 1) * d / np.sum(np.log(k / np.arange(1, k)))
    np.testing.assert_allclose(est.dimension_pw_, want, rtol=1e-12)


@pytest.mark.parametrize("name,d", [("linear", 3), ("torus", 2), ("swissroll", 2)])
def test_mle_recovers_low_dimension(name, d):
    X = validation_points(name, 3000, d=d, D=12, seed=1)
    assert MLE(k=20).fit(X).dimension_ == pytest.approx(d, abs=0.25)
    assert TwoNN().fit(X).dimension_ == pytest.approx(d, abs=0.3)


@pytest.mark.parametrize("method", ["linear", "mle"])
@pytest.mark.parametrize("discard", [0.0, 0.1])
def test_twonn_on_pareto_ratios(method, discard):
    d = 7.0
    rng = np.random.default_rng(5)
    mu = (1 - rng.uniform(size=20000)) ** (-1 / d)  # Pareto(d): P(mu > t) = t^-d
    T = np.stack([np.ones_like(mu), mu], axis=1)
    est = TwoNN(method=method, discard_fraction=discard, bootstrap=40, seed=0).fit_distances(T)
    assert est.dimension_ == pytest.approx(d, rel=0.04)
    assert est.ci_[0] < est.dimension_ < est.ci_[1]
    assert est.ci_[0] < d < est.ci_[1] or abs(est.dimension_ - d) < 0.1


def test_twonn_mle_without_discard_is_closed_form():
    mu = np.array([1.5, 2.0, 3.0, 1.1])
    T = np.stack([np.ones_like(mu), mu], axis=1)
    est = TwoNN(method="mle", discard_fraction=0.0).fit_distances(T)
    assert est.dimension_ == pytest.approx(3 / np.log(mu).sum(), rel=1e-12)


def test_bootstrap_interval_brackets_estimate_and_is_reproducible():
    X = validation_points("sphere", 2000, d=4, D=8, seed=2)
    a = MLE(bootstrap=200, seed=3).fit(X)
    b = MLE(bootstrap=200, seed=3).fit(X)
    assert a.ci_ == b.ci_ and a.ci_[0] < a.dimension_ < a.ci_[1]
    assert MLE().fit(X).ci_ is None


def test_scaling_exposes_small_n_bias():
    X = validation_points("sphere", 4096, d=10, D=11, seed=3)
    est = MLEScaling(min_size=256, bootstrap=30, seed=0).fit(X)
    curve = [c["dimension"] for c in est.curve_]
    assert [c["n"] for c in est.curve_] == [4096, 2048, 1024, 512, 256]
    assert all(a > b for a, b in pairwise(curve))  # the estimate grows with N
    assert est.bias_ < 0  # MLE at N is below the extrapolation
    assert abs(est.dimension_ - 10) < abs(curve[0] - 10)  # and the extrapolation is closer to d


# ---- bad input -------------------------------------------------------------------------------


def test_nan_inf_and_too_few_points_are_clear_errors():
    X = np.random.default_rng(0).normal(size=(100, 3))
    X[7, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or inf"):
        MLE().fit(X)
    with pytest.warns(UserWarning, match=r"k = 20 >= the 20 points: k = 19 \(as scikit-dimension does\)"):
        assert MLE(k=20).fit(np.random.default_rng(0).normal(size=(20, 3))).k_ == 19
    with pytest.warns(UserWarning, match=r"ks up to 20 >= the 20 points: ks = \(5, 19\)"):  # lowered like MLE's k
        curve = MLECurve(ks=(5, 20), k=20).fit(np.random.default_rng(0).normal(size=(20, 3)))
    assert [c["k"] for c in curve.curve_] == [5, 19] and curve.ks == (5, 20)  # the parameter stays as given
    with pytest.raises(ValueError, match="N=20 <= K=20"):  # the arithmetic itself does not lower k
        MLECurveFit(ks=(5, 20)).fit(np.random.default_rng(0).normal(size=(20, 3)))
    with pytest.raises(ValueError, match="constant data"):
        MLE(k=5).fit(np.ones((50, 4)))
    with pytest.raises(ValueError, match="only 3 distinct points"):
        MLE(k=5).fit(np.repeat(np.eye(3), 10, axis=0))
    with pytest.raises(ValueError, match="combine"):
        MLE(combine="harmonic").fit(np.random.default_rng(0).normal(size=(50, 3)))


def _with_duplicates():
    X = validation_points("torus", 1200, d=2, D=300, seed=4).astype(np.float32)
    X[:50] = X[50:100]  # 50 exact duplicates
    X[100:130] = X[130:160] + np.float32(1e-8)  # 30 near-duplicates (relative 1e-8)
    return X


def test_duplicates_removed_by_default_with_count_and_warning():
    X = _with_duplicates()
    with pytest.warns(UserWarning, match="removed 80 duplicate"):
        est = MLE(k=10).fit(X)
    assert est.n_duplicates_ == 80 and est.n_used_ == 1120
    clean = MLE(k=10).fit(np.delete(X, np.r_[50:100, 130:160], axis=0))  # the lowest index is kept
    assert est.dimension_ == pytest.approx(clean.dimension_, rel=1e-12)
    assert est.dimension_ == pytest.approx(2.0, abs=0.2)


def test_duplicates_error_and_keep_policies():
    X = _with_duplicates()
    with pytest.raises(ValueError, match="80 duplicate or near-duplicate rows"):
        MLE(k=10, duplicates="error").fit(X)
    with pytest.warns(UserWarning, match="kept"):
        kept = MLE(k=10, duplicates="keep").fit(X)
    assert kept.dimension_ < 1.0  # why duplicates must not pass silently
    with pytest.raises(ValueError, match="duplicates must be"):
        MLE(duplicates="ignore").fit(X)


def test_large_duplicate_cluster_needs_more_than_one_pass():
    X = np.random.default_rng(6).normal(size=(300, 5))
    X[:60] = X[0]  # a cluster of 60 copies, larger than k
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = TwoNN().fit(X)
    assert est.n_duplicates_ == 59 and est.n_used_ == 241
