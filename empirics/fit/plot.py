"""Figures of fitted scaling laws (paper Figs. 2-3 style): data, law and a visible uncertainty band.

One colour per group (1-D laws) or per D slice (the joint law); the points of a group and its curve
and band share the colour, and the legend names the law, the exponent's interval and the band's level
and method. Written with `tmcheck.util.atomic.savefig`.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import numpy as np

from tmcheck.util.atomic import savefig

LAW_TEXT = {"offset": "E + B n^-α", "power": "B n^-α", "loglog": "log-log line", "joint": "E + A/N^α + B/D^β"}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def tick_text(v: float) -> str:
    """3000 as "3,000", 2e6 as "2e6", 0.05 as "0.05": short, plain text (no mathtext)."""
    if not np.isfinite(v) or v == 0:
        return f"{v:g}"
    if 1e3 <= abs(v) < 1e5:
        return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.1f}"
    if abs(v) >= 1e5 or abs(v) < 1e-3:
        mantissa, exponent = f"{v:.2e}".split("e")
        return f"{float(mantissa):g}e{int(exponent)}"
    return f"{v:.3g}"


def readable_log_axes(ax) -> None:
    """Log axes a paper would print: plain numbers at 1-2-5 (or every digit) steps chosen by the span,
    no labelled minor ticks, so short spans never read "3×10³4×10³" or "6×10⁰"."""
    from matplotlib import ticker

    for axis, (lo, hi) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        if axis.get_scale() != "log" or not (0 < lo < hi):
            continue
        decades = np.log10(hi / lo)
        subs = (1.0,) if decades > 4 else (1.0, 2.0, 5.0) if decades > 1.2 else (1.0, 2.0, 3.0, 5.0, 7.0)
        if decades < 0.4:
            subs = tuple(float(v) for v in range(1, 10))
        axis.set_major_locator(ticker.LogLocator(base=10, subs=subs, numticks=12))
        axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: tick_text(v)))
        axis.set_minor_locator(ticker.LogLocator(base=10, subs="auto", numticks=12))
        axis.set_minor_formatter(ticker.NullFormatter())


def thin_overlapping_ticks(fig, ax) -> None:
    """Hide every other tick label of an axis until its labels no longer overlap (after drawing)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for axis in (ax.xaxis, ax.yaxis):
        for _ in range(4):
            labels = [t for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
            boxes = [t.get_window_extent(renderer) for t in labels]
            if not any(a.overlaps(b) for a, b in pairwise(boxes)):
                break
            for t in labels[1::2]:
                t.set_visible(False)


def legend_outside(ax, where: str = "right", **kwargs):
    """The axes' legend outside its panel, to its right or below its x label (tight_layout then makes room)."""
    if where == "below":
        return ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.24), borderaxespad=0.0, **kwargs)
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, **kwargs)


def _data_paths(ax):
    """(artist, display-coordinate path, filled) for what an axes plots in data coordinates: lines, markers,
    scatter points, bands and error bars; reference lines and spans (axhline, axhspan: drawn in axes
    coordinates on one side) are not data."""
    from matplotlib.path import Path as MPath

    for art in [*ax.lines, *ax.collections, *ax.patches]:
        if not art.get_visible():
            continue
        trans = art.get_transform()
        if not trans.contains_branch(ax.transData):  # offsets-only collections (scatter) have transData offsets
            offsets = art.get_offsets() if hasattr(art, "get_offsets") else None
            if offsets is not None and len(offsets) and art.get_offset_transform().contains_branch(ax.transData):
                pts = art.get_offset_transform().transform(np.asarray(offsets, dtype=float))
                yield art, MPath(pts), False
            continue
        paths = art.get_paths() if hasattr(art, "get_paths") else [art.get_path()]
        for path in paths:
            yield art, trans.transform_path(path), hasattr(art, "get_paths") and art.get_facecolor().size > 0


def legend_overlaps(fig) -> list[str]:
    """Each legend (of an axes, or of the figure) whose box meets data it sits over: 'title: label' per
    artist, empty when every legend is clear of the data. Draws the figure first."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    found = []
    legends = [(ax, ax.get_legend()) for ax in fig.axes] + [(ax, leg) for leg in fig.legends for ax in fig.axes]
    for ax, leg in legends:
        if leg is None or not leg.get_visible() or not ax.get_visible():
            continue
        box = leg.get_window_extent(renderer)
        if not box.overlaps(ax.get_window_extent(renderer)):
            continue
        for art, path, filled in _data_paths(ax):
            verts = path.vertices
            if box.count_contains(verts) or (len(verts) > 1 and path.intersects_bbox(box, filled=filled)):
                found.append(f"{ax.get_title() or 'panel'}: {art.get_label()}")
    return found


def _band(samples_pred, level):
    return np.nanquantile(samples_pred, [(1 - level) / 2, (1 + level) / 2], axis=0)


def plot_1d(
    curves: list[dict],
    path: Path,
    form: str,
    level: float = 0.95,
    xlabel: str = "n",
    ylabel: str = "loss",
    bootstrap: int = 400,
    seed: int = 0,
) -> None:
    """curves: [{"label", "n", "y", "entry"}] with `entry` a `fit_exponent` result for those rows.
    The band is pointwise, from the parametric bootstrap of the whole law."""
    from tmcheck.empirics.fit.intervals import interval_batch

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    colors = plt.get_cmap("tab10")
    banded = 0
    for i, c in enumerate(curves):
        color = colors(i % 10)
        n, y, e = np.asarray(c["n"], float), np.asarray(c["y"], float), c["entry"]
        grid = np.geomspace(n.min(), n.max(), 120)
        p = e["params"]
        boot = interval_batch(n, y[None], form, level, ("parametric",), bootstrap, seed, keep_samples=True)
        s = boot["parametric"]
        preds = s["E_samples"][0][:, None] + s["B_samples"][0][:, None] * grid[None, :] ** -s["samples"][0][:, None]
        lo, hi = _band(preds, level)
        iv = e["interval"]
        shown = np.isfinite(iv["lo"]) and np.isfinite(lo).all() and np.isfinite(hi).all()
        interval = f"[{iv['lo']:.3f}, {iv['hi']:.3f}] ({iv['method']})" if shown else "(no interval)"
        ax.scatter(n, y, s=16, color=color, zorder=3)
        ax.plot(
            grid,
            p["E"] + p["B"] * grid ** -p["alpha"],
            color=color,
            lw=2,
            label=f"{c['label']}: α̂ = {p['alpha']:.3f} {interval}",
        )
        if shown:  # a withheld interval (a degenerate fit) gets no band either
            banded += 1
            ax.fill_between(grid, lo, hi, color=color, alpha=0.3, lw=0)
            ax.plot(grid, lo, grid, hi, color=color, lw=0.6, ls="--")  # band edges stay visible when thin
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    band = f"shaded: {level:.0%} pointwise band (parametric bootstrap)" if banded else "no band (no interval)"
    ax.set_title(f"{LAW_TEXT[form]}; {band}", fontsize=9)
    legend_outside(ax, fontsize=7, title=f"{form} law, α̂ with its {level:.0%} interval", title_fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    readable_log_axes(ax)
    fig.tight_layout()
    thin_overlapping_ticks(fig, ax)
    savefig(fig, path, dpi=120)
    plt.close(fig)


def plot_joint(result, x, y, path: Path, level: float = 0.95, labels=("N", "D"), ylabel: str = "loss") -> None:
    """The joint law against N at three D slices (terciles of log D); each point takes the colour of its
    slice; bands from `result.samples` (the bootstrap of `fit_law`) when present."""
    from tmcheck.empirics.fit.law import predict

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    colors = plt.get_cmap("viridis")
    logD = np.log(x[:, 1])
    edges = np.quantile(logD, [0, 1 / 3, 2 / 3, 1])
    which = np.clip(np.searchsorted(edges[1:-1], logD, side="right"), 0, 2)
    for k in range(3):
        sel = which == k
        if not sel.any():
            continue
        color = colors(k / 2 * 0.85)
        Dk = float(np.exp(np.median(logD[sel])))
        xs = np.geomspace(x[sel, 0].min(), x[sel, 0].max(), 120)
        grid = np.stack([xs, np.full_like(xs, Dk)], axis=1)
        ax.scatter(x[sel, 0], y[sel], s=10, color=color, alpha=0.7)
        ax.plot(
            xs,
            predict("joint", result.params, grid),
            color=color,
            lw=2,
            label=f"{labels[1]} ≈ {Dk:.2g} (points with {labels[1]} in [{np.exp(edges[k]):.2g}, "
            f"{np.exp(edges[k + 1]):.2g}])",
        )
        if result.samples:
            lo, hi = _band(np.array([predict("joint", s, grid) for s in result.samples]), level)
            ax.fill_between(xs, lo, hi, color=color, alpha=0.3, lw=0)
            ax.plot(xs, lo, xs, hi, color=color, lw=0.6, ls="--")
    p = result.params
    band = f"shaded: {level:.0%} pointwise bootstrap band" if result.samples else "no band (--bootstrap 0)"
    ax.set_title(f"{LAW_TEXT['joint']}: E={p['E']:.3g}, α={p['alpha']:.3f}, β={p['beta']:.3f}\n{band}", fontsize=9)
    ax.set_xscale("log")
    ax.set_yscale("log")
    from tmcheck.empirics.fit.columns import axis_label  # sympy: imported where a joint figure is drawn

    ax.set_xlabel(axis_label(labels[0]))
    ax.set_ylabel(ylabel)
    legend_outside(ax, fontsize=7, title="joint law at three D slices", title_fontsize=7)
    readable_log_axes(ax)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    thin_overlapping_ticks(fig, ax)
    savefig(fig, path, dpi=120)
    plt.close(fig)
