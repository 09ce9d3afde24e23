"""What every sweep report shares: the one exponent fit, the one interval formatter, the one figure
save, and the intrinsic dimension through the sweep's cached id.json (paper Section 3, eq. 3-4).

The exponent α̂ of a scaling law loss ∝ size^-α is fitted here and nowhere else in the reports, so
a change of the statistics (tmcheck.empirics.fit) reaches every kind's report at once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import numpy as np

from tmcheck.util import atomic

FIGURE_DPI = 120


def fit_exponent(sizes, losses, bootstrap: int, seed: int = 0) -> dict:
    """α̂ of losses ∝ sizes^-α: the paper's least-squares line in log-log (`fit_law(form="loglog")`),
    with a bootstrap interval that resamples sizes (all seeds of a size together).

    Returns {"alpha_hat", "ci" ([lo, hi] or None), "params" (B, alpha), "rmse_log", "points",
    "sizes", "fit" (the fitter's own record)}."""
    from tmcheck.empirics.fit import fit_law

    x = np.asarray(sizes, dtype=float)
    y = np.asarray(losses, dtype=float)
    if len(np.unique(x)) < 2:
        raise ValueError("need results at two or more sizes to fit an exponent")
    fit = fit_law(x, y, form="loglog", groups=x, bootstrap=bootstrap, seed=seed)
    ci = fit.ci.get("alpha") if fit.ci else None
    return {"alpha_hat": float(fit.alpha), "ci": [float(ci[0]), float(ci[1])] if ci is not None else None,
            "params": {k: float(v) for k, v in fit.params.items()}, "rmse_log": fit.rmse_log,
            "points": int(len(x)), "sizes": sorted({int(v) for v in x}), "fit": fit.as_dict()}


def format_interval(ci, digits: int = 3) -> str:
    """[lo, hi] as '[0.123, 0.456]', or 'n/a' when there is no interval."""
    return f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]" if ci else "n/a"


def verdict(value: float, ci) -> str:
    """Whether a predicted value lies inside an observed interval: 'inside', 'outside', 'no interval'."""
    if ci is None:
        return "no interval"
    return "inside" if ci[0] <= value <= ci[1] else "outside"


def pyplot():
    """matplotlib's pyplot on the Agg backend (reports draw files, never windows)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: Path) -> None:
    """Write the figure atomically (a report never holds half a figure) and close it."""
    atomic.savefig(fig, path, dpi=FIGURE_DPI)
    pyplot().close(fig)


def cached_id(id_path: Path, key: str, protocol: dict, compute: Callable[[], Any]) -> Any:
    """The ID estimate stored under `key` in id.json if it was made with exactly `protocol`; otherwise
    `compute()` it and store it with its protocol (a changed protocol is recomputed, never reused)."""
    id_path = Path(id_path)
    store = json.loads(id_path.read_text()) if id_path.exists() else {}
    want = json.loads(json.dumps(protocol))
    entry = store.get(key)
    if isinstance(entry, dict) and entry.get("protocol") == want:
        return entry["estimate"]
    estimate = compute()
    store[key] = {"protocol": want, "estimate": estimate}
    atomic.write_json(id_path, store)
    return estimate
