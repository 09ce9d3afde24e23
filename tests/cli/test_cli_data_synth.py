"""`tmcheck data synth KIND`: the corpus name, its exponent, --out prepares shards; bad input exits 2."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app

runner = CliRunner()


def test_synth_names_the_corpus_and_prepares_it(tmp_path):
    out = tmp_path / "zipf"
    res = runner.invoke(
        app, ["data", "synth", "zipf", "--set", "a=1.5", "--tokens", "20000", "--out", str(out), "--json"]
    )
    assert res.exit_code == 0, res.output
    row = json.loads(res.stdout)
    assert row["exponent"] == pytest.approx(0.6)
    assert row["corpus"].startswith("synth:zipf:") and "a=1.5" in row["corpus"]
    assert (out / "dataset.json").exists() and row["dataset"]["splits"]["train"]["tokens"] > 0


@pytest.mark.parametrize(
    "args", [["nope"], ["zipf", "--set", "b=1"], ["manifold", "--set", "beta=2"], ["zipf", "--tokens", "5"]]
)
def test_bad_input_is_one_line_exit_2(args):
    res = runner.invoke(app, ["data", "synth", *args])
    assert res.exit_code == 2
    assert "Traceback" not in res.output
