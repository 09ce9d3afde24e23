"""The SLURM executor's cost per run, on the local one-node cluster (`.ci/slurm-up.sh`).

    python -m benchmarks.bench_slurm [--slurm-runs 8]

N runs of a kind that does nothing, through the SLURM executor (array parallelism 2 = the cluster's
cores), against the same runs in-process; overhead per run = (wall_slurm - wall_serial) * parallelism
/ N, plus the wall of one run alone (submit to row). Writes benchmarks/results/slurm.json.

Its quiet verdict is DISTURBED by construction: the jobs run under slurmd and slurmstepd, not as
children of the benchmark, so the quiet tool counts their CPU as other processes'. The figures are
latencies of the scheduler (seconds per run), recorded with the load before and after; the speed
page does not quote them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from benchmarks.bench_sweep import load
from tmcheck.empirics.sweep import RunSpec, layout, register_kind, run_sweep, serial
from tmcheck.empirics.sweep.kinds import module_kind
from tmcheck.empirics.sweep.preset import Preset

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "slurm.json"


def save(result: dict) -> None:
    from tmcheck.util import atomic

    atomic.write_json(OUT, result)


@dataclass(frozen=True, kw_only=True)
class NoopPreset(Preset):
    kind: ClassVar[str] = "benchnoop"
    runs: int = 8


# A kind whose runs do nothing: what is left of a run's wall time is the executor's. Its functions carry
# the names a kind module's do (module_kind). SLURM tasks import it (and its preset class) from
# benchmarks.bench_slurm, so main() uses it by that name.
def run_name(params):
    return layout.run_name("r{i}", params)


def plan(ctx, log):
    return [RunSpec("benchnoop", run_name({"i": i}), {"i": i}) for i in range(ctx.preset.runs)]


def new_config(preset, options):
    return {"preset": preset.as_dict()}


def run(ctx, spec):
    return {"i": spec.params["i"]}


NOOP = module_kind(
    globals(), name="benchnoop", description="no work", describe=str, report="none", preset_class=NoopPreset
)


def slurm_case(work: Path, runs: int) -> dict:
    from benchmarks import bench_slurm  # by its module name, so that the tasks can import it
    from tmcheck.empirics.sweep.slurm import slurm

    register_kind(bench_slurm.NOOP)
    preset_cls = bench_slurm.NoopPreset
    out = {}
    for label, n, ex in (
        ("serial", runs, serial(log=lambda s: None)),
        ("slurm", runs, slurm(time_limit=10, cpus_per_task=1, array_parallelism=2, poll_s=0.2, log=lambda s: None)),
        ("slurm-one-run", 1, slurm(time_limit=10, cpus_per_task=1, poll_s=0.2, log=lambda s: None)),
    ):
        d = work / f"noop-{label}"
        shutil.rmtree(d, ignore_errors=True)
        before = load()
        t0 = time.perf_counter()
        rows = run_sweep(
            d, "benchnoop", preset_cls(name="noop", runs=n), progress=False, log=lambda s: None, executor=ex
        )
        out[label] = {
            "runs": len(rows),
            "wall_s": round(time.perf_counter() - t0, 2),
            "load_before": before,
            "load_after": load(),
        }
    out["overhead_per_run_s"] = round((out["slurm"]["wall_s"] - out["serial"]["wall_s"]) * 2 / runs, 2)
    out["array_parallelism"] = 2
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slurm-runs", type=int, default=8)
    args = ap.parse_args(argv or [])
    sys.path.insert(0, str(ROOT))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    result = {"machine": {"cores": os.cpu_count(), "affinity": len(os.sched_getaffinity(0))}}
    if shutil.which("sbatch") is None:
        result["slurm"] = {"skipped": "no sbatch (start .ci/slurm-up.sh)"}
    else:
        with tempfile.TemporaryDirectory(prefix="bench-slurm-") as tmp:
            result["slurm"] = slurm_case(Path(tmp), args.slurm_runs)
    save(result)
    print(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
