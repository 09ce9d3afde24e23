"""Pool workers die with their submitter, and a dead worker's error names its cause.

SIGKILL of the submitter of a `--workers 2` sweep (in its own session), then an immediate rerun: the
rerun starts at once (no "in use by another process"), exits 0, every row once and equal to a serial
run, and no process of the first run's session is left. A worker that dies mid-run leaves error.json
with its signal or exit code and the last line of its log. The watchdog that stands in for
PR_SET_PDEATHSIG off Linux is tested on its own, with the mutant it catches."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from tmcheck.empirics.sweep import SweepDir, SweepFailed, layout, local, register_kind, run_sweep, serial

sys.path.insert(0, str(Path(__file__).parent))
import sweep_toy

HERE = str(Path(__file__).parent)
# runs of 10 s: an orphan of the killed submitter would still hold its run when the rerun's workers ask
PRESET = replace(sweep_toy.ToyPreset(name="toy"), xs=(1, 2), steps=20, sleep_s=0.5)
TIMING = ("seconds", "wall_s")

SUBMIT = r"""
import json, sys
sys.path.insert(0, sys.argv[2])
import sweep_toy
from tmcheck.empirics.sweep.kinds import preset_from_dict
from tmcheck.empirics.sweep import local, register_kind, run_sweep
register_kind(sweep_toy.KIND)
preset = preset_from_dict("exectoy", json.loads(sys.argv[3]))
run_sweep(sys.argv[1], "exectoy", preset, progress=False, log=lambda s: None, executor=local(2, log=lambda s: None))
"""


@pytest.fixture(autouse=True)
def toy(monkeypatch):
    register_kind(sweep_toy.KIND)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([HERE, os.environ.get("PYTHONPATH", "")]))


def quiet(s):
    pass


def strip(rows):
    return [{k: v for k, v in r.items() if k not in TIMING} for r in rows]


def session_pids(sid: int) -> list[int]:
    """Live (not zombie) processes of session `sid`, from /proc."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            out.append(int(stat.parent.name))
    return out


def wait_until(cond, timeout: float, step: float = 0.05):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if value := cond():
            return value
        time.sleep(step)
    return cond()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the session of each process from /proc")
def test_sigkill_of_the_submitter_then_an_immediate_rerun(tmp_path):
    instant = replace(PRESET, sleep_s=0.0)  # the same rows (sleep_s is not in them), at once
    ref = run_sweep(tmp_path / "serial", "exectoy", instant, progress=False, log=quiet, executor=serial(log=quiet))
    sweep_dir = tmp_path / "pool"
    sweep = SweepDir(sweep_dir)
    proc = subprocess.Popen(
        [sys.executable, "-c", SUBMIT, str(sweep_dir), HERE, json.dumps(PRESET.as_dict())], start_new_session=True
    )
    try:

        def two_running():
            logs = [sweep_dir / layout.RUNS / f"toy-x{x}" / "steps.log" for x in PRESET.xs]
            return sum(p.exists() for p in logs) >= 2

        assert wait_until(two_running, 120), "the two workers never started"
        assert len(session_pids(proc.pid)) >= 3, "the submitter and its two workers"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        t0 = time.time()
        rows = run_sweep(sweep_dir, "exectoy", None, progress=False, log=quiet, executor=local(2, log=quiet))
        rerun_s = time.time() - t0
    finally:
        for pid in session_pids(proc.pid):  # clean up whatever the test finds left, then fail on it
            os.kill(pid, signal.SIGKILL)
    assert strip(rows) == strip(ref) == sweep_toy.expected(PRESET)
    merged = [r["run"] for r in sweep.rows()]
    assert merged == [r["run"] for r in ref] and len(set(merged)) == len(merged), "every row once"
    assert rerun_s < 60, rerun_s
    left = wait_until(lambda: not session_pids(proc.pid), 5)
    assert left, f"processes of the killed submitter's session left: {session_pids(proc.pid)}"
    for x in PRESET.xs:  # every step of every run done once: the killed workers stopped when killed
        steps = [int(s) for s in (sweep.run_dir(f"toy-x{x}") / "steps.log").read_text().split()]
        assert steps == list(range(1, PRESET.steps + 1)), (x, steps)


@pytest.mark.parametrize(
    "how,cause,signal_name,code",
    [("kill", "killed by SIGKILL", "SIGKILL", -9), ("3", "exit code 3", None, 3)],
)
def test_a_dead_workers_error_names_its_cause(tmp_path, how, cause, signal_name, code):
    preset = replace(PRESET, steps=1, sleep_s=0.0)
    SweepDir(tmp_path).open("exectoy", preset)
    (tmp_path / "die-toy-x2").write_text(how)
    with pytest.raises(SweepFailed, match="1 run"):
        run_sweep(tmp_path, "exectoy", preset, progress=False, log=quiet, executor=local(2, log=quiet))
    record = json.loads((SweepDir(tmp_path).run_dir("toy-x2") / layout.ERROR).read_text())
    assert f"died ({cause}" in record["error"] and record["signal"] == signal_name and record["exit_code"] == code
    assert record["log_tail"] == f"toy run toy-x2 dies now ({how})" and record["log"].endswith(layout.WORKER_LOG)
    assert "last line of runs/toy-x2/worker.log: toy run toy-x2 dies now" in record["error"]
    (tmp_path / "die-toy-x2").unlink()  # the mutation: without the cause the run succeeds on a rerun
    rows = run_sweep(tmp_path, "exectoy", None, progress=False, log=quiet, executor=local(2, log=quiet))
    assert len(rows) == 2 and not (SweepDir(tmp_path).run_dir("toy-x2") / layout.ERROR).exists()


ORPHAN = r"""
import os, sys, time
from tmcheck.util.lifetime import die_with_parent
parent = os.getppid()
if sys.argv[1] == "guarded":
    print(die_with_parent(parent, use_prctl=sys.argv[2] == "prctl"), flush=True)
else:
    print("unguarded", flush=True)
time.sleep(60)
"""
PARENT = r"""
import subprocess, sys, time
args = [sys.executable, "-c", sys.argv[1], sys.argv[2], sys.argv[3]]
child = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
print(child.pid, child.stdout.readline().strip(), flush=True)
time.sleep(60)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's; the watchdog runs everywhere")
@pytest.mark.parametrize("mode", ["prctl", "watchdog", "unguarded"])
def test_a_worker_dies_with_its_parent(mode):
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, ORPHAN, "unguarded" if mode == "unguarded" else "guarded", mode],
        stdout=subprocess.PIPE,
        text=True,
    )
    child_pid, how = parent.stdout.readline().split()
    child_pid = int(child_pid)
    assert how == ("unguarded" if mode == "unguarded" else mode)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait(10)

    def gone():
        try:
            return Path(f"/proc/{child_pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            return True

    try:
        assert wait_until(gone, 3) != (mode == "unguarded"), "the unguarded child (the mutant) outlives its parent"
    finally:
        if not gone():
            os.kill(child_pid, signal.SIGKILL)
