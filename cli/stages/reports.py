"""Demo stage: every committed report rebuilt from its committed rows (results/; the paper's Figures
2-4 and the synthetic study), its numbers compared with the committed report.json to 1e-9 and its
figures pixel for pixel, and its verdicts printed (tmcheck.empirics.report.reproduce.rebuild)."""

from __future__ import annotations

from pathlib import Path

from tmcheck.cli.common import console


def verdict_lines(res: dict) -> list[str]:
    """The verdicts of a rebuilt report, one line per curve (computed by the report's own tests)."""
    from tmcheck.empirics.report.common import verdict

    rep = res["report"]
    if rep is None:
        return []
    if rep["kind"] == "pretrain":
        out = []
        for c, e in rep["table"].items():
            out.append(f"{c}: loglog α̂ against 2/(2+d̂): {verdict(e, 'loglog')}; offset law: {verdict(e, 'offset')}")
        return out
    if rep["kind"] == "model":
        return [f"{name}: {v}" for name, v in rep["verdicts"].items()]
    if rep["kind"] == "synthetic":
        from tmcheck.empirics.report.synthetic import summary_lines

        return [line.lstrip("- ") for line in summary_lines(rep["data_scaling"])]
    return []


def stage(out: Path, quick: bool, full: bool = False, results: Path | None = None) -> str | tuple[str, bool]:
    from tmcheck.empirics.report.reproduce import experiments, find_results, rebuild

    root = find_results(results)
    if root is None:
        return "no committed results here (run from a checkout, or pass --results DIR): nothing to rebuild"
    work = Path(out) / "reports"
    exps = experiments(root)
    same = 0
    for exp in exps:
        res = rebuild(exp, work)
        same += res["equal"]
        bad = [f for f, why in res["figures"].items() if why]
        state = (
            "numbers equal to 1e-9, figures identical"
            if res["equal"]
            else f"{len(res['differences'])} numbers differ; figures differing: {', '.join(bad) or 'none'}"
        )
        console.print(f"[bold]{exp.name}[/bold] ({exp.kind}), rebuilt in {work / exp.name}: {state}", highlight=False)
        for line in verdict_lines(res):
            console.print(f"  {line}", highlight=False)
    return f"{same} of {len(exps)} committed reports rebuilt from their rows equal the committed ones", same == len(
        exps
    )
