"""`tmcheck demo --json`: one JSON document of the stages on stdout (the stages' own output on
stderr); the ID stage fits the Chinchilla points shipped as package data; a bad --only is exit 2."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from tmcheck.cli.main import app
from tmcheck.empirics.reference import CHINCHILLA_CSV, reference_path

runner = CliRunner()


def test_demo_json_is_one_document_of_the_stages(tmp_path):
    res = runner.invoke(app, ["demo", "--quick", "--only", "network,intrinsic", "--out", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert [s["title"] for s in doc["stages"]] == ["network class (Def. 1-7)", "intrinsic dimension and fitting"]
    assert "T(1/2,3/2) = 3" in doc["stages"][0]["summary"] and "T(1/2, 3/2)" in res.stderr
    assert "Chinchilla E=" in doc["stages"][1]["summary"]  # the packaged CSV, not tests/data
    assert all(s["seconds"] >= 0 for s in doc["stages"]) and doc["quick"] is True


def test_reference_data_is_inside_the_package():
    path = reference_path(CHINCHILLA_CSV)
    assert "tests" not in path.parts and path.read_text().startswith("x,y,")


def test_unknown_stage_is_a_usage_error(tmp_path):
    res = runner.invoke(app, ["demo", "--only", "nothing", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "matches no stage" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_demo_stage_lines_show_the_offset_law_its_coverage_and_the_verdict():
    from pathlib import Path

    from tmcheck.cli.stages.pretrain import offset_summary

    results = Path(__file__).resolve().parents[2] / "results"
    rep = json.loads((results / "pretrain" / "report.json").read_text())
    for entry in rep["table"].values():
        line = offset_summary(entry)
        assert line.startswith("offset law α̂=") and "coverage" in line and "E=" in line
        assert line.endswith(entry["exponent"]["prediction"]["offset"]["verdict"])
    assert offset_summary({"exponent": None, "withheld": "no fit and no verdict: x"}) == "no fit and no verdict: x"
