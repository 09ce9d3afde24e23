"""CorrInt, the correlation dimension of Grassberger and Procaccia (1983), on the exact kNN engine
and an exact pair count (paper Section 5, "Estimating the ID of text"), equal to scikit-dimension
0.5.0's ``CorrInt`` on the same points (tests/empirics/id/test_corrint_knn.py).

The correlation sum C(r) = #{(i, j), i != j : |x_i - x_j| < r} / N^2 grows as r^d, so with two radii

    d = (log C(r2) - log C(r1)) / log(r2 / r1),

r1 and r2 the medians over points of the k1-th and k2-th neighbour distances (defaults 10 and 20).
Pairs are counted exactly, on the kNN engine (``pairs_within``: each point's neighbours out to the
radius, the search widened for the points that have more than k2 there). scikit-dimension counts on
scikit-learn's Gram-trick distances instead, so a pair within about 1e-8 of a radius (of its own
length) can fall on the other side there; the medians are averages of two distances when N is
even, so on continuous data no pair lies so close.

A global estimator: ``dimension_pw_`` holds the global value for every point. Its bootstrap resamples
points as MLE's does: each resample's radii are the medians over the drawn points, and its pair sum
counts the drawn points' pairs with all N points (a point drawn c times counts c times).
"""

from __future__ import annotations

import warnings

import numpy as np

from tmcheck.empirics.id.core import IDFit, bootstrap_indices, fit_init, n_rows, percentile_ci
from tmcheck.empirics.id.knn import kneighbors
from tmcheck.empirics.id.registry import Estimator


def pairs_within(X: np.ndarray, radius: float, neighbors, device: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """(rows, distances) of the ordered pairs i != j with |x_i - x_j| <= radius, from the exact kNN engine:
    a row whose last neighbour in ``neighbors`` (sorted, self excluded) is at the radius or beyond has
    all its pairs there; the others are searched again with twice the neighbours (``kneighbors`` on
    those rows only), until each reaches the radius or holds every other point."""
    T = np.asarray(neighbors.distances, dtype=np.float64)
    n, k = len(X), T.shape[1]
    done = T[:, -1] >= radius
    inside = (T <= radius) & done[:, None]
    out_rows, out_dist = [np.nonzero(inside)[0]], [T[inside]]
    rows = np.flatnonzero(~done)
    while len(rows):
        k = min(2 * k, n - 1)
        q = kneighbors(X, k, device=device, queries=rows)
        done = (q.distances[:, -1] >= radius) | (k == n - 1)
        inside = (q.distances <= radius) & done[:, None]
        out_rows.append(rows[np.nonzero(inside)[0]])
        out_dist.append(q.distances[inside])
        rows = rows[~done]
    return np.concatenate(out_rows), np.concatenate(out_dist)


def check_ordered_integers(est, small: str, large: str) -> int:
    """The parameter ``large`` of ``est``, after checking that it and ``small`` are integers with
    1 <= small < large (CorrInt's k1 < k2, I3D's ln < lk); else ValueError naming them."""
    for name in (small, large):
        v = getattr(est, name)
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    lo, hi = getattr(est, small), getattr(est, large)
    if lo >= hi:
        raise ValueError(f"{type(est).__name__} needs {small} < {large}, got {small}={lo}, {large}={hi}")
    return int(hi)


class CorrIntFit(IDFit):
    """The arithmetic of CorrInt (k1 < k2, scikit-dimension's parameters; MLE's duplicate policy and a
    bootstrap over points)."""

    __init__ = fit_init({"k1": 10, "k2": 20})

    def _n_neighbors_needed(self) -> int:
        """k2, or the wider search ``fit`` asks for (see there)."""
        return max(self._k2(), getattr(self, "_search_k", 0))

    def _k2(self) -> int:
        self._check_common()
        return check_ordered_integers(self, "k1", "k2")

    def fit(self, X, y=None):
        """IDFit's fit with a kNN search of 2 k2 neighbours, so that most points' pairs within the radii
        need no second search; on N <= k2 points k2 is lowered to N - 1 and k1 below it, with a warning
        (as scikit-dimension does), and the parameters stay as given."""
        n, given = n_rows(X), (self.k1, self.k2)
        if 3 <= n <= self._k2():
            self.k2 = n - 1
            self.k1 = min(self.k1, self.k2 - 1)
            warnings.warn(f"k2 = {given[1]} >= the {n} points: k1, k2 = {self.k1}, {self.k2}", stacklevel=2)
        self._search_k = min(2 * self.k2, n - 1)
        try:
            return IDFit.fit(self, X)
        finally:
            self.k1, self.k2 = given
            del self._search_k

    def fit_distances(self, distances):
        raise ValueError("CorrInt counts all pairs within its radii, not only the kNN: use fit(X)")

    def fit_neighbors(self, X, neighbors):
        k2 = self._k2()
        T1, T2 = (np.asarray(neighbors.distances[:, k - 1], dtype=np.float64) for k in (self.k1, k2))
        self.radii_ = (float(np.median(T1)), float(np.median(T2)))
        boot = []
        if self.bootstrap:
            rng = self._rng()
            boot = [
                (i, np.median(T1[i], axis=1), np.median(T2[i], axis=1))
                for i in bootstrap_indices(len(T1), self.bootstrap, rng)
            ]
        reach = max([self.radii_[1], *(float(b[2].max()) for b in boot)])
        rows, dist = pairs_within(X, reach, neighbors, self.device)
        order = np.argsort(dist, kind="stable")
        rows, dist = rows[order], dist[order]

        def within(r: float) -> np.ndarray:  # each point's count of other points closer than r
            return np.bincount(rows[: np.searchsorted(dist, r, side="left")], minlength=len(X))

        n1, n2 = within(self.radii_[0]), within(self.radii_[1])
        self.pair_counts_ = (int(n1.sum()), int(n2.sum()))
        self.dimension_ = correlation_dimension(*self.pair_counts_, *self.radii_, len(X))
        self.dimension_pw_ = np.full(len(X), self.dimension_)
        self.ci_ = None
        if self.bootstrap:
            stats = [
                correlation_dimension(within(a)[i].sum(), within(b)[i].sum(), a, b, len(X))
                for idx, r1, r2 in boot
                for i, a, b in zip(idx, r1, r2, strict=True)
            ]
            self.ci_ = percentile_ci(np.asarray(stats), self.ci_level)
        self.n_used_ = len(X)
        self.k_ = k2
        return self


def correlation_dimension(s1: int, s2: int, r1: float, r2: float, n: int) -> float:
    """(log C(r2) - log C(r1)) / log(r2 / r1) with C(r) = s / n^2, s the ordered pairs closer than r."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.diff(np.log(np.array([s1, s2]) / n**2))[0] / np.log(r2 / r1))


# the estimators of this module (``registry.Estimator``; ``protocol.ESTIMATORS`` gathers them)
ESTIMATORS = (
    Estimator(
        "corrint",
        CorrIntFit,
        "CorrInt",
        "correlation dimension (Grassberger-Procaccia 1983) between the median 10th and 20th neighbour radii",
    ),
)
