"""Shared by the theory pages' generators: the obligations run once per build, short numbers, and
floats printed to the digits every machine agrees on."""

from __future__ import annotations

import re

from docs_gen._common import ROOT

MUTATION = ROOT / "mutation" / "report.json"


def short(x: float) -> str:
    return f"{x:.4g}" if isinstance(x, float) else str(x)


# A float printed to its last digit differs between CPUs (BLAS kernels, vectorised sums): the same commit
# gives 1.3088351925685942 on one machine and 1.3088351925685933 on another, so `tools/docs.py check` would
# fail on a CI machine of the other kind. The pages print fewer digits than the machines disagree in.
_LONG_FLOAT = re.compile(r"(?<![\w.])-?\d+\.\d{9,}(?:e[-+]?\d+)?")


def machine_independent(text: str) -> str:
    """text with every float of 10 or more significant digits printed to 10."""
    return _LONG_FLOAT.sub(lambda m: f"{float(m.group()):.10g}", text)


_OUTCOMES: list = []


def outcomes() -> list:
    """Every obligation's outcome, run once per docs build."""
    if not _OUTCOMES:
        from tmcheck.proofs_check.registry import all_obligations, run

        _OUTCOMES.extend(run(o) for o in all_obligations())
    return _OUTCOMES
