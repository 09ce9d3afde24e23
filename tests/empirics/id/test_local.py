"""MOM and TLE (empirics/id/local.py) equal scikit-dimension 0.5.0's on the same points, pointwise: to
1e-9 against scikit-dimension where it is installed (CI's beside-anchors stage) and, everywhere, against
its numbers committed in local_values.json (written by `python tests/empirics/id/test_local.py write`
in a venv with scikit-dimension); measured: MOM equal to the last bit, TLE to 6e-13. They carry MLE's
duplicate policy and bootstrap interval, and are registered once (estimate_id, the CLI)."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from tmcheck.empirics.id import MOM, TLE, estimate_id
from tmcheck.empirics.id.local import mom_pointwise

sys.path.insert(0, str(Path(__file__).parent))  # --import-mode=importlib: the helper beside this file
from peer_values import committed, skdim_parity_tests, write_when_asked  # noqa: E402

X = np.random.default_rng(0).standard_normal((500, 5)) @ np.random.default_rng(1).standard_normal((5, 12))
VALUES = Path(__file__).with_name("local_values.json")

# case -> (class, tmcheck's parameters, scikit-dimension's constructor and fit keywords)
CASES = {
    "MOM().fit(X)": ("MOM", {}, {}, {}),
    "MOM().fit(X, n_neighbors=20, comb='median')": (
        "MOM",
        {"k": 20, "combine": "median"},
        {},
        {"n_neighbors": 20, "comb": "median"},
    ),
    "TLE().fit(X)": ("TLE", {}, {}, {}),
    "TLE(epsilon=0.5).fit(X, n_neighbors=10)": (
        "TLE",
        {"k": 10, "epsilon": 0.5},
        {"epsilon": 0.5},
        {"n_neighbors": 10},
    ),
}
OURS = {"MOM": MOM, "TLE": TLE}


def ours(case: str):
    name, params, _, _ = CASES[case]
    est = OURS[name](**params).fit(X)
    return [est.dimension_, *est.dimension_pw_]


def theirs(case: str):
    import skdim

    name, _, init, fit = CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = getattr(skdim.id, name)(**init).fit(X, **fit)
    return [float(est.dimension_), *np.asarray(est.dimension_pw_, dtype=np.float64).tolist()]


test_equal_to_scikit_dimensions_committed_numbers, test_equal_to_scikit_dimension = skdim_parity_tests(
    VALUES, CASES, ours, theirs
)


def test_the_comparison_can_fail():
    """MOM's pointwise value with T_k in place of the mean m1 in the numerator (a plausible slip)."""
    from tmcheck.empirics.id.knn import kneighbors

    want = committed(VALUES)["MOM().fit(X)"][1:]
    D = kneighbors(X, 100).distances
    slip = -D[:, -1] / (D.mean(axis=1) - D[:, -1])
    assert np.abs(slip - want).max() > 0.1 and np.abs(mom_pointwise(D, 100) - want).max() < 1e-9


def test_duplicates_and_bootstrap_as_mle():
    Xd = np.concatenate([X, X[:5]])
    for cls in (MOM, TLE):
        with pytest.warns(UserWarning, match="removed 5 duplicate"):
            est = cls(k=20, bootstrap=200, seed=0).fit(Xd)
        pw = est.dimension_pw_[est.representative_]
        np.testing.assert_array_equal(pw[500:], pw[:5])
        lo, hi = est.ci_
        assert lo < est.dimension_ < hi and hi - lo < 1.0


def test_k_is_lowered_on_few_points_and_the_parameter_stays():
    with pytest.warns(UserWarning, match=r"k = 100 >= the 50 points: k = 49"):
        est = MOM().fit(X[:50])
    assert est.k_ == 49 and est.k is None


@pytest.mark.parametrize("name", ["mom", "tle"])
def test_registered_once_estimate_id_and_the_cli_take_them(name, tmp_path):
    from typer.testing import CliRunner

    from tmcheck.cli.main import app

    res = estimate_id(X, estimator=name, k=20, bootstrap=0)
    assert res.dimension == pytest.approx(OURS[name.upper()](k=20).fit(X).dimension_, abs=1e-12)
    np.save(tmp_path / "x.npy", X)
    out = CliRunner().invoke(app, ["id", "estimate", str(tmp_path / "x.npy"), "-e", name, "--bootstrap", "0", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["dimension"] == pytest.approx(res.dimension, abs=1e-12)


if __name__ == "__main__":
    write_when_asked(VALUES, CASES, theirs)
