"""`tmcheck sweep controls` through Typer's runner: the tiny preset end to end (tuning, the three controls,
the report with its verdicts and figures), a rerun that resumes with nothing to do, and bad input as one
line with exit code 2."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app
from tmcheck.empirics.sweep.controls import METHODS

runner = CliRunner()


def test_tiny_preset_runs_end_to_end_and_writes_a_report(tmp_path):
    out = tmp_path / "tiny"
    res = runner.invoke(
        app, ["sweep", "controls", str(out), "--preset", "tiny", "--workers", "1", "--bootstrap", "100"]
    )
    assert res.exit_code == 0, res.output
    for name in (
        "config.json",
        "plan.json",
        "results.jsonl",
        "report.md",
        "report.json",
        "fig_mse.png",
        "fig_slope.png",
    ):
        assert (out / name).exists(), name
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert {r["method"] for r in rows} == set(METHODS) and len(rows) == 3 * 3 * 2
    assert all(r["cpu_s"] >= 0 and r["test_mse"] > 0 for r in rows)
    assert all(r["k"] >= 1 for r in rows if r["method"] != "krr") and all(r["h"] > 0 for r in rows if "h" in r)
    rep = json.loads((out / "report.json").read_text())
    assert {e["method"] for e in rep["controls"]} == set(METHODS)
    for e in rep["controls"]:
        assert e["top"]["outcome"] in ("equivalent", "differs", "undecided")
        assert e["top"]["sizes"] == [100.0, 316.0, 1000.0]
    tuning = json.loads((out / "data" / "tuning" / "tuning.json").read_text())["cells"]["1-1"]
    assert tuning["knn"]["n"] == 316 and tuning["krr"]["n"] == 100
    md = (out / "report.md").read_text()
    assert "CPU-hours" in md and "tmcheck sweep controls DIR --preset tiny --workers 2" in md
    # a rerun resumes: nothing to run, the same rows
    res = runner.invoke(app, ["sweep", "controls", str(out), "--workers", "1", "--no-report", "--json"])
    assert res.exit_code == 0, res.output
    assert [r["run"] for r in json.loads(res.stdout)] == [r["run"] for r in rows]


@pytest.mark.parametrize(
    "args,message",
    [
        (["--preset", "huge"], "unknown preset 'huge'"),
        (["--set", "methods=knn-magic"], "unknown control 'knn-magic'"),
        (["--set", "tune_seeds=0"], "both a data seed and a tuning seed"),
        (["--set", "ns=10,100", "--set", "methods=knn-cv"], "smaller than the validation split"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    res = runner.invoke(app, ["sweep", "controls", str(tmp_path / "x"), *args])
    assert res.exit_code == 2, res.output
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x" / "plan.json").exists()
