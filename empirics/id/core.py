"""The intrinsic-dimension estimators' arithmetic, without scikit-learn (paper Section 5, "Estimating the ID").

``estimators`` gives each of these classes scikit-learn's interface (``BaseEstimator``: ``get_params``,
``clone``, tags) and scikit-dimension's spellings; this module holds everything an estimate computes,
and imports neither scikit-learn nor scipy.stats, which are the slowest imports after torch (the
speed page has the whole-process figure). ``estimate_id`` and ``tmcheck id estimate`` fit these
classes, so a command that only estimates never imports scikit-learn; ``estimators.MLE`` and the rest subclass
them and add nothing to what they compute (tests/empirics/id/test_lazy_imports.py checks both the
imports and that the two give the same numbers). The methods and their intervals are described in
``estimators``.
"""

from __future__ import annotations

import warnings

import numpy as np

from tmcheck.empirics.id.knn import kneighbors
from tmcheck.empirics.id.points import prepare
from tmcheck.empirics.id.registry import PEER_REFUSED, Estimator

COMBINATIONS = ("inverse", "mean", "median")
# scikit-dimension's comb= values, by meaning
SKDIM_COMB = {"mle": "inverse", "mean": "mean", "median": "median"}
DEFAULT_K = 20  # the paper's K
_BOOT_CELLS = 1 << 17  # resampled values held at once by the vectorised bootstrap (cache-sized blocks)


def percentile_ci(samples: np.ndarray, level: float) -> tuple[float, float]:
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


def combine_values(pw: np.ndarray, combine: str, axis=None):
    """Mean ('mean'), median ('median') or inverse mean of inverses ('inverse') of pointwise values."""
    if combine == "mean":
        return np.mean(pw, axis=axis)
    if combine == "median":
        return np.median(pw, axis=axis)
    with np.errstate(divide="ignore"):
        return 1.0 / np.mean(1.0 / pw, axis=axis)


def smoothed(pw: np.ndarray, neighbors: np.ndarray) -> np.ndarray:
    """Each point's value averaged with its neighbours' (scikit-dimension's ``smooth``)."""
    return (pw + pw[neighbors].sum(axis=1)) / (1 + neighbors.shape[1])


def store_params(est, params: dict) -> None:
    """scikit-learn's ``__init__``: each parameter stored as given, under its own name (``params`` is the
    ``__init__``'s ``locals()``, whose signature lists the parameters; scikit-learn reads them there)."""
    for name, value in params.items():
        if name != "self":
            setattr(est, name, value)


# The parameters every fit class ends with, in this order (a class may drop some or change a default).
FIT_TAIL = {"bootstrap": 0, "ci_level": 0.95, "duplicates": "remove", "rtol": None, "device": "auto", "seed": None}


def fit_init(lead: dict, *, after: dict | None = None, drop: tuple[str, ...] = (), **tail):
    """A scikit-learn ``__init__`` for a fit class: its parameters are ``lead``, then ``FIT_TAIL`` (less
    ``drop``, defaults overridden by ``tail``), then ``after``, each stored as given (``store_params``).

    scikit-learn reads an estimator's parameters from ``inspect.signature(cls.__init__)``; the function
    made here carries that signature as ``__signature__``, so ``get_params``, ``clone`` and help see
    the parameters by name, and a call binds positional and keyword arguments as a written-out
    ``__init__`` would (an unknown name is a TypeError)."""
    import inspect

    unknown = (set(tail) | set(drop)) - set(FIT_TAIL)
    if unknown:
        raise TypeError(f"fit_init: {sorted(unknown)} are not in FIT_TAIL")
    ends = {n: tail.get(n, v) for n, v in FIT_TAIL.items() if n not in drop}
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    sig = inspect.Signature(
        [inspect.Parameter("self", kind)]
        + [inspect.Parameter(n, kind, default=v) for n, v in {**lead, **ends, **(after or {})}.items()]
    )

    def __init__(self, *args, **kwargs):  # noqa: N807  (made here, bound as a class's __init__)
        bound = sig.bind(self, *args, **kwargs)
        bound.apply_defaults()
        store_params(self, bound.arguments)

    __init__.__signature__ = sig
    return __init__


def lowered_k(k, n: int) -> int | None:
    """N - 1 where 3 <= N <= k points cannot hold k neighbours each (scikit-dimension lowers k so), with
    its warning to the caller of the estimator's fit; None where k stands."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 3 <= n <= k:
        return None
    warnings.warn(f"k = {k} >= the {n} points: k = {n - 1} (as scikit-dimension does)", stacklevel=3)
    return n - 1


def n_rows(X) -> int:
    """The rows of X, before it is checked (0 for what has no length: the check refuses it)."""
    return len(X) if hasattr(X, "__len__") else 0


def resolve_k(est) -> int:
    """k, or the same value as n_neighbors (default 20, the paper's K); conflicting values are refused,
    and so is K, which in scikit-dimension means another thing."""
    if getattr(est, "K", None) is not None:
        raise ValueError(PEER_REFUSED["K"])
    given = {n: getattr(est, n) for n in ("k", "n_neighbors") if getattr(est, n, None) is not None}
    values = set(given.values())
    if len(values) > 1:
        raise ValueError(f"conflicting neighbour counts {given}: give one of k, n_neighbors, K")
    k = values.pop() if values else DEFAULT_K
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise ValueError(f"k must be an integer, got {k!r}")
    return int(k)


class IDFit:
    """Shared fit: check the points, apply the duplicate policy, run the kNN engine once, then
    ``fit_distances``. ``__init__`` only stores parameters; learned state ends in ``_``."""

    def _n_neighbors_needed(self) -> int:
        raise NotImplementedError

    def fit(self, X, y=None, smooth: bool = False):
        """Estimate the ID of the rows of X (N, D); y is ignored. Returns self. ``smooth`` also sets
        ``dimension_pw_smooth_`` (each point's value averaged with its k neighbours', as scikit-dimension)."""
        for attr in ("dimension_pw_smooth_",):
            self.__dict__.pop(attr, None)
        k = self._n_neighbors_needed()
        p = prepare(X, k, duplicates=self.duplicates, rtol=self.rtol, device=self.device)
        self.fit_neighbors(p.X, p.neighbors)
        self.n_features_in_ = p.X.shape[1]
        self.n_duplicates_ = p.n_duplicates
        self.duplicate_rtol_ = p.rtol
        self.representative_ = p.representative
        self.neighbor_indices_ = p.neighbors.indices
        if smooth:
            self.dimension_pw_smooth_ = smoothed(self.dimension_pw_, self.neighbor_indices_)
        return self

    def fit_neighbors(self, X: np.ndarray, neighbors) -> IDFit:
        """Fit from the points after the duplicate policy and their exact kNN; the estimators that read
        only the distances (all but those that need the neighbours' coordinates) use fit_distances."""
        return self.fit_distances(neighbors.distances)

    def _rng(self):
        return np.random.default_rng(self.seed)

    def _combine_pointwise(self, pw: np.ndarray, combine: str, k: int):
        """Set dimension_ (the pointwise values ``pw`` combined), ci_ (a percentile bootstrap over points)
        and the counts: the end of a local estimator's fit (MLE's, MOM's, TLE's)."""
        self.dimension_pw_ = pw
        self.dimension_ = float(combine_values(pw, combine))
        self.ci_ = None
        if self.bootstrap:
            blocks = bootstrap_indices(len(pw), self.bootstrap, self._rng())
            stats = np.concatenate([combine_values(pw[idx], combine, axis=1) for idx in blocks])
            self.ci_ = percentile_ci(stats, self.ci_level)
        self.n_used_ = len(pw)
        self.n_duplicates_ = 0
        self.k_ = k
        return self

    def _check_common(self) -> None:
        if isinstance(self.bootstrap, bool) or not isinstance(self.bootstrap, (int, np.integer)) or self.bootstrap < 0:
            raise ValueError(f"bootstrap must be an integer >= 0, got {self.bootstrap!r}")
        if not 0 < self.ci_level < 1:
            raise ValueError(f"ci_level must be in (0, 1), got {self.ci_level}")


# why kept: the fit classes' signatures share the bootstrap ... seed tail: scikit-learn reads each __init__'s own
class MLEFit(IDFit):
    """The arithmetic of ``estimators.MLE`` (parameters there)."""

    # combine None: 'inverse' (estimators.MLE.fit_transform: 'mean', scikit-dimension's)
    __init__ = fit_init({"k": None, "combine": None}, after={"n_neighbors": None, "K": None})

    def _n_neighbors_needed(self) -> int:
        self._check_common()
        k = resolve_k(self)
        if k < 2:
            raise ValueError(f"MLE needs k >= 2, got {k}")
        if self.combine is not None and self.combine not in COMBINATIONS:
            raise ValueError(f"combine must be one of {COMBINATIONS} or None ('inverse'), got {self.combine!r}")
        return k

    def fit_distances(self, distances):
        """Fit from sorted kNN distances (N, >= k), self excluded."""
        k = self._n_neighbors_needed()
        return self._combine_pointwise(mle_pointwise(distances, k), self.combine or "inverse", k)


def mle_pointwise(distances, k: int) -> np.ndarray:
    """m_k(x) = (k - 1) / sum_{j<k} log(T_k / T_j) for each row of sorted distances (N, >= k)."""
    T = np.asarray(distances, dtype=np.float64)[:, :k]
    if T.shape[1] < k:
        raise ValueError(f"need {k} neighbour distances per point, got {T.shape[1]}")
    with np.errstate(divide="ignore", invalid="ignore"):
        pw = (k - 1) / np.log(T[:, -1:] / T[:, :-1]).sum(axis=1)
    pw[~np.isfinite(pw)] = 0.0  # a zero distance (kept duplicate) makes the sum infinite
    return pw


class MLECurveFit(IDFit):
    """The arithmetic of ``estimators.MLECurve`` (parameters there)."""

    __init__ = fit_init({"ks": (5, 10, 20, 40, 80), "k": 20, "combine": "inverse"})

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
            est = MLEFit(
                k=k, combine=self.combine, bootstrap=self.bootstrap, ci_level=self.ci_level, seed=self.seed
            ).fit_distances(distances)
            self.curve_.append({"k": k, "dimension": est.dimension_, "ci": est.ci_})
            if k == self.k:
                self.dimension_, self.dimension_pw_, self.ci_ = est.dimension_, est.dimension_pw_, est.ci_
        self.n_used_ = len(self.dimension_pw_)
        self.n_duplicates_ = 0
        return self


class TwoNNFit(IDFit):
    """The arithmetic of ``estimators.TwoNN`` (parameters there)."""

    __init__ = fit_init({"method": "linear", "discard_fraction": 0.1})

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
            self.ci_ = percentile_ci(stats, self.ci_level)
        self.n_used_ = len(mu)
        self.n_duplicates_ = 0
        return self


class MLEScalingFit(IDFit):
    """The arithmetic of ``estimators.MLEScaling`` (parameters there)."""

    # seed 0: the subsets are drawn at random, and a fixed default makes a fit repeatable
    __init__ = fit_init(
        {"k": None, "combine": "inverse", "min_size": 512},
        bootstrap=200,
        seed=0,
        after={"n_neighbors": None, "K": None},
    )

    def _mle(self) -> MLEFit:
        return MLEFit(k=resolve_k(self), combine=self.combine)

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
        while sizes[-1] // 2 >= max(self.min_size, k + 1):  # a subset must hold more than k neighbours
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
            for s, m, e, v in zip(sizes, means, se, levels, strict=True)
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
            self.ci_ = percentile_ci(np.array(boot), self.ci_level)
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


def _curve(est) -> dict:
    return {"curve": est.curve_}


def _scaling_details(est) -> dict:
    return {"curve": est.curve_, "bias_at_N": est.bias_, "exponent": est.exponent_}


def _scaling_interval(est) -> str:
    if est.ci_ is None:
        return "none"
    return f"percentile bootstrap of the extrapolation over subsets, {est.bootstrap} resamples"


# the estimators of this module (``registry.Estimator``; ``protocol.ESTIMATORS`` gathers them)
ESTIMATORS = (
    Estimator(
        "mle",
        MLEFit,
        "MLE",
        "Levina-Bickel MLE, MacKay-Ghahramani inverse mean (skdim default; the paper's)",
        fixed={"combine": "inverse"},
        help="mle (MacKay-Ghahramani inverse mean; the paper's)",
    ),
    Estimator(
        "mle-mean",
        MLEFit,
        "MLE",
        "Levina-Bickel MLE, mean of pointwise estimates",
        fixed={"combine": "mean"},
    ),
    Estimator(
        "mle-curve",
        MLECurveFit,
        "MLECurve",
        "MLE at k = 5, 10, 20, 40, 80 from one kNN search (dimension at k)",
        details=_curve,
    ),
    Estimator(
        "twonn",
        TwoNNFit,
        "TwoNN",
        "TwoNN, linear fit through the origin, 10% discarded",
        fixed={"method": "linear"},
    ),
    Estimator(
        "twonn-mle",
        TwoNNFit,
        "TwoNN",
        "TwoNN maximum likelihood, 10% censored",
        fixed={"method": "mle"},
    ),
    Estimator(
        "scaling",
        MLEScalingFit,
        "MLEScaling",
        "MLE on subsets N, N/2, ..., extrapolated to N -> inf",
        details=_scaling_details,
        interval=_scaling_interval,
    ),
)
