"""`tmcheck sweep synthetic`, `tmcheck report` and `tmcheck synth data` through Typer's runner: the tiny
preset end to end (what CI runs), `--set FIELD=VALUE` (the same configs as the override options it
replaced), one-line errors with exit code 2, a report that cannot be made refused before anything
trains, and the data command's file."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app

runner = CliRunner()


def test_tiny_preset_runs_end_to_end_and_writes_a_report(tmp_path):
    out = tmp_path / "tiny"
    res = runner.invoke(app, ["sweep", "synthetic", str(out), "--preset", "tiny", "--bootstrap", "200"])
    assert res.exit_code == 0, res.output
    for name in (
        "config.json",
        "results.jsonl",
        "report.md",
        "report.json",
        "fig_alpha.png",
        "fig_loss.png",
        "fig_model.png",
    ):
        assert (out / name).exists(), name
    assert "predicted α_D" in res.stdout
    rep = json.loads((out / "report.json").read_text())
    assert {(e["d"], e["method"]) for e in rep["data_scaling"]} == {
        (d, m) for d in (1, 2) for m in ("transformer", "knn", "krr")
    }
    # `tmcheck report` refits the same directory, as JSON (`synth report`, its old spelling, is refused:
    # tests/cli/test_cli_deprecations.py)
    res = runner.invoke(app, ["report", str(out), "--bootstrap", "50", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["kind"] == "synthetic"
    # the sweep resumes the same directory (nothing to train)
    res = runner.invoke(app, ["sweep", "synthetic", str(out), "--set", "seeds=0,1", "--no-report", "--json"])
    assert res.exit_code == 0, res.output
    assert res.stderr.strip() == ""


# why kept: a table of bad inputs, one case a row: the shape of other such tables, other data
@pytest.mark.parametrize(
    "args,message",
    [
        (["--set", "dims=5", "--set", "D=4"], "exceeds the ambient dimension D=4"),
        (["--set", "betas=1.5"], "--set betas: expected less than or equal to 1"),
        (["--set", "betas=0"], "--set betas: expected greater than 0"),
        (["--set", "ns=10,100"], "smaller than the validation split"),
        (["--set", "dims=one"], "--set dims: expected a valid integer"),
        (["--set", "dims=1,,2"], "empty item"),
        (["--set", "dims="], "--set dims: empty list"),
        (["--set", "d=1"], "unknown field 'd' of a synthetic preset; settable: dims, betas, ns"),
        (["--set", "dims"], "expected FIELD=VALUE"),
        (["--preset", "huge"], "unknown preset"),
        (["--set", "min_steps=10", "--set", "max_steps=5"], "min_steps <= max_steps"),
        (["--set", "baselines=svm"], "unknown baseline"),
    ],
)
def test_bad_parameters_give_one_line_errors(cli_error, tmp_path, args, message):
    assert message in cli_error(["sweep", "synthetic", tmp_path / "x", *args])
    assert not (tmp_path / "x" / "results.jsonl").exists()


def test_report_of_a_directory_that_is_not_a_sweep_or_lacks_fields(tmp_path):
    def one_line(message):
        res = runner.invoke(app, ["report", str(tmp_path)])
        assert res.exit_code == 2 and message in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.output

    one_line("config.json")
    (tmp_path / "config.json").write_text(json.dumps({"preset": {}}))
    one_line("kind: missing (required)")
    # a pretraining config of the earliest version (no kind) whose preset lacks fields: one line, not a TypeError
    (tmp_path / "config.json").write_text(json.dumps({"preset": {"name": "x"}, "corpora": ["stories"]}))
    one_line("preset.corpora: missing (required)")
    (tmp_path / "config.json").write_text(json.dumps({"kind": "synthetic", "preset": {"name": "x", "ns": "many"}}))
    one_line("preset.ns: expected a valid array, got 'many'")


def test_data_command_writes_points_on_the_manifold(cli_json, tmp_path):
    path = tmp_path / "x.npz"
    summary = cli_json(
        ["synth", "data", "--output", path, *"--n 300 --d 3 --D 10 --manifold sphere --target kinks --beta 0.5".split()]
    )
    assert summary["max_residual"] < 1e-12
    with np.load(path) as z:
        assert z["X"].shape == (300, 10) and z["y"].shape == (300,)
        np.testing.assert_allclose(np.linalg.norm(z["X"], axis=1), 1.0, atol=1e-12)
    res = runner.invoke(app, ["synth", "data", "--output", str(path), "--d", "3", "--D", "2"])
    assert res.exit_code == 2 and "exceeds the ambient dimension" in res.stderr


REGRESS_BAD = [("noise", v) for v in ("nan", "inf", "-1")] + [
    ("epochs", "0"),
    ("min_steps", "0"),
    ("max_steps", "-3"),
    ("seeds", "0,-1"),
    ("model_dims", "0"),
    ("D", "0"),
]
STEPS_CLASH = ["--set", "min_steps=10", "--set", "max_steps=5"]


@pytest.mark.parametrize("field,value", REGRESS_BAD, ids=[f"{f}={v}" for f, v in REGRESS_BAD])
def test_bad_numbers_are_refused_before_any_config_is_saved(tmp_path, field, value):
    out = tmp_path / "x"
    res = runner.invoke(app, ["sweep", "synthetic", str(out), "--no-report", "--set", f"{field}={value}"])
    err = res.stderr.strip()
    assert res.exit_code == 2 and len(err.splitlines()) == 1 and f"--set {field}" in err, res.output
    assert not out.exists()
    # the same command with a valid value passes the CLI check (stopped by the preset's own check here)
    good = {"noise": "0", "seeds": "0", "model_dims": "1", "D": "1"}.get(field, "1")
    args = ["--set", f"{field}={good}", *STEPS_CLASH]  # the last setting of a field wins, as before
    res = runner.invoke(app, ["sweep", "synthetic", str(out), "--no-report", *args])
    assert res.exit_code == 2 and "min_steps <= max_steps" in res.stderr, res.output


@pytest.mark.parametrize(
    "args", [["--noise", "nan"], ["--noise", "inf"], ["--noise", "-1"], ["--seed", "-1"], ["--n", "0"]], ids=" ".join
)
def test_data_command_refuses_bad_numbers(tmp_path, args):
    path = tmp_path / "x.npz"
    res = runner.invoke(app, ["synth", "data", "--output", str(path), *args])
    err = res.stderr.strip()
    assert res.exit_code == 2 and len(err.splitlines()) == 1 and args[0] in err, res.output
    assert not path.exists()


@pytest.mark.parametrize(
    "args,message",
    [
        (["--set", "ns=100,300"], "at least 3 sizes n, got 2"),
        (
            ["--set", "model_dims=1", "--set", "ns=100,200,300"],
            None,
        ),  # the tiny preset's 3 widths: a model fit can be made
    ],
)
def test_a_report_that_cannot_be_made_is_refused_before_anything_trains(tmp_path, args, message):
    out = tmp_path / "x"
    if message is None:  # the mutation: enough sizes, so the check passes and the preset's own check stops it
        res = runner.invoke(app, ["sweep", "synthetic", str(out), *args, *STEPS_CLASH])
        assert res.exit_code == 2 and "min_steps <= max_steps" in res.stderr, res.output
        return
    res = runner.invoke(app, ["sweep", "synthetic", str(out), *args])
    assert res.exit_code == 2 and message in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.output
    assert not out.exists()
    res = runner.invoke(app, ["sweep", "synthetic", str(out), *args, "--no-report", "--set", "max_steps=0"])
    assert res.exit_code == 2 and "--set max_steps" in res.stderr  # without a report the sizes are not checked


def test_one_seed_is_a_valid_sweep_until_its_report(tmp_path):
    """Nothing of the sweep refuses one seed: it plans and runs every run of the seed."""
    from tmcheck.empirics.sweep import run_sweep
    from tmcheck.empirics.sweep.kinds import get_preset

    p = get_preset("tiny", "synthetic").with_overrides(
        seeds=(0,), dims=(1,), ns=(50, 120, 300), model_dims=(), min_steps=20, max_steps=20, baselines=("knn",)
    )
    rows = run_sweep(tmp_path / "one", "synthetic", p, progress=False, log=lambda s: None)
    assert {r["seed"] for r in rows} == {0} and len(rows) == 6


def test_one_seed_sweep_finishes_with_a_report(tmp_path):
    res = runner.invoke(app, ["sweep", "synthetic", str(tmp_path / "one"), "--set", "seeds=0", "--bootstrap", "50"])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "one" / "report.json").read_text())["data_scaling"]


# The removed override options of `sweep synthetic` (before #37) and the preset each gave, as the old
# command built it: base.with_overrides(**fields), named '<preset>-custom'. `--set` must write the same config.
OLD_OPTIONS = [
    (
        "tiny",
        ["--d", "1,2", "--beta", "1,0.5", "--n", "100,200,400", "--seeds", "0"],
        ["dims=1,2", "betas=1,0.5", "ns=100,200,400", "seeds=0"],
        {"dims": (1, 2), "betas": (1.0, 0.5), "ns": (100, 200, 400), "seeds": (0,)},
    ),
    (
        "tiny",
        ["--D", "8", "--manifold", "sphere", "--target", "kinks", "--density", "tilted", "--noise", "0.1"],
        ["D=8", "manifold=sphere", "target=kinks", "density=tilted", "noise=0.1"],
        {"D": 8, "manifold": "sphere", "target": "kinks", "density": "tilted", "noise": 0.1},
    ),
    (
        "tiny",
        ["--size", "theory", "--attention", "softmax", "--epochs", "5", "--min-steps", "10", "--max-steps", "20"]
        + ["--baselines", "knn", "--model-d", ""],
        ["size=theory", "attention=softmax", "epochs=5", "min_steps=10", "max_steps=20", "baselines=knn"]
        + ["model_dims="],
        {"size": "theory", "attention": "softmax", "epochs": 5, "min_steps": 10, "max_steps": 20}
        | {"baselines": ("knn",), "model_dims": ()},
    ),
    ("cpu-decide2", ["--n", "1000,3000,10000"], ["ns=1000,3000,10000"], {"ns": (1000, 3000, 10000)}),
]


@pytest.mark.parametrize(
    "preset,old,settings,fields", OLD_OPTIONS, ids=lambda v: " ".join(v) if isinstance(v, list) else None
)
def test_set_writes_the_config_the_old_options_wrote(tmp_path, monkeypatch, preset, old, settings, fields):
    import tmcheck.empirics.sweep as sweep_pkg
    from tmcheck.empirics.sweep.kinds import get_kind, get_preset

    def write_config(path, kind, p, **kw):  # the config.json run_sweep writes first, and no training
        (path / "config.json").parent.mkdir(parents=True)
        (path / "config.json").write_text(json.dumps(get_kind(kind).new_config(p, {}), sort_keys=True))
        return []

    monkeypatch.setattr(sweep_pkg, "run_sweep", write_config)
    out = tmp_path / "new"
    argv = ["sweep", "synthetic", str(out), "--preset", preset, "--no-report", "--json"]
    res = runner.invoke(app, [*argv, *(a for s in settings for a in ("--set", s))])
    assert res.exit_code == 0, res.output
    want = get_preset(preset, "synthetic").with_overrides(**fields).with_overrides(name=f"{preset}-custom")
    assert json.loads((out / "config.json").read_text()) == json.loads(
        json.dumps(get_kind("synthetic").new_config(want, {}))
    )
    res = runner.invoke(app, [*argv, *old])  # the old spelling is refused now, in one line
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1, res.output


def test_set_without_a_change_keeps_the_presets_name(tmp_path, monkeypatch):
    import tmcheck.empirics.sweep as sweep_pkg

    seen = {}
    monkeypatch.setattr(sweep_pkg, "run_sweep", lambda path, kind, p, **kw: seen.setdefault("p", p) and [])
    res = runner.invoke(app, ["sweep", "synthetic", str(tmp_path / "s"), "--set", "D=6", "--no-report", "--json"])
    assert res.exit_code == 0, res.output
    assert seen["p"].name == "tiny"  # the tiny preset's D is 6 already
