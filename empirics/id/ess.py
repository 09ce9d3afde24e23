"""ESS, the expected simplex skewness of Johnsson, Soneson and Fontes (2015), on the exact kNN engine
(paper Section 5, "Estimating the ID of text"), equal to scikit-dimension 0.5.0's ``ESS`` on the same
points (tests/empirics/id/test_mada_ess.py).

Each point's k neighbours (the point itself not among them) are centred on their mean, v_1 .. v_k.
A group of d + 1 of them spans a simplex; version 'a' compares its volume with the product of its
edge lengths, version 'b' (d = 1 only) the projection |v_i . v_j| with |v_i| |v_j|:

    ess = sum_groups vol / sum_groups prod |v|,   vol = sqrt(|det G|), G the group's Gram matrix.

For points drawn uniformly from an n-ball the expectation is known in closed form (``reference``);
the point's ID is the n where it equals ess, linear between integers. At most 5000 groups are used:
when the neighbours give more, 5000 are drawn at random for each point in turn, from
``numpy.random.default_rng(seed)`` as scikit-dimension draws them (with k <= 100 and d = 1, the
default, every pair is used and no draw matters). A local estimator: mean (or median) of the
pointwise values, with MLE's duplicate policy and percentile bootstrap over points
(``local.LocalFit``); k defaults to scikit-dimension's 100.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from tmcheck.empirics.id.core import fit_init
from tmcheck.empirics.id.local import LocalFit
from tmcheck.empirics.id.registry import Estimator

MAX_GROUPS = 5000  # groups per point (scikit-dimension's)


def reference(n: np.ndarray, ver: str, d: int) -> np.ndarray:
    """The expected skewness of uniform points in an n-ball, n = 1, 2, ... (Johnsson et al. 2015, Sec. 3):
    'a': (G(n/2) / G((n+1)/2))^d G(n/2) / G((n-d)/2) (0 for n <= d); 'b': G(n/2) / (sqrt(pi) G((n+1)/2))."""
    lg = np.vectorize(math.lgamma)
    n = np.asarray(n, dtype=np.float64)
    if ver == "b":
        return np.exp(lg(n / 2) - lg((n + 1) / 2)) / np.sqrt(np.pi)
    out = np.zeros(len(n))
    m = n > d
    out[m] = np.exp(d * (lg(n[m] / 2) - lg((n[m] + 1) / 2)) + lg(n[m] / 2) - lg((n[m] - d) / 2))
    return out


def dimension_of(ess: np.ndarray, ver: str, d: int) -> np.ndarray:
    """The n where ``reference`` equals each ess, linear between integers ('a' rises with n, 'b' falls)."""
    ess = np.asarray(ess, dtype=np.float64)
    top = 20
    ref = reference(np.arange(1, top + 1), ver, d)
    finite = ess[np.isfinite(ess)]
    while len(finite) and ((ver == "a" and finite.max() >= ref[-1]) or (ver == "b" and finite.min() <= ref[-1])):
        top = 2 * (top - 1)  # scikit-dimension's growth of the table: 20, 38, 74, ...
        ref = reference(np.arange(1, top + 1), ver, d)
    # i = the integer dimension below ess (1-based), the count of table values on its side
    i = np.searchsorted(ref, ess, side="right") if ver == "a" else np.sum(ref[None, :] > ess[:, None], axis=1)
    i = np.clip(i, 1, top - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = i + (ess - ref[i - 1]) / (ref[i] - ref[i - 1])
    out[~np.isfinite(ess)] = np.nan
    return out


class ESSFit(LocalFit):
    """The arithmetic of ESS (parameters of ``LocalFit``, ver and d; k defaults to 100, seed draws the
    groups where there are more than 5000, as scikit-dimension's random_state)."""

    DEFAULT_K = 100

    __init__ = fit_init({"k": None, "ver": "a", "d": 1, "combine": "mean"})

    def _n_neighbors_needed(self) -> int:
        k = super()._n_neighbors_needed()
        if self.ver not in ("a", "b"):
            raise ValueError(f"ver must be 'a' or 'b', got {self.ver!r}")
        if isinstance(self.d, bool) or not isinstance(self.d, (int, np.integer)) or self.d < 1:
            raise ValueError(f"d must be an integer >= 1, got {self.d!r}")
        if self.ver == "b" and self.d != 1:
            raise ValueError("ver='b' supports d = 1 only (as scikit-dimension)")
        if k < self.d + 1:
            raise ValueError(f"ESS needs k >= d + 1 = {self.d + 1} neighbours, got {k}")
        return k

    def fit_distances(self, distances):
        raise ValueError("ESS needs the neighbours' coordinates, not only their distances: use fit(X)")

    def fit_neighbors(self, X, neighbors):
        k = self._n_neighbors_needed()
        X = np.asarray(X, dtype=np.float64)
        self.essval_ = ess_pointwise(X, neighbors.indices[:, :k], self.ver, self.d, self.seed)
        return self._combine_pointwise(dimension_of(self.essval_, self.ver, self.d), self.combine, k)


def ess_pointwise(X: np.ndarray, indices: np.ndarray, ver: str, d: int, seed) -> np.ndarray:
    """The skewness of each point's neighbours X[indices] (N, k), groups of d + 1, in blocks of points."""
    N, k = indices.shape
    p = d + 1
    if X.shape[1] < p:  # no simplex of d + 1 edges in fewer dimensions: scikit-dimension's values
        return np.full(N, 0.0 if ver == "a" else 1.0)
    groups = np.array(list(itertools.combinations(range(k), p)))  # (C, p), lexicographic
    rng = np.random.default_rng(seed) if len(groups) > MAX_GROUPS else None
    out = np.empty(N)
    block = max(1, (1 << 22) // max(k * k + min(len(groups), MAX_GROUPS) * p * p, 1))
    for b0 in range(0, N, block):
        nn = X[indices[b0 : b0 + block]]  # (b, k, D)
        V = nn - nn.mean(axis=1, keepdims=True)
        G = V @ V.transpose(0, 2, 1)  # (b, k, k) Gram matrix of the centred neighbours
        lens = np.sqrt(np.einsum("bkd,bkd->bk", V, V))  # (b, k)
        if rng is None:
            g = groups[None]  # (1, C, p): the same groups for every point
            rows = np.zeros((1, 1), dtype=np.intp) + np.arange(len(V))[:, None]  # (b, 1)
        else:  # each point draws its own groups, in order
            g = np.stack([groups[np.sort(rng.choice(len(groups), MAX_GROUPS, replace=False))] for _ in V])
            rows = np.arange(len(V))[:, None]
        weight = np.prod(lens[rows[:, :, None], g], axis=2).sum(axis=1)  # (b,)
        if ver == "b":
            top = np.abs(G[rows, g[..., 0], g[..., 1]]).sum(axis=1)
        elif p == 2:  # a pair: det G = |v_i|^2 |v_j|^2 - (v_i . v_j)^2
            diag = np.diagonal(G, axis1=1, axis2=2)
            det = diag[rows, g[..., 0]] * diag[rows, g[..., 1]] - G[rows, g[..., 0], g[..., 1]] ** 2
            top = np.sqrt(np.abs(det)).sum(axis=1)
        else:
            sub = G[rows[:, :, None, None], g[:, :, :, None], g[:, :, None, :]]  # (b, C, p, p)
            top = np.sqrt(np.abs(np.linalg.det(sub))).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out[b0 : b0 + block] = top / weight
    return out


# the estimators of this module (``registry.Estimator``; ``protocol.ESTIMATORS`` gathers them)
ESTIMATORS = (
    Estimator(
        "ess",
        ESSFit,
        "ESS",
        "expected simplex skewness (Johnsson et al. 2015), version a, mean of pointwise estimates",
    ),
)
