"""Generated blocks of docs/results/synthetic-theory.md, from the committed theory-sized studies
(results/synth-theory at d in {1, 2}; results/synth-theory-d4 at d = 4, beta = 1 once it is committed) beside the
fixed-size arm (results/synth-decide2), through the synthetic report's own formatters
(tmcheck.empirics.report.common and .synthetic)."""

from __future__ import annotations

from docs_gen._common import RESULTS, cell, read
from docs_gen.results import made, report_body

PAGES = ("docs/results/synthetic-theory.md",)
NAME = "synth-theory"
D4 = "synth-theory-d4"  # the same rules at d = 4, beta = 1 (preset cpu-theory-d4): #38 cuts d = 4 to beta = 1
PRESETS = {NAME: "cpu-theory", D4: "cpu-theory-d4"}
FIXED = "synth-decide2"  # the fixed-size arm: the same problems and (d, β), one transformer size for every n


def _report(name: str = NAME) -> dict | None:
    return read(RESULTS / name / "report.json")


def _missing() -> str:
    return f"*(results/{NAME} holds no report yet: run the sweep, then `tmcheck report results/{NAME}`)*"


def how_made() -> str:
    """Each study's runs and training time (as for every committed sweep), its CPU-hours, how to resume."""
    if _report() is None:
        return _missing()
    parts = []
    for name, preset in PRESETS.items():
        rep = _report(name)
        if rep is None:
            parts.append(
                f"The d = 4, β = 1 cell (preset `{preset}`) is not yet a committed result: it trains in "
                f"`sweeps/{name}` (sweeps/README.md says how to resume it)."
            )
            continue
        parts.append(
            f"{made(name)} The report's CPU-hours (the rows' process time): {rep['cpu_hours']:.2f}. The sweep "
            f"resumes where it stopped: `nice -n 10 tmcheck sweep synthetic results/{name} --preset {preset} "
            "--workers 2`."
        )
    return "\n\n".join(parts)


def _top_window(entry: dict) -> str:
    """Where a loglog verdict is window-dependent, the top window it was given on and the difference it judged
    there, with its 95% interval (the table's α̂ is the whole range's)."""
    pred = ((entry.get("exponent") or {}).get("prediction") or {}).get("loglog") or {}
    if not pred.get("window_dependent") or "difference" not in pred:
        return ""
    lo, hi = pred["window"][0], pred["window"][-1]
    ci = pred["difference_ci"]
    return f"; on n {lo:,.0f}–{hi:,.0f}: α̂ − α_D = {pred['difference']:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]"


def arms() -> str:
    """Per (d, β): the transformer's α̂_D and verdict in the theory-sized arm beside the fixed-size arm."""
    from tmcheck.empirics.report.common import alpha_cell, verdict

    theory, fixed = [r for r in (_report(), _report(D4)) if r is not None], _report(FIXED)
    if _report() is None or fixed is None:
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
                    verdict(e, "loglog", "true d") + _top_window(e),
                )
        return out

    a, b = {k: v for rep in theory for k, v in cells(rep).items()}, cells(fixed)
    rows = [
        "| d | β | α_D = 2β/(2β+d) | theory-sized: n | α̂_D (loglog, all sizes) | verdict "
        "| fixed size: n | α̂_D (loglog, all sizes) | verdict |",
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
    "synth_theory.report_d4": lambda: (
        report_body(D4, "../figures/synth-theory-d4")
        if _report(D4) is not None
        else f"*(results/{D4} is not committed yet: its sweep trains in sweeps/{D4})*"
    ),
}
