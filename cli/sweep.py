"""`tmcheck sweep`: the sweeps of the paper's Section 3 and eq. 3-4, and their status.

  tmcheck sweep data DIR       data scaling of pretraining (Figure 2)
  tmcheck sweep model DIR      model scaling of pretraining (Figure 3, eq. 4)
  tmcheck sweep synthetic DIR  synthetic manifold regression with known d and β (eq. 3-4)
  tmcheck sweep status DIR     each run's state

A sweep is a directory (config, plan, one folder per run, results.jsonl); rerunning resumes it,
whichever executor (--executor local --workers N, or slurm) ran it before. Progress is drawn on
stderr (also under --json). Library: tmcheck.empirics.sweep (kinds pretrain, model, synthetic;
executors, slurm, status).
"""

from __future__ import annotations

from pathlib import Path

import typer

from tmcheck.cli.common import console, handle_errors, print_json
from tmcheck.cli.options import (
    LOCAL,
    BootstrapOpt,
    ExecutorSpec,
    JsonOpt,
    beta_value,
    executor_options,
    nonneg_finite,
    nonneg_int,
    parse_list,
    positive_int,
    run_failures,
    sweep_directory,
)

app = typer.Typer(no_args_is_help=True, help="Sweeps: data and model scaling (Sec. 3), synthetic regression (eq. 3-4).")
DEFAULT_DIR = Path("runs/sweep")
SYNTHETIC_DIR = Path("synth-out")
RENAMED_OPTIONS = {("sweep", "synthetic"): {"--seed": "--seeds"}}
MIN_FIT_SIZES = 3  # the report fits a curve only on at least this many converged sizes (report.common)


@app.command()
@handle_errors
@executor_options
def data(
    sweep_dir: Path | None = typer.Argument(None, help="Sweep directory (created, or resumed); the same as --out."),
    out: Path | None = typer.Option(None, "--out", "-o", help=f"Sweep directory (default {DEFAULT_DIR})."),
    preset: str | None = typer.Option(
        None,
        "--preset",
        help="tiny, cpu-demo, cpu-small, gpu-quick, gpu-paper (default: the sweep's own, or tiny for a new one).",
    ),
    corpus: list[str] | None = typer.Option(
        None, "--corpus", help="Corpora, comma-separated or repeated (default: the preset's)."
    ),
    executor: ExecutorSpec = LOCAL,
    json_: JsonOpt = False,
) -> None:
    """Train at a geometric grid of training-set sizes n and seeds; test loss at the best-val checkpoint."""
    from tmcheck.empirics.sweep import run_sweep

    path = sweep_directory(sweep_dir, out, DEFAULT_DIR)
    corpora = [c for item in corpus for c in parse_list(item, "--corpus")] if corpus else None
    log = (lambda s: None) if json_ else (lambda s: console.print(s, highlight=False))
    ex = executor.make(log)
    with run_failures():
        rows = run_sweep(path, "pretrain", preset, {"corpora": corpora}, log=log, executor=ex)
    if json_:
        print_json(rows)
    else:
        console.print(f"{len(rows)} runs finished; results in {path / 'results.jsonl'}")


def _ints(text: str | None, name: str) -> tuple[int, ...] | None:
    return parse_list(text, name, int, positive_int)


def check_report_can_be_made(p) -> None:
    """Refuse (one line, before anything trains) a synthetic sweep whose report could not fit its
    exponents: fewer than MIN_FIT_SIZES sizes per curve. One seed is a valid sweep."""
    for d in p.dims:
        for beta in p.betas:
            ns = p.at(d, beta).ns  # a (d, β) with a tuned grid of its own fits on that one
            if len(set(ns)) < MIN_FIT_SIZES:
                raise typer.BadParameter(
                    f"the report fits alpha-hat_D on at least {MIN_FIT_SIZES} sizes n, got {len(set(ns))} "
                    f"({', '.join(map(str, ns))}); give more with --n, or pass --no-report"
                )
    if p.model_dims and len(set(p.model_widths)) < MIN_FIT_SIZES:
        raise typer.BadParameter(
            f"the report fits alpha-hat_N on at least {MIN_FIT_SIZES} widths, got {len(set(p.model_widths))}; "
            f"pass --model-d '' for no model sweep, or --no-report"
        )


@app.command("synthetic")
@handle_errors
@executor_options
def synthetic(
    sweep_dir: Path | None = typer.Argument(None, help="Sweep directory (created, or resumed); the same as --out."),
    out: Path | None = typer.Option(None, "--out", "-o", help=f"Sweep directory (default {SYNTHETIC_DIR})."),
    preset: str = typer.Option(
        "tiny",
        "--preset",
        help=(
            "tiny (< 2 min, tests), demo (make demo; minutes), cpu (d in 1,2,4; ~30 min), cpu-decide (the tuned "
            "decision grid, n 100-10,000, 5 seeds, and the model sweep; results/synth-decide), cpu-decide2 (the "
            "same with d = 4 at n 1000-100,000; results/synth-decide2), gpu."
        ),
    ),
    d: str | None = typer.Option(None, "--d", help="Override: intrinsic dimensions d, e.g. 1,2,4."),
    beta: str | None = typer.Option(None, "--beta", help="Override: Hölder smoothness β in (0,1], e.g. 1,0.5."),
    n: str | None = typer.Option(None, "--n", help="Override: training-set sizes n, e.g. 100,1000,10000."),
    seeds: str | None = typer.Option(None, "--seeds", help="Override: seeds, e.g. 0,1,2 (one seed is a sweep too)."),
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
    reuse: Path | None = typer.Option(
        None,
        "--reuse",
        help=(
            "Another synthetic sweep directory: take its finished runs whose row this sweep would compute "
            "the same (same spec, same settings of their (d, β)) instead of training them again; each taken "
            "run's reused.json names where it came from."
        ),
    ),
    bootstrap: BootstrapOpt = 1000,
    executor: ExecutorSpec = LOCAL,
    json_: JsonOpt = False,
) -> None:
    """Run (or resume) the data- and model-scaling sweeps and compare α̂_D, α̂_N with 2β/(2β+d), 2β/d."""
    from tmcheck.empirics.presets import get_preset
    from tmcheck.empirics.report import build_report, summary
    from tmcheck.empirics.sweep import run_sweep

    path = sweep_directory(sweep_dir, out, SYNTHETIC_DIR)
    base = get_preset(preset, "synthetic")
    p = base.with_overrides(
        dims=_ints(d, "--d"),
        betas=parse_list(beta, "--beta", float, beta_value),
        ns=_ints(n, "--n"),
        seeds=parse_list(seeds, "--seeds", int, nonneg_int),
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
    if report:
        check_report_can_be_made(p)
    log = (lambda s: None) if json_ else (lambda s: console.print(s, highlight=False))
    ex = executor.make(log)
    with run_failures():
        rows = run_sweep(path, "synthetic", p, log=log, executor=ex, reuse=reuse)
    if not report:
        if json_:
            print_json(rows)
        else:
            console.print(f"{len(rows)} runs finished; results in {path / 'results.jsonl'}")
        return
    rep = build_report(path, bootstrap)
    if json_:
        print_json(rep)
        return
    console.print(summary(rep), highlight=False)


@app.command()
@handle_errors
def status(
    sweep_dir: Path = typer.Argument(..., help="A sweep directory (any kind)."),
    json_: JsonOpt = False,
) -> None:
    """Each run's state: done, running, queued (SLURM), failed (with its error), started (interrupted), pending."""
    from rich.table import Table

    from tmcheck.empirics.sweep.status import sweep_status

    st = sweep_status(sweep_dir)
    if json_:
        print_json(st)
        return
    table = Table(title=f"{st['kind']} sweep {st['preset']}: {sweep_dir}")
    for col in ("run", "state", "SLURM job", "error"):
        table.add_column(col)
    for r in st["runs"]:
        job = f"{r['job']} ({r['job_state']})" if r["job"] and r["job_state"] else (r["job"] or "")
        table.add_row(r["run"], r["state"], job, r["error"] or "")
    console.print(table)
    console.print(", ".join(f"{n} {k}" for k, n in st["counts"].items() if n), highlight=False)


MODEL_DIR = Path("runs/sweep-model")


@app.command("model")
@handle_errors
@executor_options
def model(
    sweep_dir: Path | None = typer.Argument(None, help="Sweep directory (created, or resumed); the same as --out."),
    out: Path | None = typer.Option(None, "--out", "-o", help=f"Sweep directory (default {MODEL_DIR})."),
    preset: str | None = typer.Option(
        None,
        "--preset",
        help="tiny or cpu (default: the sweep's own, or tiny for a "
        "new one); cpu trains on the SQL corpus (`tmcheck data prepare sql`).",
    ),
    corpus: str | None = typer.Option(None, "--corpus", help="The corpus (default: the preset's)."),
    executor: ExecutorSpec = LOCAL,
    json_: JsonOpt = False,
) -> None:
    """Train a width x depth grid of GPTs at a fixed n (and a data arm); test loss at the best-val checkpoint."""
    from tmcheck.empirics.sweep import run_sweep

    path = sweep_directory(sweep_dir, out, MODEL_DIR)
    log = (lambda s: None) if json_ else (lambda s: console.print(s, highlight=False))
    ex = executor.make(log)
    with run_failures():
        rows = run_sweep(path, "model", preset, {"corpus": corpus}, log=log, executor=ex)
    if json_:
        print_json(rows)
    else:
        console.print(
            f"{len(rows)} runs finished; results in {path / 'results.jsonl'}; `tmcheck report {path}` fits alpha-hat_N"
        )
