"""The report of a pretraining sweep (kind "pretrain"): the paper's Figure 2 and Section 3 table.

For each corpus, the one exponent fit (report.common.fit_exponent -> tmcheck.empirics.fit.exponent_report)
of test loss against n on the sizes whose runs converged (stopped on their validation loss, not on the
step cap): the paper's log-log line and the offset law L = E + B n^-alpha, each with the interval whose
coverage was measured at this sweep's own design; the fit-range sensitivity and the curvature test;
and the prediction alpha_D = 2/(2+d) as a test, carrying the interval of the ID d-hat that
`tmcheck id corpus` stored in id.json. Writes report.md, report.json, fig_scaling.png (Figure 2
analogue, with the fitted laws' 95% bands) and fig_curves.png.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tmcheck.empirics.report.common import (
    FORMS,
    LEVEL,
    alpha_cell,
    capped_words,
    fit_exponent,
    format_interval,
    law_band,
    prediction_cell,
    prediction_of,
    pyplot,
    range_table,
    save_figure,
)
from tmcheck.empirics.sweep import SweepDir, layout
from tmcheck.util import atomic

COLORS = {
    "code": "tab:blue",
    "prose": "tab:red",
    "stories": "tab:green",
    "sql": "tab:purple",
    "prose-large": "tab:orange",
}
FIGURES = ("fig_scaling.png", "fig_curves.png")


def fit_corpus(
    rows: list[dict], id_entry: dict | None = None, bootstrap: int = 400, cap: int | None = None, seed: int = 0
) -> dict:
    """The exponent report of one corpus's rows (test loss against n), tested against 2/(2+d-hat)."""
    prediction = None
    if id_entry is not None:
        prediction = {"kind": "D", "beta": 1.0, "d_hat": id_entry["d"], "d_ci": id_entry["d_ci"]}
    return fit_exponent(
        [r["n"] for r in rows],
        [r["test_loss"] for r in rows],
        stops=[r.get("stop") for r in rows],
        cap=cap,
        prediction=prediction,
        bootstrap=bootstrap,
        seed=seed,
    )


def build(sweep: SweepDir, bootstrap: int = 400) -> dict:
    """Fit every corpus of the sweep, draw the figures, write report.md/.json; returns the report dict."""
    config = sweep.read_config()
    preset = sweep.preset()
    rows = sweep.rows()
    if not rows:
        raise ValueError(f"{sweep.path} has no finished runs yet (results.jsonl is empty); run the sweep first")
    ids = json.loads(sweep.id_path.read_text()) if sweep.id_path.exists() else {}
    corpora = [c for c in config["corpora"] if any(r["corpus"] == c for r in rows)]
    table = {}
    for c in corpora:
        entry = fit_corpus([r for r in rows if r["corpus"] == c], ids.get(c), bootstrap, preset.train.max_steps)
        if c in ids:
            entry["id"] = {k: ids[c][k] for k in ("d", "d_ci", "alpha_D", "alpha_D_ci")}
        table[c] = entry
    report = {
        "kind": "pretrain",
        "sweep": str(sweep.path),
        "preset": preset.name,
        "corpora": corpora,
        "table": table,
        "runs": len(rows),
        "train_seconds": float(sum(r["seconds"] for r in rows)),
        "stops": {s: sum(r.get("stop") == s for r in rows) for s in ("patience", "cap")},
        "files": [layout.REPORT_MD, layout.REPORT_JSON, *FIGURES],
    }
    figure_scaling(rows, table, sweep.path / FIGURES[0], bootstrap)
    figure_curves(sweep, rows, sweep.path / FIGURES[1])
    atomic.write_json(sweep.path / layout.REPORT_JSON, report)
    atomic.write_text(sweep.path / layout.REPORT_MD, markdown(report, preset, ids))
    return report


def summary(report: dict) -> str:
    files = ", ".join(str(Path(report["sweep"]) / f) for f in report["files"])
    return f"{fits_table(report)}\n\n{prediction_table(report)}\n\n{verdict_lines(report)}\n\nwritten: {files}"


def fits_table(report: dict) -> str:
    """Markdown: per corpus, the loglog and offset α̂ with their intervals (method, measured coverage),
    the curvature test and the runs left out."""
    lines = [
        f"| corpus | sizes fitted | loglog α̂ ({LEVEL:.0%} interval) | offset α̂ ({LEVEL:.0%} interval), E | "
        "curvature (offset vs power law) | runs on the step cap |",
        "|---|---|---|---|---|---|",
    ]
    for c, e in report["table"].items():
        rep = e["exponent"]
        curv = rep["curvature"] if rep else None
        ctext = f"{'floor' if curv['floor'] else 'none'} (p = {curv['p_value']:.2g})" if curv else "n/a"
        left = ", ".join(f"n = {x['n']:,.0f} ({x['capped']}/{x['runs']})" for x in e["capped"]) or "none"
        lines.append(
            f"| {c} | {len(e['fitted_sizes'])} of {len(e['sizes'])} | {alpha_cell(e, 'loglog')} | "
            f"{alpha_cell(e, 'offset')} | {ctext} | {left} |"
        )
    return "\n".join(lines)


def prediction_table(report: dict) -> str:
    """Markdown: per corpus, d-hat with its interval, alpha_D = 2/(2+d-hat) with the interval d-hat's
    carries, and each form's test (interval of α̂ − α_D, p-value, verdict)."""
    lines = [
        f"| corpus | d̂ ({LEVEL:.0%} CI) | α_D = 2/(2+d̂) ({LEVEL:.0%}) | loglog: α̂ − α_D, verdict | "
        "offset: α̂ − α_D, verdict |",
        "|---|---|---|---|---|",
    ]
    for c, e in report["table"].items():
        if "id" not in e:
            lines.append(f"| {c} | not measured | n/a | n/a | n/a |")
            continue
        t = prediction_of(e, "loglog")
        pred = f"{t['alpha_pred']:.3f} {format_interval(t['alpha_pred_ci'])}" if t else f"{e['id']['alpha_D']:.3f}"
        lines.append(
            f"| {c} | {e['id']['d']:.2f} {format_interval(e['id']['d_ci'], 2)} | {pred} | "
            f"{prediction_cell(e, 'loglog')} | {prediction_cell(e, 'offset')} |"
        )
    return "\n".join(lines)


def verdict_lines(report: dict) -> str:
    """One computed paragraph per corpus: the fits, tests, curvature and range sensitivity in words."""
    out = []
    for c, e in report["table"].items():
        words = e["exponent"]["words"] if e["exponent"] else e["withheld"]
        out.append(f"- **{c}**: {words} ({capped_words(e)}.)")
    return "\n".join(out)


def markdown(report: dict, preset, ids: dict) -> str:
    any_id = next(iter(ids.values()), None)
    opts = ""
    if any_id:
        eo, io = any_id["embed_options"], any_id["id_options"]
        opts = (
            f"ID protocol: {eo['tokens_per_doc']} tokens per test document from a {eo['window']} window of "
            f"{eo['context']} tokens, layer {eo['layer'] or 'last'} ({eo['final_ln']} the final LayerNorm), "
            f"estimator `{io['estimator']}` with K={io['k']}, protocol `{io['protocol']}` "
            f"(batches of {io['batch_size']}); β = 1 in the tables.\n"
        )
    m, t = preset.model, preset.train
    schedule = (
        f"a constant rate after warmup until the validation loss has not improved for {t.patience} "
        f"evaluations (every {t.eval_every} steps), then a {t.cooldown}-step cooldown, with a cap of "
        f"{t.max_steps} steps"
        if t.schedule == "plateau"
        else f"a cosine decay over {t.max_steps} steps with early stopping on validation loss (patience {t.patience})"
    )
    stops = report["stops"]
    parts = [
        f"# Data-scaling report: preset `{preset.name}`",
        "",
        f"Model: GPT, {m.n_layer} layers, {m.n_head} heads, width {m.n_embd}, context {m.block_size}, vocabulary "
        f"{preset.vocab_size}; batches of {preset.batch_size} sequences, {schedule}. {report['runs']} runs "
        f"({stops['patience']} stopped on their validation loss, {stops['cap']} on the step cap), "
        f"{report['train_seconds'] / 60:.1f} minutes of training. Test loss at the best-validation checkpoint. "
        f"Preset notes: {preset.notes}.",
        "",
        "## Fits",
        "",
        "Two laws per corpus, on the sizes whose runs all stopped on their validation loss: the paper's "
        "least-squares line of log test loss against log n (no irreducible term), and the offset law "
        "L = E + B·n^(−α) (variable projection). Each interval is the one whose coverage, measured by "
        "simulating this sweep's own design (its sizes, its seeds, the noise its seeds show), is best; the "
        "coverage printed is that measurement (target 93% at nominal 95%).",
        "",
        fits_table(report),
        "",
        "## The prediction as a test",
        "",
        'α_D = 2/(2+d̂) with d̂\'s interval carried into it; the verdict is "consistent at 95%" when the '
        '95% interval of α̂ − α_D contains 0 and is at most ±0.1 wide, "inconsistent" when it excludes 0, '
        'and "not decidable at this precision" otherwise. α_D uses the ID d̂ of the test set embedded by '
        "the model trained on the full training split.",
        opts,
        prediction_table(report),
        "",
        "## Verdicts in words",
        "",
        verdict_lines(report),
        "",
        "## Fit-range sensitivity (loglog α̂ on sub-ranges, with the verdict on each)",
        "",
    ]
    for c, e in report["table"].items():
        parts += [f"**{c}**", "", range_table(e), ""]
    parts += ["![test loss against n](fig_scaling.png)", "", "![training curves](fig_curves.png)", ""]
    return "\n".join(parts)


def figure_scaling(rows: list[dict], table: dict, path: Path, bootstrap: int = 400) -> None:
    """Figure 2 analogue: test loss vs n (log-log), the offset law and the loglog line with their 95%
    bands, runs on the step cap hollow (left out of the fits), and the predicted slope."""
    from matplotlib.ticker import FormatStrFormatter, NullFormatter

    plt = pyplot()
    corpora = list(table)
    fig, axes = plt.subplots(1, len(corpora), figsize=(4.8 * len(corpora), 4.2), squeeze=False)
    for ax, c in zip(axes[0], corpora):
        e, color = table[c], COLORS.get(c, "black")
        pts = [r for r in rows if r["corpus"] == c]
        n = np.array([r["n"] for r in pts], float)
        y = np.array([r["test_loss"] for r in pts], float)
        used = np.isin(n, e["fitted_sizes"])
        ax.scatter(n[used], y[used], s=18, color=color, alpha=0.8, label="runs (all seeds)")
        if (~used).any():
            ax.scatter(
                n[~used], y[~used], s=18, facecolors="none", edgecolors=color, label="on the step cap (left out)"
            )
        rep = e["exponent"]
        if rep is not None:
            grid = np.geomspace(n[used].min(), n[used].max(), 60)
            for form, ls in zip(FORMS, ("--", "-")):
                centre, lo, hi = law_band(n[used], y[used], form, grid, bootstrap)
                f = rep["fits"][form]
                label = f"{form}: α̂ = {f['alpha']:.3f} [{f['interval']['lo']:.3f}, {f['interval']['hi']:.3f}]" + (
                    f", E = {f['params']['E']:.2f}" if form == "offset" else ""
                )
                ax.plot(grid, centre, color=color, ls=ls, lw=1.8, label=label)
                ax.fill_between(grid, lo, hi, color=color, alpha=0.18, lw=0)
            t = rep["prediction"]["loglog"] if rep["prediction"] else None
            if t is not None:
                n0 = float(np.exp(np.log(n[used]).mean()))  # anchor the predicted slope at the fit's centre
                p = rep["fits"]["loglog"]["params"]
                y0 = p["B"] * n0 ** -p["alpha"]
                ax.plot(
                    grid,
                    y0 * (grid / n0) ** -t["alpha_pred"],
                    color="black",
                    ls=":",
                    lw=1.2,
                    label=f"predicted slope α_D = {t['alpha_pred']:.3f} (d̂ = {e['id']['d']:.1f})",
                )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(y.min() / 1.25, y.max() * 1.25)  # the data decide the range; the prediction may leave it
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xticks(sorted(set(n)), [_short(v) for v in sorted(set(n))])
        ax.yaxis.set_major_formatter(FormatStrFormatter("%.2g"))
        ax.yaxis.set_minor_formatter(FormatStrFormatter("%.2g"))
        ax.tick_params(axis="y", which="minor", labelsize=7)
        ax.set_xlabel("training-set size n (tokens)")
        ax.set_ylabel("test loss (nats per token)")
        ax.set_title(f"{c} (shaded: {LEVEL:.0%} bands, parametric bootstrap)", fontsize=9)
        ax.legend(fontsize=7)
        ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    save_figure(fig, path)


def _short(v: float) -> str:
    """12_345 -> '12.3k', 2_500_000 -> '2.5M' (tick labels)."""
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= div:
            return f"{v / div:.3g}{suffix}"
    return f"{v:.0f}"


def figure_curves(sweep: SweepDir, rows: list[dict], path: Path) -> None:
    """Validation loss against optimizer step for every run; colour = n, line style = seed."""
    plt = pyplot()

    corpora = list(dict.fromkeys(r["corpus"] for r in rows))
    fig, axes = plt.subplots(1, len(corpora), figsize=(4.6 * len(corpora), 3.8), squeeze=False)
    cmap = plt.get_cmap("viridis")
    for ax, c in zip(axes[0], corpora):
        pts = sorted((r for r in rows if r["corpus"] == c), key=lambda r: (r["n"], r["seed"]))
        sizes = sorted({r["n"] for r in pts})
        for r in pts:
            res = json.loads((sweep.run_dir(r["run"]) / layout.TRAIN_RESULT).read_text())
            h = res["history"]
            color = cmap(sizes.index(r["n"]) / max(1, len(sizes) - 1))
            ax.plot(
                [p["step"] for p in h],
                [p["val_loss"] for p in h],
                color=color,
                ls="-" if r["seed"] == pts[0]["seed"] else ":",
                label=f"n = {r['n']:,}" if r["seed"] == pts[0]["seed"] else None,
            )
            ax.scatter([res["best_step"]], [res["best_val"]], color=color, s=12, zorder=3)
        ax.set_xlabel("optimizer step")
        ax.set_ylabel("validation loss (nats per token)")
        ax.set_title(c)
        ax.legend(fontsize=7)
        ax.grid(True, alpha=0.3)
    first = min(r["seed"] for r in rows)
    fig.suptitle(
        f"Validation loss during training (dots: best-validation checkpoint, whose test loss is reported; "
        f"solid: seed {first}, dotted: other seeds)",
        fontsize=9,
    )
    fig.tight_layout()
    save_figure(fig, path)
