"""The prepared GPU check: one command that fits a 9-minute lease on one H200 (install included).

``benchmarks/gpu_check.sh`` installs the carried wheels (time-boxed, recorded), then runs this. Stages,
in order of value, each in its own process with a time box (a stage that runs past it is killed with
its children, recorded as "timeout" with what it had measured so far, and the next stage starts):

a. ``parity`` (benchmarks/gpu_stages.py): every CUDA path against the CPU path on small inputs (paper
   Sections 3 and 5 code): kNN neighbours identical (default tiles, and small tiles with margin 0 so
   that the certificate fails and the range query runs), MLE and TwoNN estimates equal to 1e-9, GPT
   logits close in float32, the trainer's bf16 loss close to the CPU's float32 loss, three fused AdamW
   steps, token embeddings, the synthetic-regression transformer.
b. ``throughput`` (benchmarks/gpu_train.py): the 125M configuration's step, eager and under
   ``torch.compile`` (cold and warm compile times) at a larger micro-batch, fused AdamW, flash
   attention, bf16; MFU against the datasheet's dense bf16 peak and against a GEMM measured in the run.
c. ``sweep`` (benchmarks/gpu_sweep.py): a Figure 2 sweep over three decades (3 corpora x 6 sizes x 2
   seeds, from the carried corpora), runs that stop on their validation loss, the report's verdicts.
d. ``id_large`` (benchmarks/gpu_stages.py): exact kNN + MLE at N = 10^6, D = 768, the candidate search
   in bf16 with the certificate.

Every figure and every pass/fail is computed here and written to the JSON (default
benchmarks/results/gpu.json) after each stage. Exit 2 (one line) without a CUDA device, 1 when a
correctness check failed or could not run, 0 otherwise. ``--cpu-smoke`` runs the same code at toy
sizes on the CPU, comparing the CPU with itself (tests/benchmarks/test_gpu_check.py), so a broken
stage is found before a lease; ``--inject-fault NAME`` perturbs the device side of a check, to show
that it can fail. ``--prepare-carry`` prepares the corpora the device run needs (run it here).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path

from benchmarks import gpu_stages, gpu_sweep, gpu_train
from benchmarks.gpu_stages import CHECKS, STAGES, Box

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "gpu.json"
# The lease: 9 minutes on one H200, of which the wheels' install (gpu_check.sh's own box) and this
# process's start-up (torch import, CUDA init, the environment record) come first; then each stage's box.
LEASE_S = 540
INSTALL_S = 45  # gpu_check.sh: `timeout` around the pip install of the carried wheels
STARTUP_S = 25
LIMITS = {"parity": 45, "throughput": 120, "sweep": 240, "id_large": 60}
SMOKE_LIMITS = {"parity": 120, "throughput": 120, "sweep": 240, "id_large": 60}
STAGE_FUNCTIONS = {
    "parity": gpu_stages.stage_parity,
    "throughput": gpu_train.stage_throughput,
    "sweep": gpu_sweep.stage_sweep,
    "id_large": gpu_stages.stage_id_large,
}


def fits_lease(limits: dict, install: float = INSTALL_S, startup: float = STARTUP_S, lease: float = LEASE_S) -> bool:
    """Whether the install's box, the start-up and the stages' boxes together fit the lease."""
    return install + startup + sum(limits.values()) <= lease


def log(msg: str) -> None:
    print(f"[gpu_check] {msg}", flush=True)


def environment(dev) -> dict:
    import torch

    env = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
    }
    if dev.type == "cuda":
        p = torch.cuda.get_device_properties(dev)
        env.update(
            device_name=torch.cuda.get_device_name(dev),
            capability=list(torch.cuda.get_device_capability(dev)),
            multiprocessors=p.multi_processor_count,
            memory_gib=p.total_memory / 2**30,
        )
        try:
            smi = subprocess.run(
                ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=20,
            )
            env["driver"] = smi.stdout.strip() or None
        except (OSError, subprocess.TimeoutExpired):
            env["driver"] = None
    else:
        env.update(device_name="cpu (smoke run)", capability=None)
    return env


def run_stage(name: str, args, limit: float) -> dict:
    """One stage in its own process group; killed with its children when it runs past `limit`."""
    fd, tmp = tempfile.mkstemp(prefix=f"gpu_check_{name}_", suffix=".json")
    os.close(fd)
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.gpu_check",
        "--stage",
        name,
        "--stage-out",
        tmp,
        "--sweep-dir",
        str(args.sweep_dir),
        "--carry",
        str(args.carry),
        "--stage-limit",
        str(limit),
    ]
    cmd += ["--cpu-smoke"] if args.cpu_smoke else []
    cmd += [f"--inject-fault={f}" for f in args.inject_fault]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, start_new_session=True)
    try:
        rc = proc.wait(timeout=limit)
        status = "ok" if rc == 0 else "error"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        rc, status = None, "timeout"
    elapsed = time.perf_counter() - t0
    try:
        got = json.loads(Path(tmp).read_text() or "{}")
    except (OSError, json.JSONDecodeError):
        got = {}
    finally:
        Path(tmp).unlink(missing_ok=True)
    return {
        "status": status,
        "returncode": rc,
        "elapsed_s": elapsed,
        "limit_s": limit,
        "result": got.get("result"),
        "error": got.get("error") or (f"ran out of its {limit:.0f} s box" if status == "timeout" else None),
        "partial": bool(got.get("partial")),
    }


def child(args) -> int:
    """The body of one stage (inside its own process): what it has measured goes to --stage-out as it
    comes (marked partial until the stage returns), then its result or its error."""
    from tmcheck.empirics.device import resolve_device
    from tmcheck.util.atomic import write_json

    dev = resolve_device("cpu" if args.cpu_smoke else "cuda")
    out = Path(args.stage_out)
    last: dict = {}

    def record(result: dict) -> None:
        last["result"] = result
        write_json(out, {"result": result, "partial": True})

    box = Box(args.stage_limit, record, args.sweep_dir, args.carry)
    try:
        res = STAGE_FUNCTIONS[args.stage](dev, args.cpu_smoke, set(args.inject_fault), box)
    except Exception as exc:  # recorded in the JSON; the parent goes on with the next stage
        traceback.print_exc()
        write_json(out, {"error": f"{type(exc).__name__}: {exc}", "result": last.get("result"), "partial": True})
        return 1
    write_json(out, {"result": res})
    return 0


def summarize(report: dict) -> tuple[bool | None, list[str]]:
    """(all correctness checks passed, or None if the parity stage was not asked for; failed names)."""
    if "parity" not in report["stages"]:
        return None, []
    st = report["stages"]["parity"]
    if st["status"] != "ok" or not st["result"]:
        return False, [f"parity stage {st['status']}"]
    failed = [n for n, c in st["result"]["checks"].items() if not c["passed"]]
    missing = [n for n in CHECKS if n not in st["result"]["checks"]]
    return not failed and not missing, failed + [f"{n} (not run)" for n in missing]


def _stage_line(name: str, st: dict) -> str:
    r = st["result"] or {}
    mfu = lambda v: "null (no datasheet peak for this device)" if v is None else f"{v:.1%} of the datasheet peak"  # noqa: E731
    extra = {
        "throughput": lambda: (
            f"{r['tokens_per_s']:,.0f} tok/s ({r['best']}), MFU {mfu(r['mfu'])}, "
            f"{r['mfu_vs_measured_gemm']:.1%} of the measured bf16 GEMM"
        ),
        "id_large": lambda: (
            f"d = {r['dimension']:.3f} at N = {r['N']:,}, kNN + MLE {r['knn_plus_mle_seconds']:.1f} s "
            f"(kNN {r['knn_seconds']:.1f} s, {r['rows_recomputed']} rows re-searched)"
        ),
        "sweep": lambda: (
            f"{r['runs']} runs ({r['runs_on_cap']} on the cap), verdicts "
            + "; ".join(f"{c} {e['verdicts']}" for c, e in r["report"].items())
        ),
        "parity": lambda: f"{sum(c['passed'] for c in r['checks'].values())}/{len(r['checks'])} checks pass",
    }
    detail = extra[name]() if st["status"] == "ok" and r else (st["error"] or "")
    return f"stage {name}: {st['status']} in {st['elapsed_s']:.1f} s (limit {st['limit_s']:.0f} s) {detail}"


def parent(args) -> int:
    import torch

    from tmcheck.util.atomic import write_json

    if not args.cpu_smoke and not torch.cuda.is_available():
        sys.stderr.write(
            f"error: no CUDA device: torch {torch.__version__} sees none; gpu_check needs one "
            f"(--cpu-smoke tests the script on the CPU)\n"
        )
        return 2
    dev = torch.device("cpu" if args.cpu_smoke else "cuda")
    if args.sweep_dir is None:
        args.sweep_dir = Path(tempfile.mkdtemp(prefix="gpu_check_sweep_"))
    if args.carry is None:  # the smoke run prepares its toy corpora (offline) as the device run's are carried
        args.carry = (
            gpu_sweep.prepare_carry(True, Path(tempfile.mkdtemp(prefix="gpu_check_carry_")))
            if args.cpu_smoke
            else gpu_sweep.CARRY
        )
    limits = dict(SMOKE_LIMITS if args.cpu_smoke else LIMITS)
    for item in args.stage_timeout:
        name, _, secs = item.partition("=")
        limits[name] = float(secs)
    t_start = time.perf_counter()
    report = {
        "tool": "benchmarks/gpu_check.py",
        "mode": "cpu-smoke" if args.cpu_smoke else "cuda",
        "started_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "environment": environment(dev),
        "limits_s": limits,
        "lease_s": {"lease": LEASE_S, "install": INSTALL_S, "startup": STARTUP_S, "fits": fits_lease(limits)},
        "install": install_record(),
        "injected_faults": args.inject_fault,
        "stages": {},
    }
    log(
        f"{report['environment']['device_name']}, torch {torch.__version__}, CUDA {torch.version.cuda}; "
        f"writing {args.out}"
    )
    for name in args.stages:
        log(f"stage {name}: starting (limit {limits[name]:.0f} s, {time.perf_counter() - t_start:.0f} s elapsed)")
        report["stages"][name] = run_stage(name, args, limits[name])
        log(_stage_line(name, report["stages"][name]))
        report["all_checks_passed"], report["failed_checks"] = summarize(report)
        report["elapsed_s"] = time.perf_counter() - t_start
        write_json(args.out, report)  # after every stage: a run cut short keeps what it measured
    ok, failed = summarize(report)
    report["exit_code"] = 1 if ok is False else 0
    report["finished_utc"] = datetime.now(UTC).isoformat(timespec="seconds")
    write_json(args.out, report)
    log(
        f"done in {report['elapsed_s']:.0f} s; checks: "
        + ("not run" if ok is None else "all pass" if ok else "FAILED: " + ", ".join(failed))
    )
    return report["exit_code"]


def install_record() -> dict:
    """What gpu_check.sh installed and which torch and transformers run (the lock's or the image's)."""
    import torch

    path = os.environ.get("GPU_CHECK_INSTALL")
    rec = json.loads(Path(path).read_text()) if path and Path(path).exists() else {"status": "not run by gpu_check.sh"}
    lock = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        name, _, version = line.partition("==")
        if name.lower() in ("torch", "transformers"):
            lock[name.lower()] = version.strip()
    try:
        import transformers

        tf = transformers.__version__
    except ImportError:
        tf = None
    running = {"torch": torch.__version__, "transformers": tf}
    rec["versions"] = {
        n: {"running": v, "lock": lock.get(n), "lock_pin_runs": bool(v) and v.split("+")[0] == lock.get(n)}
        for n, v in running.items()
    }
    return rec


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # bad input: one line on stderr, exit 2
        self.exit(2, f"error: {' '.join(message.split())} (see --help)\n")


def parse(argv: list[str]):
    ap = _Parser(prog="gpu_check", description=__doc__.splitlines()[0])
    ap.add_argument("--cpu-smoke", action="store_true", help="tiny sizes on the CPU, CPU against CPU")
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"JSON report (default {RESULTS.relative_to(ROOT)}; the smoke run's default is a temporary file)",
    )
    ap.add_argument("--stages", default=",".join(STAGES), help=f"comma list of {', '.join(STAGES)}")
    ap.add_argument(
        "--carry", type=Path, default=None, help="the prepared corpora (default benchmarks/.gpu_carry; smoke: made)"
    )
    ap.add_argument("--prepare-carry", action="store_true", help="prepare the device run's corpora here, then exit")
    ap.add_argument("--sweep-dir", type=Path, default=None, help="sweep directory (default: a new temporary one)")
    ap.add_argument("--stage-timeout", action="append", default=[], metavar="STAGE=SECONDS")
    ap.add_argument(
        "--inject-fault",
        action="append",
        default=[],
        choices=CHECKS,
        help="perturb the device side of this check (shows that it can fail)",
    )
    ap.add_argument("--stage", choices=STAGES, help=argparse.SUPPRESS)
    ap.add_argument("--stage-out", help=argparse.SUPPRESS)
    ap.add_argument("--stage-limit", type=float, default=0.0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.stages = [s for s in args.stages.split(",") if s]
    bad = [s for s in args.stages if s not in STAGES] + [
        t.partition("=")[0] for t in args.stage_timeout if t.partition("=")[0] not in STAGES
    ]
    if bad:
        ap.error(f"unknown stage {bad[0]!r}; choose from {', '.join(STAGES)}")
    try:
        [float(t.partition("=")[2]) for t in args.stage_timeout]
    except ValueError:
        ap.error("--stage-timeout takes STAGE=SECONDS")
    if args.out is None:
        args.out = Path(tempfile.mkdtemp(prefix="gpu_check_")) / "gpu.json" if args.cpu_smoke else RESULTS
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.prepare_carry:
        log(f"corpora prepared under {gpu_sweep.prepare_carry(args.cpu_smoke, args.carry or gpu_sweep.CARRY)}")
        return 0
    return child(args) if args.stage else parent(args)


if __name__ == "__main__":
    sys.exit(main())
