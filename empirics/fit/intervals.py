"""Intervals for the exponent of a 1-D scaling law, batched over data sets on one design (paper Sec. 5).

A design is m rows: each row one run, its size n and the index of its size (runs of one size differ
only by seed). Three methods, each with its confidence distribution (samples) for the prediction test:

- ``profile``: the profile-likelihood interval {alpha : RSS(alpha) <= RSS_min (1 + F_{1,df}(level)/df)},
  df = m - p (Bates & Watts 1988, Sec. 6.1); exact for the loglog line, where it is the t interval.
  Its confidence distribution is T_df of the signed root of the profile.
- ``parametric``: refit data simulated from the fitted law with log-normal noise of the size the seeds
  show (pooled within-size SD of log loss); percentile interval.
- ``cluster``: resample the seeds within each size (the sizes are the design, the seeds are what is
  random); percentile interval.

Which one a report uses is decided by `tmcheck.empirics.fit.coverage`, by measured coverage at the design.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from tmcheck.empirics.fit.varpro import ALPHA_MAX, GRID, fit_batch, profile_at

METHODS = ("profile", "parametric", "cluster")
N_PARAMS = {"loglog": 2, "power": 2, "offset": 3}


def size_index(n) -> tuple[np.ndarray, np.ndarray]:
    """The distinct sizes (sorted) and each row's index into them."""
    sizes, idx = np.unique(np.asarray(n, dtype=np.float64), return_inverse=True)
    return sizes, idx.ravel()


def seed_noise(idx, Y, rss=None, n_params=None):
    """Per-seed noise of log loss: pooled within-size SD (df = m - sizes), or, without repeated seeds,
    the residual SD sqrt(rss / (m - p)). Returns (sigma (R,), source)."""
    Y = np.atleast_2d(Y)
    K, m = idx.max() + 1, Y.shape[1]
    if m > K:
        ly = np.log(Y)
        # group means by bincount: O(R m) memory, where a one-hot (m, K) matrix is 45 GB at 77,870 sizes
        counts = np.bincount(idx, minlength=K)
        means = np.stack([np.bincount(idx, weights=row, minlength=K) for row in ly]) / counts
        resid = ly - means[:, idx]
        return np.sqrt((resid * resid).sum(1) / (m - K)), "seeds"
    return np.sqrt(rss / max(m - n_params, 1)), "residuals"


def _percentile(samples, level):
    q = [(1 - level) / 2, (1 + level) / 2]
    with np.errstate(invalid="ignore"):
        lo, hi = np.nanquantile(samples, q, axis=1)
    return lo, hi


def profile_interval(logn, Y, fit, form, level):
    """Profile-likelihood bounds (R,) each; an end with no crossing inside the search range is ALPHA_MAX
    (upper) or GRID[0] (lower), and reported as open."""
    R, m = Y.shape
    df = m - N_PARAMS[form]
    if df < 1:
        nan = np.full(R, np.nan)
        return nan, nan, np.zeros(R, bool), np.zeros(R, bool)
    if form == "loglog":
        xc = logn - logn.mean()
        se = np.sqrt(fit["rss"] / df / (xc @ xc))
        t = stats.t.ppf((1 + level) / 2, df)
        return fit["alpha"] - t * se, fit["alpha"] + t * se, np.zeros(R, bool), np.zeros(R, bool)
    thr = fit["rss"] * (1 + stats.f.ppf(level, 1, df) / df)
    prof, G, a_hat = fit["profile"], len(GRID), fit["alpha"]
    above = prof > thr[:, None]
    up = above & (GRID[None, :] > a_hat[:, None])
    down = above & (GRID[None, :] < a_hat[:, None])
    open_hi, open_lo = ~up.any(1), ~down.any(1)
    j_up = np.where(open_hi, G - 1, np.argmax(up, axis=1))
    j_lo = np.where(open_lo, 0, G - 1 - np.argmax(down[:, ::-1], axis=1))
    rows = np.arange(R)
    free_E = form == "offset"

    def inner(j, side):  # the grid point before the crossing, if inside and beyond alpha-hat; else alpha-hat
        ok = (prof[rows, j] <= thr) & (side * (GRID[j] - a_hat) > 0)
        return np.where(ok, GRID[j], a_hat)

    def bisect(inside, outside):
        a, b = inside.copy(), outside.copy()
        for _ in range(36):
            mid = (a + b) / 2
            out = profile_at(logn, Y, mid, free_E)[2] > thr
            b, a = np.where(out, mid, b), np.where(out, a, mid)
        return (a + b) / 2

    hi = np.where(open_hi, ALPHA_MAX, bisect(inner(np.maximum(j_up - 1, 0), 1), GRID[j_up]))
    lo = np.where(open_lo, GRID[0], bisect(inner(np.minimum(j_lo + 1, G - 1), -1), GRID[j_lo]))
    return np.minimum(lo, a_hat), np.maximum(hi, a_hat), open_lo, open_hi


def profile_samples(logn, y, fit, form, rng, size=4000):
    """Draws from the profile's confidence distribution of alpha for one data set (y: (m,))."""
    df = len(y) - N_PARAMS[form]
    if df < 1:  # as many parameters as points: no residual, no confidence distribution
        return np.full(size, np.nan)
    if form == "loglog":
        xc = logn - logn.mean()
        se = np.sqrt(fit["rss"][0] / df / (xc @ xc))
        return fit["alpha"][0] + se * rng.standard_t(df, size)
    s2 = max(fit["rss"][0] / df, 1e-300)
    prof, a_hat = fit["profile"][0], fit["alpha"][0]
    root = np.sign(GRID - a_hat) * np.sqrt(np.maximum(prof - fit["rss"][0], 0) / s2)
    cdf = np.maximum.accumulate(stats.t.cdf(root, df))
    return np.interp(rng.uniform(size=size), cdf, GRID, left=GRID[0], right=ALPHA_MAX)


def _refit(logn, Ystar, form, R, n_boot):
    f = fit_batch(logn, Ystar.reshape(R * n_boot, -1), form)
    return {k: f[k].reshape(R, n_boot) for k in ("alpha", "E", "B")}


def interval_batch(
    n,
    Y,
    form: str = "offset",
    level: float = 0.95,
    methods=METHODS,
    bootstrap: int = 400,
    rng=None,
    keep_samples: bool = False,
) -> dict:
    """Point fits and every method's interval for each row of Y (R, m) on the sizes n (m,).

    Returns {"fit": {E, B, alpha, rss}, "noise": sigma (R,), "noise_source", method: {"lo", "hi", and
    "samples" (of alpha), "E_samples" and "B_samples" (R, bootstrap) for the bootstrap methods when
    keep_samples, "open_lo"/"open_hi" for profile}}.
    """
    rng = np.random.default_rng(rng)
    Y = np.atleast_2d(np.asarray(Y, dtype=np.float64))
    n = np.asarray(n, dtype=np.float64)
    logn = np.log(n)
    _, idx = size_index(n)
    R, m = Y.shape
    fit = fit_batch(logn, Y, form, keep_profile="profile" in methods and form != "loglog")
    sigma, source = seed_noise(idx, Y, fit["rss"], N_PARAMS[form])
    out = {"fit": fit, "noise": sigma, "noise_source": source}
    for method in methods:
        if method == "profile":
            lo, hi, olo, ohi = profile_interval(logn, Y, fit, form, level)
            out[method] = {"lo": lo, "hi": hi, "open_lo": olo, "open_hi": ohi}
            continue
        if method == "parametric":
            law = fit["E"][:, None] + fit["B"][:, None] * n[None, :] ** -fit["alpha"][:, None]  # (R, m)
            Ystar = law[:, None, :] * np.exp(sigma[:, None, None] * rng.standard_normal((R, bootstrap, m)))
        elif method == "cluster":
            # for each row, a random row of the same size (seeds resampled with replacement within sizes)
            members = [np.flatnonzero(idx == k) for k in range(idx.max() + 1)]
            pick = np.empty((R, bootstrap, m), dtype=np.int64)
            for mem in members:
                pick[:, :, mem] = mem[rng.integers(0, len(mem), (R, bootstrap, len(mem)))]
            Ystar = np.take_along_axis(Y[:, None, :], pick, axis=2)
        else:
            raise ValueError(f"unknown interval method {method!r}; choose from {', '.join(METHODS)}")
        refits = _refit(logn, Ystar, form, R, bootstrap)
        lo, hi = _percentile(refits["alpha"], level)
        out[method] = {"lo": lo, "hi": hi}
        if keep_samples:
            out[method].update(samples=refits["alpha"], E_samples=refits["E"], B_samples=refits["B"])
    return out
