"""`tmcheck lemma interaction|gating|addition|replace|parallel` through Typer's runner."""

from __future__ import annotations

from fractions import Fraction

import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app
from tmcheck.theory import netfile
from tmcheck.theory.backends import run_blocks
from tmcheck.theory.lemmas import sample_structured

runner = CliRunner()


def test_interaction_json_and_export(cli_json, tmp_path):
    f = tmp_path / "head.json"
    d = cli_json([*"lemma interaction --l 64 --t1 3 --t2 40 --i 1 --kappa 1 --M 2 --trials 5 --export".split(), f])
    assert (
        d["verdict"] == "HOLDS"
        and d["constants"]["t1"] == 3
        and d["constants"]["t2"] == 40
        and d["constants"]["row"] == 1
    )
    assert Fraction(d["constants"]["C"]) == Fraction(d["constants"]["C_min"]) < Fraction(d["constants"]["C_paper"])
    assert len(d["constants"]["Q_data"]) == 2 and len(d["interaction_vectors"][0]) == 64
    assert d["measured"]["m"] == 1 and d["measured"]["l"] == 64
    net = netfile.load(f)
    H = sample_structured(__import__("numpy").random.default_rng(0), 3, 64, 2)
    diff = run_blocks(net.blocks, H, "exact") - H
    assert {(int(r), int(t)) for _, r, t in zip(*diff.nonzero(), strict=True)} <= {(1, 3)}


def test_interaction_float_and_pattern(cli_json):
    d = cli_json("lemma interaction --l 16 --t1 0 --t2 15 --float --trials 3".split())
    assert d["backend"] == "float64" and d["sinusoidal float64 error"] <= 1e-9 and d["verdict"] == "HOLDS"
    res = runner.invoke(
        app, ["lemma", "interaction", "--l", "10", "--t1", "2", "--t2", "7", "--show-pattern", "--trials", "2"]
    )
    assert res.exit_code == 0 and "non-zero entries (t, k): [(2, 7)]" in res.stdout
    d = cli_json("lemma interaction --l 40 --t1 39 --t2 0 --show-pattern --trials 2".split())
    assert d["pattern_nonzero"] == [[39, 0]]


def test_interaction_with_too_small_C_fails(cli_json):
    assert cli_json("lemma interaction --l 8 --t1 1 --t2 5 --C 1 --trials 3".split(), code=1)["verdict"] == "FAILS"


@pytest.mark.parametrize(
    "args",
    [
        ["gating", "--l", "12", "--t-cut", "5", "--keep", "suffix"],
        ["addition", "--c", "1/2,-1", "--M", "2"],
        ["replace", "--l", "6", "--float"],
        ["parallel", "--left", "addition", "--right", "gating", "--l1", "4", "--l2", "5"],
    ],
)
def test_other_lemmas(cli_json, args):
    d = cli_json(["lemma", *args, "--trials", "4"])
    assert d["verdict"] == "HOLDS" and all(v["passed"] for v in d["check"]["results"].values())


@pytest.mark.parametrize(
    "args, message",
    [
        (["interaction", "--l", "4", "--t1", "9"], "outside"),
        (["interaction", "--query-kernel", "1,2"], "2 x 5"),
        (["gating", "--keep", "middle"], "keep must be"),
        (["addition", "--c", "5"], "M/2"),
        (["addition", "--c", "x"], "--c"),
        (["parallel", "--left", "nope"], "unknown block kind"),
    ],
)
def test_bad_input_exits_2(args, message):
    res = runner.invoke(app, ["lemma", *args])
    assert res.exit_code == 2 and message in res.stderr and res.stdout == ""


def test_rich_output():
    res = runner.invoke(app, ["lemma", "gating", "--trials", "2"])
    assert res.exit_code == 0 and "HOLDS" in res.stdout and "C" in res.stdout


def test_demo_stage(tmp_path):
    from tmcheck.cli.stages.lemmas import stage

    summary = stage(tmp_path, quick=True)
    assert summary.startswith("6/6 lemma constructions pass") and (tmp_path / "interaction-head.json").is_file()


@pytest.mark.parametrize(
    "cmd", [["gating", "--l", "6", "--t-cut", "3"], ["replace", "--l", "4"], ["parallel", "--l1", "4", "--l2", "4"]]
)
def test_the_shared_check_options_reach_every_lemma_command(cmd):
    """--trials and --float arrive through the one Check object (a group that dropped them gives 20 exact trials)."""
    import json

    res = runner.invoke(app, ["lemma", *cmd, "--trials", "3", "--float", "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert rep["trials"] == 3 and rep["backend"] != "exact", (rep["trials"], rep["backend"])
