"""`tmcheck theorem 2 --certify`: on the circle the verdict judges a sup-norm certificate over the whole circle
(theory.certify.certify_circle) and says "proven" or "refuted" with its method; elsewhere it is bad input."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app

runner = CliRunner()
BASE = ["theorem", "2", "--manifold", "circle", "--D", "3", "--target", "x0", "--trials", "1"]


def run(*extra):
    return runner.invoke(app, [*BASE, "--points", "20", *extra])


@pytest.mark.slow
def test_certified_sup_below_eps_holds_and_is_proven():
    res = run("--N", "12", "--eps", "0.3", "--certify", "--json")
    assert res.exit_code == 0, res.output
    rep = json.loads(res.output)
    sup = rep["sup_error"]
    assert sup["kind"] == sup["certificate"]["status"] == "proven" and "interval arithmetic" in sup["method"]
    assert rep["error"] <= sup["value"] <= 0.3 and rep["verdict"] == "HOLDS"


@pytest.mark.slow
def test_a_grid_too_coarse_is_refuted_at_a_point():
    """N = 6, ε = 0.3: the certificate finds a point (near θ = 2.02) with |T - f| > 0.33, certified."""
    res = run("--N", "6", "--eps", "0.3", "--certify")
    assert res.exit_code == 1
    assert "refuted against ε = 0.3" in res.output and "at θ = " in res.output and "refuted: interval" in res.output


def test_certify_is_bad_input_off_the_circle_and_with_local():
    sphere = [a if a != "circle" else "sphere" for a in BASE]
    res = runner.invoke(app, [*sphere, "--N", "6", "--eps", "0.3", "--certify"])
    assert res.exit_code == 2 and "circle only" in res.output
    res = run("--N", "6", "--eps", "0.3", "--certify", "--local")
    assert res.exit_code == 2 and "--certify" in res.output
