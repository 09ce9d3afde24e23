"""Figures a paper would print, for every figure kind the reports draw (and the ablation figure): no two
text elements overlap, no text leaves the canvas (a clipped title), no panel is empty, and a caption
that speaks of shading or bands has a band drawn. Each kind is drawn from the committed results and
from edge cases (fits withheld, one corpus, one model, no data arm); each check is shown to fail on a
figure made to break it."""

from __future__ import annotations

import copy
import json
from itertools import combinations
from pathlib import Path

import pytest

from tmcheck.empirics.report import ablation as ablate_plot
from tmcheck.empirics.report import model as model_report
from tmcheck.empirics.report import pretrain as pretrain_report
from tmcheck.empirics.report import synthetic as synth_report
from tmcheck.empirics.report.common import pyplot

RESULTS = Path(__file__).resolve().parents[2] / "results"


def _load(name: str, file: str):
    path = RESULTS / name / file
    if file.endswith(".jsonl"):
        return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return json.loads(path.read_text())


# ------------------------------------------------------------------------------------ the checks
def drawn_texts(fig):
    """Every text element the canvas draws: titles, axis labels, tick labels in view, legend entries,
    annotations, the figure's own texts; (text, window bbox)."""
    from matplotlib.text import Text

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    items: list[Text] = [t for t in fig.texts] + ([fig._suptitle] if fig._suptitle else [])
    for ax in fig.axes:
        items += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            span = (hi - lo) * 1e-9
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():  # the ones in view are drawn
                if lo - span <= tick.get_loc() <= hi + span:
                    items += [lab for lab in (tick.label1, tick.label2) if lab.get_visible()]
        legend = ax.get_legend()
        if legend is not None:
            items += legend.get_texts()
    out, seen = [], set()
    for t in items:
        if t is None or id(t) in seen or not t.get_visible() or not t.get_text().strip():
            continue
        seen.add(id(t))
        out.append((t.get_text(), t.get_window_extent(renderer)))
    return out


def overlapping(fig, pad: float = 1.0) -> list[tuple[str, str]]:
    boxes = drawn_texts(fig)
    out = []
    for (a, ba), (b, bb) in combinations(boxes, 2):
        if (
            ba.x0 + pad < bb.x1 - pad
            and bb.x0 + pad < ba.x1 - pad
            and ba.y0 + pad < bb.y1 - pad
            and bb.y0 + pad < ba.y1 - pad
        ):
            out.append((a, b))
    return out


def clipped(fig, pad: float = 1.0) -> list[str]:
    w, h = fig.canvas.get_width_height()
    return [t for t, b in drawn_texts(fig) if b.x0 < -pad or b.y0 < -pad or b.x1 > w + pad or b.y1 > h + pad]


def empty_panels(fig) -> list[str]:
    out = []
    for ax in fig.axes:
        data = [ln for ln in ax.lines if len(ln.get_xdata())] + [
            c for c in ax.collections if len(c.get_offsets()) or len(c.get_paths())
        ]
        if not data:
            out.append(ax.get_title() or "untitled panel")
    return out


def dishonest_captions(fig) -> list[str]:
    """Texts speaking of shading or bands in a figure that draws none."""
    from matplotlib.collections import PolyCollection

    banded = any(isinstance(c, PolyCollection) for ax in fig.axes for c in ax.collections)
    words = ("shaded", "band")
    return [] if banded else [t for t, _ in drawn_texts(fig) if any(w in t.lower() for w in words)]


def problems(fig) -> dict:
    return {
        "overlapping": overlapping(fig),
        "clipped": clipped(fig),
        "empty": empty_panels(fig),
        "dishonest": dishonest_captions(fig),
    }


# ------------------------------------------------------------------------------------ figure kinds
def pretrain_report_dict():
    return _load("pretrain", "report.json")


def fig_pretrain_scaling(withheld: bool = False, corpora: int = 3):
    rep = copy.deepcopy(pretrain_report_dict())
    rows = _load("pretrain", "results.jsonl")
    table = dict(list(rep["table"].items())[:corpora])
    if withheld:
        for e in table.values():
            e["exponent"], e["withheld"] = None, "no fit and no verdict: only 2 sizes"
    return pretrain_report.draw_scaling([r for r in rows if r["corpus"] in table], table, bootstrap=50)


def fig_pretrain_curves(corpora: int = 3):
    rows = _load("pretrain", "results.jsonl")
    keep = list(dict.fromkeys(r["corpus"] for r in rows))[:corpora]
    rows = [r for r in rows if r["corpus"] in keep]
    hist = {r["run"]: _load(f"pretrain/runs/{r['run']}", "result.json") for r in rows}
    return pretrain_report.draw_curves(rows, hist)


def fig_synth(kind: str, withheld: bool = False):
    rep = copy.deepcopy(_load("synth", "report.json"))
    rows = _load("synth", "results.jsonl")
    if withheld:
        for e in rep["data_scaling"]:
            e["exponent"], e["withheld"] = None, "no fit"
    if kind == "alpha":
        return synth_report.draw_alpha(rep["data_scaling"])
    if kind == "loss":
        return synth_report.draw_loss(rows, rep["data_scaling"], bootstrap=50)
    model_rows = [{**r, "sweep": "model", "params": 100 * (i + 1)} for i, r in enumerate(rows[:8])]
    for r in model_rows:
        r["d"], r["beta"] = 1, 1.0
    fake = [{"d": 1, "beta": 1.0, "predicted": 2.0, "exponent": None, "withheld": "x"}]
    return synth_report.draw_model(model_rows, fake)


def fig_model(data_arm: bool = True):
    rep = copy.deepcopy(_load("model", "report.json"))
    if not data_arm:
        rep["alpha_D"], rep["id_free"] = None, None
    return model_report.draw(rep)


def fig_ablate(name: str, one_panel: bool = False):
    res = copy.deepcopy(_load(f"ablate/{name}", "ablate.json"))
    if one_panel:
        res["panels"] = {"layer": res["panels"]["layer"]}
    return ablate_plot.draw(res)


FIGURES = {
    "pretrain-scaling": fig_pretrain_scaling,
    "pretrain-scaling-withheld": lambda: fig_pretrain_scaling(withheld=True),
    "pretrain-scaling-one-corpus": lambda: fig_pretrain_scaling(corpora=1),
    "pretrain-curves": fig_pretrain_curves,
    "pretrain-curves-one-corpus": lambda: fig_pretrain_curves(corpora=1),
    "synth-alpha": lambda: fig_synth("alpha"),
    "synth-loss": lambda: fig_synth("loss"),
    "synth-loss-withheld": lambda: fig_synth("loss", withheld=True),
    "synth-model": lambda: fig_synth("model"),
    "model": fig_model,
    "model-no-data-arm": lambda: fig_model(data_arm=False),
    "ablate-suite": lambda: fig_ablate("suite"),
    "ablate-one-model": lambda: fig_ablate("minilm"),
    "ablate-one-panel": lambda: fig_ablate("minilm", one_panel=True),
}


@pytest.mark.parametrize("name", list(FIGURES))
def test_every_figure_kind_reads_cleanly(name):
    fig = FIGURES[name]()
    try:
        assert problems(fig) == {"overlapping": [], "clipped": [], "empty": [], "dishonest": []}
    finally:
        pyplot().close(fig)


# ------------------------------------------------------------------------------------ the checks can fail
def test_each_check_fails_on_a_figure_made_to_break_it():
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(4, 3))
    axes[0].plot([1, 2], [1, 2])
    axes[0].text(0.5, 0.5, "one label", transform=axes[0].transAxes)
    axes[0].text(0.5, 0.5, "another label", transform=axes[0].transAxes)  # on top of the first
    axes[0].set_title("a title far too long for this little panel, running off the canvas on the right side")
    fig.suptitle("shaded: 95% bands")  # nothing shaded
    got = problems(fig)
    plt.close(fig)
    assert ("one label", "another label") in got["overlapping"]
    assert any(t.startswith("a title far too long") for t in got["clipped"])
    assert got["empty"] == ["untitled panel"]  # the second panel holds nothing
    assert got["dishonest"] == ["shaded: 95% bands"]
