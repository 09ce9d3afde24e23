"""`tmcheck synth regress|report|data` through Typer's runner: the tiny preset end to end (what CI
runs), one-line errors with exit code 2, and the data command's file."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app

runner = CliRunner()


def test_tiny_preset_runs_end_to_end_and_writes_a_report(tmp_path):
    out = tmp_path / "tiny"
    res = runner.invoke(app, ["synth", "regress", "--preset", "tiny", "--out", str(out), "--bootstrap", "200"])
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
    # the report command refits the same directory, as JSON
    res = runner.invoke(app, ["synth", "report", str(out), "--bootstrap", "50", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["kind"] == "synthetic"
    # so does the top-level `tmcheck report`, which recognises a synthetic sweep directory
    res = runner.invoke(app, ["report", str(out), "--bootstrap", "50", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["kind"] == "synthetic"


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
    res = runner.invoke(app, ["synth", "regress", "--out", str(tmp_path / "x"), *args])
    assert res.exit_code == 2
    err = res.stderr.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not (tmp_path / "x" / "results.jsonl").exists()


def test_report_of_a_directory_that_is_not_a_synthetic_sweep(tmp_path):
    res = runner.invoke(app, ["synth", "report", str(tmp_path)])
    assert res.exit_code == 2 and "config.json" in res.stderr
    (tmp_path / "config.json").write_text(json.dumps({"preset": {}}))
    res = runner.invoke(app, ["synth", "report", str(tmp_path)])
    assert res.exit_code == 2 and "names no sweep kind" in res.stderr
    (tmp_path / "config.json").write_text(json.dumps({"preset": {}, "corpora": ["stories"]}))
    res = runner.invoke(app, ["synth", "report", str(tmp_path)])
    assert res.exit_code == 2 and "not a synthetic sweep" in res.stderr


def test_data_command_writes_points_on_the_manifold(tmp_path):
    path = tmp_path / "x.npz"
    res = runner.invoke(
        app,
        [
            "synth",
            "data",
            "--out",
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
    res = runner.invoke(app, ["synth", "data", "--out", str(path), "--d", "3", "--D", "2"])
    assert res.exit_code == 2 and "exceeds the ambient dimension" in res.stderr


REGRESS_BAD = [(["--noise", v], "--noise") for v in ("nan", "inf", "-1")] + [
    (["--epochs", "0"], "--epochs"),
    (["--min-steps", "0"], "--min-steps"),
    (["--max-steps", "-3"], "--max-steps"),
    (["--seed", "0,-1"], "--seed"),
    (["--model-d", "0"], "--model-d"),
    (["--D", "0"], "--D"),
]


@pytest.mark.parametrize("args,option", REGRESS_BAD, ids=[" ".join(a) for a, _ in REGRESS_BAD])
def test_bad_numbers_are_refused_before_any_config_is_saved(tmp_path, args, option):
    out = tmp_path / "x"
    res = runner.invoke(app, ["synth", "regress", "--out", str(out), "--no-report", *args])
    err = res.stderr.strip()
    assert res.exit_code == 2 and len(err.splitlines()) == 1 and option in err, res.output
    assert not out.exists()
    # the same command with a valid value passes the CLI check (stopped by the preset's own check here)
    good = {"--noise": "0", "--seed": "0", "--model-d": "1", "--D": "1"}.get(option, "1")
    res = runner.invoke(
        app,
        ["synth", "regress", "--out", str(out), "--no-report", option, good, "--min-steps", "10", "--max-steps", "5"],
    )
    assert res.exit_code == 2 and "min_steps <= max_steps" in res.stderr, res.output


@pytest.mark.parametrize(
    "args", [["--noise", "nan"], ["--noise", "inf"], ["--noise", "-1"], ["--seed", "-1"], ["--n", "0"]], ids=" ".join
)
def test_data_command_refuses_bad_numbers(tmp_path, args):
    path = tmp_path / "x.npz"
    res = runner.invoke(app, ["synth", "data", "--out", str(path), *args])
    err = res.stderr.strip()
    assert res.exit_code == 2 and len(err.splitlines()) == 1 and args[0] in err, res.output
    assert not path.exists()
