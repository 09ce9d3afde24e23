"""The fitting guide (docs/guide/fitting.md): the Chinchilla replication and the interval coverage table,
from benchmarks/results/*.json; both filled when the site is built."""

from __future__ import annotations

from collections.abc import Callable

from docs_gen._common import ROOT, load_bench, read

PAGES = ("docs/guide/fitting.md",)


def _when(entry: dict) -> str:
    q = entry.get("quiet") or {}
    if q.get("verdict") == "quiet":
        return f"measured alone (`quiet`, {q.get('date', '')})"
    load = entry.get("load_average")
    return f"not a timing result: measured at load {load[0]:.0f}" if load else "not a timing result"


def _n(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.4g}"


def chinchilla() -> str:
    c = load_bench("fit").get("chinchilla")
    if not c:
        return "*(benchmarks/results/fit.json has no Chinchilla fit yet: run `make bench BENCH=fit`)*"
    t, e, h = c["tmcheck"], c["epoch_published"], c["hoffmann_reported"]
    names = ["E", "A", "B", "alpha", "beta"]
    rows = [
        "| | E | A | B | α | β | log RMSE |",
        "|---|---|---|---|---|---|---|",
        f"| tmcheck (Huber δ = {t['huber_delta']:g}, {c['n_points']} points) | "
        + " | ".join(_n(t["params"][n]) for n in names)
        + f" | {t['rmse_log']:.2g} |",
        f"| its 95% bootstrap interval ({c['bootstrap']} resamples) | "
        + " | ".join(f"[{_n(t['ci'][n][0])}, {_n(t['ci'][n][1])}]" for n in names)
        + " | |",
        "| Epoch AI (SE) | "
        + " | ".join(f"{_n(e['params'][n])} ({_n(e['se'][n])})" for n in names)
        + f" | {e['rmse_log']:.2g} |",
        "| Hoffmann et al. reported | " + " | ".join(_n(h["params"][n]) for n in names) + f" | {h['rmse_log']:.2g} |",
    ]
    within = all(abs(t["params"][n] - e["params"][n]) <= e["se"][n] for n in names)
    rows.append("")
    rows.append(
        f"Every tmcheck estimate is {'within' if within else 'NOT within'} Epoch AI's standard error "
        f"(benchmarks/results/fit.json; {c['seconds_with_bootstrap']:.1f} s with the bootstrap, {_when(c)})."
    )
    return "\n".join(rows)


def rule_size() -> str:
    """The equivalence rule's error rates at the committed studies' designs (results/rule-size.json), one
    row per study, form and margin: the worst wrong-call rates at the margin's edge and the median power."""
    import math
    import statistics

    doc = read(ROOT / "results" / "rule-size.json")
    if not doc:
        return "*(results/rule-size.json is missing: run `python tools/rule_size.py`)*"
    a, reps = doc["nominal"], doc["reps"]
    over = a + 2 * math.sqrt(a * (1 - a) / reps)  # beyond 2 Monte Carlo SDs of the nominal level
    head = "| study | form | margin | fits | 'equivalent' at the edge | 'differs' at the edge | over nominal | power |"
    lines = [head, "|---|---|---|---|---|---|---|---|"]
    for study, rows in doc["studies"].items():
        for form, m in ((f, m) for f in ("loglog", "offset") for m in doc["margins"]):
            rates = [r[f"{m:g}"] for r in rows if r["cell"].endswith(" " + form)]
            if rates:
                worst = [max(x[k] for x in rates) for k in ("equivalent_at_edge", "differs_at_edge")]
                bad = sum(max(x["equivalent_at_edge"], x["differs_at_edge"]) > over for x in rates)
                power = statistics.median(x["equivalent_at_zero"] for x in rates)
                cells = [study, form, f"±{m:g}", len(rates), f"{worst[0]:.1%}", f"{worst[1]:.1%}", bad, f"{power:.1%}"]
                lines.append("| " + " | ".join(map(str, cells)) + " |")
    return "\n".join(lines) + (
        f"\n\nThe worst rate over a study's fits of each wrong call at a true difference of exactly ±δ "
        f"(nominal {a:.0%}; a fit is over nominal above {over:.1%}, beyond Monte Carlo error), and the median power "
        f"to call an exact prediction 'equivalent'; {reps:,} simulated sweeps a fit, {doc['cpu_seconds']:.0f} CPU s "
        "in all (`python tools/rule_size.py`).\n"
    )


def coverage_table() -> str:
    cov = load_bench("coverage")
    if not cov.get("cases"):
        return "*(benchmarks/results/coverage.json is missing: `make bench BENCH=coverage`)*"
    groups: dict[tuple, list] = {}
    for case in cov["cases"]:
        groups.setdefault((case["design"], case["law"]["form"]), []).append(case)
    rows = [
        "| design | sizes × seeds | form | cases | profile | parametric | cluster | chosen (worst coverage) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (design, form), cases in groups.items():

        def span(method, cases=cases):
            v = [c["coverage"][method]["coverage"] for c in cases if method in c["coverage"]]
            return f"{min(v):.1%}–{max(v):.1%}" if v else "–"

        chosen = {}
        for c in cases:
            chosen[c["chosen"]["method"]] = chosen.get(c["chosen"]["method"], 0) + 1
        worst = min(c["chosen"]["coverage"] for c in cases)
        rows.append(
            f"| {design} | {len(cases[0]['sizes'])} × {cases[0]['seeds']} | {form} | {len(cases)} | "
            f"{span('profile')} | {span('parametric')} | {span('cluster')} | "
            + ", ".join(f"{m} ×{n}" for m, n in chosen.items())
            + f" ({worst:.1%}) |"
        )
    rows.append("")
    rows.append(
        f"Nominal {cov['nominal']:.0%} intervals, target {cov['target']:.0%}; worst chosen coverage "
        f"{cov['worst_chosen_coverage']:.1%} (benchmarks/results/coverage.json)."
    )
    return "\n".join(rows)


# benchmark numbers (benchmarks/results/*.json): filled when the site is built, never committed
AT_BUILD = {"chinchilla", "fit_coverage"}

GENERATORS: dict[str, Callable[[], str]] = {
    "chinchilla": chinchilla,
    "fit_coverage": coverage_table,
    "fit_rule_size": rule_size,
}
