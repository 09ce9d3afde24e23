"""`make bench`: run main() of every benchmarks/bench_*.py module, in name order, or only those
named on the command line (`python -m benchmarks.run_all id fit`, `make bench BENCH="id fit"`).

Each benchmark runs alone, in its own process under the machine's `quiet` tool (../shared/tools/quiet,
or $TMCHECK_QUIET): a machine-wide lock, a wait for a quiet machine, and afterwards the share of the
machine other processes took. That verdict is written into every entry of benchmarks/results/*.json
the run changed, as ``"quiet": {"verdict", "other_cpu_share", "load_before", "wall_s", "date", "benchmark"}``;
the documentation quotes only entries whose verdict is "quiet". The share of CPU time the host took
(steal time, /proc/stat) is recorded beside it as ``host_steal_share``: the quiet tool cannot see it,
and above 10% a quiet run is DISTURBED too. Without the tool (``--no-quiet``, or
none found) the entries get ``"verdict": "unchecked"``.
"""

from __future__ import annotations

import datetime
import importlib
import json
import os
import pkgutil
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
VERDICT = re.compile(
    r"quiet: load before (?P<load>[\d.]+); wall (?P<wall>[\d.]+) s; own CPU [\d.]+ s; other processes "
    r"[\d.]+ CPU s = (?P<share>\d+)% of the machine: (?P<verdict>.+)$"
)


WAIT_POLICY = "unset (each OpenMP runtime's default)"  # what the benchmarks record of OMP_WAIT_POLICY


def user_environment(**extra: str) -> dict[str, str]:
    """The environment a benchmark runs each tool in (its own and the anchors'), as a user runs it: the
    caller's, without OMP_WAIT_POLICY, so each OpenMP runtime keeps its default (libgomp: threads spin a
    while before they sleep), plus `extra`. `passive` (threads sleep at once) was set while benchmarks ran
    on a shared, loaded machine, where spinning threads took cores from each other; under the quiet tool
    the machine is otherwise idle, and passive waiting only slowed the kNN engine's short parallel steps."""
    return {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"} | extra


def quiet_tool() -> Path | None:
    """The `quiet` wrapper: $TMCHECK_QUIET, else ../shared/tools/quiet beside the checkout."""
    env = os.environ.get("TMCHECK_QUIET")
    for p in [Path(env)] if env else [HERE.parents[1] / "shared" / "tools" / "quiet"]:
        if p.is_file() and os.access(p, os.X_OK):
            return p
    return None


def parse_verdict(stderr: str) -> dict | None:
    """The quiet tool's last verdict line, parsed; None when there is none."""
    for line in reversed(stderr.splitlines()):
        m = VERDICT.search(line.strip())
        if m:
            verdict = "quiet" if m["verdict"].strip() == "quiet" else "DISTURBED"
            return {
                "verdict": verdict,
                "other_cpu_share": int(m["share"]) / 100,
                "load_before": float(m["load"]),
                "wall_s": float(m["wall"]),
            }
    return None


STEAL_LIMIT = 0.10  # the quiet tool's limit, for the CPU time the host took from this machine


def cpu_times(stat: str | None = None) -> tuple[int, int] | None:
    """(steal, total) jiffies of all CPUs from /proc/stat's first line (or the given text); None where
    there is none. Steal is time the hypervisor ran something else while this VM wanted the CPU: the
    quiet tool sees only this machine's processes, so a busy host is invisible to it."""
    if stat is None:
        try:
            with open("/proc/stat") as f:
                stat = f.readline()
        except OSError:
            return None
    fields = stat.split()
    if len(fields) < 9 or fields[0] != "cpu":
        return None
    values = [int(v) for v in fields[1:]]
    guest = sum(values[8:10])  # guest time is already counted in user time
    return values[7], sum(values) - guest


def host_steal(before, after) -> float | None:
    """The share of the machine's CPU time the host took between two cpu_times() readings."""
    if before is None or after is None or after[1] <= before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1])


def with_steal(verdict: dict, steal: float | None) -> dict:
    """The verdict with the host's share recorded; above STEAL_LIMIT a quiet run is DISTURBED."""
    out = {**verdict, "host_steal_share": None if steal is None else round(steal, 4)}
    if steal is not None and steal > STEAL_LIMIT and out.get("verdict") == "quiet":
        out["verdict"] = "DISTURBED"
        out["disturbed_by"] = "host steal time"
    return out


def _snapshot() -> dict[str, dict]:
    out = {}
    for p in sorted(RESULTS.glob("*.json")):
        try:
            out[p.name] = json.loads(p.read_text())
        except (OSError, ValueError):
            out[p.name] = {}
    return out


def stamp(before: dict[str, dict], verdict: dict, name: str) -> list[str]:
    """Write the verdict into every top-level entry of results/*.json that changed since `before`; a
    file whose changes are all in plain values (numbers, lists: bench_coverage writes no sections) is
    stamped as a whole."""
    from tmcheck.util import atomic

    stamped = []
    for file, now in _snapshot().items():
        old = before.get(file, {})
        moved = [k for k, v in now.items() if k != "quiet" and old.get(k) != v]
        changed = [k for k in moved if isinstance(now[k], dict)]
        if moved and not changed:
            now["quiet"] = {**verdict, "benchmark": name}
            atomic.write_text(RESULTS / file, json.dumps(now, indent=2) + "\n")
            stamped.append(file)
            continue
        if not changed:
            continue
        for k in changed:
            now[k]["quiet"] = {**verdict, "benchmark": name}
        now["quiet"] = {**verdict, "benchmark": name, "entries": changed}
        atomic.write_text(RESULTS / file, json.dumps(now, indent=2) + "\n")
        stamped += [f"{file}:{k}" for k in changed]
    return stamped


def run_one(name: str, use_quiet: bool) -> int:
    """Run one benchmark in a child process (under the quiet tool when there is one), then stamp."""
    tool = quiet_tool() if use_quiet else None
    cmd = [sys.executable, "-m", "benchmarks.run_all", "--inner", name]
    before = _snapshot()
    t0, cpu0 = time.perf_counter(), cpu_times()
    proc = subprocess.run([str(tool), *cmd] if tool else cmd, cwd=HERE.parent, stderr=subprocess.PIPE, text=True)
    sys.stderr.write(proc.stderr)
    verdict = parse_verdict(proc.stderr) if tool else None
    if verdict is None:
        verdict = {"verdict": "unchecked", "other_cpu_share": None, "load_before": os.getloadavg()[0]}
        verdict["wall_s"] = time.perf_counter() - t0
    verdict = with_steal(verdict, host_steal(cpu0, cpu_times()))
    verdict["date"] = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    stamped = stamp(before, verdict, name)
    print(f"=== {name}: {verdict['verdict']}; stamped {', '.join(stamped) or 'nothing'}", flush=True)
    return proc.returncode


def main(argv: list[str]) -> int:
    names = sorted(m.name for m in pkgutil.iter_modules([str(HERE)]) if m.name.startswith("bench_"))
    if argv[:1] == ["--inner"]:
        if len(argv) != 2 or argv[1] not in names:  # only a benchmark module, never another import
            print(f"--inner takes one benchmark module ({', '.join(names)}), got {argv[1:]}", file=sys.stderr)
            return 2
        importlib.import_module(f"benchmarks.{argv[1]}").main()
        return 0
    use_quiet = "--no-quiet" not in argv
    argv = [a for a in argv if a != "--no-quiet"]
    wanted = [f"bench_{a.removeprefix('bench_')}" for a in argv]
    unknown = sorted(set(wanted) - set(names))
    if unknown:
        print(
            f"unknown benchmark {', '.join(n.removeprefix('bench_') for n in unknown)}; known: "
            f"{', '.join(n.removeprefix('bench_') for n in names)}",
            file=sys.stderr,
        )
        return 2
    status = 0
    for name in wanted or names:
        print(f"=== {name}", flush=True)
        status = run_one(name, use_quiet) or status
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
