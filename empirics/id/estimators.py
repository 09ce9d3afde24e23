"""Intrinsic-dimension estimators, scikit-learn estimators (paper Section 5, "Estimating the ID").

Every estimator subclasses ``sklearn.base.BaseEstimator``: ``__init__`` only stores parameters, so
``clone``, ``get_params`` and ``set_params`` work; ``fit(X)`` returns self; learned state ends in
``_``: ``dimension_``, ``dimension_pw_`` (pointwise values), ``ci_`` (an interval, or None),
``n_used_``, ``n_duplicates_``, ``n_features_in_``; ``dimension_pw_[representative_]`` gives all N
rows (a removed duplicate gets the value of the row kept for it). ``fit_distances`` takes precomputed
sorted kNN distances (self excluded), so several estimators can share one search.

scikit-dimension's interface is accepted with scikit-dimension's meanings, each checked against it
(tests/empirics/test_id_skdim_meaning.py): ``fit_transform`` and ``transform`` return the ID;
``MLE().fit(X, n_neighbors=, comb=, smooth=)`` (comb 'mle', 'mean', 'median'), with k lowered to N - 1
and a warning when N <= k; ``fit_pw(X, n_neighbors=100, smooth=)`` of TwoNN and GRIDE refits the
estimator in each point's neighbourhood (MLE's pointwise values come from one fit, as in
scikit-dimension); ``transform_pw``, ``fit_transform_pw``. Refused in one line, because they would
compute another number: ``MLE(K=...)`` (scikit-dimension's default ignores K; tmcheck's is ``k`` or
``n_neighbors``) and ``MLE.fit_transform`` without ``comb`` (scikit-dimension's defaults to 'mean'
there and to 'mle' in fit).

- ``MLE``: Levina & Bickel (2004). With T_j the j-th neighbour distance,
  m_k(x) = (k - 1) / sum_{j<k} log(T_k / T_j). ``combine='inverse'`` is MacKay & Ghahramani's
  1 / mean(1 / m_k), scikit-dimension's default (``comb='mle'``) and hence the paper's;
  ``combine='mean'`` averages m_k.
- ``MLECurve``: the MLE at several k from ONE search at the largest k: the scale dependence.
- ``TwoNN``: Facco et al. (2017). mu = T_2 / T_1 is Pareto(d). ``method='linear'`` fits
  -log(1 - F_emp(mu)) = d log mu through the origin after discarding the largest
  ``discard_fraction`` of mu (dadapy's 'base', skdim's 'linear'); ``method='mle'`` censors them:
  (n - 1) / (sum log mu + c log mu_max). Pointwise: 1 / log mu_i, the one-point Pareto MLE.
- ``GRIDE``: in ``gride``.
- ``MLEScaling``: the MLE on disjoint subsets of size N, N/2, N/4, ..., extrapolated to N -> inf
  with m(n) = d + c n^(-2/d) (curvature bias is O(r_k^2) and r_k ~ n^(-1/d)).

Bootstrap intervals (percentile method, ``ci_level`` coverage at the design of iid pointwise values)
resample points, all replicates at once. Neighbourhoods overlap, so pointwise values are not
independent and the interval is somewhat narrow; it measures the sampling noise of the average,
not the estimator's bias (MLEScaling and MLECurve show that).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import check_is_fitted

from tmcheck.empirics.id.points import prepare
from tmcheck.empirics.id.knn import kneighbors

COMBINATIONS = ("inverse", "mean", "median")
# scikit-dimension's comb= values, by meaning
SKDIM_COMB = {"mle": "inverse", "mean": "mean", "median": "median"}
DEFAULT_K = 20  # the paper's K
_BOOT_CELLS = 1 << 17  # resampled values held at once by the vectorised bootstrap (cache-sized blocks)


def _percentile_ci(samples: np.ndarray, level: float) -> tuple[float, float]:
    lo, hi = np.quantile(samples, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def bootstrap_indices(n: int, n_boot: int, rng):
    """Yield (b, n) blocks of resampling indices, n_boot rows in all, in bounded memory."""
    per = max(1, _BOOT_CELLS // max(n, 1))
    for b0 in range(0, n_boot, per):
        yield rng.integers(0, n, size=(min(per, n_boot - b0), n))


def bootstrap_counts(n: int, n_boot: int, rng):
    """Yield (b, n) blocks of resampling counts (how often each point is drawn), n_boot rows in all;
    the same resamples as ``bootstrap_indices`` with the same rng."""
    for idx in bootstrap_indices(n, n_boot, rng):
        b = len(idx)
        yield np.bincount((idx + n * np.arange(b)[:, None]).ravel(), minlength=b * n).reshape(b, n)


def _combine(pw: np.ndarray, combine: str, axis=None):
    """Mean ('mean'), median ('median') or inverse mean of inverses ('inverse') of pointwise values."""
    if combine == "mean":
        return np.mean(pw, axis=axis)
    if combine == "median":
        return np.median(pw, axis=axis)
    with np.errstate(divide="ignore"):
        return 1.0 / np.mean(1.0 / pw, axis=axis)


def _smoothed(pw: np.ndarray, neighbors: np.ndarray) -> np.ndarray:
    """Each point's value averaged with its neighbours' (scikit-dimension's ``smooth``)."""
    return (pw + pw[neighbors].sum(axis=1)) / (1 + neighbors.shape[1])


def _refit_in_neighbourhoods(est, X: np.ndarray, nbrs: np.ndarray) -> np.ndarray:
    """est's ID on each row's neighbourhood X[nbrs[i]], from the sorted distances inside it (float64,
    in blocks of bounded memory); a neighbourhood holding duplicate points goes through est.fit, which
    applies the duplicate policy."""
    import torch

    need = est._n_neighbors_needed()
    m = nbrs.shape[1]
    if need >= m:
        raise ValueError(f"{type(est).__name__} needs {need + 1} points per neighbourhood, n_neighbors gives {m}")
    out = np.empty(len(nbrs))
    block = max(1, (1 << 24) // (m * m))
    for b0 in range(0, len(nbrs), block):
        idx = nbrs[b0 : b0 + block]
        P = torch.from_numpy(X[idx])  # (b, m, D)
        dist = torch.cdist(P, P).sort(dim=-1).values.numpy()[:, :, 1 : need + 1]  # (b, m, need), self dropped
        for j, d in enumerate(dist):
            row = b0 + j
            out[row] = est.fit(X[idx[j]]).dimension_ if (d[:, 0] <= 0).any() else est.fit_distances(d).dimension_
    return out


def _resolve_k(est) -> int:
    """k, or the same value as n_neighbors (default 20, the paper's K); conflicting values are refused,
    and so is K, which in scikit-dimension means another thing."""
    if getattr(est, "K", None) is not None:
        raise ValueError(
            "K is scikit-dimension's neighbourhood size for neighborhood_based=False, which its default ignores "
            "(it uses fit(X, n_neighbors=20)); tmcheck's neighbours per point are k= (or n_neighbors=)"
        )
    given = {n: getattr(est, n) for n in ("k", "n_neighbors") if getattr(est, n, None) is not None}
    values = set(given.values())
    if len(values) > 1:
        raise ValueError(f"conflicting neighbour counts {given}: give one of k, n_neighbors, K")
    k = values.pop() if values else DEFAULT_K
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise ValueError(f"k must be an integer, got {k!r}")
    return int(k)


class IDEstimator(BaseEstimator):
    """Shared fit: check the points, apply the duplicate policy, run the kNN engine once."""

    def __sklearn_tags__(self):
        from sklearn.utils import TransformerTags

        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.non_deterministic = False
        tags.transformer_tags = TransformerTags()  # transform exists (scikit-dimension's: it returns the ID)
        return tags

    def _n_neighbors_needed(self) -> int:
        raise NotImplementedError

    def fit(self, X, y=None, smooth: bool = False):
        """Estimate the ID of the rows of X (N, D); y is ignored. Returns self. ``smooth`` also sets
        ``dimension_pw_smooth_`` (each point's value averaged with its k neighbours', as scikit-dimension)."""
        for attr in ("dimension_pw_smooth_",):
            self.__dict__.pop(attr, None)
        k = self._n_neighbors_needed()
        p = prepare(X, k, duplicates=self.duplicates, rtol=self.rtol, device=self.device)
        self.fit_distances(p.neighbors.distances)
        self.n_features_in_ = p.X.shape[1]
        self.n_duplicates_ = p.n_duplicates
        self.duplicate_rtol_ = p.rtol
        self.representative_ = p.representative
        self.neighbor_indices_ = p.neighbors.indices
        if smooth:
            self.dimension_pw_smooth_ = _smoothed(self.dimension_pw_, self.neighbor_indices_)
        return self

    # scikit-dimension's interface, with its meanings (tests/empirics/test_id_skdim_meaning.py checks
    # each against the installed scikit-dimension). A "local" estimator (MLE) has pointwise values from
    # one fit; a "global" one (TwoNN, GRIDE) gets them by refitting in every point's neighbourhood.
    POINTWISE = "global"

    def fit_transform(self, X, y=None, **fit_params):
        """Fit and return the ID (a float), as scikit-dimension does."""
        return self.fit(X, **fit_params).dimension_

    def transform(self, X=None):
        """The ID of the last fit (X, when given, must have the fitted width), as scikit-dimension."""
        from sklearn.utils.validation import check_array

        check_is_fitted(self, "dimension_")
        if X is not None:
            X = check_array(X)
            if X.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                    f"{self.n_features_in_} features as input."
                )
        return self.dimension_

    def fit_pw(self, X, y=None, smooth: bool = False, n_neighbors: int = 100, precomputed_knn=None, n_jobs=None):
        """Pointwise IDs in ``dimension_pw_``: scikit-dimension's ``fit_pw`` of a global estimator, the
        estimator refitted on each point's ``n_neighbors`` nearest neighbours (the point itself not among
        them); ``smooth`` adds ``dimension_pw_smooth_``, each point's value averaged with its neighbours'.
        A local estimator (MLE) has its pointwise values from one fit with its own k instead."""
        if precomputed_knn is not None:
            raise ValueError("precomputed_knn: tmcheck finds the exact neighbours itself; leave it out")
        if self.POINTWISE == "local":
            return self.fit(X, smooth=smooth)
        X = np.asarray(X)
        if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, (int, np.integer)) or n_neighbors < 3:
            raise ValueError(f"n_neighbors must be an integer >= 3, got {n_neighbors!r}")
        if X.ndim != 2 or len(X) <= n_neighbors:
            raise ValueError(f"fit_pw needs more than n_neighbors = {n_neighbors} rows, got shape {np.shape(X)}")
        self.fit(X)
        X = np.asarray(X, dtype=np.float64)
        nbrs = kneighbors(X, n_neighbors, device=self.device).indices
        local = clone(self)
        if "bootstrap" in local.get_params():
            local.set_params(bootstrap=0)
        self.dimension_pw_ = _refit_in_neighbourhoods(local, X, nbrs)
        if smooth:
            self.dimension_pw_smooth_ = _smoothed(self.dimension_pw_, nbrs)
        return self

    def transform_pw(self, X=None):
        """The pointwise IDs of the last fit_pw (and the smoothed ones when it was smooth)."""
        check_is_fitted(self, "dimension_pw_")
        smooth = getattr(self, "dimension_pw_smooth_", None)
        return self.dimension_pw_ if smooth is None else (self.dimension_pw_, smooth)

    def fit_transform_pw(self, X, y=None, smooth: bool = False, n_neighbors: int = 100, **kw):
        """fit_pw, then transform_pw."""
        if self.POINTWISE == "local":
            self.fit(X, smooth=smooth, **({"n_neighbors": kw["n_neighbors"]} if "n_neighbors" in kw else {}))
        else:
            self.fit_pw(X, smooth=smooth, n_neighbors=n_neighbors, **kw)
        return self.transform_pw()

    def _rng(self):
        return np.random.default_rng(self.seed)

    def _check_common(self) -> None:
        if isinstance(self.bootstrap, bool) or not isinstance(self.bootstrap, (int, np.integer)) or self.bootstrap < 0:
            raise ValueError(f"bootstrap must be an integer >= 0, got {self.bootstrap!r}")
        if not 0 < self.ci_level < 1:
            raise ValueError(f"ci_level must be in (0, 1), got {self.ci_level}")


class MLE(IDEstimator):
    """Levina-Bickel maximum-likelihood ID from the k nearest neighbours of every point.

    k (alias n_neighbors, K): neighbours per point (default: the paper's K = 20). combine: 'inverse'
    (MacKay-Ghahramani; the paper's via skdim) or 'mean' (Levina-Bickel). bootstrap: resamples for
    a percentile interval (0: none). duplicates: 'remove' (default, warns with the count), 'keep' or
    'error'; rtol: near-duplicate tolerance relative to the points' norms (None: 16 eps of their
    dtype). device: 'auto', 'cpu', 'cuda'.
    """

    POINTWISE = "local"

    def __init__(
        self,
        k=None,
        combine="inverse",
        bootstrap=0,
        ci_level=0.95,
        duplicates="remove",
        rtol=None,
        device="auto",
        seed=None,
        n_neighbors=None,
        K=None,
    ):
        self.k = k
        self.combine = combine
        self.bootstrap = bootstrap
        self.ci_level = ci_level
        self.duplicates = duplicates
        self.rtol = rtol
        self.device = device
        self.seed = seed
        self.n_neighbors = n_neighbors
        self.K = K

    def _n_neighbors_needed(self) -> int:
        self._check_common()
        k = _resolve_k(self)
        if k < 2:
            raise ValueError(f"MLE needs k >= 2, got {k}")
        if self.combine not in COMBINATIONS:
            raise ValueError(f"combine must be one of {COMBINATIONS}, got {self.combine!r}")
        return k

    def fit(self, X, y=None, smooth: bool = False, n_neighbors=None, comb=None, n_jobs=None, **kw):
        """Fit; scikit-dimension's ``fit(X, n_neighbors=20, comb='mle', smooth=False)`` is accepted with
        its meanings (n_neighbors: k for this fit; comb: 'mle' = combine 'inverse', 'mean', 'median');
        n_jobs is ignored (the engine uses the threads torch has)."""
        if kw:
            raise TypeError(
                f"MLE.fit got {', '.join(kw)}: tmcheck takes smooth, n_neighbors and comb "
                "(precomputed kNN arrays: use fit_distances)"
            )
        n = len(X) if hasattr(X, "__len__") else 0
        k = n_neighbors if n_neighbors is not None else _resolve_k(self)
        if isinstance(k, (int, np.integer)) and not isinstance(k, bool) and 3 <= n <= k:
            warnings.warn(f"k = {k} >= the {n} points: k = {n - 1} (as scikit-dimension does)", stacklevel=2)
            n_neighbors = n - 1
        if n_neighbors is None and comb is None:
            return super().fit(X, smooth=smooth)
        if comb is not None and comb not in SKDIM_COMB:
            raise ValueError(f"comb must be one of {', '.join(SKDIM_COMB)} (scikit-dimension's), got {comb!r}")
        once = clone(self).set_params(
            k=n_neighbors if n_neighbors is not None else _resolve_k(self),
            n_neighbors=None,
            combine=SKDIM_COMB[comb] if comb is not None else self.combine,
        )
        once.fit(X, smooth=smooth)
        self.__dict__.update({a: v for a, v in vars(once).items() if a.endswith("_") and not a.startswith("_")})
        return self

    def fit_transform(self, X, y=None, comb=None, **fit_params):
        """The ID of ``fit(X, comb=...)``. scikit-dimension's MLE combines by 'mle' in fit but by 'mean'
        in fit_transform, so a call without comb would mean two things: comb is required here."""
        if comb is None:
            raise ValueError(
                "MLE.fit_transform needs comb= ('mle', 'mean' or 'median'): scikit-dimension's fit_transform "
                "defaults to 'mean', its fit to 'mle'; or use fit(X).dimension_"
            )
        return self.fit(X, comb=comb, **fit_params).dimension_

    def fit_distances(self, distances):
        """Fit from sorted kNN distances (N, >= k), self excluded."""
        k = self._n_neighbors_needed()
        self.dimension_pw_ = mle_pointwise(distances, k)
        self.dimension_ = float(_combine(self.dimension_pw_, self.combine))
        self.ci_ = None
        if self.bootstrap:
            pw = self.dimension_pw_
            blocks = bootstrap_indices(len(pw), self.bootstrap, self._rng())
            stats = np.concatenate([_combine(pw[idx], self.combine, axis=1) for idx in blocks])
            self.ci_ = _percentile_ci(stats, self.ci_level)
        self.n_used_ = len(self.dimension_pw_)
        self.n_duplicates_ = 0
        self.k_ = k
        return self


def mle_pointwise(distances, k: int) -> np.ndarray:
    """m_k(x) = (k - 1) / sum_{j<k} log(T_k / T_j) for each row of sorted distances (N, >= k)."""
    T = np.asarray(distances, dtype=np.float64)[:, :k]
    if T.shape[1] < k:
        raise ValueError(f"need {k} neighbour distances per point, got {T.shape[1]}")
    with np.errstate(divide="ignore", invalid="ignore"):
        pw = (k - 1) / np.log(T[:, -1:] / T[:, :-1]).sum(axis=1)
    pw[~np.isfinite(pw)] = 0.0  # a zero distance (kept duplicate) makes the sum infinite
    return pw


class MLECurve(IDEstimator):
    """The MLE as a function of k, all from one kNN search at max(ks).

    ``curve_`` lists {k, dimension, ci}; ``dimension_``, ``dimension_pw_`` and ``ci_`` are those at
    ``k`` (which must be one of ``ks``). A flat curve means the ID does not depend on the scale
    probed; a rising or falling one shows noise (small k) or curvature (large k).
    """

    def __init__(
        self,
        ks=(5, 10, 20, 40, 80),
        k=20,
        combine="inverse",
        bootstrap=0,
        ci_level=0.95,
        duplicates="remove",
        rtol=None,
        device="auto",
        seed=None,
    ):
        self.ks = ks
        self.k = k
        self.combine = combine
        self.bootstrap = bootstrap
        self.ci_level = ci_level
        self.duplicates = duplicates
        self.rtol = rtol
        self.device = device
        self.seed = seed

    def _ks(self) -> list[int]:
        ks = sorted({int(v) for v in np.atleast_1d(self.ks)})
        if not ks or ks[0] < 2:
            raise ValueError(f"ks must be integers >= 2, got {self.ks!r}")
        if self.k not in ks:
            raise ValueError(f"k={self.k} must be one of ks={ks}")
        return ks

    def _n_neighbors_needed(self) -> int:
        self._check_common()
        if self.combine not in COMBINATIONS:
            raise ValueError(f"combine must be one of {COMBINATIONS}, got {self.combine!r}")
        return self._ks()[-1]

    def fit_distances(self, distances):
        """Fit from sorted kNN distances (N, >= max(ks)), self excluded."""
        self._n_neighbors_needed()
        self.curve_ = []
        for k in self._ks():
            est = MLE(
                k=k, combine=self.combine, bootstrap=self.bootstrap, ci_level=self.ci_level, seed=self.seed
            ).fit_distances(distances)
            self.curve_.append({"k": k, "dimension": est.dimension_, "ci": est.ci_})
            if k == self.k:
                self.dimension_, self.dimension_pw_, self.ci_ = est.dimension_, est.dimension_pw_, est.ci_
        self.n_used_ = len(self.dimension_pw_)
        self.n_duplicates_ = 0
        return self


class TwoNN(IDEstimator):
    """TwoNN ID from the ratio of second to first neighbour distances (Facco et al. 2017).

    method: 'linear' (fit through the origin) or 'mle'. discard_fraction: the largest ratios
    dropped (linear) or censored (mle); 0.1 is the convention of dadapy and skdim.
    Other parameters as for MLE.
    """

    def __init__(
        self,
        method="linear",
        discard_fraction=0.1,
        bootstrap=0,
        ci_level=0.95,
        duplicates="remove",
        rtol=None,
        device="auto",
        seed=None,
    ):
        self.method = method
        self.discard_fraction = discard_fraction
        self.bootstrap = bootstrap
        self.ci_level = ci_level
        self.duplicates = duplicates
        self.rtol = rtol
        self.device = device
        self.seed = seed

    def _n_neighbors_needed(self) -> int:
        self._check_common()
        if self.method not in ("linear", "mle"):
            raise ValueError(f"method must be 'linear' or 'mle', got {self.method!r}")
        if not 0.0 <= self.discard_fraction < 1.0:
            raise ValueError(f"discard_fraction must be in [0, 1), got {self.discard_fraction}")
        return 2

    def _n_keep(self, n: int) -> int:
        n_keep = int(n * (1.0 - self.discard_fraction))
        if n_keep < 2:
            raise ValueError("fewer than 2 ratios left after the discard fraction")
        return n_keep

    def _estimate(self, log_mu_sorted: np.ndarray) -> np.ndarray:
        """The estimate for each row of ascending log mu (b, n)."""
        n = log_mu_sorted.shape[1]
        n_keep = self._n_keep(n)
        if self.method == "mle":
            kept = log_mu_sorted[:, :n_keep]
            return (n_keep - 1) / (kept.sum(axis=1) + (n - n_keep) * kept[:, -1])
        n_keep = min(n_keep, n - 1)  # F_emp = 1 at the largest ratio: -log(1 - F) is infinite
        x = log_mu_sorted[:, :n_keep]
        y = -np.log1p(-np.arange(1, n_keep + 1) / n)
        return (x @ y) / np.einsum("ij,ij->i", x, x)

    def _from_counts(self, x: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """``_estimate`` of each bootstrap resample of the ascending log mu x (n,), given as counts
        (b, n): the sorted resample holds x_j at ranks [C_{j-1}, C_j) (C the cumulative counts), so
        its rank sums are differences of cumulative sums and no resample is ever sorted (the
        differences carry a relative rounding error of about n eps, 7e-12 at n = 32768)."""
        n = counts.shape[1]
        n_keep = self._n_keep(n)
        x = np.broadcast_to(x, counts.shape)
        C = np.cumsum(counts, axis=1)  # (b, n)
        lo = C - counts
        if self.method == "mle":
            kept = np.minimum(C, n_keep) - np.minimum(lo, n_keep)  # copies of x_j among the first n_keep ranks
            last = np.take_along_axis(x, (C <= n_keep - 1).sum(axis=1)[:, None], 1)[:, 0]  # x at rank n_keep - 1
            return (n_keep - 1) / ((kept * x).sum(axis=1) + (n - n_keep) * last)
        n_keep = min(n_keep, n - 1)  # F_emp = 1 at the largest ratio: -log(1 - F) is infinite
        Y = np.concatenate([[0.0], np.cumsum(-np.log1p(-np.arange(1, n_keep + 1) / n))])  # Y[r] = sum of y below rank r
        hi_r, lo_r = np.minimum(C, n_keep), np.minimum(lo, n_keep)
        return (x * (Y[hi_r] - Y[lo_r])).sum(axis=1) / (x * x * (hi_r - lo_r)).sum(axis=1)

    def fit_distances(self, distances):
        """Fit from sorted kNN distances (N, >= 2), self excluded."""
        self._n_neighbors_needed()
        T = np.asarray(distances, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            mu = T[:, 1] / T[:, 0]
            pw = 1.0 / np.log(mu)
        pw[~np.isfinite(pw)] = 0.0  # T_1 = 0 (kept duplicate) or a tie T_1 = T_2
        self.dimension_pw_ = pw
        mu = mu[np.isfinite(mu)]  # a kept exact duplicate has T_1 = 0
        self.mu_ = mu
        log_sorted = np.log(np.sort(mu))
        self.dimension_ = float(self._estimate(log_sorted[None])[0])
        self.ci_ = None
        if self.bootstrap:
            stats = np.concatenate(
                [self._from_counts(log_sorted, c) for c in bootstrap_counts(len(mu), self.bootstrap, self._rng())]
            )
            self.ci_ = _percentile_ci(stats, self.ci_level)
        self.n_used_ = len(mu)
        self.n_duplicates_ = 0
        return self


class MLEScaling(IDEstimator):
    """The MLE as a function of sample size, and its extrapolation to N -> inf.

    The points are split at random into 2^j disjoint subsets of size n_j = N / 2^j for
    j = 0, 1, ... while n_j >= min_size; m(n_j) is the mean of the subset estimates (this is the
    paper's protocol at batch size n_j). ``curve_`` lists (n, m(n), standard error, subsets);
    ``dimension_`` is d in m(n) = d + c n^(-2/d) fitted by weighted least squares (d on a grid,
    c linear), ``exponent_`` is 2/d, ``ci_`` the bootstrap interval of d over subsets,
    ``bias_`` = m(N) - d, ``dimension_pw_`` the pointwise MLE on all N.
    """

    def __init__(
        self,
        k=None,
        combine="inverse",
        min_size=512,
        bootstrap=200,
        ci_level=0.95,
        duplicates="remove",
        rtol=None,
        device="auto",
        seed=None,
        n_neighbors=None,
        K=None,
    ):
        self.k = k
        self.combine = combine
        self.min_size = min_size
        self.bootstrap = bootstrap
        self.ci_level = ci_level
        self.duplicates = duplicates
        self.rtol = rtol
        self.device = device
        self.seed = seed
        self.n_neighbors = n_neighbors
        self.K = K

    def _mle(self) -> MLE:
        return MLE(k=_resolve_k(self), combine=self.combine)

    def _n_neighbors_needed(self) -> int:
        self._check_common()
        return self._mle()._n_neighbors_needed()

    def fit(self, X, y=None):
        k = self._n_neighbors_needed()
        p = prepare(X, k, duplicates=self.duplicates, rtol=self.rtol, device=self.device)
        Xu, nb = p.X, p.neighbors
        mle = self._mle()
        rng = self._rng()
        n = len(Xu)
        self.dimension_pw_ = mle.fit_distances(nb.distances).dimension_pw_
        levels = [[mle.dimension_]]
        sizes = [n]
        while sizes[-1] // 2 >= max(self.min_size, 2 * k):
            size = sizes[-1] // 2
            perm = rng.permutation(n)
            batches = [perm[i * size : (i + 1) * size] for i in range(n // size)]
            levels.append(
                [mle.fit_distances(kneighbors(Xu[b], k, device=self.device).distances).dimension_ for b in batches]
            )
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
        self.n_duplicates_ = p.n_duplicates
        self.duplicate_rtol_ = p.rtol
        self.n_features_in_ = Xu.shape[1]
        self.representative_ = p.representative
        self.neighbor_indices_ = nb.indices
        if len(levels) < 3:
            raise ValueError(f"need at least 3 sizes >= min_size={self.min_size} to extrapolate; N={n} is too small")
        sizes = np.array(sizes, dtype=np.float64)
        self.dimension_, self.exponent_ = _extrapolate(sizes, means, se)
        self.bias_ = float(means[0] - self.dimension_)
        self.ci_ = None
        if self.bootstrap:
            boot = []
            for _ in range(self.bootstrap):
                m = np.array(
                    [
                        np.mean(np.asarray(v)[rng.integers(0, len(v), len(v))])
                        if len(v) > 1
                        else v[0] + rng.normal(0.0, se[0])
                        for v in levels
                    ]
                )
                boot.append(_extrapolate(sizes, m, se)[0])
            self.ci_ = _percentile_ci(np.array(boot), self.ci_level)
        return self


def _extrapolate(n: np.ndarray, m: np.ndarray, se: np.ndarray) -> tuple[float, float]:
    """Weighted least squares for m(n) = d + c n^(-2/d): d on a fine grid, c in closed form.
    Returns (d, 2/d). (A free exponent fits the S^16 curve better but is unstable with five or six
    sizes: on S^10 at N = 4096 it extrapolated to 13.3.)"""
    w = 1.0 / np.maximum(se, 1e-12) ** 2
    d = np.linspace(0.5 * m.min(), 4.0 * m.max(), 4000)[:, None]  # (G, 1)
    z = n[None, :] ** (-2.0 / d)  # (G, L)
    c = np.sum(w * z * (m - d), axis=1, keepdims=True) / np.sum(w * z * z, axis=1, keepdims=True)
    ssr = np.sum(w * (m - d - c * z) ** 2, axis=1)
    best = float(d[int(np.argmin(ssr)), 0])
    return best, 2.0 / best
