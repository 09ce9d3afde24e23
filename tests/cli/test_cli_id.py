"""`tmcheck id`: estimate and synth through the real CLI app (one-line errors, exit code 2)."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app

runner = CliRunner()


@pytest.fixture(scope="module")
def points(tmp_path_factory):
    path = tmp_path_factory.mktemp("id") / "torus.npy"
    res = runner.invoke(
        app,
        ["id", "synth", "--manifold", "torus", "--d", "2", "--D", "16", "--n", "1500", "--out", str(path), "--json"],
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["d"] == 2
    return path


def test_synth_writes_the_manifold(points):
    X = np.load(points)
    assert X.shape == (1500, 16) and X.dtype == np.float32


def test_estimate_json_and_out_file(points, tmp_path):
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["id", "estimate", str(points), "--bootstrap", "30", "--json", "--out", str(out)])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert got["dimension"] == pytest.approx(2.0, abs=0.2) and got["protocol"]["name"] == "full"
    assert got["ci"][0] < got["dimension"] < got["ci"][1]
    assert json.loads(out.read_text())["dimension"] == got["dimension"]


def test_estimate_paper_protocol_and_table(points):
    res = runner.invoke(
        app, ["id", "estimate", str(points), "--protocol", "paper", "--batch-size", "500", "--estimator", "twonn"]
    )
    assert res.exit_code == 0, res.output
    assert "3 x 500" in res.stdout and "dimension" in res.stdout


def test_duplicates_reported(tmp_path, points):
    X = np.load(points)
    path = tmp_path / "dups.npy"
    np.save(path, np.concatenate([X, X[:40]]))
    res = runner.invoke(app, ["id", "estimate", str(path), "--bootstrap", "0", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["n_duplicates"] == 40
    res = runner.invoke(app, ["id", "estimate", str(path), "--duplicates", "error"])
    assert res.exit_code == 2 and "40 duplicate" in res.stderr


@pytest.mark.parametrize(
    "args,message",
    [
        (["id", "estimate", "missing.npy"], "No such file"),
        (["id", "estimate", "{points}", "--estimator", "foo"], "unknown estimator"),
        (["id", "estimate", "{points}", "--k", "5000"], "N=1500 <= K=5000"),
        (["id", "synth", "--manifold", "klein", "--out", "{tmp}/x.npy"], "unknown manifold"),
        (["id", "synth", "--out", "{tmp}/x.txt"], "must end in .npy"),
    ],
)
def test_errors_are_one_line_exit_2(points, tmp_path, args, message):
    args = [a.format(points=points, tmp=tmp_path) for a in args]
    res = runner.invoke(app, args)
    assert res.exit_code == 2
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_nan_points_rejected(tmp_path):
    X = np.random.default_rng(0).normal(size=(100, 3))
    X[5, 0] = np.inf
    np.save(tmp_path / "bad.npy", X)
    res = runner.invoke(app, ["id", "estimate", str(tmp_path / "bad.npy")])
    assert res.exit_code == 2 and "NaN or inf" in res.stderr


def test_gride_and_mle_curve_tables(points):
    res = runner.invoke(app, ["id", "estimate", str(points), "--estimator", "gride"])
    assert res.exit_code == 0, res.output
    assert "likelihood ratio" in res.stdout and "GRIDE vs scale" in res.stdout
    res = runner.invoke(app, ["id", "estimate", str(points), "--estimator", "mle-curve", "--json"])
    got = json.loads(res.stdout)
    assert [c["k"] for c in got["protocol"]["curve"]] == [5, 10, 20, 40, 80]
    assert got["protocol"]["interval"].startswith("percentile bootstrap over points, 200")


def test_rtol_option_merges_near_duplicates(points, tmp_path):
    X = np.load(points).astype(np.float64)
    path = tmp_path / "near.npy"
    np.save(path, np.concatenate([X, X[:30] + 1e-9]))  # distinct in float64, 1e-9 apart
    res = runner.invoke(app, ["id", "estimate", str(path), "--bootstrap", "0", "--json"])
    assert json.loads(res.stdout)["n_duplicates"] == 0
    res = runner.invoke(app, ["id", "estimate", str(path), "--bootstrap", "0", "--json", "--rtol", "1e-6"])
    got = json.loads(res.stdout)
    assert got["n_duplicates"] == 30 and got["protocol"]["duplicate_rtol"] == 1e-6


def test_progress_only_without_json(points, monkeypatch):
    import tmcheck.cli.id as cli_id

    shown = []
    monkeypatch.setattr(cli_id, "PROGRESS_MIN_POINTS", 100)
    monkeypatch.setattr(
        cli_id.err_console, "status", lambda text: shown.append(text) or __import__("contextlib").nullcontext()
    )
    res = runner.invoke(app, ["id", "estimate", str(points), "--json"])
    assert res.exit_code == 0 and not shown and res.stderr == ""
    json.loads(res.stdout)
    res = runner.invoke(app, ["id", "estimate", str(points)])
    assert res.exit_code == 0 and len(shown) == 1 and "1,500 x 16" in shown[0]


@pytest.mark.parametrize(
    "args,message",
    [
        (["--bootstrap", "-1"], "--bootstrap"),
        (["--device", "gpu"], "unknown device"),
        (["--k", "0"], "--k"),
        (["--rtol", "-1"], "--rtol"),
        (["--estimator", "mle-curve", "--k", "7"], "k=7 must be one of"),
    ],
)
def test_option_validation_is_one_line(points, args, message):
    res = runner.invoke(app, ["id", "estimate", str(points), *args])
    assert res.exit_code == 2, res.output
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
