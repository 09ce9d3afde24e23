"""Start-up of the command line, whole process (the brief's `tmcheck --help` under 1 s): the best and
median of fresh processes, and the imports that cost the most (``python -X importtime``).
Results: benchmarks/results/cli.json under "help"."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "cli.json"


def _tmcheck() -> list[str]:
    exe = shutil.which("tmcheck", path=str(Path(sys.executable).parent)) or shutil.which("tmcheck")
    return [exe] if exe else [sys.executable, "-m", "tmcheck.cli.main"]


def help_time(repeats: int = 7) -> dict:
    cmd = [*_tmcheck(), "--help"]
    subprocess.run(cmd, capture_output=True, check=True)  # warm the file cache
    walls = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        walls.append(time.perf_counter() - t0)
    return {"command": "tmcheck --help", "best": min(walls), "median": statistics.median(walls), "runs": walls}


def import_costs(top: int = 8) -> list[dict]:
    err = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import tmcheck.cli.main"], capture_output=True, text=True
    ).stderr
    rows = []
    for line in err.splitlines():
        parts = [p.strip() for p in line.removeprefix("import time:").split("|")]
        if len(parts) == 3 and parts[1].isdigit():
            rows.append({"module": parts[2], "cumulative_ms": int(parts[1]) / 1000})
    return sorted(rows, key=lambda r: -r["cumulative_ms"])[:top]


def main() -> dict:
    out = {"help": {**help_time(), "imports": import_costs(), "load_average": list(os.getloadavg())}}
    from tmcheck.util import atomic

    old = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    atomic.write_text(RESULTS, json.dumps({**old, **out}, indent=2) + "\n")
    h = out["help"]
    print(f"tmcheck --help: best {h['best']:.3f} s, median {h['median']:.3f} s (goal < 1 s)")
    return out


if __name__ == "__main__":
    main()
