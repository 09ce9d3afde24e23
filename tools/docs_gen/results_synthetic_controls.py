"""Generated blocks of docs/results/synthetic-controls.md, from the committed positive-control study
(results/synth-controls: report.json and config.json), through the report's own formatters
(tmcheck.empirics.report.controls)."""

from __future__ import annotations

from docs_gen._common import RESULTS, read

PAGES = ("docs/results/synthetic-controls.md",)
NAME = "synth-controls"


def _report() -> dict | None:
    return read(RESULTS / NAME / "report.json")


def _missing() -> str:
    return f"*(results/{NAME} holds no report yet: run the sweep, then `tmcheck report results/{NAME}`)*"


def made() -> str:
    """How the study was made: its preset, the runs finished of those planned, CPU-hours, how to resume."""
    from tmcheck.empirics.report.controls import resume_command

    rep = _report()
    if rep is None:
        return _missing()
    p = rep["preset"]
    done = "every planned run" if rep["rows"] == rep["planned"] else f"{rep['rows']} of {rep['planned']} planned runs"
    return (
        f"Kind `controls`, preset `{p['name']}`: {done} finished, {rep['cpu_hours']:.2f} CPU-hours of runs "
        f"(the sum of the rows' process time) and {rep['tuning_cpu_hours']:.2f} of tuning. The sweep resumes "
        f"where it stopped: `{resume_command(p['name'], f'results/{NAME}')}`."
    )


def verdicts() -> str:
    from tmcheck.empirics.fit.prediction import rule_words
    from tmcheck.empirics.report.controls import headline, verdict_table

    rep = _report()
    if rep is None:
        return _missing()
    lines = [rule_words(rep["margin"]), "", *[f"- {x}" for x in headline(rep)], "", verdict_table(rep["controls"])]
    return "\n".join(lines)


def tuning() -> str:
    from tmcheck.empirics.report.controls import grids_words, tuning_table

    rep = _report()
    if rep is None:
        return _missing()
    return grids_words(rep["tuning"], rep["preset"]) + "\n\n" + tuning_table(rep["tuning"])


def diagnosis() -> str:
    from tmcheck.empirics.report.controls import diagnosis_lines, diagnosis_table

    rep = _report()
    if rep is None:
        return _missing()
    return "\n".join([diagnosis_table(rep["diagnosis"]), "", *diagnosis_lines(rep)])


GENERATORS = {
    "synth_controls.made": made,
    "synth_controls.verdicts": verdicts,
    "synth_controls.tuning": tuning,
    "synth_controls.diagnosis": diagnosis,
}
