"""What every sweep report shares: the one exponent fit, the one interval formatter, the one figure
save, and the intrinsic dimension through the sweep's cached id.json (paper Section 3, eq. 3-4).

The exponent α̂ of a scaling law loss ∝ size^-α is fitted here and nowhere else in the reports
(`fit_exponent`, which calls tmcheck.empirics.fit.exponent_report), so a change of the statistics
reaches every kind's report at once. A size whose runs stopped on the step cap rather than on their
validation loss has not converged: it is left out of the fits, and the report says so.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from tmcheck.util import atomic, safeio

FIGURE_DPI = 120
LEVEL = 0.95  # nominal level of every interval a report prints
MARGIN = 0.05  # δ of every prediction test a report prints (the equivalence rule of tmcheck.empirics.fit.prediction)
COVERAGE_REPS = 200  # simulated sweeps per interval method (the coverage printed beside each interval)
FORMS = ("loglog", "offset")  # the paper's line through total loss, and L = E + B n^-alpha
# The interval methods simulated at each sweep's design. The profile-likelihood interval covers 94-97% at
# every preset's design, the parametric and cluster bootstraps 63-95% (benchmarks/bench_coverage.py,
# results/coverage.json), so the reports simulate the profile interval alone (0.1-2 s a curve instead of
# 15-25 s), print its measured coverage and say "not calibrated" where it falls short.
METHODS = ("profile",)


def capped_sizes(sizes, stops) -> list[dict]:
    """The sizes with at least one run that stopped on the step cap: [{"n", "capped", "runs"}].

    `stops` holds each run's stop reason ("patience" or "cap", tmcheck.empirics.lm.train.stop_reason),
    or None for a run made before it was recorded (then nothing is known to be capped)."""
    out = []
    for s in sorted(set(sizes)):
        mine = [st for n, st in zip(sizes, stops, strict=True) if n == s]
        k = sum(st == "cap" for st in mine)
        if k:
            out.append({"n": s, "capped": k, "runs": len(mine)})
    return out


def fit_exponent(
    sizes, losses, *, stops=None, cap=None, prediction=None, predictions=None, bootstrap: int = 400, seed: int = 0
) -> dict:
    """The exponent report of one scaling curve (one row per run), on its converged sizes.

    Sizes with a run on the step cap are left out; with fewer than 3 converged sizes there is no fit
    and `withheld` says why. `prediction` / `predictions` are passed to exponent_report (the test of
    alpha-hat against 2β/(2β+d) or 2β/d). Returns {"sizes", "runs", "capped", "fitted_sizes",
    "stops_recorded", "cap", "withheld" (None or a sentence), "exponent" (exponent_report or None)}."""
    from tmcheck.empirics.fit import exponent_report

    sizes = [float(s) for s in sizes]
    stops = list(stops) if stops is not None else [None] * len(sizes)
    capped = capped_sizes(sizes, stops)
    out_sizes = {c["n"] for c in capped}
    keep = [i for i, s in enumerate(sizes) if s not in out_sizes]
    fitted = sorted({sizes[i] for i in keep})
    out = {
        "sizes": sorted(set(sizes)),
        "runs": len(sizes),
        "capped": capped,
        "fitted_sizes": fitted,
        "stops_recorded": all(s is not None for s in stops),
        "cap": cap,
        "withheld": None,
        "exponent": None,
    }
    if len(fitted) < 3:
        reason = (
            f"{len(capped)} of {len(out['sizes'])} sizes have runs on the step cap"
            if capped
            else f"only {len(fitted)} sizes"
        )
        out["withheld"] = f"no fit and no verdict: {reason}, fewer than 3 converged sizes remain"
        return out
    out["exponent"] = exponent_report(
        np.array([sizes[i] for i in keep]),
        np.array([float(losses[i]) for i in keep]),
        level=LEVEL,
        forms=FORMS,
        prediction=prediction,
        predictions=predictions,
        margin=MARGIN,
        coverage_reps=COVERAGE_REPS,
        bootstrap=bootstrap,
        seed=seed,
        methods=METHODS,
    )
    return out


def capped_words(fit: dict) -> str:
    """One sentence on the runs that hit the step cap (and were left out), or on stops not recorded."""
    if not fit["stops_recorded"]:
        return "stop reasons not recorded (a sweep made before tmcheck recorded them): no size was left out"
    if not fit["capped"]:
        return "every run stopped on its validation loss (none on the step cap)"
    cap = f" of {fit['cap']:,} steps" if fit.get("cap") else ""
    parts = [f"n = {c['n']:,.0f} ({c['capped']} of {c['runs']} runs)" for c in fit["capped"]]
    return f"left out of the fits, runs on the step cap{cap}: " + ", ".join(parts)


def verdict(fit: dict, form: str, name: str | None = None) -> str:
    """The prediction test's verdict for one form ('equivalent within ±0.05', 'differs by more than 0.05',
    'undecided at ±0.05'), or 'withheld' when there is no fit; `name` picks one of the named tests."""
    test = prediction_of(fit, form, name)
    return test["verdict"] if test else "withheld"


def prediction_of(fit: dict, form: str, name: str | None = None) -> dict | None:
    rep = fit["exponent"]
    if rep is None:
        return None
    tests = rep["prediction"] if name is None else (rep["predictions"] or {}).get(name)
    return (tests or {}).get(form)


def alpha_cell(fit: dict, form: str) -> str:
    """'α̂ [lo, hi] (95% method, coverage c)' of one form, with its status when not converged."""
    if fit["exponent"] is None:
        return "withheld"
    e = fit["exponent"]["fits"][form]
    iv = e["interval"]
    cov = f"coverage {iv['coverage']:.0%}" if np.isfinite(iv["coverage"]) else "coverage n/a"
    cell = f"{e['alpha']:.3f} [{iv['lo']:.3f}, {iv['hi']:.3f}] ({iv['method']}, {cov}"
    cell += ", not calibrated)" if not iv["calibrated"] else ")"
    if form == "offset":
        cell += f", E = {e['params']['E']:.3g} [{e['E_interval']['lo']:.3g}, {e['E_interval']['hi']:.3g}]"
    if e["status"] != "converged":
        cell += f" — {e['status']}: " + ", ".join(f["code"] for f in e["flags"])
    return cell


def curvature_cell(fit: dict) -> str:
    """'floor (p = …)' or 'none (p = …)': the curvature test (offset law against the power law); 'n/a' without it."""
    rep = fit["exponent"]
    curv = rep["curvature"] if rep else None
    return f"{'floor' if curv['floor'] else 'none'} (p = {curv['p_value']:.2g})" if curv else "n/a"


def capped_cell(fit: dict) -> str:
    """'n = … (capped/runs), …' for the sizes with runs on the step cap (left out of the fits), else 'none'."""
    return ", ".join(f"n = {x['n']:,.0f} ({x['capped']}/{x['runs']})" for x in fit["capped"]) or "none"


def prediction_cell(fit: dict, form: str, name: str | None = None) -> str:
    """'α̂ − α_pred [lo, hi], p; verdict' of one form's prediction test."""
    t = prediction_of(fit, form, name)
    if t is None:
        return "withheld"
    p = f"p < {t['p_value_floor']:.1g}" if t["p_value"] < t["p_value_floor"] else f"p = {t['p_value']:.2g}"
    diff = f"{t['difference']:+.3f} [{t['difference_ci'][0]:+.3f}, {t['difference_ci'][1]:+.3f}], {p}"
    return f"{diff}: {t['verdict']} (at ±{t['paper_margin']:g}: {t['paper_verdict']})"


def markdown_table(header: list[str], rows) -> str:
    """A markdown table: the header's cells, the rule under them, then one line per row of cells."""
    return "\n".join(
        ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]
    )


def range_table(fit: dict) -> str:
    """Markdown: the loglog α̂ on all sizes, the upper half and windows of 3 sizes, with the verdict."""
    if fit["exponent"] is None:
        return fit["withheld"]
    rng = fit["exponent"]["range"]
    lines = [f"| range | n | α̂ ({rng['method']}) | verdict |", "|---|---|---|---|"]
    for e in rng["entries"]:
        lines.append(
            f"| {e['range']} | {e['sizes'][0]:,.0f}–{e['sizes'][-1]:,.0f} | {e['alpha']:.3f} "
            f"[{e['lo']:.3f}, {e['hi']:.3f}] | {e.get('verdict', 'n/a')} |"
        )
    return "\n".join(lines)


def law_band(sizes, losses, form: str, grid, bootstrap: int = 400, seed: int = 0):
    """The fitted law on `grid` with its pointwise LEVEL band from the parametric bootstrap of the whole
    law (the per-seed noise the runs show): (centre, lo, hi)."""
    from tmcheck.empirics.fit.intervals import interval_batch

    n, y, grid = np.asarray(sizes, float), np.asarray(losses, float), np.asarray(grid, float)
    res = interval_batch(n, y[None], form, LEVEL, ("parametric",), bootstrap, seed, keep_samples=True)
    f, s = res["fit"], res["parametric"]
    centre = f["E"][0] + f["B"][0] * grid ** -f["alpha"][0]
    draws = s["E_samples"][0][:, None] + s["B_samples"][0][:, None] * grid[None, :] ** -s["samples"][0][:, None]
    lo, hi = np.nanquantile(draws, [(1 - LEVEL) / 2, (1 + LEVEL) / 2], axis=0)
    return centre, lo, hi


def format_interval(ci, digits: int = 3) -> str:
    """[lo, hi] as '[0.123, 0.456]', or 'n/a' when there is no interval."""
    return f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]" if ci else "n/a"


def pyplot():
    """matplotlib's pyplot on the Agg backend (reports draw files, never windows)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def caption(fig, text: str, fontsize: float = 9) -> None:
    """The figure's caption (its suptitle), wrapped to the figure's width so that no line leaves it."""
    import textwrap

    width = max(20, int(fig.get_figwidth() * 72 / (fontsize * 0.6)))
    lines = [textwrap.fill(line, width) for line in text.splitlines()]
    fig.suptitle("\n".join(lines), fontsize=fontsize)


def save_figure(fig, path: Path) -> None:
    """Write the figure atomically (a report never holds half a figure) and close it."""
    atomic.write_bytes(path, figure_bytes(fig))


# Legends found over data while figures were drawn ('figure title: label'); reproduce.rebuild empties it
# before it rebuilds an experiment and reports what it holds after, so `make results` fails on such a figure.
LAYOUT_PROBLEMS: list[str] = []


def figure_bytes(fig) -> bytes:
    """The figure as PNG bytes at the reports' resolution; the figure is closed. A legend that covers data
    is recorded in LAYOUT_PROBLEMS (fit.plot.legend_overlaps)."""
    import io

    from tmcheck.empirics.fit.plot import legend_overlaps

    name = fig.get_suptitle()[:60] or "figure"
    LAYOUT_PROBLEMS.extend(f"{name}: {p}" for p in legend_overlaps(fig))

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=FIGURE_DPI)
    pyplot().close(fig)
    return buf.getvalue()


class Outputs:
    """A report's files, held in memory until every input has been read and every figure drawn, then
    written (each atomically): a report that fails on its inputs leaves every existing output as it was."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.files: dict[str, bytes] = {}

    def figure(self, name: str, fig) -> None:
        self.files[name] = figure_bytes(fig)

    def json(self, name: str, obj) -> None:
        self.files[name] = (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode()

    def text(self, name: str, text: str) -> None:
        self.files[name] = text.encode("utf-8")

    def write(self) -> list[str]:
        for name, data in self.files.items():
            atomic.write_bytes(self.directory / name, data)
        return list(self.files)

    def finish(self, report: dict, text: str) -> dict:
        """A sweep report's last step: report.json and report.md added, every file written; returns the report."""
        from tmcheck.empirics.sweep import layout

        self.json(layout.REPORT_JSON, report)
        self.text(layout.REPORT_MD, text)
        self.write()
        return report


def cell_axes(cells, width: float = 4.2, height: float = 3.6):
    """One panel per (d, β): a column per d, a row per β (largest first); panels of absent cells hidden."""
    plt = pyplot()
    dims = sorted({d for d, _ in cells})
    betas = sorted({b for _, b in cells}, reverse=True)
    fig, axes = plt.subplots(
        len(betas), len(dims), figsize=(width * len(dims), height * len(betas) + 0.8), squeeze=False
    )
    ax_of = {(d, b): axes[betas.index(b)][dims.index(d)] for d, b in cells}
    for ax in axes.flat:
        ax.set_visible(any(ax is a for a in ax_of.values()))
    return fig, ax_of


def legend_below(fig, axes, fontsize: float = 7, ncol: int = 4, **kwargs) -> float:
    """One legend for all `axes` (each label once) centred below the panels, outside every one of them;
    returns the fraction of the figure's height it takes, for tight_layout's rect=(0, that, 1, top)."""
    import math

    labels: dict = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            labels.setdefault(lab, h)
    if not labels:
        return 0.0
    ncol = min(len(labels), ncol)
    fig.legend(
        list(labels.values()), list(labels), loc="lower center", ncol=ncol, fontsize=fontsize, frameon=False, **kwargs
    )
    rows = math.ceil(len(labels) / ncol)
    return min(0.4, (0.1 + rows * fontsize * 1.7 / 72) / fig.get_figheight())


def draw_local_slopes(panels: dict, margin: float, xlabel: str, text: str, paper_margin: float | None = None):
    """The local slope α̂ of each method on its windows of sizes, with its 95% band, one panel per (d, β)
    over the prediction 2β/(2β+d) and its ±margin band (and the paper's ±paper_margin dotted), the legend
    below the panels: a bend shows as a falling curve, not as one averaged number.

    panels: {(d, β): [(label, color, marker, x, alpha, lo, hi), ...]}, x the windows' centres."""
    from tmcheck.theory.bounds import alpha_D

    fig, ax_of = cell_axes(list(panels))
    for (d, b), ax in ax_of.items():
        a = alpha_D(d, b)
        ax.axhspan(a - margin, a + margin, color="0.85", lw=0, label=f"2β/(2β+d) ± {margin:g}")
        ax.axhline(a, color="k", lw=1.0, label="predicted 2β/(2β+d)")
        for s in (-1, 1) if paper_margin is not None else ():
            ax.axhline(a + s * paper_margin, color="k", lw=0.6, ls=":", label=None if s > 0 else f"± {paper_margin:g}")
        xs = []
        for label, color, marker, x, y, lo, hi in panels[(d, b)]:
            x, y, lo, hi = (np.asarray(v, dtype=float) for v in (x, y, lo, hi))
            ax.fill_between(x, lo, hi, color=color, alpha=0.18, lw=0)
            ax.plot(x, y, color=color, marker=marker, ms=4, lw=1, label=label)
            xs.extend(x)
        ax.set_xscale("log")
        if xs:
            readable_log_ticks(ax, "x", min(xs) / 1.3, max(xs) * 1.3)
        ax.set_title(f"d = {d}, β = {b:g}", fontsize=9)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_ylabel("local slope α̂ (95% band)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    bottom = legend_below(fig, ax_of.values())
    caption(fig, text)
    fig.tight_layout(rect=(0, bottom, 1, 0.92))
    return fig


def tick_label(v: float) -> str:
    """A tick's label: 3 significant digits, thousands and millions as k and M ("0.05", "316", "3.16k",
    "1M"), never an exponent."""
    for scale, suffix in ((1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{v / scale:.3g}{suffix}"
    return f"{v:.3g}"


def readable_log_ticks(ax, axis: str, lo: float, hi: float) -> None:
    """Plain-number ticks on a log axis over [lo, hi] ("0.05", "4.5", never "6×10⁰"): evenly spaced
    values when the range is under a factor of 3, else the first of the 1-2-5, 1-2-3-5 and 1-9 steps of
    each decade that gives at least four ticks, labelled by ``tick_label``; minor ticks unlabelled."""
    import math

    from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullFormatter

    lo, hi = float(lo), float(hi)
    ticks: list[float] = []
    if hi / lo < 3:
        ticks = [t for t in MaxNLocator(5, steps=[1, 2, 2.5, 5, 10]).tick_values(lo, hi) if lo <= t <= hi]
    else:
        decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
        for steps in ((1, 2, 5), (1, 2, 3, 5), (1, 2, 3, 4, 5, 6, 7, 8, 9)):
            ticks = [m * 10.0**k for k in decades for m in steps if lo <= m * 10.0**k <= hi]
            if len(ticks) >= 4:
                break
    which = ax.yaxis if axis == "y" else ax.xaxis
    which.set_major_locator(FixedLocator(ticks))
    which.set_major_formatter(FuncFormatter(lambda v, _: tick_label(v)))
    which.set_minor_formatter(NullFormatter())


def cached_entry(id_path: Path, key: str, protocol: dict) -> Any:
    """The estimate stored under `key` in id.json if it was made with exactly `protocol`, else None."""
    id_path = Path(id_path)
    store = safeio.read_json_optional(id_path, "an ID store", {})
    entry = store.get(key) if isinstance(store, dict) else None
    if isinstance(entry, dict) and entry.get("protocol") == json.loads(json.dumps(protocol)):
        return entry["estimate"]
    return None


def id_difference(a: dict, b: dict) -> dict | None:
    """a["d"] - b["d"] with a LEVEL interval, from the two estimates' own intervals (each read as a
    normal one, the two independent): {"difference", "ci", "excludes_zero", "method"}; None when either
    has no interval."""
    from scipy.stats import norm

    if not a.get("d_ci") or not b.get("d_ci"):
        return None
    z = float(norm.ppf((1 + LEVEL) / 2))
    se = float(np.hypot((a["d_ci"][1] - a["d_ci"][0]) / (2 * z), (b["d_ci"][1] - b["d_ci"][0]) / (2 * z)))
    diff = float(a["d"] - b["d"])
    lo, hi = diff - z * se, diff + z * se
    return {
        "difference": diff,
        "ci": [lo, hi],
        "excludes_zero": not lo <= 0 <= hi,
        "method": f"normal approximation from the two {LEVEL:.0%} intervals, taken as independent",
    }


def cached_id(id_path: Path, key: str, protocol: dict, compute: Callable[[], Any], recompute: bool = False) -> Any:
    """The ID estimate stored under `key` in id.json if it was made with exactly `protocol` (and not
    `recompute`); otherwise `compute()` it and store it with its protocol (a changed protocol is
    recomputed, never reused). id.json holds {key: {"protocol", "estimate"}} for every kind of sweep."""
    id_path = Path(id_path)
    store = safeio.read_json_optional(id_path, "an ID store", {})
    if not isinstance(store, dict):
        raise ValueError(f"{id_path} is not an ID store (a JSON object)")
    want = json.loads(json.dumps(protocol))
    entry = store.get(key)
    if not recompute and isinstance(entry, dict) and entry.get("protocol") == want:
        return entry["estimate"]
    estimate = compute()
    store[key] = {"protocol": want, "estimate": estimate}
    atomic.write_json(id_path, store)
    return estimate
