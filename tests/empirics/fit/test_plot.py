"""`tmcheck fit --plot` figures a paper would print: no overlapping or clipped text, plain log ticks,
and no caption describing a band that is not drawn."""

from __future__ import annotations

import matplotlib.text
import numpy as np
import pytest

from tmcheck.empirics.fit import fit_exponent, fit_law
from tmcheck.empirics.fit import plot as fit_plot


def texts_overlap_or_clip(fig) -> list[str]:
    """Pairs of visible texts whose boxes overlap, and texts outside the figure, after drawing."""
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    W, H = fig.canvas.get_width_height()
    ticks, texts = set(), []
    for ax in fig.axes:
        for axis, lo, hi in ((ax.xaxis, ax.bbox.x0, ax.bbox.x1), (ax.yaxis, ax.bbox.y0, ax.bbox.y1)):
            for t in axis.get_ticklabels(which="both"):
                ticks.add(id(t))
                b = t.get_window_extent(r)
                mid = (b.x0 + b.x1) / 2 if axis is ax.xaxis else (b.y0 + b.y1) / 2
                if lo - 1 <= mid <= hi + 1:  # ticks outside the view are not drawn
                    texts.append(t)
    texts += [t for t in fig.findobj(matplotlib.text.Text) if id(t) not in ticks]
    texts = [t for t in texts if t.get_visible() and t.get_text().strip()]
    boxes = [(t.get_text(), t.get_window_extent(r)) for t in texts]
    bad = [f"clipped: {s!r}" for s, b in boxes if b.x0 < -1 or b.y0 < -1 or b.x1 > W + 1 or b.y1 > H + 1]
    for i, (s, a) in enumerate(boxes):
        for s2, b in boxes[i + 1 :]:
            if a.overlaps(b) and a.width > 0 and b.width > 0:
                ov = (min(a.x1, b.x1) - max(a.x0, b.x0)) * (min(a.y1, b.y1) - max(a.y0, b.y0))
                if ov > 4:  # a pixel or two of touching is not an overlap a reader sees
                    bad.append(f"overlap: {s!r} / {s2!r}")
    return bad


@pytest.fixture
def capture(monkeypatch):
    figs = []
    monkeypatch.setattr(fit_plot, "savefig", lambda fig, path, **kw: figs.append(fig))
    monkeypatch.setattr(fit_plot._pyplot(), "close", lambda fig: None)
    return figs


def _curve(n, alpha=0.3, noise=0.01, seed=0):
    rng = np.random.default_rng(seed)
    n = np.repeat(n, 3)
    y = (0.5 + 4 * n**-alpha) * np.exp(noise * rng.standard_normal(len(n)))
    return n, y


@pytest.mark.parametrize("span", [(3e3, 6e3), (1e2, 1e4), (1e5, 1e9)])
def test_1d_figures_have_no_overlapping_or_clipped_text(capture, tmp_path, span):
    n, y = _curve(np.geomspace(*span, 5))
    entry = fit_exponent(n, y, form="offset", coverage_reps=20, bootstrap=40)
    fit_plot.plot_1d(
        [{"label": "all runs", "n": n, "y": y, "entry": entry}], tmp_path / "f.png", "offset", bootstrap=40
    )
    fig = capture[-1]
    assert texts_overlap_or_clip(fig) == []
    ax = fig.axes[0]
    ticks = [t.get_text() for t in ax.get_xticklabels(which="both") + ax.get_yticklabels(which="both")]
    assert not any("10^" in t or "\\times" in t for t in ticks), ticks


def test_the_mutant_without_readable_ticks_overlaps(capture, tmp_path, monkeypatch):
    monkeypatch.setattr(fit_plot, "readable_log_axes", lambda ax: None)
    monkeypatch.setattr(fit_plot, "thin_overlapping_ticks", lambda fig, ax: None)
    n, y = _curve(np.geomspace(3e3, 6e3, 5))
    entry = fit_exponent(n, y, form="offset", coverage_reps=20, bootstrap=40)
    fit_plot.plot_1d(
        [{"label": "all runs", "n": n, "y": y, "entry": entry}], tmp_path / "f.png", "offset", bootstrap=40
    )
    fig = capture[-1]
    fig.canvas.draw()
    ticks = " ".join(t.get_text() for t in fig.axes[0].get_xticklabels(which="both") if t.get_visible())
    assert "times" in ticks  # matplotlib's default on a short span: 3×10³ 4×10³ ..., what the test refuses


def test_a_withheld_interval_draws_no_band_and_says_so(capture, tmp_path):
    n = np.repeat([64.0, 200.0, 640.0, 2000.0], 3)
    y = np.full(len(n), 0.3)
    entry = fit_exponent(n, y, form="offset", coverage_reps=20, bootstrap=40)
    fit_plot.plot_1d([{"label": "flat", "n": n, "y": y, "entry": entry}], tmp_path / "f.png", "offset", bootstrap=40)
    ax = capture[-1].axes[0]
    assert "shaded" not in ax.get_title() and not ax.collections[1:]  # the scatter only, no fill


def test_the_joint_figure_has_no_overlapping_text(capture, tmp_path):
    rng = np.random.default_rng(0)
    N = np.geomspace(1e7, 1e10, 12).repeat(3)
    D = N * rng.uniform(10, 40, len(N))
    L = (1.8 + 400 * N**-0.34 + 2000 * D**-0.37) * np.exp(0.01 * rng.standard_normal(len(N)))
    res = fit_law(np.stack([N, D], 1), L, form="joint", bootstrap=20, seed=0)
    fit_plot.plot_joint(res, np.stack([N, D], 1), L, tmp_path / "j.png")
    assert texts_overlap_or_clip(capture[-1]) == []
