"""Reusing finished runs of another sweep (`run_sweep(..., reuse=...)`, `tmcheck sweep synthetic --reuse`),
and a (d, β) with a training-set grid of its own (`SynthTuned.ns`; issue 26).

A run is taken only when the kind's run identity of its spec is equal under both sweeps' presets:
every setting its row depends on, its (d, β)'s tuned entry applied, and the grid through max(ns) (the
pool every split is the first n of). Each check below has a mutated input that flips it."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app
from tmcheck.cli.sweep import check_report_can_be_made
from tmcheck.empirics.report.synthetic import tuned_table
from tmcheck.empirics.sweep import SweepDir, layout
from tmcheck.empirics.sweep import run_sweep as core_run_sweep
from tmcheck.empirics.sweep.core import reuse_runs
from tmcheck.empirics.sweep.synthetic import plan_specs, run_identity
from tmcheck.empirics.sweep.synthetic_preset import PRESETS as SYNTHETIC
from tmcheck.empirics.sweep.synthetic_preset import SynthTuned
from tmcheck.util import atomic

sys.path.insert(0, str(Path(__file__).parent))
import micro  # noqa: E402

MICRO = replace(micro.MICRO, betas=(1.0, 0.5))


def quiet(_s):
    return None


def fake_source(path, preset) -> list:
    """A finished sweep of `preset` without training: each run's spec.json and a row naming it."""
    sweep = SweepDir(path)
    with sweep.lock():
        sweep.open("synthetic", preset)
    specs = plan_specs(preset)
    sweep.write_plan(specs)
    for s in specs:
        d = sweep.run_dir(s.run)
        d.mkdir(parents=True)
        atomic.write_json(d / layout.SPEC, s.as_dict())
        atomic.write_json(d / layout.ROW, {"run": s.run, **s.params, "test_mse": 0.5, "wall_s": 1.25})
    sweep.merge(specs)
    return specs


def take(dst, preset, src) -> list[str]:
    sweep = SweepDir(dst)
    with sweep.lock():
        sweep.open("synthetic", preset)
    return reuse_runs(sweep, sweep.context(), plan_specs(preset), src)


def data_runs(names):
    return [r for r in names if r.startswith("data-")]


def test_identical_settings_take_every_run_with_its_row_and_where_it_came_from(tmp_path):
    specs = fake_source(tmp_path / "src", MICRO)
    other = replace(MICRO, name="renamed", notes="prose only")  # names and prose are not settings of a run
    taken = take(tmp_path / "dst", other, tmp_path / "src")
    assert taken == [s.run for s in specs]
    dst = SweepDir(tmp_path / "dst")
    for s in specs:
        assert dst.read_row(s.run) == SweepDir(tmp_path / "src").read_row(s.run)
        assert json.loads((dst.run_dir(s.run) / layout.REUSED).read_text())["from"] == str(tmp_path / "src")


def test_a_changed_setting_of_one_beta_takes_only_the_other_betas_runs(tmp_path):
    fake_source(tmp_path / "src", MICRO)
    lr_half = replace(MICRO, tuned=(SynthTuned(d=1, beta=0.5, lr=MICRO.lr / 2),))
    taken = take(tmp_path / "dst", lr_half, tmp_path / "src")
    assert taken and not any("-b0p5-" in r or "b0.5" in r for r in taken)
    assert any("-b1-" in r for r in data_runs(taken))
    # mutation: the same change applied to every (d, β) leaves nothing to take
    assert take(tmp_path / "dst2", replace(MICRO, lr=MICRO.lr / 2), tmp_path / "src") == []


def test_a_grid_with_another_largest_n_draws_other_pools_and_takes_no_data_run(tmp_path):
    fake_source(tmp_path / "src", MICRO)
    wider = replace(MICRO, tuned=(SynthTuned(d=1, beta=1.0, ns=(40, 80, 160)),))
    taken = take(tmp_path / "dst", wider, tmp_path / "src")
    assert not any(r.startswith("data-") and "-b1-" in r for r in taken)  # max(ns) 160: other pools
    assert any(r.startswith("model-") for r in taken)  # the model sweep draws from model_n: same rows
    # a grid of its own with the same largest n keeps the pools: those runs are taken
    same_max = replace(MICRO, tuned=(SynthTuned(d=1, beta=1.0, ns=(20, 80)),))
    taken = take(tmp_path / "dst2", same_max, tmp_path / "src")
    assert "data-d1-b1-n80-s0-transformer" in taken and not any("-n20-" in r for r in taken)


def test_started_runs_foreign_specs_self_and_other_kinds_are_refused(tmp_path):
    specs = fake_source(tmp_path / "src", MICRO)
    # a run started here is never replaced
    dst = SweepDir(tmp_path / "dst")
    with dst.lock():
        dst.open("synthetic", MICRO)
    dst.run_dir(specs[0].run).mkdir(parents=True)
    taken = reuse_runs(dst, dst.context(), specs, tmp_path / "src")
    assert specs[0].run not in taken and len(taken) == len(specs) - 1
    assert dst.read_row(specs[0].run) is None
    # a source whose run directory holds another spec is not taken from
    src = SweepDir(tmp_path / "src")
    atomic.write_json(src.run_dir(specs[1].run) / layout.SPEC, {**specs[1].as_dict(), "run": "x"})
    assert specs[1].run not in take(tmp_path / "dst2", MICRO, tmp_path / "src")
    with pytest.raises(ValueError, match="the sweep itself"):
        reuse_runs(src, src.context(), specs, tmp_path / "src")
    with pytest.raises(FileNotFoundError):
        take(tmp_path / "dst3", MICRO, tmp_path / "nowhere")
    ctx = dst.context()
    with pytest.raises(ValueError, match="cannot be reused"):
        reuse_runs(dst, replace(ctx, kind=replace(ctx.kind, run_identity=None)), specs, tmp_path / "src")
    model = SweepDir(tmp_path / "model")
    with model.lock():
        model.open("model", "tiny")
    with pytest.raises(ValueError, match="is a model sweep"):
        reuse_runs(dst, dst.context(), specs, tmp_path / "model")


def test_a_reused_run_is_the_trained_one_and_the_rest_train(tmp_path):
    """End to end: seed 0 trained once, then a sweep of seeds 0 and 1 takes seed 0 and trains seed 1."""
    first = core_run_sweep(tmp_path / "a", "synthetic", MICRO, progress=False, log=quiet)
    more = replace(MICRO, name="micro-more", seeds=(0, 1))
    lines = []
    rows = core_run_sweep(tmp_path / "b", "synthetic", more, progress=False, log=lines.append, reuse=tmp_path / "a")
    taken = {r["run"]: r for r in rows if (tmp_path / "b" / "runs" / r["run"] / layout.REUSED).exists()}
    assert set(taken) == {r["run"] for r in first}  # wall_s included: a retrained run would differ
    assert all(taken[r["run"]] == r for r in first)
    assert {r["seed"] for r in rows if r["run"] not in taken} == {1}
    assert any(f"reused {len(first)} finished run(s)" in s for s in lines)


def test_run_identity_holds_what_a_run_depends_on():
    params = {"sweep": "data", "method": "transformer", "d": 1, "beta": 1.0, "n": 40, "seed": 0}
    base = run_identity(MICRO, params)
    assert run_identity(replace(MICRO, notes="x", name="y", seeds=(0, 5), krr_max_n=7), params) == base
    for changed in (replace(MICRO, lr=0.5), replace(MICRO, noise=0.1), replace(MICRO, ns=(40, 90))):
        assert run_identity(changed, params) != base
    assert run_identity(MICRO, {**params, "seed": 1}) != base


# --------------------------------------------------------------------------- a (d, β)'s own grid
def test_a_tuned_grid_is_planned_and_a_new_n_replaces_it():
    p = SYNTHETIC["cpu-decide2"]
    assert p.at(4, 1.0).ns == p.at(4, 0.5).ns == (1000, 3162, 10_000, 31_623, 100_000)
    assert p.at(1, 1.0).ns == p.ns == SYNTHETIC["cpu-decide"].ns
    specs = plan_specs(p)
    d4 = {s.params["n"] for s in specs if s.params["sweep"] == "data" and s.params["d"] == 4}
    d1 = {s.params["n"] for s in specs if s.params["sweep"] == "data" and s.params["d"] == 1}
    assert d4 == set(p.at(4, 1.0).ns) and d1 == set(p.ns)
    assert not any(s.params["method"] == "krr" and s.params["n"] > p.krr_max_n for s in specs)
    # d = 1, 2 and the model sweep compute what cpu-decide computed
    old = SYNTHETIC["cpu-decide"]
    theirs = {s.run for s in plan_specs(old)}
    same = [s for s in specs if s.run in theirs and run_identity(p, s.params) == run_identity(old, s.params)]
    assert {s.params["d"] for s in same} == {1, 2} and len(same) == 320
    assert not [s for s in specs if "blocks" in s.params and s.run in theirs]  # the depth runs are new
    # --n replaces every grid, and an entry that only held a grid goes
    q = p.with_overrides(ns=(100, 300, 1000))
    assert all(q.at(d, b).ns == (100, 300, 1000) for d in q.dims for b in q.betas)
    only_grid = replace(MICRO, tuned=(SynthTuned(d=1, beta=1.0, ns=(20, 40, 80)),))
    assert only_grid.with_overrides(ns=(40, 80, 160)).tuned == ()


def test_a_tuned_grid_too_small_to_fit_is_refused_and_shown_in_the_settings_table():
    ok = replace(MICRO, ns=(40, 80, 160), model_widths=(2, 4, 8), tuned=(SynthTuned(d=1, beta=1.0, ns=(40, 80, 160)),))
    check_report_can_be_made(ok)
    short = replace(ok, tuned=(SynthTuned(d=1, beta=0.5, ns=(40, 80)),))
    with pytest.raises(Exception, match="at least 3 sizes"):
        check_report_can_be_made(short)
    table = tuned_table(SYNTHETIC["cpu-decide2"].as_dict())
    assert "| n |" in table.splitlines()[0] and "1,000, 3,162, 10,000, 31,623, 100,000" in table
    assert "the preset's" in table
    assert "| n |" not in tuned_table(SYNTHETIC["cpu-decide"].as_dict()).splitlines()[0]


def test_cli_reuse_of_a_missing_directory_is_one_line_and_exit_2(tmp_path):
    res = CliRunner().invoke(
        app, ["sweep", "synthetic", str(tmp_path / "new"), "--preset", "tiny", "--reuse", str(tmp_path / "none")]
    )
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and "config.json" in res.output


# --------------------------------------------------------------------------- depth in the model sweep
def test_model_shapes_train_at_their_depth_beside_the_width_sweep(tmp_path):
    from tmcheck.empirics.synthetic.model import n_params

    p = replace(MICRO, betas=(1.0,), model_shapes=((1, 2), (2, 2), (2, 4)))  # (1, 2): the own depth, a dup
    specs = [s for s in plan_specs(p) if s.params["sweep"] == "model"]
    assert [s.run for s in specs] == [
        "model-d1-b1-w2-s0",
        "model-d1-b1-w4-s0",
        "model-d1-b1-l2-w2-s0",
        "model-d1-b1-l2-w4-s0",
    ]
    rows = {r["run"]: r for r in core_run_sweep(tmp_path / "s", "synthetic", p, progress=False, log=quiet)}
    deep = rows["model-d1-b1-l2-w2-s0"]
    assert deep["blocks"] == 2 and deep["params"] == n_params(replace(p, n_blocks=2).model_config(2))
    assert deep["params"] > rows["model-d1-b1-w2-s0"]["params"]  # mutation: training at the own depth
    # adding shapes changes no run of the width sweep: a sweep without them reuses every one
    taken = take(tmp_path / "dst", replace(p, model_shapes=()), tmp_path / "s")
    assert set(taken) == {r for r in rows if "-l" not in r}
