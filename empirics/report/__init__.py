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


def build_report(sweep_dir: Path, bootstrap: int = 1000, **options) -> dict:
    """Fit, draw and write the report of any sweep directory; returns the report (with its "kind").

    `options` go to the kind's report (pretraining: `second_ids=True` estimates the second ID with
    all-MiniLM-L6-v2 where id.json lacks it); an option the kind does not take is refused."""
    import inspect

    sweep = SweepDir(sweep_dir)
    kind = sweep.kind
    build = _module(kind).build
    unknown = sorted(set(options) - set(inspect.signature(build).parameters))
    if unknown:
        raise ValueError(f"a {kind} report takes no option {unknown[0]!r}")
    return {"kind": kind, **build(sweep, bootstrap, **options)}


def summary(report: dict) -> str:
    """The report's summary for a terminal (tables in markdown, and where the files are)."""
    return _module(report["kind"]).summary(report)
