"""Demo stage: the synthetic manifold regression, where d and β are known (eq. 3-4).

By default, the cheapest committed run of each method of results/synth (the transformer, kNN and
kernel ridge) is trained again from scratch (same seeds, one thread) and its test MSE printed beside
the committed row's; the committed report itself is rebuilt by the reports stage. With --full the
whole sweep runs again under out/synth-full and its fits are set beside the committed ones. Without
committed results the tiny preset runs end to end instead. The summary line shows, per (d, β), the
transformer's offset-law α̂ with its interval and measured coverage, and the verdict against α_D from
the true d."""

from __future__ import annotations

import json
from pathlib import Path

from tmcheck.cli.common import console
from tmcheck.cli.stages.pretrain import offset_summary
from tmcheck.cli.stages.replay import committed_stage, fits_side_by_side, run_full


def stage(out: Path, quick: bool, full: bool = False, results: Path | None = None) -> str | tuple[str, bool]:
    return committed_stage("synth", out, quick, full, results, tiny_sweep, full_run)


def _transformer_lines(rep: dict) -> str:
    return "; ".join(
        f"d={e['d']}, β={e['beta']:g}: {offset_summary(e)}" for e in rep["data_scaling"] if e["method"] == "transformer"
    )


def tiny_sweep(out: Path) -> str:
    from tmcheck.empirics.report import build_report, summary
    from tmcheck.empirics.sweep import run_sweep

    console.print("no committed results here (run from a checkout, or pass --results DIR): the tiny preset instead")
    sweep_dir = Path(out) / "synth-tiny"
    run_sweep(sweep_dir, "synthetic", "tiny", log=lambda s: console.print(s, highlight=False))
    rep = build_report(sweep_dir, bootstrap=200)
    console.print(summary(rep), highlight=False)
    return "tiny (smoke sizes): " + _transformer_lines(rep)


def full_run(exp, out: Path) -> str:
    from tmcheck.empirics.report import build_report
    from tmcheck.empirics.sweep import SweepDir

    log = lambda s: console.print(s, highlight=False)  # noqa: E731  (a one-line logger)
    sweep_dir, seconds = run_full(exp, out, "synthetic", SweepDir(exp.path).preset(), log)
    rep = build_report(sweep_dir)
    fits_side_by_side(json.loads((exp.path / "report.json").read_text()), rep, _entries)
    return f"cpu from scratch in {seconds / 60:.1f} min: " + _transformer_lines(rep)


def _entries(old: dict, new: dict):
    def key(e):
        return (e["d"], e["beta"], e["method"])

    before = {key(e): e for e in old["data_scaling"]}
    for e in new["data_scaling"]:
        cells = []
        for x in (before.get(key(e)), e):
            f = x["exponent"]["fits"]["loglog"] if x and x["exponent"] else None
            cells.append(f"{f['alpha']:.3f} [{f['interval']['lo']:.3f}, {f['interval']['hi']:.3f}]" if f else "—")
        yield f"d={e['d']}, β={e['beta']:g}, {e['method']}", *cells
