"""The SLURM executor: one job-array task per run spec, through submitit (the runs of paper Section 3).

    executor = slurm(partition="gpu", gpus_per_task=1, time="2:00:00", array_parallelism=32)
    run_sweep("runs/s", "pretrain", "gpu-quick", executor=executor)

The submitter (run_sweep, holding the sweep's lock) submits the specs without row.json as one array
(`SlurmExecutor.map_array`), records run -> job id in slurm/jobs.json, and watches the sweep
directory: a row.json is a finished run; a task that leaves the queue without one is a failure
(its own error.json if it wrote one, else "ended without a result" with the job's last state). A
task is a `Checkpointable`: on preemption or timeout submitit requeues it, and the run resumes from
its checkpoints. A rerun of the sweep waits for tasks of an earlier submission still in the queue
instead of submitting them again. Logs: slurm/<job>_<task>_log.{out,err} in the sweep directory.

Job states come from `squeue` (no accounting is needed: submitit's own state reads sacct). The
controller is asked once when the executor is made (`check_controller`), before a sweep directory is
created or anything is planned: no SLURM client, or a controller that does not answer, is one line.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping

import submitit

from tmcheck.empirics.sweep import layout
from tmcheck.empirics.sweep.core import Context, RunSpec, SweepDir
from tmcheck.empirics.sweep.executors import (
    Log,
    Tally,
    attempt,
    kind_blob,
    last_line,
    read_failure,
    record_failure,
    worker_context,
)
from tmcheck.util import atomic

JOB_ID = re.compile(r"^\d+(?:_\d+)?$")


def minutes(text: str | int) -> int:
    """A SLURM time limit in whole minutes (seconds round up), in sbatch's forms: M, M:S, H:M:S,
    D-H, D-H:M, D-H:M:S."""
    s = str(text).strip()
    days, _, rest = s.rpartition("-") if "-" in s else ("0", "", s)
    parts = rest.split(":")
    if not all(p.isdigit() for p in [days, *parts]) or len(parts) > 3:
        raise ValueError(f"bad SLURM time {text!r}: give minutes, H:MM:SS or D-HH:MM")
    n = [int(p) for p in parts]
    if "-" in s:
        h, m, sec = (n + [0, 0])[:3]
    else:
        h, m, sec = {1: (0, n[0], 0), 2: (0, *n), 3: tuple(n)}[len(n)]
    value = int(days) * 1440 + h * 60 + m + (sec > 0)
    if value < 1:
        raise ValueError(f"SLURM time must be at least one minute, got {text!r}")
    return value


def sbatch_options(items: list[str] | None) -> dict[str, str]:
    """`--sbatch KEY=VALUE` pass-through (e.g. qos=high, account=lab, constraint=a100) as sbatch options."""
    out = {}
    for item in items or []:
        key, eq, value = item.partition("=")
        key = key.strip().lstrip("-").replace("-", "_")
        if not eq or not re.fullmatch(r"[a-z][a-z0-9_]*", key):
            raise ValueError(f"bad --sbatch option {item!r}: use KEY=VALUE, e.g. qos=high")
        out[key] = value
    return out


def preset_resources(preset) -> dict:
    """Per-run resources a preset implies: a GPU for the GPU presets (named gpu*), else one core."""
    gpu = str(getattr(preset, "name", "")).startswith("gpu")
    return {"gpus_per_task": 1 if gpu else 0, "cpus_per_task": 8 if gpu else 1, "time": 60 if gpu else 30}


def _squeue() -> dict[str, str]:
    """job id ('A_i' for array tasks) -> state of every job of this user in the queue."""
    r = subprocess.run(["squeue", "--me", "-h", "-r", "-o", "%i|%T"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"squeue failed: {(r.stderr.strip().splitlines() or ['no message'])[-1]}")
    return dict(line.split("|", 1) for line in r.stdout.split() if "|" in line)


CONTROLLER_TIMEOUT_S = 20


def check_controller() -> None:
    """ValueError (one line) unless sbatch is installed and the controller answers squeue in time."""
    if shutil.which("sbatch") is None or shutil.which("squeue") is None:
        raise ValueError("--executor slurm: sbatch or squeue not found (no SLURM client on this machine)")
    try:
        r = subprocess.run(
            ["squeue", "--me", "-h", "-o", "%i"], capture_output=True, text=True, timeout=CONTROLLER_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        raise ValueError(
            f"--executor slurm: the SLURM controller did not answer squeue within {CONTROLLER_TIMEOUT_S} s"
        ) from None
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["no message"])[-1][:200]
        raise ValueError(f"--executor slurm: the SLURM controller does not answer (squeue: {last})")


def last_state(job_id: str) -> str:
    """The job's state as `scontrol show job` still knows it (MinJobAge), else 'unknown'."""
    if not JOB_ID.match(job_id) or shutil.which("scontrol") is None:
        return "unknown"
    r = subprocess.run(["scontrol", "show", "job", job_id], capture_output=True, text=True, timeout=60)
    m = re.search(r"JobState=(\S+)", r.stdout)
    return m.group(1) if m else "unknown"


def queue_states() -> dict[str, str]:
    """_squeue(), or {} where there is no SLURM (for `sweep status`)."""
    if shutil.which("squeue") is None:
        return {}
    try:
        return _squeue()
    except (RuntimeError, subprocess.TimeoutExpired):
        return {}


def read_jobs(sweep: SweepDir) -> dict[str, str]:
    """run -> SLURM job id of its latest submission (slurm/jobs.json), names and ids checked."""
    path = sweep.path / layout.SLURM / layout.JOBS
    if not path.exists():
        return {}
    jobs = json.loads(path.read_text())
    if not isinstance(jobs, dict):
        raise ValueError(f"{path} is not a JSON object")
    for run, job in jobs.items():
        layout.check_run_name(run)
        if not isinstance(job, str) or not JOB_ID.match(job):
            raise ValueError(f"{path}: bad SLURM job id {job!r} for run {run}")
    return jobs


def _cpu_ids(text: str) -> list[int]:
    """'0-2,5' -> [0, 1, 2, 5]."""
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def bind_to_allocation() -> list[int] | None:
    """Pin this task to the cores SLURM allocated it, where SLURM did not (TaskPlugin=task/none, as on
    the test cluster): else the trainer, which takes a thread per core it may use, would start one
    per core of the node. The allocation is `scontrol show job -d`'s CPU_IDs. None: nothing to do."""
    want = int(os.environ.get("SLURM_CPUS_PER_TASK") or 0)
    have = os.sched_getaffinity(0)
    job = os.environ.get("SLURM_JOB_ID", "")
    if not want or len(have) <= want or not JOB_ID.match(job) or shutil.which("scontrol") is None:
        return None
    out = subprocess.run(["scontrol", "show", "job", "-d", job], capture_output=True, text=True, timeout=60).stdout
    node = os.environ.get("SLURMD_NODENAME", "")
    found = dict(re.findall(r"Nodes=(\S+) CPU_IDs=([\d,-]+)", out))
    ids = found.get(node) or (next(iter(found.values())) if len(found) == 1 else None)
    cpus = [c for c in _cpu_ids(ids) if c in have] if ids else []
    if not cpus:
        return None
    os.sched_setaffinity(0, cpus)
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(len(cpus))
    return cpus


class RunTask(submitit.helpers.Checkpointable):
    """One array task: run one spec of the sweep. On preemption or timeout submitit calls
    `checkpoint`, which (by Checkpointable's default) resubmits the same call: the run resumes from
    the checkpoints in its directory."""

    def __call__(self, sweep_path: str, spec: dict, config: dict, blob: dict | None) -> str:
        cores = bind_to_allocation()
        ctx = worker_context(sweep_path, config, blob)
        job = os.environ.get("SLURM_ARRAY_JOB_ID", os.environ.get("SLURM_JOB_ID", ""))
        task = os.environ.get("SLURM_ARRAY_TASK_ID")
        where = {
            "executor": "slurm",
            "job": f"{job}_{task}" if task is not None else job,
            "pid": os.getpid(),
            "cores": cores or sorted(os.sched_getaffinity(0)),
        }
        status, payload = attempt(ctx.sweep, spec, ctx, where)
        if status == "failed":
            raise RuntimeError(payload["error"])  # the task ends FAILED; error.json holds the record
        return status


def slurm(
    partition: str | None = None,
    gpus_per_task: int | None = None,
    cpus_per_task: int | None = None,
    time_limit: str | int | None = None,
    array_parallelism: int | None = None,
    sbatch: Mapping | None = None,
    max_requeues: int = 3,
    max_failures: int | None = None,
    log: Log = print,
    poll_s: float = 2.0,
):
    """The executor that submits a sweep's specs as one SLURM array and waits for their rows.

    Resources default to the preset's (`preset_resources`); every argument given overrides them. The
    controller is checked here, before the executor is handed to run_sweep."""
    check_controller()

    def execute(ctx: Context, specs: list[RunSpec]) -> Iterator[dict]:
        sweep = ctx.sweep
        tally = Tally(max_failures, log)
        queue = _squeue()
        jobs = read_jobs(sweep)
        waiting = {s.run: jobs[s.run] for s in specs if jobs.get(s.run) in queue}
        if waiting:
            log(f"waiting for {len(waiting)} run(s) still queued from an earlier submission")
        submit = [s for s in specs if s.run not in waiting]
        if submit:
            ex = _executor(
                sweep, ctx, partition, gpus_per_task, cpus_per_task, time_limit, array_parallelism, sbatch, max_requeues
            )
            blob = kind_blob(ctx)
            n = len(submit)
            submitted = ex.map_array(
                RunTask(), [str(sweep.path)] * n, [s.as_dict() for s in submit], [ctx.config] * n, [blob] * n
            )
            for s, job in zip(submit, submitted, strict=True):
                jobs[s.run] = waiting[s.run] = job.job_id
                (sweep.run_dir(s.run) / layout.ERROR).unlink(missing_ok=True)  # the retry is on its way
            atomic.write_json(sweep.path / layout.SLURM / layout.JOBS, jobs)
            log(f"submitted {n} run(s) as SLURM array {submitted[0].job_id.split('_')[0]}")
        yield from _watch(sweep, waiting, tally, poll_s)
        tally.finish(sweep)

    return execute


def _executor(sweep, ctx, partition, gpus_per_task, cpus_per_task, time_limit, array_parallelism, sbatch, max_requeues):
    res = preset_resources(ctx.preset)
    params = {
        "time": minutes(time_limit if time_limit is not None else res["time"]),
        "cpus_per_task": cpus_per_task or res["cpus_per_task"],
        "job_name": f"tmcheck-{ctx.kind.name}",
        "signal_delay_s": 120,
    }
    gpus = res["gpus_per_task"] if gpus_per_task is None else gpus_per_task
    if gpus:
        params["gpus_per_task"] = gpus
    if partition:
        params["partition"] = partition
    if array_parallelism:
        params["array_parallelism"] = array_parallelism
    if sbatch:
        params["additional_parameters"] = dict(sbatch)
    ex = submitit.SlurmExecutor(folder=sweep.path / layout.SLURM, max_num_timeout=max_requeues)
    ex.update_parameters(**params)
    return ex


def _watch(sweep: SweepDir, waiting: dict[str, str], tally: Tally, poll_s: float) -> Iterator[dict]:
    """Yield rows as row.json files appear; a task gone from the queue without one is a failure."""
    while waiting:
        queue = _squeue()
        for run, job in list(waiting.items()):
            row = sweep.read_row(run)
            if row is None and job in queue:
                continue
            if row is None:
                time.sleep(0.2)  # the row may land just as the task leaves the queue
                row = sweep.read_row(run)
            del waiting[run]
            if row is not None:
                yield row
                continue
            err = read_failure(sweep, run)
            if err is None or err.get("job") != job:
                log_path = f"{layout.SLURM}/{job}_0_log.err"
                tail = last_line(sweep.path / log_path)
                err = record_failure(
                    sweep,
                    run,
                    f"SLURM job {job} ended without a result (state {last_state(job)}); "
                    f"last line of {log_path}: {tail or '(empty)'}",
                    {"executor": "slurm", "job": job, "log": log_path, "log_tail": tail},
                )
            tally.outcome(run, "failed", err)
        if tally.stop():
            _cancel_pending(waiting, queue, tally)
        if waiting:
            time.sleep(poll_s)


def _cancel_pending(waiting: dict[str, str], queue: dict[str, str], tally: Tally) -> None:
    """--max-failures reached: cancel the tasks not started yet (the running ones finish)."""
    pending = [run for run, job in waiting.items() if queue.get(job) == "PENDING"]
    if pending:
        subprocess.run(["scancel", *(waiting[r] for r in pending)], capture_output=True, timeout=60)
        for run in pending:
            del waiting[run]
        tally.not_started += len(pending)
