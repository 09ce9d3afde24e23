"""`tmcheck sweep`: the sweeps of the paper's Section 3 and eq. 3-4, and their status.

  tmcheck sweep data DIR       data scaling of pretraining (Figure 2)
  tmcheck sweep model DIR      model scaling of pretraining (Figure 3, eq. 4)
  tmcheck sweep synthetic DIR  synthetic manifold regression with known d and β (eq. 3-4)
  tmcheck sweep controls DIR   positive controls: kNN and kernel ridge with proven rates (issue #38)
  tmcheck sweep known DIR      GPTs on corpora with a known data-scaling exponent (issue #39)
  tmcheck sweep status DIR     each run's state

A sweep is a directory (config, plan, one folder per run, results.jsonl); rerunning resumes it,
whichever executor (--executor local --workers N, or slurm) ran it before. Progress is drawn on
stderr (also under --json). Library: tmcheck.empirics.sweep (kinds pretrain, model, synthetic, controls;
executors, slurm, status), and known.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tmcheck.cli.common import console, handle_errors, print_json
from tmcheck.cli.options import (
    LOCAL,
    BootstrapOpt,
    ExecutorSpec,
    JsonOpt,
    RegistryHelp,
    executor_options,
    parse_list,
    run_failures,
    sweep_directory,
)

app = typer.Typer(no_args_is_help=True, help="Sweeps: data and model scaling (Sec. 3), synthetic regression (eq. 3-4).")
DEFAULT_DIR = Path("runs/sweep")
SYNTHETIC_DIR = Path("synth-out")
MIN_FIT_SIZES = 3  # the report fits a curve only on at least this many converged sizes (report.common)
SweepDirArg = Annotated[Path | None, typer.Argument(help="Sweep directory (created, or resumed); the same as --out.")]
ReportOpt = Annotated[bool, typer.Option("--report/--no-report", help="Write the report when the sweep is done.")]


def _set_option(kind: str) -> type:
    """The repeatable --set FIELD=VALUE of a preset-driven kind (its fields listed by RegistryHelp)."""
    return Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="FIELD=VALUE",
            help=(
                "Change a field of the preset, repeated; the value is read by the field's type (a list as 1,2,4, "
                f"'' the empty list), e.g. --set seeds=0,1. Fields: {{fields:{kind}}}."
            ),
        ),
    ]


def _out_option(default: Path) -> type:
    return Annotated[Path | None, typer.Option("--out", "-o", help=f"Sweep directory (default {default}).")]


def _preset_option(kind: str, default: str | None) -> type:
    """--preset of a kind: its presets listed by RegistryHelp; no default means the sweep's own (resumed)."""
    own = "" if default else " (default: the sweep's own, or tiny for a new one)"
    return Annotated[str | None if default is None else str, typer.Option("--preset", help=f"{{presets:{kind}}}{own}.")]


SynthSetOpt, ControlsSetOpt, KnownSetOpt = (_set_option(k) for k in ("synthetic", "controls", "known"))


def _sweep(path: Path, kind: str, preset, executor: ExecutorSpec, json_: bool, **kw) -> list:
    """Run (or resume) a sweep (`run_sweep`'s keywords in kw) with the executor its options name, its progress
    printed unless --json; failed runs: one line on stderr and exit 1."""
    from tmcheck.empirics.sweep import run_sweep

    log = (lambda s: None) if json_ else (lambda s: console.print(s, highlight=False))
    ex = executor.make(log)
    with run_failures():
        return run_sweep(path, kind, preset, log=log, executor=ex, **kw)


def _finished(rows: list, path: Path, json_: bool, note: str = "") -> None:
    """The rows as JSON, or how many runs finished and where their results are."""
    if json_:
        print_json(rows)
    else:
        console.print(f"{len(rows)} runs finished; results in {path / 'results.jsonl'}{note}")


def _sweep_and_report(
    path: Path, kind: str, p, report: bool, bootstrap: int, executor: ExecutorSpec, json_: bool, **kw
):
    """Run (or resume) a sweep of a kind with a report, then write and print the report (or only say how
    many runs finished, with --no-report): what `sweep synthetic` and `sweep controls` do after parsing."""
    from tmcheck.empirics.report import build_report, summary

    rows = _sweep(path, kind, p, executor, json_, **kw)
    if not report:
        _finished(rows, path, json_)
        return
    rep = build_report(path, bootstrap)
    if json_:
        print_json(rep)
        return
    console.print(summary(rep), highlight=False)


@app.command(cls=RegistryHelp)
@handle_errors
@executor_options
def data(
    sweep_dir: SweepDirArg = None,
    out: _out_option(DEFAULT_DIR) = None,
    preset: _preset_option("pretrain", None) = None,
    corpus: list[str] | None = typer.Option(
        None, "--corpus", help="Corpora, comma-separated or repeated (default: the preset's)."
    ),
    executor: ExecutorSpec = LOCAL,
    json_: JsonOpt = False,
) -> None:
    """Train at a geometric grid of training-set sizes n and seeds; test loss at the best-val checkpoint."""
    path = sweep_directory(sweep_dir, out, DEFAULT_DIR)
    corpora = [c for item in corpus for c in parse_list(item, "--corpus")] if corpus else None
    _finished(_sweep(path, "pretrain", preset, executor, json_, options={"corpora": corpora}), path, json_)


def check_report_can_be_made(p) -> None:
    """Refuse (one line, before anything trains) a synthetic sweep whose report could not fit its
    exponents: fewer than MIN_FIT_SIZES sizes per curve. One seed is a valid sweep."""
    for d in p.dims:
        for beta in p.betas:
            ns = p.at(d, beta).ns  # a (d, β) with a tuned grid of its own fits on that one
            if len(set(ns)) < MIN_FIT_SIZES:
                raise typer.BadParameter(
                    f"the report fits alpha-hat_D on at least {MIN_FIT_SIZES} sizes n, got {len(set(ns))} "
                    f"({', '.join(map(str, ns))}); give more with --set ns=..., or pass --no-report"
                )
    if p.model_dims and len(set(p.model_widths)) < MIN_FIT_SIZES:
        raise typer.BadParameter(
            f"the report fits alpha-hat_N on at least {MIN_FIT_SIZES} widths, got {len(set(p.model_widths))}; "
            "pass --set model_dims= for no model sweep, or --no-report"
        )


@app.command("synthetic", cls=RegistryHelp)
@handle_errors
@executor_options
def synthetic(
    sweep_dir: SweepDirArg = None,
    out: _out_option(SYNTHETIC_DIR) = None,
    preset: _preset_option("synthetic", "tiny") = "tiny",
    settings: SynthSetOpt = None,
    report: ReportOpt = True,
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
    from tmcheck.empirics.sweep import overrides
    from tmcheck.empirics.sweep.kinds import get_preset

    path = sweep_directory(sweep_dir, out, SYNTHETIC_DIR)
    p = overrides.apply(get_preset(preset, "synthetic"), settings or ())
    if report:
        check_report_can_be_made(p)
    _sweep_and_report(path, "synthetic", p, report, bootstrap, executor, json_, reuse=reuse)


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


@app.command("model", cls=RegistryHelp)
@handle_errors
@executor_options
def model(
    sweep_dir: SweepDirArg = None,
    out: _out_option(MODEL_DIR) = None,
    preset: _preset_option("model", None) = None,
    corpus: str | None = typer.Option(None, "--corpus", help="The corpus (default: the preset's)."),
    executor: ExecutorSpec = LOCAL,
    json_: JsonOpt = False,
) -> None:
    """Train a width x depth grid of GPTs at a fixed n (and a data arm); test loss at the best-val checkpoint."""
    path = sweep_directory(sweep_dir, out, MODEL_DIR)
    rows = _sweep(path, "model", preset, executor, json_, options={"corpus": corpus})
    _finished(rows, path, json_, f"; `tmcheck report {path}` fits alpha-hat_N")


CONTROLS_DIR = Path("controls-out")


@app.command("controls", cls=RegistryHelp)
@handle_errors
@executor_options
def controls(
    sweep_dir: SweepDirArg = None,
    out: _out_option(CONTROLS_DIR) = None,
    preset: _preset_option("controls", "tiny") = "tiny",
    settings: ControlsSetOpt = None,
    report: ReportOpt = True,
    bootstrap: BootstrapOpt = 1000,
    executor: ExecutorSpec = LOCAL,
    json_: JsonOpt = False,
) -> None:
    """Run (or resume) the positive controls (kNN with k ∝ n^{2β/(2β+d)}, kNN with k by validation, Gaussian
    kernel ridge with the theory's bandwidth and ridge) and test each one's α̂_D against 2β/(2β+d)."""
    from tmcheck.empirics.sweep import overrides
    from tmcheck.empirics.sweep.kinds import get_preset

    path = sweep_directory(sweep_dir, out, CONTROLS_DIR)
    p = overrides.apply(get_preset(preset, "controls"), settings or ())
    _sweep_and_report(path, "controls", p, report, bootstrap, executor, json_)


KNOWN_DIR = Path("known-out")


@app.command("known", cls=RegistryHelp)
@handle_errors
@executor_options
def known(
    sweep_dir: SweepDirArg = None,
    out: _out_option(KNOWN_DIR) = None,
    preset: _preset_option("known", "smoke") = "smoke",
    corpus: list[str] | None = typer.Option(
        None,
        "--corpus",
        help="Generated corpora synth:KIND[:key=value:...], comma-separated or repeated (default: the preset's).",
    ),
    settings: KnownSetOpt = None,
    report: ReportOpt = True,
    bootstrap: BootstrapOpt = 1000,
    executor: ExecutorSpec = LOCAL,
    json_: JsonOpt = False,
) -> None:
    """Train GPTs on corpora whose data-scaling exponent is known (`tmcheck data synth`) and test α̂_D against
    the known exponent (must be equivalent) and against it + 0.1 (must differ), with the design's power."""
    from tmcheck.empirics.sweep import overrides
    from tmcheck.empirics.sweep.kinds import get_preset

    path = sweep_directory(sweep_dir, out, KNOWN_DIR)
    p = overrides.apply(get_preset(preset, "known"), settings or ())
    corpora = [c for item in corpus for c in parse_list(item, "--corpus")] if corpus else None
    _sweep_and_report(path, "known", p, report, bootstrap, executor, json_, options={"corpora": corpora})
