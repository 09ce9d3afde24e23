"""Scaling-law fitting against published fits: Chinchilla (Epoch AI's points from Hoffmann et al. Fig. 4,
240 after dropping the 5 highest losses), tmcheck's joint fit (Huber delta 1e-3 in log space, Epoch's
choice) vs Epoch's published estimates (Besiroglu et al. 2024) and Hoffmann et al.'s reported law, with
1000-resample bootstrap intervals and the time taken; also the squared loss, to show what delta does.

The coverage of the exponent intervals is benchmarks/bench_coverage.py. Results go to
benchmarks/results/fit.json.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "fit.json"
DATA = HERE.parent / "tests" / "data" / "chinchilla_svg_extracted.csv"


def chinchilla(n_boot: int = 1000) -> dict:
    from tmcheck.empirics.fit import EPOCH_CHINCHILLA, HOFFMANN_CHINCHILLA, chinchilla_points, fit_law, predict

    x, y = chinchilla_points(DATA)
    t0 = time.perf_counter()
    r = fit_law(x, y, form="joint", bootstrap=n_boot, seed=0)
    seconds = time.perf_counter() - t0
    squared = fit_law(x, y, form="joint", loss="squared")

    def rmse(params):
        return float(np.sqrt(np.mean((np.log(predict("joint", params, x)) - np.log(y)) ** 2)))

    epoch = {k: v[0] for k, v in EPOCH_CHINCHILLA.items()}
    out = {
        "n_points": len(y),
        "seconds_with_bootstrap": seconds,
        "bootstrap": n_boot,
        "load_average": os.getloadavg(),
        "tmcheck": {
            "params": r.params,
            "ci": r.ci,
            "derived": r.derived,
            "derived_ci": r.derived_ci,
            "loss": r.loss,
            "huber_delta": r.huber_delta,
            "status": r.status,
            "rmse_log": rmse(r.params),
        },
        "tmcheck_squared_loss": {
            "params": squared.params,
            "rmse_log": rmse(squared.params),
            "within_epoch_se": {k: abs(squared.params[k] - v[0]) < v[1] for k, v in EPOCH_CHINCHILLA.items()},
        },
        "epoch_published": {
            "params": epoch,
            "se": {k: v[1] for k, v in EPOCH_CHINCHILLA.items()},
            "rmse_log": rmse(epoch),
        },
        "hoffmann_reported": {"params": HOFFMANN_CHINCHILLA, "rmse_log": rmse(HOFFMANN_CHINCHILLA)},
        "within_epoch_se": {k: abs(r.params[k] - v[0]) < v[1] for k, v in EPOCH_CHINCHILLA.items()},
    }
    print(
        "Chinchilla: "
        + ", ".join(f"{k}={r.params[k]:.4g} (Epoch {v[0]} +- {v[1]})" for k, v in EPOCH_CHINCHILLA.items())
    )
    print(
        f"  log RMSE: tmcheck {out['tmcheck']['rmse_log']:.4f}, Epoch {out['epoch_published']['rmse_log']:.4f}, "
        f"Hoffmann {out['hoffmann_reported']['rmse_log']:.4f}; {seconds:.1f}s with {n_boot} bootstraps",
        flush=True,
    )
    return out


def main() -> dict:
    from tmcheck.util.atomic import write_json

    result = {"chinchilla": chinchilla()}
    write_json(RESULTS, result)
    return result


if __name__ == "__main__":
    main()
