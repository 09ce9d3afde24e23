"""`make demo` stage: intrinsic dimension on the synthetic validation set, and the Chinchilla re-fit.

Seconds, not minutes: a few thousand points per manifold (D = 64) and no bootstrap in --quick.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from rich.table import Table

from tmcheck.cli.common import console


def stage(out: Path, quick: bool) -> str:
    from tmcheck.empirics.fit import EPOCH_CHINCHILLA, chinchilla_points, fit_law
    from tmcheck.empirics.id import VALIDATION_SETS, estimate_id, validation_points
    from tmcheck.empirics.reference import CHINCHILLA_CSV, reference_path

    n = 1024 if quick else 8192
    table = Table(title=f"intrinsic dimension, N={n} points in R^64 (K=20)")
    for c in ("manifold", "true d", "mle", "twonn", "paper protocol (batches of 512)"):
        table.add_column(c)
    worst = 0.0
    for name, (d, _) in VALIDATION_SETS.items():
        X = validation_points(name, n, D=64, seed=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mle = estimate_id(X, "mle", bootstrap=0).dimension
            two = estimate_id(X, "twonn", bootstrap=0).dimension
            paper = estimate_id(X, "mle", protocol="paper", batch_size=512, bootstrap=0).dimension
        worst = max(worst, abs(mle - d) / d)
        table.add_row(name, str(d), f"{mle:.2f}", f"{two:.2f}", f"{paper:.2f}")
    console.print(table)
    summary = f"ID: MLE within {worst:.0%} of the true d on {len(VALIDATION_SETS)} manifolds"
    x, y = chinchilla_points(reference_path(CHINCHILLA_CSV))
    r = fit_law(x, y, form="joint", bootstrap=0 if quick else 200)
    cmp = ", ".join(f"{k} {r.params[k]:.3f} (Epoch {EPOCH_CHINCHILLA[k][0]})" for k in ("E", "alpha", "beta"))
    console.print(f"Chinchilla joint fit ({len(x)} points): {cmp}; converged: {r.converged}")
    return summary + f"; Chinchilla E={r.params['E']:.3f} alpha={r.params['alpha']:.3f} beta={r.params['beta']:.3f}"
