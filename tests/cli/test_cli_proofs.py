"""`tmcheck proofs` and the demo stage through Typer's runner."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from tmcheck.cli import proofs as proofs_cli
from tmcheck.cli.main import app
from tmcheck.cli.stage_proofs import stage
from tmcheck.proofs_check.registry import Obligation, Outcome

runner = CliRunner()


def test_section_json():
    res = runner.invoke(app, ["proofs", "--section", "table1", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["totals"] == {"HOLDS": 1, "FAILS-AS-WRITTEN": 3, "HOLDS-AFTER-CORRECTION": 0, "ERROR": 0}
    ids = [o["id"] for o in out["obligations"]]
    assert ids == sorted(ids) and all(i.startswith("table1.") for i in ids)
    chin = next(o for o in out["obligations"] if o["id"] == "table1.chinchilla_alpha_N")
    assert chin["counterexample"]["exact"] == "7/18" and chin["verdict"] == "FAILS-AS-WRITTEN"


def test_verdict_filter_and_table():
    res = runner.invoke(app, ["proofs", "--section", "lemma2", "--verdict", "fails", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["obligations"] and all(o["verdict"] == "FAILS-AS-WRITTEN" for o in out["obligations"])
    assert "lemma2.mha_output_bound" in [o["id"] for o in out["obligations"]]
    res = runner.invoke(app, ["proofs", "--section", "appendixB"])
    assert res.exit_code == 0 and "appendixB" in res.stdout and "HOLDS: 6  FAILS-AS-WRITTEN: 0" in res.stdout


def test_bad_input_exit_2():
    for args in (["--section", "lemma9"], ["--verdict", "maybe"]):
        res = runner.invoke(app, ["proofs", *args])
        assert res.exit_code == 2, res.output
        assert res.stderr.count("\n") == 1 and "error:" in res.stderr


def test_check_error_exits_1(monkeypatch):
    obl = Obligation("lemma1.broken", "nowhere", "claim", "exact", lambda: None)
    monkeypatch.setattr(proofs_cli, "run_registry", lambda section="", verdict="": [Outcome(obl, None, 0.0, error="ZeroDivisionError: boom")])
    res = runner.invoke(app, ["proofs", "--json"])
    assert res.exit_code == 1
    assert json.loads(res.stdout)["totals"]["ERROR"] == 1


def test_demo_stage(tmp_path):
    summary = stage(tmp_path, True)
    assert "obligations:" in summary and "0 errors" in summary
