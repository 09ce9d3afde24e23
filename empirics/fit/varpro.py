"""One-dimensional scaling laws fitted by variable projection, batched over many data sets (paper Sec. 5).

Laws in the size n > 0 with loss y > 0:

- ``offset``: y = E + B n^(-alpha), E >= 0, B >= 0 (the irreducible-loss form of Hoffmann et al.);
- ``power``:  the E = 0 face of the offset law (nested in it, for the curvature test);
- ``loglog``: the paper's method, an ordinary least-squares line log y = log B - alpha log n.

For the offset and power laws the residual is relative, r = (y - L)/y, the first-order log residual
under multiplicative noise. For a given alpha the best (E, B) is a weighted linear least-squares
problem with non-negativity, solved in closed form (the 2x2 normal equations and their two faces);
alpha is searched in one dimension: a grid over [ALPHA_MIN, ALPHA_MAX] (which also gives the profile
RSS(alpha) used by the profile-likelihood interval), then golden-section refinement in the bracket of
the best grid point, and bisection on the profile's derivative polishes it to rounding level (so the
fitted alpha does not depend on the CPU's summation order). Every function takes y of shape (B, m):
B data sets on one design of m rows.
"""

from __future__ import annotations

import numpy as np

ALPHA_MIN, ALPHA_MAX = 1e-3, 5.0
GRID = np.linspace(ALPHA_MIN, ALPHA_MAX, 200)  # step 0.025; golden section refines
_GOLDEN = (np.sqrt(5.0) - 1) / 2
CHUNK = 4096  # data sets per block: bounds the (B, grid) arrays to a few tens of MB


def _coefficients(a11, a12, a22, b1, b2, free_E: bool):
    """argmin over E >= 0, B >= 0 of sum w^2 (y - E - B t)^2, from the normal-equation sums.

    The unconstrained minimiser when feasible (the global minimum of a convex quadratic), else the
    better of the faces E = 0 and B = 0. Returns (E, B, reduced RSS = RSS - m)."""
    B0 = np.maximum(b2 / a22, 0.0)
    rss_E0 = B0 * (B0 * a22 - 2 * b2)
    if not free_E:
        return np.zeros_like(B0), B0, rss_E0
    E1 = b1 / a11
    rss_B0 = E1 * (E1 * a11 - 2 * b1)
    det = a11 * a22 - a12**2
    with np.errstate(divide="ignore", invalid="ignore"):
        Eu = (b1 * a22 - b2 * a12) / det
        Bu = (a11 * b2 - a12 * b1) / det
    ok = (det > 1e-13 * a11 * a22) & (Eu >= 0) & (Bu >= 0)
    rss_u = np.where(ok, -2 * (Eu * b1 + Bu * b2) + Eu**2 * a11 + 2 * Eu * Bu * a12 + Bu**2 * a22, np.inf)
    face_E0 = rss_E0 <= rss_B0
    E = np.where(ok, Eu, np.where(face_E0, 0.0, E1))
    B = np.where(ok, Bu, np.where(face_E0, B0, 0.0))
    return E, B, np.where(ok, rss_u, np.minimum(rss_E0, rss_B0))


def _solve_at(u, y, alpha, free_E: bool):
    """At one alpha per data set, on sizes centred in log (u = log n - c): the optimal E, B (for n/e^c),
    t = e^(-alpha u) and the relative residuals r."""
    t = np.exp(-alpha[:, None] * u[None, :])
    w2 = 1.0 / y**2
    with np.errstate(divide="ignore", invalid="ignore"):
        E, B, _ = _coefficients(w2.sum(1), (w2 * t).sum(1), (w2 * t * t).sum(1), (1 / y).sum(1), (t / y).sum(1), free_E)
    return E, B, t, 1.0 - (E[:, None] + B[:, None] * t) / y


def profile_at(logn, y, alpha, free_E: bool = True):
    """E, B and RSS at one alpha per data set (alpha: (B,)); RSS from the residuals, not the sums.

    Sizes are measured from their geometric mean inside (t = (n/n0)^-alpha stays near 1 for any n);
    B is returned for n itself and may overflow to inf for extreme sizes (flagged by the callers)."""
    centre = logn.mean()
    E, B, t, r = _solve_at(logn - centre, y, alpha, free_E)
    with np.errstate(over="ignore", invalid="ignore"):
        B_n = np.where(B > 0, B * np.exp(alpha * centre), 0.0)
    return E, B_n, (r * r).sum(1)


def profile_grid(logn, y, free_E: bool = True, grid=GRID):
    """RSS(alpha) on the grid for every data set: (B, len(grid))."""
    T = np.exp(-np.outer(grid, logn - logn.mean()))  # (G, m)
    w2, w1 = 1.0 / y**2, 1.0 / y
    a11, b1 = w2.sum(1)[:, None], w1.sum(1)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        _, _, red = _coefficients(a11, w2 @ T.T, w2 @ (T * T).T, b1, w1 @ T.T, free_E)
    return y.shape[1] + red


def _golden(logn, y, lo, hi, free_E, iters=48):
    """Vectorised golden-section search for the minimum of the profile RSS in [lo, hi]."""
    a, b = lo.copy(), hi.copy()
    c, d = b - _GOLDEN * (b - a), a + _GOLDEN * (b - a)
    fc, fd = profile_at(logn, y, c, free_E)[2], profile_at(logn, y, d, free_E)[2]
    for _ in range(iters):
        left = fc < fd
        b = np.where(left, d, b)
        a = np.where(left, a, c)
        c_new = np.where(left, b - _GOLDEN * (b - a), d)
        d_new = np.where(left, c, a + _GOLDEN * (b - a))
        moved = np.where(left, c_new, d_new)
        fm = profile_at(logn, y, moved, free_E)[2]
        fd, fc = np.where(left, fc, fm), np.where(left, fm, fd)
        c, d = c_new, d_new
    return (a + b) / 2


def _slope(logn, y, alpha, free_E: bool):
    """d RSS / d alpha of the profile RSS per data set (alpha: (B,)). By the envelope theorem (the
    constraints E, B >= 0 do not move with alpha) it is the partial derivative at the optimal (E, B):
    2 B sum r (log n - c) t / y, with t, B, c as in profile_at."""
    u = logn - logn.mean()
    _, B, t, r = _solve_at(u, y, alpha, free_E)
    return 2 * B * (r * u * t / y).sum(1)


def _polish(logn, y, a, free_E, iters=48):
    """The golden-section minimum `a` made machine-independent: a minimiser of a smooth function is
    fixed by comparing values only to about sqrt(eps) (the values differ by rounding there, so two
    CPUs' summation orders gave alpha-hats 1e-8 apart), while the root of its derivative is fixed
    to about eps / curvature. Where the slope changes sign from - to + on [a - w, a + w], bisection
    finds that root; elsewhere (a minimum on the search range's edge, a flat profile with B = 0, or
    the minimum not bracketed) `a` is kept."""
    w = 1e-6 * np.maximum(1.0, np.abs(a))
    lo, hi = np.maximum(a - w, ALPHA_MIN), np.minimum(a + w, ALPHA_MAX)
    ok = (_slope(logn, y, lo, free_E) < 0) & (_slope(logn, y, hi, free_E) > 0)
    if not ok.any():
        return a
    lo, hi, yy = lo[ok], hi[ok], y[ok]
    for _ in range(iters):
        mid = (lo + hi) / 2
        up = _slope(logn, yy, mid, free_E) > 0
        hi, lo = np.where(up, mid, hi), np.where(up, lo, mid)
    out = a.copy()
    out[ok] = (lo + hi) / 2
    return out


def fit_batch(logn, y, form: str = "offset", keep_profile: bool = False, grid=GRID) -> dict:
    """Fit every row of y (B, m) on the sizes exp(logn) (m,). Returns arrays E, B, alpha, rss (and the
    grid profile (B, G) with keep_profile). RSS is relative for offset/power, in log space for loglog."""
    y = np.atleast_2d(np.asarray(y, dtype=np.float64))
    logn = np.asarray(logn, dtype=np.float64)
    if form == "loglog":
        ly = np.log(y)
        xc = logn - logn.mean()
        slope = (ly - ly.mean(1, keepdims=True)) @ xc / (xc @ xc)
        intercept = ly.mean(1) - slope * logn.mean()
        r = ly - intercept[:, None] - slope[:, None] * logn[None, :]
        with np.errstate(over="ignore"):
            B = np.exp(intercept)
        return {"E": np.zeros(len(y)), "B": B, "alpha": -slope, "rss": (r * r).sum(1)}
    free_E = form == "offset"
    out = {k: np.empty(len(y)) for k in ("E", "B", "alpha", "rss")}
    profiles = []
    for s in range(0, len(y), CHUNK):
        yy = y[s : s + CHUNK]
        prof = profile_grid(logn, yy, free_E, grid)
        k = np.argmin(prof, axis=1)
        lo, hi = grid[np.maximum(k - 1, 0)], grid[np.minimum(k + 1, len(grid) - 1)]
        a = _polish(logn, yy, _golden(logn, yy, lo, hi, free_E), free_E)
        E, B, rss = profile_at(logn, yy, a, free_E)
        for key, v in (("E", E), ("B", B), ("alpha", a), ("rss", rss)):
            out[key][s : s + CHUNK] = v
        if keep_profile:
            profiles.append(prof)
    if keep_profile:
        out["profile"] = np.concatenate(profiles)
    return out


def predict(form: str, params: dict, n) -> np.ndarray:
    """The 1-D law's value at n."""
    n = np.asarray(n, dtype=np.float64)
    return params.get("E", 0.0) + params["B"] * n ** -params["alpha"]


VALUE_RANGE = (1e-100, 1e100)  # losses the squared residuals can hold without overflow


def check_pairs(x, y, names: str = "x and y") -> None:
    """x and y (arrays) of equal length, finite and positive, as a law fitted in log space needs; the
    ValueError names them ("sizes and losses" for the exponent fits)."""
    if len(x) != len(y):
        raise ValueError(f"{names} differ in length ({len(x)} vs {len(y)})")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError(f"{names} must be finite (found NaN or inf)")
    if np.any(x <= 0) or np.any(y <= 0):
        raise ValueError(f"{names} must be positive (the laws are fitted in log space)")
    if len(y) and not (VALUE_RANGE[0] <= np.min(y) and np.max(y) <= VALUE_RANGE[1]):
        # the offset law's residuals are squared: values near 1e300 overflow to inf and leave no draw
        raise ValueError(
            f"{names.split(' and ')[-1]} must lie in [{VALUE_RANGE[0]:g}, {VALUE_RANGE[1]:g}] "
            f"(found {np.min(y):.3g} to {np.max(y):.3g}); rescale the column"
        )
