"""`tmcheck synth`: synthetic manifold regression where d and β are known (eq. 2-4, Section 2.2).

  tmcheck synth regress --preset tiny|demo|cpu|gpu --out DIR   run (or resume) both sweeps, write the report
  tmcheck synth report DIR                                 refit and redraw the report of a sweep
  tmcheck synth data --manifold torus --d 2 --n 1000 --out x.npz   sample a labelled data set

Library: tmcheck.empirics.synthetic.problem (data, Hölder fields, baselines), synthetic_model (the paper's
regression transformer), sweep.synthetic (the sweep kind), presets.SynthPreset, report.synthetic.
"""

from __future__ import annotations

from pathlib import Path

import typer

from tmcheck.cli.common import console, handle_errors, print_json
from tmcheck.cli.options import (
    BetaOpt,
    BootstrapOpt,
    JsonOpt,
    OutOpt,
    beta_value,
    nonneg_finite,
    nonneg_int,
    parse_list,
    positive_int,
)
from tmcheck.cli.sweep_options import (
    ArrayParallelismOpt,
    CpusPerTaskOpt,
    ExecutorOpt,
    GpusPerTaskOpt,
    MaxFailuresOpt,
    PartitionOpt,
    SbatchOpt,
    SlurmTimeOpt,
    WorkersOpt,
    make_executor,
    run_failures,
)

app = typer.Typer(no_args_is_help=True, help="Synthetic manifold regression with known d and β (eq. 2-4).")


def _ints(text: str | None, name: str) -> tuple[int, ...] | None:
    return parse_list(text, name, int, positive_int)


@app.command("regress")
@handle_errors
def regress(
    preset: str = typer.Option(
        "tiny", "--preset", help="tiny (< 2 min, tests), demo (make demo; minutes), cpu (d in 1,2,4; ~30 min), gpu."
    ),
    out: OutOpt = Path("synth-out"),
    d: str | None = typer.Option(None, "--d", help="Override: intrinsic dimensions d, e.g. 1,2,4."),
    beta: str | None = typer.Option(None, "--beta", help="Override: Hölder smoothness β in (0,1], e.g. 1,0.5."),
    n: str | None = typer.Option(None, "--n", help="Override: training-set sizes n, e.g. 100,1000,10000."),
    seed: str | None = typer.Option(None, "--seed", help="Override: seeds, e.g. 0,1,2."),
    D: int | None = typer.Option(
        None, "--D", callback=positive_int, help="Override: ambient dimension D (= number of tokens)."
    ),
    manifold: str | None = typer.Option(None, "--manifold", help="Override: torus, sphere or cube."),
    target: str | None = typer.Option(None, "--target", help="Override: holder, kinks or relu."),
    density: str | None = typer.Option(None, "--density", help="Override: uniform or tilted."),
    noise: float | None = typer.Option(None, "--noise", callback=nonneg_finite, help="Override: label noise σ."),
    size: str | None = typer.Option(None, "--size", help="Override: fixed, or theory (FFN width ∝ n^{d/(2β+d)})."),
    attention: str | None = typer.Option(None, "--attention", help="Override: relu (the paper's) or softmax."),
    epochs: int | None = typer.Option(
        None, "--epochs", callback=positive_int, help="Override: steps = epochs * n_train / batch size ..."
    ),
    min_steps: int | None = typer.Option(
        None, "--min-steps", callback=positive_int, help="Override: ... clipped below at this ..."
    ),
    max_steps: int | None = typer.Option(
        None, "--max-steps", callback=positive_int, help="Override: ... and above at this."
    ),
    baselines: str | None = typer.Option(None, "--baselines", help="Override: knn,krr (or one of them)."),
    model_d: str | None = typer.Option(None, "--model-d", help="Override: d of the model sweep ('' = none)."),
    report: bool = typer.Option(True, "--report/--no-report", help="Write the report when the sweep is done."),
    bootstrap: BootstrapOpt = 1000,
    executor: ExecutorOpt = "local",
    workers: WorkersOpt = None,
    max_failures: MaxFailuresOpt = None,
    slurm_partition: PartitionOpt = None,
    slurm_gpus_per_task: GpusPerTaskOpt = None,
    slurm_time: SlurmTimeOpt = None,
    slurm_array_parallelism: ArrayParallelismOpt = None,
    slurm_cpus_per_task: CpusPerTaskOpt = None,
    sbatch: SbatchOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Run (or resume) the data- and model-scaling sweeps and compare α̂_D, α̂_N with 2β/(2β+d), 2β/d."""
    from tmcheck.empirics.presets import get_preset
    from tmcheck.empirics.report import build_report, summary
    from tmcheck.empirics.sweep import run_sweep

    base = get_preset(preset, "synthetic")
    p = base.with_overrides(
        dims=_ints(d, "--d"),
        betas=parse_list(beta, "--beta", float, beta_value),
        ns=_ints(n, "--n"),
        seeds=parse_list(seed, "--seed", int, nonneg_int),
        D=D,
        manifold=manifold,
        target=target,
        density=density,
        noise=noise,
        size=size,
        attention=attention,
        epochs=epochs,
        min_steps=min_steps,
        max_steps=max_steps,
        baselines=parse_list(baselines, "--baselines"),
        model_dims=parse_list(model_d, "--model-d", int, positive_int, allow_empty=True),
    )
    if p != base:
        p = p.with_overrides(name=f"{preset}-custom")
    log = (lambda s: None) if json_ else (lambda s: console.print(s, highlight=False))
    ex = make_executor(
        executor,
        workers,
        max_failures,
        slurm_partition,
        slurm_gpus_per_task,
        slurm_time,
        slurm_array_parallelism,
        slurm_cpus_per_task,
        sbatch,
        log,
    )
    with run_failures():
        run_sweep(out, "synthetic", p, progress=not json_, log=log, executor=ex)
    if not report:
        return
    rep = build_report(out, bootstrap)
    if json_:
        print_json(rep)
        return
    console.print(summary(rep), highlight=False)


@app.command("report")
@handle_errors
def report_cmd(
    sweep_dir: Path = typer.Argument(..., help="A synthetic sweep directory (tmcheck synth regress)."),
    bootstrap: BootstrapOpt = 1000,
    json_: JsonOpt = False,
) -> None:
    """Fit α̂_D and α̂_N with intervals, draw the figures, write report.md (the same as `tmcheck report`)."""
    from tmcheck.empirics.report import build_report, summary
    from tmcheck.empirics.sweep import SweepDir

    kind = SweepDir(sweep_dir).kind
    if kind != "synthetic":
        raise ValueError(f"{sweep_dir} is not a synthetic sweep (kind {kind!r}); use `tmcheck report`")
    rep = build_report(sweep_dir, bootstrap)
    if json_:
        print_json(rep)
        return
    console.print(summary(rep), highlight=False)


@app.command("data")
@handle_errors
def data(
    out: Path = typer.Option(..., "--out", help="Output .npz with X (n, D), y (n,) and f (n,)."),
    n: int = typer.Option(1000, "--n", callback=positive_int, help="Number of points."),
    d: int = typer.Option(2, "--d", callback=positive_int, help="Intrinsic dimension d."),
    D: int = typer.Option(16, "--D", callback=positive_int, help="Ambient dimension D."),
    manifold: str = typer.Option("torus", "--manifold", help="torus, sphere or cube."),
    target: str = typer.Option("holder", "--target", help="holder, kinks or relu."),
    beta: BetaOpt = 1.0,
    density: str = typer.Option("uniform", "--density", help="uniform or tilted."),
    noise: float = typer.Option(0.5, "--noise", callback=nonneg_finite, help="Label noise σ."),
    seed: int = typer.Option(
        0, "--seed", callback=nonneg_int, help="Seed of the sample (the problem's frame and field use 0)."
    ),
    json_: JsonOpt = False,
) -> None:
    """Sample n labelled points of a known-d manifold (Assumptions 1-2) and save them as .npz."""
    import io

    import numpy as np

    from tmcheck.util.atomic import write_bytes
    from tmcheck.empirics.synthetic.problem import Experiment, Problem

    exp = Experiment(Problem(manifold=manifold, d=d, D=D, target=target, beta=beta, density=density, noise=noise))
    X, y = exp.pool(n, seed)
    f = exp.field(X)
    buf = io.BytesIO()
    np.savez(buf, X=X, y=y, f=f)
    write_bytes(out, buf.getvalue())
    summary = {
        "out": str(out),
        "n": n,
        "d": d,
        "D": D,
        "manifold": manifold,
        "target": target,
        "beta": beta,
        "noise": noise,
        "max_residual": float(exp.manifold.residual(X).max()),
        "f_std": float(f.std()),
    }
    if json_:
        print_json(summary)
        return
    console.print(
        f"wrote {n} points of a {manifold} (d={d}) in R^{D} to {out}; target {target} (β={beta:g}), "
        f"σ={noise:g}; largest distance from the manifold's equations {summary['max_residual']:.1e}",
        highlight=False,
    )
