"""`tmcheck fit` through the real CLI app: CSV in, calibrated fit out; Chinchilla in one command from the
shared CSV; degenerate fits warned, never "converged"; bad input one line and exit 2; plot written."""

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app
from tmcheck.empirics.fit import EPOCH_CHINCHILLA

runner = CliRunner()
DATA = Path(__file__).resolve().parents[1] / "data" / "chinchilla_svg_extracted.csv"
FAST = ["--coverage-reps", "40", "--bootstrap", "50"]


def write_csv(path: Path, header, rows) -> Path:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    rng = np.random.default_rng(0)
    x = np.repeat(np.geomspace(1e5, 1e9, 8), 3)
    y = (1.5 + 40 * x**-0.3) * np.exp(rng.normal(0, 0.004, len(x)))
    corpus = np.where(np.arange(len(x)) % 2, "a", "b")
    return write_csv(
        tmp_path_factory.mktemp("fit") / "study.csv",
        ["n", "loss", "seed", "corpus"],
        zip(x, y, np.tile([0, 1, 2], 8), corpus, strict=True),
    )


def fit_json(study, *args) -> dict:
    """`tmcheck fit STUDY --x n ARGS --json` (fast settings), which must succeed, as parsed JSON."""
    res = runner.invoke(app, ["fit", str(study), "--x", "n", *args, *FAST, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_offset_fit_json(study, tmp_path):
    got = fit_json(study, "--y", "loss", "--compare", "--plot", str(tmp_path / "fit.png"), "--d", "4.67")
    assert got["prediction"]["outcome"] != "differs"
    assert got["params"]["alpha"] == pytest.approx(0.3, abs=0.05)
    iv = got["interval"]
    assert iv["lo"] < got["alpha"] < iv["hi"] and iv["method"] in got["fit"]["coverage"]
    assert "measured coverage" in iv["text"] and got["status"] == "converged"
    assert got["fit"]["design"]["seeds_per_size"] == [3] * 8
    assert (
        got["prediction"]["outcome"] in ("equivalent", "differs", "undecided") and got["prediction"]["margin"] == 0.05
    )
    assert got["range"]["entries"][0]["range"] == "all sizes" and got["curvature"]["floor"]
    assert got["model_choice"]["None"]["choice"] == "offset"
    assert (tmp_path / "fit.png").read_bytes()[:4] == b"\x89PNG"


def test_groups_are_fitted_separately_and_plotted(study, tmp_path):
    got = fit_json(study, "--group", "corpus", "--form", "loglog", "--plot", str(tmp_path / "g.png"))
    assert set(got["groups"]) == {"a", "b"} and all(g["n_points"] == 12 for g in got["groups"].values())
    assert (tmp_path / "g.png").stat().st_size > 1000


def test_loglog_table_output(study):
    res = runner.invoke(app, ["fit", str(study), "--x", "n", "--form", "loglog", *FAST])
    assert res.exit_code == 0, res.output
    assert "alpha" in res.stdout and "loglog" in res.stdout and "status: converged" in res.stdout


def test_chinchilla_one_command_reproduces_epoch(tmp_path):
    args = ["fit", str(DATA), "--derive", "D=C/(6*N)", "--drop-top", "5", "--x", "N,D", "--form", "joint", "--json"]
    res = runner.invoke(app, args + ["--bootstrap", "0", "--plot", str(tmp_path / "chin.png")])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert got["n_points"] == 240 and got["huber_delta"] == 1e-3 and got["status"] == "converged"
    assert "N := column 'Model Size'" in got["preprocessing"] and "C := column 'Training FLOP'" in got["preprocessing"]
    for key, (value, se) in EPOCH_CHINCHILLA.items():
        assert abs(got["params"][key] - value) < se, key
    assert (tmp_path / "chin.png").read_bytes()[:4] == b"\x89PNG"
    # delta is settable and matters; without --drop-top the fit sees Epoch's five outliers
    wide = json.loads(runner.invoke(app, args + ["--bootstrap", "0", "--huber-delta", "1"]).stdout)
    assert wide["huber_delta"] == 1.0 and abs(wide["params"]["beta"] - EPOCH_CHINCHILLA["beta"][0]) > 0.021


def test_flops_where_tokens_are_expected_warns_degenerate():
    res = runner.invoke(
        app, ["fit", str(DATA), "--derive", "D=C/(6*N)", "--x", "N,C", "--form", "joint", "--bootstrap", "0"]
    )
    assert res.exit_code == 0, res.output
    assert "warning" in res.stderr and "degenerate" in res.stderr and "tokens rather than FLOPs" in res.stderr
    assert "converged" not in res.stdout and "status: degenerate" in res.stdout


def test_increasing_loss_warns_degenerate(tmp_path):
    n = np.repeat(np.geomspace(100, 1e5, 5), 2)
    path = write_csv(
        tmp_path / "up.csv", ["n", "loss"], zip(n, 2 + 0.01 * np.log(n) + np.tile([0, 1e-3], 5), strict=True)
    )
    res = runner.invoke(app, ["fit", str(path), "--x", "n", *FAST])
    assert res.exit_code == 0, res.output
    assert "degenerate" in res.stderr and "does not decrease" in res.stderr
    assert "converged" not in res.stdout


def test_where_filters_rows(study):
    res = runner.invoke(
        app, ["fit", str(study), "--x", "n", "--where", "n < 5e8 and loss > 0", "--form", "loglog", *FAST, "--json"]
    )
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert got["n_points"] == 21 and any(s.startswith("kept 21 of 24") for s in got["preprocessing"])


@pytest.mark.parametrize(
    "rows,args,message",
    [
        ([[1, 3], [2, "nan"], [3, 1], [4, 0.5]], ["--x", "n"], "NaN"),
        ([[1, 3], [2, ""], [3, 1], [4, 0.5]], ["--x", "n"], "not a number"),
        ([[1, 3], [2, -1], [3, 1], [4, 0.5]], ["--x", "n"], "positive"),
        ([[1, 3, "nan"], [2, 2, "nan"], [3, 1, ""], [4, 0.5, "nan"]], ["--x", "n", "--group", "g"], "every row"),
        ([[1, 3], [2, 2], [3, 1], [4, 0.5]], ["--x", "q"], "no column 'q'"),
        ([[1, 3], [2, 2], [3, 1], [4, 0.5]], ["--x", "n", "--form", "joint"], "two --x columns"),
        ([[1, 3], [2, 2], [3, 1], [4, 0.5]], ["--x", "n", "--form", "cubic"], "unknown form"),
        ([[1, 3], [2, 2], [3, 1], [4, 0.5]], ["--x", "n", "--derive", "z=__import__('os')"], "not allowed"),
        ([[1, 3], [2, 2], [3, 1], [4, 0.5]], ["--x", "n", "--derive", "z=n.real"], "not allowed"),
        ([[1, 3], [2, 2], [3, 1], [4, 0.5]], ["--x", "n", "--where", "loss+1"], "condition"),
        ([[1, 3], [2, 2], [3, 1], [4, 0.5]], ["--x", "n", "--drop-top", "4"], "leaves no rows"),
        ([[1, 3], [2, 2], [3, 1], [4, 0.5]], ["--x", "n", "--huber-delta", "0.01"], "apply to --form joint"),
        ([[1, 3], [2, 2], [3, 1], [4, 0.5]], ["--x", "n", "--huber-delta", "-1"], "> 0"),
        ([[1, 3], [2, 2], [3, 1], [4, 0.5]], ["--x", "n", "--beta", "2"], "(0, 1]"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path, rows, args, message):
    header = ["n", "loss", "g"][: len(rows[0])]
    path = write_csv(tmp_path / "bad.csv", header, rows)
    res = runner.invoke(app, ["fit", str(path), *args, *FAST])
    assert res.exit_code == 2, res.output
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(("d", "code"), [("1", 1), ("4.67", 0)])
def test_a_prediction_that_differs_exits_1_and_another_0(study, d, code):
    res = runner.invoke(app, ["fit", str(study), "--x", "n", *FAST, "--json", "--d", d])
    got = json.loads(res.stdout)
    assert res.exit_code == code, got["prediction"]["verdict"]
    assert (got["prediction"]["outcome"] == "differs") == (code == 1)


def test_undecided_exits_0_with_the_words(tmp_path):
    f = tmp_path / "two.csv"
    f.write_text("n,loss\n100,1.0\n100,1.6\n1000,0.8\n1000,0.5\n10000,0.6\n10000,0.4\n")
    res = runner.invoke(app, ["fit", str(f), "--x", "n", *FAST, "--d", "10", "--form", "loglog"])
    assert res.exit_code == 0, res.output
    assert "undecided at ±0.05" in res.output


def test_the_old_out_spelling_is_refused_and_output_writes(study, tmp_path):
    """`--out` ended with #37 (a deprecation release is over): refused as unknown; --output writes."""
    res = runner.invoke(app, ["fit", str(study), "--x", "n", *FAST, "--out", str(tmp_path / "r.json")])
    assert res.exit_code == 2 and "No such option" in res.output and not (tmp_path / "r.json").exists()
    res = runner.invoke(app, ["fit", str(study), "--x", "n", *FAST, "--output", str(tmp_path / "r.json")])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "r.json").read_text())["form"] == "offset"
