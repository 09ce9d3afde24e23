"""Demo stage: the data-scaling experiment end to end (sweep, ID, report) with the cpu-demo preset,
or tiny when quick. Writes everything under out/pretrain-<preset>/."""

from __future__ import annotations

from pathlib import Path

from tmcheck.cli.common import console


def stage(out: Path, quick: bool) -> str:
    from tmcheck.empirics.embed import corpus_id
    from tmcheck.empirics.report import build_report, summary
    from tmcheck.empirics.sweep import run_sweep

    preset = "tiny" if quick else "cpu-demo"
    sweep_dir = Path(out) / f"pretrain-{preset}"
    run_sweep(sweep_dir, "pretrain", preset, log=lambda s: console.print(s, highlight=False))
    corpus_id(sweep_dir)
    rep = build_report(sweep_dir)
    console.print(summary(rep), highlight=False, soft_wrap=True)
    parts = [f"{c}: d={e['d']:.1f}, alpha_D={e['alpha_D']:.3f}, observed {e['alpha_hat']:.3f}"
             for c, e in rep["table"].items() if "d" in e]
    return f"{preset}: " + "; ".join(parts)
