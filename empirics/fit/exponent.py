"""One exponent report for a data- or model-scaling sweep (paper Sec. 5, Figs. 2-3; eq. 3-4).

`exponent_report(sizes, losses)` takes one row per run (its size and its loss; runs of one size differ
by seed) and returns, as plain data: the paper's loglog line and the offset law E + B n^-alpha, each
with its degeneracy flags and the interval whose coverage, measured at this exact design, is best
(`tmcheck.empirics.fit.coverage`); the fit-range sensitivity (all sizes, the upper half, windows of 3
consecutive sizes); a curvature test (does the offset law fit significantly better than the power law,
is there a floor); and, given d, d-hat's bootstrap or its interval, the prediction test
(`tmcheck.empirics.fit.prediction`). Every verdict and sentence is computed from these numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from tmcheck.empirics.fit.coverage import COVERAGE_TARGET, Design, choose_method, coverage
from tmcheck.empirics.fit.intervals import METHODS, N_PARAMS, interval_batch, profile_samples, size_index
from tmcheck.empirics.fit.prediction import MARGIN, PAPER_MARGIN, SIZE, prediction_test
from tmcheck.empirics.fit.varpro import ALPHA_MAX, ALPHA_MIN, check_pairs, fit_batch

FORMS_1D = ("loglog", "offset")
NEGLIGIBLE = 1e-6  # a term smaller than this fraction of the loss everywhere is "approximately 0"
# A flat or increasing loss, or alpha at the end of its search range: any interval is the search's artefact.
ARTEFACTS = frozenset({"not_decreasing", "B_zero", "alpha_at_edge"})
STRAIGHT = ("loglog", "power")  # the forms with no floor: a line in log-log
WINDOW_DEPENDENT = "window-dependent"  # the label of a verdict given on the top window (a bend in the losses)
NOISE_FLOOR = 1e-9  # an SD of log loss below this is rounding, not noise: no coverage is simulated at it


@dataclass(frozen=True)
class FitSettings:
    """How an exponent's interval is computed and checked, one object for every caller.

    level: the interval's nominal level; coverage_reps: sweeps simulated at the fit to measure each
    method's coverage; bootstrap: resamples of the bootstrap methods; seed: every random draw's seed;
    target: the coverage a method must reach to be chosen; methods: the interval methods computed and
    simulated (("profile",) is the fast choice: no bootstrap).
    """

    level: float = 0.95
    coverage_reps: int = 200
    bootstrap: int = 400
    seed: int = 0
    target: float = COVERAGE_TARGET
    methods: tuple[str, ...] = METHODS

    @classmethod
    def of(cls, settings: FitSettings | None = None, **overrides) -> FitSettings:
        """`settings` (the defaults when None) with fields replaced by keyword; an unknown name is a
        TypeError, never ignored."""
        s = settings if settings is not None else cls()
        return replace(s, **overrides) if overrides else s


def check_rows(sizes, losses, form: str) -> tuple[np.ndarray, np.ndarray]:
    """Finite, positive, equal-length sizes and losses with enough distinct sizes (ValueError if not)."""
    if form not in N_PARAMS:
        raise ValueError(f"unknown form {form!r}; choose from {', '.join(N_PARAMS)}")
    n = np.asarray(sizes, dtype=np.float64).ravel()
    y = np.asarray(losses, dtype=np.float64).ravel()
    check_pairs(n, y, "sizes and losses")
    k = len(np.unique(n))
    if k < N_PARAMS[form]:
        raise ValueError(f"the {form} law needs at least {N_PARAMS[form]} distinct sizes, got {k}")
    return n, y


def flags_1d(n, y, form: str, params: dict) -> list[dict]:
    """Why a 1-D fit is degenerate or ill-posed (empty: it is neither)."""
    flags = []
    k = len(np.unique(n))

    def add(code, message):
        flags.append({"code": code, "message": message})

    if not all(np.isfinite(v) for v in params.values()):
        add("nonfinite", "a parameter is not finite (sizes far outside the range the law can represent?)")
    if k < 3:
        add("few_sizes", f"only {k} distinct sizes: an exponent from fewer than 3 sizes is not a scaling law")
    elif form == "offset" and k == 3:
        add("few_sizes", "3 sizes for 3 parameters: the offset law is exactly determined by the size means")
    slope = fit_batch(np.log(n), y[None], "loglog")["alpha"][0]
    if not slope > 0:
        add("not_decreasing", f"the loss does not decrease with size (log-log slope {-slope:+.3g})")
    a = params["alpha"]
    if form != "loglog":
        if not (2 * ALPHA_MIN < a < ALPHA_MAX - 0.01):
            add("alpha_at_edge", f"alpha = {a:.4g} at the edge of its search range [{ALPHA_MIN:g}, {ALPHA_MAX:g}]")
        if form == "offset" and params["E"] <= NEGLIGIBLE * np.min(y):
            add("E_at_bound", "E at its bound 0: no floor is identified (the offset law is a power law here)")
        term = params["B"] * np.min(n) ** -a if np.isfinite(a) else 0.0
        if not term > NEGLIGIBLE * np.min(y):
            add("B_zero", "B ~ 0: the size-dependent term is negligible (a flat loss)")
    return flags


def _status(flags) -> str:
    if not flags:
        return "converged"
    return "ill-posed" if any(f["code"] == "few_sizes" for f in flags) else "degenerate"


def _noise(res: dict, n_rows: int, form: str) -> tuple[float, str]:
    """The log-noise s.d. the coverage simulation draws with, and where it was measured."""
    sigma, source = float(res["noise"][0]), res["noise_source"]
    if not sigma > NOISE_FLOOR:  # identical seeds (deterministic runs): the residuals are the only noise left
        sigma, source = float(np.sqrt(res["fit"]["rss"][0] / max(n_rows - N_PARAMS[form], 1))), "residuals"
    if not sigma > NOISE_FLOOR:  # rounding, not noise: nothing random to simulate
        sigma = 0.0
    return sigma, source


def _measured_coverage(design, form, params, sigma, s: FitSettings):
    """Each method's coverage at this design (simulated at the fit) and the method chosen from them."""
    methods, target = s.methods, s.target
    if sigma > 0 and np.isfinite(params["alpha"]):
        law = {"form": form, **params}
        table = coverage(design, law, sigma, s.coverage_reps, methods, s.level, min(s.bootstrap, 200), s.seed + 1)
    else:  # an exact fit: nothing random to simulate
        table = {m: {"coverage": float("nan"), "median_width": float("nan"), "reps": 0} for m in methods}
    choice = (
        choose_method(table, target)
        if sigma > 0
        else {
            "method": methods[0],
            "coverage": float("nan"),
            "calibrated": False,
            "target": target,
            "shortfall": float("nan"),
        }
    )
    return table, choice


def _interval_text(alpha, lo, hi, flags, status, sigma, choice, open_end, level, target) -> tuple[float, float, str]:
    """The interval (NaN where it is withheld) and its words: the method, its measured coverage, or why
    there is no interval."""
    method = choice["method"]
    codes = {f["code"] for f in flags}
    withheld = None
    # an interval off its estimate by rounding (the estimate and the draws solved separately) does not
    # exclude it; 1e-9 is far below the 3 decimals an interval is printed with
    slack = 1e-9 * max(1.0, abs(alpha))
    if status != "converged" and not (lo - slack <= alpha <= hi + slack):
        withheld = f"no interval: the {status} fit's {method} interval [{lo:.3f}, {hi:.3f}] excludes its own estimate"
    elif sigma == 0 and status != "converged":
        withheld = f"no interval: a {status} fit with no noise to measure its coverage at"
    elif codes & ARTEFACTS:
        withheld = f"no interval: {next(f['message'] for f in flags if f['code'] in ARTEFACTS)}"
    if withheld:
        lo = hi = float("nan")
    cov_text = (
        f"measured coverage {choice['coverage']:.0%} at this design"
        if np.isfinite(choice["coverage"])
        else "coverage not measurable (no noise)"
    )
    if not choice["calibrated"] and np.isfinite(choice["shortfall"]):
        cov_text += f"; not calibrated: {choice['shortfall']:.0%} short of {target:.0%}"
    text = withheld or (
        f"[{lo:.3f}, {hi:.3f}] ({level:.0%} {method}; {cov_text}"
        + ("; open: reaches the end of the search range" if open_end else "")
        + ")"
    )
    return lo, hi, text


def _fit_with_draws(n, y, form, s: FitSettings):
    n, y = check_rows(n, y, form)
    unknown = set(s.methods) - set(METHODS)
    if not s.methods or unknown:
        raise ValueError(f"methods must be a non-empty subset of {', '.join(METHODS)}")
    s = replace(s, methods=tuple(m for m in METHODS if m in s.methods))
    rng = np.random.default_rng(s.seed)
    computed = tuple(m for m in METHODS if m in s.methods or (form == "offset" and m == "parametric"))  # E's interval
    res = interval_batch(n, y[None], form, s.level, computed, s.bootstrap, rng, keep_samples=True)
    fit = res["fit"]
    params = {"E": float(fit["E"][0]), "B": float(fit["B"][0]), "alpha": float(fit["alpha"][0])}
    pred = params["E"] + params["B"] * n ** -params["alpha"]
    rmse = float(np.sqrt(np.mean((np.log(pred) - np.log(y)) ** 2)))
    sizes, idx = size_index(n)
    sigma, source = _noise(res, len(y), form)
    flags = flags_1d(n, y, form, params)
    intervals = {m: [float(res[m]["lo"][0]), float(res[m]["hi"][0])] for m in s.methods}
    design = Design(tuple(float(size) for size in sizes), tuple(int(c) for c in np.bincount(idx)))
    table, choice = _measured_coverage(design, form, params, sigma, s)
    method = choice["method"]
    status = _status(flags)
    open_end = method == "profile" and bool(res["profile"]["open_hi"][0] or res["profile"]["open_lo"][0])
    lo, hi, text = _interval_text(
        params["alpha"], *intervals[method], flags, status, sigma, choice, open_end, s.level, s.target
    )
    if method == "profile":
        draws = profile_samples(np.log(n), y, fit, form, rng)
    else:
        draws = res[method]["samples"][0]
    entry = {
        "form": form,
        "alpha": params["alpha"],
        "params": params,
        "rmse_log": rmse,
        "status": status,
        "flags": flags,
        "interval": {"lo": lo, "hi": hi, "level": s.level, "method": method, "open": open_end, **choice, "text": text},
        "intervals": intervals,
        "coverage": table,
        "noise": {"sigma_log": sigma, "source": source},
        "design": {"sizes": list(design.sizes), "seeds_per_size": list(design.seeds)},
    }
    if form == "offset":
        e = res["parametric"]["E_samples"][0]
        q = np.quantile(e[np.isfinite(e)], [(1 - s.level) / 2, (1 + s.level) / 2])
        entry["E_interval"] = {"lo": float(q[0]), "hi": float(q[1]), "method": "parametric"}
    return entry, draws


def _test(entry: dict, draws, kw: dict, level: float, margin: float, seed: int) -> dict:
    """The prediction test `kw` of one fit (undecided where the fit decides nothing)."""
    if np.isfinite(draws).sum() < 2:  # as many parameters as runs: no residual to draw from
        return _no_test(entry, kw, level, margin)
    iv = (entry["interval"]["lo"], entry["interval"]["hi"])
    t = prediction_test(draws, level=level, margin=margin, seed=seed, alpha_interval=iv, **kw)
    return _undecided(t, entry)


def window_dependence(rng_out: dict, curvature: dict | None, level: float) -> dict:
    """Whether the local slope changes across the sizes: two windows of 3 consecutive sizes whose loglog
    intervals are disjoint, or curvature significant at 1 - level. "top": the sizes of the top window."""
    wins = [e for e in rng_out["entries"] if e["range"].startswith("window")]
    reasons = []
    pairs = [(a, b) for i, a in enumerate(wins) for b in wins[i + 1 :] if a["hi"] < b["lo"] or b["hi"] < a["lo"]]
    if pairs:
        a, b = pairs[0]
        reasons.append(
            f"local slopes differ: {a['alpha']:.3f} [{a['lo']:.3f}, {a['hi']:.3f}] on n {a['sizes'][0]:.4g}-"
            f"{a['sizes'][-1]:.4g} against {b['alpha']:.3f} [{b['lo']:.3f}, {b['hi']:.3f}] on n "
            f"{b['sizes'][0]:.4g}-{b['sizes'][-1]:.4g}"
        )
    if curvature is not None and np.isfinite(curvature["p_value"]) and curvature["p_value"] < 1 - level:
        reasons.append(f"curvature is significant (p = {curvature['p_value']:.2g})")
    top = wins[-1]["sizes"] if wins else None
    dependent = bool(reasons) and top is not None
    return {"dependent": dependent, "reasons": reasons, "top": top}


def _on_top_window(top: dict, full: dict, bend: dict, alpha: float) -> dict:
    """The top window's test as the verdict, labelled window-dependent, with the full range's beside it."""
    lo, hi = bend["top"][0], bend["top"][-1]
    where = f"on the top window, sizes {lo:,.0f}-{hi:,.0f}, alpha-hat = {alpha:.3f}"
    out = {**top, "window_dependent": True, "window": list(bend["top"]), "full_range": full}
    out["verdict"] = f"{top['verdict']} ({WINDOW_DEPENDENT})"
    out["paper_verdict"] = top["paper_verdict"]  # the same test at the paper's margin: labelled once, in "verdict"
    out["words"] = (
        f"{top['words']} ({WINDOW_DEPENDENT}: {where}; {'; '.join(bend['reasons'])}; on all sizes: {full['verdict']})"
    )
    return out


def _undecided(test: dict, entry: dict) -> dict:
    """A prediction test on a degenerate or ill-posed fit decides nothing: its verdict says why."""
    if entry["status"] == "converged":
        return test
    why = "; ".join(f["message"] for f in entry["flags"])
    verdict = f"undecided: {entry['status']} fit"
    return {**test, "outcome": "undecided", "verdict": verdict, "edge": False, "words": f"{verdict} ({why})"}


def _no_test(entry: dict, kw: dict, level: float, margin: float) -> dict:
    """The prediction test of a fit with no residual degrees of freedom: nothing to decide with."""
    runs, p = sum(entry["design"]["seeds_per_size"]), N_PARAMS[entry["form"]]
    verdict = "undecided: too few runs"
    nan = float("nan")
    return {
        "kind": kw.get("kind", "D"),
        "beta": kw.get("beta", 1.0),
        "d_source": "none",
        "alpha_pred": nan,
        "alpha_pred_ci": [nan, nan],
        "difference": nan,
        "difference_ci": [nan, nan],
        "equivalence_ci": [nan, nan],
        "p_value": nan,
        "p_value_floor": nan,
        "level": level,
        "size": SIZE,
        "margin": margin,
        "outcome": "undecided",
        "verdict": verdict,
        "paper_margin": PAPER_MARGIN,
        "paper_verdict": verdict,
        "edge": False,
        "exact": False,
        "words": f"{verdict} ({runs} runs for the {p} parameters of the {entry['form']} law: no residual left)",
    }


def fit_exponent(sizes, losses, form: str = "offset", settings: FitSettings | None = None, **overrides) -> dict:
    """One form's fit, flags, every method's interval, their measured coverage and the chosen interval.

    settings: a FitSettings (the defaults when None); keyword overrides replace its fields by name
    (level=, coverage_reps=, bootstrap=, seed=, target=, methods=)."""
    return _fit_with_draws(sizes, losses, form, FitSettings.of(settings, **overrides))[0]


def curvature_test(sizes, losses, level: float = 0.95) -> dict:
    """F test of the offset law against its E = 0 face (the power law, a line in log-log): does the
    curve bend, and toward a floor E > 0?"""
    n, y = check_rows(sizes, losses, "offset")
    logn = np.log(n)
    off, pw = fit_batch(logn, y[None], "offset"), fit_batch(logn, y[None], "power")
    df = len(y) - 3
    if df < 1:
        return {
            "F": float("nan"),
            "p_value": float("nan"),
            "floor": False,
            "E": float(off["E"][0]),
            "words": "too few runs for a curvature test",
        }
    rss_o, rss_p = float(off["rss"][0]), float(pw["rss"][0])
    gain = rss_p - rss_o
    if off["E"][0] == 0 or gain <= 1e-12 * rss_p:  # the same law (E on its bound) or a rounding difference:
        gain = 0.0  # an F of 1e-15 would print a different digit on every CPU
    F = max(gain, 0.0) / max(rss_o / df, 1e-300)
    p = float(stats.f.sf(F, 1, df))
    E = float(off["E"][0])
    floor = bool(p < 1 - level and E > 0)
    if floor:
        words = (
            f"the offset law fits significantly better than the power law (F = {F:.3g}, p = {p:.2g}): "
            f"the loss bends toward a floor E = {E:.4g} ({E / y.min():.0%} of the smallest loss)"
        )
    else:
        words = f"no significant curvature (F = {F:.3g}, p = {p:.2g}): the data do not identify a floor"
    return {"F": F, "p_value": p, "df": df, "floor": floor, "E": E, "words": words}


def _windows(sizes: np.ndarray) -> list[tuple[str, np.ndarray]]:
    K = len(sizes)
    out = [("all sizes", sizes)]
    if K >= 4:  # with 3 sizes the upper half and the one window would repeat "all sizes"
        out.append(("upper half", sizes[K // 2 :]))
        out += [(f"window {i + 1}", sizes[i : i + 3]) for i in range(K - 2)]
    return out


def range_sensitivity(
    sizes, losses, level: float = 0.95, prediction: dict | None = None, margin: float = MARGIN, seed: int = 0
) -> dict:
    """The loglog alpha-hat (with its exact t interval) on all sizes, the upper half and every window of
    3 consecutive sizes; with a prediction, the test's verdict on each range, and in words whether the
    verdict depends on the range."""
    n, y = check_rows(sizes, losses, "loglog")
    distinct = np.unique(n)
    rng = np.random.default_rng(seed)
    entries = []
    for name, part in _windows(distinct):
        sel = np.isin(n, part)
        if len(np.unique(n[sel])) < 2 or sel.sum() < 3:
            continue
        res = interval_batch(n[sel], y[sel][None], "loglog", level, ("profile",), rng=rng)
        e = {
            "range": name,
            "sizes": [float(v) for v in part],
            "alpha": float(res["fit"]["alpha"][0]),
            "lo": float(res["profile"]["lo"][0]),
            "hi": float(res["profile"]["hi"][0]),
        }
        if prediction is not None:
            draws = profile_samples(np.log(n[sel]), y[sel], res["fit"], "loglog", rng)
            t = prediction_test(
                draws, level=level, margin=margin, seed=seed, alpha_interval=(e["lo"], e["hi"]), **prediction
            )
            e["verdict"], e["difference_ci"] = t["verdict"], t["difference_ci"]
        entries.append(e)
    wins = [e for e in entries if e["range"].startswith("window")]
    words = []
    if len(wins) >= 2:
        first, last = wins[0], wins[-1]
        words.append(
            f"alpha-hat on windows of 3 sizes goes from {first['alpha']:.3f} (n {first['sizes'][0]:.4g}-"
            f"{first['sizes'][-1]:.4g}) to {last['alpha']:.3f} (n {last['sizes'][0]:.4g}-"
            f"{last['sizes'][-1]:.4g})"
            + (
                "; their intervals are disjoint: the local slope changes across the range"
                if first["hi"] < last["lo"] or last["hi"] < first["lo"]
                else ""
            )
        )
    verdicts = {e["verdict"] for e in entries if "verdict" in e}
    if len(verdicts) > 1:
        groups = {}
        for e in entries:
            groups.setdefault(e["verdict"], []).append(e["range"])
        words.append(
            "the verdict depends on the fit range: " + "; ".join(f"{v} on {', '.join(r)}" for v, r in groups.items())
        )
    elif verdicts:
        words.append(f"the verdict is the same on every range ({verdicts.pop()})")
    return {"entries": entries, "words": "; ".join(words), "method": f"loglog, exact t interval ({level:.0%})"}


def exponent_report(
    sizes,
    losses,
    *,
    forms=FORMS_1D,
    prediction: dict | None = None,
    predictions: dict | None = None,
    margin: float = MARGIN,
    settings: FitSettings | None = None,
    **overrides,
) -> dict:
    """Everything a report prints about one exponent (see the module docstring and /work/notes/fit-api.md).

    prediction: None, or keyword arguments of `prediction_test` besides the draws, e.g.
    {"kind": "D", "beta": 1.0, "d": 2} or {"kind": "D", "beta": 1.0, "d_hat": 3.1, "d_ci": [2.8, 3.4]}.
    predictions: further named tests, e.g. {"true d": {"d": 4}, "d-hat": {"d_hat": 3.6, "d_ci": [3.1, 4.2]}},
    reported as out["predictions"][name][form] (the range sensitivity uses `prediction` only).
    settings: a FitSettings (the defaults when None), its fields replaced by keyword overrides (level=,
    coverage_reps=, bootstrap=, seed=, target=, methods=: see FitSettings).
    """
    s = FitSettings.of(settings, **overrides)
    level, seed = s.level, s.seed
    rng_out = range_sensitivity(sizes, losses, level, prediction, margin, seed)
    curvature = curvature_test(sizes, losses, level) if len(np.unique(sizes)) >= 3 else None
    bend = window_dependence(rng_out, curvature, level)
    asked = [(None, prediction)] * (prediction is not None) + list((predictions or {}).items())
    fits, tests, named = {}, {}, {}
    for form in forms:
        entry, draws = _fit_with_draws(sizes, losses, form, s)
        fits[form] = entry
        top = None
        # a straight line never averages a bend away: its verdict is the top window's. The offset law models the
        # bend (E + B n^-alpha: local slopes fall toward a floor), so its verdict stays on all sizes
        if bend["dependent"] and asked and form in STRAIGHT:
            keep = np.isin(np.asarray(sizes, dtype=np.float64).ravel(), bend["top"])
            top = _fit_with_draws(np.asarray(sizes)[keep], np.asarray(losses)[keep], form, s)
        for name, kw in asked:
            t = _test(entry, draws, kw, level, margin, seed)
            if top is not None:
                t = _on_top_window(_test(*top, kw, level, margin, seed), t, bend, top[0]["alpha"])
            if name is None:
                tests[form] = t
            else:
                named.setdefault(name, {})[form] = t
    out = {
        "fits": fits,
        "range": rng_out,
        "curvature": curvature,
        "windows": bend,
        "prediction": tests or None,
        "predictions": named or None,
    }
    words = []
    for form, e in fits.items():
        s = f"{form}: alpha-hat = {e['alpha']:.3f} {e['interval']['text']}"
        if e["status"] != "converged":
            s += f" [{e['status']}: " + "; ".join(f["message"] for f in e["flags"]) + "]"
        if form in tests:
            s += f"; {tests[form]['words']}"
        words.append(s)
    if out["curvature"]:
        words.append(out["curvature"]["words"])
    if out["range"]["words"]:
        words.append(out["range"]["words"])
    out["words"] = ". ".join(words) + "."
    return out
