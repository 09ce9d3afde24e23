"""`tmcheck demo --json`: one JSON document of the stages on stdout (the stages' own output on
stderr); the ID stage fits the Chinchilla points shipped as package data; a bad --only is exit 2."""

from __future__ import annotations

import json
from pathlib import Path

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
        test = (entry["exponent"]["prediction"] or {}).get("offset")
        # a d̂ whose certificate failed gives no test, and the line says why
        assert line.endswith(test["verdict"] if test else entry["id"]["validation"]["reason"])
    assert any(not (e["exponent"]["prediction"] or {}) for e in rep["table"].values())  # both cases are seen
    assert offset_summary({"exponent": None, "withheld": "no fit and no verdict: x"}) == "no fit and no verdict: x"


def _synth_only(tmp_path):
    import shutil

    root = tmp_path / "results"
    shutil.copytree(Path(__file__).resolve().parents[2] / "results" / "synth", root / "synth")
    return root


def test_the_demo_reruns_a_committed_run_and_rebuilds_the_committed_reports(tmp_path):
    root = _synth_only(tmp_path)
    args = ["demo", "--quick", "--only", "synthetic,committed", "--results", str(root), "--out", str(tmp_path / "o")]
    res = runner.invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert [s["title"] for s in doc["stages"]] == ["synthetic manifold regression", "committed reports rebuilt"]
    assert all(s["passed"] for s in doc["stages"]) and doc["full"] is False
    assert "1 of 1 re-run runs equal the committed rows" in doc["stages"][0]["summary"]
    assert "1 of 1 committed reports rebuilt from their rows equal" in doc["stages"][1]["summary"]
    assert "undecided at ±0.05" in res.stderr  # the rebuilt report's verdicts are printed


def test_a_rerun_that_differs_from_the_committed_row_exits_1(tmp_path):
    from tmcheck.util import atomic

    root = _synth_only(tmp_path)
    rows = atomic.read_jsonl(root / "synth" / "results.jsonl")
    cheapest = min(rows, key=lambda r: r["wall_s"])
    cheapest["test_mse"] *= 1.01
    atomic.write_jsonl(root / "synth" / "results.jsonl", rows)
    res = runner.invoke(
        app, ["demo", "--quick", "--only", "synthetic", "--results", str(root), "--out", str(tmp_path / "o")]
    )
    assert res.exit_code == 1 and "a check failed in: synthetic manifold regression" in res.stderr


def test_full_only_stages_and_exclusive_options(tmp_path):
    res = runner.invoke(app, ["demo", "--only", "model", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "matches no stage" in res.stderr  # the model sweep re-runs only with --full
    res = runner.invoke(app, ["demo", "--quick", "--full", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "exclude each other" in res.stderr
    res = runner.invoke(app, ["demo", "--results", str(tmp_path / "none"), "--out", str(tmp_path)])
    assert res.exit_code == 2 and "no such directory" in res.stderr
