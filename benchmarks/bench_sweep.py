"""The local sweep executor: `--workers 2` against `--workers 1`, whole processes.

    python -m benchmarks.bench_sweep [--preset tiny] [--corpus stories] [--n-sizes 3] [--cases w1-1core,w2,w1]

`tmcheck sweep data DIR --preset P --workers N --json` as a whole process (what a user waits for:
interpreter, torch import, spawned workers, every run), on a copy of one prepared directory
(tokenizer and shards made once, outside the timing). Cases: w1 (in-process, the trainer takes every
core), w2 (two workers, one core each), w1-1core (w1 under `taskset` to one core: separates the
pool's gain from thread oversubscription). The rows of every case are compared with w1-1core's
(timing fields left out).

Writes benchmarks/results/sweep.json after every case, the figures in its section `local`, so that
benchmarks/run_all.py stamps them with their quiet verdict. The SLURM executor's cost per run is
benchmarks/bench_slurm.py: its jobs run under slurmd, which the quiet tool counts as other processes.
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
from pathlib import Path

from tmcheck.empirics.sweep import SweepDir

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


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="tiny")
    ap.add_argument("--corpus", default="stories", help="one corpus instead of the preset's ('' for the preset's)")
    ap.add_argument("--n-sizes", type=int, default=3, help="points of the n grid instead of the preset's (0: its own)")
    ap.add_argument("--cases", default="w1-1core,w2,w1")
    args = ap.parse_args(argv or [])
    cases = [c for c in args.cases.split(",") if c]
    if not cases:
        ap.error(f"--cases names no case; choose from {', '.join(CASES)}")
    bad = [c for c in cases if c not in CASES]
    if bad:
        ap.error(f"unknown case {bad[0]!r}; choose from {', '.join(CASES)}")
    from tmcheck.empirics.sweep.kinds import get_preset

    over = {
        k: v
        for k, v in (("corpora", (args.corpus,) if args.corpus else None), ("n_sizes", args.n_sizes or None))
        if v is not None
    }
    preset = get_preset(args.preset, **over)
    if over:
        preset = preset.with_overrides(name=f"{args.preset}-bench")
    local = {
        "preset": args.preset,
        "overrides": {k: list(v) if isinstance(v, tuple) else v for k, v in over.items()},
        "cases": [],
    }
    result = {"machine": {"cores": os.cpu_count(), "affinity": len(os.sched_getaffinity(0))}, "local": local}
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        local["runs"] = prepare(work / "base", preset)
        local["prepare_s"] = round(time.perf_counter() - t0, 2)
        for name in cases:
            case = local_case(work / "base", work, name)
            local["cases"].append(case)
            print(f"{name}: {case['wall_s']} s wall, load {case['load_before']} -> {case['load_after']}", flush=True)
            save(result)
    walls = {c["case"]: c for c in local["cases"]}
    ref = walls.get("w1-1core")
    for c in local["cases"]:
        c["rows_equal_w1_1core"] = ref is not None and c["rows"] == ref["rows"]
    if "w1" in walls and "w2" in walls:
        local["speedup_w2_over_w1"] = round(walls["w1"]["wall_s"] / walls["w2"]["wall_s"], 2)
    if ref and "w2" in walls:
        local["speedup_w2_over_w1_1core"] = round(ref["wall_s"] / walls["w2"]["wall_s"], 2)
    for c in local["cases"]:
        c["rows"] = len(c["rows"])
    save(result)
    print(json.dumps({k: v for k, v in local.items() if k != "cases"}, indent=1))
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
