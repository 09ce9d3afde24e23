"""Positive controls of the synthetic study: estimators whose rate n^{-2β/(2β+d)} is a theorem (issue #38,
item 3), so that the pipeline sweep -> fit -> verdict can be shown to recover a known exponent.

- `knn_theory`: k-nearest-neighbour regression with k = max(1, round(c n^{2β/(2β+d)})) (Györfi et al.,
  *A Distribution-Free Theory of Nonparametric Regression*, Thm 6.2: bias² ≲ (k/n)^{2β/d}, variance ≲ σ²/k,
  balanced at k ≍ n^{2β/(2β+d)}); the constant c is chosen once per (d, β) on held-out data at one small n
  (`tune_knn_constant`) and then fixed for every n.
- `knn_cv`: the same estimator with k chosen on a validation split (a grid in steps of √2, searched upward
  until the two grid points above the best are worse).
- `krr_theory`: Gaussian-kernel ridge regression with the theory's schedule (Eberts & Steinwart 2013, Thm 1):
  bandwidth h_n = h₀ n^{-1/(2β+d)} and ridge λ_n = λ₀ h_n^d n^{-2β/(2β+d)}, i.e. the regulariser in units of
  the kernel's volume h_n^d falls as n^{-2β/(2β+d)}. In scikit-learn's unnormalised loss
  Σ (y - f)² + α ||f||²_H this is α = n λ_n = λ₀ h₀^d, a constant; (h₀, α) are chosen once per (d, β) on
  held-out data at one small n (`tune_krr`).

Every neighbour search is exact (scipy's cKDTree) with the queries in chunks of at most CHUNK_BYTES of
neighbour arrays, so memory stays bounded whatever k and the number of queries are.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

CHUNK_BYTES = 256 * 2**20  # neighbour arrays of one chunk of queries: distances, indices, labels, sums
C_GRID = tuple(2.0 ** (j / 2) for j in range(-8, 9))  # knn-theory's constant c: 1/16 to 16 in steps of √2
CV_START = 64  # knn-cv searches k <= CV_START first, then twice as far while the best is near the top
H_GRID = tuple(2.0 ** (-j / 2) for j in range(0, 13))  # krr's bandwidth at the tuning n (ambient units): 1 to 1/64
ALPHA_GRID = (1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0)  # krr's scikit-learn ridge α = λ₀ h₀^d (a constant across n)
KRR_CHUNK = 4096  # test points predicted at a time (a chunk x n kernel block)


def rate(d: int, beta: float) -> float:
    """a = 2β/(2β+d): the exponent of k (kNN) and of the MSE (minimax) in n."""
    return 2 * beta / (2 * beta + d)


def theory_k(c: float, n: int, d: int, beta: float) -> int:
    """k = max(1, round(c n^{2β/(2β+d)})), at most n."""
    return int(min(n, max(1, round(c * n ** rate(d, beta)))))


def knn_means(X: np.ndarray, y: np.ndarray, Xq: np.ndarray, ks: Sequence[int], tree=None):
    """Exact kNN regression at the query points for every k of `ks`: ((m, len(ks)) means, (m,) distance
    to each query's max(ks)-th neighbour). The neighbours of max(ks) are found once; the mean of the first
    k is a prefix sum. `tree`: a cKDTree of X already built."""
    from scipy.spatial import cKDTree

    ks = np.asarray(ks, dtype=np.int64)
    k_max = int(ks.max())
    if ks.min() < 1 or k_max > len(X):
        raise ValueError(f"k must lie in [1, {len(X)}], got {ks.min()} to {k_max}")
    tree = cKDTree(X) if tree is None else tree
    rows = max(1, CHUNK_BYTES // (32 * k_max))
    means, radius = np.empty((len(Xq), len(ks))), np.empty(len(Xq))
    for i in range(0, len(Xq), rows):
        dist, idx = tree.query(Xq[i : i + rows], k=k_max)
        dist, idx = dist.reshape(len(dist), k_max), idx.reshape(len(idx), k_max)  # (chunk, k_max)
        sums = np.cumsum(y[idx], axis=1)  # (chunk, k_max)
        means[i : i + rows] = sums[:, ks - 1] / ks
        radius[i : i + rows] = dist[:, -1]
    return means, radius


def _mse(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean((a - b) ** 2))


def knn_theory(X, y, X_test, f_test, c: float, d: int, beta: float) -> dict:
    """kNN with the theory's k on all n points: test MSE against f, k, and the median distance to the
    k-th neighbour over the test points (the scale the estimate averages over)."""
    k = theory_k(c, len(X), d, beta)
    means, radius = knn_means(X, y, X_test, [k])
    return {"test_mse": _mse(means[:, 0], f_test), "k": k, "c": c, "radius": float(np.median(radius))}


def cv_grid(n: int) -> list[int]:
    """The k's knn-cv chooses from: round(2^{j/2}), distinct, at most n."""
    out, j = [], 0
    while (k := round(2 ** (j / 2))) <= n:
        if not out or k != out[-1]:
            out.append(k)
        j += 1
    return out


def knn_cv(X_train, y_train, X_val, y_val, X_test, f_test) -> dict:
    """kNN with k chosen on the validation split: the grid `cv_grid` searched upward (k <= CV_START,
    then twice as far each time) until the best k lies at least a factor 2 below the largest k tried, so
    that two grid points above it were worse (or the grid ends at n_train). Each step queries its
    neighbours afresh: the search costs at most twice its last step, about n_val x 4 x best k."""
    from scipy.spatial import cKDTree

    tree, grid = cKDTree(X_train), cv_grid(len(X_train))
    k_hi = min(len(X_train), CV_START)
    while True:
        ks = [k for k in grid if k <= k_hi]
        means, _ = knn_means(X_train, y_train, X_val, ks, tree)
        val = np.mean((means - y_val[:, None]) ** 2, axis=0)
        best = ks[int(np.argmin(val))]
        if 2 * best <= k_hi or k_hi >= len(X_train):
            break
        k_hi = min(len(X_train), 2 * k_hi)
    means, radius = knn_means(X_train, y_train, X_test, [best], tree)
    return {
        "test_mse": _mse(means[:, 0], f_test),
        "k": best,
        "val_mse": float(val.min()),
        "k_max_tried": k_hi,
        "radius": float(np.median(radius)),
    }


def tune_knn_constant(sets, d: int, beta: float, grid: Sequence[float] = C_GRID) -> dict:
    """c for knn-theory: the grid point whose k = theory_k(c, n) has the least held-out MSE (against the
    noisy held-out labels), averaged over the tuning sets [(X, y, X_held, y_held), ...] of one size n."""
    from scipy.spatial import cKDTree

    n = len(sets[0][0])
    if any(len(s[0]) != n for s in sets):
        raise ValueError("the tuning sets must all have the same size n")
    ks = [theory_k(c, n, d, beta) for c in grid]
    distinct = sorted(set(ks))
    total = np.zeros(len(distinct))
    for X, y, Xh, yh in sets:
        means, _ = knn_means(X, y, Xh, distinct, cKDTree(X))
        total += np.mean((means - yh[:, None]) ** 2, axis=0)
    by_k = dict(zip(distinct, total / len(sets), strict=True))
    held = [by_k[k] for k in ks]
    i = int(np.argmin(held))  # the smallest c among equal k's
    return {
        "c": float(grid[i]),
        "k": ks[i],
        "n": n,
        "sets": len(sets),
        "grid": [float(c) for c in grid],
        "heldout_mse": [float(v) for v in held],
        "at_edge": ks[i] in (min(ks), max(ks)),  # the best k is the grid's smallest or largest
    }


def bandwidth(h0: float, n: int, d: int, beta: float) -> float:
    """h_n = h₀ n^{-1/(2β+d)}: the Gaussian kernel's width under the theory's schedule."""
    return h0 * n ** (-1 / (2 * beta + d))


def gaussian_krr(X, y, X_query, h: float, alpha: float) -> np.ndarray:
    """Exact kernel ridge regression with k(x, x') = exp(-|x - x'|² / 2h²) and scikit-learn's ridge α."""
    from sklearn.kernel_ridge import KernelRidge

    model = KernelRidge(alpha=alpha, kernel="rbf", gamma=1 / (2 * h * h)).fit(X, y)
    return np.concatenate([model.predict(X_query[i : i + KRR_CHUNK]) for i in range(0, len(X_query), KRR_CHUNK)])


def krr_theory(X, y, X_test, f_test, h0: float, alpha: float, d: int, beta: float) -> dict:
    """Gaussian kernel ridge on all n points with the theory's bandwidth and ridge (module doc)."""
    h = bandwidth(h0, len(X), d, beta)
    return {"test_mse": _mse(gaussian_krr(X, y, X_test, h, alpha), f_test), "h": h, "h0": h0, "alpha": alpha}


def tune_krr(sets, d: int, beta: float, h_grid=H_GRID, alpha_grid=ALPHA_GRID) -> dict:
    """(h₀, α) for krr: the grid point (bandwidth at the tuning n, ridge) with the least held-out MSE
    (noisy labels), averaged over the tuning sets of one size n; h₀ = h n^{1/(2β+d)}."""
    n = len(sets[0][0])
    grid = [(h, a) for h in h_grid for a in alpha_grid]
    held = np.zeros(len(grid))
    for X, y, Xh, yh in sets:
        for i, (h, a) in enumerate(grid):
            held[i] += _mse(gaussian_krr(X, y, Xh, h, a), yh)
    held /= len(sets)
    i = int(np.argmin(held))
    h, a = grid[i]
    return {
        "h0": float(h * n ** (1 / (2 * beta + d))),
        "h": float(h),
        "alpha": float(a),
        "n": n,
        "sets": len(sets),
        "h_grid": [float(v) for v in h_grid],
        "alpha_grid": [float(v) for v in alpha_grid],
        "heldout_mse": [float(v) for v in held],
        "at_edge": h in (h_grid[0], h_grid[-1]) or a in (alpha_grid[0], alpha_grid[-1]),
    }


def intrinsic_radius(radius: float) -> float:
    """An ambient distance on the flat torus (unit circles) in units of its chart u = θ/2π (small angles)."""
    return radius / (2 * math.pi)
