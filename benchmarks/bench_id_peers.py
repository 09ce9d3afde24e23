"""scikit-dimension's estimators that tmcheck computes too, side by side on the same saved points: for
each, tmcheck's class and scikit-dimension 0.5.0's at their defaults (the same seed where the peer
draws at random), the time of ``fit(X).dimension_`` and the two dimensions.

Every timed run is its own process (fresh import, imports before the clock, times exclude loading the
points), run as a user runs it (run_all.user_environment). scikit-dimension runs from its own
interpreter: $TMCHECK_SKDIM_PYTHON, else benchmarks/.venv-skdim, created here on first use
(``pip install scikit-dimension==0.5.0``); it is never a tmcheck dependency. Results go to
benchmarks/results/id_peers.json. Run alone under the quiet tool: ``python -m benchmarks.run_all
bench_id_peers`` (or ``python -m benchmarks.bench_id_peers [case ...]`` for some cases, unchecked).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.run_all import user_environment

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "id_peers.json"
SKDIM_VENV = HERE / ".venv-skdim"
SKDIM_PIN = "scikit-dimension==0.5.0"

# case -> (validation_points arguments, tmcheck's estimator, scikit-dimension's): each side's sizes are
# those where the peer takes seconds to a minute (its ESS runs a Python loop of 0.1 s a point)
WIDE = {"name": "sphere", "n": 8192, "d": 8, "D": 768}  # token-embedding width
CASES = {
    "mada": ({"name": "sphere", "n": 8192, "d": 8, "D": 100}, ["MADA", {}], ["MADA", {}]),
    "ess": ({"name": "sphere", "n": 500, "d": 5, "D": 50}, ["ESS", {}], ["ESS", {}]),
    "corrint": (WIDE, ["CorrInt", {}], ["CorrInt", {}]),
    "knn": ({"name": "sphere", "n": 8192, "d": 8, "D": 100}, ["KNN", {"seed": 0}], ["KNN", {"random_state": 0}]),
    "danco": ({"name": "sphere", "n": 1000, "d": 5, "D": 10}, ["DANCo", {"seed": 0}], ["DANCo", {"random_state": 0}]),
    "mom": (WIDE, ["MOM", {}], ["MOM", {}]),
    "tle": ({"name": "sphere", "n": 2048, "d": 8, "D": 100}, ["TLE", {}], ["TLE", {}]),
    "lpca": (WIDE, ["lPCA", {}], ["lPCA", {}]),
}

PEER_SCRIPT = """
import json, resource, sys, time, warnings
import numpy as np
import skdim
warnings.simplefilter("ignore")
X = np.load(sys.argv[2])
name, params = json.loads(sys.argv[1])
est = getattr(skdim.id, name)(**params)
t0 = time.perf_counter()
d = est.fit(X).dimension_
t1 = time.perf_counter()
print(json.dumps({"seconds": t1 - t0, "dimension": float(d),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def worker(call: str, path: str) -> None:
    """Runs in a subprocess: time tmcheck's estimator ``call`` (JSON [class, parameters]) on the saved
    points, print JSON."""
    import warnings

    import torch  # noqa: F401  the kNN engine's import, before the clock as the peer's imports

    from tmcheck.empirics import id as tid

    warnings.simplefilter("ignore")
    X = np.load(path)
    name, params = json.loads(call)
    est = getattr(tid, name)(**params)
    t0 = time.perf_counter()
    d = est.fit(X).dimension_
    t1 = time.perf_counter()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": t1 - t0, "dimension": float(d), "peak_rss_mb": peak}))


def _run(cmd: list[str]) -> dict:
    before = os.getloadavg()[0]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE.parent, env=user_environment())
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1]}
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "load_average": [before, os.getloadavg()[0]]}


def skdim_python() -> Path | None:
    """The interpreter with scikit-dimension: $TMCHECK_SKDIM_PYTHON, else benchmarks/.venv-skdim (made on
    first use); None if impossible."""
    if os.environ.get("TMCHECK_SKDIM_PYTHON"):
        return Path(os.environ["TMCHECK_SKDIM_PYTHON"])
    py = SKDIM_VENV / "bin" / "python"
    if py.exists() and subprocess.run([py, "-c", "import skdim"], capture_output=True).returncode == 0:
        return py
    links = ["--find-links", "/opt/wheels"] if Path("/opt/wheels").is_dir() else []
    try:
        subprocess.run([sys.executable, "-m", "venv", str(SKDIM_VENV)], check=True)
        (SKDIM_VENV / ".gitignore").write_text("*\n")
        subprocess.run([py, "-m", "pip", "install", "-q", *links, SKDIM_PIN], check=True)
    except (subprocess.CalledProcessError, OSError) as exc:
        print(f"could not set up {SKDIM_VENV}: {exc}")
        return None
    return py


def compare(case: str, tmp: Path, peer: Path | None) -> dict:
    """One case: the data, both timings, the speed-up and the difference of the dimensions."""
    from tmcheck.empirics.id import validation_points

    data, ours_call, peer_call = CASES[case]
    spec = dict(data)
    X = validation_points(spec.pop("name"), spec.pop("n"), **spec, noise=1e-3, seed=0)
    path = tmp / f"{case}.npy"
    np.save(path, X)
    ours = _run([sys.executable, "-m", "benchmarks.bench_id_peers", "worker", json.dumps(ours_call), str(path)])
    theirs = _run([str(peer), "-c", PEER_SCRIPT, json.dumps(peer_call), str(path)]) if peer else {"error": "no skdim"}
    entry = {"data": {**data, "noise": 1e-3, "seed": 0}, "tmcheck": {"call": ours_call, **ours}}
    entry["skdim"] = {"call": peer_call, **theirs}
    if "error" not in ours and "error" not in theirs:
        entry["speedup"] = theirs["seconds"] / ours["seconds"]
        entry["abs_difference"] = abs(theirs["dimension"] - ours["dimension"])
    nan = float("nan")
    print(
        f"{case}: tmcheck {ours.get('seconds', nan):.2f} s, skdim {theirs.get('seconds', nan):.2f} s, "
        f"speedup {entry.get('speedup', nan):.1f}x, |diff| {entry.get('abs_difference', nan):.1e}",
        flush=True,
    )
    return entry


def main(cases: tuple[str, ...] = tuple(CASES)) -> dict:
    import torch

    result = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    result["machine"] = {"cpus": os.cpu_count(), "torch_threads": torch.get_num_threads()}
    peer = skdim_python()
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            result[case] = compare(case, Path(tmp), peer)
            RESULTS.parent.mkdir(parents=True, exist_ok=True)
            part = RESULTS.with_suffix(".json.tmp")
            part.write_text(json.dumps(result, indent=2) + "\n")
            os.replace(part, RESULTS)
    return result


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "worker":
        worker(sys.argv[2], sys.argv[3])
    else:
        main(tuple(sys.argv[1:]) or tuple(CASES))
