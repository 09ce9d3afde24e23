"""The report of a pretraining sweep (kind "pretrain"): the paper's Figure 2 and Section 3 table.

For each corpus: the observed exponent alpha_hat_D (report.common.fit_exponent: log test loss
against log n, bootstrap interval over sizes) against alpha_D = 2 beta / (2 beta + d) from the ID
that `tmcheck id corpus` measured and stored in id.json (keyed by corpus, with its embedding and
estimator options). Writes report.md, report.json, fig_scaling.png (Figure 2 analogue) and
fig_curves.png.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tmcheck.util import atomic
from tmcheck.empirics.report.common import fit_exponent, format_interval, pyplot, save_figure
from tmcheck.empirics.sweep import SweepDir, layout

COLORS = {"code": "tab:blue", "prose": "tab:red", "stories": "tab:green", "sql": "tab:purple", "prose-large": "tab:orange"}


FIGURES = ("fig_scaling.png", "fig_curves.png")


def fit_corpus(rows: list[dict], bootstrap: int = 1000, seed: int = 0) -> dict:
    """alpha_hat_D of one corpus's rows (test loss against n)."""
    return fit_exponent([r["n"] for r in rows], [r["test_loss"] for r in rows], bootstrap, seed)


def build(sweep: SweepDir, bootstrap: int = 1000) -> dict:
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
        entry = fit_corpus([r for r in rows if r["corpus"] == c], bootstrap)
        if c in ids:
            e = ids[c]
            entry.update(d=e["d"], d_ci=e["d_ci"], alpha_D=e["alpha_D"], alpha_D_ci=e["alpha_D_ci"], beta=e["beta"],
                         alpha_D_beta=e["alpha_D_beta"], difference=entry["alpha_hat"] - e["alpha_D"])
            lo, hi = entry["ci"] or (entry["alpha_hat"],) * 2
            entry["predicted_in_ci"] = bool(lo <= e["alpha_D"] <= hi)
        table[c] = entry
    report = {"kind": "pretrain", "sweep": str(sweep.path), "preset": preset.name, "corpora": corpora,
              "table": table, "runs": len(rows), "train_seconds": float(sum(r["seconds"] for r in rows)),
              "files": [layout.REPORT_MD, layout.REPORT_JSON, *FIGURES]}
    figure_scaling(rows, table, sweep.path / FIGURES[0])
    figure_curves(sweep, rows, sweep.path / FIGURES[1])
    atomic.write_json(sweep.path / layout.REPORT_JSON, report)
    atomic.write_text(sweep.path / layout.REPORT_MD, markdown(report, preset, ids))
    return report


def summary(report: dict) -> str:
    files = ", ".join(str(Path(report["sweep"]) / f) for f in report["files"])
    return f"{markdown_table(report)}\n\nwritten: {files}"


def markdown_table(report: dict) -> str:
    lines = ["| corpus | d (95% CI) | α_D = 2/(2+d) (CI) | α̂_D observed (95% CI) | α̂_D − α_D | α_D in CI of α̂_D |",
             "|---|---|---|---|---|---|"]
    for c, e in report["table"].items():
        if "d" in e:
            lines.append(f"| {c} | {e['d']:.1f} {format_interval(e['d_ci'], 1)} | {e['alpha_D']:.3f} {format_interval(e['alpha_D_ci'])} "
                         f"| {e['alpha_hat']:.3f} {format_interval(e['ci'])} | {e['difference']:+.3f} "
                         f"| {'yes' if e['predicted_in_ci'] else 'no'} |")
        else:
            lines.append(f"| {c} | not measured | n/a | {e['alpha_hat']:.3f} {format_interval(e['ci'])} | n/a | n/a |")
    return "\n".join(lines)


def markdown(report: dict, preset, ids: dict) -> str:
    any_id = next(iter(ids.values()), None)
    opts = ""
    if any_id:
        eo, io = any_id["embed_options"], any_id["id_options"]
        opts = (f"ID protocol: {eo['tokens_per_doc']} tokens per test document from a {eo['window']} window of "
                f"{eo['context']} tokens, layer {eo['layer'] or 'last'} ({eo['final_ln']} the final LayerNorm), "
                f"estimator `{io['estimator']}` with K={io['k']}, protocol `{io['protocol']}` "
                f"(batches of {io['batch_size']}); β = 1 in the table"
                + (f", α_D at β = {io['beta']}: " + ", ".join(f"{c} {e['alpha_D_beta']:.3f}" for c, e in ids.items())
                   if io["beta"] != 1 else "") + ".\n")
    m = preset.model
    return (f"# Data-scaling report: preset `{preset.name}`\n\n"
            f"Model: GPT, {m.n_layer} layers, {m.n_head} heads, width {m.n_embd}, context {m.block_size}, "
            f"vocabulary {preset.vocab_size}; up to {preset.train.max_steps} steps of {preset.batch_size} sequences, "
            f"early stopping on validation loss (patience {preset.train.patience}). "
            f"{report['runs']} runs, {report['train_seconds'] / 60:.1f} minutes of training.\n\n"
            f"α̂_D is the least-squares slope of log test loss against log n (test loss at the best-validation "
            f"checkpoint; all seeds; 95% bootstrap interval resampling sizes). "
            f"α_D = 2/(2+d) uses the ID d of the test set embedded by the model trained on the full training split.\n"
            f"{opts}\n{markdown_table(report)}\n\n"
            f"![test loss against n](fig_scaling.png)\n\n![training curves](fig_curves.png)\n")


def figure_scaling(rows: list[dict], table: dict, path: Path) -> None:
    """Figure 2 analogue: test loss vs n (log-log), fitted law, and a line of the predicted slope."""
    from matplotlib.ticker import FormatStrFormatter, NullFormatter

    plt = pyplot()

    corpora = list(table)
    fig, axes = plt.subplots(1, len(corpora), figsize=(4.6 * len(corpora), 4.0), squeeze=False)
    for ax, c in zip(axes[0], corpora):
        e, color = table[c], COLORS.get(c, "black")
        pts = [r for r in rows if r["corpus"] == c]
        n = np.array([r["n"] for r in pts], float)
        y = np.array([r["test_loss"] for r in pts], float)
        ax.scatter(n, y, s=18, color=color, alpha=0.7, label="runs (all seeds)")
        grid = np.geomspace(n.min(), n.max(), 50)
        B, a = e["params"]["B"], e["alpha_hat"]
        ax.plot(grid, B * grid**-a, color=color, lw=2, label=f"fit: α̂_D = {a:.3f}")
        if "alpha_D" in e:
            n0 = float(np.exp(np.log(n).mean()))  # anchor the predicted slope at the fit's centre
            y0 = B * n0**-a
            ax.plot(grid, y0 * (grid / n0) ** -e["alpha_D"], color="black", ls="--", lw=1.2,
                    label=f"predicted slope: α_D = {e['alpha_D']:.3f} (d = {e['d']:.1f})")
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
        ax.set_title(c)
        ax.legend(fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    save_figure(fig, path)


def _short(v: float) -> str:
    """12_345 -> '12k', 2_500_000 -> '2.5M' (tick labels)."""
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
            ax.plot([p["step"] for p in h], [p["val_loss"] for p in h], color=color,
                    ls="-" if r["seed"] == pts[0]["seed"] else ":",
                    label=f"n = {r['n']:,}" if r["seed"] == pts[0]["seed"] else None)
            ax.scatter([res["best_step"]], [res["best_val"]], color=color, s=12, zorder=3)
        ax.set_xlabel("optimizer step")
        ax.set_ylabel("validation loss (nats per token)")
        ax.set_title(c)
        ax.legend(fontsize=7)
        ax.grid(True, alpha=0.3)
    first = min(r["seed"] for r in rows)
    fig.suptitle(f"Validation loss during training (dots: best-validation checkpoint, whose test loss is reported; "
                 f"solid: seed {first}, dotted: other seeds)", fontsize=9)
    fig.tight_layout()
    save_figure(fig, path)
