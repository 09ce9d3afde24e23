"""`tmcheck sweep known`: the smoke preset end to end (generated corpus -> BPE -> GPT -> target loss -> fit
-> verdicts and power), resumed without retraining; bad corpora exit 2 in one line."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app

runner = CliRunner()


@pytest.mark.slow  # about 15 s on 2 cores: six GPTs trained in a process pool, then the report
def test_smoke_preset_end_to_end_and_resume(tmp_path):
    out = tmp_path / "known"
    res = runner.invoke(app, ["sweep", "known", str(out), "--preset", "smoke", "--bootstrap", "100", "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert rep["kind"] == "known" and rep["shift"] == 0.1
    (entry,) = rep["corpora"]
    assert entry["exponent"] == 0.5 and entry["runs"] == 6
    assert entry["truth_outcome"] in ("equivalent", "differs", "undecided", "withheld")
    for name in ("truth", "shifted"):
        assert entry["fit"]["exponent"]["predictions"][name]["loglog"]["outcome"] == entry[f"{name}_outcome"]
    assert rep["power"]["table"], "the power table is part of the report"
    assert (out / "report.md").read_text().startswith("# Known-exponent study: preset smoke")
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert all(r["records"] > 0 and r["excess"] == r["target_loss"] - r["bayes_loss"] for r in rows)
    # each run's process time is recorded, and the report's CPU-hours are their sum
    assert all(r["cpu_s"] > 0 for r in rows) and rep["cpu_measured"] == len(rows)
    assert rep["cpu_hours"] == pytest.approx(sum(r["cpu_s"] for r in rows) / 3600)
    assert "CPU-hours (6 of 6 runs with their measured process time" in (out / "report.md").read_text()
    mtimes = {p: p.stat().st_mtime_ns for p in out.glob("runs/*/result.json")}
    again = runner.invoke(app, ["sweep", "known", str(out), "--bootstrap", "100", "--no-report", "--json"])
    assert again.exit_code == 0, again.output
    assert mtimes and {p: p.stat().st_mtime_ns for p in out.glob("runs/*/result.json")} == mtimes  # nothing retrained


def test_corpus_without_a_known_exponent_is_exit_2(tmp_path):
    res = runner.invoke(app, ["sweep", "known", str(tmp_path / "k"), "--corpus", "stories"])
    assert res.exit_code == 2
    assert "no known exponent" in res.output and "Traceback" not in res.output
