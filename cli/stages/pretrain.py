"""Demo stage: the data-scaling experiment (the paper's Figure 2, Section 3).

By default, the cheapest committed run of each corpus of results/pretrain is trained again from
scratch (same seeds, one thread) and its test loss printed beside the committed row's; the committed
report itself is rebuilt by the reports stage. With --full the whole experiment runs again (sweep,
ID, report) under out/pretrain-full and its fits are set beside the committed ones. Without committed
results (a wheel install) the tiny preset runs end to end instead. The summary line shows, per corpus,
the offset law's α̂ with its interval and that interval's measured coverage, and the verdict."""

from __future__ import annotations

from pathlib import Path

from tmcheck.cli.common import console
from tmcheck.cli.stages.replay import committed_stage, fits_side_by_side, run_full


def stage(out: Path, quick: bool, full: bool = False, results: Path | None = None) -> str | tuple[str, bool]:
    return committed_stage("pretrain", out, quick, full, results, tiny_sweep, full_run)


def tiny_sweep(out: Path) -> str:
    """The pipeline end to end on the tiny preset (sweep, ID, report): what runs without committed results."""
    from tmcheck.empirics.report import build_report, summary
    from tmcheck.empirics.report.pretrain import corpus_id
    from tmcheck.empirics.sweep import SweepDir, run_sweep

    console.print("no committed results here (run from a checkout, or pass --results DIR): the tiny preset instead")
    sweep_dir = Path(out) / "pretrain-tiny"
    run_sweep(sweep_dir, "pretrain", "tiny", log=lambda s: console.print(s, highlight=False))
    corpus_id(SweepDir(sweep_dir))
    rep = build_report(sweep_dir)
    console.print(summary(rep), highlight=False, soft_wrap=True)
    return "tiny: " + "; ".join(f"{c}: {offset_summary(e)}" for c, e in rep["table"].items())


def full_run(exp, out: Path) -> str:
    import json

    from tmcheck.empirics.report import build_report
    from tmcheck.empirics.report.pretrain import corpus_id
    from tmcheck.empirics.sweep import SweepDir

    log = lambda s: console.print(s, highlight=False)  # noqa: E731  (a one-line logger)
    sweep_dir, seconds = run_full(exp, out, "pretrain", SweepDir(exp.path).preset(), log)
    corpus_id(SweepDir(sweep_dir))
    rep = build_report(sweep_dir, second_ids=True)
    old = json.loads((exp.path / "report.json").read_text())
    fits_side_by_side(old, rep, _entries)
    return f"cpu-demo from scratch in {seconds / 60:.1f} min: " + "; ".join(
        f"{c}: {offset_summary(e)}" for c, e in rep["table"].items()
    )


def _entries(old: dict, new: dict):
    for c in new["table"]:
        cells = []
        for rep in (old, new):
            e = rep["table"].get(c)
            f = e["exponent"]["fits"]["loglog"] if e and e["exponent"] else None
            cells.append(f"{f['alpha']:.3f} [{f['interval']['lo']:.3f}, {f['interval']['hi']:.3f}]" if f else "—")
        yield c, *cells


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
        + (f", vs α_D={test['alpha_pred']:.3f}: {test['verdict']}" if test else f", {_no_test(e)}")
    )


def _no_test(e: dict) -> str:
    """Why a fitted corpus has no prediction test: its d̂'s certificate failed, or there is no d̂."""
    return ((e.get("id") or {}).get("validation") or {}).get("reason") or "no ID: no verdict"
