"""The long commands of the sweep, training and data stack draw their progress on stderr, also under
--json, and stdout stays one JSON document; with progress off (the mutation) stderr holds no bar."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app

runner = CliRunner()
MICRO = ["--preset", "tiny", "--set", "dims=1", "--set", "ns=50,120,300", "--set", "min_steps=20"]
MICRO += ["--set", "max_steps=20", "--set", "baselines=knn", "--set", "model_dims=", "--no-report", "--json"]


def commands(tmp_path):
    return {
        "sweep synthetic": (["sweep", "synthetic", str(tmp_path / "syn"), *MICRO], "synthetic sweep"),
        "train": (
            [
                "train",
                "--preset",
                "tiny",
                "--tokens",
                "3000",
                "--max-steps",
                "5",
                "--out",
                str(tmp_path / "t"),
                "--json",
            ],
            "tok/s",
        ),
        "data stats": (["data", "stats", "stories", "--vocab", "300", "--json"], "corpus stats"),
    }


@pytest.mark.parametrize("name", ["sweep synthetic", "train", "data stats"])
def test_progress_on_stderr_under_json(tmp_path, monkeypatch, name):
    args, title = commands(tmp_path)[name]
    monkeypatch.setenv("TMCHECK_PROGRESS", "always")
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    json.loads(res.stdout)  # stdout is one JSON document
    assert title in res.stderr, res.stderr
    monkeypatch.setenv("TMCHECK_PROGRESS", "never")  # mutation: progress off, no bar
    args, _ = commands(tmp_path / "again")[name]
    res = runner.invoke(app, args)
    assert res.exit_code == 0 and title not in res.stderr, res.stderr
