"""`tmcheck sweep model`: the model-scaling sweep of the paper's Section 3 (Figure 3, eq. 4).

A grid of GPT widths and depths trained on one corpus at a fixed n until early stopping, plus a
data arm for the same corpus's alpha-hat_D; `tmcheck report DIR` fits alpha-hat_N and tests it
against 2 beta / d-hat and the ID-free conversion. Library: tmcheck.empirics.sweep.model (kind "model").
Registered into `tmcheck sweep` by cli/sweep.py.
"""

from __future__ import annotations

from pathlib import Path

import typer

from tmcheck.cli.common import console, handle_errors, print_json
from tmcheck.cli.options import JsonOpt
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
    sweep_directory,
)

DEFAULT_DIR = Path("runs/sweep-model")


@handle_errors
def model(
    sweep_dir: Path | None = typer.Argument(None, help="Sweep directory (created, or resumed); the same as --out."),
    out: Path | None = typer.Option(None, "--out", "-o", help=f"Sweep directory (default {DEFAULT_DIR})."),
    preset: str | None = typer.Option(
        None,
        "--preset",
        help="tiny or cpu (default: the sweep's own, or tiny for a "
        "new one); cpu trains on the SQL corpus (`tmcheck data prepare sql`).",
    ),
    corpus: str | None = typer.Option(None, "--corpus", help="The corpus (default: the preset's)."),
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
    """Train a width x depth grid of GPTs at a fixed n (and a data arm); test loss at the best-val checkpoint."""
    from tmcheck.empirics.sweep import run_sweep

    path = sweep_directory(sweep_dir, out, DEFAULT_DIR)
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
        rows = run_sweep(path, "model", preset, {"corpus": corpus}, log=log, executor=ex)
    if json_:
        print_json(rows)
    else:
        console.print(
            f"{len(rows)} runs finished; results in {path / 'results.jsonl'}; `tmcheck report {path}` fits alpha-hat_N"
        )
