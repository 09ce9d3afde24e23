"""`tmcheck fit`: fit a scaling law to a CSV with bootstrap intervals (paper Sec. 5, Figs. 2-3).

Forms: offset (L = E + B x^-alpha), power (E = 0), loglog (the paper's OLS line in log-log space),
joint (L = E + A N^-alpha + B D^-beta; --x names two columns, e.g. --x n,d). Library:
tmcheck.empirics.fit.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from tmcheck.cli.common import console, handle_errors, print_json, to_jsonable


def read_columns(path: Path, names: list[str]) -> dict:
    """Named numeric columns of a CSV file as float arrays (ValueError for a missing or bad column)."""
    import numpy as np

    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
        header = reader.fieldnames or []
    if not rows:
        raise ValueError(f"{path}: no data rows")
    out = {}
    for name in names:
        if name not in header:
            raise ValueError(f"{path}: no column {name!r}; columns are {', '.join(header)}")
        try:
            out[name] = np.array([float(r[name]) for r in rows])
        except (TypeError, ValueError):
            raise ValueError(f"{path}: column {name!r} is not numeric") from None
    return out


def plot_fit(result, x, y, path: Path) -> None:
    """Data, fitted law and its bootstrap band (95% pointwise), written atomically as an image."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from tmcheck.util.atomic import write_bytes
    from tmcheck.empirics.fit import predict

    fig, ax = plt.subplots(figsize=(6, 4.5))
    if result.form == "joint":
        xs = np.geomspace(x[:, 0].min(), x[:, 0].max(), 200)
        slices = np.quantile(x[:, 1], [0.1, 0.5, 0.9])
        sc = ax.scatter(x[:, 0], y, c=np.log10(x[:, 1]), s=10, cmap="viridis", label="data")
        fig.colorbar(sc, ax=ax, label="log10 D")
        curves = [(np.stack([xs, np.full_like(xs, Dv)], axis=1), f"fit, D={Dv:.2g}") for Dv in slices]
        ax.set_xlabel("N")
    else:
        xs = np.geomspace(x.min(), x.max(), 200)
        ax.scatter(x, y, s=14, color="k", label="data")
        curves = [(xs, f"fit: alpha={result.alpha:.3f}")]
        ax.set_xlabel("x")
    for grid, label in curves:
        ax.plot(xs, predict(result.form, result.params, grid), label=label)
        if result.samples:
            preds = np.array([predict(result.form, p, grid) for p in result.samples])
            lo, hi = np.quantile(preds, [0.025, 0.975], axis=0)
            ax.fill_between(xs, lo, hi, alpha=0.25)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylabel("loss")
    ax.set_title(f"{result.form} law" + (f", 95% band from {len(result.samples)} bootstraps" if result.samples else ""))
    ax.legend(fontsize=8)
    buf = io.BytesIO()
    fig.savefig(buf, format=path.suffix.lstrip(".") or "png", dpi=120, bbox_inches="tight")
    plt.close(fig)
    write_bytes(path, buf.getvalue())


@handle_errors
def command(
    file: Path = typer.Argument(..., help="CSV file with a header row."),
    x: str = typer.Option(..., "--x", help="Column of the size variable; for --form joint two columns, e.g. n,d."),
    y: str = typer.Option("loss", "--y", help="Column of the loss."),
    form: str = typer.Option("offset", "--form", help="offset, power, loglog (the paper's) or joint."),
    group: Optional[str] = typer.Option(None, "--group",
                                        help="Column whose rows are resampled together (default: rows of equal x)."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Bootstrap resamples for the intervals (0: none)."),
    holder_beta: float = typer.Option(1.0, "--holder-beta", help="Hoelder smoothness for the implied intrinsic dimension."),
    compare: bool = typer.Option(False, "--compare", help="Also choose among the 1-D forms by leave-largest-out error."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Write a figure (data, fit, band) here."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the result as JSON here (atomically)."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Fit a scaling law to FILE with bootstrap intervals resampled by configuration."""
    import numpy as np

    from tmcheck.empirics.fit import choose_form, fit_law

    xs = [c.strip() for c in x.split(",") if c.strip()]
    if form == "joint" and len(xs) != 2:
        raise ValueError("--form joint needs two --x columns, e.g. --x n,d")
    if form != "joint" and len(xs) != 1:
        raise ValueError(f"--form {form} needs one --x column")
    cols = read_columns(file, xs + [y] + ([group] if group else []))
    X = np.stack([cols[c] for c in xs], axis=1) if form == "joint" else cols[xs[0]]
    if group:
        groups = cols[group]
    else:  # all rows of one configuration (e.g. several seeds of one size) move together
        groups = np.unique(X, axis=0, return_inverse=True)[1].ravel()
    result = fit_law(X, cols[y], form=form, groups=groups, bootstrap=bootstrap, seed=seed, holder_beta=holder_beta)
    payload = {"file": str(file), "x": xs, "y": y, **result.as_dict()}
    if compare and form != "joint":
        payload["model_choice"] = choose_form(X, cols[y], groups=groups)
    if plot is not None:
        plot_fit(result, X, cols[y], plot)
    if out is not None:
        from tmcheck.util.atomic import write_text

        write_text(out, json.dumps(to_jsonable(payload), indent=2) + "\n")
    if as_json:
        print_json(payload)
        return
    table = Table(title=f"{form} law fitted to {file.name} ({result.n_points} points, {result.n_groups} configurations)")
    for c in ("parameter", "estimate", "95% interval", "at bound"):
        table.add_column(c)
    for name, v in result.params.items():
        ci = result.ci.get(name)
        table.add_row(name, f"{v:.4g}", "-" if ci is None else f"[{ci[0]:.4g}, {ci[1]:.4g}]",
                      "yes" if result.at_bound.get(name) else "")
    for name, v in result.derived.items():
        ci = result.derived_ci.get(name)
        table.add_row(f"{name} (derived)", f"{v:.4g}", "-" if ci is None else f"[{ci[0]:.4g}, {ci[1]:.4g}]", "")
    console.print(table)
    delta = "-" if result.huber_delta is None else f"{result.huber_delta:.3g}"
    console.print(f"converged: {result.converged}; RMSE (log) {result.rmse_log:.4g}; Huber delta {delta}; "
                  f"bootstrap failures {result.bootstrap_failures}/{result.bootstrap}")
    if "model_choice" in payload:
        mc = payload["model_choice"]
        errs = ", ".join(f"{k} {v:.4g}" for k, v in mc["errors"].items())
        console.print(f"leave-largest-out log RMSE: {errs}; choice: {mc['choice']}")
    if plot is not None:
        console.print(f"plot written to {plot}")
