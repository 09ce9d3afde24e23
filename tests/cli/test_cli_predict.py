"""`tmcheck predict` with intervals and the prediction test (eq. 3-4) through Typer's runner."""

import json

import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app
from tmcheck.theory.bounds import alpha_D, alpha_N

runner = CliRunner()


def test_interval_of_d_maps_to_the_exponents():
    out = json.loads(runner.invoke(app, ["predict", "--id", "3", "--id-ci", "2,4", "--json"]).stdout)
    assert out["alpha_D_ci"] == pytest.approx([alpha_D(4), alpha_D(2)])
    assert out["alpha_N_ci"] == pytest.approx([alpha_N(4), alpha_N(2)])


def test_prediction_test_verdicts():
    def verdict(*args):
        res = runner.invoke(app, ["predict", "--id", "2", *args, "--json"])
        v = json.loads(res.stdout)["test"]["verdict"]
        assert res.exit_code == (1 if v == "inconsistent" else 0), res.output
        return v

    assert verdict("--alpha-hat", "0.5", "--alpha-ci", "0.46,0.54") == "consistent at 95%"
    assert verdict("--alpha-hat", "0.7", "--alpha-ci", "0.66,0.74") == "inconsistent"
    assert verdict("--alpha-hat", "0.5", "--alpha-ci", "0.2,0.8") == "not decidable at this precision"
    # d-hat's interval widens the test: the same alpha-hat is no longer inconsistent
    assert verdict("--alpha-hat", "0.7", "--alpha-ci", "0.66,0.74", "--id-ci", "0.5,4") != "inconsistent"


# why kept: a table of bad inputs, one case a row: the shape of other such tables, other data
@pytest.mark.parametrize(
    "args",
    [
        ["--id", "2", "--alpha-hat", "0.5"],
        ["--alpha-hat", "0.5", "--alpha-ci", "0.4,0.6"],
        ["--id", "2", "--id-ci", "3,4"],
        ["--id", "2", "--beta", "1.5"],
        ["--id-ci", "1,2", "--alpha-d", "0.3"],
    ],
)
def test_bad_input_exit_2(args):
    res = runner.invoke(app, ["predict", *args])
    assert res.exit_code == 2, res.output
    assert len(res.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("as_json", [[], ["--json"]])
def test_an_inconsistent_test_exits_1_and_a_consistent_one_0(as_json):
    from typer.testing import CliRunner

    from tmcheck.cli.main import app

    bad = CliRunner().invoke(app, ["predict", "--id", "3.1", "--alpha-hat", "0.8", "--alpha-ci", "0.75,0.85", *as_json])
    assert bad.exit_code == 1 and "inconsistent" in bad.stdout
    good = CliRunner().invoke(
        app, ["predict", "--id", "3.1", "--alpha-hat", "0.35", "--alpha-ci", "0.3,0.41", *as_json]
    )
    assert good.exit_code == 0 and "consistent at 95%" in good.stdout
