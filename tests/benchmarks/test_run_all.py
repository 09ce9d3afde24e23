"""benchmarks/run_all.py: the quiet tool's verdict is parsed and written into the entries a run changed."""

from __future__ import annotations

import json

from benchmarks import run_all

QUIET = "quiet: load before 0.31; wall 12.5 s; own CPU 24.0 s; other processes 0.4 CPU s = 2% of the machine: quiet"
LOUD = (
    "quiet: load before 0.70; wall 10.0 s; own CPU 19.0 s; other processes 5.0 CPU s = 25% of the machine: "
    "DISTURBED: rerun before quoting it"
)


def test_verdict_lines_are_parsed():
    assert run_all.parse_verdict("noise\n" + QUIET) == {
        "verdict": "quiet",
        "other_cpu_share": 0.02,
        "load_before": 0.31,
        "wall_s": 12.5,
    }
    assert run_all.parse_verdict(LOUD)["verdict"] == "DISTURBED"
    assert run_all.parse_verdict("no verdict here") is None


def test_only_changed_entries_are_stamped(tmp_path, monkeypatch):
    monkeypatch.setattr(run_all, "RESULTS", tmp_path)
    (tmp_path / "id.json").write_text(json.dumps({"knn_engine": {"s": 1}, "mle": {"s": 2}}))
    before = run_all._snapshot()
    (tmp_path / "id.json").write_text(json.dumps({"knn_engine": {"s": 3}, "mle": {"s": 2}}))
    stamped = run_all.stamp(before, {"verdict": "quiet", "other_cpu_share": 0.02}, "bench_knn")
    got = json.loads((tmp_path / "id.json").read_text())
    assert stamped == ["id.json:knn_engine"] and got["knn_engine"]["quiet"]["verdict"] == "quiet"
    assert "quiet" not in got["mle"] and got["quiet"]["entries"] == ["knn_engine"]
