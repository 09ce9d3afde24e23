"""The one report entry point: `build_report(sweep_dir)` dispatches on the sweep's kind.

Each kind names its report module (Kind.report), which has `build(sweep, bootstrap) -> dict` (fits,
figures, report.md and report.json written into the sweep directory) and `summary(report) -> str`
(the text a terminal shows). Shared pieces: tmcheck.empirics.report.common.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from tmcheck.empirics.sweep import SweepDir, get_kind


def _module(kind: str):
    return importlib.import_module(get_kind(kind).report)


def build_report(sweep_dir: Path, bootstrap: int = 1000) -> dict:
    """Fit, draw and write the report of any sweep directory; returns the report (with its "kind")."""
    sweep = SweepDir(sweep_dir)
    kind = sweep.kind
    return {"kind": kind, **_module(kind).build(sweep, bootstrap)}


def summary(report: dict) -> str:
    """The report's summary for a terminal (tables in markdown, and where the files are)."""
    return _module(report["kind"]).summary(report)
