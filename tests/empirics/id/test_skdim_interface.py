"""Every scikit-dimension spelling tmcheck accepts computes what it computes in scikit-dimension, on the
same points, to 1e-9; the others are refused in one line naming tmcheck's spelling. Runs where
scikit-dimension is installed (the beside-anchors stage of CI); the refusals run everywhere."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tmcheck.empirics.id import GRIDE, MLE, TwoNN

X = np.random.default_rng(0).standard_normal((500, 5)) @ np.random.default_rng(1).standard_normal((5, 12))


def test_refused_spellings_name_tmchecks():
    with pytest.raises(ValueError, match=r"K is scikit-dimension's .* k= \(or n_neighbors=\)"):
        MLE(K=5).fit(X)
    with pytest.raises(ValueError, match="MLE.fit_transform needs comb="):
        MLE().fit_transform(X)
    with pytest.raises(ValueError, match="comb must be one of mle, mean, median"):
        MLE().fit(X, comb="harmonic")
    with pytest.raises(ValueError, match="precomputed_knn: tmcheck finds the exact neighbours itself"):
        TwoNN().fit_pw(X, precomputed_knn=np.zeros((500, 100), int))
    with pytest.raises(TypeError, match="MLE.fit got precomputed_knn_arrays"):
        MLE().fit(X, precomputed_knn_arrays=(None, None))


skdim = pytest.importorskip("skdim", reason="scikit-dimension is not installed (the beside-anchors CI stage has it)")


def _both(make, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(make[0]()), call(make[1]())


CASES = {
    "MLE().fit(X)": ((skdim.id.MLE, MLE), lambda e: e.fit(X).dimension_),
    "MLE().fit(X, n_neighbors=10)": ((skdim.id.MLE, MLE), lambda e: e.fit(X, n_neighbors=10).dimension_),
    "MLE().fit(X, comb='mean')": ((skdim.id.MLE, MLE), lambda e: e.fit(X, comb="mean").dimension_),
    "MLE().fit(X, comb='median')": ((skdim.id.MLE, MLE), lambda e: e.fit(X, comb="median").dimension_),
    "MLE().fit(X).dimension_pw_": ((skdim.id.MLE, MLE), lambda e: e.fit(X).dimension_pw_),
    "MLE().fit(X, smooth=True)": ((skdim.id.MLE, MLE), lambda e: e.fit(X, smooth=True).dimension_pw_smooth_),
    "MLE().fit_transform(X, comb='mle')": ((skdim.id.MLE, MLE), lambda e: e.fit_transform(X, comb="mle")),
    "MLE().fit_transform_pw(X)": ((skdim.id.MLE, MLE), lambda e: e.fit_transform_pw(X)),
    "MLE().fit(X).transform()": ((skdim.id.MLE, MLE), lambda e: e.fit(X).transform()),
    "TwoNN().fit(X)": ((skdim.id.TwoNN, TwoNN), lambda e: e.fit(X).dimension_),
    "TwoNN().fit_transform(X)": ((skdim.id.TwoNN, TwoNN), lambda e: e.fit_transform(X)),
    "TwoNN().fit(X).transform(X)": ((skdim.id.TwoNN, TwoNN), lambda e: e.fit(X).transform(X)),
    "TwoNN().fit_pw(X)": ((skdim.id.TwoNN, TwoNN), lambda e: e.fit_pw(X).dimension_pw_),
    "TwoNN().fit_pw(X, n_neighbors=40, smooth=True)": (
        (skdim.id.TwoNN, TwoNN),
        lambda e: e.fit_pw(X, n_neighbors=40, smooth=True).dimension_pw_smooth_,
    ),
    "TwoNN().fit_transform_pw(X, n_neighbors=40)": (
        (skdim.id.TwoNN, TwoNN),
        lambda e: e.fit_transform_pw(X, n_neighbors=40),
    ),
    "GRIDE().fit(X)": ((skdim.id.GRIDE, GRIDE), lambda e: e.fit(X).dimension_),
    "GRIDE().fit_pw(X, n_neighbors=80)": ((skdim.id.GRIDE, GRIDE), lambda e: e.fit_pw(X, n_neighbors=80).dimension_pw_),
}


@pytest.mark.parametrize("case", CASES)
def test_each_accepted_spelling_means_what_it_means_in_scikit_dimension(case):
    theirs, ours = _both(*CASES[case])
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=0, atol=1e-9)


def test_the_parity_check_can_fail():
    theirs, ours = _both((skdim.id.TwoNN, TwoNN), lambda e: e.fit_pw(X, n_neighbors=40).dimension_pw_)
    one_point = TwoNN().fit(X).dimension_pw_  # the old meaning of fit_pw: one-point values
    assert np.abs(one_point - theirs).max() > 1.0 and np.abs(ours - theirs).max() < 1e-9
