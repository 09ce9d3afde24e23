"""The one-node SLURM test cluster: is it there, and what a test does when not.

`.ci/slurm-up.sh` starts the cluster and `.ci/run` exports ``TMCHECK_SLURM=1``: the cluster is then
expected, and a missing one fails the SLURM tests instead of skipping them, so CI cannot go green
without running them. Without the variable they skip with the reason and the command that fixes it.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

USABLE = ("idle", "mixed", "allocated", "completing")
HOW = "start one with `sudo .ci/slurm-up.sh`, then run with TMCHECK_SLURM=1"


def expected() -> bool:
    """True when the environment promises a cluster (``TMCHECK_SLURM=1``, set by .ci/run)."""
    return os.environ.get("TMCHECK_SLURM") == "1"


def cluster_problem() -> str | None:
    """Why no job could run now (no sinfo, no controller, no usable node), or None if one can."""
    if shutil.which("sinfo") is None:
        return "sinfo not found (slurm-wlm is not installed)"
    try:
        r = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=10)
    except subprocess.TimeoutExpired:
        return "sinfo did not answer within 10 s"
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["no message"])[-1]
        return f"sinfo failed: {last}"
    states = [s.rstrip("*~#$@^-+") for s in r.stdout.split()]
    if not any(s in USABLE for s in states):
        return f"no usable node (sinfo states: {states or 'none'})"
    return None


def require_cluster(problem: str | None, is_expected: bool) -> None:
    """Fail (cluster expected) or skip (not expected) when `problem` is set; else return."""
    if problem is None:
        return
    if is_expected:
        pytest.fail(f"TMCHECK_SLURM=1 but the SLURM cluster is missing: {problem}", pytrace=False)
    pytest.skip(f"no SLURM cluster: {problem}; {HOW}")
