"""Demo stage of `tmcheck demo --full` only: the model-scaling experiment (the paper's Figure 3) and the
ID ablations of its models (Figure 4) again from scratch, under out/model-full, beside the committed
results/model. It trains on the SQL corpus (`tmcheck data prepare sql`, refused in one line when it is
not prepared)."""

from __future__ import annotations

import json
from pathlib import Path

from tmcheck.cli.common import console
from tmcheck.cli.stages.replay import committed, run_full


def stage(out: Path, quick: bool, full: bool = False, results: Path | None = None) -> str:
    from tmcheck.empirics.report import ablation as ab
    from tmcheck.empirics.report import build_report, summary
    from tmcheck.empirics.sweep import SweepDir
    from tmcheck.util.atomic import write_json

    exp = committed(results, "model")
    if exp is None:
        return "no committed model-scaling experiment here: nothing to re-run"
    log = lambda s: console.print(s, highlight=False)  # noqa: E731  (a one-line logger)
    sweep_dir, seconds = run_full(exp, out, "model", SweepDir(exp.path).preset(), log)
    rep = build_report(sweep_dir)
    console.print(summary(rep), highlight=False, soft_wrap=True)
    suite = committed(results, "ablate/suite")
    opts = ab.AblateOptions()
    if suite is not None:  # the committed ablation's own options
        given = json.loads((suite.path / "ablate.json").read_text())["options"]
        opts = ab.AblateOptions(**{**given, "estimators": tuple(given["estimators"])})
    result = ab.ablate(ab.sweep_members(sweep_dir, opts), opts, f"the model sweep {sweep_dir.name}", log)
    write_json(sweep_dir / "ablate" / "ablate.json", result)
    ab.figure(result, sweep_dir / "ablate" / "fig_ablate.png")
    f = rep["alpha_N"]["fits"]["loglog"]
    return (
        f"model sweep from scratch in {seconds / 60:.1f} min: α̂_N = {f['alpha']:.3f} "
        f"[{f['interval']['lo']:.3f}, {f['interval']['hi']:.3f}]; 2β/d̂: {rep['verdicts']['2beta/d-hat']}; "
        f"ablations written to {sweep_dir / 'ablate'}"
    )
