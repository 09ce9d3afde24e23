"""The executor options every sweep command takes (`sweep data`, `sweep model`, `sweep synthetic`), defined once,
and the one rule for a sweep's directory (`sweep_directory`).

    def cmd(..., executor: ExecutorOpt = "local", workers: WorkersOpt = None, max_failures: MaxFailuresOpt = None,
            slurm_partition: PartitionOpt = None, slurm_gpus_per_task: GpusPerTaskOpt = None,
            slurm_time: SlurmTimeOpt = None, slurm_array_parallelism: ArrayParallelismOpt = None,
            slurm_cpus_per_task: CpusPerTaskOpt = None, sbatch: SbatchOpt = None):
        ex = make_executor(executor, workers, max_failures, slurm_partition, slurm_gpus_per_task, slurm_time,
                           slurm_array_parallelism, slurm_cpus_per_task, sbatch, log)
        run_sweep(..., executor=ex)      # inside a run_failures() block: failed runs exit 1, one line

Library: tmcheck.empirics.sweep.executors (local pool, serial) and tmcheck.empirics.sweep.slurm.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated

import typer

from tmcheck.cli.common import fail
from tmcheck.cli.options import positive_int

EXECUTORS = ("local", "slurm")


def sweep_directory(positional: Path | None, out: Path | None, default: Path) -> Path:
    """`sweep KIND DIR` and `sweep KIND --out DIR` name the same directory; both at once must agree."""
    if positional is not None and out is not None and positional != out:
        raise typer.BadParameter(f"two sweep directories given ({positional} and --out {out}); give one")
    return positional or out or default


def _executor_name(value: str) -> str:
    if value not in EXECUTORS:
        raise typer.BadParameter(f"unknown executor {value!r}; use local or slurm")
    return value


ExecutorOpt = Annotated[
    str,
    typer.Option(
        "--executor", callback=_executor_name, help="local (a process pool here) or slurm (one array task per run)."
    ),
]
WorkersOpt = Annotated[
    int | None,
    typer.Option(
        "--workers",
        callback=positive_int,
        help="local: worker processes (default: one per GPU, else one per core; 1 runs in this process).",
    ),
]
MaxFailuresOpt = Annotated[
    int | None,
    typer.Option(
        "--max-failures", callback=positive_int, help="Stop handing out runs after this many failures (default: never)."
    ),
]
PartitionOpt = Annotated[str | None, typer.Option("--slurm-partition", help="slurm: partition.")]
GpusPerTaskOpt = Annotated[
    int | None,
    typer.Option("--slurm-gpus-per-task", min=0, help="slurm: GPUs per run (default: 1 for gpu* presets, else 0)."),
]
CpusPerTaskOpt = Annotated[
    int | None,
    typer.Option(
        "--slurm-cpus-per-task",
        callback=positive_int,
        help="slurm: cores per run (default: 8 for gpu* presets, else 1).",
    ),
]
SlurmTimeOpt = Annotated[
    str | None,
    typer.Option(
        "--slurm-time",
        help="slurm: time limit per run, minutes or H:MM:SS (a run that hits it is requeued and resumes).",
    ),
]
ArrayParallelismOpt = Annotated[
    int | None,
    typer.Option("--slurm-array-parallelism", callback=positive_int, help="slurm: at most this many runs at once."),
]
SbatchOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--sbatch",
        help="slurm: other sbatch options as KEY=VALUE, repeated (e.g. --sbatch qos=high --sbatch account=lab).",
    ),
]


def make_executor(
    executor: str,
    workers: int | None,
    max_failures: int | None,
    partition: str | None,
    gpus_per_task: int | None,
    time_limit: str | None,
    array_parallelism: int | None,
    cpus_per_task: int | None,
    sbatch: list[str] | None,
    log,
):
    """The executor the options name; options of the other executor are refused (one line, exit 2)."""
    slurm_given = [
        name
        for name, v in (
            ("--slurm-partition", partition),
            ("--slurm-gpus-per-task", gpus_per_task),
            ("--slurm-time", time_limit),
            ("--slurm-array-parallelism", array_parallelism),
            ("--slurm-cpus-per-task", cpus_per_task),
            ("--sbatch", sbatch),
        )
        if v
    ]
    if executor == "local":
        if slurm_given:
            raise typer.BadParameter(f"{slurm_given[0]} needs --executor slurm")
        from tmcheck.empirics.sweep.executors import local

        return local(workers, max_failures, log)
    if workers is not None:
        raise typer.BadParameter("--workers is for --executor local (SLURM runs one task per run)")
    from tmcheck.empirics.sweep.slurm import minutes, sbatch_options, slurm

    try:
        limit = minutes(time_limit) if time_limit is not None else None
        extra = sbatch_options(sbatch)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    return slurm(
        partition, gpus_per_task, cpus_per_task, limit, array_parallelism, extra, max_failures=max_failures, log=log
    )


@contextlib.contextmanager
def run_failures():
    """Failed runs of a sweep: one line on stderr and exit 1 (the finished rows are merged already)."""
    from tmcheck.empirics.sweep.executors import SweepFailed

    try:
        yield
    except SweepFailed as exc:
        fail(str(exc), 1)
