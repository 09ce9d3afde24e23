"""The sweep core on a toy kind (no training): run names, specs as plain data, run_spec from another
process, merging without a lock, status, config checks, and that each check catches its mutation."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from typing import ClassVar

import pytest

from tmcheck.empirics.sweep import (
    Kind,
    RunSpec,
    SweepBusy,
    SweepDir,
    get_kind,
    kinds,
    layout,
    register_kind,
    run_spec,
    run_sweep,
)
from tmcheck.empirics.sweep.preset import Preset


@dataclass(frozen=True, kw_only=True)
class ToyPreset(Preset):
    kind: ClassVar[str] = "toy"
    config_options: ClassVar[dict] = {"tag": str | None}
    xs: tuple[int, ...] = (1, 2, 3)
    scale: float = 0.5


NAME = "x{x}-c{scale}"


def _run_name(params):
    return layout.run_name(NAME, params)


def _plan(ctx, log):
    return [RunSpec("toy", _run_name(p), p) for p in ({"x": x, "scale": ctx.preset.scale} for x in ctx.preset.xs)]


def _run(ctx, spec):
    calls = ctx.sweep.path / "calls.log"
    with open(calls, "a") as f:
        f.write(spec.run + "\n")
    if spec.params["x"] < 0:
        raise RuntimeError("negative x")
    return {"y": spec.params["x"] * spec.params["scale"]}


TOY = Kind(
    name="toy",
    description="a test kind",
    new_config=lambda p, o: {"preset": p.as_dict(), "tag": o.get("tag")},
    plan=_plan,
    run_name=_run_name,
    run=_run,
    describe=lambda r: f"y={r['y']}",
    report="none",
    preset_class=ToyPreset,
    presets={"toy-small": ToyPreset(name="toy-small")},
)
TOY_PRESET = TOY.presets["toy-small"]
SCRIPT = f"""
import json, sys
sys.path.insert(0, {str(__import__("pathlib").Path(__file__).parent)!r})
import test_sweep_core  # defines the toy kind and its preset class
from tmcheck.empirics.sweep import register_kind, run_spec
register_kind(test_sweep_core.TOY)
print(json.dumps(run_spec(sys.argv[1], json.loads(sys.argv[2]))))
"""


@pytest.fixture(autouse=True, scope="module")
def toy_kind():
    register_kind(TOY)
    yield


def _calls(path):
    f = path / "calls.log"
    return f.read_text().split() if f.exists() else []


def test_run_names_follow_the_strict_pattern():
    assert (
        layout.run_name("{corpus}-n{n}-s{seed}", {"corpus": "prose-large", "n": 4000, "seed": 1})
        == "prose-large-n4000-s1"
    )
    assert layout.run_name("d{d}-b{beta}", {"d": 2, "beta": 0.5}) == "d2-b0p5"
    assert layout.token(1e-5) == "1em05"
    for bad in ("../x", "a/b", "A", "", ".hidden", "a--b", "a-", "x" * 121):
        with pytest.raises(ValueError, match="invalid run name"):
            layout.check_run_name(bad)
    for value in ("../etc", "Code", True, None, float("nan"), "a b"):
        with pytest.raises(ValueError, match="cannot hold"):
            layout.token(value)
    with pytest.raises(ValueError, match="needs 'seed'"):
        layout.run_name("n{n}-s{seed}", {"n": 3})


def test_spec_round_trips_as_json_and_names_are_checked():
    spec = RunSpec("toy", "x2-c0p5", {"x": 2, "scale": 0.5})
    assert RunSpec.from_dict(json.loads(json.dumps(spec.as_dict()))) == spec
    with pytest.raises(ValueError, match="exactly the keys"):
        RunSpec.from_dict({"kind": "toy", "run": "x2-c0p5"})
    with pytest.raises(ValueError, match="invalid run name"):
        RunSpec.from_dict({"kind": "toy", "run": "../x", "params": {}})


def test_sweep_plans_runs_merges_and_resumes(tmp_path):
    rows = run_sweep(tmp_path, "toy", TOY_PRESET, progress=False, log=lambda s: None)
    assert [r["y"] for r in rows] == [0.5, 1.0, 1.5]
    sweep = SweepDir(tmp_path)
    assert sweep.read_config()["kind"] == "toy" and [s.run for s in sweep.read_plan()] == [
        "x1-c0p5",
        "x2-c0p5",
        "x3-c0p5",
    ]
    assert sweep.rows() == rows and all(sweep.read_row(r["run"]) == r for r in rows)
    assert set(sweep.status().values()) == {"done"}
    # rerunning redoes nothing; a deleted results.jsonl is rebuilt from the runs' own rows
    (tmp_path / layout.RESULTS).unlink()
    assert run_sweep(tmp_path, "toy", None, progress=False, log=lambda s: None) == rows
    assert _calls(tmp_path) == ["x1-c0p5", "x2-c0p5", "x3-c0p5"]
    # a lost row.json is a run to redo (mutation: the row is what marks a run done)
    (sweep.run_dir("x2-c0p5") / layout.ROW).unlink()
    assert sweep.status()["x2-c0p5"] == "started"
    run_sweep(tmp_path, "toy", None, progress=False, log=lambda s: None)
    assert _calls(tmp_path)[-1] == "x2-c0p5" and len(_calls(tmp_path)) == 4


def test_run_spec_in_another_process_then_merge(tmp_path):
    sweep = SweepDir(tmp_path)
    sweep.open("toy", TOY_PRESET)
    ctx = sweep.context()
    specs = TOY.plan(ctx, print)
    sweep.write_plan(specs)
    assert set(sweep.status().values()) == {"pending"}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path), json.dumps(specs[1].as_dict())],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout) == {"run": "x2-c0p5", "y": 1.0}
    assert sweep.status() == {"x1-c0p5": "pending", "x2-c0p5": "done", "x3-c0p5": "pending"}
    assert sweep.merge() == [{"run": "x2-c0p5", "y": 1.0}]
    # the submitter's lock does not stop a worker
    with sweep.lock():
        assert run_spec(tmp_path, specs[0].as_dict())["y"] == 0.5


def test_specs_that_do_not_fit_the_sweep_are_refused(tmp_path):
    sweep = SweepDir(tmp_path)
    sweep.open("toy", TOY_PRESET)
    with pytest.raises(ValueError, match="parameters give 'x2-c0p5'"):
        run_spec(tmp_path, {"kind": "toy", "run": "x3-c0p5", "params": {"x": 2, "scale": 0.5}})
    with pytest.raises(ValueError, match="cannot run in the toy sweep"):
        run_spec(tmp_path, {"kind": "synthetic", "run": "x2-c0p5", "params": {"x": 2, "scale": 0.5}})
    spec = RunSpec("toy", "x2-c0p5", {"x": 2, "scale": 0.5})
    run_dir = sweep.run_dir(spec.run)
    run_dir.mkdir(parents=True)
    (run_dir / layout.SPEC).write_text(json.dumps({"kind": "toy", "run": "x2-c0p5", "params": {"x": 2, "scale": 9}}))
    with pytest.raises(ValueError, match="holds a different run spec"):
        run_spec(tmp_path, spec)
    (run_dir / layout.SPEC).unlink()
    assert run_spec(tmp_path, spec)["y"] == 1.0


def test_a_failed_run_leaves_no_row(tmp_path):
    sweep = SweepDir(tmp_path)
    sweep.open("toy", TOY_PRESET)
    spec = RunSpec("toy", "xm1-c0p5", {"x": -1, "scale": 0.5})
    with pytest.raises(RuntimeError, match="negative x"):
        run_spec(tmp_path, spec)
    assert sweep.read_row(spec.run) is None and sweep.status([spec]) == {spec.run: "started"}


def test_config_is_kept_and_other_settings_are_refused(tmp_path):
    run_sweep(tmp_path, "toy", TOY_PRESET, {"tag": "a"}, progress=False, log=lambda s: None)
    sweep = SweepDir(tmp_path)
    assert sweep.open("toy") == sweep.read_config()  # nothing given: the stored config
    assert sweep.open("toy", None, {"tag": None})["tag"] == "a"
    with pytest.raises(ValueError, match=r"other settings \(preset\)"):
        sweep.open("toy", ToyPreset(name="toy-small", scale=2.0))
    with pytest.raises(ValueError, match=r"other settings \(tag\)"):
        sweep.open("toy", None, {"tag": "b"})
    with pytest.raises(ValueError, match="not a synthetic sweep"):
        sweep.open("synthetic", "tiny")
    with pytest.raises(ValueError, match="unknown sweep kind"):
        get_kind("nope")


def test_two_submitters_are_refused(tmp_path):
    sweep = SweepDir(tmp_path)
    with sweep.lock():
        assert sweep.locked()
        with pytest.raises(SweepBusy, match="in use by another process"):
            run_sweep(tmp_path, "toy", TOY_PRESET, progress=False, log=lambda s: None)
    assert not sweep.locked()


def test_rows_recorded_without_their_runs_are_never_dropped(tmp_path):
    """Committed results ship results.jsonl without runs/: status counts them done, and a resume is
    refused (rebuilding results.jsonl from the runs would drop them); with the run directory there
    (the mutation) the row.json files are the truth again and the sweep resumes."""
    sweep = SweepDir(tmp_path)
    sweep.open("toy", TOY_PRESET)
    sweep.write_plan(_plan(sweep.context(), None))
    recorded = json.dumps({"run": "x1-c0p5", "y": 0.5}) + "\n"
    (tmp_path / layout.RESULTS).write_text(recorded)
    assert sweep.status()["x1-c0p5"] == "done" and sweep.status()["x2-c0p5"] == "pending"
    with pytest.raises(ValueError, match="records 1 run"):
        run_sweep(tmp_path, "toy", None, progress=False, log=lambda s: None)
    assert (tmp_path / layout.RESULTS).read_text() == recorded and not (tmp_path / "calls.log").exists()
    sweep.run_dir("x1-c0p5").mkdir(parents=True)
    run_sweep(tmp_path, "toy", None, progress=False, log=lambda s: None)
    assert _calls(tmp_path) == ["x1-c0p5", "x2-c0p5", "x3-c0p5"]


def test_presets_round_trip_through_json_and_refuse_unknown_settings():
    for kind, named in ((k, kinds.get_kind(k).presets) for k in kinds.kind_names()):
        for p in named.values():
            assert kinds.preset_from_dict(kind, json.loads(json.dumps(p.as_dict()))) == p
    with pytest.raises(ValueError, match="colour: unknown field"):
        kinds.preset_from_dict("synthetic", {"name": "x", "colour": 1})
    with pytest.raises(ValueError, match="unknown preset"):
        kinds.get_preset("huge", "synthetic")


def test_a_new_sweep_refuses_a_directory_holding_other_files(tmp_path):
    d = tmp_path / "work"
    (d / "runs" / "x").mkdir(parents=True)
    (d / "runs" / "x" / "best.pt").write_bytes(b"not mine")
    with pytest.raises(ValueError, match="exists and is not a tmcheck sweep"):
        run_sweep(d, "toy", TOY_PRESET, progress=False, log=lambda s: None)
    assert not SweepDir(d).exists() and not (d / layout.PLAN).exists()
    # an empty directory, or one holding only a lock left by a refused start, is a new sweep
    (d / "runs" / "x" / "best.pt").unlink()
    (d / "runs" / "x").rmdir()
    (d / "runs").rmdir()
    assert [r["run"] for r in run_sweep(d, "toy", TOY_PRESET, progress=False, log=lambda s: None)] == [
        "x1-c0p5",
        "x2-c0p5",
        "x3-c0p5",
    ]


PRESET_SCRIPT = """
import sys
from tmcheck.empirics.sweep import SweepDir
assert "tmcheck.empirics.sweep.model" not in sys.modules  # what the test is about: nothing imported it yet
p = SweepDir(sys.argv[1]).preset()
print(type(p).__name__, p.name)
"""


def test_preset_of_a_sweep_imports_its_kind_first(tmp_path):
    SweepDir(tmp_path).open("model", "tiny")
    out = subprocess.run(
        [sys.executable, "-c", PRESET_SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ModelPreset", "tiny"]
