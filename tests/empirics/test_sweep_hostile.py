"""Names read from files never become paths outside the sweep: hostile config.json,
plan.json, row.json, results.jsonl, slurm/jobs.json and symlinked directories are refused with one
line, nothing is written outside the sweep, and the same directory without the hostile part works."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app
from tmcheck.empirics.sweep import SweepDir, layout, register_kind, run_spec, run_sweep
from tmcheck.empirics.sweep.executors import serial
from tmcheck.empirics.sweep.kinds import get_preset

sys.path.insert(0, str(Path(__file__).parent))
import sweep_toy

runner = CliRunner()
PRESET = sweep_toy.ToyPreset(name="toy", xs=(1, 2))


@pytest.fixture(autouse=True)
def toy():
    register_kind(sweep_toy.KIND)


def quiet(s):
    pass


def files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def one_line_exit_2(args):
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    return res.stderr


@pytest.mark.parametrize("corpus", ["/some/where/stories", "../../stories", "stories/../../x", "text:"])
def test_hostile_corpora_in_config_are_refused_on_resume(tmp_path, corpus):
    sweep = tmp_path / "s"
    sweep.mkdir()
    config = {"kind": "pretrain", "preset": get_preset("tiny").as_dict(), "corpora": [corpus]}
    (sweep / layout.CONFIG).write_text(json.dumps(config))
    before = files(tmp_path)
    with pytest.raises(ValueError, match="unknown corpus"):
        run_sweep(sweep, "pretrain", progress=False, log=quiet)
    assert "unknown corpus" in one_line_exit_2(["sweep", "data", str(sweep)])
    assert files(tmp_path) == before | {"s/.lock"}, "nothing written but the submitter's lock"
    config["corpora"] = ["stories"]  # mutation: the same config with a known corpus is accepted
    (sweep / layout.CONFIG).write_text(json.dumps(config))
    assert SweepDir(sweep).context().config["corpora"] == ["stories"]


@pytest.mark.parametrize(
    "config",
    [
        ["a"],
        {"kind": "../../x", "preset": {}},
        {"kind": "exectoy", "preset": {"xs": "../"}},
        {"kind": "exectoy", "preset": {"name": "t", "steps": "3"}},
    ],
)
def test_hostile_configs_are_refused(tmp_path, config):
    (tmp_path / layout.CONFIG).write_text(json.dumps(config))
    with pytest.raises((ValueError, TypeError)):
        SweepDir(tmp_path).context()


def _done(tmp_path):
    run_sweep(tmp_path, "exectoy", PRESET, progress=False, log=quiet, executor=serial(log=quiet))
    return SweepDir(tmp_path)


def test_hostile_run_names_in_plan_and_rows(tmp_path):
    sweep = _done(tmp_path)
    plan = json.loads((tmp_path / layout.PLAN).read_text())
    good = json.dumps(plan)
    plan[0]["run"] = "../../evil"
    (tmp_path / layout.PLAN).write_text(json.dumps(plan))
    with pytest.raises(ValueError, match="invalid run name"):
        sweep.read_plan()
    assert "invalid run name" in one_line_exit_2(["sweep", "status", str(tmp_path)])
    (tmp_path / layout.PLAN).write_text(good)
    assert [
        r["state"] for r in json.loads(runner.invoke(app, ["sweep", "status", str(tmp_path), "--json"]).stdout)["runs"]
    ] == ["done", "done"]
    # a row.json that names another run (or a path) is not merged
    row = sweep.run_dir("toy-x1") / layout.ROW
    row.write_text(json.dumps({"run": "../../etc", "x": 1, "y": 4}))
    with pytest.raises(ValueError, match="is not the row of run toy-x1"):
        sweep.merge()
    row.write_text(json.dumps({"run": "toy-x1", "x": 1, "y": 4}))
    assert [r["run"] for r in sweep.merge()] == ["toy-x1", "toy-x2"]
    # results.jsonl is never read back as names: it is rebuilt from the runs' rows
    (tmp_path / layout.RESULTS).write_text(json.dumps({"run": "../../etc"}) + "\n")
    assert [r["run"] for r in run_sweep(tmp_path, "exectoy", None, progress=False, log=quiet)] == ["toy-x1", "toy-x2"]
    with pytest.raises(ValueError, match="invalid run name"):
        sweep.run_dir("../../etc")


@pytest.mark.parametrize("linked", ["run", "runs", "data"])
def test_symlinked_directories_are_refused(tmp_path, linked):
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "s"
    sweep = SweepDir(root)
    sweep.open("exectoy", PRESET)
    spec = sweep_toy.plan(sweep.context(), quiet)[0]
    target = {"run": root / layout.RUNS / spec.run, "runs": root / layout.RUNS, "data": root / layout.DATA}[linked]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(outside, target_is_directory=True)
    with pytest.raises(ValueError, match="is a symbolic link"):
        sweep.data_dir("x") if linked == "data" else run_spec(root, spec)
    assert list(outside.iterdir()) == [], "nothing written through the link"
    target.unlink()  # mutation: the same call without the link works
    assert sweep.data_dir("x") == root / layout.DATA / "x" if linked == "data" else run_spec(root, spec)["x"] == 1


def test_a_sweep_reached_through_a_symlink_is_fine(tmp_path):
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "link")
    rows = run_sweep(tmp_path / "link", "exectoy", PRESET, progress=False, log=quiet, executor=serial(log=quiet))
    assert len(rows) == 2 and (tmp_path / "real" / layout.RUNS / "toy-x1" / layout.ROW).exists()


@pytest.mark.parametrize("jobs", [{"../x": "12"}, {"toy-x1": "12; rm -rf /"}, {"toy-x1": 12}, ["12"]])
def test_hostile_slurm_job_records_are_refused(tmp_path, jobs):
    _done(tmp_path)
    (tmp_path / layout.SLURM).mkdir()
    (tmp_path / layout.SLURM / layout.JOBS).write_text(json.dumps(jobs))
    one_line_exit_2(["sweep", "status", str(tmp_path)])
    (tmp_path / layout.SLURM / layout.JOBS).write_text(json.dumps({"toy-x1": "12_3"}))
    res = runner.invoke(app, ["sweep", "status", str(tmp_path), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["runs"][0]["job"] == "12_3"
