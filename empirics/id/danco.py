"""DANCo, dimensionality from angle and norm concentration (Ceruti et al. 2014), and its MIND_ML parts
(Rozza et al. 2012), on the exact kNN engine (paper Section 5, "Estimating the ID of text"), equal to
scikit-dimension 0.5.0's ``DANCo`` on the same points and seed where scikit-dimension is right
(tests/empirics/id/test_danco.py).

With T_1 and T_{k+1} a point's first and (k+1)-th neighbour distances, rho = T_1 / T_{k+1} has, in
dimension d, the density k d rho^(d-1) (1 - rho^d)^(k-1), so

    l(d) = N log(k d) + (d - 1) sum log rho + (k - 1) sum log(1 - rho^d)

is the log-likelihood of d. MIND_MLi is its argmax over d = 1 .. D, MIND_MLk its maximum over [0, D]
(L-BFGS-B from MIND_MLi, with the gradient). The angles between the vectors to each point's k nearest
neighbours concentrate with d too: each point's angles are fitted by a von Mises law (mean nu,
concentration tau from the mean resultant length eta by the approximation of Best and Fisher).
DANCo compares (MIND_MLk, mean nu, mean tau) of the data with the same statistics of N uniform
points in the unit d-ball for d = 1 .. D (the calibration, drawn from
``numpy.random.RandomState(seed)`` in order d = 1, 2, ...) by the Kullback-Leibler divergence of the
two laws of rho (a sum over binomial coefficients and digammas) plus that of the two von Mises laws;
the ID is the d of least divergence, or, with ``fractal``, the minimum of its interpolating spline
(cubic above 3 features, as scikit-dimension), found by L-BFGS-B from there with tolerance 1e-3.

**Where scikit-dimension is wrong.** Its calibration calls the statistics of each d-ball with k in
the place of the maximal dimension (the R original, intrinsicDimension, passes 2 d + 5 there), so
MIND_MLk of every calibration ball is bounded by k: above about d = k the calibration no longer
grows with d. ``skdim_calibration=True`` reproduces that for comparison; the default bounds by
2 d + 5 (the two agree while every calibration MIND_MLk stays below both bounds' reach, which the
test shows, and differ on data of dimension near k and above).

A global estimator: ``dimension_pw_`` holds the global value for every point. Its bootstrap resamples
points' (rho, nu, tau) as MLE's does and recomputes the estimate against the same calibration. k
defaults to 10 and D to the number of features; the seed to 0, so that a fit is repeatable.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from tmcheck.empirics.id.core import IDFit, bootstrap_indices, fit_init, n_rows, percentile_ci
from tmcheck.empirics.id.knn import kneighbors
from tmcheck.empirics.id.registry import Estimator

VERSIONS = ("DANCo", "MIND_MLi", "MIND_MLk")


def log_likelihood(d, rho: np.ndarray, k: int) -> float:
    """l(d) of the ratios rho at neighbourhood k."""
    return len(rho) * np.log(k * d) + (d - 1) * np.sum(np.log(rho)) + (k - 1) * np.sum(np.log(1 - rho**d))


def mind_mli(rho: np.ndarray, k: int, D: int) -> int:
    """The d of 1 .. D with the largest likelihood."""
    return int(np.argmax([log_likelihood(d, rho, k) for d in range(1, D + 1)])) + 1


def mind_mlk(rho: np.ndarray, k: int, D: int, start: int) -> float:
    """The maximum-likelihood d in [0, D], by L-BFGS-B from ``start`` with the analytic gradient."""
    from scipy.optimize import minimize

    log_rho, n = np.log(rho), len(rho)

    def nll(x):  # at d = 0 the likelihood is 0: a large value with the gradient's sign of d -> 0+
        d = x[0]
        if d == 0:
            return 1e30
        return -log_likelihood(d, rho, k)

    def grad(x):
        d = x[0]
        if d == 0:
            return np.array([-1e30])
        rd = rho**d
        return np.array([-(n / d + np.sum(log_rho - (k - 1) * rd * log_rho / (1 - rd)))])

    return float(minimize(nll, np.array([float(start)]), jac=grad, method="L-BFGS-B", bounds=[(0, D)]).x[0])


def a_inverse(eta: np.ndarray) -> np.ndarray:
    """The von Mises concentration tau with A(tau) = I1(tau) / I0(tau) = eta (Best and Fisher 1981)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(
            eta < 0.53,
            2 * eta + eta**3 + 5 * eta**5 / 6,
            np.where(eta < 0.85, -0.4 + 1.39 * eta + 0.43 / (1 - eta), 1 / (eta**3 - 4 * eta**2 + 3 * eta)),
        )


def von_mises_fits(X: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(nu, tau) of each point: the von Mises fit of the angles between the vectors to its neighbours
    X[indices] (N, k), every pair once, in blocks of points."""
    N, k = indices.shape
    iu = np.triu_indices(k, 1)
    nu, tau = np.empty(N), np.empty(N)
    block = max(1, (1 << 22) // (k * max(k, X.shape[1])))
    for b0 in range(0, N, block):
        V = X[indices[b0 : b0 + block]] - X[b0 : b0 + block, None, :]  # (b, k, D) vectors to the neighbours
        lens = np.sqrt(np.sum(V**2, axis=2))
        G = np.sum(V[:, iu[0]] * V[:, iu[1]], axis=2)  # (b, k(k-1)/2) scalar products
        cos = np.minimum(G / (lens[:, iu[0]] * lens[:, iu[1]]), 1.0)  # rounding can pass 1
        with np.errstate(invalid="ignore"):
            theta = np.arccos(cos)
        s, c = np.sin(theta), np.cos(theta)
        nu[b0 : b0 + block] = np.arctan(s.sum(axis=1) / c.sum(axis=1))
        tau[b0 : b0 + block] = a_inverse(np.sqrt(c.mean(axis=1) ** 2 + s.mean(axis=1) ** 2))
    return nu, tau


def kl_divergence(data: dict, cal: dict, k: int) -> float:
    """KL divergence of the data's statistics (dhat, mu_nu, mu_tau) from a calibration ball's: the laws
    of rho at dimensions dhat and dcal, plus the two von Mises laws."""
    from scipy.special import digamma, i0, i1

    big = np.finfo(np.float64).max
    quo = cal["dhat"] / data["dhat"]
    i = np.arange(k + 1)
    binom = np.array([math.comb(k, j) for j in i], dtype=np.float64)
    kl_d = (
        np.sum(1.0 / np.arange(1, k + 1)) * quo
        - np.log(quo)
        - (k - 1) * np.sum((-1.0) ** i * binom * digamma(1 + i / quo))
    )
    t1, t2 = data["mu_tau"], cal["mu_tau"]
    i0_1, i0_2, i1_1 = (min(big, f(t)) for f, t in ((i0, t1), (i0, t2), (i1, t1)))
    return float(kl_d + np.log(i0_2 / i0_1) + i1_1 / i0_1 * (t1 - t2 * np.cos(data["mu_nu"] - cal["mu_nu"])))


def unit_ball(n: int, d: int, rs: np.random.RandomState) -> np.ndarray:
    """n uniform points in the unit d-ball: Gaussian directions, radius P(d/2, |g|^2 / 2)^(1/d)."""
    from scipy.special import gammainc

    g = rs.normal(size=(n, d))
    ssq = np.sum(g**2, axis=1)
    return g * (gammainc(d / 2, ssq / 2) ** (1 / d) / np.sqrt(ssq))[:, None]


class DANCoFit(IDFit):
    """The arithmetic of DANCo (k, D, ver, fractal: scikit-dimension's parameters; seed: its
    random_state; skdim_calibration: its calibration bound, see the module)."""

    __init__ = fit_init(
        {"k": 10, "D": None, "ver": "DANCo", "fractal": True}, seed=0, after={"skdim_calibration": False}
    )

    def _n_neighbors_needed(self) -> int:
        self._check_common()
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)) or self.k < 2:
            raise ValueError(f"k must be an integer >= 2, got {self.k!r}")
        if self.D is not None and (isinstance(self.D, bool) or not isinstance(self.D, (int, np.integer)) or self.D < 1):
            raise ValueError(f"D must be None or an integer >= 1, got {self.D!r}")
        if self.ver not in VERSIONS:
            raise ValueError(
                f"ver must be one of {', '.join(VERSIONS)}, got {self.ver!r} (DANCoFit is not implemented)"
            )
        return int(self.k) + 1

    def fit(self, X, y=None):
        """IDFit's fit; on N <= k + 1 points k is lowered to N - 2, with a warning, and the parameter stays."""
        n = n_rows(X)
        if not 4 <= n <= self.k + 1:
            return IDFit.fit(self, X)
        given, self.k = self.k, n - 2
        warnings.warn(f"k = {given} needs more than {given + 1} points, got {n}: k = {self.k}", stacklevel=2)
        try:
            return IDFit.fit(self, X)
        finally:
            self.k = given

    def fit_distances(self, distances):
        raise ValueError("DANCo needs the neighbours' coordinates, not only their distances: use fit(X)")

    def fit_neighbors(self, X, neighbors):
        k = self._n_neighbors_needed() - 1
        X = np.asarray(X, dtype=np.float64)
        D = X.shape[1] if self.D is None else int(self.D)
        T = np.asarray(neighbors.distances, dtype=np.float64)
        rho = T[:, 0] / T[:, k]
        self.n_used_, self.k_ = len(X), k
        self.ci_ = None
        if self.ver != "DANCo":
            self.dimension_ = self._mind(rho, k, D)
            if self.bootstrap:
                idx = bootstrap_indices(len(X), self.bootstrap, self._rng())
                stats = [self._mind(rho[i], k, D) for b in idx for i in b]
                self.ci_ = percentile_ci(np.asarray(stats, dtype=np.float64), self.ci_level)
            self.dimension_pw_ = np.full(len(X), float(self.dimension_))
            return self
        nu, tau = von_mises_fits(X, neighbors.indices[:, :k])
        rs = np.random.RandomState(self.seed)
        self.calibration_ = [self._statistics(unit_ball(len(X), d, rs), k, 2 * d + 5) for d in range(1, D + 1)]
        one_feature = X.shape[1] == 1

        def estimate(i):
            data = {
                "dhat": mind_mlk(rho[i], k, D, mind_mli(rho[i], k, D)),
                "mu_nu": float(np.mean(nu[i])),
                "mu_tau": 1.0 if one_feature else float(np.mean(tau[i])),
            }
            kl = np.array([kl_divergence(data, c, k) for c in self.calibration_])
            return self._minimum(kl, X.shape[1]), kl, data

        self.dimension_, self.kl_, self.statistics_ = estimate(slice(None))
        self.kl_divergence_ = float(self.kl_[int(np.argmin(self.kl_))])
        if self.bootstrap:
            idx = bootstrap_indices(len(X), self.bootstrap, self._rng())
            stats = [estimate(i)[0] for b in idx for i in b]
            self.ci_ = percentile_ci(np.asarray(stats, dtype=np.float64), self.ci_level)
        self.dimension_pw_ = np.full(len(X), float(self.dimension_))
        return self

    def _mind(self, rho: np.ndarray, k: int, D: int) -> float:
        d = mind_mli(rho, k, D)
        return d if self.ver == "MIND_MLi" else mind_mlk(rho, k, D, d)

    def _statistics(self, ball: np.ndarray, k: int, bound: int) -> dict:
        """(dhat, mu_nu, mu_tau) of a calibration ball; dhat bounded by ``bound`` (by k with
        skdim_calibration, as scikit-dimension's call does)."""
        bound = k if self.skdim_calibration else bound
        nb = kneighbors(ball, k + 1, device=self.device)
        rho = nb.distances[:, 0] / nb.distances[:, k]
        nu, tau = von_mises_fits(ball, nb.indices[:, :k])
        return {
            "dhat": mind_mlk(rho, k, bound, mind_mli(rho, k, bound)),
            "mu_nu": float(np.mean(nu)),
            "mu_tau": 1.0 if ball.shape[1] == 1 else float(np.mean(tau)),
        }

    def _minimum(self, kl: np.ndarray, n_features: int) -> float:
        """The d of least divergence; with ``fractal`` the minimum of the spline through the divergences
        (cubic above 3 features, quadratic at 3, linear at 2; outside [1, D] it is 1 below and D + 1
        above, as scikit-dimension's interp1d fill), by L-BFGS-B from that d with tolerance 1e-3."""
        best = int(np.argmin(kl)) + 1
        if not self.fractal:
            return best
        from scipy.interpolate import make_interp_spline
        from scipy.optimize import minimize

        D = len(kl)
        grid = np.arange(1, D + 1, dtype=np.float64)
        order = 3 if n_features > 3 else n_features - 1
        if order < 1 or D <= order:
            return float(best)
        spline = make_interp_spline(grid, kl, k=order)

        def f(x):
            t = x[0]
            return 1.0 if t < 1 else float(D + 1) if t > D else float(spline(t))

        return float(minimize(f, np.array([float(best)]), method="L-BFGS-B", bounds=[(1, D + 1)], tol=1e-3).x[0])


# the estimators of this module (``registry.Estimator``; ``protocol.ESTIMATORS`` gathers them)
ESTIMATORS = (
    Estimator(
        "danco",
        DANCoFit,
        "DANCo",
        "angle and norm concentration (Ceruti et al. 2014) against uniform balls of d = 1 .. D, fractal minimum",
    ),
)
