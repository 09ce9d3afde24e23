"""Scaling-law fitting with uncertainty (paper Section 5, Figures 2-3; Hoffmann et al. 2022).

Laws (x > 0, L > 0):

- ``offset``: L = E + B x^(-alpha), E >= 0 fitted.
- ``power``:  L = B x^(-alpha) (E fixed at 0), fitted robustly.
- ``loglog``: the paper's method, an ordinary least-squares line log L = log B - alpha log x.
- ``joint``:  L(N, D) = E + A N^(-alpha) + B D^(-beta) (x has two columns, N and D).

Estimators:

1. ``offset``, ``power`` and ``loglog`` with the squared loss (their default): variable projection in
   `tmcheck.empirics.fit.varpro` (for each exponent the best E, B by linear least squares with E, B >= 0;
   the exponent searched in one dimension).
2. ``joint``, or any form with ``loss="huber"``: a variable-projection start on an exponent grid (NNLS
   for E, A, B), then ``scipy.optimize.least_squares`` (trust-region reflective, analytic Jacobian) on
   the log-space residuals r = log L_hat - log L with a Huber loss of a stated delta (default 1e-3, as
   Epoch AI's replication of Hoffmann et al.) or the squared loss.
3. Bootstrap (``bootstrap > 0``): configurations (``groups``) are resampled with replacement and the fit
   repeated; percentile intervals. For 1-D exponents the calibrated intervals of
   `tmcheck.empirics.fit.exponent` (coverage measured at the design) are the ones to report.

Every fit carries ``flags`` (degenerate or ill-posed: a parameter at its bound, A or B ~ 0, an exponent
at the edge of its search range, a loss that does not decrease, fewer than 3 sizes, a non-finite
parameter); ``status`` is "converged" only when there are none and the optimiser converged.

Derived quantities: for 1-D laws in the data size, the implied intrinsic dimension
d = 2 beta_H (1 - alpha) / alpha (`tmcheck.theory.bounds.id_from_alpha_D`, beta_H the Hoelder
smoothness, default 1); for the joint law, a = beta / (alpha + beta) (N_opt ~ C^a) and the implied
d from the data exponent beta.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from tmcheck.empirics.fit.varpro import check_pairs
from tmcheck.theory.bounds import id_from_alpha_D

FORMS = ("offset", "power", "loglog", "joint")
LOSSES = ("squared", "huber")
EXPONENT_MAX = 5.0
EPOCH_HUBER_DELTA = 1e-3  # Besiroglu et al. 2024 (and Hoffmann et al. 2022), log-space residuals

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
    status: str = "converged"
    flags: list = field(default_factory=list)
    at_bound: dict = field(default_factory=dict)
    rmse_log: float = float("nan")
    loss: str = "squared"
    huber_delta: float | None = None
    noise_scale: float = float("nan")
    n_points: int = 0
    n_groups: int = 0
    bootstrap: int = 0
    bootstrap_failures: int = 0
    derived: dict = field(default_factory=dict)
    derived_ci: dict = field(default_factory=dict)
    beta: float = 1.0
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
    for name, v in zip(_THETA[form], theta, strict=True):
        out[name[3:] if name.startswith("log") else name] = float(np.exp(v) if name.startswith("log") else v)
    if form == "power":
        out["E"] = 0.0
    return out


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


def _joint_start(logx, logy) -> np.ndarray:
    """Grid over both exponents, NNLS for (E, A, B) on rows weighted by 1/L; the best log-space fit."""
    from scipy.optimize import nnls

    y = np.exp(logy)
    w = 1.0 / y
    grid = np.linspace(0.02, 1.5, 75)
    best = (np.inf, None)
    for a in grid:
        for b in grid:
            M = np.stack([np.ones_like(y), np.exp(-a * logx[:, 0]), np.exp(-b * logx[:, 1])], axis=1)
            coef, _ = nnls(M * w[:, None], y * w)
            pred = M @ coef
            if np.any(pred <= 0):
                continue
            ssr = float(np.sum((np.log(pred) - logy) ** 2))
            if ssr < best[0]:
                best = (ssr, (coef, a, b))
    if best[1] is None:
        raise ValueError("no positive fit found on the exponent grid")
    coef, a, b = best[1]
    tiny = 1e-12 * float(np.max(y))
    return np.array([coef[0], np.log(max(coef[1], tiny)), a, np.log(max(coef[2], tiny)), b])


def _start(form, logx, logy) -> np.ndarray:
    if form == "joint":
        return _joint_start(logx, logy)
    from tmcheck.empirics.fit.varpro import fit_batch

    f = fit_batch(logx, np.exp(logy)[None], form)
    tiny = 1e-12 * float(np.exp(logy.max()))
    logB = np.log(max(float(f["B"][0]), tiny))
    return np.array([f["E"][0], logB, f["alpha"][0]]) if form == "offset" else np.array([logB, f["alpha"][0]])


def _robust_scale(r: np.ndarray) -> float:
    return float(1.4826 * np.median(np.abs(r)))


def _refine(form, theta0, logx, logy, loss, delta):
    from scipy.optimize import least_squares

    lo, hi = _bounds(form)
    theta0 = np.clip(theta0, lo, hi)
    kw = {"loss": "huber", "f_scale": delta} if loss == "huber" else {"loss": "linear"}
    return least_squares(
        _residuals,
        theta0,
        jac=_jacobian,
        bounds=(lo, hi),
        args=(form, logx, logy),
        method="trf",
        x_scale="jac",
        xtol=1e-12,
        ftol=1e-12,
        gtol=1e-12,
        max_nfev=2000,
        **kw,
    )


def _check_xy(x, y, form):
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).ravel()
    if form == "joint":
        if x.ndim != 2 or x.shape[1] != 2:
            raise ValueError("the joint law needs x with two columns (N, D)")
    else:
        x = x.ravel()
    check_pairs(x, y)
    n_params = {"offset": 3, "power": 2, "loglog": 2, "joint": 5}[form]
    distinct = len(np.unique(x, axis=0))
    if distinct < n_params:
        raise ValueError(f"the {form} law needs at least {n_params} distinct x values, got {distinct}")
    return x, y


def _derived(form: str, params: dict, h: float) -> dict:
    def implied(a):
        return id_from_alpha_D(a, h) if a > 0 else float("inf")

    if form == "joint":
        a, b = params["alpha"], params["beta"]
        return {"a": b / (a + b) if a + b > 0 else float("nan"), "implied_d": implied(b)}
    return {"implied_d": implied(params["alpha"])}


def _fit_once(form, logx, logy, loss, delta, theta0=None):
    """One fit. Returns (params, theta, optimiser converged, robust residual scale, message)."""
    if form == "loglog" or (loss == "squared" and form != "joint"):
        from tmcheck.empirics.fit.varpro import fit_batch

        f = fit_batch(logx, np.exp(logy)[None], form)
        params = {"E": float(f["E"][0]), "B": float(f["B"][0]), "alpha": float(f["alpha"][0])}
        r = np.log(params["E"] + params["B"] * np.exp(-params["alpha"] * logx)) - logy
        how = "ordinary least squares in log-log space" if form == "loglog" else "variable projection"
        return params, None, True, _robust_scale(r), how
    sol = _refine(form, _start(form, logx, logy) if theta0 is None else theta0, logx, logy, loss, delta)
    return (
        _theta_to_params(form, sol.x),
        sol.x,
        bool(sol.success and sol.status > 0),
        _robust_scale(sol.fun),
        str(sol.message),
    )


def _joint_flags(x, y, params, theta) -> list[dict]:
    flags = []
    lo, hi = _bounds("joint")
    for name, v, l, h in zip(_THETA["joint"], theta, lo, hi, strict=True):
        if name in ("E", "alpha", "beta") and (v <= l + 1e-8 or v >= h - 1e-8):
            flags.append({"code": f"{name}_at_bound", "message": f"{name} = {v:.4g} at its bound [{l:g}, {h:g}]"})
    for coef, col, exp in (("A", 0, "alpha"), ("B", 1, "beta")):
        term = params[coef] * x[:, col] ** -params[exp]
        if not np.all(np.isfinite(term)) or not np.max(term) > 1e-6 * np.min(y):
            flags.append(
                {
                    "code": f"{coef}_zero",
                    "message": f"{coef} ~ 0: the {('N', 'D')[col]} term is negligible "
                    f"(is that column the quantity the law expects, e.g. tokens rather than FLOPs?)",
                }
            )
    for col, name in ((0, "N"), (1, "D")):
        if len(np.unique(x[:, col])) < 3:
            flags.append({"code": "few_sizes", "message": f"fewer than 3 distinct {name} values"})
    if not all(np.isfinite(v) for v in params.values()):
        flags.append({"code": "nonfinite", "message": "a parameter is not finite"})
    return flags


def _loss_of(form: str, loss: str | None, huber_delta: float | None) -> tuple[str, float | None]:
    """The loss a fit uses (default: huber for 'joint', squared otherwise) and its Huber delta (or None)."""
    if form not in FORMS:
        raise ValueError(f"unknown form {form!r}; choose from {', '.join(FORMS)}")
    loss = loss or ("huber" if form == "joint" else "squared")
    if loss not in LOSSES:
        raise ValueError(f"unknown loss {loss!r}; choose from {', '.join(LOSSES)}")
    if form == "loglog" and loss != "squared":
        raise ValueError("the loglog form is ordinary least squares (loss 'squared')")
    delta = None
    if loss == "huber":
        delta = EPOCH_HUBER_DELTA if huber_delta is None else float(huber_delta)
        if not (np.isfinite(delta) and delta > 0):
            raise ValueError(f"the Huber delta must be a finite number > 0, got {huber_delta}")
    return loss, delta


def _at_bound(form: str, theta, flags: list) -> dict:
    """{parameter: whether the fit stopped at its bound} (from the flags for the 1-D batched fit)."""
    if theta is None:
        codes = {f["code"] for f in flags}
        return {"E": "E_at_bound" in codes, "alpha": "alpha_at_edge" in codes}
    at_bound = {}
    lo, hi = _bounds(form)
    for name, v, l, h in zip(_THETA[form], theta, lo, hi, strict=True):
        key = name[3:] if name.startswith("log") else name
        at_bound[key] = bool(
            (np.isfinite(l) and v <= l + 1e-8 * max(1.0, abs(l)))
            or (np.isfinite(h) and v >= h - 1e-8 * max(1.0, abs(h)))
        )
    return at_bound


def _status_of(ok: bool, flags: list) -> str:
    if ok and not flags:
        return "converged"
    if not ok:
        return "not converged"
    return "ill-posed" if any(f["code"] == "few_sizes" for f in flags) else "degenerate"


def fit_law(
    x,
    y,
    form: str = "offset",
    groups=None,
    bootstrap: int = 0,
    seed=0,
    ci_level: float = 0.95,
    beta: float = 1.0,
    loss: str | None = None,
    huber_delta: float | None = None,
) -> FitResult:
    """Fit a scaling law (see the module docstring) with bootstrap intervals resampled by group.

    x: (n,) sizes, or (n, 2) of (N, D) for form='joint'. y: (n,) losses. groups: (n,) labels of
    configurations resampled together (default: each row its own). bootstrap: resamples (0: none).
    beta: the Hoelder smoothness used for the implied intrinsic dimension. loss: "squared" or
    "huber" (default: huber for 'joint', squared otherwise); huber_delta: the Huber threshold on the
    log residual (default 1e-3).
    """
    from tmcheck.empirics.fit.exponent import flags_1d

    loss, delta = _loss_of(form, loss, huber_delta)
    x, y = _check_xy(x, y, form)
    logx, logy = np.log(x), np.log(y)
    params, theta, ok, sigma, message = _fit_once(form, logx, logy, loss, delta)
    flags = _joint_flags(x, y, params, theta) if form == "joint" else flags_1d(x, y, form, params)
    at_bound = _at_bound(form, theta, flags)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        rmse = float(np.sqrt(np.mean((np.log(predict(form, params, x)) - logy) ** 2)))
    groups = np.arange(len(y)) if groups is None else np.asarray(groups)
    if len(groups) != len(y):
        raise ValueError(f"groups has length {len(groups)}, expected {len(y)}")
    labels, inverse = np.unique(groups, return_inverse=True)
    status = _status_of(ok, flags)
    result = FitResult(
        form,
        params,
        converged=status == "converged",
        status=status,
        flags=flags,
        at_bound=at_bound,
        rmse_log=rmse,
        loss=loss,
        huber_delta=delta,
        noise_scale=sigma,
        n_points=len(y),
        n_groups=len(labels),
        bootstrap=int(bootstrap),
        derived=_derived(form, params, beta),
        beta=beta,
        message=message,
    )
    if bootstrap:
        _bootstrap(result, x, logx, logy, theta, inverse.ravel(), len(labels), bootstrap, seed, ci_level)
    return result


def _bootstrap(result, x, logx, logy, theta, inverse, n_groups, n_boot, seed, ci_level):
    rng = np.random.default_rng(seed)
    members = [np.flatnonzero(inverse == g) for g in range(n_groups)]
    samples, failures = [], 0
    for _ in range(n_boot):
        idx = np.concatenate([members[g] for g in rng.integers(0, n_groups, n_groups)])
        try:
            _check_xy(x[idx], np.exp(logy[idx]), result.form)
            p, _, ok, *_ = _fit_once(result.form, logx[idx], logy[idx], result.loss, result.huber_delta, theta0=theta)
        except ValueError:  # a resample with too few distinct sizes
            failures += 1
            continue
        if not ok:
            failures += 1
            continue
        samples.append({**p, **_derived(result.form, p, result.beta)})
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


def choose_form(x, y, forms=("offset", "power", "loglog")) -> dict:
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
EPOCH_CHINCHILLA = {
    "E": (1.817, 0.026),
    "A": (482.0, 124.5),
    "B": (2085.4, 1293.0),
    "alpha": (0.3478, 0.015),
    "beta": (0.3658, 0.021),
}
HOFFMANN_CHINCHILLA = {"E": 1.69, "A": 406.4, "B": 410.7, "alpha": 0.34, "beta": 0.28}
