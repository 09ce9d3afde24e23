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


def rule_error_rates(design: Design, law: dict, noise: float, margin: float, reps: int = PROFILE_REPS, seed: int = 0):
    """The equivalence rule's error rates at a design (tmcheck.empirics.fit.prediction), by simulation.

    The sweeps are drawn as `coverage` draws them (`simulated_sweeps`: the law's values, log-normal per-run noise of SD
    `noise`, re-estimated from each sweep), and each gets the 1 - 2a profile interval of alpha the rule
    reads. The prediction is placed at a true difference of +margin, -margin (the margin's edge: a
    calibrated rule says "equivalent" there at most a = SIZE of the time, and "differs" at most a) and 0
    (the power: how often a true prediction is called "equivalent"). Returns {"equivalent_at_edge",
    "differs_at_edge" (the larger of the two edges), "equivalent_at_zero", "differs_at_zero", "reps",
    "nominal"}."""
    rng = np.random.default_rng(seed)
    n, Y = simulated_sweeps(design, law, noise, reps, rng)
    res = interval_batch(n, Y, law["form"], 1 - 2 * prediction.SIZE, ("profile",), rng=rng)["profile"]

    def rates(shift: float) -> dict:
        pred = law["alpha"] - shift  # the true difference alpha - pred is `shift`
        out = [prediction.decide(lo - pred, hi - pred, margin) for lo, hi in zip(res["lo"], res["hi"], strict=True)]
        return {k: out.count(k) / reps for k in ("equivalent", "differs", "undecided")}

    edges, zero = [rates(margin), rates(-margin)], rates(0.0)
    return {
        "equivalent_at_edge": max(e["equivalent"] for e in edges),
        "differs_at_edge": max(e["differs"] for e in edges),
        "equivalent_at_zero": zero["equivalent"],
        "differs_at_zero": zero["differs"],
        "reps": reps,
        "nominal": prediction.SIZE,
    }
