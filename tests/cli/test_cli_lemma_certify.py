"""`tmcheck lemma 1 --certify`: the verdict judges a proven sup-norm bound (theory.certify), and says so."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from tmcheck.cli.main import app

runner = CliRunner()
BASE = ["lemma", "1", "--d", "1", "--target", "x0", "--H-f", "1", "--N", "5", "--trials", "1", "--points", "50"]


def run(*extra):
    return runner.invoke(app, [*BASE, *extra])


def test_certified_sup_below_eps_holds_and_is_proven():
    res = run("--eps", "0.09", "--certify", "--json")
    assert res.exit_code == 0, res.output
    rep = json.loads(res.output)
    assert rep["sup_error"]["kind"] == "proven" and rep["sup_error"]["certificate"]["status"] == "proven"
    assert 1 / 12 <= rep["sup_error"]["value"] <= 0.09 and rep["verdict"] == "HOLDS"


def test_certified_sup_above_eps_fails_with_a_counterexample():
    res = run("--eps", "0.08", "--certify")
    assert res.exit_code == 1
    assert "refuted" in res.output and "at x = " in res.output and "refuted: interval arithmetic" in res.output


def test_without_certify_the_verdict_says_sampled():
    res = run("--eps", "0.09")
    assert res.exit_code == 0 and "sampled: max over" in res.output


def test_a_target_without_an_enclosure_is_bad_input():
    args = [a if a != "x0" else "max(x0, 1/2)" for a in BASE]
    res = runner.invoke(app, [*args, "--eps", "0.4", "--certify"])
    assert res.exit_code == 2 and "no sound interval enclosure for Max" in res.output
