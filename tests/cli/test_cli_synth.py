"""`tmcheck sweep synthetic`, `tmcheck report` and `tmcheck synth data` through Typer's runner: the tiny
preset end to end (what CI runs), the old spellings (`synth regress`, `synth report`, `--seed`,
`synth data --out`) with one deprecation line each, one-line errors with exit code 2, a report that
cannot be made refused before anything trains, and the data command's file."""

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
    # `tmcheck report` refits the same directory, as JSON; `synth report` is its deprecated spelling
    res = runner.invoke(app, ["report", str(out), "--bootstrap", "50", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["kind"] == "synthetic"
    res = runner.invoke(app, ["synth", "report", str(out), "--bootstrap", "50", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["kind"] == "synthetic", res.output
    assert res.stderr.strip() == "tmcheck: 'synth report' is deprecated; use 'tmcheck report'"
    # the old spelling of the sweep resumes the same directory (nothing to train) with its deprecation lines
    res = runner.invoke(app, ["synth", "regress", "--out", str(out), "--seed", "0,1", "--no-report", "--json"])
    assert res.exit_code == 0, res.output
    assert res.stderr.strip().splitlines() == [
        "tmcheck: 'synth regress' is deprecated; use 'tmcheck sweep synthetic'",
        "tmcheck: '--seed' is deprecated; use '--seeds'",
    ]


@pytest.mark.parametrize(
    "args,message",
    [
        (["--d", "5", "--D", "4"], "exceeds the ambient dimension D=4"),
        (["--beta", "1.5"], "β must lie in (0, 1]"),
        (["--beta", "0"], "β must lie in (0, 1]"),
        (["--n", "10,100"], "smaller than the validation split"),
        (["--d", "one"], "cannot read 'one' as int"),
        (["--d", "1,,2"], "empty item"),
        (["--preset", "huge"], "unknown preset"),
        (["--min-steps", "10", "--max-steps", "5"], "min_steps <= max_steps"),
        (["--baselines", "svm"], "unknown baseline"),
    ],
)
def test_bad_parameters_give_one_line_errors(tmp_path, args, message):
    res = runner.invoke(app, ["sweep", "synthetic", str(tmp_path / "x"), *args])
    assert res.exit_code == 2
    err = res.stderr.strip()
    assert message in err and len(err.splitlines()) == 1
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


def test_data_command_writes_points_on_the_manifold(tmp_path):
    path = tmp_path / "x.npz"
    res = runner.invoke(
        app,
        [
            "synth",
            "data",
            "--output",
            str(path),
            "--n",
            "300",
            "--d",
            "3",
            "--D",
            "10",
            "--manifold",
            "sphere",
            "--target",
            "kinks",
            "--beta",
            "0.5",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["max_residual"] < 1e-12
    with np.load(path) as z:
        assert z["X"].shape == (300, 10) and z["y"].shape == (300,)
        np.testing.assert_allclose(np.linalg.norm(z["X"], axis=1), 1.0, atol=1e-12)
    res = runner.invoke(app, ["synth", "data", "--output", str(path), "--d", "3", "--D", "2"])
    assert res.exit_code == 2 and "exceeds the ambient dimension" in res.stderr
    res = runner.invoke(app, ["synth", "data", "--out", str(tmp_path / "old.npz"), "--n", "50"])
    assert res.exit_code == 0 and (tmp_path / "old.npz").exists(), res.output
    assert res.stderr.strip() == "tmcheck: '--out' is deprecated; use '--output'"


REGRESS_BAD = [(["--noise", v], "--noise") for v in ("nan", "inf", "-1")] + [
    (["--epochs", "0"], "--epochs"),
    (["--min-steps", "0"], "--min-steps"),
    (["--max-steps", "-3"], "--max-steps"),
    (["--seeds", "0,-1"], "--seeds"),
    (["--model-d", "0"], "--model-d"),
    (["--D", "0"], "--D"),
]


@pytest.mark.parametrize("args,option", REGRESS_BAD, ids=[" ".join(a) for a, _ in REGRESS_BAD])
def test_bad_numbers_are_refused_before_any_config_is_saved(tmp_path, args, option):
    out = tmp_path / "x"
    res = runner.invoke(app, ["sweep", "synthetic", str(out), "--no-report", *args])
    err = res.stderr.strip()
    assert res.exit_code == 2 and len(err.splitlines()) == 1 and option in err, res.output
    assert not out.exists()
    # the same command with a valid value passes the CLI check (stopped by the preset's own check here)
    good = {"--noise": "0", "--seeds": "0", "--model-d": "1", "--D": "1"}.get(option, "1")
    res = runner.invoke(
        app,
        ["sweep", "synthetic", str(out), "--no-report", option, good, "--min-steps", "10", "--max-steps", "5"],
    )
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
        (["--n", "100,300"], "at least 3 sizes n, got 2"),
        (["--model-d", "1", "--n", "100,200,300"], None),  # the tiny preset's 3 widths: a model fit can be made
    ],
)
def test_a_report_that_cannot_be_made_is_refused_before_anything_trains(tmp_path, args, message):
    out = tmp_path / "x"
    if message is None:  # the mutation: enough sizes, so the check passes and the preset's own check stops it
        res = runner.invoke(app, ["sweep", "synthetic", str(out), *args, "--min-steps", "10", "--max-steps", "5"])
        assert res.exit_code == 2 and "min_steps <= max_steps" in res.stderr, res.output
        return
    res = runner.invoke(app, ["sweep", "synthetic", str(out), *args])
    assert res.exit_code == 2 and message in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.output
    assert not out.exists()
    res = runner.invoke(app, ["sweep", "synthetic", str(out), *args, "--no-report", "--max-steps", "0"])
    assert res.exit_code == 2 and "--max-steps" in res.stderr  # without a report the sizes are not checked


def test_one_seed_is_a_valid_sweep_until_its_report(tmp_path):
    """Nothing of the sweep refuses one seed: it plans and runs every run of the seed."""
    from tmcheck.empirics.presets import get_preset
    from tmcheck.empirics.sweep import run_sweep

    p = get_preset("tiny", "synthetic").with_overrides(
        seeds=(0,), dims=(1,), ns=(50, 120, 300), model_dims=(), min_steps=20, max_steps=20, baselines=("knn",)
    )
    rows = run_sweep(tmp_path / "one", "synthetic", p, progress=False, log=lambda s: None)
    assert {r["seed"] for r in rows} == {0} and len(rows) == 6


def test_one_seed_sweep_finishes_with_a_report(tmp_path):
    res = runner.invoke(app, ["sweep", "synthetic", str(tmp_path / "one"), "--seeds", "0", "--bootstrap", "50"])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "one" / "report.json").read_text())["data_scaling"]
