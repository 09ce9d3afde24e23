"""Parity with the anchors on shared points: scikit-dimension 0.5.0 in this venv, dadapy 0.3.4 in its
own venv (it pins numpy < 2) through a subprocess; and the inputs where the anchors fail
(duplicates) and tmcheck does not.

dadapy's interpreter: see id_anchors.py; its tests are skipped with the reason when there is none.
"""

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from tmcheck.empirics.id import GRIDE, MLE, TwoNN, validation_points

sys.path.insert(0, str(Path(__file__).parent))  # --import-mode=importlib: the helper beside this file
from id_anchors import run_dadapy

skdim = pytest.importorskip("skdim", reason="scikit-dimension is not installed (pip install scikit-dimension==0.5.0)")


def skdim_all(X):
    """scikit-dimension's estimates matching tmcheck's (same neighbours, float64)."""
    return {
        "mle": skdim.id.MLE().fit(X).dimension_,  # comb='mle': the inverse mean
        "mle-mean": skdim.id.MLE().fit(X, comb="mean").dimension_,
        "twonn": skdim.id.TwoNN().fit(X).dimension_,
        "twonn-mle": skdim.id.TwoNN(method="mle").fit(X).dimension_,
        "gride": skdim.id.GRIDE().fit(X).dimension_,
        "gride-error": skdim.id.GRIDE().fit(X).error_,
        "gride-scales": skdim.id.GRIDE(multiscale=True).fit(X).dimension_scales_,
    }


def tmcheck_all(X):
    g = GRIDE(multiscale=True).fit(X)
    return {
        "mle": MLE().fit(X).dimension_,
        "mle-mean": MLE(combine="mean").fit(X).dimension_,
        "twonn": TwoNN().fit(X).dimension_,
        "twonn-mle": TwoNN(method="mle").fit(X).dimension_,
        "gride": g.dimension_,
        "gride-error": g.error_,
        "gride-scales": g.dimension_scales_,
    }


def assert_parity(ours, theirs, tol=1e-10):
    for key in ours:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=0, atol=tol, err_msg=key)


SHARED = [("sphere", 5, 20), ("torus", 3, 12), ("swissroll", 2, 3), ("linear", 8, 30)]


@pytest.mark.parametrize("name,d,D", SHARED)
def test_equal_to_skdim_on_shared_points(name, d, D):
    X = validation_points(name, 2000, d=d, D=D, seed=7)
    assert_parity(tmcheck_all(X), skdim_all(X))


def test_parity_check_can_fail():
    X = validation_points("sphere", 2000, d=5, D=20, seed=7)
    with pytest.raises(AssertionError):
        assert_parity({"mle": MLE(k=19).fit(X).dimension_}, {"mle": skdim.id.MLE().fit(X).dimension_})


def _with_duplicates():
    X = validation_points("sphere", 2000, d=5, D=20, seed=0)
    return X, np.concatenate([X, X[:200]])  # 200 exact duplicate rows


def test_duplicates_break_skdim_not_tmcheck():
    X, Xd = _with_duplicates()
    with pytest.warns(UserWarning, match=r"dropping \d+ points") as record:
        dropped = skdim.id.GRIDE().fit(Xd).dimension_
    # both copies of each of the 200 duplicates (r_1 = 0), and the points whose two nearest are a pair (r_1 = r_2)
    assert int(str(record[0].message).split("dropping ")[1].split()[0]) >= 400
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        broken = {"mle": skdim.id.MLE().fit(Xd).dimension_}
        ours = {
            "mle": MLE().fit(Xd).dimension_,
            "gride": GRIDE().fit(Xd).dimension_,
            "twonn": TwoNN().fit(Xd).dimension_,
        }
    clean = skdim_all(X)
    assert broken["mle"] == 0.0  # log(T_k / 0): every duplicate's pointwise value is 0, so the inverse mean is 0
    # skdim's GRIDE drops every point with a zero or tied distance, the 200 originals too: it estimates on fewer
    # than the 2000 distinct points, so it differs from the clean set's estimate; tmcheck keeps one copy of each
    assert abs(dropped - clean["gride"]) > 1e-3
    for key in ours:  # tmcheck on the duplicated set equals skdim on the clean set
        assert ours[key] == pytest.approx(clean[key], abs=1e-10)


@pytest.mark.slow
def test_equal_to_dadapy_and_dadapy_fails_on_duplicates(tmp_path):
    X, Xd = _with_duplicates()
    np.save(tmp_path / "clean.npy", X)
    np.save(tmp_path / "dup.npy", Xd)
    got = run_dadapy([tmp_path / "clean.npy", tmp_path / "dup.npy"])
    theirs = got[str(tmp_path / "clean.npy")]
    assert TwoNN().fit(X).dimension_ == pytest.approx(theirs["twonn_closed"], abs=1e-10)
    assert TwoNN().fit(X).dimension_ == pytest.approx(theirs["twonn"], rel=1e-8)  # dadapy's curve_fit tolerance
    assert TwoNN(method="mle", discard_fraction=0.0).fit(X).dimension_ == pytest.approx(theirs["twonn_ml"], abs=1e-10)
    g = GRIDE(multiscale=True).fit(X)
    # dadapy bisects the score to eps = 1e-7 in d; its Fisher error uses that d
    np.testing.assert_allclose(g.dimension_scales_, theirs["gride"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(g.error_scales_, theirs["gride_err"], rtol=1e-6)
    np.testing.assert_allclose(g.radius_scales_, theirs["gride_r"], rtol=1e-12)
    broken = got[str(tmp_path / "dup.npy")]  # dadapy fails on the duplicated set (zero distances: inf ratios) ...
    assert "infs or NaNs" in broken["error"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert TwoNN().fit(Xd).dimension_ == pytest.approx(theirs["twonn_closed"], abs=1e-10)  # ... tmcheck's are not
