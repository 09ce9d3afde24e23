"""The results pages (docs/results/*.md) and the committed experiments' READMEs (results/*/README.md):
each reads results/<name>/report.json, rows or rerun files; nothing here holds a number of its own."""

from __future__ import annotations

import json
from collections.abc import Callable

from docs_gen._common import RESULTS, cell, read, timings

PAGES = (
    "docs/results/index.md",
    "docs/results/pretrain.md",
    "docs/results/model.md",
    "docs/results/ablate.md",
    "docs/results/synthetic.md",
    "docs/results/synthetic-decide.md",
    "docs/results/synthetic-decide2.md",
    "docs/results/reproduce.md",
    "results/pretrain/README.md",
    "results/model/README.md",
    "results/synth/README.md",
    "results/ablate/README.md",
)


EXPERIMENTS = {
    # name: (page, title, what the paper measures there)
    "pretrain": ("results/pretrain.md", "Figure 2: data scaling", "α̂_D of GPTs on three corpora against 2/(2+d̂)"),
    "model": ("results/model.md", "Figure 3: model scaling", "α̂_N against 2β/d̂ and the ID-free α̂_D/(1 − α̂_D)"),
    "ablate": ("results/ablate.md", "Figure 4: ID ablations", "d̂ against parameters, width, layer and position"),
    "synth": ("results/synthetic.md", "The synthetic study", "α̂_D against 2β/(2β+d) where d and β are known"),
    "synth-decide": (
        "results/synthetic-decide.md",
        "The synthetic study, two decades of n",
        "α̂_D against 2β/(2β+d) (tuned transformer, n 100 to 10,000, 5 seeds) and α̂_N against 2β/d",
    ),
    "synth-decide2": (
        "results/synthetic-decide2.md",
        "The synthetic study, d = 4 past the trivial regime",
        "as above, with d = 4 on n 1000 to 100,000, where the transformer leaves the trivial regime",
    ),
    "synth-theory": (
        "results/synthetic-theory.md",
        "The synthetic study, the transformer sized as the theorem sizes it",
        "α̂_D against 2β/(2β+d) with each n's own transformer (its size N growing as n to the power d/(2β+d), "
        "a budget ∝ n), d ∈ {1, 2}, n 1,000 to 100,000, 3 seeds",
    ),
    "synth-theory-d4": (
        "results/synthetic-theory.md",
        "The synthetic study, the theory-sized transformer at d = 4",
        "as above at d = 4, β = 1 (issue #38 cuts d = 4 to β = 1), n 1,000 to 100,000, 3 seeds",
    ),
    "synth-controls": (
        "results/synthetic-controls.md",
        "Positive controls: methods with a proven rate",
        "kNN (k from the theory, k by validation) and kernel ridge recover 2β/(2β+d)? n up to 10⁶, 5 seeds",
    ),
}


def _report(name: str) -> dict:
    rep = read(RESULTS / name / "report.json")
    if rep is None:
        raise FileNotFoundError(2, "no committed report", str(RESULTS / name / "report.json"))
    return rep


def report_body(name: str, figures: str) -> str:
    """The committed report.md of results/<name> without its title, headings one level down, figure
    links pointing at `figures` (where the page finds results/<name>/)."""
    lines = (RESULTS / name / "report.md").read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines[1:] if lines and lines[0].startswith("# ") else lines:
        if line.startswith("#"):
            line = "#" + line
        out.append(line.replace("](fig_", f"]({figures}/fig_"))
    return "\n".join(out).strip("\n")


def _verdict_counts(verdicts: list[str]) -> str:
    from tmcheck.empirics.fit.prediction import verdict_class

    counts: dict[str, int] = {}
    for v in map(verdict_class, verdicts):
        counts[v] = counts.get(v, 0) + 1
    return ", ".join(f"{v} in {k}" for v, k in sorted(counts.items()))


def _pretrain_cells() -> list[str]:
    from tmcheck.empirics.report.common import prediction_of

    rep = _report("pretrain")
    out = []
    for c, e in rep["table"].items():
        t = prediction_of(e, "loglog")
        if e["exponent"] is None or t is None:
            why = ((e.get("id") or {}).get("validation") or {}).get("reason") or e.get("withheld") or "withheld"
            out.append(f"{c}: {why}")
            continue
        f = e["exponent"]["fits"]["loglog"]
        out.append(
            f"{c}: α̂_D = {f['alpha']:.3f} against α_D = {t['alpha_pred']:.3f}, difference "
            f"{t['difference']:+.3f} [{t['difference_ci'][0]:+.3f}, {t['difference_ci'][1]:+.3f}]: {t['verdict']}"
        )
    return out


def _model_cells() -> list[str]:
    rep = _report("model")
    f, t = rep["alpha_N"]["fits"]["loglog"], (rep["alpha_N"]["prediction"] or {}).get("loglog")
    against = f"against 2β/d̂ = {t['alpha_pred']:.3f}" if t else "against 2β/d̂"  # no test: no d̂ to compare
    return [
        f"α̂_N = {f['alpha']:.3f} [{f['interval']['lo']:.3f}, {f['interval']['hi']:.3f}] {against}: "
        f"{rep['verdicts']['2beta/d-hat']}",
        f"against the ID-free α̂_D/(1 − α̂_D): {rep['verdicts']['ID-free from alpha-hat_D']}",
    ]


def _synth_cells(name: str = "synth") -> list[str]:
    from tmcheck.empirics.report.common import verdict

    rep = _report(name)
    out = []
    for method, label in (("transformer", "transformer"), ("knn", "kNN"), ("krr", "kernel ridge")):
        sel = [e for e in rep["data_scaling"] if e["method"] == method]
        if sel:
            counts = _verdict_counts([verdict(e, "loglog", "true d") for e in sel])
            out.append(f"{label}, over {len(sel)} (d, β): {counts}")
    versus = rep.get("against_baselines") or []
    cases = {(e["d"], e["beta"]) for e in versus}
    if cases:
        below = {c for c in cases if all(e["below_trivial"] for e in versus if (e["d"], e["beta"]) == c)}
        out.append(f"transformer below the trivial predictor at every n in {len(below)} of {len(cases)} (d, β)")
    model = rep.get("model_scaling") or []
    if model:
        counts = _verdict_counts([verdict(e, "loglog", "true d") for e in model])
        out.append(f"α̂_N (transformer), over {len(model)} (d, β): {counts}")
    return out


def _controls_cells() -> list[str]:
    """Per control method: its top-window verdicts over the (d, β) cells, and the study's CPU-hours."""
    rep = _report("synth-controls")
    out = []
    for method in dict.fromkeys(e["method"] for e in rep["controls"]):
        sel = [e for e in rep["controls"] if e["method"] == method]
        out.append(
            f"{method} (top window), over {len(sel)} (d, β): {_verdict_counts([e['top']['verdict'] for e in sel])}"
        )
    done = f"{rep['rows']} of {rep['planned']} runs" if rep["rows"] < rep["planned"] else f"{rep['rows']} runs"
    out.append(f"{done}, {rep['cpu_hours'] + rep['tuning_cpu_hours']:.2f} CPU-hours")
    return out


def _ablate_cells() -> list[str]:
    out = []
    for name in ("suite", "minilm"):
        res = read(RESULTS / "ablate" / name / "ablate.json")
        if res is None:
            continue
        shown = [p for p in ("params", "width", "layer", "position") if p in res["panels"]]
        split = [p for p in shown if not res["panels"][p]["trend"]["agree"]]
        line = f"{res['source']}: d̂ against " + ", ".join(shown) + f" ({', '.join(res['options']['estimators'])})"
        out.append(line + (f"; the trend's sign depends on the estimator for {', '.join(split)}" if split else ""))
    return out


def headline(link_prefix: str) -> str:
    """The headline results: one row per committed experiment, each cell computed from its report."""
    cells = {
        "pretrain": _pretrain_cells,
        "model": _model_cells,
        "synth": _synth_cells,
        "synth-decide": lambda: _synth_cells("synth-decide"),
        "synth-decide2": lambda: _synth_cells("synth-decide2"),
        "synth-theory": lambda: _synth_cells("synth-theory"),
        "synth-theory-d4": lambda: _synth_cells("synth-theory-d4"),
        "synth-controls": _controls_cells,
        "ablate": _ablate_cells,
    }
    rows = [
        "| experiment | what is tested | result (95% intervals; verdicts of the prediction test) |",
        "|---|---|---|",
    ]
    for name, (page, title, what) in EXPERIMENTS.items():
        target = f"{link_prefix}{page}"
        rows.append(f"| [{title}]({target}) | {cell(what)} | {cell('; '.join(cells[name]()))} |")
    return "\n".join(rows)


def ablate_tables() -> str:
    """Per ablation result: each panel's estimates (d̂ [95%] per estimator), and its trend (the slope of d̂
    against x with its interval, per estimator, and whether its sign depends on the estimator: ablation.trend)."""
    from tmcheck.empirics.report.ablation import TITLES, verdict

    parts = []
    for name in ("suite", "minilm"):
        res = read(RESULTS / "ablate" / name / "ablate.json")
        if res is None:
            continue
        names = res["options"]["estimators"]
        parts += [
            f"### {res['source']}",
            "",
            f"![ID ablations: {res['source']}](../figures/ablate/{name}/fig_ablate.png)",
            "",
        ]
        for panel in ("params", "width", "layer", "position"):
            data = res["panels"].get(panel)
            if data is None:
                parts += [f"**{panel}**: not measured (one model, or too few points per bin).", ""]
                continue
            head = "| x | " + " | ".join(f"{n} d̂ [95%]" for n in names) + " |"
            rows = [head, "|---" * (len(names) + 1) + "|"]
            for p in data["points"]:
                x = f"{p['positions'][0]}–{p['positions'][1] - 1}" if "positions" in p else f"{p['x']:,.0f}"
                cells = []
                for n in names:
                    e = p["estimates"][n]
                    cells.append("refused" if e["d"] is None else f"{e['d']:.2f} [{e['ci'][0]:.2f}, {e['ci'][1]:.2f}]")
                rows.append(f"| {x} | " + " | ".join(cells) + " |")
            tr = data["trend"]
            per = "per decade of x" if TITLES[panel][2] else "per layer"
            slopes = "; ".join(
                f"{n} {e['slope']:+.2f} [{e['ci'][0]:+.2f}, {e['ci'][1]:+.2f}]"
                if e["ci"]
                else f"{n} {'no slope' if e['slope'] is None else format(e['slope'], '+.2f')}"
                for n, e in ((n, tr["estimators"][n]) for n in names)
            )
            parts += [f"**{panel}** ({data['n_points']} points per estimate)", "", *rows, ""]
            parts += [f"Trend, slope of d̂ {per} with its 95% interval: {slopes}. **{verdict(tr).capitalize()}.**", ""]
    return "\n".join(parts)


def d4_small_n() -> str:
    """synth-decide's d = 4 rows below n = 1000 (transformer, trivial predictor, baselines): why
    synth-decide2 starts d = 4 at n = 1000."""
    from tmcheck.empirics.report.synthetic import versus_lines, versus_table

    rows = [e for e in _report("synth-decide")["against_baselines"] if e["d"] == 4 and e["n"] < 1000]
    return versus_table(rows) + "\n\n" + "\n".join(x for x in versus_lines(rows) if "trivial" in x)


def made(name: str) -> str:
    """How a committed sweep was made: its kind, preset, runs, and the training time its rows record."""
    cfg = read(RESULTS / name / "config.json")
    rows = [json.loads(x) for x in (RESULTS / name / "results.jsonl").read_text().splitlines() if x.strip()]
    secs = sum(float(r.get("seconds", r.get("wall_s", 0.0))) for r in rows)
    walls = sum(float(r.get("wall_s", r.get("seconds", 0.0))) for r in rows)
    preset = cfg["preset"].get("name")
    line = (
        f"Kind `{cfg.get('kind', 'pretrain')}`, preset `{preset}`: {len(rows)} runs, "
        f"{secs / 60:.1f} minutes of training recorded in their rows"
    )
    if walls != secs:
        line += f" ({walls / 60:.1f} minutes of wall time per run, summed)"
    reused = [r for r in rows if (RESULTS / name / "runs" / str(r.get("run")) / "reused.json").exists()]
    if reused:
        sources = sorted({read(RESULTS / name / "runs" / r["run"] / "reused.json")["from"] for r in reused})
        took = sum(float(r.get("wall_s", r.get("seconds", 0.0))) for r in reused)
        line += (
            f". {len(reused)} of the runs were taken from {', '.join(f'`{x}`' for x in sources)} (`--reuse`: same "
            f"spec, same settings of their (d, β)), {took / 60:.1f} minutes of them; the other "
            f"{len(rows) - len(reused)} trained here, {(walls - took) / 60:.1f} minutes"
        )
    return line + "."


def ablate_weights() -> str:
    """The suite's kept models (results/ablate/suite/models): how many, their size on disk, their training time
    as results/model's rows record it, and their test losses against those rows."""
    from tmcheck.empirics.report.ablation import RERUN_RTOL, SUITE, SUITE_DIR

    rows = {
        r["run"]: r
        for r in (json.loads(x) for x in (RESULTS / "model" / "results.jsonl").read_text().splitlines() if x.strip())
    }
    suite_dir = RESULTS / "ablate" / "suite" / SUITE_DIR
    suite = read(suite_dir / SUITE)
    full = [r for r in rows.values() if r.get("full_split")]
    secs = sum(float(r["seconds"]) for r in full)
    line = (
        f"The {len(full)} models are the full-n runs of `results/model/`; their rows record "
        f"{secs / 60:.1f} minutes of training (one thread each)."
    )
    if suite is None:
        return line + " Their weights are not kept."
    size = sum(f.stat().st_size for f in suite_dir.iterdir() if f.is_file())
    rel = [abs(m["test_loss"] - rows[m["name"]]["test_loss"]) / rows[m["name"]]["test_loss"] for m in suite["models"]]
    same = sum(m["steps"] == rows[m["name"]]["steps"] for m in suite["models"])
    exact = sum(r == 0 for r in rel)
    worst = max(range(len(rel)), key=lambda i: rel[i])
    has = "has" if exact == 1 else "have"
    tol = f"{RERUN_RTOL:.0e}".replace("e-0", "e-")
    return line + (
        f" Their weights are kept in `results/ablate/suite/{SUITE_DIR}/` ({len(suite['models'])} models and "
        f"{suite['docs']} test documents, {size / 1e6:.1f} MB): each run was trained again from "
        f"`results/model/config.json` with its seed and one thread. Of the {len(rel)} runs, {same} stopped at the "
        f"committed step and {exact} {has} a bit-identical test loss; the largest relative difference of a test "
        f"loss from its committed row is {rel[worst]:.1e} ({suite['models'][worst]['name']}). `make results` "
        f"runs the ablation again from the kept models and compares every number with `ablate.json` to a "
        f"relative {tol}."
    )


def rerun_table() -> str:
    """The pretraining re-run against the original rows (results/pretrain/rerun.json)."""
    doc = read(RESULTS / "pretrain" / "rerun.json")
    if doc is None:
        return "No re-run is recorded."
    runs = doc["runs"]
    rel = [abs(r["test_loss"] - r["original_test_loss"]) / r["original_test_loss"] for r in runs]
    same = sum(r["steps"] == r["original_steps"] for r in runs)
    exact = sum(r["test_loss"] == r["original_test_loss"] for r in runs)
    worst = max(range(len(runs)), key=lambda i: rel[i])
    lines = [
        f"Re-run on {doc['rerun']['cpu']} (torch {doc['rerun']['torch']}, {doc['rerun']['date']}); the original "
        f"rows were made on {doc['original']['cpu']}. Of {len(runs)} runs, {same} stopped at the same step as the "
        f"original, {exact} have a bit-identical test loss, and the largest relative difference of a test loss "
        f"is {rel[worst]:.1e} ({runs[worst]['run']}).",
        "",
        "| corpus | d̂ original | d̂ re-run | loglog α̂ original | loglog α̂ re-run |",
        "|---|---|---|---|---|",
    ]
    rep = _report("pretrain")
    for c, e in rep["table"].items():
        o, i = doc["original_report"].get(c, {}), doc["id"].get(c, {})
        new = e["exponent"]["fits"]["loglog"]["alpha"] if e["exponent"] else float("nan")
        lines.append(
            f"| {c} | {i.get('original_d', float('nan')):.3f} | {i.get('d', float('nan')):.3f} | "
            f"{o.get('loglog', float('nan')):.3f} | {new:.3f} |"
        )
    return "\n".join(lines)


GENERATORS: dict[str, Callable[[], str]] = {
    "results.headline": lambda: headline("../"),
    "results.pretrain": lambda: report_body("pretrain", "../figures/pretrain"),
    "results.model": lambda: report_body("model", "../figures/model"),
    "results.synth": lambda: report_body("synth", "../figures/synth"),
    "results.synth-decide": lambda: report_body("synth-decide", "../figures/synth-decide"),
    "results.synth-decide2": lambda: report_body("synth-decide2", "../figures/synth-decide2"),
    "results.synth-decide.d4-small": d4_small_n,
    "results.ablate": ablate_tables,
    "results.rerun": rerun_table,
    "results.ablate-weights": ablate_weights,
    "results.timings": timings,
    **{
        f"results.made.{n}": (lambda n=n: made(n))
        for n in ("pretrain", "model", "synth", "synth-decide", "synth-decide2")
    },
}
