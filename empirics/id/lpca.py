"""lPCA: the intrinsic dimension from the PCA eigenvalue spectrum, equal to scikit-dimension 0.5.0's
``lPCA`` on the same points (tests/empirics/id/test_lpca.py) for its spectral versions (paper
Section 5, "Estimating the ID of text", where PCA is the linear baseline).

The spectrum is the covariance's eigenvalues l_1 >= l_2 >= ... (the squared singular values of the
centred points over N - 1, what scikit-learn's PCA calls explained_variance_). ``ver``:

- 'FO' (default, Fukunaga-Olsen): the number of l_i > alphaFO l_1;
- 'Kaiser': the number of l_i above their mean;
- 'maxgap': the i with the largest gap l_i / l_{i+1};
- 'ratio': the fewest leading eigenvalues holding more than alphaRatio of the variance;
- 'participation_ratio': (sum l)^2 / sum l^2 (a real number);
- 'Fan': Fan et al.'s rule (noise level from the tail past PFan of the variance, then the first gap
  above alphaFan or the first cumulative share above betaFan);
- 'broken_stick': the leading eigenvalues whose share exceeds the broken-stick distribution's.

The random-matrix versions of scikit-dimension ('MP', 'GD', 'KN', 'Minka', 'parallel', 'denoised',
'scRMT') are refused in one line: they are not implemented here. A global estimator: duplicated rows
are kept by default (they change the spectrum as they change scikit-dimension's); ``duplicates=
'remove'`` (what ``estimate_id`` passes by default) drops them by MLE's rule first. The bootstrap
interval resamples points and recomputes the spectrum.
"""

from __future__ import annotations

import numpy as np

from tmcheck.empirics.id.core import IDFit, bootstrap_indices, fit_init, percentile_ci
from tmcheck.empirics.id.points import check_points
from tmcheck.empirics.id.registry import Estimator

VERSIONS = ("FO", "Fan", "maxgap", "ratio", "participation_ratio", "Kaiser", "broken_stick")


# the scatter X^T X - n m m^T is used as it is while n |m|^2, what the subtraction cancels, stays within
# this factor of the scatter's trace: at most 2 of float64's 16 digits are lost to it; off-centre points
# beyond it are centred first
CANCELLATION = 100.0


def spectrum(X: np.ndarray) -> np.ndarray:
    """The covariance eigenvalues of the rows of X, descending (min(N, D) of them).

    They are the squared singular values of the centred points over N - 1, computed as the eigenvalues
    of the smaller scatter matrix, no SVD. At N >= D it is X^T X - N m m^T (m the mean), as scikit-learn's
    PCA forms it on the 'covariance_eigh' path that scikit-dimension's lPCA takes at N >= 10 D: one
    product of X with its own transpose (numpy hands it to BLAS syrk) and no centred copy of X, unless
    the points sit so far off centre that the subtraction would cancel more than CANCELLATION allows;
    then, and at N < D (Xc Xc^T), the points are centred first. The eigenvalues come from LAPACK's
    symmetric solver without eigenvectors (scikit-learn computes them too). Negative rounding is
    clipped to 0, as there. numpy.linalg, not scipy.linalg: a first call imports nothing more."""
    n, dim = X.shape
    m = X.mean(axis=0)
    if n >= dim:
        scatter = X.T @ X
        shift = n * float(m @ m)
        if shift <= CANCELLATION * float(np.trace(scatter) - shift):
            scatter -= n * np.outer(m, m)
        else:
            Xc = X - m
            scatter = Xc.T @ Xc
    else:
        Xc = X - m
        scatter = Xc @ Xc.T
    ev = np.linalg.eigvalsh(scatter)[::-1]  # ascending from LAPACK: descending here
    return np.maximum(ev, 0.0) / (n - 1)


def dimension_from(ev: np.ndarray, est) -> float:
    """The ID of one spectrum under ``est``'s version and thresholds (scikit-dimension's formulas)."""
    if est.ver == "FO":
        return int(np.sum(ev > est.alphaFO * ev[0]))
    if est.ver == "Kaiser":
        return int(np.sum(ev > np.mean(ev)))
    if est.ver == "maxgap":
        with np.errstate(divide="ignore", invalid="ignore"):
            return int(np.nanargmax(ev[:-1] / ev[1:]) + 1)
    if est.ver == "ratio":
        share = np.cumsum(ev) / np.max(np.cumsum(ev))
        return int(np.sum(share < est.alphaRatio) + 1)
    if est.ver == "participation_ratio":
        return float(np.sum(ev) ** 2 / np.sum(ev**2))
    if est.ver == "broken_stick":
        d = len(ev)
        stick = np.array([np.sum(1.0 / np.arange(i + 1, d + 1)) / d for i in range(d)])
        above = stick > ev / np.sum(ev)
        return int(np.argmax(above)) if above.any() else 0
    r = np.where(np.cumsum(ev) / np.sum(ev) > est.PFan)[0][0]  # Fan
    ev = ev - np.mean(ev[r:])
    with np.errstate(divide="ignore", invalid="ignore"):
        gaps = ev[:-1] / ev[1:]
    return int(
        1
        + np.min(
            np.concatenate((np.where(gaps > est.alphaFan)[0], np.where(np.cumsum(ev) / np.sum(ev) > est.betaFan)[0]))
        )
    )


class lPCAFit(IDFit):  # noqa: N801  (scikit-dimension's class name)
    """The arithmetic of lPCA (its parameters: scikit-dimension's thresholds, tmcheck's bootstrap)."""

    # scikit-dimension's parameter names
    __init__ = fit_init(
        {"ver": "FO", "alphaRatio": 0.05, "alphaFO": 0.05, "alphaFan": 10, "betaFan": 0.8, "PFan": 0.95},
        duplicates="keep",
    )

    def _n_neighbors_needed(self) -> int:
        self._check_common()
        if self.ver not in VERSIONS:
            raise ValueError(
                f"ver must be one of {', '.join(VERSIONS)}, got {self.ver!r} (scikit-dimension's random-matrix "
                "versions are not implemented in tmcheck)"
            )
        return 1

    def fit(self, X, y=None):
        """The ID of the rows of X from their covariance spectrum; y is ignored. Returns self. Duplicated
        rows are kept unless ``duplicates`` says otherwise: then IDFit's fit applies MLE's policy (its
        kNN finds them) before ``fit_neighbors``."""
        self._n_neighbors_needed()
        if self.duplicates != "keep":
            return IDFit.fit(self, X)
        X = np.asarray(check_points(X, 1), dtype=np.float64)
        self.n_features_in_, self.n_duplicates_, self.duplicate_rtol_ = X.shape[1], 0, None
        self.representative_ = np.arange(len(X))
        return self.fit_neighbors(X, None)

    def fit_neighbors(self, X, neighbors):
        """The spectrum's ID of the points after the duplicate policy (their neighbours are not read)."""
        X = np.asarray(X, dtype=np.float64)
        self.explained_var_ = ev = spectrum(X)
        self.dimension_ = dimension_from(ev, self)
        self.dimension_pw_ = np.full(len(X), float(self.dimension_))  # a global estimate: every point's value
        with np.errstate(divide="ignore", invalid="ignore"):
            self.gap_ = ev[:-1] / ev[1:]
        self.ci_ = None
        if self.bootstrap:
            stats = [
                dimension_from(spectrum(X[i]), self)
                for idx in bootstrap_indices(len(X), self.bootstrap, self._rng())
                for i in idx
            ]
            self.ci_ = percentile_ci(np.asarray(stats, dtype=np.float64), self.ci_level)
        self.n_used_ = len(X)
        return self

    def fit_distances(self, distances):
        raise ValueError("lPCA reads the points' spectrum, not their neighbour distances: use fit(X)")


# the estimators of this module (``registry.Estimator``; ``protocol.ESTIMATORS`` gathers them)
ESTIMATORS = (
    Estimator(
        "lpca",
        lPCAFit,
        "lPCA",
        "PCA spectrum, Fukunaga-Olsen: eigenvalues above 5% of the largest (scikit-dimension's lPCA default)",
    ),
)
