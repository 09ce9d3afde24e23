"""`tmcheck fit` through the real CLI app: CSV in, fit and intervals out, plot written."""

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app
from tmcheck.empirics.fit import chinchilla_points

runner = CliRunner()
DATA = Path(__file__).resolve().parents[1] / "data" / "chinchilla_svg_extracted.csv"


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    rng = np.random.default_rng(0)
    x = np.repeat(np.geomspace(1e5, 1e9, 8), 3)
    y = (1.5 + 40 * x**-0.3) * np.exp(rng.normal(0, 0.004, len(x)))
    path = tmp_path_factory.mktemp("fit") / "study.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["n", "loss", "seed"])
        w.writerows(zip(x, y, np.tile([0, 1, 2], 8)))
    return path


def test_offset_fit_json(study, tmp_path):
    res = runner.invoke(app, ["fit", str(study), "--x", "n", "--y", "loss", "--group", "n", "--bootstrap", "100",
                              "--json", "--compare", "--plot", str(tmp_path / "fit.png")])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert got["params"]["alpha"] == pytest.approx(0.3, abs=0.05)
    assert got["ci"]["alpha"][0] < got["params"]["alpha"] < got["ci"]["alpha"][1]
    assert got["n_groups"] == 8 and got["converged"] is True
    assert got["model_choice"]["choice"] == "offset"
    assert (tmp_path / "fit.png").read_bytes()[:4] == b"\x89PNG"


def test_loglog_table_output(study):
    res = runner.invoke(app, ["fit", str(study), "--x", "n", "--form", "loglog", "--bootstrap", "0"])
    assert res.exit_code == 0, res.output
    assert "alpha" in res.stdout and "loglog" in res.stdout


def test_joint_on_chinchilla(tmp_path):
    x, y = chinchilla_points(DATA)
    path = tmp_path / "chin.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["n", "d", "loss"])
        w.writerows(zip(x[:, 0], x[:, 1], y))
    res = runner.invoke(app, ["fit", str(path), "--x", "n,d", "--form", "joint", "--bootstrap", "0", "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)["params"]
    assert abs(got["E"] - 1.817) < 0.026 and abs(got["alpha"] - 0.3478) < 0.015 and abs(got["beta"] - 0.3658) < 0.021


@pytest.mark.parametrize("args,message", [
    (["--x", "q"], "no column 'q'"),
    (["--x", "n", "--form", "joint"], "two --x columns"),
    (["--x", "n", "--form", "cubic"], "unknown form"),
])
def test_errors_are_one_line_exit_2(study, args, message):
    res = runner.invoke(app, ["fit", str(study), *args])
    assert res.exit_code == 2
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
