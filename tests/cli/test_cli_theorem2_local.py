"""`tmcheck theorem 2 --local`: Theorem 2 at its proven N never built; the verdict names its error a sampled maximum
over the points evaluated; exit 1 when the error exceeds ε, 2 (one line) on options --local cannot take."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app

runner = CliRunner()


def test_local_circle_holds_and_says_its_error_is_sampled():
    r = runner.invoke(app, "theorem 2 --manifold circle --D 3 --local --points 3".split())
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.split())
    assert "(the proven N)" in out and "never built: l = 17920" in out
    assert "a sampled maximum over 3 manifold points" in out and "verdict: HOLDS" in out


def test_local_json_and_a_failing_error(cli_json):
    data = cli_json("theorem 2 --manifold circle --D 3 --local --points 2".split())
    assert data["mode"] == "local" and data["sup_error"]["kind"] == "sampled" and data["n_points"] == 2
    assert data["evaluated"]["l"] == data["l"] and data["verdict"] == "HOLDS"
    bad = cli_json("theorem 2 --manifold circle --D 3 --local --points 4 --N 3 --eps 0.05".split(), code=1)
    assert bad["verdict"] == "FAILS" and bad["failed"] == ["error > ε"]


@pytest.mark.parametrize("extra", [["--export", "net.json"], ["--max-tokens", "100"]])
def test_local_refuses_options_that_need_a_built_network(extra):
    r = runner.invoke(app, ["theorem", "2", "--local", *extra])
    assert r.exit_code == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "--local builds no network" in r.stderr
    assert "Traceback" not in r.output


@pytest.mark.slow
def test_local_sphere_at_its_proven_N():
    r = runner.invoke(app, "theorem 2 --manifold sphere --D 3 --eps 0.3 --local --points 2".split())
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.split())
    assert "N = 2617 per chart (the proven N)" in out and "never built: l = 2877182980" in out
    assert "a sampled maximum over 2 manifold points" in out
