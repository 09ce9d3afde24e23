"""ID v2: scikit-learn conformance, skdim's spellings, pointwise estimates, GRIDE, the MLE k-curve,
scale invariance and the vectorised bootstrap."""

import functools
import warnings

import numpy as np
import pytest
from scipy.stats import chi2
from sklearn.base import clone
from sklearn.utils.estimator_checks import check_estimator

from tmcheck.empirics.id import GRIDE, MLE, MLECurve, MLEScaling, TwoNN, estimate_id, validation_points
from tmcheck.empirics.id.gride import _loglik, gride_fit
from tmcheck.empirics.id.protocol import ESTIMATORS as ID_ESTIMATORS

# Checks scikit-learn does not run on these estimators, and why (they are not yielded, so nothing is
# skipped by hand): predictor/classifier/regressor/cluster checks need predict on new points, but an ID
# is a property of the fitted set, with no out-of-sample method; the sample_weight checks need
# fit(sample_weight=); check_array_api_input needs SCIPY_ARRAY_API=1 and an array-API namespace,
# while the kNN engine takes numpy and runs in torch.
#
# Every estimator at its DEFAULT settings, on scikit-learn's 10-100 rows (MLE and MLECurve lower k to
# N - 1, MLEScaling its min_size and k, each with a warning, as scikit-dimension lowers k). The
# checks that cannot pass, by scikit-learn's own mechanism (expected_failed_checks), and why:
NOT_APPLICABLE = {
    # transform is scikit-dimension's: the ID of the fitted set (a number), not one row per sample
    "check_transformer_general": "transform returns the fitted set's ID, not one row per sample",
    "check_transformer_data_not_an_array": "as check_transformer_general",
    "check_transformer_preserve_dtypes": "as check_transformer_general",
    "check_methods_sample_order_invariance": "transform's output has no rows to reorder",
    "check_methods_subset_invariance": "an ID is a property of the whole set, not of subsets",
}


# MLEScaling extrapolates over three subset sizes N, N/2, N/4 whose smallest holds more than k >= 2
# neighbours: 12 points at least. Two checks fit 10 rows.
TOO_FEW_FOR_SCALING = {
    "check_estimators_nan_inf": "fits 10 finite rows: fewer than the 12 three subset sizes need",
    "check_fit2d_1feature": "fits 10 rows: fewer than the 12 three subset sizes need",
}


# I3D's input is the integer lattice: scikit-learn's checks fit real-valued random points, which it refuses
# in one line (tests/empirics/id/test_discrete.py); the checks that fit nothing run on it below.
LATTICE_ONLY = {"I3D"}


@pytest.mark.parametrize("name", sorted({r.sklearn_name for r in ID_ESTIMATORS.values()} - LATTICE_ONLY))
def test_check_estimator_at_default_settings(name):
    from tmcheck.empirics.id import estimators

    record = next(r for r in ID_ESTIMATORS.values() if r.sklearn_name == name)
    est = estimators.sklearn_class(record)()  # an estimator declared only by its record gets its class here
    expected = NOT_APPLICABLE | (TOO_FEW_FOR_SCALING if name == "MLEScaling" else {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate-removal and k-lowering notes on the checks' small data
        results = check_estimator(est, on_fail=None, expected_failed_checks=expected)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results if r["status"] == "failed"]
    xfailed = {r["check_name"] for r in results if r["status"] == "xfail"}
    skipped = {r["check_name"] for r in results if r["status"] == "skipped"}
    assert not failed, failed
    assert xfailed <= set(expected) and skipped <= {"check_array_api_input"}
    assert len(results) - len(skipped) - len(xfailed) >= 39


def test_lattice_estimators_pass_the_checks_that_fit_nothing():
    from sklearn.utils.estimator_checks import (
        check_get_params_invariance,
        check_no_attributes_set_in_init,
        check_parameters_default_constructible,
    )

    from tmcheck.empirics.id import I3D

    assert LATTICE_ONLY == {"I3D"}
    for check in (check_no_attributes_set_in_init, check_parameters_default_constructible, check_get_params_invariance):
        check("I3D", I3D())
    assert clone(I3D(lk=5)).get_params()["lk"] == 5


def test_check_estimator_catches_a_broken_estimator():
    class Eager(MLE):  # validates in __init__, which scikit-learn forbids (MLE's parameters, wrapped and broken)
        @functools.wraps(MLE.__init__)  # get_params reads MLE's signature through the wrapper
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.k_ = self.k

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(Eager(k=5), on_fail=None)
    assert any(r["status"] == "failed" for r in results)


def test_clone_get_set_params():
    est = MLE(k=20)
    c = clone(est)
    assert c is not est and c.get_params() == est.get_params()
    assert c.set_params(k=7).k == 7 and est.k == 20
    assert clone(GRIDE(n1=2, multiscale=True)).get_params()["n1"] == 2


def test_skdim_spellings_are_aliases():
    X = validation_points("torus", 800, d=2, D=6, seed=0)
    want = MLE(k=10).fit(X).dimension_
    assert MLE(n_neighbors=10).fit(X).dimension_ == want
    assert MLE().fit(X, n_neighbors=10).dimension_ == want  # scikit-dimension's call
    with pytest.raises(ValueError, match="K is scikit-dimension's neighbourhood size"):
        MLE(K=10).fit(X)  # skdim ignores K in this mode: accepting it would compute another number
    assert MLE().fit(X).k_ == 20  # the paper's K
    with pytest.raises(ValueError, match="conflicting neighbour counts"):
        MLE(k=10, n_neighbors=12).fit(X)
    assert MLEScaling(n_neighbors=10, min_size=100, bootstrap=0).fit(X).curve_[0]["dimension"] == want


def test_pointwise_estimates_and_duplicates_in_fit_transform():
    X = validation_points("sphere", 600, d=3, D=8, seed=1)
    Xd = np.concatenate([X, X[:5]])  # rows 600..604 duplicate rows 0..4
    with pytest.warns(UserWarning, match="removed 5 duplicate"):
        est = MLE(k=10).fit(Xd)
    pw = est.dimension_pw_[est.representative_]
    assert pw.shape == (605,) and MLE(k=10).fit_transform(X, comb="mle") == MLE(k=10).fit(X).dimension_
    np.testing.assert_array_equal(pw[600:], pw[:5])
    np.testing.assert_array_equal(pw[:600], MLE(k=10).fit(X).dimension_pw_)

    two = TwoNN().fit(X)
    from sklearn.neighbors import NearestNeighbors

    T, idx = NearestNeighbors(n_neighbors=2).fit(X).kneighbors()
    np.testing.assert_allclose(two.dimension_pw_, 1 / np.log(T[:, 1] / T[:, 0]), rtol=1e-12)
    est = MLE(k=10).fit(X, smooth=True)
    i = 17
    want = (est.dimension_pw_[i] + est.dimension_pw_[est.neighbor_indices_[i]].sum()) / 11
    assert est.dimension_pw_smooth_[i] == pytest.approx(want, rel=1e-12)
    pw, smooth = MLE(k=10).fit_transform_pw(X, smooth=True)
    np.testing.assert_array_equal(smooth, est.dimension_pw_smooth_)


@pytest.mark.parametrize(
    "est", [MLE(), MLE(combine="mean"), TwoNN(), TwoNN(method="mle"), GRIDE(), GRIDE(n1=4, n2=8), MLECurve()], ids=repr
)
def test_same_points_in_other_units_give_the_same_id(est):
    X = validation_points("swissroll", 1500, D=10, seed=2)
    ref = clone(est).fit(X).dimension_
    for scale in (1e200, 1e-200):
        assert clone(est).fit(X * scale).dimension_ == pytest.approx(ref, rel=1e-9, abs=0)
    # the check can fail: a distorted copy of the points is told apart
    Y = X.copy()
    Y[:, 0] *= 1.5
    assert abs(clone(est).fit(Y).dimension_ - ref) > 1e-6


@pytest.mark.parametrize("method", ["linear", "mle"])
def test_vectorised_bootstrap_equals_the_loop(method):
    X = validation_points("sphere", 1200, d=4, D=9, seed=3)
    for est, stat in (
        (MLE(k=10, bootstrap=50, seed=4), lambda v: 1 / np.mean(1 / v)),
        (MLE(k=10, combine="mean", bootstrap=50, seed=4), np.mean),
        (TwoNN(method=method, bootstrap=50, seed=4), None),
    ):
        est.fit(X)
        values = est.dimension_pw_ if stat else np.log(np.sort(est.mu_))
        rng = np.random.default_rng(4)
        if stat:
            reps = [stat(values[rng.integers(0, len(values), len(values))]) for _ in range(50)]
        else:
            ref = TwoNN(method=method)
            reps = [
                ref._estimate(np.sort(values[rng.integers(0, len(values), len(values))])[None])[0] for _ in range(50)
            ]
        lo, hi = np.quantile(reps, [0.025, 0.975])
        assert est.ci_ == pytest.approx((lo, hi), rel=1e-10)


def test_bootstrap_and_ci_level_are_validated():
    X = validation_points("torus", 300, d=2, D=5, seed=0)
    with pytest.raises(ValueError, match="bootstrap"):
        MLE(bootstrap=-1).fit(X)
    with pytest.raises(ValueError, match="ci_level"):
        TwoNN(ci_level=1.5).fit(X)
    with pytest.raises(ValueError, match="n1 and n2"):
        GRIDE(n1=3, n2=2).fit(X)
    with pytest.raises(ValueError, match="k=7 must be one of"):
        MLECurve(ks=(5, 10), k=7).fit(X)


# ---- GRIDE --------------------------------------------------------------------------------------


def _gride_ratios(d, n1, n2, n, seed):
    """mu^-d ~ Beta(n1, n2 - n1) is GRIDE's model exactly (Denti et al. 2022, Sec. 2)."""
    u = np.random.default_rng(seed).beta(n1, n2 - n1, size=n)
    mu = u ** (-1 / d)
    T = np.ones((n, n2))
    T[:, n2 - 1] = mu
    return T


def test_gride_at_1_2_is_the_unbiased_twonn_mle():
    T = _gride_ratios(7.0, 1, 2, 20000, 0)
    res = gride_fit(T, 1, 2)
    log_mu = np.log(T[:, 1])
    assert res["n_used"] == 20000  # no ratio beyond the outlier cut at this d
    assert res["dimension"] == pytest.approx((len(log_mu) - 1) / log_mu.sum(), rel=1e-12)
    assert res["dimension"] == pytest.approx(
        TwoNN(method="mle", discard_fraction=0).fit_distances(T).dimension_, rel=1e-12
    )


@pytest.mark.parametrize("n1,n2", [(1, 2), (4, 8), (8, 16)])
def test_gride_recovers_d_and_its_likelihood_interval(n1, n2):
    T = _gride_ratios(12.0, n1, n2, 5000, n1)
    res = gride_fit(T, n1, n2, ci_level=0.95)
    lo, hi = res["ci"]
    assert lo < 12.0 < hi and lo < res["dimension"] < hi
    # the interval's ends are where the log-likelihood has dropped by chi2_1(0.95) / 2
    log_mu = np.log(T[:, n2 - 1])
    top = _loglik(res["dimension"], log_mu, n1, n2)
    for end in (lo, hi):
        assert top - _loglik(end, log_mu, n1, n2) == pytest.approx(chi2.ppf(0.95, 1) / 2, rel=1e-6)
    # and the Fisher error agrees with the interval's half-width to first order
    assert (hi - lo) / 2 == pytest.approx(1.96 * res["error"], rel=0.05)


def test_gride_multiscale_on_a_manifold():
    X = validation_points("sphere", 3000, d=4, D=10, seed=5)
    g = GRIDE(multiscale=True, range_max=32).fit(X)
    np.testing.assert_array_equal(g.scales_, [1, 2, 4, 8, 16])
    assert np.all(np.abs(g.dimension_scales_ - 4) < 0.5)
    assert np.all(np.diff(g.radius_scales_) > 0)
    assert g.dimension_scales_[0] == g.dimension_
    r = estimate_id(X, "gride", bootstrap=0)
    assert r.protocol["interval"].startswith("likelihood ratio") and len(r.protocol["scales"]) == 6


def test_mle_curve_from_one_search_equals_separate_fits():
    X = validation_points("torus", 1000, d=3, D=7, seed=6)
    c = MLECurve(ks=(5, 10, 20), k=10).fit(X)
    for row in c.curve_:
        assert row["dimension"] == pytest.approx(MLE(k=row["k"]).fit(X).dimension_, rel=1e-12)
    assert c.dimension_ == c.curve_[1]["dimension"]
