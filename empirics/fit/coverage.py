"""Measured coverage of the exponent intervals at a sweep's exact design, and the choice of method.

`coverage(design, law, noise, reps)` simulates `reps` sweeps with the design's sizes and seeds, the
law's values and log-normal per-seed noise of the size the real seeds show, computes every method's
nominal-`level` interval on each (`tmcheck.empirics.fit.intervals`) and counts how often the true exponent
is inside. `choose_method` takes the narrowest method whose coverage reaches COVERAGE_TARGET; when
none does, the best-covering one, marked not calibrated with its shortfall.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tmcheck.empirics.fit import prediction
from tmcheck.empirics.fit.intervals import METHODS, interval_batch

COVERAGE_TARGET = 0.93
PROFILE_REPS = 2000  # simulated sweeps for the profile interval (cheap: one fit each)


@dataclass(frozen=True)
class Design:
    """The sizes of a sweep and how many seeds each has (one int: the same for every size)."""

    sizes: tuple
    seeds: tuple | int = 2

    def rows(self) -> np.ndarray:
        counts = (self.seeds,) * len(self.sizes) if isinstance(self.seeds, int) else tuple(self.seeds)
        if len(counts) != len(self.sizes) or min(counts) < 1:
            raise ValueError("a design needs one seed count >= 1 per size")
        return np.repeat(np.asarray(self.sizes, dtype=np.float64), counts)


def simulated_sweeps(design: Design, law: dict, noise: float, reps: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """(sizes n (m,), losses Y (reps, m)): the law {"form", "E", "B", "alpha"} at the design's rows with
    log-normal per-run noise of SD `noise` (the SD of log loss between seeds)."""
    if not (np.isfinite(noise) and noise > 0):
        raise ValueError(f"the noise must be a positive SD of log loss, got {noise}")
    n = design.rows()
    truth = law.get("E", 0.0) + law["B"] * n ** -law["alpha"]
    return n, truth[None, :] * np.exp(noise * rng.standard_normal((reps, len(n))))


def coverage(
    design: Design,
    law: dict,
    noise: float,
    reps: int = 200,
    methods=METHODS,
    level: float = 0.95,
    bootstrap: int = 200,
    seed: int = 0,
    profile_reps: int = PROFILE_REPS,
) -> dict:
    """{method: {"coverage", "median_width", "reps"}} for the law {"form", "E", "B", "alpha"} at the design.

    The noise is the SD of log loss between seeds; it is re-estimated from each simulated sweep, as the
    real one is, so the simulation includes the error of that estimate. The bootstrap methods run on
    `reps` simulated sweeps; the profile interval, one fit per sweep, on `profile_reps` of them (at least
    `reps`), so that its Monte Carlo error (about 0.5% at 2000) does not decide whether it is calibrated.
    """
    rng = np.random.default_rng(seed)
    n, Y = simulated_sweeps(design, law, noise, max(reps, profile_reps if "profile" in methods else 0), rng)
    res = {}
    if "profile" in methods:
        res.update(interval_batch(n, Y, law["form"], level, ("profile",), bootstrap, rng))
    boot = tuple(m for m in methods if m != "profile")
    if boot:
        res.update(interval_batch(n, Y[:reps], law["form"], level, boot, bootstrap, rng))
    out = {}
    for method in methods:
        lo, hi = res[method]["lo"], res[method]["hi"]
        inside = (lo <= law["alpha"]) & (law["alpha"] <= hi)
        width = (hi - lo)[np.isfinite(hi - lo)]
        out[method] = {
            "coverage": float(np.mean(inside)),
            "median_width": float(np.median(width)) if len(width) else float("nan"),
            "reps": int(len(lo)),
        }
    return out


def choose_method(table: dict, target: float = COVERAGE_TARGET) -> dict:
    """The method a report uses: the narrowest whose coverage clears the target by one binomial standard
    error of the simulation (so that a method at the target by luck of the draw is not preferred),
    else the best-covering one; `calibrated` is whether the chosen one reaches the target."""
    margin = {m: np.sqrt(target * (1 - target) / max(table[m]["reps"], 1)) for m in table}
    ok = [m for m in table if table[m]["coverage"] >= target + margin[m]]
    if ok:
        best = min(ok, key=lambda m: (table[m]["median_width"], METHODS.index(m)))
    else:
        best = max(table, key=lambda m: (table[m]["coverage"], -METHODS.index(m)))
    cov = table[best]["coverage"]
    return {
        "method": best,
        "coverage": cov,
        "calibrated": cov >= target,
        "target": target,
        "shortfall": max(0.0, target - cov),
    }


def _rule_intervals(design: Design, law: dict, noise: float, reps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The 1 - 2a profile intervals of alpha the equivalence rule reads, on `reps` simulated sweeps."""
    rng = np.random.default_rng(seed)
    n, Y = simulated_sweeps(design, law, noise, reps, rng)
    res = interval_batch(n, Y, law["form"], 1 - 2 * prediction.SIZE, ("profile",), rng=rng)["profile"]
    return res["lo"], res["hi"]


def _rates(lo: np.ndarray, hi: np.ndarray, alpha: float, shift: float, margin: float) -> dict:
    """How often each outcome is decided when the true difference alpha - prediction is `shift`."""
    pred = alpha - shift
    out = [prediction.decide(a - pred, b - pred, margin) for a, b in zip(lo, hi, strict=True)]
    return {k: out.count(k) / len(out) for k in ("equivalent", "differs", "undecided")}


def rule_error_rates(design: Design, law: dict, noise: float, margin: float, reps: int = PROFILE_REPS, seed: int = 0):
    """The equivalence rule's error rates at a design (tmcheck.empirics.fit.prediction), by simulation.

    The sweeps are drawn as `coverage` draws them (`simulated_sweeps`: the law's values, log-normal per-run noise of SD
    `noise`, re-estimated from each sweep), and each gets the 1 - 2a profile interval of alpha the rule
    reads. The prediction is placed at a true difference of +margin, -margin (the margin's edge: a
    calibrated rule says "equivalent" there at most a = SIZE of the time, and "differs" at most a) and 0
    (the power: how often a true prediction is called "equivalent"). Returns {"equivalent_at_edge",
    "differs_at_edge" (the larger of the two edges), "equivalent_at_zero", "differs_at_zero", "reps",
    "nominal"}."""
    lo, hi = _rule_intervals(design, law, noise, reps, seed)
    edges = [_rates(lo, hi, law["alpha"], s, margin) for s in (margin, -margin)]
    zero = _rates(lo, hi, law["alpha"], 0.0, margin)
    return {
        "equivalent_at_edge": max(e["equivalent"] for e in edges),
        "differs_at_edge": max(e["differs"] for e in edges),
        "equivalent_at_zero": zero["equivalent"],
        "differs_at_zero": zero["differs"],
        "reps": reps,
        "nominal": prediction.SIZE,
    }


POWER = 0.8  # the probability at which a difference counts as detectable
SHIFTS = np.round(np.arange(0.0, 1.0001, 0.01), 2)  # the true differences scanned for the detectable one


def detectable_difference(lo: np.ndarray, hi: np.ndarray, alpha: float, margin: float, power: float = POWER) -> float:
    """The smallest true difference |alpha - prediction| (on SHIFTS) called "differs" with probability at
    least `power` at both signs; inf when none up to 1 is."""
    for shift in SHIFTS:
        if min(_rates(lo, hi, alpha, sg * shift, margin)["differs"] for sg in (1, -1)) >= power:
            return float(shift)
    return float("inf")


def verdict_power(design: Design, law: dict, noise: float, margin: float, reps: int = 1000, seed: int = 0) -> dict:
    """At one design: P(equivalent) when the prediction is true, P(differs) at a true difference of two
    margins, and the detectable difference (at POWER), for a law with the seeds' noise, read through the
    rule's own intervals (1 - 2a profile) on `reps` simulated sweeps."""
    lo, hi = _rule_intervals(design, law, noise, reps, seed)
    zero = _rates(lo, hi, law["alpha"], 0.0, margin)
    far = min(_rates(lo, hi, law["alpha"], sg * 2 * margin, margin)["differs"] for sg in (1, -1))
    return {
        "equivalent_if_true": zero["equivalent"],
        "undecided_if_true": zero["undecided"],
        "differs_at_2_margins": far,
        "detectable": detectable_difference(lo, hi, law["alpha"], margin),
        "reps": reps,
    }


def power_table(
    top_n: float,
    per_decade: float,
    law: dict,
    noise: float,
    margin: float,
    seeds=(3, 5, 10, 20),
    decades=(1, 2, 3),
    reps: int = 1000,
    seed: int = 0,
) -> list[dict]:
    """verdict_power over designs that end at `top_n` and span each of `decades` with `per_decade` sizes a
    decade (evenly in log n, at least 3 sizes), each size with each number of `seeds`: what the study
    would decide with more seeds or more decades, at its own law and noise."""
    out = []
    for span in decades:
        k = max(3, round(per_decade * span) + 1)
        sizes = tuple(float(v) for v in np.logspace(np.log10(top_n) - span, np.log10(top_n), k))
        for s in seeds:
            out.append(
                {
                    "decades": span,
                    "sizes": k,
                    "seeds": s,
                    **verdict_power(Design(sizes, s), law, noise, margin, reps, seed),
                }
            )
    return out
