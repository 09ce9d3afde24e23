"""Lemma 1 networks through the structured evaluator (theory.fast_eval): time for 100 inputs.

Goals: float64, 100 inputs in < 60 s on 2 cores for d=4, N=5 (l = 2524, m = 2500) and
d=8, N=2 (l = 2072, m = 2048); exact, d=2, N=5 and d=4, N=3 in < 60 s. Then the largest instances
built and verified (float: |T - f̂| <= 1e-3 at every input, f̂ computed exactly; exact: T == f̂ at
every input) within 60 s, growing N per d. Also the whole-process wall time of
`tmcheck lemma 1 --d 2 --eps 0.1 --target "sin(3*x0)*x1"` (goal < 10 s on 2 cores; build, error on the
dense sample, and the exact check_construction verdict), with the load average beside it. Writes
benchmarks/results/lemma1.json (`--cli-only`: just the CLI figure, merged into the existing file).

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/bench_lemma1.py [--cli-only]
"""

from __future__ import annotations

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "2")

import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from fractions import Fraction  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from tmcheck.theory.fast_eval import evaluate_structured  # noqa: E402
from tmcheck.theory.lemmas.lemma1 import fhat, lemma1_network, lemma1_plan  # noqa: E402
from tmcheck.theory.targets import parse_target  # noqa: E402
from tmcheck.util import atomic  # noqa: E402

BUDGET = 60.0
INPUTS = 100
FLOAT_TOL = 1e-3  # float64 rounding grows like κ·2^-52 with κ ~ l^2 (reported as max_abs_diff_vs_fhat)


def run(d: int, N: int, arithmetic: str, seed: int = 0) -> dict:
    """Build the network and push INPUTS points through it; verify against f̂ computed exactly."""
    text = " + ".join(f"x{i}*x{(i + 1) % d}" for i in range(d)) if d > 1 else "x0^2"
    t0 = time.perf_counter()
    spec = lemma1_plan(parse_target(text, d), 2.0 * d, 1.0, 0.5, N=N)
    net = lemma1_network(spec, arithmetic)
    t1 = time.perf_counter()
    rng = np.random.default_rng(seed)
    if arithmetic == "exact":
        X = np.array(
            [[Fraction(int(v), 64) for v in row] for row in rng.integers(0, 65, size=(INPUTS, d))], dtype=object
        )
    else:
        X = rng.random((INPUTS, d))
    T = evaluate_structured(net, X, arithmetic)
    t2 = time.perf_counter()
    want = [fhat(spec, [Fraction(v) for v in x]) for x in X]
    if arithmetic == "exact":
        ok, err = all(t == w for t, w in zip(T, want, strict=True)), 0.0
    else:
        err = max(abs(float(w) - t) for t, w in zip(T, want, strict=True))
        ok = err <= FLOAT_TOL
    return {
        "d": d,
        "N": N,
        "arithmetic": arithmetic,
        "l": net.l,
        "m": max(len(b.heads) for b in net.blocks),
        "build_s": round(t1 - t0, 3),
        "eval_s": round(t2 - t1, 3),
        "total_s": round(t2 - t0, 3),
        "verified": bool(ok),
        "max_abs_diff_vs_fhat": err,
        "inputs": INPUTS,
    }


def largest(d: int, arithmetic: str, N0: int) -> dict | None:
    """Grow N by 25% while the previous run's time, scaled by the growth of l, predicts <= 1.5 budget."""
    best, N, last = None, N0, None
    while True:
        l_new = d + d * N + d * N**d
        if last is not None and last["total_s"] * l_new / last["l"] > 1.5 * BUDGET:
            return best
        r = run(d, N, arithmetic)
        print(json.dumps(r), flush=True)
        if r["total_s"] > BUDGET or not r["verified"]:
            return best
        best, last, N = r, r, max(N + 1, int(N * 1.25))


CLI = ["lemma", "1", "--d", "2", "--eps", "0.1", "--target", "sin(3*x0)*x1", "--json"]
CLI_GOAL_S = 10.0


def cli_whole_process(repeats: int = 3) -> dict:
    """Wall time of the whole `tmcheck lemma 1` process (imports included), best and all of `repeats` runs."""
    import resource
    import subprocess

    exe = str(Path(sys.executable).with_name("tmcheck"))
    times, doc = [], None
    for _ in range(repeats):
        load = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        res = subprocess.run([exe, *CLI], capture_output=True, text=True, check=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        # CPU seconds depend far less on the load than wall time does on a shared machine
        times.append({"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "load_1min_before": round(load, 2)})
        doc = json.loads(res.stdout)
    return {
        "command": "tmcheck " + " ".join(CLI),
        "runs": times,
        "best_s": min(t["wall_s"] for t in times),
        "best_cpu_s": min(t["cpu_s"] for t in times),
        "goal_s": CLI_GOAL_S,
        "N": doc["N"],
        "max_error": doc["error"]["max_error"],
        "verdict": doc["verdict"],
        "cpus": os.cpu_count(),
    }


def main() -> None:
    path = Path(__file__).parent / "results" / "lemma1.json"
    if "--cli-only" in sys.argv:
        out = json.loads(path.read_text()) if path.exists() else {}
        out["cli_lemma1"] = cli_whole_process()
        atomic.write_json(path, out)
        print(json.dumps(out["cli_lemma1"]))
        return
    goals = [run(4, 5, "float64"), run(8, 2, "float64"), run(2, 5, "exact"), run(4, 3, "exact")]
    for g in goals:
        g["within_60s"] = g["total_s"] < BUDGET
        print(json.dumps(g), flush=True)
    largest_runs = {
        "float64": [largest(d, "float64", N0) for d, N0 in ((2, 40), (4, 6), (8, 2))],
        "exact": [largest(d, "exact", N0) for d, N0 in ((2, 6), (4, 3))],
    }
    out = {
        "benchmark": "lemma1 structured evaluation (theory.fast_eval)",
        "budget_s": BUDGET,
        "inputs": INPUTS,
        "threads": os.environ["OMP_NUM_THREADS"],
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "goals": goals,
        "largest_within_budget": largest_runs,
        "cli_lemma1": cli_whole_process(),
    }
    atomic.write_json(path, out)
    print(f"written {path}")


if __name__ == "__main__":
    main()
