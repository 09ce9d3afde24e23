"""Sweep executors: `--workers 2` against `--workers 1`, and the SLURM path's cost per run.

    python benchmarks/bench_sweep.py [--preset tiny] [--cases w1,w2,w1-1core] [--slurm-runs 8]

1. Local pool: `tmcheck sweep data DIR --preset P --workers N --json` as a whole process (what a user
   waits for: interpreter, torch import, spawned workers, every run), on a copy of one prepared
   directory (tokenizer and shards made once, outside the timing). Cases: w1 (in-process, the
   trainer takes every core), w2 (two workers, one core each), w1-1core (w1 under `taskset` to one
   core: separates the pool's gain from thread oversubscription on a loaded machine). The rows of
   every case are compared with w1-1core's (timing fields left out).
2. SLURM: N runs of a kind that does nothing, through the SLURM executor on the local cluster
   (array parallelism 2 = the cluster's cores), against the same runs in-process; overhead per run =
   (wall_slurm - wall_serial) * parallelism / N, plus the wall of one run alone (submit to row).

Every timing is stored with os.getloadavg() before and after. Writes benchmarks/results/sweep.json
after every case.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from tmcheck.empirics import presets
from tmcheck.empirics.sweep import Kind, RunSpec, layout, register_kind, run_sweep, serial

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "sweep.json"
TIMING = ("seconds", "wall_s")
CASES = {"w1": (1, None), "w2": (2, None), "w1-1core": (1, "0")}


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def save(result: dict) -> None:
    from tmcheck.util import atomic

    atomic.write_json(OUT, result)


def strip(rows):
    return [{k: v for k, v in r.items() if k not in TIMING} for r in rows]


def prepare(base: Path, preset) -> int:
    """config.json and data/ of a pretraining sweep (the plan prepares the corpus); the run count."""
    from tmcheck.empirics.sweep import SweepDir

    sweep = SweepDir(base)
    with sweep.lock():
        sweep.open("pretrain", preset)
        ctx = sweep.context()
        return len(ctx.kind.plan(ctx, print))


def local_case(base: Path, work: Path, name: str) -> dict:
    workers, cpu = CASES[name]
    d = work / name
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    shutil.copy(base / "config.json", d / "config.json")
    shutil.copytree(base / "data", d / "data")
    cmd = [str(Path(sys.executable).parent / "tmcheck"), "sweep", "data", str(d), "--workers", str(workers), "--json"]
    if cpu is not None:
        cmd = ["taskset", "-c", cpu, *cmd]
    before = load()
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    wall = time.perf_counter() - t0
    rows = json.loads(out.stdout)
    return {
        "case": name,
        "workers": workers,
        "taskset": cpu,
        "wall_s": round(wall, 2),
        "load_before": before,
        "load_after": load(),
        "runs": len(rows),
        "run_seconds_sum": round(sum(r["seconds"] for r in rows), 2),
        "rows": strip(rows),
    }


@dataclass(frozen=True, kw_only=True)
class NoopPreset(presets.Preset):
    kind: ClassVar[str] = "benchnoop"
    runs: int = 8


def _noop_run_name(params):
    return layout.run_name("r{i}", params)


def _noop_plan(ctx, log):
    return [RunSpec("benchnoop", _noop_run_name({"i": i}), {"i": i}) for i in range(ctx.preset.runs)]


def _noop_config(preset, options):
    return {"preset": preset.as_dict()}


def _noop_run(ctx, spec):
    return {"i": spec.params["i"]}


# A kind whose runs do nothing: what is left of a run's wall time is the executor's. SLURM tasks
# import it (and its preset class) from benchmarks.bench_sweep, so main() uses it by that name.
NOOP = Kind(
    name="benchnoop",
    description="no work",
    new_config=_noop_config,
    plan=_noop_plan,
    run_name=_noop_run_name,
    run=_noop_run,
    describe=str,
    report="none",
)


def slurm_case(work: Path, runs: int) -> dict:
    from tmcheck.empirics.sweep.slurm import slurm

    from benchmarks import bench_sweep  # by its module name, so that the tasks can import it

    register_kind(bench_sweep.NOOP)
    preset_cls = bench_sweep.NoopPreset
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
    ap.add_argument("--preset", default="tiny")
    ap.add_argument("--corpus", default=None, help="one corpus instead of the preset's (e.g. stories)")
    ap.add_argument("--n-sizes", type=int, default=None, help="points of the n grid instead of the preset's")
    ap.add_argument("--cases", default="w1-1core,w2,w1")
    ap.add_argument("--slurm-runs", type=int, default=8)
    ap.add_argument("--no-slurm", action="store_true")
    args = ap.parse_args(argv or [])
    cases = [c for c in args.cases.split(",") if c]  # --cases "": only the SLURM part (local results kept)
    bad = [c for c in cases if c not in CASES]
    if bad:
        ap.error(f"unknown case {bad[0]!r}; choose from {', '.join(CASES)}")
    sys.path.insert(0, str(ROOT))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    result = {
        "machine": {"cores": os.cpu_count(), "affinity": len(os.sched_getaffinity(0))},
        "preset": args.preset,
        "local": [],
        "slurm": None,
    }
    if not cases and OUT.exists():
        result = {**json.loads(OUT.read_text()), "slurm": None}
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        from tmcheck.empirics.presets import get_preset

        over = {
            k: v
            for k, v in (("corpora", (args.corpus,) if args.corpus else None), ("n_sizes", args.n_sizes))
            if v is not None
        }
        preset = get_preset(args.preset, **over)
        if over:
            preset = preset.with_overrides(name=f"{args.preset}-bench")
            result["overrides"] = {k: list(v) if isinstance(v, tuple) else v for k, v in over.items()}
        if cases:
            result["runs"] = prepare(work / "base", preset)
            result["prepare_s"] = round(time.perf_counter() - t0, 2)
        for name in cases:
            case = local_case(work / "base", work, name)
            result["local"].append(case)
            print(f"{name}: {case['wall_s']} s wall, load {case['load_before']} -> {case['load_after']}", flush=True)
            save(result)
        walls = {c["case"]: c for c in result["local"]}
        ref = walls.get("w1-1core")
        for c in result["local"] if cases else []:
            c["rows_equal_w1_1core"] = ref is not None and c["rows"] == ref["rows"]
        if "w1" in walls and "w2" in walls:
            result["speedup_w2_over_w1"] = round(walls["w1"]["wall_s"] / walls["w2"]["wall_s"], 2)
        if ref and "w2" in walls:
            result["speedup_w2_over_w1_1core"] = round(ref["wall_s"] / walls["w2"]["wall_s"], 2)
        for c in result["local"] if cases else []:
            c["rows"] = len(c["rows"])
        save(result)
        if args.no_slurm or shutil.which("sbatch") is None:
            result["slurm"] = {"skipped": "--no-slurm" if args.no_slurm else "no sbatch (start .ci/slurm-up.sh)"}
        else:
            result["slurm"] = slurm_case(work, args.slurm_runs)
        save(result)
    print(json.dumps({k: v for k, v in result.items() if k != "local"}, indent=1))
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
