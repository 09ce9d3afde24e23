"""Demo stage: the synthetic manifold regression (known d and β), end to end: the data sweep, the
kNN and kernel baselines, the ID loop and the report, under out/synth-<preset>/. `make demo` runs the
`demo` preset (d in {1, 2}, β = 1, n from 64 to 2000); --quick runs the `tiny` smoke preset. The
summary line shows, per (d, β), the transformer's offset-law α̂ with its interval and measured
coverage, and the verdict against α_D from the true d."""

from __future__ import annotations

from pathlib import Path

from tmcheck.cli.common import console
from tmcheck.cli.stages.pretrain import offset_summary


def stage(out: Path, quick: bool) -> str:
    from tmcheck.empirics.report import build_report, summary
    from tmcheck.empirics.sweep import run_sweep

    preset = "tiny" if quick else "demo"
    sweep_dir = Path(out) / f"synth-{preset}"
    run_sweep(sweep_dir, "synthetic", preset, log=lambda s: console.print(s, highlight=False))
    rep = build_report(sweep_dir, bootstrap=200 if quick else 400)
    console.print(summary(rep), highlight=False)
    parts = [
        f"d={e['d']}, β={e['beta']:g}: {offset_summary(e)}" for e in rep["data_scaling"] if e["method"] == "transformer"
    ]
    label = "tiny (smoke sizes, n ≤ 300)" if quick else "demo preset (n 64..2000)"
    return f"{label}: " + "; ".join(parts)
