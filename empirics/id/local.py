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

import numpy as np

from tmcheck.empirics.id.core import COMBINATIONS, IDFit, fit_init, lowered_k, n_rows
from tmcheck.empirics.id.registry import Estimator


class LocalFit(IDFit):
    """The shared parameters and fit of a local estimator: pointwise values from each point's k
    neighbours, their combination and a percentile bootstrap over points (``IDFit._combine_pointwise``,
    as ``MLEFit``)."""

    DEFAULT_K = 20  # scikit-dimension's default n_neighbors for the estimator

    __init__ = fit_init({"k": None, "combine": "mean"})

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
        low = lowered_k(self._n_neighbors_needed(), n_rows(X))
        if low is None:
            return IDFit.fit(self, X, smooth=smooth)
        given, self.k = self.k, low
        try:
            return IDFit.fit(self, X, smooth=smooth)
        finally:
            self.k = given


class MOMFit(LocalFit):
    """The arithmetic of MOM (parameters of ``LocalFit``; k defaults to 100, as in scikit-dimension)."""

    DEFAULT_K = 100

    def fit_distances(self, distances):
        """Fit from sorted kNN distances (N, >= k), self excluded."""
        k = self._n_neighbors_needed()
        return self._combine_pointwise(mom_pointwise(distances, k), self.combine, k)


def mom_pointwise(distances, k: int) -> np.ndarray:
    """m1 / (T_k - m1) for each row of sorted distances (N, >= k), m1 the mean of the first k."""
    T = np.asarray(distances, dtype=np.float64)[:, :k]
    m1 = T.sum(axis=1) / k
    with np.errstate(divide="ignore", invalid="ignore"):
        return -m1 / (m1 - T[:, -1])


class TLEFit(LocalFit):
    """The arithmetic of TLE (parameters of ``LocalFit`` and epsilon, the smallest measurement kept)."""

    __init__ = fit_init({"k": None, "epsilon": 1e-4, "combine": "mean"})

    def fit_distances(self, distances):
        raise ValueError("TLE needs the neighbours' coordinates, not only their distances: use fit(X)")

    def fit_neighbors(self, X, neighbors):
        k = self._n_neighbors_needed()
        if not (isinstance(self.epsilon, (int, float)) and np.isfinite(self.epsilon) and self.epsilon >= 0):
            raise ValueError(f"epsilon must be a finite number >= 0, got {self.epsilon!r}")
        X = np.asarray(X, dtype=np.float64)
        idx, dist = neighbors.indices[:, :k], np.asarray(neighbors.distances, dtype=np.float64)[:, :k]
        pw = tle_pointwise(X, idx, dist, self.epsilon)
        return self._combine_pointwise(pw, self.combine, k)


def tle_pointwise(X: np.ndarray, indices: np.ndarray, distances: np.ndarray, epsilon: float) -> np.ndarray:
    """TLE of every point from its k neighbours X[indices] (N, k) at sorted distances (N, k):
    scikit-dimension's ``_idtle`` step by step (its boundary cases 1-5), on blocks of points at once
    (b, k, k) instead of one point at a time. The distances between neighbours come from one batched
    kernel (torch's cdist without the Gram trick: the norm of each difference, as scipy's pdist, and no
    (b, k, k, D) temporary), and the point's own distances broadcast instead of being tiled: N = 2048,
    D = 100, k = 20 took 0.18-0.30 CPU s against 0.43-0.47 for the (b, k, k, D) differences, on this
    2-core machine under load; the pointwise values moved by at most 1.9e-10."""
    import torch

    N, k = distances.shape
    out = np.empty(N)
    block = max(1, (1 << 20) // (k * k))
    off = ~np.eye(k, dtype=bool)  # a neighbour with itself gives no measurement
    Xt = torch.from_numpy(np.ascontiguousarray(X, dtype=np.float64))
    for b0 in range(0, N, block):
        u = distances[b0 : b0 + block]  # (b, k)
        r = u[:, -1][:, None, None]  # (b, 1, 1)
        if (r == 0).any():
            raise ValueError("all k-NN distances of a point are zero")
        nn = Xt[torch.from_numpy(indices[b0 : b0 + block])]  # (b, k, D)
        V = torch.cdist(nn, nn, compute_mode="donot_use_mm_for_euclid_dist").numpy()  # (b, k, k) between neighbours
        Di, Dj = u[:, :, None], u[:, None, :]  # (b, k, 1), (b, 1, k): u_i and u_j of each pair
        Di2, Dj2, V2, r2 = Di**2, Dj**2, V**2, r**2
        Z2 = 2 * Di2 + 2 * Dj2 - V2
        with np.errstate(divide="ignore", invalid="ignore"):
            a = Di2 + V2 - Dj2
            S = r * (np.sqrt(a**2 + 4 * V2 * (r2 - Di2)) - a) / (2 * (r2 - Di2))
            a = Di2 + Z2 - Dj2
            T = r * (np.sqrt(a**2 + 4 * Z2 * (r2 - Di2)) - a) / (2 * (r2 - Di2))
            Dr = Di == r  # neighbours at distance r: the limit of the formulas
            S = np.where(Dr, r * V2 / (r2 + V2 - Dj2), S)
            T = np.where(Dr, r * Z2 / (r2 + Z2 - Dj2), T)
            T, S = np.where(Di == 0, Dj, T), np.where(Di == 0, Dj, S)
            at_j0 = r * V / (r + V)
            T, S = np.where(Dj == 0, at_j0, T), np.where(Dj == 0, at_j0, S)
        V0 = (V == 0) & off
        T, S = np.where(V0, r, T), np.where(V0, r, S)
        dropped = ((T < epsilon) | (S < epsilon) | np.isnan(T) | np.isnan(S)) & off
        T, S = np.where(dropped, r, T), np.where(dropped, r, S)
        with np.errstate(divide="ignore"):  # the diagonal is set to 0 next
            T, S = np.where(off, np.log(T / r), 0.0), np.where(off, np.log(S / r), 0.0)
        s1 = T.sum(axis=(1, 2)) + S.sum(axis=(1, 2))
        small = u < epsilon
        with np.errstate(divide="ignore"):
            s2 = np.where(small, 0.0, np.log(u / u[:, -1:])).sum(axis=1)
        n = k**2 - dropped.sum(axis=(1, 2)) - small.sum(axis=1) - V0.sum(axis=(1, 2))
        with np.errstate(divide="ignore", invalid="ignore"):
            out[b0 : b0 + block] = np.where(s1 > -epsilon, 0.0, -2 * n / (s1 + 2 * s2))  # all distances equal: 0
    return out


# the estimators of this module (``registry.Estimator``; ``protocol.ESTIMATORS`` gathers them)
ESTIMATORS = (
    Estimator("mom", MOMFit, "MOM", "method of moments (Amsaleg et al. 2018), mean of pointwise estimates"),
    Estimator("tle", TLEFit, "TLE", "tight local estimation (Amsaleg et al. 2019), mean of pointwise estimates"),
)
