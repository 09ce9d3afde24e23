"""`tmcheck fit`: fit a scaling law to a CSV (paper Sec. 5, Figs. 2-3; Hoffmann et al. 2022).

Forms: offset (L = E + B n^-alpha), power (E = 0), loglog (the paper's OLS line in log-log space), each
with the interval whose coverage is measured at the CSV's design, fit-range sensitivity, a curvature
test and, with --d, the prediction test; joint (L = E + A N^-alpha + B D^-beta; --x names two columns)
with a Huber loss of stated delta and a bootstrap. Preprocessing: --derive, --where, --drop-top.
Library: tmcheck.empirics.fit; expressions: tmcheck.empirics.fit.columns (sympy, never eval).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Annotated

import numpy as np
import typer
from rich.table import Table

from tmcheck.cli.common import console, err_console, handle_errors, print_json, to_jsonable
from tmcheck.cli.options import BetaOpt, BootstrapOpt, JsonOpt, SeedOpt, nonneg_int, parse_list, positive_finite


def read_table(path: Path) -> tuple[dict, list[str]]:
    """All columns of a CSV as lists of strings, and the header."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
        header = list(reader.fieldnames or [])
    if not rows:
        raise ValueError(f"{path}: no data rows")
    return {h: [r.get(h) for r in rows] for h in header}, header


def _finite(values: np.ndarray, name: str) -> np.ndarray:
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        raise ValueError(f"column {name!r} has {len(bad)} NaN or infinite value(s) (first at data row {bad[0] + 1})")
    return values


def prepare(
    path: Path, xs: list[str], y: str, group: str | None, derive: list[str], where: str | None, drop_top: int
) -> dict:
    """Columns read, derived (in order), filtered and trimmed: {"x": {name: array}, "y", "group", "steps"}.
    Empty, non-numeric, NaN or infinite values in a column the fit uses are bad input (ValueError)."""
    from tmcheck.empirics.fit import columns as fit_expr

    raw, header = read_table(path)
    cols = {}
    for h in header:
        try:
            cols[h] = np.array([float(v) for v in raw[h]])
        except (TypeError, ValueError):  # a text column: usable as --group only
            continue
    steps = []

    def aliases(used):
        steps.extend(f"{n} := column {c!r}" for n, c in used.items() if n != c and f"{n} := column {c!r}" not in steps)

    for spec in derive:
        name, values, used = fit_expr.derive(spec, cols)
        aliases(used)
        cols[name] = values
        steps.append(f"derived {spec}")
    keep = np.ones(len(raw[header[0]]), bool)
    if where:
        keep, used = fit_expr.where(where, cols)
        aliases(used)
        steps.append(f"kept {int(keep.sum())} of {len(keep)} rows where {where}")
    if not keep.any():
        raise ValueError(f"no rows satisfy --where {where!r}")
    data = {}
    for n in xs + [y]:
        c = fit_expr.resolve(n, {**dict.fromkeys(header), **cols})
        if c not in cols:
            bad = next(i for i, v in enumerate(raw[c]) if not _is_number(v))
            raise ValueError(f"column {c!r} row {bad + 1}: {raw[c][bad]!r} is not a number")
        aliases({n: c})
        data[n] = _finite(cols[c][keep], c)
    labels = None
    if group is not None:
        if group not in raw:
            raise ValueError(f"{path}: no column {group!r}; columns are {', '.join(header)}")
        labels = np.array([str(v or "").strip() for v in raw[group]], dtype=object)[keep]
        blank = np.array([v == "" or v.lower() == "nan" for v in labels], dtype=bool)
        if blank.all():
            raise ValueError(f"group column {group!r} is empty or NaN in every row")
        if blank.any():
            raise ValueError(f"group column {group!r} is empty or NaN in {int(blank.sum())} row(s)")
    if drop_top:
        if drop_top >= len(data[y]):
            raise ValueError(f"--drop-top {drop_top} leaves no rows ({len(data[y])} rows)")
        drop = np.zeros(len(data[y]), bool)
        drop[np.argsort(data[y], kind="stable")[len(drop) - drop_top :]] = True
        data = {k: v[~drop] for k, v in data.items()}
        labels = None if labels is None else labels[~drop]
        steps.append(f"dropped the {drop_top} highest-{y} rows")
    return {"x": {n: data[n] for n in xs}, "y": data[y], "group": labels, "steps": steps}


def _is_number(v) -> bool:
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def _prediction(d: float | None, d_ci: str | None, kind: str, beta: float) -> dict | None:
    if d is None:
        if d_ci is not None:
            raise typer.BadParameter("--d-ci needs --d (the estimate it surrounds)", param_hint="--d-ci")
        return None
    if kind not in ("D", "N"):
        raise typer.BadParameter(f"must be D (data exponent) or N (model exponent), got {kind!r}", param_hint="--kind")
    if d_ci is None:
        return {"kind": kind, "beta": beta, "d": d}
    ci = parse_list(d_ci, "--d-ci", float, positive_finite)
    if len(ci) != 2 or not ci[0] <= d <= ci[1]:
        raise typer.BadParameter("give LO,HI around --d, e.g. 2.8,3.4", param_hint="--d-ci")
    return {"kind": kind, "beta": beta, "d_hat": d, "d_ci": list(ci)}


def _one_dimensional(n, y, form, level, prediction, tolerance, coverage_reps, bootstrap, seed, beta) -> dict:
    from tmcheck.empirics.fit import exponent_report
    from tmcheck.theory.bounds import id_from_alpha_D

    rep = exponent_report(
        n,
        y,
        level=level,
        forms=(form,),
        prediction=prediction,
        tolerance=tolerance,
        coverage_reps=coverage_reps,
        bootstrap=bootstrap,
        seed=seed,
    )
    e = rep["fits"][form]
    a = e["alpha"]
    implied = id_from_alpha_D(a, beta) if 0 < a < 1 else float("nan")
    return {
        "n_points": len(y),
        "params": e["params"],
        "alpha": a,
        "interval": e["interval"],
        "status": e["status"],
        "flags": e["flags"],
        "implied_d": implied,
        "fit": e,
        "range": rep["range"],
        "curvature": rep["curvature"],
        "prediction": (rep["prediction"] or {}).get(form),
        "words": rep["words"],
    }


def _warn(label: str, status: str, flags: list) -> None:
    if flags:
        err_console.print(
            f"[bold yellow]warning:[/] {label}{status} fit: " + "; ".join(f["message"] for f in flags),
            highlight=False,
            soft_wrap=True,
        )


def _print_1d(name: str, form: str, r: dict) -> None:
    e = r["fit"]
    table = Table(title=f"{form} law{name}: {r['n_points']} runs at {len(e['design']['sizes'])} sizes")
    for c in ("quantity", "estimate", "interval"):
        table.add_column(c)
    table.add_row("alpha", f"{r['alpha']:.4g}", r["interval"]["text"])
    for k in ("E", "B"):
        if form == "offset" or k == "B":
            iv = e.get("E_interval") if k == "E" else None
            table.add_row(
                k, f"{e['params'][k]:.4g}", f"[{iv['lo']:.4g}, {iv['hi']:.4g}] ({iv['method']})" if iv else ""
            )
    table.add_row("implied d (beta)", f"{r['implied_d']:.3g}", "")
    console.print(table)
    cov = ", ".join(f"{m} {v['coverage']:.0%}" for m, v in e["coverage"].items())
    console.print(
        f"coverage of each method at this design ({next(iter(e['coverage'].values()))['reps']} simulated "
        f"sweeps, noise {e['noise']['sigma_log']:.3g} from {e['noise']['source']}): {cov}"
    )
    console.print(f"status: {r['status']}", highlight=False)
    for key in ("curvature", "range", "prediction"):
        if r.get(key) and r[key].get("words"):
            console.print(f"{key}: {r[key]['words']}", highlight=False, soft_wrap=True)


@handle_errors
def command(
    file: Path = typer.Argument(..., help="CSV file with a header row."),
    x: str = typer.Option(..., "--x", help="Column of the size variable; for --form joint two columns, e.g. N,D."),
    y: str = typer.Option("loss", "--y", help="Column of the loss."),
    form: str = typer.Option("offset", "--form", help="offset, power, loglog (the paper's) or joint."),
    group: str | None = typer.Option(
        None, "--group", help="Fit each value of this column separately (one colour per group)."
    ),
    derive: Annotated[
        list[str] | None,
        typer.Option(
            "--derive", help="New column NAME=EXPRESSION of others, e.g. 'D=C/(6*N)' (repeatable; sympy, never eval)."
        ),
    ] = None,
    where: str | None = typer.Option(
        None, "--where", help="Keep rows satisfying a condition, e.g. 'N>1e8 and loss<4'."
    ),
    drop_top: int = typer.Option(
        0, "--drop-top", callback=nonneg_int, help="Drop the K highest-loss rows (Epoch AI drop 5 of Chinchilla's)."
    ),
    loss: str | None = typer.Option(None, "--loss", help="joint: huber (default) or squared."),
    huber_delta: float | None = typer.Option(
        None,
        "--huber-delta",
        callback=positive_finite,
        help="joint: Huber threshold on the log residual (default 1e-3).",
    ),
    level: float = typer.Option(0.95, "--level", help="Nominal level of the intervals, in (0, 1)."),
    d: float | None = typer.Option(
        None,
        "--d",
        callback=positive_finite,
        help="Intrinsic dimension (known, or d-hat with --d-ci) for the prediction test.",
    ),
    d_ci: str | None = typer.Option(None, "--d-ci", help="Interval LO,HI of d-hat (its uncertainty enters the test)."),
    kind: str = typer.Option("D", "--kind", help="D: alpha_D = 2beta/(2beta+d) (eq. 3); N: alpha_N = 2beta/d (eq. 4)."),
    tolerance: float = typer.Option(
        0.1,
        "--tolerance",
        callback=positive_finite,
        help="Half-width above which the prediction test is 'not decidable'.",
    ),
    beta: BetaOpt = 1.0,
    bootstrap: BootstrapOpt = 400,
    coverage_reps: int = typer.Option(
        200, "--coverage-reps", min=20, help="Simulated sweeps measuring each interval's coverage at this design."
    ),
    compare: bool = typer.Option(
        False, "--compare", help="Also choose among the 1-D forms by leave-largest-out error."
    ),
    plot: Path | None = typer.Option(None, "--plot", help="Write a figure (data, law, band) here."),
    out: Path | None = typer.Option(None, "--out", help="Also write the result as JSON here (atomically)."),
    seed: SeedOpt = 0,
    as_json: JsonOpt = False,
) -> None:
    """Fit a scaling law to FILE (paper Sec. 5; Hoffmann et al. 2022) with intervals of measured coverage.

    Example (Epoch AI's Chinchilla replication):
    tmcheck fit chinchilla.csv --derive "D=C/(6*N)" --drop-top 5 --x N,D --form joint --json
    """
    from tmcheck.empirics.fit import FORMS, choose_form, fit_law

    if form not in FORMS:
        raise ValueError(f"unknown form {form!r}; choose from {', '.join(FORMS)}")
    if not (math.isfinite(level) and 0 < level < 1):
        raise typer.BadParameter(f"must lie in (0, 1), got {level}", param_hint="--level")
    xs = [c.strip() for c in x.split(",") if c.strip()]
    if form == "joint" and len(xs) != 2:
        raise ValueError("--form joint needs two --x columns, e.g. --x N,D")
    if form != "joint" and len(xs) != 1:
        raise ValueError(f"--form {form} needs one --x column")
    if form != "joint" and (loss is not None or huber_delta is not None):
        raise ValueError(
            "--loss/--huber-delta apply to --form joint; the 1-D forms use the squared loss, "
            "for which their intervals' coverage is measured"
        )
    prediction = _prediction(d, d_ci, kind, beta)
    data = prepare(file, xs, y, group, derive or [], where, drop_top)
    Y = data["y"]
    payload = {"file": str(file), "x": xs, "y": y, "form": form, "preprocessing": data["steps"]}
    if form == "joint":
        X = np.stack([data["x"][c] for c in xs], axis=1)
        groups = np.unique(X, axis=0, return_inverse=True)[1].ravel()
        result = fit_law(
            X,
            Y,
            form="joint",
            groups=groups,
            bootstrap=bootstrap,
            seed=seed,
            ci_level=level,
            beta=beta,
            loss=loss,
            huber_delta=huber_delta,
        )
        payload.update(result.as_dict())
        payload["ci_method"] = "percentile bootstrap over configurations (coverage not measured for the joint law)"
        if plot is not None:
            from tmcheck.empirics.fit.plot import plot_joint

            plot_joint(result, X, Y, plot, level, labels=tuple(xs), ylabel=y)
    else:
        n = data["x"][xs[0]]
        labels = data["group"]
        names = [None] if labels is None else list(dict.fromkeys(labels))
        rows = {g: np.ones(len(Y), bool) if g is None else labels == g for g in names}
        results = {
            g: _one_dimensional(
                n[sel], Y[sel], form, level, prediction, tolerance, coverage_reps, bootstrap, seed, beta
            )
            for g, sel in rows.items()
        }
        if labels is None:
            payload.update(results[None])
        else:
            payload["groups"] = results
        if compare:
            payload["model_choice"] = {str(g): choose_form(n[sel], Y[sel]) for g, sel in rows.items()}
        if plot is not None:
            from tmcheck.empirics.fit.plot import plot_1d

            curves = [
                {"label": "all runs" if g is None else str(g), "n": n[sel], "y": Y[sel], "entry": results[g]["fit"]}
                for g, sel in rows.items()
            ]
            plot_1d(curves, plot, form, level, xlabel=xs[0], ylabel=y, bootstrap=bootstrap, seed=seed)
    if out is not None:
        from tmcheck.util.atomic import write_text

        write_text(out, json.dumps(to_jsonable(payload), indent=2) + "\n")
    if form == "joint":
        _warn("", payload["status"], payload["flags"])
    else:
        for g, r in results.items():
            _warn("" if g is None else f"group {g}: ", r["status"], r["flags"])
    if as_json:
        print_json(payload)
        return
    for step in data["steps"]:
        console.print(step, highlight=False)
    if form == "joint":
        _print_joint(payload, file)
    else:
        for g, r in results.items():
            _print_1d("" if g is None else f" ({group} = {g})", form, r)
    if "model_choice" in payload:
        for g, mc in payload["model_choice"].items():
            errs = ", ".join(f"{k} {v:.4g}" for k, v in mc["errors"].items())
            console.print(
                f"leave-largest-out log RMSE{'' if g == 'None' else f' ({g})'}: {errs}; choice: {mc['choice']}"
            )
    if plot is not None:
        console.print(f"plot written to {plot}")


def _print_joint(p: dict, file: Path) -> None:
    table = Table(title=f"joint law fitted to {file.name} ({p['n_points']} points, {p['n_groups']} configurations)")
    for c in ("parameter", "estimate", f"{'bootstrap' if p['ci'] else 'no'} interval", "at bound"):
        table.add_column(c)
    for name, v in p["params"].items():
        ci = p["ci"].get(name)
        table.add_row(
            name,
            f"{v:.4g}",
            "-" if ci is None else f"[{ci[0]:.4g}, {ci[1]:.4g}]",
            "yes" if p["at_bound"].get(name) else "",
        )
    for name, v in p["derived"].items():
        ci = p["derived_ci"].get(name)
        table.add_row(f"{name} (derived)", f"{v:.4g}", "-" if ci is None else f"[{ci[0]:.4g}, {ci[1]:.4g}]", "")
    console.print(table)
    delta = f"Huber delta {p['huber_delta']:.3g}" if p["loss"] == "huber" else "squared loss"
    console.print(
        f"status: {p['status']}; RMSE (log) {p['rmse_log']:.4g}; {delta}; "
        f"bootstrap failures {p['bootstrap_failures']}/{p['bootstrap']}",
        highlight=False,
    )
