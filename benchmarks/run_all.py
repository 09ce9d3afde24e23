"""`make bench`: run main() of every benchmarks/bench_*.py module, in name order, or only those
named on the command line (`python -m benchmarks.run_all id fit`, `make bench BENCH="id fit"`)."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    here = Path(__file__).resolve().parent
    names = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))
    wanted = [f"bench_{a.removeprefix('bench_')}" for a in argv]
    unknown = sorted(set(wanted) - set(names))
    if unknown:
        print(
            f"unknown benchmark {', '.join(n.removeprefix('bench_') for n in unknown)}; known: "
            f"{', '.join(n.removeprefix('bench_') for n in names)}",
            file=sys.stderr,
        )
        return 2
    for name in wanted or names:
        print(f"=== {name}", flush=True)
        t0 = time.perf_counter()
        importlib.import_module(f"benchmarks.{name}").main()
        print(f"=== {name} done in {time.perf_counter() - t0:.0f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
