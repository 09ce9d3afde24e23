"""MADA, the manifold-adaptive dimension estimate of Farahmand, Szepesvari and Audibert (2007), on the
exact kNN engine (paper Section 5, "Estimating the ID of text"), equal to scikit-dimension 0.5.0's
``MADA`` on the same points (tests/empirics/id/test_mada_ess.py).

The probability mass of a ball of radius r around x grows as r^d, so the radii holding k and k/2
neighbours satisfy (T_k / T_{k/2})^d = 2, and each point's value is

    d(x) = log 2 / log(T_k(x) / T_{floor(k/2)}(x)),

T_j the distance to the j-th neighbour (the point itself not among them). A local estimator: the
values are combined by their mean (scikit-dimension's default) or median, with MLE's duplicate
policy and percentile bootstrap over points (``local.LocalFit``). k defaults to scikit-dimension's 20.
scikit-dimension excludes the zero distances of exact duplicates from each point's neighbours; the
default policy here removes the duplicated rows instead (``points.prepare``), as for every estimator.
"""

from __future__ import annotations

import numpy as np

from tmcheck.empirics.id.local import LocalFit
from tmcheck.empirics.id.registry import Estimator


class MADAFit(LocalFit):
    """The arithmetic of MADA (parameters of ``LocalFit``; k defaults to 20, as in scikit-dimension)."""

    def fit_distances(self, distances):
        """Fit from sorted kNN distances (N, >= k), self excluded."""
        k = self._n_neighbors_needed()
        return self._combine_pointwise(mada_pointwise(distances, k), self.combine, k)


def mada_pointwise(distances, k: int) -> np.ndarray:
    """log 2 / log(T_k / T_{floor(k/2)}) for each row of sorted distances (N, >= k)."""
    T = np.asarray(distances, dtype=np.float64)
    if T.shape[1] < k:
        raise ValueError(f"need {k} neighbour distances per point, got {T.shape[1]}")
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(2.0) / np.log(T[:, k - 1] / T[:, k // 2 - 1])


# the estimators of this module (``registry.Estimator``; ``protocol.ESTIMATORS`` gathers them)
ESTIMATORS = (
    Estimator(
        "mada",
        MADAFit,
        "MADA",
        "manifold-adaptive dimension (Farahmand et al. 2007), log 2 / log(T_k / T_k/2), mean of pointwise estimates",
    ),
)
