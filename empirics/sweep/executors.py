"""Executors: who runs the specs of a sweep (paper Section 3's runs): here one after another, a local
process pool, or a SLURM job array (tmcheck.empirics.sweep.slurm).

An executor is `Executor(ctx, specs) -> rows` (tmcheck.empirics.sweep.core): it yields each finished
run's row, in any order, while `run_sweep` (the submitter) merges results.jsonl after each. Every
executor runs a spec through `attempt`, which calls `run_spec` and keeps the failure semantics in one
place:

- a run that raises is recorded in runs/<run>/error.json (atomically: the error, where it ran) and
  the sweep goes on with the others; a worker process that dies (SIGKILL, out of memory) is recorded
  the same way by whoever watched it, with its cause: the signal or exit code, and the last line of
  the run's worker.log (a pool worker's stdout and stderr while it runs that spec);
- pool workers die with their submitter (tmcheck.util.lifetime): a killed submitter leaves no worker
  training, and the run locks go with them, so a rerun can start at once;
- a rerun retries every run without row.json, failed ones included; a run that then succeeds drops
  its error.json;
- `max_failures` stops handing out new runs once that many have failed in this submission; the
  runs in flight finish;
- at the end, failed runs raise `SweepFailed` (the finished rows are merged already).
"""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from tmcheck.empirics.sweep import layout
from tmcheck.empirics.sweep.core import Context, RunSpec, SweepBusy, SweepDir, read_json, run_spec
from tmcheck.empirics.sweep.kinds import Kind, builtin_kinds, get_kind, register_kind
from tmcheck.util import atomic, safeio
from tmcheck.util.lifetime import die_with_parent

Log = Callable[[str], None]


class SweepFailed(RuntimeError):
    """Some runs of a sweep failed (recorded in their error.json); the others' rows are merged."""


# ------------------------------------------------------------------------------------------ failures
def read_failure(sweep: SweepDir, run: str) -> dict | None:
    path = sweep.run_dir(run) / layout.ERROR
    if not path.exists():
        return None
    record = read_json(path, "a failure record")
    if not isinstance(record, dict) or not isinstance(record.get("error"), str):
        raise ValueError(f"{path} is not a failure record (a JSON object with an error)")
    return record


def last_line(path, limit: int = 64 * 1024) -> str:
    """The last non-empty line of a log (its final `limit` bytes read), or '' when there is none."""
    try:
        with safeio.open_regular(path, "a log") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - limit))
            lines = [ln.strip() for ln in f.read().decode("utf-8", "replace").splitlines() if ln.strip()]
    except (OSError, ValueError):
        return ""
    return lines[-1][:300] if lines else ""


def death_cause(exitcode: int | None) -> dict:
    """How a worker process ended: {"signal": name or None, "exit_code": int or None, "cause": words}."""
    if exitcode is None:
        return {"signal": None, "exit_code": None, "cause": "its end was not seen"}
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        oom = " (also what the out-of-memory killer sends)" if name == "SIGKILL" else ""
        return {"signal": name, "exit_code": exitcode, "cause": f"killed by {name}{oom}"}
    return {"signal": None, "exit_code": exitcode, "cause": f"exit code {exitcode}"}


def record_failure(sweep: SweepDir, run: str, error: str, where: dict | None = None, detail: str = "") -> dict:
    """Write runs/<run>/error.json atomically and return its record."""
    record = {
        "run": run,
        "error": error,
        "detail": detail,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": socket.gethostname(),
        **(where or {}),
    }
    atomic.write_json(sweep.run_dir(run) / layout.ERROR, record)
    return record


def attempt(sweep: SweepDir, spec: RunSpec | dict, ctx: Context, where: dict | None = None) -> tuple[str, Any]:
    """Run one spec through run_spec: ("done", row), ("failed", error record) or ("busy", message)
    when another worker holds the run now (nothing is recorded then: that worker owns the run)."""
    spec = spec if isinstance(spec, RunSpec) else RunSpec.from_dict(spec)
    try:
        row = run_spec(sweep, spec, ctx)
    except SweepBusy as exc:
        return "busy", str(exc)
    except Exception as exc:
        return "failed", record_failure(
            sweep, spec.run, f"{type(exc).__name__}: {exc}", where, traceback.format_exc(limit=20)
        )
    (sweep.run_dir(spec.run) / layout.ERROR).unlink(missing_ok=True)
    return "done", row


class Tally:
    """Failures of one submission: whether to hand out more runs, and the error at the end."""

    def __init__(self, max_failures: int | None, log: Log):
        self.max_failures, self.log = max_failures, log
        self.failed: list[str] = []
        self.busy: list[str] = []
        self.not_started = 0

    def outcome(self, run: str, status: str, payload: Any) -> dict | None:
        """The row to yield for a finished run, or None (logged) for a failed or busy one."""
        if status == "done":
            return payload
        if status == "busy":
            self.busy.append(run)
            self.log(f"  {run}: running in another process; not waited for")
        else:
            self.failed.append(run)
            self.log(f"  {run}: FAILED: {payload['error']}")
        return None

    def stop(self) -> bool:
        return self.max_failures is not None and len(self.failed) >= self.max_failures

    def finish(self, sweep: SweepDir) -> None:
        parts = []
        if self.failed:
            parts.append(
                f"{len(self.failed)} run(s) failed ({', '.join(self.failed[:3])}"
                f"{', ...' if len(self.failed) > 3 else ''})"
            )
        if self.not_started:
            parts.append(f"{self.not_started} not started (--max-failures {self.max_failures} reached)")
        if self.busy:
            parts.append(f"{len(self.busy)} running in another process")
        if parts:
            raise SweepFailed(f"{'; '.join(parts)}; see `tmcheck sweep status {sweep.path}`; rerun to retry")


def kind_blob(ctx: Context) -> dict | None:
    """The kind for a worker process: None for a built-in one (imported there by name), else a kind
    registered at run time as plain data: its strings, and its functions and preset class by
    "module:qualname" (their module must be importable in the worker, e.g. on PYTHONPATH, as the tests
    do); its named presets stay behind (a worker reads the config). Nothing is pickled."""
    if ctx.kind.name in builtin_kinds():
        return None
    out = {}
    for field in dataclasses.fields(ctx.kind):
        if field.name == "presets":
            continue
        value = getattr(ctx.kind, field.name)
        out[field.name] = f"{value.__module__}:{value.__qualname__}" if callable(value) else value
    return out


def _kind_from_blob(blob: dict) -> Kind:
    """Rebuild a run-time kind from kind_blob's data, importing each function by name."""
    import importlib

    def resolve(ref: str):
        module, _, qualname = ref.partition(":")
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        return obj

    callables = {f.name for f in dataclasses.fields(Kind) if f.name not in ("name", "description", "report", "presets")}
    # an optional function (run_identity) left out is None in the blob, and stays None
    return Kind(**{k: resolve(v) if k in callables and v is not None else v for k, v in blob.items()})


def worker_context(sweep_path: str, config: dict, blob: dict | None) -> Context:
    """A worker's Context, refusing a directory whose config is not the submitter's (results of two
    configs never mix)."""
    if blob is not None:  # from the submitter: a pipe, or the job's arguments under SLURM
        register_kind(_kind_from_blob(blob))
    ctx = SweepDir(sweep_path).context()
    if ctx.config != config:
        raise ValueError(f"{sweep_path}: config.json changed since the sweep was submitted; refusing to run")
    get_kind(ctx.config["kind"])
    return ctx


# ------------------------------------------------------------------------------------------ serial
def serial(max_failures: int | None = None, log: Log = print):
    """Every spec in this process, one after another (`--workers 1`), with the failure semantics."""

    def execute(ctx: Context, specs: list[RunSpec]) -> Iterator[dict]:
        tally = Tally(max_failures, log)
        for i, spec in enumerate(specs):
            if tally.stop():
                tally.not_started = len(specs) - i
                break
            row = tally.outcome(spec.run, *attempt(ctx.sweep, spec, ctx, {"executor": "serial", "pid": os.getpid()}))
            if row is not None:
                yield row
        tally.finish(ctx.sweep)

    return execute


# ------------------------------------------------------------------------------------------ local pool
def visible_gpus() -> list[str]:
    """The CUDA devices this process may use, as CUDA_VISIBLE_DEVICES entries (none without CUDA)."""
    import torch

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    listed = [g for g in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if g.strip()]
    return (listed or [str(i) for i in range(count)])[:count]


def default_workers() -> int:
    """What fills this machine: one worker per GPU, else one per core this process may use."""
    return len(visible_gpus()) or len(os.sched_getaffinity(0))


def slots(n: int) -> list[tuple[dict, list[int]]]:
    """(environment, cores) of each of n workers: the cores split into n contiguous shares (a worker
    runs cores/N threads; with more workers than cores they share single cores round robin), and
    one GPU each, round robin, when there are GPUs."""
    cores = sorted(os.sched_getaffinity(0))
    gpus = visible_gpus()
    out = []
    for i in range(n):
        share = cores[i * len(cores) // n : (i + 1) * len(cores) // n] if n <= len(cores) else [cores[i % len(cores)]]
        env = {"OMP_NUM_THREADS": str(len(share)), "MKL_NUM_THREADS": str(len(share))}
        if gpus:
            env["CUDA_VISIBLE_DEVICES"] = gpus[i % len(gpus)]
        out.append((env, share))
    return out


def log_to(path) -> None:
    """This process's stdout and stderr (file descriptors 1 and 2) appended to `path` from now on."""
    sys.stdout.flush()
    sys.stderr.flush()
    with atomic.open_append(path) as f:
        for fd in (1, 2):
            os.dup2(f.fileno(), fd)


def _worker(conn, env: dict, cores: list[int], sweep_path: str, config: dict, blob: dict | None, parent: int) -> None:
    """A pool worker (spawned): dies with its submitter; threads and GPU fixed before torch loads, then
    specs until None, each with its output in the run's worker.log."""
    die_with_parent(parent)
    os.environ.update(env)
    os.sched_setaffinity(0, cores)  # the trainer takes as many threads as the cores it may use
    import torch

    torch.set_num_threads(len(cores))
    sweep = SweepDir(sweep_path)
    ctx = worker_context(sweep_path, config, blob)
    where = {"executor": "local", "pid": os.getpid(), "cores": cores, "gpu": env.get("CUDA_VISIBLE_DEVICES")}
    while (spec := conn.recv()) is not None:
        try:
            log_to(sweep.run_dir(RunSpec.from_dict(spec).run) / layout.WORKER_LOG)
        except (ValueError, OSError) as exc:  # a bad name or a linked log: the attempt records it
            print(f"tmcheck worker: no log for this run: {exc}", file=sys.stderr)
        conn.send(attempt(sweep, spec, ctx, where))


def record_death(sweep: SweepDir, spec: RunSpec, proc) -> dict:
    """error.json of a run whose worker died mid-run: the signal or exit code, the log's last line."""
    how = death_cause(proc.exitcode)
    log = sweep.run_dir(spec.run) / layout.WORKER_LOG
    tail = last_line(log)
    shown = f"; last line of {layout.RUNS}/{spec.run}/{layout.WORKER_LOG}: {tail}" if tail else "; its log is empty"
    return record_failure(
        sweep,
        spec.run,
        f"worker process {proc.pid} died ({how['cause']}){shown}",
        {
            "executor": "local",
            "pid": proc.pid,
            "signal": how["signal"],
            "exit_code": how["exit_code"],
            "log": f"{layout.RUNS}/{spec.run}/{layout.WORKER_LOG}",
            "log_tail": tail,
        },
    )


def local(workers: int | None = None, max_failures: int | None = None, log: Log = print):
    """A process pool of `workers` (default: fill the machine) on this host; 1 worker runs in-process.

    Each worker is a spawned process with its share of the cores (or one GPU) that takes one spec at
    a time; a worker that dies mid-run is recorded as that run's failure and replaced."""
    if workers is not None and workers < 1:
        raise ValueError(f"--workers must be at least 1, got {workers}")

    def execute(ctx: Context, specs: list[RunSpec]) -> Iterator[dict]:
        n = min(workers or default_workers(), len(specs))
        if n <= 1:
            yield from serial(max_failures, log)(ctx, specs)
            return
        yield from _pool(ctx, specs, n, Tally(max_failures, log))

    return execute


def _pool(ctx: Context, specs: list[RunSpec], n: int, tally: Tally) -> Iterator[dict]:
    import multiprocessing as mp
    from multiprocessing.connection import wait

    spawn = mp.get_context("spawn")
    args = (str(ctx.sweep.path), ctx.config, kind_blob(ctx), os.getpid())

    def start(slot: int):
        parent, child = spawn.Pipe()
        env, cores = slots(n)[slot]
        p = spawn.Process(
            target=_worker, args=(child, env, cores, *args), daemon=True, name=f"tmcheck-sweep-worker-{slot}"
        )
        p.start()
        child.close()
        return p, parent

    todo = deque(specs)
    workers = {slot: start(slot) for slot in range(n)}
    running: dict[int, RunSpec] = {}
    try:
        while todo or running:
            for slot in workers:
                if slot not in running and todo and not tally.stop():
                    running[slot] = spec = todo.popleft()
                    workers[slot][1].send(spec.as_dict())
            if not running:
                break
            ready = wait([workers[s][1] for s in running] + [workers[s][0].sentinel for s in running])
            for slot in list(running):
                proc, conn = workers[slot]
                if conn in ready or proc.sentinel in ready:
                    spec = running.pop(slot)
                    try:
                        status, payload = conn.recv()
                    except (EOFError, OSError):  # the worker died mid-run
                        proc.join(5)
                        status, payload = "failed", record_death(ctx.sweep, spec, proc)
                        conn.close()
                        workers[slot] = start(slot)
                    row = tally.outcome(spec.run, status, payload)
                    if row is not None:
                        yield row
        tally.not_started = len(todo)
    finally:
        for _proc, conn in workers.values():
            try:
                conn.send(None)
            except OSError:
                pass
        for proc, _conn in workers.values():
            proc.join(10)
            if proc.is_alive():
                proc.kill()
                proc.join()
    tally.finish(ctx.sweep)
