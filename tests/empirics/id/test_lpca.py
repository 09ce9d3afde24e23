"""lPCA (empirics/id/lpca.py) equals scikit-dimension 0.5.0's lPCA on the same points for each of its
spectral versions: against scikit-dimension where it is installed (CI's beside-anchors stage) and,
everywhere, against its numbers committed in lpca_values.json (written by
`python tests/empirics/id/test_lpca.py write` in a venv with scikit-dimension): the dimension to
1e-9 (exact for the integer versions) and the spectrum to 1e-9."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from tmcheck.empirics.id import estimate_id
from tmcheck.empirics.id.lpca import VERSIONS, lPCAFit, spectrum

sys.path.insert(0, str(Path(__file__).parent))  # --import-mode=importlib: the helper beside this file
from peer_values import committed, skdim_parity_tests, write_when_asked  # noqa: E402

X = np.random.default_rng(0).standard_normal((500, 5)) @ np.random.default_rng(1).standard_normal((5, 12))
X = X + 0.05 * np.random.default_rng(2).standard_normal(X.shape)  # a noise floor under the 5 directions
VALUES = Path(__file__).with_name("lpca_values.json")


def ours(ver: str) -> list[float]:
    est = lPCAFit(ver=ver).fit(X)
    return [float(est.dimension_), *est.explained_var_.tolist()]


def theirs(ver: str) -> list[float]:
    import skdim

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = skdim.id.lPCA(ver=ver).fit(X)
    return [float(est.dimension_), *np.asarray(est.explained_var_, dtype=np.float64).tolist()]


test_equal_to_scikit_dimensions_committed_numbers, test_equal_to_scikit_dimension = skdim_parity_tests(
    VALUES, VERSIONS, ours, theirs
)


def test_the_comparison_can_fail():
    """The uncentred spectrum (scikit-dimension's center=False) gives other numbers."""
    want = committed(VALUES)["participation_ratio"]
    ev = np.linalg.svd(X, compute_uv=False) ** 2 / (len(X) - 1)
    assert abs(np.sum(ev) ** 2 / np.sum(ev**2) - want[0]) > 1e-3  # X is nearly centred: a small, clear miss
    np.testing.assert_allclose(spectrum(X), want[1:], rtol=0, atol=1e-9)


def test_refused_versions_and_the_bootstrap():
    with pytest.raises(ValueError, match="random-matrix versions are not implemented"):
        lPCAFit(ver="MP").fit(X)
    est = lPCAFit(ver="participation_ratio", bootstrap=100, seed=0).fit(X)
    lo, hi = est.ci_
    assert lo <= est.dimension_ <= hi and hi - lo < 0.5
    assert estimate_id(X, estimator="lpca", bootstrap=0).dimension == 5
    Xd = np.concatenate([X, X[:50]])
    assert lPCAFit(ver="participation_ratio").fit(Xd).n_used_ == 550  # kept, as scikit-dimension keeps them
    with pytest.warns(UserWarning, match="removed 50 duplicate"):
        est = lPCAFit(ver="participation_ratio", duplicates="remove").fit(Xd)
    assert est.n_used_ == 500 and est.dimension_ == pytest.approx(ours("participation_ratio")[0], abs=1e-12)


if __name__ == "__main__":
    write_when_asked(VALUES, VERSIONS, theirs)


@pytest.mark.parametrize("offset", [0.0, 1e3, 1e6])
def test_off_centre_points_keep_their_spectrum(offset, monkeypatch):
    """The scatter X^T X - n m m^T is used only while the subtraction cancels little: points moved far
    off centre are centred first, so their spectrum stays the centred SVD's (relative 1e-9 of the
    largest eigenvalue). The mutant that always subtracts loses the small eigenvalues at 1e6."""
    from tmcheck.empirics.id import lpca

    moved = X + offset
    svd = np.linalg.svd(X - X.mean(axis=0), compute_uv=False) ** 2 / (len(X) - 1)
    np.testing.assert_allclose(spectrum(moved), svd, rtol=0, atol=1e-9 * svd[0])
    monkeypatch.setattr(lpca, "CANCELLATION", np.inf)  # the mutant: the scatter however far off centre
    off = np.max(np.abs(spectrum(moved) - svd)) / svd[0]
    assert (off > 1e-9) == (offset >= 1e6), off
