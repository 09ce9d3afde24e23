"""`tmcheck sweep status DIR`: each run's state, read from the sweep directory (paper Section 3's runs).

done (row.json, or a row results.jsonl records for a run the directory holds no folder of: committed
results), running (its worker holds the run's lock now, or its SLURM task runs), queued (its SLURM
task waits in the queue), failed (error.json), started (a directory without a row: interrupted),
pending (nothing yet). The directory is the source of truth; the queue only adds job states. A sweep
without plan.json (results committed before plans were stored) lists the runs results.jsonl records.
"""

from __future__ import annotations

from collections import Counter

from tmcheck.empirics.sweep import layout
from tmcheck.empirics.sweep.core import RunSpec, SweepDir
from tmcheck.empirics.sweep.executors import read_failure

STATES = ("done", "running", "queued", "failed", "started", "pending")


def sweep_status(path) -> dict:
    """{"sweep", "kind", "preset", "counts": {state: n}, "runs": [{"run", "state", "job", "error"}]}."""
    from tmcheck.empirics.sweep import slurm

    sweep = SweepDir(path)
    config = sweep.context().config  # checked by the schema
    if (sweep.path / layout.PLAN).exists() or not sweep.results_path.exists():
        specs = sweep.read_plan()
    else:
        specs = [RunSpec(config["kind"], layout.check_run_name(r.get("run")), {}) for r in sweep.rows()]
    base = sweep.status(specs)
    jobs = slurm.read_jobs(sweep)
    queue = slurm.queue_states() if jobs else {}
    runs = []
    for s in specs:
        state, job = base[s.run], jobs.get(s.run)
        err = read_failure(sweep, s.run) if state != "done" else None
        in_queue = queue.get(job) if job else None
        if state != "done" and in_queue is not None:
            state = "queued" if in_queue == "PENDING" else "running"
        elif state == "started" and err is not None:
            state = "failed"
        runs.append(
            {
                "run": s.run,
                "state": state,
                "job": job,
                "job_state": in_queue,
                "error": err["error"] if err and state == "failed" else None,
            }
        )
    counts = Counter(r["state"] for r in runs)
    return {
        "sweep": str(sweep.path),
        "kind": config["kind"],
        "preset": config["preset"].get("name"),
        "counts": {k: counts.get(k, 0) for k in STATES},
        "runs": runs,
    }
