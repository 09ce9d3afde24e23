"""The sweep directory's file names, and the one function that derives a run directory's name.

    <sweep>/config.json        {"kind": ..., "preset": {...}, ...}: written once, by the submitter
    <sweep>/plan.json          the run specs of the sweep, in order (rewritten by each submitter)
    <sweep>/.lock              flock of the submitter (one at a time; workers never take it)
    <sweep>/data/<name>/       inputs shared by runs (pretraining: tokenizer and token shards)
    <sweep>/runs/<run>/        one directory per run spec: whatever the run writes (checkpoints ...)
    <sweep>/runs/<run>/spec.json   the spec this directory holds (a different spec is refused)
    <sweep>/runs/<run>/row.json    the run's result row, written atomically when the run is done
    <sweep>/runs/<run>/.lock       flock of the worker running this spec
    <sweep>/runs/<run>/reused.json  where a run taken from another sweep came from (run_sweep's `reuse`)
    <sweep>/runs/<run>/error.json  why the run's last attempt failed (removed when it succeeds)
    <sweep>/runs/<run>/worker.log  a pool worker's stdout and stderr while it ran this spec
    <sweep>/slurm/             the SLURM executor's logs and pickles; slurm/jobs.json: run -> job id
    <sweep>/results.jsonl      every finished run's row in plan order, rebuilt from the row.json files
    <sweep>/id.json            intrinsic-dimension estimates, each stored with the protocol that made it
    <sweep>/report.md, report.json, fig_*.png   written by `tmcheck report`

The trainer (tmcheck.empirics.lm.train) writes its own result.json and checkpoints inside a run's
directory; row.json is the sweep's record, so the two never collide.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Mapping

CONFIG = "config.json"
PLAN = "plan.json"
LOCK = ".lock"
DATA = "data"
RUNS = "runs"
SPEC = "spec.json"
ROW = "row.json"
RESULTS = "results.jsonl"
ID = "id.json"
REPORT_MD = "report.md"
REPORT_JSON = "report.json"
ERROR = "error.json"
REUSED = "reused.json"
WORKER_LOG = "worker.log"
SLURM = "slurm"
JOBS = "jobs.json"
TRAIN_RESULT = "result.json"  # the trainer's record inside a run directory (history, best step)

# A run directory's name: lower-case letters, digits and single hyphens, at most 120 characters:
# never empty, never ".", "..", a path separator or a hidden file.
RUN_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
RUN_NAME_MAX = 120
_TOKEN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def check_run_name(name: str) -> str:
    """`name` if it is a valid run-directory name, else ValueError (for names read from files)."""
    if not isinstance(name, str) or len(name) > RUN_NAME_MAX or not RUN_NAME.match(name):
        raise ValueError(f"invalid run name {name!r}: lower-case letters, digits and single hyphens only")
    return name


def token(value) -> str:
    """One spec value as it appears in a run name: 3 -> '3', 0.5 -> '0p5', 1e-05 -> '1em05', 'code' -> 'code'."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"a run name cannot hold {value!r}")
    if isinstance(value, int):
        return str(value).replace("-", "m")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"a run name cannot hold {value!r}")
        return f"{value:g}".replace(".", "p").replace("-", "m").replace("+", "")
    if isinstance(value, str) and _TOKEN.match(value):
        return value
    raise ValueError(f"a run name cannot hold {value!r}")


def run_name(template: str, params: Mapping) -> str:
    """The run directory's name: `template` (str.format fields naming keys of params) with each value
    through `token`, then checked against RUN_NAME. The only place names are made."""
    used = [f for _, f, _, _ in string.Formatter().parse(template) if f]
    missing = [f for f in used if f not in params]
    if missing:
        raise ValueError(f"run-name template {template!r} needs {missing[0]!r}, which the spec lacks")
    return check_run_name(template.format(**{f: token(params[f]) for f in used}))
