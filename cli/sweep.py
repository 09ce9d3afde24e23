"""`tmcheck sweep data`: the data-scaling sweep of the paper's Section 3 (Figure 2); `tmcheck sweep status`.

A sweep is a directory (config, plan, one folder per run, results.jsonl); rerunning resumes it,
whichever executor (--executor local --workers N, or slurm) ran it before.
Library: tmcheck.empirics.sweep (kind "pretrain"; executors, slurm, status).
"""

from __future__ import annotations

from pathlib import Path

import typer

from tmcheck.cli.common import console, handle_errors, print_json
from tmcheck.cli.options import JsonOpt, parse_list
from tmcheck.cli.sweep_model import model as model_command
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

app = typer.Typer(no_args_is_help=True, help="Sweeps over training-set size (paper Sec. 3, Figure 2).")
DEFAULT_DIR = Path("runs/sweep")


def sweep_directory(positional: Path | None, out: Path | None) -> Path:
    """`sweep data DIR` and `sweep data --out DIR` name the same directory; both at once must agree."""
    if positional is not None and out is not None and positional != out:
        raise typer.BadParameter(f"two sweep directories given ({positional} and --out {out}); give one")
    return positional or out or DEFAULT_DIR


@app.command()
@handle_errors
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
    """Train at a geometric grid of training-set sizes n and seeds; test loss at the best-val checkpoint."""
    from tmcheck.empirics.sweep import run_sweep

    path = sweep_directory(sweep_dir, out)
    corpora = [c for item in corpus for c in parse_list(item, "--corpus")] if corpus else None
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
        rows = run_sweep(path, "pretrain", preset, {"corpora": corpora}, progress=not json_, log=log, executor=ex)
    if json_:
        print_json(rows)
    else:
        console.print(f"{len(rows)} runs finished; results in {path / 'results.jsonl'}")


app.command("model")(model_command)  # `tmcheck sweep model` (Figure 3), defined in cli/sweep_model.py


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
