"""A toy sweep kind for the executor tests: no training, but the same shape as a real run.

Each run counts `steps` steps of `sleep_s` seconds, checkpointing its step in progress.json (a rerun
resumes from it), logs every start in attempts.log and every step in steps.log, and fails while a file
`fail-<run>` exists in the sweep directory. While a file `die-<run>` exists, the process running it
prints a line and dies: by SIGKILL if the file says `kill`, else with the exit code the file holds.
Worker processes import this module by name (the tests
put tests/empirics on PYTHONPATH); its KIND names ToyPreset, the class `preset_from_dict` reads. The tests
take their helpers from here too: `quiet`, `strip` (rows without timing) and `attempts`.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from dataclasses import dataclass
from typing import ClassVar

from tmcheck.empirics.sweep import RunSpec, layout
from tmcheck.empirics.sweep.kinds import module_kind
from tmcheck.empirics.sweep.preset import Preset
from tmcheck.util import atomic

NAME = "toy-x{x}"


@dataclass(frozen=True, kw_only=True)
class ToyPreset(Preset):
    kind: ClassVar[str] = "exectoy"
    xs: tuple[int, ...] = (1, 2, 3, 4)
    steps: int = 3
    sleep_s: float = 0.0


def run_name(params):
    return layout.run_name(NAME, params)


def plan(ctx, log):
    return [RunSpec("exectoy", run_name({"x": x}), {"x": x}) for x in ctx.preset.xs]


def run(ctx, spec):
    d = ctx.sweep.run_dir(spec.run)
    with open(d / "attempts.log", "a") as f:
        f.write(f"{os.getpid()}\n")
    if (ctx.sweep.path / f"fail-{spec.run}").exists():
        raise RuntimeError(f"asked to fail {spec.run}")
    die = ctx.sweep.path / f"die-{spec.run}"
    if die.exists():
        how = die.read_text().strip()
        print(f"toy run {spec.run} dies now ({how})", flush=True)
        if how == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        os._exit(int(how))
    progress = d / "progress.json"
    step = json.loads(progress.read_text())["step"] if progress.exists() else 0
    while step < ctx.preset.steps:
        time.sleep(ctx.preset.sleep_s)
        step += 1
        with open(d / "steps.log", "a") as f:
            f.write(f"{step}\n")
        atomic.write_json(progress, {"step": step})
    torch = sys.modules.get("torch")  # what the worker was given (not in the row: rows equal the serial run's)
    atomic.write_json(
        d / "worker.json",
        {
            "threads": torch.get_num_threads() if torch else None,
            "cores": sorted(os.sched_getaffinity(0)),
            "omp": os.environ.get("OMP_NUM_THREADS"),
            "gpu": os.environ.get("CUDA_VISIBLE_DEVICES"),
        },
    )
    x = spec.params["x"]
    return {"x": x, "y": x * x + ctx.preset.steps, "seconds": time.time() % 1}


# the helpers the executor tests share (local pool and SLURM)
TIMING = ("seconds", "wall_s", "tokens_per_s")  # what differs between two runs of one spec


def quiet(s):
    """A log that prints nothing."""


def strip(rows):
    """Rows without their timing: equal whichever executor ran them, and however often."""
    return [{k: v for k, v in r.items() if k not in TIMING} for r in rows]


def attempts(sweep, run):
    """The process ids that started `run` (its attempts.log), first first."""
    f = sweep.run_dir(run) / "attempts.log"
    return f.read_text().split() if f.exists() else []


def expected(preset):
    """The rows of a finished toy sweep, timing left out."""
    return [{"run": run_name({"x": x}), "x": x, "y": x * x + preset.steps} for x in preset.xs]


def new_config(preset, options):
    return {"preset": preset.as_dict()}


def describe(row):
    return f"y={row['y']}"


KIND = module_kind(globals(), name="exectoy", description="executor test kind", report="none", preset_class=ToyPreset)
