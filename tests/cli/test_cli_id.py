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
        ["id", "synth", "--manifold", "torus", "--d", "2", "--D", "16", "--n", "1500", "--output", str(path), "--json"],
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["d"] == 2
    return path


def test_synth_writes_the_manifold(points):
    X = np.load(points)
    assert X.shape == (1500, 16) and X.dtype == np.float32


def test_estimate_json_and_out_file(points, tmp_path):
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["id", "estimate", str(points), "--bootstrap", "30", "--json", "--output", str(out)])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert got["dimension"] == pytest.approx(2.0, abs=0.2) and got["protocol"]["name"] == "full"
    assert got["ci"][0] < got["dimension"] < got["ci"][1]
    assert json.loads(out.read_text())["dimension"] == got["dimension"]


def test_estimate_paper_protocol_and_table(points):
    res = runner.invoke(
        app, ["id", "estimate", str(points), "--protocol", "paper", "--batch-points", "500", "--estimator", "twonn"]
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
        (["id", "synth", "--manifold", "klein", "--output", "{tmp}/x.npy"], "unknown manifold"),
        (["id", "synth", "--output", "{tmp}/x.txt"], "must end in .npy"),
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


def test_progress_with_elapsed_time_on_stderr_also_under_json(points, monkeypatch):
    # before: a spinner without a clock (117 s on 30,000 x 100 points gave no sign of the time taken)
    import re

    import tmcheck.cli.id as cli_id

    monkeypatch.setattr(cli_id, "PROGRESS_MIN_POINTS", 100)
    monkeypatch.setenv("TMCHECK_PROGRESS", "always")
    res = runner.invoke(app, ["id", "estimate", str(points), "--json"])
    assert res.exit_code == 0 and "mle on 1,500 x 16 points" in res.stderr
    assert re.search(r"\d:\d\d:\d\d", res.stderr), res.stderr  # the elapsed-time column
    json.loads(res.stdout)  # stdout stays one JSON document
    monkeypatch.setenv("TMCHECK_PROGRESS", "never")
    res = runner.invoke(app, ["id", "estimate", str(points)])
    assert res.exit_code == 0 and "1,500 x 16 points" not in res.stderr


# why kept: a table of bad inputs, one case a row: the shape of other such tables, other data
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
def test_option_validation_is_one_line(cli_error, points, args, message):
    assert message in cli_error(["id", "estimate", points, *args])


def test_old_spellings_are_refused_and_the_new_ones_work(tmp_path):
    """`--out` and `--batch-size` ended with #37 (their deprecation release is over)."""
    path = tmp_path / "p.npy"
    res = runner.invoke(app, ["id", "synth", "--d", "2", "--D", "8", "--n", "300", "--out", str(path)])
    assert res.exit_code == 2 and "No such option" in res.output and not path.exists()
    res = runner.invoke(app, ["id", "synth", "--d", "2", "--D", "8", "--n", "300", "--output", str(path)])
    assert res.exit_code == 0 and path.is_file()
    res = runner.invoke(app, ["id", "estimate", str(path), "--protocol", "paper", "--batch-size", "100", "--json"])
    assert res.exit_code == 2 and "No such option" in res.output
    res = runner.invoke(app, ["id", "estimate", str(path), "--protocol", "paper", "--batch-points", "100", "--json"])
    assert res.exit_code == 0, res.output


def test_a_million_points_are_refused_in_seconds_under_the_full_protocol(tmp_path):
    import time

    import numpy as np

    path = tmp_path / "big.npy"
    np.save(path, np.random.default_rng(0).standard_normal((1_000_000, 3)).astype(np.float32))
    t0 = time.perf_counter()
    res = runner.invoke(app, ["id", "estimate", str(path), "--json"])
    assert res.exit_code == 2 and "1,000,000 points" in res.stderr and "paper protocol" in res.stderr
    took = time.perf_counter() - t0
    assert took < 5 or pytest.skip(f"the refusal took {took:.1f} s on this (loaded) machine")
