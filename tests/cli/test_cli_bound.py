"""`tmcheck bound covering|theorem1` and `tmcheck predict` through Typer's runner."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app
from tmcheck.theory import bounds

runner = CliRunner()
COVER = [
    "bound",
    "covering",
    "--LT",
    "3",
    "--LFFN",
    "4",
    "--w",
    "5",
    "--l",
    "64",
    "--d-embd",
    "5",
    "--m",
    "32",
    "--kappa",
    "10",
    "--M",
    "1",
    "--D",
    "8",
    "--delta",
    "1e-3",
]


def test_covering_json_matches_library():
    res = runner.invoke(app, [*COVER, "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    c = bounds.TransformerClass(L_T=3, L_FFN=4, w=5, l=64, d_embd=5, m=32, kappa=10.0, M=1.0, D=8)
    assert out["as_written"]["n_params"] == 4 * 25 * 25 * 8 * 36 * 3
    assert out["as_written"]["log_N"] == pytest.approx(bounds.log_covering_as_written(c, 1e-3))
    assert out["corrected"]["log_N"] == pytest.approx(bounds.log_covering_corrected(c, 1e-3))


def test_covering_table_and_LT_20():
    res = runner.invoke(app, COVER)
    assert res.exit_code == 0 and "log N" in res.stdout
    res = runner.invoke(app, [*COVER[:3], "20", *COVER[4:], "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert all(
        isinstance(out[k]["log_N"], float) and math.isfinite(out[k]["log_N"]) for k in ("as_written", "corrected")
    )


def test_theorem1():
    res = runner.invoke(app, ["bound", "theorem1", "--d", "4", "--beta", "1", "--n", "1e6", "--D", "16", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["eps"] == pytest.approx(0.1) and out["alpha_D"] == pytest.approx(1 / 3)
    assert out["stated_rate"] == pytest.approx(16 * 16 * 0.01)
    assert out["n_for_this_eps"] == pytest.approx(1e6)
    res = runner.invoke(app, ["bound", "theorem1", "--d", "4"])
    assert res.exit_code == 0 and "Theorem 1" in res.stdout


def test_theorem2_counts_come_from_the_atlas_spec():
    from tmcheck.theory.spec import theorem2_spec

    res = runner.invoke(
        app, ["bound", "theorem2", "--manifold", "circle", "--D", "3", "--eps", "0.3", "--H-f", "1", "--json"]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    sp = theorem2_spec("circle", 3, 0.3, with_kappa=False)
    assert (out["N"], out["l"], out["m"], out["L_T"], out["C_M"], out["mu"]) == (sp.N, sp.l, sp.m, sp.L_T, 14, 2)
    assert out["l"] == out["C_M"] * (3 + 1 + 1 + out["N"] + 2 * out["N"]) and out["delta"] == pytest.approx(0.3 / 4)
    assert runner.invoke(app, ["bound", "theorem2", "--N", "3"]).exit_code == 0


def test_lemma1_bound_is_the_builders_count():
    res = runner.invoke(app, ["bound", "lemma1", "--d", "2", "--eps", "0.1", "--H-f", "3", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert (out["N"], out["l"], out["m"], out["L_T"], out["L_FFN"], out["w_FFN"]) == (30, 2 + 60 + 1800, 1800, 5, 2, 5)


# why kept: a table of bad inputs, one case a row: the shape of other such tables, other data
@pytest.mark.parametrize(
    "args",
    [
        ["bound", "theorem2", "--eps", "2"],
        ["bound", "theorem2", "--manifold", "klein"],
        ["bound", "lemma1", "--eps", "0"],
        ["bound", "covering", "--kappa", "-1"],
        ["bound", "covering", "--LT", "0"],
        ["bound", "covering", "--delta", "0"],
        ["bound", "theorem1", "--beta", "2"],
        ["bound", "theorem1", "--n", "-5"],
    ],
)
def test_bad_input_exit_2(cli_error, args):
    assert cli_error(args).startswith("error:")  # predict's bad inputs: tests/cli/test_cli_predict.py


def test_predict():
    res = runner.invoke(app, ["predict", "--id", "15.6", "--json"])
    out = json.loads(res.stdout)
    assert out["alpha_D"] == pytest.approx(2 / 17.6) and out["alpha_N"] == pytest.approx(2 / 15.6)
    out = json.loads(runner.invoke(app, ["predict", "--alpha-n", "0.076", "--json"]).stdout)
    assert out["alpha_D"] == pytest.approx(0.076 / 1.076) and round(out["alpha_D"], 3) == 0.071
    out = json.loads(runner.invoke(app, ["predict", "--alpha-d", "0.095", "--json"]).stdout)
    assert out["alpha_N"] == pytest.approx(0.095 / 0.905) and round(out["alpha_N"], 3) == 0.105
    res = runner.invoke(app, ["predict", "--id", "4", "--beta", "0.5"])
    assert res.exit_code == 0 and "0.2000" in res.stdout and "0.2500" in res.stdout


@pytest.mark.parametrize("manifold,D,eps", [("sphere", 3, 0.3), ("torus", 4, 0.5), ("circle", 3, 0.3)])
def test_bound_theorem2_answers_where_kappa_was_a_division_by_zero(manifold, D, eps):
    """κ's gap in closed form (2 sin²(π/4l)): no division by zero where cos(π/2l) rounds to 1 in float64."""
    res = runner.invoke(app, ["bound", "theorem2", "--manifold", manifold, "--D", str(D), "--eps", str(eps), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert math.isfinite(out["kappa"]) and out["kappa"] > 0 and out["N"] >= 2


def test_bound_theorem2_fits_in_gb_answers():
    res = runner.invoke(
        app, ["bound", "theorem2", "--manifold", "sphere", "--D", "8", "--eps", "0.2", "--fits-in-gb", "16", "--json"]
    )
    assert res.exit_code == 0, res.output
    fits = json.loads(res.stdout)["fits"]
    assert fits["budget_bytes"] == 16e9 and (fits["least_eps"] == "nan" or 0 < fits["least_eps"] < 1)
