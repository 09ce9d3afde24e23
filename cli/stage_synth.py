"""Demo stage: the synthetic manifold regression (known d and β), end to end: the data sweep, the
kNN and kernel baselines, the ID loop and the report, under out/synth-<preset>/. `make demo` runs the
`demo` preset (d in {1, 2}, β = 1, n from 64 to 2000); --quick runs the `tiny` smoke preset."""

from __future__ import annotations

from pathlib import Path

from tmcheck.cli.common import console


def stage(out: Path, quick: bool) -> str:
    from tmcheck.empirics.report import build_report, summary
    from tmcheck.empirics.sweep import run_sweep

    preset = "tiny" if quick else "demo"
    sweep_dir = Path(out) / f"synth-{preset}"
    run_sweep(sweep_dir, "synthetic", preset, log=lambda s: console.print(s, highlight=False))
    rep = build_report(sweep_dir, bootstrap=200 if quick else 1000)
    console.print(summary(rep), highlight=False)
    fits = {(e["d"], e["method"]): e for e in rep["data_scaling"]}
    parts = []
    for d in sorted({d for d, _ in fits}):
        t, k = fits[d, "transformer"], fits[d, "knn"]
        parts.append(f"d={d}: α_D={t['predicted']:.2f}, transformer {t['alpha_hat']:.2f}, kNN {k['alpha_hat']:.2f}")
    label = "tiny (smoke sizes, n ≤ 300)" if quick else "demo preset (n 64..2000)"
    return f"{label}: " + "; ".join(parts)
