"""Intrinsic-dimension estimators with a scikit-learn-like API (paper Section 5, "Estimating the ID").

``__init__`` only stores parameters; ``fit(X)`` returns self; learned state ends in ``_``:
``dimension_``, ``dimension_pw_`` (pointwise values where the estimator has them), ``ci_`` (a
percentile bootstrap interval, or None), ``n_used_`` and ``n_duplicates_``. ``fit_distances`` takes
precomputed sorted kNN distances (self excluded) so several estimators can share one kNN search.

- ``MLE``: Levina & Bickel (2004). For each point, with T_j its j-th neighbour distance,
  m_k(x) = (k - 1) / sum_{j<k} log(T_k / T_j). ``combine='mean'`` averages m_k (Levina-Bickel);
  ``combine='inverse'`` is MacKay & Ghahramani's 1 / mean(1 / m_k), scikit-dimension's default
  (``comb='mle'``) and hence what the paper's script used.
- ``TwoNN``: Facco et al. (2017). mu = T_2 / T_1 is Pareto(d). ``method='linear'`` fits
  -log(1 - F_emp(mu)) = d log mu through the origin after discarding the largest
  ``discard_fraction`` of mu (dadapy's 'base', skdim's 'linear'); ``method='mle'`` is the
  maximum-likelihood estimate with the discarded values censored: (n - 1) / (sum log mu + c log mu_max).
- ``MLEScaling``: the MLE on disjoint subsets of size N, N/2, N/4, ..., which shows how the estimate
  moves with N (the small-N bias the paper's batches of 4096 lock in), extrapolated to N -> inf with
  m(n) = d + c n^(-2/d) (curvature bias is O(r_k^2) and r_k ~ n^(-1/d)).

Bootstrap intervals resample points (pointwise values, or mu). Neighbourhoods overlap, so the
pointwise values are not independent and the interval is somewhat narrow; it measures sampling noise
of the average, not the estimator's bias (MLEScaling shows that).
"""

from __future__ import annotations

import numpy as np

from tmcheck.empirics.id._points import neighbors_without_duplicates
from tmcheck.empirics.knn import kneighbors

COMBINATIONS = ("inverse", "mean")


def _percentile_ci(samples: np.ndarray, level: float) -> tuple[float, float]:
    lo, hi = np.quantile(samples, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


class _Estimator:
    """Shared fit: check the points, apply the duplicate policy, run the kNN engine once."""

    _n_neighbors: int

    def fit(self, X, y=None):
        _, nb, removed = neighbors_without_duplicates(
            X, self._n_neighbors_needed(), duplicates=self.duplicates, rtol=self.rtol, device=self.device
        )
        self.fit_distances(nb.distances)
        self.n_duplicates_ = removed
        return self

    def _bootstrap(self, values: np.ndarray, statistic) -> tuple[float, float] | None:
        if not self.bootstrap:
            return None
        rng = np.random.default_rng(self.seed)
        n = len(values)
        stats = np.array([statistic(values[rng.integers(0, n, n)]) for _ in range(self.bootstrap)])
        return _percentile_ci(stats, self.ci_level)


class MLE(_Estimator):
    """Levina-Bickel maximum-likelihood ID from the k nearest neighbours of every point.

    k: neighbours per point (the paper's K = 20). combine: 'inverse' (MacKay-Ghahramani; the paper's
    via skdim) or 'mean' (Levina-Bickel). bootstrap: resamples for the interval (0: none).
    duplicates: 'remove' (default, warns with the count), 'keep' or 'error'; rtol: near-duplicate
    tolerance relative to the RMS radius. device: 'auto', 'cpu', 'cuda'.
    """

    def __init__(self, k=20, combine="inverse", bootstrap=0, ci_level=0.95, duplicates="remove",
                 rtol=1e-6, device="auto", seed=None):
        self.k = k
        self.combine = combine
        self.bootstrap = bootstrap
        self.ci_level = ci_level
        self.duplicates = duplicates
        self.rtol = rtol
        self.device = device
        self.seed = seed

    def _n_neighbors_needed(self) -> int:
        if self.k < 2:
            raise ValueError(f"MLE needs k >= 2, got {self.k}")
        if self.combine not in COMBINATIONS:
            raise ValueError(f"combine must be one of {COMBINATIONS}, got {self.combine!r}")
        return self.k

    def _combine(self, pw: np.ndarray) -> float:
        if self.combine == "mean":
            return float(np.mean(pw))
        with np.errstate(divide="ignore"):
            return float(1.0 / np.mean(1.0 / pw))

    def fit_distances(self, distances):
        """Fit from sorted kNN distances (N, >= k), self excluded."""
        self._n_neighbors_needed()
        T = np.asarray(distances, dtype=np.float64)[:, : self.k]
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.log(T[:, -1:] / T[:, :-1]).sum(axis=1)
            pw = (self.k - 1) / s
        pw[~np.isfinite(pw)] = 0.0  # a zero distance (kept duplicate) makes the sum infinite
        self.dimension_pw_ = pw
        self.dimension_ = self._combine(pw)
        self.ci_ = self._bootstrap(pw, self._combine)
        self.n_used_ = len(pw)
        self.n_duplicates_ = 0
        return self


class TwoNN(_Estimator):
    """TwoNN ID from the ratio of second to first neighbour distances (Facco et al. 2017).

    method: 'linear' (fit through the origin) or 'mle'. discard_fraction: the largest ratios
    dropped (linear) or censored (mle); 0.1 is the convention of dadapy and skdim.
    Other parameters as for MLE.
    """

    def __init__(self, method="linear", discard_fraction=0.1, bootstrap=0, ci_level=0.95,
                 duplicates="remove", rtol=1e-6, device="auto", seed=None):
        self.method = method
        self.discard_fraction = discard_fraction
        self.bootstrap = bootstrap
        self.ci_level = ci_level
        self.duplicates = duplicates
        self.rtol = rtol
        self.device = device
        self.seed = seed

    def _n_neighbors_needed(self) -> int:
        if self.method not in ("linear", "mle"):
            raise ValueError(f"method must be 'linear' or 'mle', got {self.method!r}")
        if not 0.0 <= self.discard_fraction < 1.0:
            raise ValueError(f"discard_fraction must be in [0, 1), got {self.discard_fraction}")
        return 2

    def _estimate(self, mu: np.ndarray) -> float:
        n = len(mu)
        n_keep = int(n * (1.0 - self.discard_fraction))
        if n_keep < 2:
            raise ValueError("fewer than 2 ratios left after the discard fraction")
        log_mu = np.log(np.sort(mu)[:n_keep])
        if self.method == "mle":
            return float((n_keep - 1) / (log_mu.sum() + (n - n_keep) * log_mu[-1]))
        n_keep = min(n_keep, n - 1)  # F_emp = 1 at the largest ratio: -log(1 - F) is infinite
        log_mu = log_mu[:n_keep]
        y = -np.log1p(-np.arange(1, n_keep + 1) / n)
        return float(np.dot(log_mu, y) / np.dot(log_mu, log_mu))

    def fit_distances(self, distances):
        """Fit from sorted kNN distances (N, >= 2), self excluded."""
        self._n_neighbors_needed()
        T = np.asarray(distances, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            mu = T[:, 1] / T[:, 0]
        mu = mu[np.isfinite(mu)]  # a kept exact duplicate has T_1 = 0
        self.mu_ = mu
        self.dimension_ = self._estimate(mu)
        self.ci_ = self._bootstrap(mu, self._estimate)
        self.n_used_ = len(mu)
        self.n_duplicates_ = 0
        return self


class MLEScaling(_Estimator):
    """The MLE as a function of sample size, and its extrapolation to N -> inf.

    The points are split at random into 2^j disjoint subsets of size n_j = N / 2^j for
    j = 0, 1, ... while n_j >= min_size; m(n_j) is the mean of the subset estimates (this is the
    paper's protocol at batch size n_j). ``curve_`` lists (n, m(n), standard error, subsets);
    ``dimension_`` is d in m(n) = d + c n^(-2/d) fitted by weighted least squares (d on a grid,
    c linear), ``exponent_`` is 2/d, ``ci_`` the bootstrap interval of d over subsets,
    ``bias_`` = m(N) - d.
    """

    def __init__(self, k=20, combine="inverse", min_size=512, bootstrap=200, ci_level=0.95,
                 duplicates="remove", rtol=1e-6, device="auto", seed=None):
        self.k = k
        self.combine = combine
        self.min_size = min_size
        self.bootstrap = bootstrap
        self.ci_level = ci_level
        self.duplicates = duplicates
        self.rtol = rtol
        self.device = device
        self.seed = seed

    def _n_neighbors_needed(self) -> int:
        return MLE(k=self.k, combine=self.combine)._n_neighbors_needed()

    def fit(self, X, y=None):
        Xu, nb, removed = neighbors_without_duplicates(
            X, self.k, duplicates=self.duplicates, rtol=self.rtol, device=self.device
        )
        mle = MLE(k=self.k, combine=self.combine)
        rng = np.random.default_rng(self.seed)
        n = len(Xu)
        levels = [[mle.fit_distances(nb.distances).dimension_]]
        sizes = [n]
        while sizes[-1] // 2 >= max(self.min_size, 2 * self.k):
            size = sizes[-1] // 2
            perm = rng.permutation(n)
            batches = [perm[i * size : (i + 1) * size] for i in range(n // size)]
            levels.append([mle.fit_distances(kneighbors(Xu[b], self.k, device=self.device).distances).dimension_
                           for b in batches])
            sizes.append(size)
        means = np.array([np.mean(v) for v in levels])
        se = np.array([np.std(v, ddof=1) / np.sqrt(len(v)) if len(v) > 1 else np.nan for v in levels])
        # level 0 has one subset: borrow the next level's spread, scaled by sqrt(2) per halving
        if len(levels) > 1:
            se[0] = se[1] / np.sqrt(2.0)
        self.curve_ = [
            {"n": int(s), "dimension": float(m), "se": float(e), "subsets": len(v)}
            for s, m, e, v in zip(sizes, means, se, levels)
        ]
        self.n_used_ = n
        self.n_duplicates_ = removed
        if len(levels) < 3:
            raise ValueError(f"need at least 3 sizes >= min_size={self.min_size} to extrapolate; N={n} is too small")
        sizes = np.array(sizes, dtype=np.float64)
        self.dimension_, self.exponent_ = _extrapolate(sizes, means, se)
        self.bias_ = float(means[0] - self.dimension_)
        self.ci_ = None
        if self.bootstrap:
            boot = []
            for _ in range(self.bootstrap):
                m = np.array([np.mean(np.asarray(v)[rng.integers(0, len(v), len(v))]) if len(v) > 1
                              else v[0] + rng.normal(0.0, se[0]) for v in levels])
                boot.append(_extrapolate(sizes, m, se)[0])
            self.ci_ = _percentile_ci(np.array(boot), self.ci_level)
        return self


def _extrapolate(n: np.ndarray, m: np.ndarray, se: np.ndarray) -> tuple[float, float]:
    """Weighted least squares for m(n) = d + c n^(-2/d): d on a fine grid, c in closed form.
    Returns (d, 2/d). (A free exponent fits the S^16 curve better but is unstable with five or six
    sizes: on S^10 at N = 4096 it extrapolated to 13.3.)"""
    w = 1.0 / np.maximum(se, 1e-12) ** 2
    best = (np.inf, float(m[0]))
    for d in np.linspace(0.5 * m.min(), 4.0 * m.max(), 4000):
        z = n ** (-2.0 / d)
        c = np.sum(w * z * (m - d)) / np.sum(w * z * z)
        ssr = float(np.sum(w * (m - d - c * z) ** 2))
        if ssr < best[0]:
            best = (ssr, float(d))
    return best[1], 2.0 / best[1]
