"""The paper's prediction as a test: alpha-hat against alpha_D = 2 beta/(2 beta + d) or alpha_N = 2 beta/d
(eq. 3-4), with the uncertainty of both sides.

alpha-hat enters through draws from the confidence distribution of the interval method the report uses
(`tmcheck.empirics.fit.intervals`); d enters as known (synthetic data), as bootstrap draws of d-hat, or
(when only an interval of d-hat is stored) as a normal with that interval. The two are independent
(different data: the loss curve and the embeddings), so the difference is drawn pairwise at random.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from tmcheck.theory.bounds import alpha_D, alpha_N

DRAWS = 4000


def _predicted(kind: str, d: float, beta: float) -> float:
    if kind == "D":
        return alpha_D(d, beta)
    if kind == "N":
        return alpha_N(d, beta)
    raise ValueError(f"kind must be 'D' (data exponent) or 'N' (model exponent), got {kind!r}")


def _d_draws(d, d_hat, d_samples, d_ci, level, rng) -> tuple[np.ndarray, str]:
    if d is not None:
        return np.full(DRAWS, float(d)), "known d"
    if d_samples is not None:
        s = np.asarray(d_samples, dtype=np.float64)
        s = s[np.isfinite(s) & (s > 0)]
        if len(s) < 2:
            raise ValueError("d_samples holds fewer than two positive finite draws")
        return rng.choice(s, DRAWS), f"bootstrap of d-hat ({len(s)} draws)"
    if d_hat is not None and d_ci is not None:
        sd = (d_ci[1] - d_ci[0]) / (2 * stats.norm.ppf((1 + level) / 2))
        s = d_hat + sd * rng.standard_normal(4 * DRAWS)
        return s[s > 0][:DRAWS], "normal with the stored interval of d-hat"
    if d_hat is not None:
        return np.full(DRAWS, float(d_hat)), "d-hat without an interval (its uncertainty is left out)"
    raise ValueError("give d (known), d_samples, or d_hat (with d_ci)")


def prediction_test(
    alpha_samples,
    *,
    kind: str = "D",
    beta: float = 1.0,
    d=None,
    d_hat=None,
    d_samples=None,
    d_ci=None,
    level: float = 0.95,
    tolerance: float = 0.1,
    seed: int = 0,
) -> dict:
    """Interval of alpha-hat - alpha_pred, a two-sided p-value for "no difference", and the verdict:
    "consistent at <level>" (interval contains 0 and its half-width <= tolerance), "inconsistent"
    (interval excludes 0), or "not decidable at this precision" (contains 0 but wider than +-tolerance)."""
    rng = np.random.default_rng(seed)
    a = np.asarray(alpha_samples, dtype=np.float64)
    a = a[np.isfinite(a)]
    if len(a) < 2:
        raise ValueError("need at least two finite draws of alpha-hat")
    d_draws, d_source = _d_draws(d, d_hat, d_samples, d_ci, level, rng)
    pred = np.array([_predicted(kind, float(v), beta) for v in d_draws])
    diff = rng.choice(a, len(pred)) - pred
    q = [(1 - level) / 2, (1 + level) / 2]
    lo, hi = (float(v) for v in np.quantile(diff, q))
    p_lo, p_hi = (float(v) for v in np.quantile(pred, q))
    p_value = min(1.0, 2 * min(np.mean(diff <= 0), np.mean(diff >= 0)))
    p_floor = 1.0 / len(diff)
    if not lo <= 0 <= hi:
        verdict = "inconsistent"
    elif (hi - lo) / 2 > tolerance:
        verdict = "not decidable at this precision"
    else:
        verdict = f"consistent at {level:.0%}"
    d_point = d if d is not None else d_hat if d_hat is not None else float(np.median(d_draws))
    centre = float(_predicted(kind, float(d_point), beta))
    p_text = f"p < {p_floor:.1g}" if p_value < p_floor else f"p = {p_value:.2g}"
    name = "alpha_D = 2beta/(2beta+d)" if kind == "D" else "alpha_N = 2beta/d"
    words = (
        f"alpha-hat - {name}: {float(np.median(diff)):+.3f} [{lo:+.3f}, {hi:+.3f}] ({level:.0%}), {p_text}; "
        f"{verdict}" + (f" (tolerance +-{tolerance:g})" if verdict.startswith("not decidable") else "")
    )
    return {
        "kind": kind,
        "beta": beta,
        "d_source": d_source,
        "alpha_pred": centre,
        "alpha_pred_ci": [p_lo, p_hi],
        "difference": float(np.median(diff)),
        "difference_ci": [lo, hi],
        "p_value": float(p_value),
        "p_value_floor": p_floor,
        "level": level,
        "tolerance": tolerance,
        "verdict": verdict,
        "words": words,
    }
