"""Generated blocks of docs/results/synthetic-theory.md, from the committed theory-sized study
(results/synth-theory) beside the fixed-size arm (results/synth-decide2), through the synthetic
report's own formatters (tmcheck.empirics.report.common and .synthetic)."""

from __future__ import annotations

from docs_gen._common import RESULTS, cell, read
from docs_gen.results import made, report_body

PAGES = ("docs/results/synthetic-theory.md",)
NAME = "synth-theory"
FIXED = "synth-decide2"  # the fixed-size arm: the same problems and (d, β), one transformer size for every n


def _report(name: str = NAME) -> dict | None:
    return read(RESULTS / name / "report.json")


def _missing() -> str:
    return f"*(results/{NAME} holds no report yet: run the sweep, then `tmcheck report results/{NAME}`)*"


def how_made() -> str:
    """The sweep's runs and training time (as for every committed sweep), its CPU-hours, how to resume."""
    rep = _report()
    if rep is None:
        return _missing()
    return (
        f"{made(NAME)} The report's CPU-hours (the rows' process time): {rep['cpu_hours']:.2f}. The sweep resumes "
        f"where it stopped: `nice -n 10 tmcheck sweep synthetic results/{NAME} --preset cpu-theory --workers 2`."
    )


def arms() -> str:
    """Per (d, β): the transformer's α̂_D and verdict in the theory-sized arm beside the fixed-size arm."""
    from tmcheck.empirics.report.common import alpha_cell, verdict

    theory, fixed = _report(), _report(FIXED)
    if theory is None or fixed is None:
        return _missing()

    def cells(rep: dict) -> dict:
        out = {}
        for e in rep["data_scaling"]:
            if e["method"] == "transformer":
                sizes = f"{e['sizes'][0]:,.0f}–{e['sizes'][-1]:,.0f}" if e["sizes"] else "—"
                out[(e["d"], e["beta"])] = (
                    e["predicted"],
                    sizes,
                    alpha_cell(e, "loglog"),
                    verdict(e, "loglog", "true d"),
                )
        return out

    a, b = cells(theory), cells(fixed)
    rows = [
        "| d | β | α_D = 2β/(2β+d) | theory-sized: n | α̂_D (loglog) | verdict "
        "| fixed size: n | α̂_D (loglog) | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for key in sorted(a):
        pred, n_a, alpha_a, v_a = a[key]
        n_b, alpha_b, v_b = b[key][1:] if key in b else ("—", "—", "—")
        rows.append(
            f"| {key[0]} | {key[1]:g} | {pred:.3f} | {n_a} | {cell(alpha_a)} | {v_a} "
            f"| {n_b} | {cell(alpha_b)} | {v_b} |"
        )
    decided = sum(1 for v in a.values() if not v[3].startswith(("undecided", "withheld")))
    rows += [
        "",
        f"The theory-sized transformer's verdict is decided (equivalent or differs) in {decided} of {len(a)} (d, β).",
    ]
    return "\n".join(rows)


GENERATORS = {
    "synth_theory.made": how_made,
    "synth_theory.arms": arms,
    "synth_theory.report": lambda: report_body(NAME, "../figures/synth-theory"),
}
