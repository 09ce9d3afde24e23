"""Report of a known-exponent sweep (kind "known"; issue #39, item 2): does the chain tokenizer -> GPT -> fit
-> verdict recover an exponent known by construction, and what could it decide at this design?

Per generated corpus (tmcheck.empirics.data.known): the excess target loss of every run against n, fitted
on the sizes whose runs stopped on their validation loss (tmcheck.empirics.report.common.fit_exponent: runs on
the step cap are left out, no verdict from fewer than 3 converged sizes), and two equivalence tests of the
loglog α̂ (tmcheck.empirics.fit.prediction, margin ±MARGIN): against the known exponent α ("equivalent" is
the right answer) and against α + shift ("differs" is the right answer). The tests go through the
prediction test's α_D = 2β/(2β+d) with β = 1 and the d that gives the exponent, d = 2(1 - α)/α (exact: d is
known, so the interval of α̂ is only shifted).

Power (tmcheck.empirics.fit.coverage): at each corpus's own sizes, seeds and seed noise, how often the rule
calls a true exponent equivalent and a difference of 2 margins differs; and, at the median noise, the
same against seeds and decades (power_table) ending at the largest n.

Against the reference learner (reference_rows): at each fitted size, the GPT's excess beside that of the
generator's rate-optimal learner without a network on as many records (tmcheck.empirics.data.known.
reference_excess: the memoriser for Zipf text, kNN at the theory's k for manifold text), their ratio, and
the reference's own log-log slope over the same sizes beside the fit's α̂ and its windows of 3 sizes. A
ratio that falls with n is a learner approaching the rate from above, whose slope over the window exceeds
the exponent; the reference's slope says whether the window itself shows the exponent.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tmcheck.empirics.fit.prediction import rule_words
from tmcheck.empirics.report.common import MARGIN, Outputs, alpha_cell, capped_words, fit_exponent, prediction_cell
from tmcheck.empirics.sweep import SweepDir, layout

FORM = "loglog"  # the excess has no floor (the Bayes loss is subtracted): a line in log-log
TRUTH, SHIFTED = "truth", "shifted"
POWER_SEEDS = (2, 3, 5, 10)
POWER_DECADES = (1, 2, 3)
LEARNERS = {"zipf": "memoriser (expected)", "manifold": "kNN at the theory's k (k ∝ n to the power 2β/(2β+d))"}
MAX_POWER_REPS = 1000  # simulated sweeps per design (at most; --bootstrap lowers it)


def exponent_test(alpha: float) -> dict:
    """prediction_test's keywords whose α_D is `alpha`: β = 1, d = 2(1 - α)/α."""
    return {"kind": "D", "beta": 1.0, "d": 2 * (1 - alpha) / alpha}


def corpus_entry(corpus: str, rows: list[dict], shift: float, bootstrap: int, seed: int) -> dict:
    """The fit and both tests of one corpus's runs (rows with a positive excess; the others counted)."""
    from tmcheck.empirics.data.known import describe, parse

    g = parse(corpus)
    mine = [r for r in rows if r["corpus"] == corpus]
    kept = [r for r in mine if r["excess"] > 0]
    fit = fit_exponent(
        [r["n"] for r in kept],
        [r["excess"] for r in kept],
        stops=[r.get("stop") for r in kept],
        cap=kept[0]["max_steps"] if kept else None,
        predictions={TRUTH: exponent_test(g.exponent), SHIFTED: exponent_test(g.exponent + shift)},
        bootstrap=bootstrap,
        seed=seed,
    )
    return {
        **describe(g),
        "shift": shift,
        "runs": len(mine),
        "non_positive": len(mine) - len(kept),
        "fit": fit,
        "truth_outcome": outcome(fit, TRUTH),
        "shifted_outcome": outcome(fit, SHIFTED),
        "reference": reference_rows(g, kept, fit, seed),
    }


def reference_rows(g, kept: list[dict], fit: dict, seed: int) -> dict | None:
    """The GPT against the reference learner at each fitted size (module doc); None without a fit."""
    from tmcheck.empirics.data.known import records_in, reference_excess

    rep = fit["exponent"]
    if rep is None:
        return None
    sizes = sorted({int(n) for n in rep["fits"][FORM]["design"]["sizes"]})
    out = []
    for n in sizes:
        gpt = float(np.exp(np.mean([np.log(r["excess"]) for r in kept if r["n"] == n])))  # geometric mean over seeds
        m = records_in(g, n)
        ref = reference_excess(g, m, seed)
        out.append({"n": n, "records": m, "gpt": gpt, "reference": ref, "ratio": gpt / ref})
    x, ref = (np.log([r[k] for r in out]) for k in ("n", "reference"))
    return {"learner": LEARNERS[g.kind], "sizes": out, "reference_slope": -float(np.polyfit(x, ref, 1)[0])}


def outcome(fit: dict, name: str) -> str:
    """ "equivalent", "differs", "undecided" (the rule's outcome on the loglog fit) or "withheld"."""
    rep = fit["exponent"]
    return rep["predictions"][name][FORM]["outcome"] if rep else "withheld"


def corpus_power(entries: list[dict], reps: int) -> dict:
    """verdict_power at each corpus's design and noise; power_table at the median noise (module doc)."""
    from tmcheck.empirics.fit.coverage import Design, power_table, verdict_power

    cells, noises, spans = [], [], []
    for i, e in enumerate(entries):
        rep = e["fit"]["exponent"]
        if rep is None:
            continue
        f = rep["fits"][FORM]
        sigma = f["noise"]["sigma_log"]
        if not sigma > 0:
            continue
        sizes = f["design"]["sizes"]
        law = {"form": FORM, "E": 0.0, "B": f["params"]["B"], "alpha": f["params"]["alpha"]}
        design = Design(tuple(sizes), tuple(f["design"]["seeds_per_size"]))
        cells.append({"corpus": e["corpus"], "noise": sigma, **verdict_power(design, law, sigma, MARGIN, reps, i)})
        noises.append(sigma)
        spans.append((max(sizes), (len(sizes) - 1) / np.log10(max(sizes) / min(sizes))))
    if not cells:
        return {"cells": [], "table": [], "margin": MARGIN, "reps": reps}
    top = max(t for t, _ in spans)
    per_decade = float(np.median([k for _, k in spans]))
    sigma = float(np.median(noises))
    law = {"form": FORM, "E": 0.0, "B": 1.0, "alpha": 0.5}  # the interval's width does not depend on them
    table = power_table(top, per_decade, law, sigma, MARGIN, POWER_SEEDS, POWER_DECADES, reps)
    return {
        "cells": cells,
        "table": table,
        "noise": sigma,
        "top_n": top,
        "per_decade": per_decade,
        "margin": MARGIN,
        "reps": reps,
    }


def build(sweep: SweepDir, bootstrap: int = 1000) -> dict:
    """Fit, test and write the report of a known-exponent sweep (report.md, report.json)."""
    preset = sweep.preset()
    rows = sweep.rows()
    if not rows:
        raise ValueError(f"{sweep.path} has no finished runs yet (results.jsonl is empty); run the sweep first")
    corpora = sweep.read_config()["corpora"]
    entries = [corpus_entry(c, rows, preset.shift, bootstrap, seed=10 * i) for i, c in enumerate(corpora)]
    reps = max(100, min(MAX_POWER_REPS, bootstrap))
    report = {
        "kind": "known",
        "sweep": str(sweep.path),
        "preset": preset.as_dict(),
        "corpora": entries,
        "power": corpus_power(entries, reps),
        "rows": len(rows),
        # process time of each run; rows from before cpu_s was recorded count their training wall time
        "cpu_hours": float(sum(r.get("cpu_s", r["seconds"]) for r in rows)) / 3600,
        "cpu_measured": sum("cpu_s" in r for r in rows),
        "margin": MARGIN,
        "shift": preset.shift,
        "files": [layout.REPORT_MD, layout.REPORT_JSON],
    }
    out = Outputs(sweep.path)
    return out.finish(report, markdown(report))


def verdict_table(report: dict) -> str:
    lines = [
        f"| corpus | known α | runs | α̂ ({FORM}) | α̂ − α | α̂ − (α + {report['shift']:g}) |",
        "|---|---|---|---|---|---|",
    ]
    for e in report["corpora"]:
        f = e["fit"]
        lines.append(
            f"| {e['corpus']} | {e['exponent']:.3f} | {e['runs']} | {alpha_cell(f, FORM)} | "
            f"{prediction_cell(f, FORM, TRUTH) if f['exponent'] else f['withheld']} | "
            f"{prediction_cell(f, FORM, SHIFTED) if f['exponent'] else f['withheld']} |"
        )
    return "\n".join(lines)


def power_lines(power: dict) -> list[str]:
    if not power["cells"]:
        return ["No power analysis: no corpus has a fit with seed noise to simulate at."]
    m = power["margin"]
    lines = [
        f"By simulation ({power['reps']:,} sweeps a design) at each corpus's sizes, seeds and seed noise, read "
        f"through the rule's 90% interval at ±{m:g}:",
        "",
        f"| corpus | seed noise (SD of log excess) | P(equivalent if true) | P(differs at ±{2 * m:g}) | detectable |",
        "|---|---|---|---|---|",
    ]
    for c in power["cells"]:
        lines.append(
            f"| {c['corpus']} | {c['noise']:.3f} | {c['equivalent_if_true']:.2f} | {c['differs_at_2_margins']:.2f} | "
            f"{c['detectable']:.2f} |"
        )
    lines += [
        "",
        f"At the median seed noise {power['noise']:.3f}, designs ending at n = {power['top_n']:,.0f} with "
        f"{power['per_decade']:.1f} sizes a decade:",
        "",
        "| decades | sizes | seeds | P(equivalent if true) | P(differs at ±" + f"{2 * m:g}) | detectable |",
        "|---|---|---|---|---|---|",
    ]
    for r in power["table"]:
        lines.append(
            f"| {r['decades']} | {r['sizes']} | {r['seeds']} | {r['equivalent_if_true']:.2f} | "
            f"{r['differs_at_2_margins']:.2f} | {r['detectable']:.2f} |"
        )
    return lines


def gpt_alpha(entry: dict) -> float:
    """The corpus's fitted α̂ (the loglog fit of its converged runs)."""
    return entry["fit"]["exponent"]["fits"][FORM]["params"]["alpha"]


def reference_lines(report: dict) -> list[str]:
    """The reference section (module doc): per corpus, a sentence and a table over its fitted sizes."""
    lines = [
        "Each fitted size's GPT excess (geometric mean over seeds) beside the excess of the generator's "
        "rate-optimal learner without a network on as many training records (tmcheck.empirics.data.known."
        "reference_excess) and their ratio. The reference's slope is the least-squares log-log slope over the "
        "same sizes, without an interval (the reference is an expectation for Zipf text and one seeded draw for "
        f"manifold text); the GPT's is the fit's α̂ ({FORM}), with its windows of 3 sizes.",
    ]
    for e in report["corpora"]:
        ref = e.get("reference")
        if ref is None:
            continue
        ratios = [r["ratio"] for r in ref["sizes"]]
        trend = "falls" if ratios[-1] < ratios[0] else "rises"
        lines += [
            "",
            f"**{e['kind']} (α = {e['exponent']:.3f})**, against the {ref['learner']}: the reference's slope over "
            f"these sizes is {ref['reference_slope']:.3f}, the GPT's {gpt_alpha(e):.3f} "
            f"({e['fit']['exponent']['range']['words']}); the ratio {trend} from {ratios[0]:.2f} to "
            f"{ratios[-1]:.2f}.",
            "",
            "| n | records | GPT excess | reference excess | ratio |",
            "|---|---|---|---|---|",
        ]
        for r in ref["sizes"]:
            lines.append(
                f"| {r['n']:,} | {r['records']:,} | {r['gpt']:.4g} | {r['reference']:.4g} | {r['ratio']:.2f} |"
            )
    return lines


def headline(report: dict) -> list[str]:
    """One line per corpus: what the chain said against the truth and against the shifted truth."""
    out = []
    for e in report["corpora"]:
        right = e["truth_outcome"] == "equivalent" and e["shifted_outcome"] == "differs"
        out.append(
            f"{e['kind']} (α = {e['exponent']:.3f}): against the truth {e['truth_outcome']}, against the truth + "
            f"{report['shift']:g} {e['shifted_outcome']}"
            + (" — the chain recovers the exponent" if right else "")
            + f"; {capped_words(e['fit'])}"
            + (f"; {e['non_positive']} runs with a non-positive excess left out" if e["non_positive"] else "")
        )
    return out


def markdown(report: dict) -> str:
    p = report["preset"]
    lines = [
        f"# Known-exponent study: preset {p['name']}",
        "",
        "The chain tokenizer → GPT → fit → verdict on corpora whose data-scaling exponent is known by "
        "construction (tmcheck.empirics.data.known). Each run's excess is its log loss on the value tokens of "
        "the test records minus their Bayes loss, in nats a record; α̂ is the log-log slope of the excess in the "
        f"training tokens n. {rule_words(report['margin'])}",
        "",
        *[f"- {h}" for h in headline(report)],
        "",
        verdict_table(report),
        "",
        "## Against the reference learner at the same n",
        "",
        *reference_lines(report),
        "",
        "## Power: what this design could decide",
        "",
        *power_lines(report["power"]),
        "",
        f"{report['rows']} runs, {report['cpu_hours']:.2f} CPU-hours ({report.get('cpu_measured', 0)} of "
        f"{report['rows']} runs with their measured process time, the others their training wall time, on one "
        "thread; a run resumed from a checkpoint counts the process time of its last part only).",
    ]
    return "\n".join(lines) + "\n"


def summary(report: dict) -> str:
    parts = ["\n".join(headline(report)), verdict_table(report)]
    parts.append("written: " + ", ".join(str(Path(report["sweep"]) / f) for f in report["files"]))
    return "\n\n".join(parts)
