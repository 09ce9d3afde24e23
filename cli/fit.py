"""`tmcheck fit`: fit a scaling law to a CSV (paper Sec. 5, Figs. 2-3; Hoffmann et al. 2022).

Forms: offset (L = E + B n^-alpha), power (E = 0), loglog (the paper's OLS line in log-log space), each
with the interval whose coverage is measured at the CSV's design, fit-range sensitivity, a curvature
test and, with --d, the prediction test; joint (L = E + A N^-alpha + B D^-beta; --x names two columns)
with a Huber loss of stated delta and a bootstrap. Preprocessing: --derive, --where, --drop-top.
Library: tmcheck.empirics.fit; expressions: tmcheck.empirics.fit.columns (sympy, never eval).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from tmcheck.cli.common import console, err_console, handle_errors, print_json
from tmcheck.cli.options import (
    BetaOpt,
    BootstrapOpt,
    JsonOpt,
    SeedOpt,
    nonneg_int,
    parse_list,
    positive_finite,
    positive_int,
)
from tmcheck.util import safeio
from tmcheck.util.jsonable import plain


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


# why kept: one Annotated alias per option, as in id and embed: alike in shape, each its own flag and help
FileOpt = Annotated[Path, typer.Argument(help="CSV file with a header row.")]
XOpt = Annotated[str, typer.Option("--x", help="Column of the size variable; for --form joint two columns, e.g. N,D.")]
YOpt = Annotated[str, typer.Option("--y", help="Column of the loss.")]
FormOpt = Annotated[str, typer.Option("--form", help="offset, power, loglog (the paper's) or joint.")]
GroupOpt = Annotated[
    str | None, typer.Option("--group", help="Fit each value of this column separately (one colour per group).")
]
WhereOpt = Annotated[
    str | None, typer.Option("--where", help="Keep rows satisfying a condition, e.g. 'N>1e8 and loss<4'.")
]
DropTopOpt = Annotated[
    int,
    typer.Option(
        "--drop-top", callback=nonneg_int, help="Drop the K highest-loss rows (Epoch AI drop 5 of Chinchilla's)."
    ),
]
LossOpt = Annotated[str | None, typer.Option("--loss", help="joint: huber (default) or squared.")]
HuberDeltaOpt = Annotated[
    float | None,
    typer.Option(
        "--huber-delta", callback=positive_finite, help="joint: Huber threshold on the log residual (default 1e-3)."
    ),
]
LevelOpt = Annotated[float, typer.Option("--level", help="Nominal level of the intervals, in (0, 1).")]
DOpt = Annotated[
    float | None,
    typer.Option(
        "--d",
        callback=positive_finite,
        help="Intrinsic dimension (known, or d-hat with --d-ci) for the prediction test.",
    ),
]
DCiOpt = Annotated[
    str | None, typer.Option("--d-ci", help="Interval LO,HI of d-hat (its uncertainty enters the test).")
]
KindOpt = Annotated[
    str, typer.Option("--kind", help="D: alpha_D = 2beta/(2beta+d) (eq. 3); N: alpha_N = 2beta/d (eq. 4).")
]
MarginOpt = Annotated[
    float,
    typer.Option(
        "--margin",
        callback=positive_finite,
        help="Equivalence margin δ of the prediction test: equivalent when the 90% interval of α̂ − α lies "
        "inside ±δ, differs when outside (also decided at the paper's ±0.02).",
    ),
]
CoverageRepsOpt = Annotated[
    int,
    typer.Option("--coverage-reps", min=20, help="Simulated sweeps measuring each interval's coverage at this design."),
]
CompareOpt = Annotated[
    bool, typer.Option("--compare", help="Also choose among the 1-D forms by leave-largest-out error.")
]
PlotOpt = Annotated[Path | None, typer.Option("--plot", help="Write a figure (data, law, band) to this file.")]
OutputOpt = Annotated[Path | None, typer.Option("--output", help="Also write the result as JSON to this file.")]
MaxRowsOpt = Annotated[
    int, typer.Option("--max-rows", callback=positive_int, help="Refuse a table with more data rows than this.")
]


@handle_errors
def command(
    file: FileOpt,
    x: XOpt,
    y: YOpt = "loss",
    form: FormOpt = "offset",
    group: GroupOpt = None,
    derive: Annotated[
        list[str] | None,
        typer.Option(
            "--derive", help="New column NAME=EXPRESSION of others, e.g. 'D=C/(6*N)' (repeatable; sympy, never eval)."
        ),
    ] = None,
    where: WhereOpt = None,
    drop_top: DropTopOpt = 0,
    loss: LossOpt = None,
    huber_delta: HuberDeltaOpt = None,
    level: LevelOpt = 0.95,
    # why kept: the options exponent_report takes, listed for Typer and passed on by name
    d: DOpt = None,
    d_ci: DCiOpt = None,
    kind: KindOpt = "D",
    margin: MarginOpt = 0.05,
    beta: BetaOpt = 1.0,
    bootstrap: BootstrapOpt = 400,
    coverage_reps: CoverageRepsOpt = 200,
    compare: CompareOpt = False,
    plot: PlotOpt = None,
    output: OutputOpt = None,
    max_rows: MaxRowsOpt = 100_000,
    seed: SeedOpt = 0,
    json_: JsonOpt = False,
) -> None:
    """Fit a scaling law to FILE (paper Sec. 5; Hoffmann et al. 2022) with intervals of measured coverage.

    Exit status: 0, or 1 when a prediction test (--d) says "differs by more than δ"; "equivalent" and
    "undecided" exit 0 with those words on stdout; 2 on bad input.

    Example (Epoch AI's Chinchilla replication):
    tmcheck fit chinchilla.csv --derive "D=C/(6*N)" --drop-top 5 --x N,D --form joint --json
    """
    if file.exists():  # a FIFO, device or directory refused before scipy is imported
        safeio.check_regular(file, "a CSV table", limit=None)
    from tmcheck.empirics.fit.exponent import FitSettings
    from tmcheck.empirics.fit.table import fit_table, outcomes, prediction_spec

    xs = [c.strip() for c in x.split(",") if c.strip()]
    interval = None if d_ci is None else parse_list(d_ci, "--d-ci", float, positive_finite)
    payload = fit_table(
        file,
        xs,
        y,
        form,
        group=group,
        derive=derive or [],
        where=where,
        drop_top=drop_top,
        loss=loss,
        huber_delta=huber_delta,
        prediction=prediction_spec(d, interval, kind, beta),
        margin=margin,
        beta=beta,
        compare=compare,
        max_rows=max_rows,
        plot=plot,
        settings=FitSettings(level=level, coverage_reps=coverage_reps, bootstrap=bootstrap, seed=seed),
    )
    if output is not None:
        from tmcheck.util.atomic import write_text

        write_text(output, json.dumps(plain(payload), indent=2) + "\n")
    _show(payload, file, form, group, plot, json_)
    if "differs" in outcomes(payload):
        raise typer.Exit(1)


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


def _show(payload: dict, file: Path, form: str, group: str | None, plot: Path | None, json_: bool) -> None:
    """The fit's warnings on stderr, then its JSON or its tables on stdout."""
    from tmcheck.empirics.fit.table import fits_of

    results = fits_of(payload)
    if form == "joint":
        _warn("", payload["status"], payload["flags"])
    for g, r in results.items():
        _warn("" if g is None else f"group {g}: ", r["status"], r["flags"])
    if json_:
        print_json(payload)
    else:
        for step in payload["preprocessing"]:
            console.print(step, highlight=False)
        if form == "joint":
            _print_joint(payload, file)
        for g, r in results.items():
            _print_1d("" if g is None else f" ({group} = {g})", form, r)
        for g, mc in payload.get("model_choice", {}).items():
            errs = ", ".join(f"{k} {v:.4g}" for k, v in mc["errors"].items())
            console.print(
                f"leave-largest-out log RMSE{'' if g == 'None' else f' ({g})'}: {errs}; choice: {mc['choice']}"
            )
        if plot is not None:
            console.print(f"plot written to {plot}")
