"""The committed experiments reproduced (tmcheck.empirics.report.reproduce, tools/results.py): numbers
compared to 1e-9, figures pixel for pixel, a rebuild of a committed report equal to it, a replay of a
committed run equal to its row; and each check fails on an edited number, pixel or row."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from tmcheck.empirics.report import reproduce as rp
from tmcheck.util import atomic

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"


def tool(name: str):
    spec = importlib.util.spec_from_file_location(f"tmcheck_tool_{name}", ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def exp(name: str, root: Path = RESULTS) -> rp.Experiment:
    return next(e for e in rp.experiments(root) if e.name == name)


def test_number_differences():
    a = {"x": 1.0, "y": [1, 2], "s": "v", "sweep": "here", "z": {"w": float("nan")}}
    assert rp.number_differences(a, {**a, "x": 1.0 + 1e-12, "sweep": "elsewhere"}) == []
    assert rp.number_differences(a, {**a, "x": 1.0 + 1e-8}) == ["/x: committed 1.0, rebuilt 1.00000001"]
    assert rp.number_differences(a, {**a, "y": [1]}) == ["/y: 2 entries committed, 1 rebuilt"]
    assert rp.number_differences(a, {**a, "s": "w"})[0].startswith("/s: committed 'v'")
    assert rp.number_differences({"big": 1e6}, {"big": 1e6 + 1e-4}) == []  # relative above 1
    assert rp.number_differences(a, {k: v for k, v in a.items() if k != "x"}) == ["/x: only in the committed report"]


def test_figure_difference_sees_one_pixel(tmp_path):
    import matplotlib.image as mpimg

    img = np.zeros((20, 30, 3))
    mpimg.imsave(tmp_path / "a.png", img)
    mpimg.imsave(tmp_path / "b.png", img)
    assert rp.figure_difference(tmp_path / "a.png", tmp_path / "b.png") is None
    img[3, 4] = 1.0
    mpimg.imsave(tmp_path / "c.png", img)
    assert rp.figure_difference(tmp_path / "a.png", tmp_path / "c.png") == "1 of 600 pixels differ"
    assert rp.figure_difference(tmp_path / "a.png", tmp_path / "none.png") == "not drawn by the rebuild"


def test_figure_difference_tolerates_anti_aliasing_levels_only(tmp_path):
    """Edges one or two levels apart (what another CPU's BLAS draws) are the same figure; three are not."""
    import matplotlib.image as mpimg

    img = np.full((20, 30, 3), 0.5)
    mpimg.imsave(tmp_path / "a.png", img)
    near = img.copy()
    near[::2, ::3] += 2 / 255  # many pixels, each at most 2 levels off
    mpimg.imsave(tmp_path / "b.png", near)
    assert rp.figure_difference(tmp_path / "a.png", tmp_path / "b.png") is None
    far = img.copy()
    far[5, 6, 1] += 3 / 255  # mutation: one channel of one pixel 3 levels off
    mpimg.imsave(tmp_path / "c.png", far)
    assert rp.figure_difference(tmp_path / "a.png", tmp_path / "c.png") == "1 of 600 pixels differ"


def test_the_committed_experiments_are_found():
    names = {e.name: e.kind for e in rp.experiments(RESULTS)}
    assert names == {
        "pretrain": "pretrain",
        "model": "model",
        "synth": "synthetic",
        "synth-decide": "synthetic",
        "synth-decide2": "synthetic",
        "synth-theory": "synthetic",
        "synth-theory-d4": "synthetic",
        "synth-controls": "controls",
        "ablate/suite": "ablate",
        "ablate/minilm": "ablate",
    }


def test_a_rebuild_equals_the_committed_report_and_an_edited_row_does_not(tmp_path):
    res = rp.rebuild(exp("pretrain"), tmp_path / "a")
    assert res["equal"], res["differences"][:5]
    root = tmp_path / "edited"
    shutil.copytree(RESULTS / "pretrain", root / "pretrain")
    rows = atomic.read_jsonl(root / "pretrain" / "results.jsonl")
    rows[0]["test_loss"] += 1e-3
    atomic.write_jsonl(root / "pretrain" / "results.jsonl", rows)
    bad = rp.rebuild(exp("pretrain", root), tmp_path / "b")
    assert not bad["equal"] and any("/alpha" in d for d in bad["differences"])
    assert bad["figures"]["fig_scaling.png"] is not None


def test_a_replay_of_a_committed_run_equals_its_row_and_an_edited_row_does_not(tmp_path):
    synth = exp("synth")
    runs = rp.sample(synth)
    assert len(runs) == 3 and {r.rsplit("-", 1)[1] for r in runs} == {"transformer", "knn", "krr"}
    rows = rp.committed_rows(synth)
    cheap = min(runs, key=lambda r: rows[r]["wall_s"])
    res = rp.replay(synth, [cheap], tmp_path / "a")
    assert res["equal"] and res["runs"][0]["replayed"] == pytest.approx(res["runs"][0]["committed"], rel=1e-12)
    root = tmp_path / "edited"
    shutil.copytree(RESULTS / "synth", root / "synth")
    edited = atomic.read_jsonl(root / "synth" / "results.jsonl")
    for r in edited:
        if r["run"] == cheap:
            r["test_mse"] *= 1.001
    atomic.write_jsonl(root / "synth" / "results.jsonl", edited)
    assert not rp.replay(exp("synth", root), [cheap], tmp_path / "b")["equal"]


def test_a_replay_refuses_a_config_that_plans_other_runs(tmp_path):
    root = tmp_path / "r"
    shutil.copytree(RESULTS / "synth", root / "synth")
    cfg = json.loads((root / "synth" / "config.json").read_text())
    cfg["preset"]["seeds"] = [0, 1]
    (root / "synth" / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="plans other runs"):
        rp.replay(exp("synth", root), ["data-d1-b1-n64-s0-knn"], tmp_path / "w")
    with pytest.raises(ValueError, match="not empty"):
        rp.replay(exp("synth"), ["data-d1-b1-n64-s0-knn"], root)


def test_results_check_passes_and_fails_on_an_edited_number(tmp_path, capsys):
    results = tool("results")
    root = tmp_path / "results"
    shutil.copytree(RESULTS / "ablate" / "minilm", root / "ablate" / "minilm")
    shutil.copytree(RESULTS / "pretrain", root / "pretrain")
    assert results.check([], root, log=lambda s: None) == 0
    rep = json.loads((root / "pretrain" / "report.json").read_text())
    rep["table"]["code"]["exponent"]["fits"]["loglog"]["alpha"] += 1e-6
    atomic.write_json(root / "pretrain" / "report.json", rep)
    lines = []
    assert results.check(["pretrain"], root, log=lines.append) == 1
    assert any("FAIL pretrain" in s for s in lines) and any("/alpha" in s for s in lines)
    (root / "ablate" / "minilm" / "fig_ablate.png").write_bytes(b"\x89PNG broken")
    assert results.check(["ablate/minilm"], root, log=lambda s: None) == 1
    with pytest.raises(ValueError, match="no committed experiment"):
        results.check(["nothing"], root)


def test_complete_derives_the_plan_and_the_run_records_of_a_sweep(tmp_path):
    results = tool("results")
    dest = tmp_path / "synth"
    shutil.copytree(RESULTS / "synth", dest, ignore=shutil.ignore_patterns("plan.json", "runs"))
    wrote = results.complete(dest)
    assert "plan.json" in wrote and len(wrote) == 1 + 2 * 216
    assert (dest / "plan.json").read_text() == (RESULTS / "synth" / "plan.json").read_text()
    run = "data-d2-b0p5-n640-s1-krr"
    for f in ("spec.json", "row.json"):
        assert (dest / "runs" / run / f).read_text() == (RESULTS / "synth" / "runs" / run / f).read_text()
    rows = atomic.read_jsonl(dest / "results.jsonl")
    rows[0]["run"] = "data-d9-b1-n64-s0-transformer"  # a row its parameters do not name
    atomic.write_jsonl(dest / "results.jsonl", rows)
    (dest / "plan.json").unlink()
    with pytest.raises(ValueError, match="gives the run name"):
        results.complete(dest)


def test_results_check_fails_on_a_row_json_changed_by_half(tmp_path):
    # before (#43): the report was rebuilt from results.jsonl only, so a test loss multiplied by 1.5 in
    # one runs/<run>/row.json (the source of truth) passed with "1 of 1 committed experiments reproduced"
    results = tool("results")
    root = tmp_path / "results"
    shutil.copytree(RESULTS / "model", root / "model")
    assert rp.row_differences(exp("model", root)) == []
    run = sorted((root / "model" / "runs").iterdir())[0]
    row = json.loads((run / "row.json").read_text())
    row["test_loss"] *= 1.5
    atomic.write_json(run / "row.json", row)
    diffs = rp.row_differences(exp("model", root))
    assert len(diffs) == 1 and f"{run.name}/row.json: test_loss" in diffs[0]
    lines = []
    assert results.check(["model"], root, log=lines.append) == 1
    assert any("FAIL model" in s for s in lines) and any("test_loss" in s for s in lines)
    # and the other way: results.jsonl changed, row.json not; a row.json missing from results.jsonl
    row["test_loss"] /= 1.5
    atomic.write_json(run / "row.json", row)
    assert rp.row_differences(exp("model", root)) == []  # mutation undone: equal again
    rows = atomic.read_jsonl(root / "model" / "results.jsonl")
    atomic.write_jsonl(root / "model" / "results.jsonl", rows[1:])
    assert any("not in results.jsonl" in d for d in rp.row_differences(exp("model", root)))


def test_a_sweep_with_runs_left_fails_unless_it_is_marked_in_progress(tmp_path, monkeypatch):
    """A committed sweep with a run not done fails `make results`; its IN_PROGRESS note turns that into a
    line that says so, and the note fails once every run is done."""
    results = tool("results")
    root = tmp_path / "results"
    shutil.copytree(RESULTS / "pretrain", root / "pretrain")
    assert results.check(["pretrain"], root, log=lambda s: None) == 0
    (root / "pretrain" / results.IN_PROGRESS).write_text("tmcheck sweep data results/pretrain\n")
    lines = []
    assert results.check(["pretrain"], root, log=lines.append) == 1
    assert any("is still there: remove it" in s for s in lines)
    from tmcheck.empirics.sweep import status

    real = status.sweep_status

    def one_left(path):  # as sweep status says of a sweep with one run still pending
        out = real(path)
        counts = dict(out["counts"])
        counts["done"] -= 1
        counts["pending"] = counts.get("pending", 0) + 1
        return {**out, "counts": counts}

    monkeypatch.setattr(status, "sweep_status", one_left)
    lines = []
    assert results.check(["pretrain"], root, log=lines.append) == 0, lines
    assert any("in progress (resume: tmcheck sweep data results/pretrain)" in s for s in lines)
    (root / "pretrain" / results.IN_PROGRESS).unlink()
    assert results.check(["pretrain"], root, log=lambda s: None) == 1
