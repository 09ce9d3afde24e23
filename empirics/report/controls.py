"""The report of a positive-control sweep (kind "controls", issue #38 item 3): does each control, whose rate
n^{-2β/(2β+d)} is a theorem, recover α_D = 2β/(2β+d) under the equivalence rule of
tmcheck.empirics.fit.prediction?

Per method and (d, β): α̂_D on the top decade of n and on the whole range (tmcheck.empirics.fit.exponent_report,
loglog form, the reports' interval method), each with the rule's verdict at ±δ (MARGIN) and at the paper's
±0.02; the local slope on every decade window (3 half-decade sizes), and the smallest n from which every
window's slope is equivalent. The whole-range verdict is labelled "window-dependent" when the windows'
intervals are disjoint or the curvature test is significant (issue #38 item 2: a verdict never averages a bend
away). Per control, a diagnosis of the problem at the scale it averages over: the holder field's finest level
K, the control's scale (kNN's neighbourhood radius, krr's kernel width) and the field's local Hölder exponent
measured there.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from tmcheck.empirics.fit.exponent import exponent_report
from tmcheck.empirics.fit.prediction import MARGIN, PAPER_MARGIN, decide, rule_words
from tmcheck.empirics.report.common import (
    COVERAGE_REPS,
    LEVEL,
    METHODS,
    Outputs,
    caption,
    cell_axes,
    draw_local_slopes,
    legend_below,
    markdown_table,
    readable_log_ticks,
)
from tmcheck.empirics.sweep import SweepDir, layout
from tmcheck.empirics.sweep.controls import METHODS as CONTROLS
from tmcheck.empirics.sweep.controls import read_tuning
from tmcheck.theory.bounds import alpha_D

FIGURES = ("fig_mse.png", "fig_slope.png")
DECADE = 10.0
SPAN = 0.99  # a window spans a decade when log10(max/min) >= SPAN (316,228 / 31,623 rounds)
BALL_CENTRES = 4000  # points at which the local roughness is measured
BALL_POINTS = 64  # uniform points of each ball mean (taken twice, independently)
STYLE = {"knn-theory": ("C0", "o"), "knn-cv": ("C1", "s"), "krr": ("C2", "^")}
LABEL = {"knn-theory": "kNN, k ∝ n^(2β/(2β+d))", "knn-cv": "kNN, k by validation", "krr": "kernel ridge (theory)"}


# ------------------------------------------------------------------------------------------ fits
def _test(rep: dict) -> dict:
    """The compact record of one exponent_report: α̂ on its sizes, its interval, the rule at ±δ and at ±0.02.
    Where exponent_report gives a bent curve's verdict on its top window, the test of all its sizes is the
    one recorded here (the report shows the top window's in its own columns)."""
    fit, t = rep["fits"]["loglog"], rep["prediction"]["loglog"]
    t = t.get("full_range", t)
    lo, hi = t["equivalence_ci"]
    decided = fit["status"] == "converged" and np.isfinite(lo) and np.isfinite(hi)
    paper = decide(lo, hi, PAPER_MARGIN) if decided else "undecided"
    return {
        "alpha": fit["alpha"],
        "ci": [fit["interval"]["lo"], fit["interval"]["hi"]],
        "interval": fit["interval"]["text"],
        "status": fit["status"],
        "difference": t["difference"],
        "difference_ci": t["difference_ci"],
        "equivalence_ci": [lo, hi],
        "outcome": t["outcome"],
        "verdict": t["verdict"],
        "paper_outcome": paper,
        "paper_verdict": t["paper_verdict"] if decided else t["verdict"],
        "edge": t["edge"],
    }


def fit_sizes(sizes, losses, d: int, beta: float, bootstrap: int, seed: int, whole: bool = False) -> dict:
    """exponent_report of one curve (loglog, tested against α_D with d known), compacted; the whole
    range adds its curvature test and its range words."""
    rep = exponent_report(
        np.asarray(sizes, float),
        np.asarray(losses, float),
        level=LEVEL,
        forms=("loglog",),
        prediction={"kind": "D", "beta": beta, "d": d},
        margin=MARGIN,
        coverage_reps=COVERAGE_REPS,
        bootstrap=bootstrap,
        seed=seed,
        methods=METHODS,
    )
    out = {"sizes": sorted({float(s) for s in sizes}), "runs": len(sizes), **_test(rep)}
    if whole:
        out["curvature"] = rep["curvature"]
        out["words"] = rep["words"]
    return out


def decade_windows(sizes: list[float]) -> list[list[float]]:
    """Each window of consecutive sizes spanning one decade from its first size, with at least 3 sizes."""
    out = []
    for i, s in enumerate(sizes):
        part = [x for x in sizes[i:] if x <= s * DECADE * 1.001]
        if len(part) >= 3 and math.log10(part[-1] / s) >= SPAN:
            out.append(part)
    return out


def equivalent_from(windows: list[dict], key: str) -> float | None:
    """The smallest window start from which every window's verdict is 'equivalent' (None: never)."""
    start = None
    for w in reversed(windows):
        if w[key] != "equivalent":
            break
        start = w["sizes"][0]
    return start


def control_entry(rows: list[dict], method: str, d: int, beta: float, bootstrap: int, seed: int) -> dict | None:
    """Everything the report says about one control at (d, β); None with fewer than 3 sizes."""
    sel = [r for r in rows if (r["method"], r["d"], r["beta"]) == (method, d, beta)]
    sizes = sorted({float(r["n"]) for r in sel})
    if len(sizes) < 3:
        return None
    n = [float(r["n"]) for r in sel]
    mse = [float(r["test_mse"]) for r in sel]
    windows = []
    for i, part in enumerate(decade_windows(sizes)):
        keep = [j for j, x in enumerate(n) if x in part]
        w = fit_sizes([n[j] for j in keep], [mse[j] for j in keep], d, beta, bootstrap, seed + i)
        windows.append(w)
    whole = fit_sizes(n, mse, d, beta, bootstrap, seed, whole=True)
    disjoint = any(a["ci"][1] < b["ci"][0] or b["ci"][1] < a["ci"][0] for a in windows for b in windows)
    curved = bool(whole["curvature"] and whole["curvature"]["p_value"] < 1 - LEVEL)
    hyper = "k" if method != "krr" else "h"
    by_n = {s: [r for r in sel if float(r["n"]) == s] for s in sizes}
    return {
        "method": method,
        "d": d,
        "beta": beta,
        "predicted": alpha_D(d, beta),
        "seeds": len({r["seed"] for r in sel}),
        "whole": whole,
        "window_dependent": bool(disjoint or curved),
        "windows": windows,
        "top": windows[-1] if windows else None,
        "equivalent_from": equivalent_from(windows, "outcome"),
        "paper_equivalent_from": equivalent_from(windows, "paper_outcome"),
        "mean_mse": {f"{s:g}": float(np.mean([r["test_mse"] for r in by_n[s]])) for s in sizes},
        "hyper": {f"{s:g}": sorted({r[hyper] for r in by_n[s]}) for s in sizes},
        "cpu_s": float(sum(r["cpu_s"] for r in sel)),
    }


# ------------------------------------------------------------------------------------------ diagnosis
def local_holder(preset, d: int, beta: float, h1: float, h2: float) -> float:
    """The field's local Hölder exponent as kNN sees it, between the radii h1 > h2 (chart units): half the
    log-log slope of b(h) = E_u (f(u) - mean of f over the ball B(u, h))², the squared bias of an average over
    a ball of radius h. A linear piece averages out over a ball, so b measures the roughness an average
    cannot remove: b(h) ∝ h^{2β} for the field at β, h³ (β_eff = 3/2) below its finest scale, where only
    the last level's kinks are left. Each ball mean is taken twice over BALL_POINTS independent uniform
    points and the two deviations multiplied, so the Monte-Carlo noise of the means leaves b unbiased."""
    from tmcheck.empirics.synthetic.problem import Experiment, holder_field

    field = Experiment(preset.problem(d, beta)).field
    rng = np.random.default_rng(0)
    u = rng.random((BALL_CENTRES, d))

    def f(x):
        return (holder_field(np.mod(x, 1.0), beta, field.levels, field.salt) - field.mean) / field.scale

    def ball_mean(h):  # (BALL_CENTRES,): the mean of f over BALL_POINTS uniform points of B(u, h)
        g = rng.standard_normal((BALL_CENTRES, BALL_POINTS, d))
        r = h * rng.random((BALL_CENTRES, BALL_POINTS, 1)) ** (1 / d)
        pts = u[:, None, :] + r * g / np.linalg.norm(g, axis=2, keepdims=True)
        return f(pts.reshape(-1, d)).reshape(BALL_CENTRES, BALL_POINTS).mean(axis=1)

    fu = f(u)
    b1, b2 = (float(np.mean((fu - ball_mean(h)) * (fu - ball_mean(h)))) for h in (h1, h2))
    return math.log(b1 / b2) / (2 * math.log(h1 / h2))


SCALE = {"knn-theory": "radius", "knn-cv": "radius", "krr": "h"}  # the row field of each control's scale
SCALE_WORDS = {"radius": "neighbourhood radius", "h": "kernel width"}


def diagnosis(preset, rows: list[dict], e: dict) -> dict:
    """The problem at the scale a control averages over on its top window: the field's finest level K and
    scale 2^-K, the control's scale (kNN: the median distance to the k-th neighbour; krr: the kernel width
    h) in chart units at the window's ends, and the field's local Hölder exponent between those scales as an
    average over a ball sees it (`local_holder`), with the exponent 2β_eff/(2β_eff+d) it implies."""
    from tmcheck.empirics.synthetic.controls import intrinsic_radius
    from tmcheck.empirics.synthetic.problem import holder_levels

    d, beta, top = e["d"], e["beta"], e["top"]
    K = holder_levels(d)
    out = {"method": e["method"], "d": d, "beta": beta, "levels": K, "finest_scale": 2.0**-K}
    if top is None or preset.target != "holder":
        return out
    key, scales = SCALE[e["method"]], []
    for n in (top["sizes"][0], top["sizes"][-1]):
        sel = [r[key] for r in rows if (r["method"], r["d"], r["beta"], float(r["n"])) == (e["method"], d, beta, n)]
        scales.append(intrinsic_radius(float(np.median(sel))))
    b_eff = local_holder(preset, d, beta, *scales)
    out.update(
        scale=SCALE_WORDS[key],
        scale_top_lo=scales[0],
        scale_top_hi=scales[1],
        levels_finer=K - math.log2(1 / scales[1]),
        local_beta=b_eff,
        alpha_local=alpha_D(d, b_eff) if b_eff > 0 else float("nan"),
    )
    return out


def diagnosis_words(e: dict, diag: dict) -> str:
    """Why a control's top-window slope is or is not equivalent, from the numbers: the difference α̂ − α_D,
    the part of it the field's roughness at kNN's scales accounts for (2β_eff/(2β_eff+d) − α_D), and what
    is left; a top window that is not equivalent is put down to the design when its interval is wider than
    the margin, else to the problem when the roughness accounts for at least half the difference (and at
    least a fifth of the margin), else to the estimator's pre-asymptotic bias."""
    top = e["top"]
    if top is None:
        return "no decade window: too few sizes"
    diff = top["alpha"] - e["predicted"]
    head = f"top window n = {top['sizes'][0]:,.0f}–{top['sizes'][-1]:,.0f}: α̂ − α_D = {diff:+.3f}, {top['verdict']}"
    if "local_beta" not in diag:
        return head
    field = diag["alpha_local"] - e["predicted"]
    head += (
        f"; the field's roughness between its {diag['scale']} {diag['scale_top_lo']:.3g} and "
        f"{diag['scale_top_hi']:.3g} (β_eff = {diag['local_beta']:.3f}, {diag['levels_finer']:.1f} of its levels "
        f"finer than that, K = {diag['levels']}) accounts for {field:+.3f}, leaving {diff - field:+.3f}"
    )
    if top["outcome"] == "equivalent":
        return head
    width = (top["equivalence_ci"][1] - top["equivalence_ci"][0]) / 2
    if width > MARGIN:
        why = f"the design is short: the interval's half-width {width:.3f} exceeds the margin (more seeds or sizes)"
    elif abs(field) >= max(abs(diff) / 2, MARGIN / 5):
        why = "the problem is off: at these scales the field is not β-rough (the cap 2^-K of holder_levels)"
    else:
        why = "the estimator is still pre-asymptotic at these n"
    return f"{head}: {why}"


# ------------------------------------------------------------------------------------------ report
def build(sweep: SweepDir, bootstrap: int = 1000) -> dict:
    """Fit, draw and write the report of a controls sweep; every figure is drawn before a file is written."""
    preset = sweep.preset()
    rows = sweep.rows()
    if not rows:
        raise ValueError(f"{sweep.path} has no finished runs yet (results.jsonl is empty); run the sweep first")
    cells = [(d, b) for d in preset.dims for b in preset.betas]
    entries = []
    for i, method in enumerate(preset.methods):
        for j, (d, b) in enumerate(cells):
            e = control_entry(rows, method, d, b, bootstrap, seed=100 * i + 10 * j)
            if e is not None:
                entries.append(e)
    diags = [diagnosis(preset, rows, e) for e in entries]
    planned = len(sweep.read_plan()) if (sweep.path / layout.PLAN).exists() else len(rows)
    report = {
        "kind": "controls",
        "sweep": str(sweep.path),
        "preset": preset.as_dict(),
        "tuning": read_tuning(sweep).get("cells", {}),
        "controls": entries,
        "diagnosis": diags,
        "rows": len(rows),
        "planned": planned,
        "cpu_hours": float(sum(r["cpu_s"] for r in rows)) / 3600,
        "tuning_cpu_hours": float(sum(t.get("cpu_s", 0.0) for t in read_tuning(sweep).get("cells", {}).values()))
        / 3600,
        "margin": MARGIN,
        "paper_margin": PAPER_MARGIN,
        "files": [layout.REPORT_MD, layout.REPORT_JSON, *FIGURES],
    }
    out = Outputs(sweep.path)
    out.figure(FIGURES[0], draw_mse(rows, entries, cells))
    out.figure(FIGURES[1], draw_slopes(entries, cells))
    return out.finish(report, markdown(report))


def draw_mse(rows: list[dict], entries: list[dict], cells):
    """Test MSE against n per (d, β): each control's mean over seeds (bars: min to max), and a line of
    the predicted slope -2β/(2β+d) through knn-theory's mean at its largest n."""
    fig, ax_of = cell_axes(cells)
    for (d, b), ax in ax_of.items():
        for e in (e for e in entries if (e["d"], e["beta"]) == (d, b)):
            color, marker = STYLE[e["method"]]
            sizes = np.array(e["whole"]["sizes"])
            sel = [r for r in rows if (r["method"], r["d"], r["beta"]) == (e["method"], d, b)]
            per = [[r["test_mse"] for r in sel if float(r["n"]) == s] for s in sizes]
            mean = np.array([np.mean(p) for p in per])
            err = np.array(
                [
                    [m - min(p) for m, p in zip(mean, per, strict=True)],
                    [max(p) - m for m, p in zip(mean, per, strict=True)],
                ]
            )
            ax.errorbar(sizes, mean, yerr=err, color=color, marker=marker, ms=4, lw=1, label=LABEL[e["method"]])
            if e["method"] == "knn-theory":
                ref = mean[-1] * (sizes / sizes[-1]) ** -e["predicted"]
                ax.plot(sizes, ref, "k--", lw=0.8, label="slope −2β/(2β+d)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        readable_log_ticks(ax, "y", *ax.get_ylim())
        ax.set_title(f"d = {d}, β = {b:g}", fontsize=9)
        ax.set_xlabel("n", fontsize=8)
        ax.set_ylabel("test MSE against f", fontsize=8)
        ax.tick_params(labelsize=7)
    bottom = legend_below(fig, ax_of.values())
    caption(
        fig, "Positive controls: test MSE against n (mean over seeds; bars: min to max); dashed: the predicted slope"
    )
    fig.tight_layout(rect=(0, bottom, 1, 0.93))
    return fig


def draw_slopes(entries: list[dict], cells):
    """The local slope α̂ on each decade window against the window's geometric centre, with its 95% band
    (common.draw_local_slopes), the prediction's ±δ band and the paper's ±0.02 dotted."""
    panels: dict = {cell: [] for cell in cells}
    for e in entries:
        if (e["d"], e["beta"]) in panels and e["windows"]:
            color, marker = STYLE[e["method"]]
            w = e["windows"]
            panels[(e["d"], e["beta"])].append(
                (
                    LABEL[e["method"]],
                    color,
                    marker,
                    [math.sqrt(v["sizes"][0] * v["sizes"][-1]) for v in w],
                    [v["alpha"] for v in w],
                    [v["ci"][0] for v in w],
                    [v["ci"][1] for v in w],
                )
            )
    return draw_local_slopes(
        panels,
        MARGIN,
        "n (centre of the decade window)",
        "Local slope on decade windows with its 95% band; grey: 2β/(2β+d) ± the margin; dotted: the paper's ± "
        f"{PAPER_MARGIN:g}",
        paper_margin=PAPER_MARGIN,
    )


# ------------------------------------------------------------------------------------------ text
def _n(x) -> str:
    return "never" if x is None else f"{x:,.0f}"


def _fit_cell(f: dict | None) -> str:
    if f is None:
        return "—"
    return f"{f['alpha']:.3f} [{f['ci'][0]:.3f}, {f['ci'][1]:.3f}]"


def verdict_table(entries: list[dict]) -> str:
    header = ["control", "d", "β", "α_D", "top window n", "α̂ top [95%]", "top, ±δ", "top, ±0.02", "α̂ all n [95%]"]
    header += ["all n, ±δ", "equivalent from n (±δ)", "(±0.02)"]
    rows = []
    for e in entries:
        t, w = e["top"], e["whole"]
        span = f"{t['sizes'][0]:,.0f}–{t['sizes'][-1]:,.0f}" if t else "—"
        whole_v = w["verdict"] + (" (window-dependent)" if e["window_dependent"] else "")
        top_v = [t["verdict"], t["paper_verdict"]] if t else ["—", "—"]
        rows.append(
            [e["method"], str(e["d"]), f"{e['beta']:g}", f"{e['predicted']:.3f}", span, _fit_cell(t), *top_v]
            + [_fit_cell(w), whole_v, _n(e["equivalent_from"]), _n(e["paper_equivalent_from"])]
        )
    return markdown_table(header, rows)


def tuning_table(tuning: dict) -> str:
    header = ["d", "β", "knn-theory c (k at the tuning n)", "at the grid's edge", "krr h₀, α (h at the tuning n)"]
    rows = []
    for t in tuning.values():
        knn, krr = t.get("knn"), t.get("krr")
        k = f"{knn['c']:.3g} (k = {knn['k']} at n = {knn['n']:,})" if knn else "—"
        r = f"{krr['h0']:.3g}, {krr['alpha']:g} (h = {krr['h']:.3g} at n = {krr['n']:,})" if krr else "—"
        edges = ["yes" if x and x["at_edge"] else "no" for x in (knn, krr)]
        rows.append([str(t["d"]), f"{t['beta']:g}", k, edges[0], r, edges[1]])
    return markdown_table([*header, "at the grid's edge"], rows)


def diagnosis_table(diags: list[dict]) -> str:
    header = ["control", "d", "β", "finest level K (scale)"]
    header += [
        "the control's scale at the top window's ends (chart units)",
        "field levels finer than it",
        "local Hölder exponent there",
        "2β_eff/(2β_eff+d)",
    ]
    rows = []
    for g in diags:
        head = [g["method"], str(g["d"]), f"{g['beta']:g}", f"{g['levels']} ({g['finest_scale']:.3g})"]
        if "local_beta" not in g:
            rows.append([*head, "—", "—", "—", "—"])
            continue
        scale = f"{g['scale']} {g['scale_top_lo']:.3g} → {g['scale_top_hi']:.3g}"
        rows.append([*head, scale, f"{g['levels_finer']:.1f}", f"{g['local_beta']:.3f}", f"{g['alpha_local']:.3f}"])
    return markdown_table(header, rows)


def diagnosis_lines(report: dict) -> list[str]:
    """One line per control: its top window's difference, what the field's roughness accounts for, why."""
    diag = {(g["method"], g["d"], g["beta"]): g for g in report["diagnosis"]}
    return [
        f"- {e['method']}, d = {e['d']}, β = {e['beta']:g}: "
        f"{diagnosis_words(e, diag[(e['method'], e['d'], e['beta'])])}."
        for e in report["controls"]
    ]


def _grid(values) -> str:
    return f"{len(values)} values from {min(values):.3g} to {max(values):.3g} (geometric)"


def grids_words(tuning: dict, p: dict) -> str:
    """How the constants were chosen, with the grids the stored tuning searched."""
    t = next(iter(tuning.values()), {})
    parts = []
    if "knn" in t:
        parts.append(
            f"knn-theory's c minimises the held-out MSE (noisy labels) of k = round(c n^{{2β/(2β+d)}}) at n = "
            f"{t['knn']['n']:,} over c: {_grid(t['knn']['grid'])}"
        )
    if "krr" in t:
        parts.append(
            f"krr's (h, α) at n = {t['krr']['n']:,} over h: {_grid(t['krr']['h_grid'])}, and α ∈ "
            f"{{{', '.join(f'{a:g}' for a in t['krr']['alpha_grid'])}}}"
        )
    seeds = ", ".join(map(str, p["tune_seeds"]))
    return (
        "; ".join(parts) + f"; each averaged over {len(p['tune_seeds'])} tuning sets (data seeds {seeds}, none "
        f"of the sweep's) with {p['tune_holdout']:,} held-out points each."
    )


def headline(report: dict) -> list[str]:
    """One line per control: in how many (d, β) its top window is equivalent at ±δ and at ±0.02."""
    out = []
    for m in CONTROLS:
        sel = [e for e in report["controls"] if e["method"] == m and e["top"]]
        if sel:
            eq = [e for e in sel if e["top"]["outcome"] == "equivalent"]
            paper = [e for e in sel if e["top"]["paper_outcome"] == "equivalent"]
            out.append(
                f"{m}: top-window slope equivalent to 2β/(2β+d) within ±{report['margin']:g} in {len(eq)} of "
                f"{len(sel)} (d, β), within ±{report['paper_margin']:g} in {len(paper)}"
            )
    return out


def resume_command(preset_name: str, directory: str = "DIR") -> str:
    """The command that resumes (or finishes) a controls sweep in `directory`."""
    return f"nice -n 10 tmcheck sweep controls {directory} --preset {preset_name} --workers 2"


def markdown(report: dict) -> str:
    p, entries = report["preset"], report["controls"]
    lines = [
        "# Positive controls: estimators with proven rates on the synthetic problem",
        "",
        f"Preset `{p['name']}`: {p['manifold']} in R^{p['D']}, target `{p['target']}`, noise σ = {p['noise']:g} "
        f"(the target has variance 1), d ∈ {{{', '.join(map(str, p['dims']))}}}, β ∈ "
        f"{{{', '.join(f'{b:g}' for b in p['betas'])}}}, n from {min(p['ns']):,} to {max(p['ns']):,}, "
        f"{len(p['seeds'])} seeds, {p['n_test']:,} noiseless test points. {report['rows']} of {report['planned']} "
        f"planned runs finished, {report['cpu_hours']:.2f} CPU-hours (the rows' process time) and "
        f"{report['tuning_cpu_hours']:.2f} CPU-hours of tuning.",
        "",
        "- knn-theory: k = max(1, round(c n^{2β/(2β+d)})) on all n points, c chosen once per (d, β);",
        f"- knn-cv: k chosen on a validation split ({p['val_fraction']:.0%} of n) from round(2^(j/2)), searched "
        "upward until two grid points above the best are worse;",
        "- krr: Gaussian kernel ridge with bandwidth h_n = h₀ n^{-1/(2β+d)} and ridge λ_n = λ₀ h_n^d "
        f"n^{{-2β/(2β+d)}} (scikit-learn's α = n λ_n constant), exact, up to n = {p['krr_max_n']:,}.",
        "",
        "## Tuning (once per (d, β), on held-out data)",
        "",
        grids_words(report["tuning"], p),
        "",
        tuning_table(report["tuning"]),
        "",
        "## Verdicts",
        "",
        rule_words(report["margin"]),
        "",
        *[f"- {x}" for x in headline(report)],
        "",
        verdict_table(entries),
        "",
        '"window-dependent": two decade windows\' intervals are disjoint or the curvature test is significant (the '
        "rule of tmcheck.empirics.fit.exponent); the verdict to read is then the top window's.",
        "",
        "![test MSE](fig_mse.png)",
        "",
        "![local slopes](fig_slope.png)",
        "",
        "## Diagnosis: the problem at the scale each control averages over",
        "",
        diagnosis_table(report["diagnosis"]),
        "",
        *diagnosis_lines(report),
        "",
        "## Notes",
        "",
        f"- Resume or finish the sweep (it resumes where it stopped), DIR being this directory: "
        f"`{resume_command(p['name'])}`; `tmcheck report DIR` rebuilds this report from the rows.",
    ]
    return "\n".join(lines) + "\n"


def summary(report: dict) -> str:
    parts = [*headline(report), verdict_table(report["controls"])]
    parts.append("written: " + ", ".join(str(Path(report["sweep"]) / f) for f in report["files"]))
    return "\n\n".join(parts)
