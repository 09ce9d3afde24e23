"""KNN, the k-nearest-neighbour graph length estimate of Carter, Raich and Hero (2010) without block
bootstrap (Johnsson's R package intrinsicDimension), on the exact kNN engine (paper Section 5,
"Estimating the ID of text"), equal to scikit-dimension 0.5.0's ``KNN`` on the same points and seed
(tests/empirics/id/test_corrint_knn.py).

For samples of p points drawn with replacement, the total length L(p) = sum over the sample of
the k nearest distances (within the sample, each point without itself) raised to gamma grows as
p^((m - gamma) / m) in dimension m. For each sample size p of ``ps`` (default k + 1 .. k + 4) M samples
are drawn, in scikit-dimension's order, from ``numpy.random.RandomState(seed)``; for each m = 1 .. D
the constant c of L = c p^alpha is fitted by least squares and the ID is the m with the least
residual (``residual_``). An integer.

A global estimator: ``dimension_pw_`` holds the global value for every point. Its bootstrap resamples
the points and refits (each refit draws its own samples). Duplicated rows are kept by default: the
samples are drawn with replacement, so a repeated point at distance 0 is part of the method, and
scikit-dimension keeps them; ``duplicates='remove'`` applies MLE's policy first (a kNN search of all
points, which costs more than the estimate). The seed defaults to 0, so that a fit is repeatable
(scikit-dimension's random_state defaults to None).
"""

from __future__ import annotations

import numpy as np

from tmcheck.empirics.id.core import IDFit, bootstrap_indices, fit_init, percentile_ci
from tmcheck.empirics.id.knn import kneighbors
from tmcheck.empirics.id.points import check_points
from tmcheck.empirics.id.registry import Estimator


class KNNFit(IDFit):
    """The arithmetic of KNN (k, ps, M, gamma: scikit-dimension's parameters; seed: its random_state)."""

    __init__ = fit_init({"k": None, "ps": None, "M": 1, "gamma": 2}, seed=0, duplicates="keep")

    def _k_ps(self, n: int | None = None) -> tuple[int, np.ndarray]:
        k = 2 if self.k is None else self.k
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"k must be an integer >= 1, got {k!r}")
        ps = np.arange(k + 1, k + 5) if self.ps is None else np.asarray(self.ps)
        if ps.ndim != 1 or len(ps) < 2 or not np.issubdtype(ps.dtype, np.integer) or ps.min() <= k:
            raise ValueError(f"ps must be at least 2 integer sample sizes > k = {k}, got {self.ps!r}")
        if n is not None and ps.max() > n:
            raise ValueError(f"ps must be at most the {n} points, got {ps.max()}")
        return int(k), ps

    def _n_neighbors_needed(self) -> int:
        self._check_common()
        self._k_ps()
        if isinstance(self.M, bool) or not isinstance(self.M, (int, np.integer)) or self.M < 1:
            raise ValueError(f"M must be an integer >= 1, got {self.M!r}")
        if not (isinstance(self.gamma, (int, float, np.number)) and np.isfinite(self.gamma) and self.gamma > 0):
            raise ValueError(f"gamma must be a finite number > 0, got {self.gamma!r}")
        return 1

    def fit(self, X, y=None):
        """The ID of the rows of X; y is ignored. Returns self. Duplicated rows are kept unless
        ``duplicates`` says otherwise (then IDFit's fit applies MLE's policy, with its kNN search)."""
        self._n_neighbors_needed()
        if self.duplicates != "keep":
            return IDFit.fit(self, X)
        X = check_points(X, 1)
        self.n_features_in_, self.n_duplicates_, self.duplicate_rtol_ = X.shape[1], 0, None
        self.representative_ = np.arange(len(X))
        return self.fit_neighbors(X, None)

    def fit_distances(self, distances):
        raise ValueError("KNN measures graphs on random samples of the points, not their kNN: use fit(X)")

    def fit_neighbors(self, X, neighbors):
        self._n_neighbors_needed()
        X = np.asarray(X, dtype=np.float64)
        rs = np.random.RandomState(self.seed)
        self.dimension_, self.residual_ = self._estimate(X, rs)
        self.dimension_pw_ = np.full(len(X), float(self.dimension_))
        self.ci_ = None
        if self.bootstrap:
            stats = [
                self._estimate(X[i], rs)[0]
                for idx in bootstrap_indices(len(X), self.bootstrap, self._rng())
                for i in idx
            ]
            self.ci_ = percentile_ci(np.asarray(stats, dtype=np.float64), self.ci_level)
        self.n_used_ = len(X)
        return self

    def _estimate(self, X: np.ndarray, rs: np.random.RandomState) -> tuple[int, float]:
        """(ID, residual) of X from graph lengths of samples drawn with ``rs``."""
        k, ps = self._k_ps(len(X))
        L = np.zeros((len(ps), self.M))  # (Q, M) graph lengths
        for q, p in enumerate(ps):
            for j in range(self.M):
                sample = X[rs.randint(0, len(X), p)]  # with replacement: a repeat is a neighbour at 0
                L[q, j] = np.sum(kneighbors(sample, k, device=self.device).distances ** self.gamma)
        m = np.arange(1, X.shape[1] + 1)[:, None]  # (D, 1) candidate dimensions
        ps_alpha = ps[None, :] ** ((m - self.gamma) / m)  # (D, Q)
        c = (ps_alpha * L.sum(axis=1)).sum(axis=1) / ((ps_alpha**2).sum(axis=1) * self.M)  # (D,)
        residual = ((L[None] - (c[:, None] * ps_alpha)[:, :, None]) ** 2).sum(axis=(1, 2))  # (D,)
        best = int(np.argmin(residual))
        return best + 1, float(residual[best])


# the estimators of this module (``registry.Estimator``; ``protocol.ESTIMATORS`` gathers them)
ESTIMATORS = (
    Estimator(
        "knn",
        KNNFit,
        "KNN",
        "kNN graph length (Carter et al. 2010) on samples of k + 1 .. k + 4 points, least-squares dimension",
    ),
)
