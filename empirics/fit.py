"""Scaling-law fitting with uncertainty (paper Section 5, Figures 2-3; Hoffmann et al. 2022).

Laws (x > 0, L > 0):

- ``offset``: L = E + B x^(-alpha), E >= 0 fitted.
- ``power``:  L = B x^(-alpha) (E fixed at 0), fitted robustly.
- ``loglog``: the paper's method, an ordinary least-squares line log L = log B - alpha log x.
- ``joint``:  L(N, D) = E + A N^(-alpha) + B D^(-beta) (x has two columns, N and D).

Estimator (all but ``loglog``): residuals are taken in log space, r = log L_hat - log L.

1. Variable projection: the exponents run over a grid; for each, the linear coefficients (E, A, B)
   come from non-negative least squares on the rows weighted by 1/L (so that the linear residual
   approximates the log residual); the grid point with the smallest log-space sum of squares wins.
2. ``scipy.optimize.least_squares`` (trust-region reflective, analytic Jacobian) refines
   (E, log A, alpha, log B, beta) with a Huber loss whose delta is 1.345 sigma, sigma the robust
   noise scale 1.4826 median|r| of the current residuals (delta is re-derived once after the
   first refinement). Never a fixed delta: the right threshold depends on the data's noise.
3. Bootstrap: configurations (``groups``, e.g. all seeds of one size) are resampled with
   replacement and the fit repeated from the point estimate with the same delta; percentile
   intervals for every parameter and derived quantity.

Derived quantities: for 1-D laws in the data size, the implied intrinsic dimension
d = 2 beta_H / alpha - 2 beta_H (from alpha_D = 2 beta_H / (2 beta_H + d), beta_H the Hoelder
smoothness, default 1); for the joint law, a = beta / (alpha + beta) (N_opt ~ C^a) and the implied
d from the data exponent beta.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

FORMS = ("offset", "power", "loglog", "joint")
EXPONENT_MAX = 5.0
HUBER_TUNING = 1.345  # 95% efficiency at the normal model

# form -> names of the optimised parameters (log-coefficients are optimised as logs)
_THETA = {
    "offset": ("E", "logB", "alpha"),
    "power": ("logB", "alpha"),
    "joint": ("E", "logA", "alpha", "logB", "beta"),
}


@dataclass
class FitResult:
    """A fitted law. ``params`` holds E, A, B and the exponents on the natural scale."""

    form: str
    params: dict
    ci: dict = field(default_factory=dict)
    converged: bool = True
    at_bound: dict = field(default_factory=dict)
    rmse_log: float = float("nan")
    huber_delta: float | None = None
    noise_scale: float = float("nan")
    n_points: int = 0
    n_groups: int = 0
    bootstrap: int = 0
    bootstrap_failures: int = 0
    derived: dict = field(default_factory=dict)
    derived_ci: dict = field(default_factory=dict)
    holder_beta: float = 1.0
    message: str = ""
    samples: list = field(default_factory=list, repr=False)  # bootstrap parameter dicts


    @property
    def alpha(self) -> float:
        return self.params["alpha"]

    def predict(self, x) -> np.ndarray:
        return predict(self.form, self.params, x)

    def as_dict(self) -> dict:
        """Everything but the bootstrap samples, as plain data."""
        out = asdict(self)
        out.pop("samples")
        return out


def predict(form: str, params: dict, x) -> np.ndarray:
    """The law's value at x ((n,) or, for 'joint', (n, 2) of N and D)."""
    x = np.asarray(x, dtype=np.float64)
    p = params
    if form == "joint":
        return p["E"] + p["A"] * x[:, 0] ** -p["alpha"] + p["B"] * x[:, 1] ** -p["beta"]
    return p.get("E", 0.0) + p["B"] * x ** -p["alpha"]


def _theta_to_params(form: str, theta) -> dict:
    out = {}
    for name, v in zip(_THETA[form], theta):
        out[name[3:] if name.startswith("log") else name] = float(np.exp(v) if name.startswith("log") else v)
    if form == "power":
        out["E"] = 0.0
    return out


def _params_to_theta(form: str, params: dict) -> np.ndarray:
    return np.array([np.log(params[n[3:]]) if n.startswith("log") else params[n] for n in _THETA[form]])


def _bounds(form: str):
    lo = [0.0 if n in ("E", "alpha", "beta") else -np.inf for n in _THETA[form]]
    hi = [EXPONENT_MAX if n in ("alpha", "beta") else np.inf for n in _THETA[form]]
    return np.array(lo), np.array(hi)


def _terms(form: str, theta, logx):
    """The prediction and its power-law terms (for the Jacobian): offset -> (E + t, t),
    power -> (t, None), joint -> (E + tA + tB, (tA, tB))."""
    if form == "offset":
        E, logB, a = theta
        t = np.exp(logB - a * logx)
        return E + t, t
    if form == "power":
        logB, a = theta
        return np.exp(logB - a * logx), None
    E, logA, a, logB, b = theta
    tA, tB = np.exp(logA - a * logx[:, 0]), np.exp(logB - b * logx[:, 1])
    return E + tA + tB, (tA, tB)


def _residuals(theta, form, logx, logy):
    if form == "power":
        return theta[0] - theta[1] * logx - logy
    pred, _ = _terms(form, theta, logx)
    return np.log(pred) - logy


def _jacobian(theta, form, logx, logy):
    if form == "power":
        return np.stack([np.ones_like(logx), -logx], axis=1)
    pred, t = _terms(form, theta, logx)
    if form == "offset":
        return np.stack([1.0 / pred, t / pred, -t * logx / pred], axis=1)
    tA, tB = t
    return np.stack([1.0 / pred, tA / pred, -tA * logx[:, 0] / pred, tB / pred, -tB * logx[:, 1] / pred], axis=1)


def _varpro_start(form: str, logx, logy) -> np.ndarray:
    """Grid over exponents, NNLS for the linear coefficients; the best log-space fit."""
    from scipy.optimize import nnls

    y = np.exp(logy)
    w = 1.0 / y
    grid = np.linspace(0.01, 2.0, 200) if form != "joint" else np.linspace(0.02, 1.5, 75)
    best = (np.inf, None)
    if form == "joint":
        combos = [(a, b) for a in grid for b in grid]
    else:
        combos = [(a,) for a in grid]
    for ex in combos:
        if form == "joint":
            cols = [np.ones_like(y), np.exp(-ex[0] * logx[:, 0]), np.exp(-ex[1] * logx[:, 1])]
        elif form == "offset":
            cols = [np.ones_like(y), np.exp(-ex[0] * logx)]
        else:
            cols = [np.exp(-ex[0] * logx)]
        M = np.stack(cols, axis=1)
        coef, _ = nnls(M * w[:, None], y * w)
        pred = M @ coef
        if np.any(pred <= 0):
            continue
        ssr = float(np.sum((np.log(pred) - logy) ** 2))
        if ssr < best[0]:
            best = (ssr, (coef, ex))
    if best[1] is None:
        raise ValueError("no positive fit found on the exponent grid")
    coef, ex = best[1]
    tiny = 1e-12 * float(np.max(y))
    if form == "offset":
        return np.array([coef[0], np.log(max(coef[1], tiny)), ex[0]])
    if form == "power":
        return np.array([np.log(max(coef[0], tiny)), ex[0]])
    return np.array([coef[0], np.log(max(coef[1], tiny)), ex[0], np.log(max(coef[2], tiny)), ex[1]])


def _robust_scale(r: np.ndarray) -> float:
    return float(1.4826 * np.median(np.abs(r)))


def _refine(form, theta0, logx, logy, delta):
    from scipy.optimize import least_squares

    lo, hi = _bounds(form)
    theta0 = np.clip(theta0, lo, hi)
    return least_squares(_residuals, theta0, jac=_jacobian, bounds=(lo, hi), loss="huber",
                         f_scale=delta, args=(form, logx, logy), method="trf", x_scale="jac",
                         xtol=1e-12, ftol=1e-12, gtol=1e-12, max_nfev=2000)


def _check_xy(x, y, form):
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).ravel()
    if form == "joint":
        if x.ndim != 2 or x.shape[1] != 2:
            raise ValueError("the joint law needs x with two columns (N, D)")
    else:
        x = x.ravel()
    if len(x) != len(y):
        raise ValueError(f"x and y differ in length ({len(x)} vs {len(y)})")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("x and y must be finite")
    if np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("x and y must be positive (the laws are fitted in log space)")
    n_params = {"offset": 3, "power": 2, "loglog": 2, "joint": 5}[form]
    distinct = len(np.unique(x, axis=0))
    if distinct < n_params:
        raise ValueError(f"the {form} law needs at least {n_params} distinct x values, got {distinct}")
    return x, y


def _derived(form: str, params: dict, h: float) -> dict:
    if form == "joint":
        a, b = params["alpha"], params["beta"]
        return {"a": b / (a + b) if a + b > 0 else float("nan"),
                "implied_d": 2 * h / b - 2 * h if b > 0 else float("inf")}
    a = params["alpha"]
    return {"implied_d": 2 * h / a - 2 * h if a > 0 else float("inf")}


def _fit_once(form, logx, logy, theta0=None, delta=None):
    """One fit. Returns (params, theta, converged, delta, sigma, message)."""
    if form == "loglog":
        slope, intercept = np.polyfit(logx, logy, 1)
        params = {"E": 0.0, "B": float(np.exp(intercept)), "alpha": float(-slope)}
        r = intercept + slope * logx - logy
        return params, None, True, None, _robust_scale(r), "ordinary least squares in log-log space"
    fixed_delta = delta is not None
    if theta0 is None:
        theta0 = _varpro_start(form, logx, logy)
    sol = None
    for _ in range(1 if fixed_delta else 2):
        if not fixed_delta:
            sigma = _robust_scale(_residuals(theta0, form, logx, logy))
            delta = max(HUBER_TUNING * sigma, 1e-10)
        sol = _refine(form, theta0, logx, logy, delta)
        theta0 = sol.x
    sigma = _robust_scale(sol.fun)
    return _theta_to_params(form, sol.x), sol.x, bool(sol.success and sol.status > 0), delta, sigma, sol.message


def fit_law(x, y, form: str = "offset", groups=None, bootstrap: int = 0, seed=0, ci_level: float = 0.95,
            holder_beta: float = 1.0) -> FitResult:
    """Fit a scaling law (see the module docstring) with bootstrap intervals resampled by group.

    x: (n,) sizes, or (n, 2) of (N, D) for form='joint'. y: (n,) losses. groups: (n,) labels of
    configurations resampled together (default: each row its own). bootstrap: resamples (0: none).
    holder_beta: the smoothness used for the implied intrinsic dimension.
    """
    if form not in FORMS:
        raise ValueError(f"unknown form {form!r}; choose from {', '.join(FORMS)}")
    x, y = _check_xy(x, y, form)
    logx, logy = np.log(x), np.log(y)
    params, theta, converged, delta, sigma, message = _fit_once(form, logx, logy)
    at_bound = {}
    if theta is not None:
        lo, hi = _bounds(form)
        for name, v, l, h in zip(_THETA[form], theta, lo, hi):
            key = name[3:] if name.startswith("log") else name
            at_bound[key] = bool((np.isfinite(l) and v <= l + 1e-8 * max(1.0, abs(l)))
                                 or (np.isfinite(h) and v >= h - 1e-8 * max(1.0, abs(h))))
    rmse = float(np.sqrt(np.mean((np.log(predict(form, params, x)) - logy) ** 2)))
    groups = np.arange(len(y)) if groups is None else np.asarray(groups)
    if len(groups) != len(y):
        raise ValueError(f"groups has length {len(groups)}, expected {len(y)}")
    labels, inverse = np.unique(groups, return_inverse=True)
    result = FitResult(form, params, converged=converged, at_bound=at_bound, rmse_log=rmse, huber_delta=delta,
                       noise_scale=sigma, n_points=len(y), n_groups=len(labels), bootstrap=int(bootstrap),
                       derived=_derived(form, params, holder_beta), holder_beta=holder_beta, message=str(message))
    if bootstrap:
        _bootstrap(result, x, logx, logy, theta, inverse, len(labels), bootstrap, seed, ci_level)
    return result


def _bootstrap(result, x, logx, logy, theta, inverse, n_groups, n_boot, seed, ci_level):
    rng = np.random.default_rng(seed)
    members = [np.flatnonzero(inverse == g) for g in range(n_groups)]
    samples, failures = [], 0
    for _ in range(n_boot):
        idx = np.concatenate([members[g] for g in rng.integers(0, n_groups, n_groups)])
        try:
            _check_xy(x[idx], np.exp(logy[idx]), result.form)
            p, _, ok, *_ = _fit_once(result.form, logx[idx], logy[idx], theta0=theta, delta=result.huber_delta)
        except ValueError:  # a resample with too few distinct sizes
            failures += 1
            continue
        if not ok:
            failures += 1
            continue
        samples.append({**p, **_derived(result.form, p, result.holder_beta)})
    result.bootstrap_failures = failures
    result.samples = samples
    if len(samples) < 2:
        return
    q = [(1 - ci_level) / 2, (1 + ci_level) / 2]
    for key in samples[0]:
        vals = np.array([s[key] for s in samples], dtype=np.float64)
        vals = vals[np.isfinite(vals)]
        if len(vals) < 2:
            continue
        lo, hi = np.quantile(vals, q)
        (result.derived_ci if key in result.derived else result.ci)[key] = (float(lo), float(hi))


def choose_form(x, y, forms=("offset", "power", "loglog"), groups=None) -> dict:
    """Model choice by leave-largest-out: fit each form without the largest configuration (largest x,
    or largest N*D for 'joint') and compare the log-space RMSE of its prediction there.

    Returns {"errors": {form: rmse}, "choice": form, "held_out": n rows}.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).ravel()
    size = x.prod(axis=1) if x.ndim == 2 else x
    held = size == size.max()
    errors = {}
    for form in forms:
        fit = fit_law(x[~held], y[~held], form=form)
        errors[form] = float(np.sqrt(np.mean((np.log(fit.predict(x[held])) - np.log(y[held])) ** 2)))
    return {"errors": errors, "choice": min(errors, key=errors.get), "held_out": int(held.sum())}


def chinchilla_points(path) -> tuple[np.ndarray, np.ndarray]:
    """Epoch AI's points read off Hoffmann et al. Fig. 4: x = (N, D = C / 6N), y = loss, with the five
    highest-loss points dropped as Epoch did (240 remain)."""
    import csv

    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    N = np.array([float(r["Model Size"]) for r in rows])
    C = np.array([float(r["Training FLOP"]) for r in rows])
    L = np.array([float(r["loss"]) for r in rows])
    keep = np.argsort(L)[: len(L) - 5]
    keep.sort()
    return np.stack([N[keep], C[keep] / (6 * N[keep])], axis=1), L[keep]


# Published values (Besiroglu et al. 2024, "Chinchilla scaling: a replication attempt"; Hoffmann et al. 2022)
EPOCH_CHINCHILLA = {"E": (1.817, 0.026), "A": (482.0, 124.5), "B": (2085.4, 1293.0),
                    "alpha": (0.3478, 0.015), "beta": (0.3658, 0.021)}
HOFFMANN_CHINCHILLA = {"E": 1.69, "A": 406.4, "B": 410.7, "alpha": 0.34, "beta": 0.28}
