"""`tmcheck synth`: synthetic manifold regression where d and β are known (eq. 2-4, Section 2.2).

  tmcheck synth regress --preset tiny|demo|cpu|gpu --out DIR   run (or resume) both sweeps, write the report
  tmcheck synth report DIR                                 refit and redraw the report of a sweep
  tmcheck synth data --manifold torus --d 2 --n 1000 --out x.npz   sample a labelled data set

Library: tmcheck.empirics.synthetic (data, targets, baselines), synthetic_model (the paper's
regression transformer), synthetic_sweep (presets, sweeps), synthetic_report (fits, figures).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from tmcheck.cli.common import console, handle_errors, print_json

app = typer.Typer(no_args_is_help=True, help="Synthetic manifold regression with known d and β (eq. 2-4).")


def _ints(text: Optional[str], name: str) -> Optional[tuple[int, ...]]:
    if text is None:
        return None
    if not text.strip():
        return ()
    try:
        return tuple(int(v) for v in text.split(","))
    except ValueError:
        raise ValueError(f"{name} must be comma-separated integers, got {text!r}") from None


def _floats(text: Optional[str], name: str) -> Optional[tuple[float, ...]]:
    if text is None:
        return None
    try:
        return tuple(float(v) for v in text.split(","))
    except ValueError:
        raise ValueError(f"{name} must be comma-separated numbers, got {text!r}") from None


def print_summary(rep: dict, sweep_dir: Path) -> None:
    from tmcheck.empirics.synthetic_report import data_table, model_table, summary_lines

    console.print(data_table(rep["data_scaling"]), highlight=False)
    for line in summary_lines(rep["data_scaling"]):
        console.print(line, highlight=False)
    if rep["model_scaling"]:
        console.print(model_table(rep["model_scaling"]), highlight=False)
    console.print(f"report: {sweep_dir / 'report.md'}; figures: {sweep_dir / 'fig_alpha.png'}, "
                  f"{sweep_dir / 'fig_loss.png'}", highlight=False)


@app.command("regress")
@handle_errors
def regress(
    preset: str = typer.Option("tiny", "--preset", help="tiny (< 2 min, tests), demo (make demo; minutes), cpu (d in 1,2,4; ~30 min), gpu."),
    out: Path = typer.Option(Path("synth-out"), "--out", help="Sweep directory (created, or resumed)."),
    dims: Optional[str] = typer.Option(None, "--dims", help="Override: intrinsic dimensions d, e.g. 1,2,4."),
    betas: Optional[str] = typer.Option(None, "--betas", help="Override: Hölder exponents β in (0,1], e.g. 1,0.5."),
    ns: Optional[str] = typer.Option(None, "--ns", help="Override: training-set sizes n, e.g. 100,1000,10000."),
    seeds: Optional[str] = typer.Option(None, "--seeds", help="Override: seeds, e.g. 0,1,2."),
    D: Optional[int] = typer.Option(None, "--D", help="Override: ambient dimension D (= number of tokens)."),
    manifold: Optional[str] = typer.Option(None, "--manifold", help="Override: torus, sphere or cube."),
    target: Optional[str] = typer.Option(None, "--target", help="Override: holder, kinks or relu."),
    density: Optional[str] = typer.Option(None, "--density", help="Override: uniform or tilted."),
    noise: Optional[float] = typer.Option(None, "--noise", help="Override: label noise σ."),
    size: Optional[str] = typer.Option(None, "--size", help="Override: fixed, or theory (FFN width ∝ n^{d/(2β+d)})."),
    attention: Optional[str] = typer.Option(None, "--attention", help="Override: relu (the paper's) or softmax."),
    epochs: Optional[int] = typer.Option(None, "--epochs", help="Override: steps = epochs * n_train / batch size ..."),
    min_steps: Optional[int] = typer.Option(None, "--min-steps", help="Override: ... clipped below at this ..."),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", help="Override: ... and above at this."),
    baselines: Optional[str] = typer.Option(None, "--baselines", help="Override: knn,krr (or one of them)."),
    model_dims: Optional[str] = typer.Option(None, "--model-dims", help="Override: d of the model sweep ('' = none)."),
    report: bool = typer.Option(True, "--report/--no-report", help="Write the report when the sweep is done."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Bootstrap resamples for the exponents' intervals."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Run (or resume) the data- and model-scaling sweeps and compare α̂_D, α̂_N with 2β/(2β+d), 2β/d."""
    from tmcheck.empirics.synthetic_report import write_report
    from tmcheck.empirics.synthetic_sweep import PRESETS, get_preset, run_sweep, with_overrides

    base = get_preset(preset)
    p = with_overrides(base, dims=_ints(dims, "--dims"), betas=_floats(betas, "--betas"), ns=_ints(ns, "--ns"),
                       seeds=_ints(seeds, "--seeds"), D=D, manifold=manifold, target=target, density=density,
                       noise=noise, size=size, attention=attention, epochs=epochs, min_steps=min_steps,
                       max_steps=max_steps, baselines=tuple(baselines.split(",")) if baselines else None,
                       model_dims=_ints(model_dims, "--model-dims"))
    if p != PRESETS[preset]:
        p = with_overrides(p, name=f"{preset}-custom")
    log = (lambda s: None) if as_json else (lambda s: console.print(s, highlight=False))
    run_sweep(out, p, log=log)
    if not report:
        return
    rep = write_report(out, bootstrap)
    if as_json:
        print_json(rep)
        return
    print_summary(rep, out)


@app.command("report")
@handle_errors
def report_cmd(
    sweep_dir: Path = typer.Argument(..., help="A synthetic sweep directory (tmcheck synth regress)."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Bootstrap resamples for the exponents' intervals."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Fit α̂_D and α̂_N with intervals, draw the figures, write report.md (what `tmcheck report` does)."""
    from tmcheck.empirics.synthetic_report import write_report

    rep = write_report(sweep_dir, bootstrap)
    if as_json:
        print_json(rep)
        return
    print_summary(rep, sweep_dir)


@app.command("data")
@handle_errors
def data(
    out: Path = typer.Option(..., "--out", help="Output .npz with X (n, D), y (n,) and f (n,)."),
    n: int = typer.Option(1000, "--n", help="Number of points."),
    d: int = typer.Option(2, "--d", help="Intrinsic dimension d."),
    D: int = typer.Option(16, "--D", help="Ambient dimension D."),
    manifold: str = typer.Option("torus", "--manifold", help="torus, sphere or cube."),
    target: str = typer.Option("holder", "--target", help="holder, kinks or relu."),
    beta: float = typer.Option(1.0, "--beta", help="Hölder exponent β in (0, 1]."),
    density: str = typer.Option("uniform", "--density", help="uniform or tilted."),
    noise: float = typer.Option(0.5, "--noise", help="Label noise σ."),
    seed: int = typer.Option(0, "--seed", help="Seed of the sample (the problem's frame and target use 0)."),
    as_json: bool = typer.Option(False, "--json", help="Print a summary as JSON."),
) -> None:
    """Sample n labelled points of a known-d manifold (Assumptions 1-2) and save them as .npz."""
    import io

    import numpy as np

    from tmcheck.util.atomic import write_bytes
    from tmcheck.empirics.synthetic import Experiment, Problem

    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    exp = Experiment(Problem(manifold=manifold, d=d, D=D, target=target, beta=beta, density=density, noise=noise))
    X, y = exp.pool(n, seed)
    f = exp.target(X)
    buf = io.BytesIO()
    np.savez(buf, X=X, y=y, f=f)
    write_bytes(out, buf.getvalue())
    summary = {"out": str(out), "n": n, "d": d, "D": D, "manifold": manifold, "target": target, "beta": beta,
               "noise": noise, "max_residual": float(exp.manifold.residual(X).max()), "f_std": float(f.std())}
    if as_json:
        print_json(summary)
        return
    console.print(f"wrote {n} points of a {manifold} (d={d}) in R^{D} to {out}; target {target} (β={beta:g}), "
                  f"σ={noise:g}; largest distance from the manifold's equations {summary['max_residual']:.1e}",
                  highlight=False)
