"""The figure of the ID ablations (paper Figure 4): d-hat against non-embedding parameters, embedding
width, layer and context position (the panels a result holds); one line per estimator, its 95%
interval as a band."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tmcheck.empirics.report.common import caption as wrap_caption
from tmcheck.empirics.report.common import pyplot, save_figure

TITLES = {
    "params": ("ID vs. number of parameters", "non-embedding parameters N", True),
    "width": ("ID vs. embedding width", "embedding width (hidden size)", True),
    "layer": ("ID across layers", "layer (0 = input embeddings)", False),
    "position": ("ID across context position", "token position in the window (0-based; bins)", True),
}
COLORS = {
    "mle": "tab:blue",
    "twonn": "tab:orange",
    "gride": "tab:green",
    "mle-mean": "tab:purple",
    "twonn-mle": "tab:red",
    "mle-curve": "tab:brown",
}


def _short(v: float) -> str:
    """Tick labels: 12_345 -> '12.3k', 10_795_392 -> '10.8M', 3.5 -> '3.5'."""
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= div:
            return f"{v / div:.3g}{suffix}"
    return f"{v:.3g}"


def _bin(positions) -> str:
    lo, hi = positions
    return str(lo) if hi == lo + 1 else f"{lo}-{hi - 1}"


def panels(result: dict) -> list[str]:
    """The panels the result holds, in the paper's order (params, width, layer, position)."""
    return [p for p in TITLES if result["panels"].get(p) is not None]


def draw(result: dict):
    """The figure of the measured panels only (a panel a result lacks is not drawn: one model gives no
    parameter or width curve), in a 2x2 grid when there are four, else in one row. Returns the figure."""
    plt = pyplot()
    shown = panels(result)
    if not shown:
        raise ValueError("the ablation result holds no panel to draw")
    rows, cols = (2, 2) if len(shown) == 4 else (1, len(shown))
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.9 * rows + 0.5), squeeze=False)
    banded = False
    for ax, panel in zip(axes.flat, shown, strict=True):
        title, xlabel, logx = TITLES[panel]
        data = result["panels"][panel]
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("estimated ID d-hat")
        ax.grid(True, which="both", alpha=0.3)
        for name in result["options"]["estimators"]:
            pts = [p for p in data["points"] if p["estimates"][name]["d"] is not None]  # refused clouds left out
            x = np.array([p["x"] for p in pts], float)
            d = np.array([p["estimates"][name]["d"] for p in pts])
            cis = [p["estimates"][name]["ci"] for p in pts]
            ax.plot(x, d, marker="o", ms=4, color=COLORS.get(name), label=name)
            if pts and all(c is not None for c in cis):
                ax.fill_between(
                    x,
                    [c[0] for c in cis],
                    [c[1] for c in cis],
                    color=COLORS.get(name),
                    alpha=0.2,
                    label=f"{name} 95% interval",
                )
                banded = True
        if logx:
            ax.set_xscale("log")
            ticks = sorted({p["x"] for p in data["points"]})
            labels = (
                [_bin(p["positions"]) for p in sorted(data["points"], key=lambda p: p["x"])]
                if panel == "position"
                else [_short(v) for v in ticks]
            )
            ax.set_xticks(ticks, labels, fontsize=7, rotation=30 if panel == "position" else 0)
            ax.minorticks_off()
        else:
            ax.set_xticks(sorted({int(p["x"]) for p in data["points"]}))
        where = f"; model {data['model']}" if "model" in data else f"; depth {data['depth']}" if "depth" in data else ""
        ax.text(0.02, 0.02, f"{data['n_points']} points per estimate{where}", transform=ax.transAxes, fontsize=7)
        ax.legend(fontsize=7, loc="upper left" if panel != "position" else "upper right")
    text = f"Intrinsic dimension ablations on {result['source']} (MLE k = {result['options']['k']})"
    if banded:
        text += f"\nbands: 95% intervals ({result['intervals']})"
    wrap_caption(fig, text)
    fig.tight_layout()
    return fig


def figure(result: dict, path: Path) -> None:
    """Draw the ablation figure and write it atomically to `path`."""
    save_figure(draw(result), path)
