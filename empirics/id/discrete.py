"""I3D, the intrinsic dimension of points on a lattice (Macocco, Glielmo, Grilli and Laio 2023, "Intrinsic
dimension estimation for discrete metrics", PRL 130, 067401; dadapy's ``IdDiscrete``), for integer
data such as counts or token statistics (paper Section 5, "Estimating the ID of text").

Continuous estimators divide distances, which on a lattice tie and vanish. I3D counts instead: with the
Manhattan (L1) metric, the number of lattice points of Z^d within distance l of a point is

    V(l, d) = sum_{j=0}^{min(d, l)} 2^j C(d, j) C(l, j) = C(d + l, d) 2F1(-d, -l; -d - l; -1),

the second form continuing it to real d. With k_i the other points within the outer radius ``lk`` of
point i and n_i those within the inner radius ``ln``, each of the k_i falls inside ln with probability
p(d) = V(ln, d) / V(lk, d) under a locally uniform density, so the binomial likelihood of d is
maximal where p(d) = sum n / sum k; p decreases in d, and the root is found by bisection on (0, D].
Each point's own value solves p(d) = n_i / k_i (0 where k_i = 0 or n_i = k_i, D where n_i = 0 < k_i).

Duplicated rows are kept by default (a repeated lattice point is part of the counting process, as
dadapy counts it); ``duplicates='remove'`` drops the exact repeats first, 'error' refuses them, and
``rtol`` does not apply (lattice points are compared exactly). The bootstrap resamples points'
(n_i, k_i) as MLE's resamples its pointwise values. The counts are exact: L1 distances of integers
below 2^52 in float64, in blocks of rows (N^2 D work, no kNN).
Validated on uniform points of lattice boxes of known dimension (tests/empirics/id/test_discrete.py).
"""

from __future__ import annotations

import numpy as np

from tmcheck.empirics.id.core import IDFit, bootstrap_indices, fit_init, percentile_ci
from tmcheck.empirics.id.corrint import check_ordered_integers
from tmcheck.empirics.id.points import check_points, identical_rows
from tmcheck.empirics.id.registry import Estimator

_BISECTIONS = 60  # halvings of (0, D]: below float64 resolution of d


def lattice_volume(radius: int, d) -> np.ndarray:
    """V(radius, d): the points of Z^d within L1 distance ``radius`` of the origin (d real: the
    hypergeometric continuation)."""
    from scipy.special import binom, hyp2f1

    d = np.asarray(d, dtype=np.float64)
    return binom(d + radius, d) * hyp2f1(-d, -radius, -d - radius, -1.0)


def dimension_from_ratio(ratio, ln: int, lk: int, D: float) -> np.ndarray:
    """The d in (0, D] with V(ln, d) / V(lk, d) = ratio, by bisection (the ratio falls as d grows): a
    ratio above every p(d) gives 0, one below p(D) gives D."""
    ratio = np.asarray(ratio, dtype=np.float64)
    lo, hi = np.zeros_like(ratio), np.full_like(ratio, float(D))
    for _ in range(_BISECTIONS):
        mid = (lo + hi) / 2
        above = lattice_volume(ln, mid) / lattice_volume(lk, mid) > ratio  # p(mid) too large: d is larger
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    return (lo + hi) / 2


def lattice_counts(X: np.ndarray, radii: tuple[int, ...], device: str = "auto", block: int = 1024) -> np.ndarray:
    """(N, len(radii)) counts of the other rows within L1 distance r of each row (exact for integers)."""
    import torch

    from tmcheck.empirics.device import resolve_device

    x = torch.from_numpy(np.ascontiguousarray(X, dtype=np.float64)).to(resolve_device(device))
    out = np.empty((len(x), len(radii)), dtype=np.int64)
    for b0 in range(0, len(x), block):
        dist = torch.cdist(x[b0 : b0 + block], x, p=1.0)  # (b, N)
        for j, r in enumerate(radii):
            out[b0 : b0 + block, j] = (dist <= r).sum(dim=1).cpu().numpy() - 1  # less the row itself
    return out


class I3DFit(IDFit):
    """The arithmetic of I3D (ln < lk, integer radii; dadapy's parameter names)."""

    __init__ = fit_init({"lk": 4, "ln": 2}, duplicates="keep")

    def _n_neighbors_needed(self) -> int:
        self._check_common()
        check_ordered_integers(self, "ln", "lk")
        if self.duplicates not in ("keep", "remove", "error"):
            raise ValueError(f"duplicates must be 'keep', 'remove' or 'error', got {self.duplicates!r}")
        if self.rtol is not None:
            raise ValueError("I3D compares lattice points exactly: rtol does not apply (leave it None)")
        return 1

    def fit(self, X, y=None):
        """The ID of the rows of X, which must hold integers; y is ignored. Returns self."""
        self._n_neighbors_needed()
        X = check_points(X, 1)
        if not np.array_equal(X, np.round(X)) or np.abs(X).max() >= 2**52:
            raise ValueError("I3D needs points on the integer lattice (integer coordinates below 2^52)")
        first = identical_rows(X, np.linalg.norm(X, axis=1))  # each row's first equal row
        repeats = int((first != np.arange(len(X))).sum())
        if repeats and self.duplicates == "error":
            raise ValueError(f"{repeats} of {len(X)} rows repeat an earlier row (duplicates='error')")
        kept = np.flatnonzero(first == np.arange(len(X))) if self.duplicates == "remove" else np.arange(len(X))
        self.n_features_in_, self.duplicate_rtol_ = X.shape[1], None
        self.representative_ = np.searchsorted(kept, first) if self.duplicates == "remove" else kept
        self.fit_neighbors(X[kept], None)
        self.n_duplicates_ = len(X) - len(kept)
        return self

    def fit_distances(self, distances):
        raise ValueError("I3D counts lattice points within L1 radii, not kNN distances: use fit(X)")

    def fit_neighbors(self, X, neighbors):
        self._n_neighbors_needed()
        D = X.shape[1]
        counts = lattice_counts(X, (self.ln, self.lk), self.device)
        n, k = counts[:, 0], counts[:, 1]
        if k.sum() == 0:
            raise ValueError(f"no two points within lk = {self.lk} of each other: increase lk")
        self.counts_ = counts
        self.dimension_ = float(dimension_from_ratio(n.sum() / k.sum(), self.ln, self.lk, D))
        with np.errstate(divide="ignore", invalid="ignore"):
            pw = dimension_from_ratio(np.where(k > 0, n / k, 1.0), self.ln, self.lk, D)
        self.dimension_pw_ = np.where(k > 0, pw, 0.0)
        self.ci_ = None
        if self.bootstrap:
            ratios = np.concatenate(
                [
                    n[i].sum(axis=1) / np.maximum(k[i].sum(axis=1), 1)
                    for i in bootstrap_indices(len(n), self.bootstrap, self._rng())
                ]
            )
            self.ci_ = percentile_ci(dimension_from_ratio(ratios, self.ln, self.lk, D), self.ci_level)
        self.n_used_ = len(X)
        return self


# the estimators of this module (``registry.Estimator``; ``protocol.ESTIMATORS`` gathers them)
ESTIMATORS = (
    Estimator(
        "i3d",
        I3DFit,
        "I3D",
        "lattice points within L1 radii 2 and 4 (Macocco et al. 2023, dadapy's I3D), binomial maximum likelihood",
    ),
)
