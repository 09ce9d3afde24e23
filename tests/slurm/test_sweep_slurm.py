"""The SLURM executor on the one-node test cluster: one array task per run gives the
serial rows; `scancel` of one task and SIGKILL of another task's process (the child of slurmstepd)
mid-run lose and redo no finished run, and the rerun resumes the killed runs from their checkpoints;
a rerun after the submitter died waits for the tasks still queued instead of submitting them again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from tmcheck.empirics.sweep import SweepDir, layout, register_kind, run_sweep
from tmcheck.empirics.sweep.executors import SweepFailed, serial
from tmcheck.empirics.sweep.slurm import read_jobs, slurm
from tmcheck.empirics.sweep.status import sweep_status

TOY_DIR = Path(__file__).parents[1] / "empirics"
sys.path.insert(0, str(TOY_DIR))
import sweep_toy  # noqa: E402
from sweep_toy import attempts, quiet, strip  # noqa: E402

pytestmark = pytest.mark.slurm


@pytest.fixture
def toy(slurm_scratch, monkeypatch):
    """The toy kind, importable by the jobs (sbatch exports this environment), and a sweep directory
    on the scratch filesystem."""
    register_kind(sweep_toy.KIND)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TOY_DIR), os.environ.get("PYTHONPATH", "")]))
    return slurm_scratch


def executor(log=quiet):
    return slurm(time_limit=10, cpus_per_task=1, array_parallelism=2, log=log, poll_s=0.5)


def _wait(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while not (value := pred()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.2)
    return value


def test_array_gives_the_serial_rows(toy):
    preset = replace(sweep_toy.ToyPreset(name="toy"), xs=(1, 2, 3))
    ref = run_sweep(toy / "ref", "exectoy", preset, progress=False, log=quiet, executor=serial(log=quiet))
    rows = run_sweep(toy / "s", "exectoy", preset, progress=False, log=quiet, executor=executor())
    assert strip(rows) == strip(ref) and len(rows) == 3
    sweep = SweepDir(toy / "s")
    jobs = read_jobs(sweep)
    assert len({j.split("_")[0] for j in jobs.values()}) == 1 and sorted(jobs) == [r["run"] for r in rows]
    workers = [json.loads((sweep.run_dir(r["run"]) / "worker.json").read_text()) for r in rows]
    assert all(len(w["cores"]) == 1 and w["omp"] == "1" for w in workers), "each task pinned to its one core"
    logs = sorted(p.name for p in (toy / "s" / layout.SLURM).glob("*_log.out"))
    assert len(logs) == 3, logs
    st = sweep_status(toy / "s")
    assert st["counts"]["done"] == 3 and all(r["job"] == jobs[r["run"]] for r in st["runs"])
    # a rerun submits nothing
    before = dict(jobs)
    assert run_sweep(toy / "s", "exectoy", None, progress=False, log=quiet, executor=executor()) == rows
    assert read_jobs(sweep) == before


def test_scancel_and_sigkill_mid_run_then_rerun(toy):
    preset = replace(
        sweep_toy.ToyPreset(name="toy"), xs=(1, 2, 3, 4), steps=20, sleep_s=0.5
    )  # 10 s a run: longer than KillWait
    path = toy / "s"
    sweep = SweepDir(path)
    outcome = {}

    def submit():
        try:
            outcome["rows"] = run_sweep(path, "exectoy", preset, progress=False, log=quiet, executor=executor())
        except SweepFailed as exc:
            outcome["error"] = str(exc)

    t = threading.Thread(target=submit)
    t.start()

    def two_mid_way():
        runs = [p.parent.name for p in path.glob("runs/*/progress.json")]
        mid = [
            r
            for r in runs
            if sweep.read_row(r) is None and json.loads((sweep.run_dir(r) / "progress.json").read_text())["step"] >= 2
        ]
        return sorted(mid) if len(mid) >= 2 else None

    cancelled, killed = _wait(two_mid_way, 180, "two runs mid-way")[:2]
    jobs = read_jobs(sweep)
    subprocess.run(["scancel", jobs[cancelled]], check=True, timeout=30)
    pid = int((sweep.run_dir(killed) / layout.LOCK).read_text())  # the task's Python, child of slurmstepd
    parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    assert (
        "slurmstepd" in Path(f"/proc/{parent}/cmdline").read_text()
        or "srun" in Path(f"/proc/{parent}/cmdline").read_text()
    ), "the run's process is a SLURM task"
    os.kill(pid, signal.SIGKILL)
    t.join(240)
    assert not t.is_alive()
    assert "2 run(s) failed" in outcome["error"], outcome
    for run in (cancelled, killed):
        assert "ended without a result" in json.loads((sweep.run_dir(run) / layout.ERROR).read_text())["error"]
    assert sweep_status(path)["counts"]["failed"] == 2
    finished = {p.parent.name: (p.stat().st_mtime_ns, p.read_text()) for p in path.glob("runs/*/row.json")}
    assert len(finished) == 2
    rows = run_sweep(path, "exectoy", None, progress=False, log=quiet, executor=executor())
    assert strip(rows) == sweep_toy.expected(preset)  # what a serial run gives (test_array_gives_the_serial_rows)
    for run, (mtime, text) in finished.items():
        p = sweep.run_dir(run) / layout.ROW
        assert p.stat().st_mtime_ns == mtime and p.read_text() == text and len(attempts(sweep, run)) == 1
    for run in (cancelled, killed):
        steps = [int(s) for s in (sweep.run_dir(run) / "steps.log").read_text().split()]
        assert len(attempts(sweep, run)) == 2 and steps == list(range(1, 21)), (run, steps)
        assert not (sweep.run_dir(run) / layout.ERROR).exists()


SUBMITTER = """
import sys
from dataclasses import replace
sys.path.insert(0, sys.argv[2])
import sweep_toy
from tmcheck.empirics.sweep import register_kind, run_sweep
from tmcheck.empirics.sweep.slurm import slurm
register_kind(sweep_toy.KIND)
preset = replace(sweep_toy.ToyPreset(name="toy"), xs=(1, 2, 3), steps=4, sleep_s=0.5)
run_sweep(sys.argv[1], "exectoy", preset, progress=False, log=print,
          executor=slurm(time_limit=10, cpus_per_task=1, array_parallelism=1, poll_s=0.5))
"""


def test_a_rerun_after_the_submitter_died_adopts_the_queued_tasks(toy):
    path = toy / "s"
    proc = subprocess.Popen(
        [sys.executable, "-c", SUBMITTER, str(path), str(TOY_DIR)], stdout=subprocess.PIPE, text=True
    )
    sweep = SweepDir(path)
    _wait(
        lambda: len(read_jobs(sweep)) == 3 if (path / layout.SLURM / layout.JOBS).exists() else False,
        120,
        "the array submitted",
    )
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    jobs = read_jobs(sweep)
    log = []
    rows = run_sweep(path, "exectoy", None, progress=False, log=log.append, executor=executor(log.append))
    assert [r["run"] for r in rows] == ["toy-x1", "toy-x2", "toy-x3"]
    assert read_jobs(sweep) == jobs, "nothing submitted twice"
    assert any("still queued from an earlier submission" in line for line in log), log
    assert all(len(attempts(sweep, r["run"])) == 1 for r in rows)


@pytest.mark.slow
def test_tiny_pretraining_on_slurm_equals_serial(toy):
    """`tmcheck sweep data DIR --preset tiny --executor slurm` gives the rows of a serial run (one
    thread each: the tasks ask for one core; see test_sweep_executors.serial_tiny_rows)."""
    from test_sweep_executors import serial_tiny_rows
    from typer.testing import CliRunner

    from tmcheck.cli.main import app

    ref = serial_tiny_rows(toy / "serial", [sorted(os.sched_getaffinity(0))[0]])
    res = CliRunner().invoke(
        app,
        [
            "sweep",
            "data",
            str(toy / "s"),
            "--preset",
            "tiny",
            "--executor",
            "slurm",
            "--slurm-cpus-per-task",
            "1",
            "--slurm-time",
            "20",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    assert strip(json.loads(res.stdout)) == ref and len(ref) == 6
