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
        t = json.loads(res.stdout)["test"]
        assert res.exit_code == (1 if t["outcome"] == "differs" else 0), res.output
        return t["verdict"]

    assert verdict("--alpha-hat", "0.5", "--alpha-ci", "0.46,0.54") == "equivalent within ±0.05"
    assert verdict("--alpha-hat", "0.5", "--alpha-ci", "0.46,0.54", "--margin", "0.03") == "undecided at ±0.03"
    assert verdict("--alpha-hat", "0.7", "--alpha-ci", "0.66,0.74") == "differs by more than 0.05"
    assert verdict("--alpha-hat", "0.5", "--alpha-ci", "0.2,0.8") == "undecided at ±0.05"
    # d-hat's interval widens the test: the same alpha-hat no longer differs
    assert verdict("--alpha-hat", "0.7", "--alpha-ci", "0.66,0.74", "--id-ci", "0.5,4") == "undecided at ±0.05"


# why kept: a table of bad inputs, one case a row: the shape of other such tables, other data
@pytest.mark.parametrize(
    "args,message",
    [
        # which exponent is given, and what a test needs with it
        ([], "give exactly one of --id, --alpha-n, --alpha-d"),
        (["--id", "3", "--alpha-n", "0.1"], "give exactly one of --id, --alpha-n, --alpha-d"),
        (["--alpha-hat", "0.5", "--alpha-ci", "0.4,0.6"], "give exactly one of --id, --alpha-n, --alpha-d"),
        (["--id", "2", "--alpha-hat", "0.5"], "--alpha-hat needs --alpha-ci"),
        (["--id-ci", "1,2", "--alpha-d", "0.3"], "--id-ci needs --id"),
        # values out of range
        (["--id", "2", "--id-ci", "3,4"], "give LO,HI around the estimate"),
        (["--alpha-d", "1.5"], "alpha_D must be < 1"),
        (["--id", "-2"], "d must be positive"),
        (["--id", "2", "--beta", "1.5"], "β must lie in (0, 1]"),
    ],
)
def test_bad_input_exit_2(cli_error, args, message):
    err = cli_error(["predict", *args])
    assert err.startswith("error:") and message in err


@pytest.mark.parametrize("as_json", [[], ["--json"]])
def test_a_test_that_differs_exits_1_and_an_undecided_one_0(as_json):
    from typer.testing import CliRunner

    from tmcheck.cli.main import app

    bad = CliRunner().invoke(app, ["predict", "--id", "3.1", "--alpha-hat", "0.8", "--alpha-ci", "0.75,0.85", *as_json])
    assert bad.exit_code == 1 and "differs by more than 0.05" in bad.stdout
    good = CliRunner().invoke(
        app, ["predict", "--id", "3.1", "--alpha-hat", "0.35", "--alpha-ci", "0.3,0.41", *as_json]
    )
    assert good.exit_code == 0 and "undecided at " in good.stdout  # (JSON escapes the ±)
