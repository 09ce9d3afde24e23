"""scikit-dimension's local estimators beside MLE, on the exact kNN engine (paper Section 5, "Estimating
the ID of text"): MOM and TLE, each equal to scikit-dimension 0.5.0's on the same points
(tests/empirics/id/test_local.py), with MLE's duplicate policy and bootstrap interval.

A local estimator gives each point a value from its k nearest neighbours (the point itself not among
them) and combines them by their mean (scikit-dimension's default for these two) or median.

- ``MOMFit``: the method of moments of Amsaleg et al. (2018). With T_j the j-th neighbour distance and
  m1 = mean_j T_j, the pointwise ID is m1 / (T_k - m1): under the local model F(r) ~ (r / T_k)^d the
  mean of T_j / T_k is d / (d + 1). k defaults to scikit-dimension's 100.
- ``TLEFit``: tight local estimation (Amsaleg et al. 2019, the variant with central measurements and
  reflections, ``idtlec.m``): besides the k distances u_j to the point, each pair of neighbours (i, j)
  at distance v_ij gives two more measurements, s_ij (the distance of j's projection onto the
  sphere of radius r = T_k seen from i) and t_ij (its reflection), each a draw from the same local
  law; the ID is the MLE over all of them,
  d = -2 (k^2 - dropped) / (sum log(t / r) + sum log(s / r) + 2 sum log(u / r)).
  Measurements below ``epsilon`` are dropped with their partner, as in scikit-dimension (whose
  boundary cases this follows line by line); a neighbourhood whose distances are all equal gives 0.
  k defaults to 20.
"""

from __future__ import annotations

import warnings

import numpy as np

from tmcheck.empirics.id.core import COMBINATIONS, IDFit, bootstrap_indices, combine_values, percentile_ci
from tmcheck.empirics.id.registry import Estimator


class LocalFit(IDFit):
    """The shared arithmetic of a local estimator: pointwise values from each point's k neighbours,
    their combination and a percentile bootstrap over points (as ``MLEFit``)."""

    DEFAULT_K = 20  # scikit-dimension's default n_neighbors for the estimator

    def __init__(
        self,
        k=None,
        combine="mean",
        bootstrap=0,
        ci_level=0.95,
        duplicates="remove",
        rtol=None,
        device="auto",
        seed=None,
    ):
        self.k = k
        self.combine = combine
        self.bootstrap = bootstrap
        self.ci_level = ci_level
        self.duplicates = duplicates
        self.rtol = rtol
        self.device = device
        self.seed = seed

    def _n_neighbors_needed(self) -> int:
        self._check_common()
        k = self.DEFAULT_K if self.k is None else self.k
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
            raise ValueError(f"{type(self).__name__} needs an integer k >= 2, got {k!r}")
        if self.combine not in ("mean", "median"):
            raise ValueError(f"combine must be 'mean' or 'median' (of {COMBINATIONS}), got {self.combine!r}")
        return int(k)

    def fit(self, X, y=None, smooth: bool = False):
        """IDFit's fit; on N <= k points k is lowered to N - 1 for this fit, with a warning (as
        scikit-dimension does), and the parameter stays as given."""
        k, n = self._n_neighbors_needed(), (len(X) if hasattr(X, "__len__") else 0)
        if not 3 <= n <= k:
            return IDFit.fit(self, X, smooth=smooth)
        warnings.warn(f"k = {k} >= the {n} points: k = {n - 1} (as scikit-dimension does)", stacklevel=2)
        given, self.k = self.k, n - 1
        try:
            return IDFit.fit(self, X, smooth=smooth)
        finally:
            self.k = given

    def _combine_pointwise(self, pw: np.ndarray, k: int):
        """dimension_, ci_ and the counts from the pointwise values."""
        self.dimension_pw_ = pw
        self.dimension_ = float(combine_values(pw, self.combine))
        self.ci_ = None
        if self.bootstrap:
            blocks = bootstrap_indices(len(pw), self.bootstrap, self._rng())
            stats = np.concatenate([combine_values(pw[idx], self.combine, axis=1) for idx in blocks])
            self.ci_ = percentile_ci(stats, self.ci_level)
        self.n_used_ = len(pw)
        self.n_duplicates_ = 0
        self.k_ = k
        return self


class MOMFit(LocalFit):
    """The arithmetic of MOM (parameters of ``LocalFit``; k defaults to 100, as in scikit-dimension)."""

    DEFAULT_K = 100

    def fit_distances(self, distances):
        """Fit from sorted kNN distances (N, >= k), self excluded."""
        k = self._n_neighbors_needed()
        return self._combine_pointwise(mom_pointwise(distances, k), k)


def mom_pointwise(distances, k: int) -> np.ndarray:
    """m1 / (T_k - m1) for each row of sorted distances (N, >= k), m1 the mean of the first k."""
    T = np.asarray(distances, dtype=np.float64)[:, :k]
    m1 = T.sum(axis=1) / k
    with np.errstate(divide="ignore", invalid="ignore"):
        return -m1 / (m1 - T[:, -1])


class TLEFit(LocalFit):
    """The arithmetic of TLE (parameters of ``LocalFit`` and epsilon, the smallest measurement kept)."""

    def __init__(
        self,
        k=None,
        epsilon=1e-4,
        combine="mean",
        bootstrap=0,
        ci_level=0.95,
        duplicates="remove",
        rtol=None,
        device="auto",
        seed=None,
    ):
        super().__init__(k, combine, bootstrap, ci_level, duplicates, rtol, device, seed)
        self.epsilon = epsilon

    def fit_distances(self, distances):
        raise ValueError("TLE needs the neighbours' coordinates, not only their distances: use fit(X)")

    def fit_neighbors(self, X, neighbors):
        k = self._n_neighbors_needed()
        if not (isinstance(self.epsilon, (int, float)) and np.isfinite(self.epsilon) and self.epsilon >= 0):
            raise ValueError(f"epsilon must be a finite number >= 0, got {self.epsilon!r}")
        X = np.asarray(X, dtype=np.float64)
        idx, dist = neighbors.indices[:, :k], np.asarray(neighbors.distances, dtype=np.float64)[:, :k]
        pw = np.array([tle_point(X[idx[i]], dist[i], self.epsilon) for i in range(len(X))])
        return self._combine_pointwise(pw, k)


def tle_point(nn: np.ndarray, u: np.ndarray, epsilon: float) -> float:
    """TLE of one point from its neighbours nn (k, D) at sorted distances u (k,), scikit-dimension's
    ``_idtle`` step by step (its boundary cases 1-5)."""
    r = u[-1]
    if r == 0:
        raise ValueError("all k-NN distances are zero")
    k = len(u)
    V = np.sqrt(((nn[:, None, :] - nn[None, :, :]) ** 2).sum(axis=-1))  # (k, k) distances between neighbours
    Di = np.tile(u[:, None], (1, k))
    Dj = Di.T
    Z2 = 2 * Di**2 + 2 * Dj**2 - V**2
    with np.errstate(divide="ignore", invalid="ignore"):
        S = r * (np.sqrt((Di**2 + V**2 - Dj**2) ** 2 + 4 * V**2 * (r**2 - Di**2)) - (Di**2 + V**2 - Dj**2))
        S /= 2 * (r**2 - Di**2)
        T = r * (np.sqrt((Di**2 + Z2 - Dj**2) ** 2 + 4 * Z2 * (r**2 - Di**2)) - (Di**2 + Z2 - Dj**2))
        T /= 2 * (r**2 - Di**2)
        Dr = u == r  # neighbours at distance r: the limit of the formulas
        S[Dr, :] = r * V[Dr, :] ** 2 / (r**2 + V[Dr, :] ** 2 - Dj[Dr, :] ** 2)
        T[Dr, :] = r * Z2[Dr, :] / (r**2 + Z2[Dr, :] - Dj[Dr, :] ** 2)
        Di0, Dj0 = Di == 0, Dj == 0
        T[Di0], S[Di0] = Dj[Di0], Dj[Di0]
        T[Dj0] = S[Dj0] = (r * V / (r + V))[Dj0]
    V0 = V == 0
    np.fill_diagonal(V0, False)
    T[V0] = S[V0] = r
    n_v0 = int(V0.sum())
    dropped = (T < epsilon) | (S < epsilon) | np.isnan(T) | np.isnan(S)
    np.fill_diagonal(dropped, False)
    n_dropped = int(dropped.sum())
    T[dropped] = S[dropped] = r
    with np.errstate(divide="ignore"):  # the diagonal (a neighbour with itself) is 0 and set to 0 below
        T, S = np.log(T / r), np.log(S / r)
    np.fill_diagonal(T, 0)
    np.fill_diagonal(S, 0)
    s1t, s1s = T.sum(), S.sum()
    n_small = int((u < epsilon).sum())
    s2 = np.sum(np.log(u[n_small:] / r))
    if s1t + s1s > -epsilon:  # (almost) all distances equal
        return 0.0
    return float(-2 * (k**2 - n_dropped - n_small - n_v0) / (s1t + s1s + 2 * s2))


# the estimators of this module (``registry.Estimator``; ``protocol.ESTIMATORS`` gathers them)
ESTIMATORS = (
    Estimator("mom", MOMFit, "MOM", "method of moments (Amsaleg et al. 2018), mean of pointwise estimates"),
    Estimator("tle", TLEFit, "TLE", "tight local estimation (Amsaleg et al. 2019), mean of pointwise estimates"),
)
