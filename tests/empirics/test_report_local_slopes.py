"""The shared local-slope figure (report.common.draw_local_slopes) and its tick labels."""

import pytest

from tmcheck.empirics.report import common


@pytest.mark.parametrize(
    "v,label",
    [
        (0.05, "0.05"),
        (316.0, "316"),
        (1000.0, "1k"),
        (3162.0, "3.16k"),
        (100_000.0, "100k"),
        (1e6, "1M"),
        (2.5e7, "25M"),
    ],
)
def test_tick_label_known_answers(v, label):
    assert common.tick_label(v) == label


def test_tick_label_never_writes_an_exponent():
    assert all("e" not in common.tick_label(10.0**k) for k in range(-3, 9))


def _panels():
    series = ("kNN", "C1", "s", [300, 1000, 3000], [0.7, 0.6, 0.55], [0.6, 0.5, 0.5], [0.8, 0.7, 0.6])
    return {(1, 1.0): [series], (2, 1.0): [series], (1, 0.5): []}


def test_legend_sits_outside_every_panel():
    fig = common.draw_local_slopes(_panels(), 0.05, "n", "caption", paper_margin=0.02)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    (legend,) = fig.legends
    box = legend.get_window_extent(renderer)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == 3  # (2, 0.5) is absent: its panel is hidden
    assert not any(box.overlaps(ax.get_window_extent(renderer)) for ax in panels)
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels.count("kNN") == 1 and "± 0.02" in labels
    ticks = [t.get_text() for t in panels[0].get_xticklabels() if t.get_text()]
    assert "1k" in ticks and not any("e+" in t for t in ticks)
    common.pyplot().close(fig)


def test_a_legend_inside_a_panel_is_caught():
    """The overlap check can fail: a legend placed in the first panel overlaps it."""
    fig = common.draw_local_slopes(_panels(), 0.05, "n", "caption")
    fig.legends.clear()
    leg = fig.axes[0].legend(loc="center")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert leg.get_window_extent(renderer).overlaps(fig.axes[0].get_window_extent(renderer))
    common.pyplot().close(fig)


def _busy_axes():
    import numpy as np

    fig, ax = common.pyplot().subplots()
    x = np.linspace(0, 1, 50)
    ax.plot(x, x, label="line")
    ax.axhline(0.5, label="reference")  # drawn in axes coordinates on one side: not data
    ax.scatter([0.5], [0.5], label="point")
    ax.fill_between(x, x - 0.1, x + 0.1, label="band")
    return fig, ax


def test_legend_overlaps_names_the_data_under_a_legend():
    from tmcheck.empirics.fit.plot import legend_outside, legend_overlaps

    fig, ax = _busy_axes()
    ax.legend(loc="center")
    assert sorted(legend_overlaps(fig)) == ["panel: band", "panel: line", "panel: point"]
    legend_outside(ax)
    fig.tight_layout()
    assert legend_overlaps(fig) == []
    common.pyplot().close(fig)


def test_figure_bytes_records_a_legend_over_data():
    """What `make results` reads (reproduce.rebuild turns LAYOUT_PROBLEMS into differences)."""
    common.LAYOUT_PROBLEMS.clear()
    fig, ax = _busy_axes()
    fig.suptitle("busy")
    ax.legend(loc="center")
    common.figure_bytes(fig)
    assert common.LAYOUT_PROBLEMS and all(p.startswith("busy: panel:") for p in common.LAYOUT_PROBLEMS)
    common.LAYOUT_PROBLEMS.clear()
    fig, ax = _busy_axes()
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
    common.figure_bytes(fig)
    assert common.LAYOUT_PROBLEMS == []
