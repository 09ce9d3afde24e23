"""Scaling-law fitting against published fits, and the coverage of its intervals.

1. Chinchilla (Epoch AI's points from Hoffmann et al. Fig. 4, 240 after dropping the 5 highest
   losses): tmcheck's joint fit vs Epoch's published estimates (Besiroglu et al. 2024) and
   Hoffmann et al.'s reported law, with 1000-resample bootstrap intervals and the time taken.
2. Coverage: 200 synthetic data-scaling studies with realistic noise (10 dataset sizes over three
   orders of magnitude, 3 seeds each; a per-size log-normal error of 1% shared by its seeds plus
   0.5% per seed). Nominal 95% bootstrap intervals (resampling sizes, seeds together) should
   contain the true exponent at least 90% of the time.

Results go to benchmarks/results/fit.json.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "fit.json"
DATA = HERE.parent / "tests" / "data" / "chinchilla_svg_extracted.csv"
TRUTH = {"E": 1.8, "B": 60.0, "alpha": 0.35}


def chinchilla(n_boot: int = 1000) -> dict:
    from tmcheck.empirics.fit import EPOCH_CHINCHILLA, HOFFMANN_CHINCHILLA, chinchilla_points, fit_law, predict

    x, y = chinchilla_points(DATA)
    t0 = time.perf_counter()
    r = fit_law(x, y, form="joint", bootstrap=n_boot, seed=0)
    seconds = time.perf_counter() - t0

    def rmse(params):
        return float(np.sqrt(np.mean((np.log(predict("joint", params, x)) - np.log(y)) ** 2)))

    out = {
        "n_points": len(y), "seconds_with_bootstrap": seconds, "bootstrap": n_boot,
        "tmcheck": {"params": r.params, "ci": r.ci, "derived": r.derived, "derived_ci": r.derived_ci,
                    "huber_delta": r.huber_delta, "converged": r.converged, "rmse_log": rmse(r.params)},
        "epoch_published": {"params": {k: v[0] for k, v in EPOCH_CHINCHILLA.items()},
                            "se": {k: v[1] for k, v in EPOCH_CHINCHILLA.items()},
                            "rmse_log": rmse({k: v[0] for k, v in EPOCH_CHINCHILLA.items()})},
        "hoffmann_reported": {"params": HOFFMANN_CHINCHILLA, "rmse_log": rmse(HOFFMANN_CHINCHILLA)},
        "within_epoch_se": {k: abs(r.params[k] - v[0]) < v[1] for k, v in EPOCH_CHINCHILLA.items()},
    }
    print("Chinchilla: " + ", ".join(f"{k}={r.params[k]:.4g} (Epoch {v[0]} +- {v[1]})" for k, v in EPOCH_CHINCHILLA.items()))
    print(f"  log RMSE: tmcheck {out['tmcheck']['rmse_log']:.4f}, Epoch {out['epoch_published']['rmse_log']:.4f}, "
          f"Hoffmann {out['hoffmann_reported']['rmse_log']:.4f}; {seconds:.1f}s with {n_boot} bootstraps", flush=True)
    return out


def synthetic_study(rng: np.random.Generator, n_sizes: int = 10, n_seeds: int = 3):
    sizes = np.geomspace(1e6, 1e9, n_sizes)
    x = np.repeat(sizes, n_seeds)
    shared = np.repeat(rng.normal(0.0, 0.01, n_sizes), n_seeds)
    y = (TRUTH["E"] + TRUTH["B"] * x ** -TRUTH["alpha"]) * np.exp(shared + rng.normal(0.0, 0.005, len(x)))
    return x, y


def coverage(trials: int = 200, n_boot: int = 200, level: float = 0.95) -> dict:
    from tmcheck.empirics.fit import fit_law

    rng = np.random.default_rng(2024)
    hits = {"alpha": 0, "E": 0}
    widths, failures = [], 0
    t0 = time.perf_counter()
    for t in range(trials):
        x, y = synthetic_study(rng)
        r = fit_law(x, y, form="offset", groups=x, bootstrap=n_boot, seed=t, ci_level=level)
        failures += r.bootstrap_failures
        for key in hits:
            lo, hi = r.ci[key]
            hits[key] += lo <= TRUTH[key] <= hi
        widths.append(r.ci["alpha"][1] - r.ci["alpha"][0])
    out = {"trials": trials, "bootstrap": n_boot, "nominal": level,
           "coverage": {k: v / trials for k, v in hits.items()},
           "median_alpha_interval_width": float(np.median(widths)), "bootstrap_failures": failures,
           "truth": TRUTH, "design": "10 sizes in [1e6, 1e9] x 3 seeds; 1% shared per size + 0.5% per seed, log-normal",
           "seconds": time.perf_counter() - t0}
    print(f"coverage of nominal {level:.0%} intervals over {trials} trials: alpha {out['coverage']['alpha']:.1%}, "
          f"E {out['coverage']['E']:.1%} (median alpha width {out['median_alpha_interval_width']:.3f})", flush=True)
    return out


def main(trials: int = 200) -> dict:
    result = {"chinchilla": chinchilla(), "coverage": coverage(trials)}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    tmp = RESULTS.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=2, default=float) + "\n")
    os.replace(tmp, RESULTS)
    return result


if __name__ == "__main__":
    main()
