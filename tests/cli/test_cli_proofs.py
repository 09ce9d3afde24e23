"""`tmcheck proofs` and the demo stage through Typer's runner."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tmcheck.cli import proofs as proofs_cli
from tmcheck.cli.main import app
from tmcheck.cli.stages.proofs import stage
from tmcheck.proofs_check.registry import Kind, Obligation, Outcome

runner = CliRunner()


def test_section_json_is_one_document():
    res = runner.invoke(app, ["proofs", "--section", "table1", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)  # nothing but the document: no progress lines under --json
    assert out["totals"] == {
        "HOLDS": 1,
        "FAILS-AS-WRITTEN": 3,
        "HOLDS-AFTER-CORRECTION": 0,
        "NOT-EVALUABLE": 0,
        "ERROR": 0,
    }
    ids = [o["id"] for o in out["obligations"]]
    assert ids == sorted(ids) and all(i.startswith("table1.") for i in ids)
    chin = next(o for o in out["obligations"] if o["id"] == "table1.chinchilla_alpha_N")
    assert chin["verdict"] == "FAILS-AS-WRITTEN" and chin["kind"] == "statement" and not chin["gap"]
    assert chin["counterexample"]["at"]["exact"] == "7/18" and chin["counterexample"]["lhs"] == "33/100"
    assert chin["evidence"]["searched"] == 1 and chin["evidence"]["broken"] == 1


def test_progress_lines_summary_and_verbose_table():
    res = runner.invoke(app, ["proofs", "--section", "appendixB"])
    assert res.exit_code == 0
    lines = res.stdout.splitlines()
    assert lines[0].startswith("appendixB") and "6 HOLDS" in lines[0]
    assert "HOLDS: 6  FAILS-AS-WRITTEN: 0" in res.stdout and "proofs_check: the paper's claims" not in res.stdout
    res = runner.invoke(app, ["proofs", "--section", "appendixB", "--verbose"])
    assert res.exit_code == 0 and "proofs_check: the paper's claims" in res.stdout and "witness" in res.stdout


def test_verdict_filter_and_gaps():
    res = runner.invoke(app, ["proofs", "--section", "lemma2", "--verdict", "fails", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["obligations"] and all(o["verdict"] == "FAILS-AS-WRITTEN" for o in out["obligations"])
    assert all(o["gap"] for o in out["obligations"]) and out["gaps"] == len(out["obligations"])
    res = runner.invoke(app, ["proofs", "--section", "definitions", "--verdict", "unevaluable", "--json"])
    out = json.loads(res.stdout)
    assert [o["verdict"] for o in out["obligations"]] == ["NOT-EVALUABLE"] * 2
    assert out["obligations"][0]["evidence"]["reading"].startswith("D(H) = H[0, l−1]")


def test_bad_input_exit_2():
    for args in (["--section", "lemma9"], ["--verdict", "maybe"]):
        res = runner.invoke(app, ["proofs", *args])
        assert res.exit_code == 2, res.output
        assert res.stderr.count("\n") == 1 and "error:" in res.stderr


def test_check_error_exits_1(monkeypatch):
    obl = Obligation("lemma1.broken", "nowhere", "claim", "exact", lambda: None, kind=Kind.STEP)
    monkeypatch.setattr(
        proofs_cli,
        "run_selected",
        lambda section="", verdict="", **kw: [Outcome(obl, None, 0.0, error="ZeroDivisionError: boom")],
    )
    res = runner.invoke(app, ["proofs", "--json"])
    assert res.exit_code == 1
    assert json.loads(res.stdout)["totals"]["ERROR"] == 1


@pytest.mark.slow  # runs every generator or obligation (1-3 min): CI's documentation stage runs it
def test_demo_stage(tmp_path):
    summary = stage(tmp_path, True)
    assert "obligations:" in summary and "proof gaps" in summary and "0 errors" in summary
