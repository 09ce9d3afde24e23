"""Theorem 2 at its proven N on the sphere (S² in R³) and the torus (T² in R⁴), never built: the lazy plan and the
certified local evaluation (`theorem2_report.theorem2_local_report`, `tmcheck theorem 2 --local`) give the error
against ε, a sampled maximum over the points named, with the spec's resources and the evaluator's own count."""

from __future__ import annotations

import pytest

from tmcheck.theory import spec as resources_spec
from tmcheck.theory.lemmas.theorem2_report import theorem2_local_report


def check_report(rep: dict, n_points: int) -> None:
    sp = resources_spec.theorem2_spec(rep["manifold"], rep["D"], rep["eps"], with_kappa=False)
    assert rep["proven"] and rep["N"] == rep["N_proven"] == sp.N
    assert rep["l"] == sp.l == rep["evaluated"]["l"]  # the partition covers every token of the proven network
    assert rep["evaluated"]["heads_per_block"] == [n for _, n in sp.heads_per_block]
    assert rep["m"] == rep["evaluated"]["m"] and rep["L_T"] == rep["evaluated"]["L_T"]
    assert (
        rep["sup_error"]["kind"] == "sampled" and f"max over {n_points} manifold points" in rep["sup_error"]["method"]
    )
    assert rep["n_points"] == n_points and rep["error"] <= rep["eps"]
    assert rep["verdict"] == "HOLDS" and rep["ok"], rep["failed"]


def test_circle_at_its_proven_N_locally():
    """The one proven network that is also built (l = 17920): the local mode agrees with its report's numbers."""
    rep = theorem2_local_report("circle", 3, 0.3, "x0", n_points=3)
    check_report(rep, 3)
    assert rep["l"] == 17920 and rep["tokens_chosen_max"] < 100


def test_below_the_proven_N_the_error_exceeds_eps_and_fails():
    rep = theorem2_local_report("circle", 3, 0.05, "x0", N=3, n_points=4)
    assert not rep["proven"] and rep["error"] > 0.05
    assert rep["verdict"] == "FAILS" and rep["failed"] == ["error > ε"]
    assert rep["check"]["results"]["certified"]["passed"] and rep["check"]["results"]["claim"]["passed"]


@pytest.mark.slow
def test_sphere_at_its_proven_N():
    """N = 2617, l = 2.9·10^9 tokens at ε = 0.3: never built; about 1.5 s a point."""
    rep = theorem2_local_report("sphere", 3, 0.3, "x0", n_points=6)
    check_report(rep, 6)
    assert rep["l"] > 2 * 10**9


@pytest.mark.slow
def test_torus_at_its_proven_N():
    """N = 609, l = 4.5·10^8 tokens at ε = 0.3 in R^4 (f = x0/2: |x0| reaches 1.125 on this torus, above R = 1)."""
    rep = theorem2_local_report("torus", 4, 0.3, "x0/2", n_points=3)
    check_report(rep, 3)
    assert rep["l"] > 4 * 10**8
