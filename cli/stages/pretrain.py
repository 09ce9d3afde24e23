"""Demo stage: the data-scaling experiment end to end (sweep, ID, report) with the cpu-demo preset,
or tiny when quick. Writes everything under out/pretrain-<preset>/; the summary line shows, per
corpus, the offset law's α̂ with its interval and that interval's measured coverage, and the verdict
of the prediction test (issue 12)."""

from __future__ import annotations

from pathlib import Path

from tmcheck.cli.common import console


def stage(out: Path, quick: bool) -> str:
    from tmcheck.empirics.lm.embed import corpus_id
    from tmcheck.empirics.report import build_report, summary
    from tmcheck.empirics.sweep import local, run_sweep

    preset = "tiny" if quick else "cpu-demo"
    sweep_dir = Path(out) / f"pretrain-{preset}"
    log = lambda s: console.print(s, highlight=False)  # noqa: E731
    # the full preset's 30 runs go to a pool filling the machine (as `sweep data` does); tiny stays in-process
    run_sweep(sweep_dir, "pretrain", preset, log=log, executor=local(1 if quick else None, log=log))
    corpus_id(sweep_dir)
    rep = build_report(sweep_dir)
    console.print(summary(rep), highlight=False, soft_wrap=True)
    return f"{preset}: " + "; ".join(f"{c}: {offset_summary(e)}" for c, e in rep["table"].items())


def offset_summary(e: dict) -> str:
    """The offset law's α̂ and E, its interval with the measured coverage, and the verdict (one form of
    the one exponent fit, tmcheck.empirics.report.common), or why it is withheld."""
    if e["exponent"] is None:
        return e["withheld"]
    f = e["exponent"]["fits"]["offset"]
    iv = f["interval"]
    test = (e["exponent"]["prediction"] or {}).get("offset")
    return (
        f"offset law α̂={f['alpha']:.3f} [{iv['lo']:.3f}, {iv['hi']:.3f}] ({iv['method']}, coverage "
        f"{iv['coverage']:.0%}), E={f['params']['E']:.3g}"
        + (f", vs α_D={test['alpha_pred']:.3f}: {test['verdict']}" if test else ", no ID: no verdict")
    )
