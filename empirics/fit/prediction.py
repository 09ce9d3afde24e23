"""The paper's prediction as a test: alpha-hat against alpha_D = 2 beta/(2 beta + d) or alpha_N = 2 beta/d
(eq. 3-4), with the uncertainty of both sides.

alpha-hat enters through draws from the confidence distribution of the interval method the report uses
(`tmcheck.empirics.fit.intervals`); d enters as known (synthetic data), as bootstrap draws of d-hat, or
(when only an interval of d-hat is stored) as a normal with that interval. The two are independent
(different data: the loss curve and the embeddings), so the difference is drawn pairwise at random.
With d known the prediction is a number, and the displayed interval is the method's own interval of
alpha-hat shifted by it (exact); the decision reads the 1 - 2a interval of the draws (Monte Carlo).

The decision is an equivalence test against a stated margin δ (MARGIN, default 0.05), never "the interval
excludes 0". With a = SIZE (0.05) and [lo, hi] the 1 - 2a (90%) interval of alpha-hat - alpha_pred:
- "equivalent within ±δ" when [lo, hi] lies inside [-δ, δ]: both one-sided tests (TOST) reject a
  difference of δ or more at level a. An interval that also excludes 0 adds "with a detectable bias of X":
  a pre-asymptotic bias smaller than the margin is reported, not called a refutation;
- "differs by more than δ" when [lo, hi] lies outside [-δ, δ] (lo > δ or hi < -δ): a level-a test that
  the difference exceeds the margin;
- "undecided at ±δ" otherwise: the data cannot tell.
Each test is also decided at the paper's own margin (PAPER_MARGIN, ±0.02), reported beside δ. The displayed
interval (`difference_ci`) stays the one at `level` (95%). A verdict whose interval end lies within
EDGE x δ of ±δ is labelled "at the edge": a little more or less data could flip it.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from tmcheck.theory.bounds import alpha_D, alpha_N

DRAWS = 4000
EDGE = 0.1  # a verdict within 10% of the margin is at the edge
MARGIN = 0.05  # δ, the default equivalence margin of alpha-hat - alpha_pred
PAPER_MARGIN = 0.02  # the paper's own claim (alpha-hat within 0.02 of the prediction), reported beside δ
SIZE = 0.05  # a, the level of each one-sided test: the decision reads the 1 - 2a interval
OUTCOMES = ("equivalent", "differs", "undecided")


def decide(lo: float, hi: float, margin: float) -> str:
    """The outcome of the equivalence rule for the 1 - 2a interval [lo, hi] of a difference (module doc)."""
    if not margin > 0:
        raise ValueError(f"the margin must be positive, got {margin}")
    if -margin <= lo and hi <= margin:
        return "equivalent"
    if lo > margin or hi < -margin:
        return "differs"
    return "undecided"


def rule_words(margin: float = MARGIN) -> str:
    """The rule in one paragraph, as every report states it."""
    return (
        f"Each prediction is an equivalence test with margin δ = {margin:g}: with [lo, hi] the "
        f"{1 - 2 * SIZE:.0%} interval of α̂ − α (two one-sided tests at {SIZE:.0%} each), the verdict is "
        f'"equivalent within ±{margin:g}" when [lo, hi] lies inside [−δ, δ] (with "a detectable bias" when it '
        f'also excludes 0), "differs by more than {margin:g}" when it lies outside, and "undecided" otherwise; '
        f"each test is also decided at the paper's own ±{PAPER_MARGIN:g}."
    )


def verdict_class(verdict: str) -> str:
    """A verdict without its numbers, for counting verdicts: 'equivalent within ±0.05, with a detectable
    bias of +0.034' -> 'equivalent within ±0.05 (with a detectable bias)'; other verdicts unchanged."""
    head, sep, _ = verdict.partition(", with a detectable bias of ")
    return f"{head} (with a detectable bias)" if sep else verdict


def verdict_words(outcome: str, margin: float, lo: float, hi: float, centre: float) -> str:
    """'equivalent within ±0.05' (with its detectable bias), 'differs by more than 0.05', 'undecided at ±0.05'."""
    if outcome == "equivalent":
        bias = f", with a detectable bias of {centre:+.3f}" if lo > 0 or hi < 0 else ""
        return f"equivalent within ±{margin:g}{bias}"
    if outcome == "differs":
        return f"differs by more than {margin:g}"
    return f"undecided at ±{margin:g}"


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
    margin: float = MARGIN,
    seed: int = 0,
    alpha_interval=None,
) -> dict:
    """Interval of alpha-hat - alpha_pred, a two-sided p-value for "no difference", and the verdict of the
    equivalence rule (module doc) at `margin` and at PAPER_MARGIN.

    alpha_interval: the (lo, hi) interval of alpha-hat at `level` that the draws come from; with a
    known d the displayed interval at `level` is taken from it exactly. "edge" says whether the verdict
    lies within EDGE x margin of flipping."""
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
    e_lo, e_hi = (float(v) for v in np.quantile(diff, [SIZE, 1 - SIZE]))
    exact = d is not None and alpha_interval is not None and all(np.isfinite(alpha_interval))
    if exact:
        shift = float(pred[0])
        lo, hi = float(alpha_interval[0]) - shift, float(alpha_interval[1]) - shift
        d_source = "known d (the interval of alpha-hat, shifted: exact)"
    p_lo, p_hi = (float(v) for v in np.quantile(pred, q))
    p_value = min(1.0, 2 * min(np.mean(diff <= 0), np.mean(diff >= 0)))
    p_floor = 1.0 / len(diff)
    centre_diff = float(np.median(diff))
    outcome = decide(e_lo, e_hi, margin)
    verdict = verdict_words(outcome, margin, e_lo, e_hi, centre_diff)
    paper = verdict_words(decide(e_lo, e_hi, PAPER_MARGIN), PAPER_MARGIN, e_lo, e_hi, centre_diff)
    gap = min(abs(e_lo - margin), abs(e_lo + margin), abs(e_hi - margin), abs(e_hi + margin))
    edge = gap <= EDGE * margin
    d_point = d if d is not None else d_hat if d_hat is not None else float(np.median(d_draws))
    centre = float(_predicted(kind, float(d_point), beta))
    p_text = f"p < {p_floor:.1g}" if p_value < p_floor else f"p = {p_value:.2g}"
    name = "alpha_D = 2beta/(2beta+d)" if kind == "D" else "alpha_N = 2beta/d"
    tost = f"{1 - 2 * SIZE:.0%}"
    words = (
        f"alpha-hat - {name}: {centre_diff:+.3f} [{lo:+.3f}, {hi:+.3f}] ({level:.0%}), {p_text}; "
        f"{verdict} ({tost} interval [{e_lo:+.3f}, {e_hi:+.3f}]"
        + (f", at the edge: an end within {EDGE:.0%} of ±{margin:g}" if edge else "")
        + f"; at the paper's ±{PAPER_MARGIN:g}: {paper})"
    )
    return {
        "kind": kind,
        "beta": beta,
        "d_source": d_source,
        "alpha_pred": centre,
        "alpha_pred_ci": [p_lo, p_hi],
        "difference": centre_diff,
        "difference_ci": [lo, hi],
        "equivalence_ci": [e_lo, e_hi],
        "p_value": float(p_value),
        "p_value_floor": p_floor,
        "level": level,
        "size": SIZE,
        "margin": margin,
        "outcome": outcome,
        "verdict": verdict,
        "paper_margin": PAPER_MARGIN,
        "paper_verdict": paper,
        "edge": bool(edge),
        "exact": bool(exact),
        "words": words,
    }


def predict_exponents(
    d: float | None = None,
    beta: float = 1.0,
    alpha_N: float | None = None,
    alpha_D_obs: float | None = None,
    d_ci=None,
    alpha_hat: float | None = None,
    alpha_ci=None,
    margin: float = MARGIN,
) -> dict:
    """The exponents from an ID (eq. 3-4), or one exponent from the other (Section 3, Table 1); with
    `alpha_hat` and its 95% interval `alpha_ci`, the prediction test against alpha_D (normal draws from
    that interval; exact when d is known). Exactly one of d, alpha_N, alpha_D_obs. ValueError on bad input."""
    from tmcheck.theory import bounds

    given = [k for k, v in (("--id", d), ("--alpha-n", alpha_N), ("--alpha-d", alpha_D_obs)) if v is not None]
    if len(given) != 1:
        raise ValueError("give exactly one of --id, --alpha-n, --alpha-d")
    if d is not None:
        out = {"d": d, "beta": beta, "alpha_D": bounds.alpha_D(d, beta), "alpha_N": bounds.alpha_N(d, beta)}
    elif alpha_N is not None:
        a_d = bounds.alpha_D_from_alpha_N(alpha_N)
        out = {"alpha_N": alpha_N, "alpha_D": a_d, "implied_d": 2 * beta / alpha_N, "beta": beta}
    else:
        a_n = bounds.alpha_N_from_alpha_D(alpha_D_obs)
        out = {"alpha_D": alpha_D_obs, "alpha_N": a_n, "implied_d": bounds.id_from_alpha_D(alpha_D_obs, beta)}
        out["beta"] = beta
    if d_ci is not None:
        if d is None:
            raise ValueError("--id-ci needs --id")
        if d_ci[0] <= 0:
            raise ValueError("--id-ci: the intrinsic dimension is positive")
        # both exponents decrease in d, so the interval maps end to end
        out["alpha_D_ci"] = [bounds.alpha_D(d_ci[1], beta), bounds.alpha_D(d_ci[0], beta)]
        out["alpha_N_ci"] = [bounds.alpha_N(d_ci[1], beta), bounds.alpha_N(d_ci[0], beta)]
    if alpha_hat is not None:
        if d is None:
            raise ValueError("--alpha-hat needs --id (the prediction it is tested against)")
        if alpha_ci is None:
            raise ValueError("--alpha-hat needs --alpha-ci (its 95% interval): a test needs the uncertainty")
        sd = (alpha_ci[1] - alpha_ci[0]) / (2 * stats.norm.ppf(0.975))
        draws = alpha_hat + sd * np.random.default_rng(0).standard_normal(DRAWS)
        d_kw = {"d": d} if d_ci is None else {"d_hat": d, "d_ci": list(d_ci)}
        out["test"] = prediction_test(draws, kind="D", beta=beta, margin=margin, alpha_interval=tuple(alpha_ci), **d_kw)
    return out
