"""Degenerate fits print no interval that excludes their estimate, no coverage simulated at zero noise,
and prediction verdicts near the tolerance say they are at the edge."""

from __future__ import annotations

import numpy as np
import pytest

from tmcheck.empirics.fit import exponent as exponent_mod
from tmcheck.empirics.fit import exponent_report, prediction_test
from tmcheck.theory.bounds import alpha_D

N = np.repeat([64.0, 200.0, 640.0, 2000.0], 3)
FAST = {"coverage_reps": 30, "bootstrap": 60}


def _constant_report():
    return exponent_report(N, np.full(len(N), 0.3), forms=("loglog", "offset", "power"), **FAST)


def test_constant_losses_print_no_interval_that_excludes_the_estimate():
    for form, e in _constant_report()["fits"].items():
        iv = e["interval"]
        assert e["status"] != "converged", form
        assert not (iv["lo"] <= iv["hi"]) or iv["lo"] <= e["alpha"] <= iv["hi"], (form, iv["text"])
        assert "measured coverage" not in iv["text"], (form, iv["text"])


@pytest.mark.parametrize("floor", [exponent_mod.NOISE_FLOOR, 0.0])
def test_the_noise_floor_is_what_stops_a_coverage_simulated_at_rounding(monkeypatch, floor):
    monkeypatch.setattr(exponent_mod, "ARTEFACTS", frozenset())  # leave the noise floor as the only guard
    monkeypatch.setattr(exponent_mod, "NOISE_FLOOR", floor)
    rep = exponent_report(N, np.full(len(N), 0.3), forms=("loglog", "offset"), **FAST)
    simulated = any(c["reps"] > 0 for e in rep["fits"].values() for c in e["coverage"].values())
    assert simulated is (floor == 0.0)  # the mutant (no floor) simulates coverage at rounding noise (2.6e-16)


def test_the_artefact_rule_withholds_an_interval_at_the_search_edge(monkeypatch):
    power = _constant_report()["fits"]["power"]
    assert power["interval"]["text"].startswith("no interval")
    monkeypatch.setattr(exponent_mod, "ARTEFACTS", frozenset())
    assert "measured coverage" in _constant_report()["fits"]["power"]["interval"]["text"]


def test_a_degenerate_fit_decides_no_prediction():
    rep = exponent_report(
        N, np.full(len(N), 0.3), forms=("loglog",), prediction={"kind": "D", "beta": 1.0, "d": 2}, **FAST
    )
    t = rep["prediction"]["loglog"]
    assert t["verdict"].startswith("not decidable: degenerate") and "does not decrease" in t["words"]


def test_a_known_d_uses_the_interval_of_alpha_hat_exactly():
    draws = np.random.default_rng(0).normal(0.4, 0.05, 4000)
    t = prediction_test(draws, kind="D", beta=1.0, d=2, alpha_interval=(0.3, 0.5))
    assert t["exact"] and t["difference_ci"] == pytest.approx([0.3 - alpha_D(2, 1.0), 0.5 - alpha_D(2, 1.0)])
    approx = prediction_test(draws, kind="D", beta=1.0, d=2)
    assert not approx["exact"] and approx["difference_ci"] != t["difference_ci"]


@pytest.mark.parametrize(
    ("interval", "edge", "verdict"),
    [
        ((0.401, 0.599), True, "consistent"),  # half-width 0.099 against 0.1
        ((0.399, 0.601), True, "not decidable"),  # 0.101
        ((0.45, 0.55), False, "consistent"),
        ((0.3, 0.7), False, "not decidable"),
        ((0.505, 0.6), True, "inconsistent"),  # misses 0 by 0.005
        ((0.6, 0.7), False, "inconsistent"),
    ],
)
def test_verdicts_within_ten_percent_of_the_tolerance_are_labelled(interval, edge, verdict):
    t = prediction_test(np.full(10, 0.5), kind="D", beta=1.0, d=2, alpha_interval=interval, tolerance=0.1)
    assert t["verdict"].startswith(verdict) and t["edge"] is edge
    assert ("at the edge" in t["words"]) is edge


def test_one_seed_is_a_valid_sweep_with_residual_intervals_and_no_warning():
    import warnings

    n = np.array([64.0, 200.0, 640.0, 2000.0, 6400.0])
    y = (0.1 + 2 * n**-0.5) * np.exp(0.02 * np.random.default_rng(0).standard_normal(len(n)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rep = exponent_report(n, y, forms=("loglog", "offset"), prediction={"kind": "D", "beta": 1, "d": 2}, **FAST)
        three = exponent_report(n[:3], y[:3], forms=("offset",), prediction={"kind": "D", "beta": 1, "d": 2}, **FAST)
    for e in rep["fits"].values():
        assert e["noise"]["source"] == "residuals" and e["interval"]["lo"] < e["alpha"] < e["interval"]["hi"]
    assert three["prediction"]["offset"]["verdict"] == "not decidable: too few runs"
