"""GRIDE, the generalized ratio ID estimator (Denti, Doimo, Laio & Mira 2022, Sci. Rep. 12:20005),
multiscale, with its likelihood interval (paper Section 5: the ID is measured at one scale, K = 20;
GRIDE shows how it moves with the scale).

For each point mu = T_{n2} / T_{n1} (n1 < n2 neighbour orders). Under local homogeneity mu has density

    f(mu | d) = d (mu^d - 1)^(n2 - n1 - 1) / (B(n2 - n1, n1) mu^((n2 - 1) d + 1)),   mu > 1,

so the log-likelihood of N ratios is, following dadapy (``compute_id_gride`` /
``return_id_scaling_gride``), which uses (N - 1) log d so that n1 = 1, n2 = 2 gives the unbiased
TwoNN MLE (N - 1) / sum log mu:

    l(d) = (N - 1) log d + (n2 - n1 - 1) sum log(mu^d - 1) - ((n2 - 1) d + 1) sum log mu + const.

l is concave in d, so the score has one root, found by Brent's method to 1e-14 (dadapy bisects to
1e-7). Ratios above q50 + 20 (q95 - q50) are dropped as likely overlapping points (dadapy's rule);
ties mu = 1 are dropped and counted (dadapy nudges them by 10 eps). ``error_`` is 1 / sqrt(observed
Fisher information), dadapy's and skdim's error; ``ci_`` is the likelihood-ratio interval
{d : 2 (l(d_hat) - l(d)) <= chi2_1(ci_level)}, whose coverage is ci_level asymptotically for
independent ratios (neighbourhoods overlap, so it is somewhat narrow, like every interval here).

``multiscale=True`` adds the estimates at n1 = 1, 2, 4, ... with n2 = 2 n1 <= range_max (dadapy's
scales), all from one kNN search, with ``radius_scales_`` the mean of the n1-th and n2-th neighbour
distances (dadapy's ``rs``).

``GRIDEFit`` computes it; ``estimators.GRIDE`` is the scikit-learn estimator. scipy's root finder and
chi2 are imported when a fit runs, so importing this module costs neither.
"""

from __future__ import annotations

import numpy as np

from tmcheck.empirics.id.core import IDFit, fit_init
from tmcheck.empirics.id.registry import Estimator


def _log_ratios(distances: np.ndarray, n1: int, n2: int) -> tuple[np.ndarray, int]:
    """log mu per point after dadapy's outlier cut; and the count of ties/zero distances dropped."""
    T = np.asarray(distances, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_mu = np.log(T[:, n2 - 1] / T[:, n1 - 1])
    ok = np.isfinite(log_mu) & (log_mu > 0)
    log_mu = log_mu[ok]
    mu = np.exp(log_mu)
    q95, q50 = np.percentile(mu, [95, 50])
    return log_mu[mu < 20 * (q95 - q50) + q50], int(np.sum(~ok))


def _loglik(d: float, log_mu: np.ndarray, n1: int, n2: int) -> float:
    """l(d) without its constant; log(mu^d - 1) = d log mu + log(-expm1(-d log mu)) avoids overflow."""
    n = len(log_mu)
    s = float(np.sum(log_mu))
    return (
        (n - 1) * np.log(d)
        + (n2 - n1 - 1) * (d * s + float(np.sum(np.log(-np.expm1(-d * log_mu)))))
        - ((n2 - 1) * d + 1) * s
    )


def _score(d: float, log_mu: np.ndarray, n1: int, n2: int) -> float:
    # mu^d / (mu^d - 1) = 1 / (1 - exp(-d log mu))
    n = len(log_mu)
    return (
        (n - 1) / d + (n2 - n1 - 1) * float(np.sum(log_mu / -np.expm1(-d * log_mu))) - (n2 - 1) * float(np.sum(log_mu))
    )


def gride_fit(distances, n1: int, n2: int, ci_level: float = 0.95) -> dict:
    """{dimension, error, ci, n_used, n_dropped} of GRIDE at (n1, n2) from sorted kNN distances."""
    from scipy.optimize import brentq
    from scipy.stats import chi2

    log_mu, dropped = _log_ratios(distances, n1, n2)
    if len(log_mu) < 2:
        raise ValueError(f"GRIDE (n1={n1}, n2={n2}): fewer than 2 ratios left")
    # score -> +inf as d -> 0 and -> -n1 sum log mu < 0 as d -> inf: bracket the one root
    lo, hi = 1e-8, 1.0
    while _score(hi, log_mu, n1, n2) > 0:
        lo, hi = hi, 2 * hi
    d = brentq(_score, lo, hi, args=(log_mu, n1, n2), xtol=1e-14, rtol=4 * np.finfo(float).eps)
    # observed information; mu^d / (mu^d - 1)^2 = 1 / (4 sinh^2(d log mu / 2)); N / d^2 as dadapy
    info = len(log_mu) / d**2 + (n2 - n1 - 1) * float(np.sum((log_mu / (2 * np.sinh(d * log_mu / 2))) ** 2))
    top = _loglik(d, log_mu, n1, n2)
    cut = chi2.ppf(ci_level, 1) / 2
    gap = lambda x: top - _loglik(x, log_mu, n1, n2) - cut  # noqa: E731  (< 0 inside the interval)
    a = d / 2
    while gap(a) < 0:
        a /= 2
    b = 2 * d
    while gap(b) < 0:
        b *= 2
    ci = (float(brentq(gap, a, d, xtol=1e-12)), float(brentq(gap, d, b, xtol=1e-12)))
    return {
        "dimension": float(d),
        "error": float(1 / np.sqrt(info)),
        "ci": ci,
        "n_used": len(log_mu),
        "n_dropped": dropped,
    }


class GRIDEFit(IDFit):
    """The arithmetic of ``estimators.GRIDE`` (parameters and attributes there)."""

    __init__ = fit_init({"n1": 1, "n2": None, "multiscale": False, "range_max": 64}, drop=("bootstrap", "seed"))

    def _orders(self) -> tuple[int, int]:
        n2 = 2 * self.n1 if self.n2 is None else self.n2
        ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (self.n1, n2))
        if not (ints and 1 <= self.n1 < n2):
            raise ValueError(f"n1 and n2 must be integers with 1 <= n1 < n2, got n1={self.n1!r}, n2={n2!r}")
        if not 0 < self.ci_level < 1:
            raise ValueError(f"ci_level must be in (0, 1), got {self.ci_level}")
        return int(self.n1), int(n2)

    def _scales(self) -> np.ndarray:
        if not (isinstance(self.range_max, (int, np.integer)) and self.range_max >= 2):
            raise ValueError(f"range_max must be an integer >= 2, got {self.range_max!r}")
        return 2 ** np.arange(int(np.log2(self.range_max)))

    def _n_neighbors_needed(self) -> int:
        n2 = self._orders()[1]
        return max(n2, int(2 * self._scales()[-1])) if self.multiscale else n2

    def fit_distances(self, distances):
        """Fit from sorted kNN distances (N, >= n2, or >= range_max with multiscale), self excluded."""
        n1, n2 = self._orders()
        T = np.asarray(distances, dtype=np.float64)
        res = gride_fit(T, n1, n2, self.ci_level)
        self.dimension_, self.error_, self.ci_ = res["dimension"], res["error"], res["ci"]
        self.n_used_, self.n_ties_ = res["n_used"], res["n_dropped"]
        if n1 == 1 and n2 == 2:
            with np.errstate(divide="ignore"):
                pw = 1.0 / np.log(T[:, 1] / T[:, 0])
            pw[~np.isfinite(pw)] = 0.0
        else:
            pw = np.full(len(T), self.dimension_)
        self.dimension_pw_ = pw
        if self.multiscale:
            scales = self._scales()
            scales = scales[2 * scales <= T.shape[1]]
            fits = [gride_fit(T, int(s), int(2 * s), self.ci_level) for s in scales]
            self.scales_ = scales
            self.dimension_scales_ = np.array([f["dimension"] for f in fits])
            self.error_scales_ = np.array([f["error"] for f in fits])
            self.ci_scales_ = [f["ci"] for f in fits]
            self.radius_scales_ = np.array([(T[:, s - 1].mean() + T[:, 2 * s - 1].mean()) / 2 for s in scales])
        self.n_duplicates_ = 0
        return self


def _gride_details(est) -> dict:
    scales = zip(est.scales_, est.dimension_scales_, est.error_scales_, est.ci_scales_, est.radius_scales_, strict=True)
    return {
        "error": est.error_,
        "scales": [
            {
                "n1": int(s),
                "n2": int(2 * s),
                "dimension": float(d),
                "error": float(e),
                "ci": list(c),
                "radius": float(r),
            }
            for s, d, e, c, r in scales
        ],
    }


# the estimators of this module (``registry.Estimator``; ``protocol.ESTIMATORS`` gathers them)
ESTIMATORS = (
    Estimator(
        "gride",
        GRIDEFit,
        "GRIDE",
        "GRIDE (Denti et al. 2022), n1=1, n2=2, likelihood-ratio interval; scales n1 = 1..32",
        fixed={"multiscale": True},
        details=_gride_details,
        interval=lambda est: "likelihood ratio (chi2_1)",
    ),
)
