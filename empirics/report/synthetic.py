"""The report of a synthetic sweep (kind "synthetic"): predicted against observed exponents where d
and β are known.

For each (d, β, method) of the data-scaling sweep, the one exponent fit (report.common.fit_exponent ->
tmcheck.empirics.fit.exponent_report) of test MSE against n on the sizes whose runs converged: the
paper's log-log line and the offset law E + B n^-α, each with the interval whose coverage was
measured at this sweep's design, the fit-range sensitivity and the curvature test; and the prediction
α_D = 2β/(2β+d) as a test, from the true d and from the d̂ that our ID estimator (Levina-Bickel MLE,
K = 20) gives on the same x with its bootstrap interval, cached in id.json with the protocol that
made it. The model-scaling sweep gives α̂_N against 2β/d the same way, with the number of trained
parameters N as the size.

Writes report.md, report.json, fig_alpha.png (α̂_D with intervals against d, predicted curves),
fig_loss.png (test MSE against n, log-log, per d and β, the transformer's offset law with its 95%
band) and, with a model sweep, fig_model.png.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from tmcheck.empirics.fit.plot import legend_outside
from tmcheck.empirics.fit.prediction import rule_words, verdict_class
from tmcheck.empirics.report import common
from tmcheck.empirics.report.common import LEVEL, MARGIN, Outputs
from tmcheck.empirics.sweep import SweepDir, layout
from tmcheck.empirics.synthetic.decompose import attribution, decomposition
from tmcheck.theory.bounds import alpha_D, alpha_N

METHOD_STYLE = {
    "transformer": ("tab:blue", "o", "transformer (paper's, ReLU attention)"),
    "knn": ("tab:orange", "s", "kNN regression"),
    "krr": ("tab:green", "^", "kernel ridge regression"),
}
BETA_STYLE = {1.0: "-", 0.5: "--"}


ID_ESTIMATOR, ID_K, ID_BOOTSTRAP = "mle", 20, 100


def estimated_dimensions(sweep: SweepDir, preset) -> list[dict]:
    """The ID estimate of tmcheck.empirics.id on the same x as the largest data-scaling runs, per d,
    through id.json (recomputed only when the protocol changes).

    This closes the paper's loop: α_D predicted from the estimated d rather than the true one.
    """
    from tmcheck.empirics.id import estimate_id
    from tmcheck.empirics.sweep.synthetic import problem
    from tmcheck.empirics.synthetic.problem import Experiment

    out = []
    for d in preset.dims:
        at = preset.at(d, preset.betas[0])  # the (d, β)'s own grid, where its tuned entry has one
        prob = problem(at, d, preset.betas[0], at.noise)
        n = max(at.ns)
        k = min(ID_K, n - 1)
        protocol = {
            "problem": prob.as_dict(),
            "n": n,
            "pool_seed": preset.seeds[0],
            "estimator": ID_ESTIMATOR,
            "k": k,
            "protocol": "full",
            "bootstrap": ID_BOOTSTRAP,
            "seed": 0,
        }

        def compute(prob=prob, n=n, k=k, d=d) -> dict:
            X, _ = Experiment(prob).pool(n, preset.seeds[0])
            r = estimate_id(
                X, estimator=ID_ESTIMATOR, k=k, protocol="full", bootstrap=ID_BOOTSTRAP, device=preset.device, seed=0
            )
            return {
                "d": d,
                "estimator": ID_ESTIMATOR,
                "k": r.k,
                "n": len(X),
                "dimension": float(r.dimension),
                "ci": [float(v) for v in r.ci] if r.ci is not None else None,
            }

        out.append(common.cached_id(sweep.id_path, f"synthetic-d{d}", protocol, compute))
    return out


def trivial_mses(preset, rows: list[dict]) -> dict[tuple, float]:
    """The trivial predictor's test MSE (the training mean of y, against f on the test set) of every
    data-scaling split of the rows, keyed by (d, β, n, seed): the split each run trained on, drawn again
    (Experiment.split, as tmcheck.empirics.sweep.synthetic.run draws it)."""
    from tmcheck.empirics.synthetic.problem import Experiment

    out = {}
    keys = sorted({(r["d"], r["beta"], r["n"], r["seed"]) for r in rows if r["sweep"] == "data"})
    for d, beta in sorted({k[:2] for k in keys}):
        p = preset.at(d, beta)
        exp = Experiment(p.problem(d, beta, p.noise))
        for _, _, n, seed in (k for k in keys if k[:2] == (d, beta)):
            split = exp.split(n, max(p.ns), seed, p.n_test, p.val_fraction, p.min_val)
            out[(d, beta, n, seed)] = float(np.mean((split.y_train.mean() - split.f_test) ** 2))
    return out


def against_baselines(rows: list[dict], trivial: dict[tuple, float]) -> list[dict]:
    """Per (d, β, n): each method's mean test MSE over the seeds, the trivial predictor's, the seeds at
    which the transformer is below the trivial predictor, and its ratio to the better baseline."""
    out = []
    data_rows = [r for r in rows if r["sweep"] == "data"]
    for d, beta, n in sorted({(r["d"], r["beta"], r["n"]) for r in data_rows}, key=lambda k: (k[0], -k[1], k[2])):
        sel = [r for r in data_rows if (r["d"], r["beta"], r["n"]) == (d, beta, n)]
        mean = {
            m: float(np.mean([r["test_mse"] for r in sel if r["method"] == m]))
            for m in METHOD_STYLE
            if any(r["method"] == m for r in sel)
        }
        if "transformer" not in mean:
            continue
        seeds = sorted({r["seed"] for r in sel if r["method"] == "transformer"})
        triv = float(np.mean([trivial[(d, beta, n, s)] for s in seeds]))
        below = sum(r["test_mse"] < trivial[(d, beta, n, r["seed"])] for r in sel if r["method"] == "transformer")
        baselines = [mean[m] for m in ("knn", "krr") if m in mean]
        out.append(
            {
                "d": d,
                "beta": beta,
                "n": n,
                "seeds": len(seeds),
                "mse": mean,
                "trivial": triv,
                "below_trivial": mean["transformer"] < triv,
                "seeds_below_trivial": int(below),
                "ratio_to_better_baseline": mean["transformer"] / min(baselines) if baselines else None,
            }
        )
    return out


def _fit(
    sel: list[dict], size: str, kind: str, d: int, beta: float, id_entry: dict | None, bootstrap: int, seed: int
) -> dict:
    """The exponent fit of one curve, tested against the prediction from the true d and from d̂."""
    true = {"kind": kind, "beta": beta, "d": d}
    named = {"true d": true}
    if id_entry is not None and id_entry.get("ci"):
        named["d-hat"] = {"kind": kind, "beta": beta, "d_hat": id_entry["dimension"], "d_ci": id_entry["ci"]}
    # baselines have no training budget: no stop reason (None), nothing is left out
    return common.fit_exponent(
        [r[size] for r in sel],
        [r["test_mse"] for r in sel],
        stops=[r.get("stop") for r in sel],
        cap=max((r.get("max_steps", 0) for r in sel), default=None) or None,
        prediction=true,
        predictions=named,
        bootstrap=bootstrap,
        seed=seed,
    )


def build_tables(rows: list[dict], ids: list[dict], bootstrap: int) -> tuple[list[dict], list[dict]]:
    """The data-scaling table (one entry per d, β, method) and the model-scaling table (per d, β)."""
    id_of = {e["d"]: e for e in ids}
    data, model = [], []
    data_rows = [r for r in rows if r["sweep"] == "data"]
    for d in sorted({r["d"] for r in data_rows}):
        for beta in sorted({r["beta"] for r in data_rows}, reverse=True):
            for method in METHOD_STYLE:
                sel = [r for r in data_rows if (r["d"], r["beta"], r["method"]) == (d, beta, method)]
                if len({r["n"] for r in sel}) < 2:
                    continue
                fit = _fit(sel, "n", "D", d, beta, id_of.get(d), bootstrap, len(data))
                entry = {
                    "d": d,
                    "beta": beta,
                    "method": method,
                    "predicted": alpha_D(d, beta),
                    **fit,
                    "seeds": len({r["seed"] for r in sel}),
                }
                if d in id_of:
                    entry["d_hat"], entry["d_hat_ci"] = id_of[d]["dimension"], id_of[d]["ci"]
                data.append(entry)
    model_rows = [r for r in rows if r["sweep"] == "model"]
    for d in sorted({r["d"] for r in model_rows}):
        for beta in sorted({r["beta"] for r in model_rows}, reverse=True):
            sel = [r for r in model_rows if (r["d"], r["beta"]) == (d, beta)]
            if len({r["params"] for r in sel}) < 2:
                continue
            fit = _fit(sel, "params", "N", d, beta, id_of.get(d), bootstrap, 100 + len(model))
            model.append({"d": d, "beta": beta, "predicted": alpha_N(d, beta), **fit})
    return data, model


FIGURES = ("fig_alpha.png", "fig_loss.png", "fig_model.png")
SLOPES = "fig_slopes.png"  # the local slope against n, per (d, β), with the prediction's ±margin band


def build(sweep: SweepDir, bootstrap: int = 1000) -> dict:
    """Fit, draw and write the report of a synthetic sweep directory; returns the report dict. Every
    figure is drawn before the first file is written (a failure leaves the old outputs as they were)."""
    preset = sweep.preset()
    rows = sweep.rows()
    if not rows:
        raise ValueError(f"{sweep.path} has no finished runs yet (results.jsonl is empty); run the sweep first")
    ids = estimated_dimensions(sweep, preset)
    data, model = build_tables(rows, ids, bootstrap)
    versus = against_baselines(rows, trivial_mses(preset, rows))
    figures = [*(FIGURES if model else FIGURES[:2]), SLOPES]
    power = study_power(data)
    report = {
        "decomposition": decomposition(preset, rows),
        "kind": "synthetic",
        "sweep": str(sweep.path),
        "preset": preset.as_dict(),
        "data_scaling": data,
        "model_scaling": model,
        "against_baselines": versus,
        "power": power,
        "id_estimates": ids,
        "rows": len(rows),
        "stops": {
            st: sum(r.get("stop") == st for r in rows if r["method"] == "transformer") for st in ("patience", "cap")
        },
        "transformer_seconds": float(sum(r.get("seconds", 0.0) for r in rows)),
        "wall_seconds": float(sum(r["wall_s"] for r in rows)),
        # CPU time of each run (process time, one thread); rows from before cpu_s was recorded count their wall time
        "cpu_hours": float(sum(r.get("cpu_s", r["wall_s"]) for r in rows)) / 3600,
        "cpu_measured": sum("cpu_s" in r for r in rows),
        "files": [layout.REPORT_MD, layout.REPORT_JSON, *figures],
    }
    out = Outputs(sweep.path)
    out.figure(FIGURES[0], draw_alpha(data))
    out.figure(FIGURES[1], draw_loss(rows, data, bootstrap))
    if model:
        out.figure(FIGURES[2], draw_model(rows, model))
    out.figure(SLOPES, draw_slopes(data))
    return out.finish(report, markdown(report))


def summary(report: dict) -> str:
    parts = [
        data_table(report["data_scaling"]),
        "",
        prediction_table(report["data_scaling"]),
        "",
        *summary_lines(report["data_scaling"]),
        *versus_lines(report["against_baselines"]),
    ]
    if report["model_scaling"]:
        parts.append(model_table(report["model_scaling"]))
    parts.append("written: " + ", ".join(str(Path(report["sweep"]) / f) for f in report["files"]))
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------
# figures


def draw_alpha(data: list[dict]):
    """α̂_D with intervals against d, per β, over the predicted curve 2β/(2β+d). Returns the figure."""
    plt = common.pyplot()
    betas = sorted({e["beta"] for e in data}, reverse=True)
    fig, axes = plt.subplots(1, len(betas), figsize=(5.2 * len(betas), 4.2), squeeze=False, sharey=True)
    dims = sorted({e["d"] for e in data})
    grid = np.linspace(0.8, max(dims) * 1.15, 200)
    for ax, beta in zip(axes[0], betas, strict=True):
        ax.plot(grid, [alpha_D(g, beta) for g in grid], "k-", lw=1.5, label="predicted 2β/(2β+d)")
        for i, (method, (color, marker, label)) in enumerate(METHOD_STYLE.items()):
            sel = [e for e in data if e["beta"] == beta and e["method"] == method and e["exponent"]]
            if not sel:
                continue
            x = np.array([e["d"] for e in sel]) * (1 + 0.04 * (i - 1))
            fits = [e["exponent"]["fits"]["loglog"] for e in sel]
            y = np.array([f["alpha"] for f in fits])
            lo = np.array([f["interval"]["lo"] for f in fits])
            hi = np.array([f["interval"]["hi"] for f in fits])
            ax.errorbar(x, y, yerr=[y - lo, hi - y], fmt=marker, color=color, capsize=3, label=f"loglog α̂_D, {label}")
        ax.set_xscale("log", base=2)
        ax.set_xticks(dims, [str(d) for d in dims])
        ax.set_xlabel("intrinsic dimension d (true)")
        ax.set_title(f"data-scaling exponent, β = {beta:g}")
        ax.grid(alpha=0.3)
        ax.axhline(0, color="grey", lw=0.5)
    axes[0][0].set_ylabel("α_D (test MSE ∝ n^-α_D), 95% profile interval")
    fig.tight_layout(rect=(0, common.legend_below(fig, axes.flat, fontsize=8), 1, 1))
    return fig


POWER_REPS = 1000  # simulated sweeps per design of the power analysis


def study_power(data: list[dict], method: str = "transformer") -> dict:
    """What the study could decide (#38 item 6), by simulation at its own designs and noise: per (d, β),
    the method's loglog fit (its alpha, B and seed noise) at the sizes and seeds it ran, through the
    equivalence rule's own intervals (tmcheck.empirics.fit.coverage.verdict_power); and, at the median
    noise of those fits, the same against the number of seeds and decades (power_table) ending at the
    study's largest n with its sizes per decade."""
    from tmcheck.empirics.fit.coverage import Design, power_table, verdict_power

    cells, noises, spans = [], [], []
    for e in sorted((e for e in data if e["method"] == method and e.get("exponent")), key=_key):
        f = e["exponent"]["fits"]["loglog"]
        sigma = f["noise"]["sigma_log"]
        if not sigma > 0:
            continue
        sizes = f["design"]["sizes"]
        law = {"form": "loglog", "E": 0.0, "B": f["params"]["B"], "alpha": f["params"]["alpha"]}
        design = Design(tuple(sizes), tuple(f["design"]["seeds_per_size"]))
        row = verdict_power(design, law, sigma, MARGIN, POWER_REPS, seed=len(cells))
        cells.append({"d": e["d"], "beta": e["beta"], "noise": sigma, "sizes": len(sizes), **row})
        noises.append(sigma)
        spans.append((max(sizes), (len(sizes) - 1) / np.log10(max(sizes) / min(sizes))))
    if not cells:
        return {"cells": [], "table": [], "margin": MARGIN}
    top = max(t for t, _ in spans)
    per_decade = float(np.median([k for _, k in spans]))
    sigma = float(np.median(noises))
    law = {"form": "loglog", "E": 0.0, "B": 1.0, "alpha": 0.5}  # the interval's width does not depend on them
    table = power_table(top, per_decade, law, sigma, MARGIN, reps=POWER_REPS)
    return {"cells": cells, "table": table, "noise": sigma, "top_n": top, "per_decade": per_decade, "margin": MARGIN}


def decomposition_lines(entries: list[dict]) -> list[str]:
    """Where the transformer's error comes from (synthetic.decompose): per (d, β) and size, the Lemma 1
    construction's approximation error, its least-squares fit on the run's data, the transformer, the gap."""
    if not entries:
        return []

    def cell(v: dict) -> str:
        lo, hi = v["ci"]
        return f"{v['mean']:.4f}" + ("" if math.isnan(lo) else f" [{lo:.4f}, {hi:.4f}]")

    lines = [
        "## Where the error comes from (d ∈ {1, 2}): Lemma 1's construction",
        "",
        "tmcheck's Lemma 1 network computes Σ_n f_n φ_n(u) on a grid of N points an axis of the intrinsic "
        "coordinates, linear in the values f_n. At three sizes, each seed's split: *approximation*, the "
        "construction with f_n = f(t_n), the lemma's choice (test MSE against f; the largest error on the test "
        "points is a sampled maximum); *least squares*, the same construction with the f_n fitted to the run's "
        "noisy training labels (convex: the best an exact optimiser reaches with it, approximation plus "
        "estimation error); the *transformer*, AdamW from a random start (the sweep's row); the *optimisation "
        "gap*, transformer minus least squares. N is chosen on the run's validation split. Intervals: Student's "
        "t over seeds at 95%; their coverage is not simulated (each replicate would retrain a transformer). Runs "
        "stopped by their step cap are left out.",
        "",
        "| d | β | n | N (by seed) | approximation | max error (sampled) | least squares | transformer | "
        "optimisation gap | reading |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for e in entries:
        lines.append(
            f"| {e['d']} | {e['beta']:g} | {e['n']:,} | {', '.join(map(str, e['N']))} | {cell(e['approx_mse'])} | "
            f"{e['approx_max']:.3f} | {cell(e['erm_mse'])} | {cell(e['transformer_mse'])} | "
            f"{cell(e['optimisation_gap'])} | {attribution(e)} |"
        )
    return [
        *lines,
        "",
        "Reading: *short of the construction*, the optimiser leaves error that an exact fit of the lemma's "
        "network would not (a plateau there is optimisation, not statistics); *at the construction*, the "
        "transformer does what the construction's least squares does; *better than the construction*, the "
        "trained network beats the piecewise-linear construction, which is then no lower bound.",
        "",
    ]


def power_lines(power: dict) -> list[str]:
    """The power section of the report: per cell at the study's design, then seeds against decades."""
    if not power["cells"]:
        return []
    m = power["margin"]
    lines = [
        "## Power: what this study could decide",
        "",
        f"By simulation ({POWER_REPS:,} sweeps a design) at each transformer cell's own sizes, seeds and seed "
        f"noise, read through the rule's 90% interval at ±{m:g}: how often a true prediction is called "
        f"equivalent, how often a difference of {2 * m:g} is called differs, and the smallest difference "
        "called differs 80% of the time at both signs.",
        "",
        "| d | β | seed noise (SD of log MSE) | sizes | P(equivalent if true) | P(differs at ±"
        f"{2 * m:g}) | detectable difference |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in power["cells"]:
        det = "none up to 1" if not np.isfinite(c["detectable"]) else f"{c['detectable']:.2f}"
        lines.append(
            f"| {c['d']} | {c['beta']:g} | {c['noise']:.3f} | {c['sizes']} | {c['equivalent_if_true']:.0%} | "
            f"{c['differs_at_2_margins']:.0%} | {det} |"
        )
    seeds = sorted({r["seeds"] for r in power["table"]})
    lines += [
        "",
        f"At the median seed noise {power['noise']:.3f}, with designs ending at n = {power['top_n']:,.0f} and "
        f"{power['per_decade']:.1f} sizes a decade: P(equivalent if true) / detectable difference, by seeds a "
        "size (columns) and decades (rows). A window-dependent verdict rests on its top window, 3 sizes over "
        "one decade: the first row is its power.",
        "",
        "| decades | " + " | ".join(f"{s} seeds" for s in seeds) + " |",
        "|---|" + "---|" * len(seeds),
    ]
    for span in sorted({r["decades"] for r in power["table"]}):
        cells = {r["seeds"]: r for r in power["table"] if r["decades"] == span}
        lines.append(
            f"| {span} | "
            + " | ".join(f"{cells[s]['equivalent_if_true']:.0%} / {cells[s]['detectable']:.2f}" for s in seeds)
            + " |"
        )
    return [*lines, ""]


def _windows_of(entry: dict | None) -> list[dict]:
    """The range-sensitivity entries of windows of 3 sizes of one data-scaling entry (none without a fit)."""
    entries = ((entry or {}).get("exponent") or {}).get("range", {}).get("entries", [])
    return [w for w in entries if w["range"].startswith("window")]


def draw_slopes(data: list[dict]):
    """The local slope (loglog α̂ on each window of 3 consecutive sizes, with its 95% interval as a band)
    against the window's middle size, one panel per (d, β), each method a colour, over the prediction
    2β/(2β+d) and its ±margin band (common.draw_local_slopes)."""
    panels: dict = {(e["d"], e["beta"]): [] for e in data}
    for (d, beta), series in panels.items():
        for method, (color, marker, label) in METHOD_STYLE.items():
            e = next((e for e in data if (e["d"], e["beta"], e["method"]) == (d, beta, method)), None)
            wins = _windows_of(e)
            if wins:
                x = [w["sizes"][1] for w in wins]
                series.append(
                    (
                        label,
                        color,
                        marker,
                        x,
                        [w["alpha"] for w in wins],
                        [w["lo"] for w in wins],
                        [w["hi"] for w in wins],
                    )
                )
    return common.draw_local_slopes(
        panels,
        MARGIN,
        "n (middle of a window of 3 sizes)",
        "Local slope on windows of 3 consecutive sizes with its 95% band; grey: 2β/(2β+d) ± the margin",
    )


def _mean_by(rows: list[dict], key: str) -> tuple[np.ndarray, np.ndarray]:
    xs = sorted({r[key] for r in rows})
    return np.array(xs, float), np.array([np.mean([r["test_mse"] for r in rows if r[key] == x]) for x in xs])


def draw_loss(rows: list[dict], data: list[dict], bootstrap: int = 400):
    """Test MSE against n, log-log: one panel per d, a line per method and β (mean over seeds), and the
    transformer's offset law with its 95% pointwise band (parametric bootstrap) on its fitted sizes,
    where it was fitted. Returns the figure."""
    fitted = {(e["d"], e["beta"]): e for e in data if e["method"] == "transformer" and e["exponent"]}
    plt = common.pyplot()
    data = [r for r in rows if r["sweep"] == "data"]
    dims = sorted({r["d"] for r in data})
    fig, axes = plt.subplots(1, len(dims), figsize=(4.6 * len(dims), 4.2), squeeze=False)
    banded = False
    for ax, d in zip(axes[0], dims, strict=True):
        for beta in sorted({r["beta"] for r in data}, reverse=True):
            for method, (color, marker, _label) in METHOD_STYLE.items():
                sel = [r for r in data if (r["d"], r["beta"], r["method"]) == (d, beta, method)]
                if not sel:
                    continue
                ax.scatter(
                    [r["n"] for r in sel], [r["test_mse"] for r in sel], color=color, marker=marker, s=10, alpha=0.35
                )
                x, y = _mean_by(sel, "n")
                ax.plot(
                    x, y, BETA_STYLE.get(beta, ":"), color=color, marker=marker, ms=4, label=f"{method}, β={beta:g}"
                )
                if method == "transformer" and (d, beta) in fitted:
                    e = fitted[(d, beta)]
                    use = [r for r in sel if r["n"] in e["fitted_sizes"]]
                    grid = np.geomspace(min(e["fitted_sizes"]), max(e["fitted_sizes"]), 60)
                    centre, lo, hi = common.law_band(
                        [r["n"] for r in use], [r["test_mse"] for r in use], "offset", grid, bootstrap
                    )
                    ax.fill_between(grid, lo, hi, color=color, alpha=0.15, lw=0)
                    ax.plot(grid, centre, color=color, lw=0.8, ls=(0, (1, 1)))
                    banded = True
        ax.set_xscale("log")
        ax.set_yscale("log")
        mse = [r["test_mse"] for r in data if r["d"] == d]
        ax.set_ylim(min(mse) / 1.2, max(mse) * 1.2)
        common.readable_log_ticks(ax, "y", min(mse) / 1.2, max(mse) * 1.2)
        ns = [r["n"] for r in data if r["d"] == d]  # each panel its own range of n
        ax.set_xlim(min(ns) / 1.3, max(ns) * 1.3)
        common.readable_log_ticks(ax, "x", min(ns) / 1.3, max(ns) * 1.3)
        ax.set_xlabel("training-set size n (samples)")
        ax.set_title(f"d = {d}")
        ax.grid(alpha=0.3, which="both")
    axes[0][0].set_ylabel("test MSE against f (excess risk)")
    if banded:
        common.caption(
            fig,
            f"dotted with shading: the transformer's offset law E + B n^-α and its {LEVEL:.0%} band "
            "(parametric bootstrap)",
        )
    top = 0.9 if banded else 1.0
    fig.tight_layout(rect=(0, common.legend_below(fig, axes.flat, ncol=3, handlelength=3.5), 1, top))
    return fig


def draw_model(rows: list[dict], model: list[dict]):
    """Test MSE against the number of trained parameters N (model-scaling sweep), per d and β. Returns
    the figure."""
    plt = common.pyplot()
    sel_rows = [r for r in rows if r["sweep"] == "model"]
    fig, ax = plt.subplots(figsize=(6.0, 4.2))
    cmap = plt.get_cmap("viridis")
    dims = sorted({r["d"] for r in sel_rows})
    for e in model:
        sel = [r for r in sel_rows if (r["d"], r["beta"]) == (e["d"], e["beta"])]
        x, y = _mean_by(sel, "params")
        color = cmap(dims.index(e["d"]) / max(1, len(dims) - 1) * 0.85)
        a = f"{e['exponent']['fits']['loglog']['alpha']:.2f}" if e["exponent"] else "withheld"
        ax.plot(
            x,
            y,
            BETA_STYLE.get(e["beta"], ":"),
            marker="o",
            color=color,
            label=f"d={e['d']}, β={e['beta']:g}: loglog α̂_N={a} (pred. {e['predicted']:.2f})",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    sizes = [r["params"] for r in sel_rows]
    ax.set_xlim(min(sizes) / 1.3, max(sizes) * 1.3)
    common.readable_log_ticks(ax, "x", min(sizes) / 1.3, max(sizes) * 1.3)
    ax.set_xlabel("trained parameters N")
    ax.set_ylabel("test MSE against f (no label noise)")
    mse = [r["test_mse"] for r in sel_rows]
    ax.set_ylim(min(mse) / 1.2, max(mse) * 1.2)
    common.readable_log_ticks(ax, "y", min(mse) / 1.2, max(mse) * 1.2)
    ax.set_title(f"model scaling at fixed n = {sel_rows[0]['n']}")
    ax.grid(alpha=0.3, which="both")
    legend_outside(ax, fontsize=7)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------------------------
# markdown


def _key(e: dict) -> tuple:
    return (e["d"], -e["beta"])


def data_table(data: list[dict]) -> str:
    """Markdown: per (d, β), the transformer's loglog and offset α̂ with their intervals (method,
    measured coverage), E, the curvature test and the runs left out."""
    lines = [
        f"| d | β | sizes fitted | loglog α̂ ({LEVEL:.0%} interval) | offset α̂ ({LEVEL:.0%} interval), E | "
        "curvature | runs on the step cap |",
        "|---|---|---|---|---|---|---|",
    ]
    for e in sorted((e for e in data if e["method"] == "transformer"), key=_key):
        lines.append(
            f"| {e['d']} | {e['beta']:g} | {len(e['fitted_sizes'])} of {len(e['sizes'])} | "
            f"{common.alpha_cell(e, 'loglog')} | {common.alpha_cell(e, 'offset')} | "
            f"{common.curvature_cell(e)} | {common.capped_cell(e)} |"
        )
    return "\n".join(lines)


def prediction_table(data: list[dict]) -> str:
    """Markdown: per (d, β), α_D from the true d and from d̂ (with the interval d̂'s carries), the
    transformer's tests (α̂ − α_D, p-value, verdict) for both forms, and the baselines' loglog verdicts."""
    lines = [
        "| d | β | predicted α_D (true d) | d̂ (MLE, 95% CI) | α_D from d̂ (95%) | transformer loglog: α̂ − "
        "α_D (true d) | "
        "transformer offset: α̂ − α_D (true d) | transformer loglog: α̂ − α_D (d̂) | kNN loglog α̂, verdict | "
        "kernel ridge loglog α̂, verdict |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key in sorted({_key(e) for e in data}):
        by = {e["method"]: e for e in data if _key(e) == key}
        ref = by.get("transformer") or next(iter(by.values()))
        dh = f"{ref['d_hat']:.2f} {common.format_interval(ref['d_hat_ci'], 2)}" if "d_hat" in ref else "n/a"
        t_hat = common.prediction_of(ref, "loglog", "d-hat")
        adh = f"{t_hat['alpha_pred']:.3f} {common.format_interval(t_hat['alpha_pred_ci'])}" if t_hat else "n/a"

        def base(m, by=by):
            if m not in by:
                return "—"
            if by[m]["exponent"] is None:
                return by[m]["withheld"]
            return f"{by[m]['exponent']['fits']['loglog']['alpha']:.3f}: {common.verdict(by[m], 'loglog', 'true d')}"

        t = by.get("transformer")
        cells = (
            [
                common.prediction_cell(t, "loglog", "true d"),
                common.prediction_cell(t, "offset", "true d"),
                common.prediction_cell(t, "loglog", "d-hat") if t_hat else "n/a",
            ]
            if t
            else ["—"] * 3
        )
        lines.append(
            f"| {ref['d']} | {-key[1]:g} | {ref['predicted']:.3f} | {dh} | {adh} | "
            + " | ".join(cells)
            + f" | {base('knn')} | {base('krr')} |"
        )
    return "\n".join(lines)


def model_table(model: list[dict]) -> str:
    lines = [
        "| d | β | predicted α_N = 2β/d | transformer loglog α̂_N (95% interval) | α̂_N − α_N, verdict | N range |",
        "|---|---|---|---|---|---|",
    ]
    for e in model:
        lines.append(
            f"| {e['d']} | {e['beta']:g} | {e['predicted']:.3f} | {common.alpha_cell(e, 'loglog')} | "
            f"{common.prediction_cell(e, 'loglog', 'true d')} | {min(e['sizes']):,.0f}–{max(e['sizes']):,.0f} |"
        )
    return "\n".join(lines)


def versus_table(versus: list[dict]) -> str:
    """Markdown: per (d, β, n), the mean test MSE of the transformer, the trivial predictor and the
    baselines, the seeds at which the transformer is below the trivial predictor, and its ratio to the
    better baseline."""
    lines = [
        "| d | β | n | transformer | trivial (training mean) | kNN | kernel ridge | seeds below trivial | "
        "transformer / better baseline |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for e in versus:
        m = e["mse"]
        ratio = "—" if e["ratio_to_better_baseline"] is None else f"{e['ratio_to_better_baseline']:.2f}"
        mark = "" if e["below_trivial"] else " (not below trivial)"
        lines.append(
            f"| {e['d']} | {e['beta']:g} | {e['n']:,} | {m['transformer']:.4g}{mark} | {e['trivial']:.4g} | "
            + " | ".join(f"{m[k]:.4g}" if k in m else "—" for k in ("knn", "krr"))
            + f" | {e['seeds_below_trivial']} of {e['seeds']} | {ratio} |"
        )
    return "\n".join(lines)


def versus_lines(versus: list[dict]) -> list[str]:
    """Counted statements over the (d, β): below the trivial predictor at every n, and against the
    better baseline (at most 1, within 10%)."""
    keys = sorted({_key(e) for e in versus})
    if not keys:
        return []

    def cases(pred) -> list[str]:
        return [f"(d = {d}, β = {-b:g})" for d, b in keys if all(pred(e) for e in versus if _key(e) == (d, b))]

    every = cases(lambda e: e["below_trivial"])
    matched = cases(lambda e: e["ratio_to_better_baseline"] is not None and e["ratio_to_better_baseline"] <= 1.0)
    near = cases(lambda e: e["ratio_to_better_baseline"] is not None and e["ratio_to_better_baseline"] <= 1.1)
    misses = [
        f"d = {e['d']}, β = {e['beta']:g}, n = {e['n']:,} ({e['mse']['transformer']:.4g} against {e['trivial']:.4g})"
        for e in versus
        if not e["below_trivial"]
    ]
    out = [
        f"- the transformer's mean test MSE is below the trivial predictor's at every n in {len(every)} of "
        f"{len(keys)} (d, β)" + (f": {', '.join(every)}" if every else "") + ".",
    ]
    if misses:
        out.append("- not below the trivial predictor at: " + "; ".join(misses) + ".")
    out.append(
        f"- at most the better baseline's MSE at every n in {len(matched)} of {len(keys)} (d, β); within 10% of it "
        f"at every n in {len(near)}."
    )
    return out


def tuned_table(p: dict) -> str:
    """Markdown: the settings each (d, β) trains under (the preset's `tuned` entries)."""
    fields = ["d_embd", "n_blocks", "n_heads", "ffn_width", "lr", "weight_decay", "batch_size", "patience", "max_steps"]
    own_ns = any(t.get("ns") for t in p.get("tuned", ()))  # a column only where some (d, β) has its own grid
    head = fields + (["n"] if own_ns else [])
    lines = ["| d | β | " + " | ".join(head) + " | chosen in |", "|---|---|" + "---|" * (len(head) + 1)]
    for t in sorted(p.get("tuned", ()), key=_key):
        cells = [f"{t[f]:g}" if t.get(f) is not None else f"{p[f]:g} (preset)" for f in fields]
        if own_ns:
            ns = t.get("ns")
            cells.append(", ".join(f"{n:,}" for n in ns) if ns else "the preset's")
        lines.append(f"| {t['d']} | {t['beta']:g} | " + " | ".join(cells) + f" | {t.get('source') or '—'} |")
    return "\n".join(lines)


def summary_lines(data: list[dict]) -> list[str]:
    """Plain statements: per method, how many (d, β) each verdict got (true d, both forms)."""
    out = []
    for method, (_, _, label) in METHOD_STYLE.items():
        sel = [e for e in data if e["method"] == method]
        if not sel:
            continue
        parts = []
        for form in ("loglog", "offset"):
            counts = {}
            for e in sel:
                v = verdict_class(common.verdict(e, form, "true d"))
                counts[v] = counts.get(v, 0) + 1
            parts.append(f"{form}: " + ", ".join(f"{v} in {k}" for v, k in sorted(counts.items())))
        out.append(f"- {label}, against α_D from the true d, over {len(sel)} (d, β): " + "; ".join(parts) + ".")
    return out


def verdict_lines(data: list[dict]) -> list[str]:
    """One computed paragraph per (d, β) for the transformer: fits, tests, curvature and range in words."""
    out = []
    for e in sorted((e for e in data if e["method"] == "transformer"), key=_key):
        words = e["exponent"]["words"] if e["exponent"] else e["withheld"]
        hat = common.prediction_of(e, "loglog", "d-hat")
        if hat:
            words += f" Against α_D from d̂ (loglog): {hat['words']}."
        out.append(f"- **d = {e['d']}, β = {e['beta']:g}**: {words} ({common.capped_words(e)}.)")
    return out


HONEST_READING = """\
The theory (eq. 2-3) bounds the excess risk of an *empirical risk minimiser* over a transformer
class sized as Theorem 1 prescribes; it is an upper bound for the worst β-Hölder function. What is
measured here is different in two ways. (1) The transformer is trained by AdamW on a finite step
budget with early stopping; nothing guarantees that it attains the empirical risk minimum, and an
optimisation error that does not shrink with n flattens the observed slope (α̂_D below the
prediction). (2) Each target is one function, not the worst case of its class, and a finite range
of n can sit in a pre-asymptotic regime; both can make the observed slope steeper or shallower.
kNN and kernel ridge regression, tuned on the same validation split, are classical estimators that
attain the minimax rate n^{-2β/(2β+d)}; they show what the data allow at these n, so a transformer
exponent far from the baselines' says more about training than about the theory. The intervals of
α̂ − α_D carry the spread of the seeds and, for d̂, of the ID estimate; they cover the seeds and sizes of
this sweep only; where the verdict changes with the fit range, the range table says so. """ + rule_words(MARGIN)


def _schedule_text(p: dict) -> str:
    if p.get("schedule", "cosine") == "plateau":
        return (
            f"a constant rate until the validation MSE has not improved for {p['patience']} evaluations "
            f"(every {p['eval_every']} steps), then a {p['cooldown']}-step cooldown, at most "
            f"{p['max_steps']} steps"
        )
    return f"{p['min_steps']}–{p['max_steps']} steps with early stopping on validation"


def _own_grids_text(p: dict) -> str:
    """Words for the (d, β) whose tuned entry has its own grid, and for kernel ridge stopping short of it."""
    own = sorted((t for t in p.get("tuned", ()) if t.get("ns")), key=_key)
    if not own:
        return ""
    cases = ", ".join(f"d = {t['d']}, β = {t['beta']:g}" for t in own)
    text = f", except where a (d, β) has a grid of its own ({cases}: the column n below)"
    largest = max(max(t["ns"]) for t in own)
    if "krr" in p.get("baselines", ()) and p.get("krr_max_n", largest) < largest:
        text += f"; kernel ridge only up to n = {p['krr_max_n']:,}"
    return text


def markdown(report: dict) -> str:
    """report.md: the setting, the transformer against the baselines, the data-scaling fits and tests,
    the model-scaling table, the ID estimates and the reading."""
    p = report["preset"]
    parts = _setting_lines(p)
    parts += [
        "## The transformer against the trivial predictor and the baselines, per n",
        "",
        "Mean test MSE against f over the seeds; the trivial predictor is the training mean of y on the same "
        "split. A rate is only measured where the estimator has left the trivial regime.",
        "",
        versus_table(report["against_baselines"]),
        "",
        *versus_lines(report["against_baselines"]),
        "",
        "## Data scaling: the fits",
        "",
        "The transformer's test MSE against n, on the sizes whose runs all stopped on their validation loss: "
        "the paper's least-squares line in log-log, and the offset law MSE = E + B·n^(−α). Each interval is the "
        "one whose coverage, measured by simulating this sweep's design (its sizes, its seeds, the noise its "
        "seeds show), is best; the coverage printed is that measurement (target 93% at nominal 95%).",
        "",
        data_table(report["data_scaling"]),
        "",
        "## Data scaling: the prediction α_D = 2β/(2β+d) as a test",
        "",
        prediction_table(report["data_scaling"]),
        "",
        *summary_lines(report["data_scaling"]),
        "",
        "## Verdicts in words (transformer)",
        "",
        *verdict_lines(report["data_scaling"]),
        "",
        "## Fit-range sensitivity (transformer, loglog α̂ on sub-ranges, verdict against the true d)",
        "",
        *[
            f"**d = {e['d']}, β = {e['beta']:g}**\n\n{common.range_table(e)}\n"
            for e in sorted((e for e in report["data_scaling"] if e["method"] == "transformer"), key=_key)
        ],
        "![alpha_D against d](fig_alpha.png)",
        "",
        "![test MSE against n](fig_loss.png)",
        "",
        "Where the local slopes of windows differ (disjoint intervals) or the curvature is significant, the "
        "loglog line's verdict is the top window's and says (window-dependent); the offset law, which models the "
        "bend, keeps its verdict on all sizes. The figure shows the local slope against n.",
        "",
        f"![local slope against n]({SLOPES})",
        "",
        *power_lines(report.get("power") or {"cells": []}),
        *decomposition_lines(report.get("decomposition") or []),
    ]
    if report["model_scaling"]:
        parts += _model_scaling_lines(report["model_scaling"], p)
    parts += _closing_lines(report)
    return "\n".join(parts)


def _setting_lines(p: dict) -> list[str]:
    """The report's title and its setting: data, transformer and training, the preset's notes, and the
    per-(d, β) tuned settings when the preset has them."""
    parts = [
        f"# Synthetic manifold regression: preset `{p['name']}`",
        "",
        f"Data: {p['manifold']} of dimension d in R^{p['D']}, {p['density']} density, target `{p['target']}` "
        f"(β-Hölder, normalised to variance 1), label noise σ = {p['noise']}; n = {', '.join(map(str, p['ns']))}"
        + _own_grids_text(p)
        + f" (validation split {p['val_fraction']:g} of n, at least {p['min_val']}); seeds {list(p['seeds'])}; "
        f"test MSE against f on {p['n_test']:,} held-out points. Transformer: Definition 1 with one token per "
        f"coordinate (l = D = {p['D']}), d_embd = {p['d_embd']}, L_T = {p['n_blocks']}, m = {p['n_heads']}, "
        f"w_FFN = {p['ffn_width']} ({p['size']} size), {p['attention']} attention; AdamW lr {p['lr']:g}, batch "
        f"{p['batch_size']}, " + _schedule_text(p) + ".",
        "",
        f"Preset notes: {p['notes']}.",
        "",
    ]
    if p.get("tuned"):
        parts += [
            "Each (d, β) trains under its own setting, chosen by `tmcheck synth tune` on validation data drawn "
            "from the training pool (never the test split); these replace the fields above:",
            "",
            tuned_table(p),
            "",
        ]
    return parts


def _model_scaling_lines(model: list[dict], p: dict) -> list[str]:
    """The model-scaling section: its setting (n, widths, shapes), the α̂_N table and its figure."""
    return [
        "## Model scaling: predicted α_N = 2β/d against observed α̂_N",
        "",
        f"n = {p['model_n']}, no label noise, widths {list(p['model_widths'])} at each (d, β)'s own depth"
        + (
            "; and the (L_T, w_FFN) shapes " + ", ".join(f"({b}, {w})" for b, w in p["model_shapes"])
            if p.get("model_shapes")
            else ""
        )
        + ". N counts every trained parameter of the run.",
        "",
        model_table(model),
        "",
        "![test MSE against N](fig_model.png)",
        "",
    ]


def _closing_lines(report: dict) -> list[str]:
    """The ID estimates from the same x, the reading, and the rows' stops and times."""
    ids = report["id_estimates"]
    return [
        "## Intrinsic dimension from the same x",
        "",
        "| true d | MLE d̂ (K=20) [95% CI] | points |",
        "|---|---|---|",
        *[f"| {e['d']} | {e['dimension']:.2f} {common.format_interval(e['ci'])} | {e['n']} |" for e in ids],
        "",
        "## Reading",
        "",
        HONEST_READING,
        "",
        f"Rows: {report['rows']} (transformer runs: {report['stops']['patience']} stopped on their validation "
        f"loss, {report['stops']['cap']} on the step cap); transformer training time "
        f"{report['transformer_seconds'] / 60:.1f} min; "
        f"wall time of all rows {report['wall_seconds'] / 60:.1f} min; compute "
        f"{report['cpu_hours']:.2f} CPU-hours ({report['cpu_measured']} of {report['rows']} rows with their "
        "measured CPU time, the others their wall time, on one thread).",
        "",
    ]
