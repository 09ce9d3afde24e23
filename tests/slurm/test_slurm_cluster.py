"""The real SLURM tests against the one-node cluster of .ci/slurm-up.sh:
a job array through submitit's `map_array`, and `scancel` of a running job. They run inside
`make test`; with TMCHECK_SLURM=1 (set by .ci/run) a missing cluster fails them."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
import submitit

pytestmark = pytest.mark.slurm


def _job_state(job_id: str) -> str:
    """JobState from `scontrol show job` (no accounting here, so no sacct; the controller keeps a
    finished job's record MinJobAge seconds)."""
    out = subprocess.run(
        ["scontrol", "show", "job", job_id], capture_output=True, text=True, check=True, timeout=30
    ).stdout
    return next(f.split("=", 1)[1] for f in out.split() if f.startswith("JobState="))


def _wait(pred, timeout: float, what) -> None:
    """Poll `pred` until true; on timeout fail with `what` (a string, or a callable giving one then)."""
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            what = what() if callable(what) else what
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.5)


def _executor(folder: Path):
    ex = submitit.AutoExecutor(folder=folder, cluster="slurm")
    ex.update_parameters(timeout_min=5, cpus_per_task=1, slurm_array_parallelism=2)
    return ex


def test_map_array_runs_one_task_per_input(slurm_scratch):
    def square_and_task(x):  # local, so cloudpickle sends it by value
        return x * x, int(os.environ["SLURM_ARRAY_TASK_ID"])

    jobs = _executor(slurm_scratch).map_array(square_and_task, [2, 3, 4])
    assert len({j.job_id.split("_")[0] for j in jobs}) == 1, "one array, not three jobs"
    # Bounded: without accounting submitit cannot see a job that died without writing its result.
    _wait(
        lambda: all(j.paths.result_pickle.exists() for j in jobs),
        300,
        lambda: f"three results (states: {[_job_state(j.job_id) for j in jobs]})",
    )
    results = [j.result() for j in jobs]
    assert results == [(4, 0), (9, 1), (16, 2)]
    for j in jobs:
        _wait(lambda j=j: _job_state(j.job_id) == "COMPLETED", 60, f"{j.job_id} COMPLETED")
    assert all(Path(j.paths.stdout).exists() for j in jobs), "logs land in the scratch folder"


def test_scancel_kills_a_running_job_and_its_process(slurm_scratch):
    pid_file = slurm_scratch / "pid"

    def sleep_long(path):
        import pathlib

        pathlib.Path(path).write_text(str(os.getpid()))
        time.sleep(600)

    job = _executor(slurm_scratch).submit(sleep_long, str(pid_file))
    _wait(lambda: _job_state(job.job_id) == "RUNNING" and pid_file.exists(), 180, "RUNNING job")
    pid = int(pid_file.read_text())
    os.kill(pid, 0)  # the job's Python process is alive on this host
    subprocess.run(["scancel", job.job_id], check=True, timeout=30)
    _wait(lambda: _job_state(job.job_id) == "CANCELLED", 120, "CANCELLED state")

    def gone():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    _wait(gone, 60, f"process {pid} killed by slurmd")
    assert not job.paths.result_pickle.exists(), "a cancelled job leaves no result"
