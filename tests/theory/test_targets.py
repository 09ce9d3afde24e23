"""Safe target parsing, declared-constant checks, the grids of Lemma 1 (Appendix E.1), and the sample a target is
checked on."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tmcheck.theory.targets import (
    TargetError,
    check_sample,
    check_target,
    least_N,
    paper_error_bound,
    paper_N,
    parse_target,
    tight_error_bound,
    tight_N,
)


def test_parse_and_evaluate():
    t = parse_target("sin(3*x0)*x1", 2)
    assert abs(t(np.array([[0.5, 0.5]])).real[0] - math.sin(1.5) * 0.5) < 1e-15
    assert parse_target("abs(x0-1/3)^(1/2)", 1)(np.array([[1 / 3]])).real[0] == 0


@pytest.mark.parametrize(
    "text",
    [
        '__import__("os").system("true")',
        "open(1)",
        "x0.__class__",
        "lambda: 1",
        "eval(1)",
        "x2",
        "sin(",
        "",
        "x0 = 1",
        "x0 < 1",
    ],
)
def test_refuses_unsafe_or_bad_text(text):
    with pytest.raises(TargetError):
        parse_target(text, 2)


def test_refuses_unbounded_and_wrong_declarations():
    rng = np.random.default_rng(0)
    with pytest.raises(TargetError, match="unbounded"):
        check_target(parse_target("1/x0", 1), 1, 1, None, rng)
    with pytest.raises(TargetError, match="H_f"):
        check_target(parse_target("5*x0", 1), 1, 1, None, rng)  # Lipschitz constant 5 > 1
    with pytest.raises(TargetError, match="R ="):
        check_target(parse_target("2*x0", 1), 3, 1, 1.0, rng)
    with pytest.raises(TargetError, match="d must"):
        parse_target("x0", 0)


def test_paper_N_is_the_formula():
    # N = d (2^d H/ε)^{1/β} + 1: d=2, H=3, ε=0.1 gives 2 · 120 + 1
    assert paper_N(2, 3, 1, 0.1) == 241
    assert paper_error_bound(2, 3, 1, 241) == pytest.approx(0.1)


@given(st.integers(1, 6), st.floats(0.1, 10), st.sampled_from([0.25, 0.5, 1.0]), st.floats(0.01, 0.99))
def test_tight_N_is_minimal_and_below_paper(d, H, beta, eps):
    N = tight_N(d, H, beta, eps)
    assert tight_error_bound(d, H, beta, N) <= eps
    assert N == 2 or tight_error_bound(d, H, beta, N - 1) > eps
    assert N <= paper_N(d, H, beta, eps)


def brute_force_N(d, H, beta, eps):
    """The definition read literally: scan N = 2, 3, ... for the first bound <= ε."""
    N = 2
    while tight_error_bound(d, H, beta, N) > eps:
        N += 1
    return N


@given(st.integers(1, 6), st.floats(0.1, 2), st.sampled_from([0.5, 0.75, 1.0]), st.floats(0.05, 0.99))
def test_tight_N_equals_a_scan_from_two(d, H, beta, eps):
    assert tight_N(d, H, beta, eps) == brute_force_N(d, H, beta, eps)


@given(st.integers(2, 10**30), st.integers(0, 10**30), st.integers(2, 50))
def test_least_N_finds_any_threshold_from_any_start(threshold, start, low):
    calls = []

    def holds(N):
        calls.append(N)
        return N >= threshold

    assert least_N(holds, start, low) == max(threshold, low)
    assert len(calls) <= 4 * 101 + 4  # O(log |N* - start|): 10^30 < 2^100
    assert all(N >= low for N in calls)


def test_a_wrong_closed_form_costs_a_bisection_not_a_walk(monkeypatch):
    """The grid mutation of issue #41: a bound whose least N is ~10^7 times the closed form's start.

    Stepping by one from the start took ~6.7·10^13 steps here; the bisection takes ~100 calls."""
    import tmcheck.theory.targets as targets

    monkeypatch.setattr(
        targets, "tight_error_bound", lambda d, H, beta, N: H * (2 * d**0.5 / (3 * (N - 1))) ** (beta / 2)
    )
    t0 = time.perf_counter()
    N = targets.tight_N(1, 1.0, 1.0, 1e-7)
    assert time.perf_counter() - t0 < 1.0
    assert targets.tight_error_bound(1, 1.0, 1.0, N) <= 1e-7 < targets.tight_error_bound(1, 1.0, 1.0, N - 1)
    assert N > 6 * 10**13


def test_constants_are_validated():
    for bad in [dict(eps=1.0), dict(eps=0.0), dict(beta=1.5), dict(beta=0.0)]:
        args = {"d": 2, "H": 1.0, "beta": 1.0, "eps": 0.1} | bad
        with pytest.raises(TargetError):
            tight_N(**args)


def test_check_sample_grid_is_capped_at_40000_points():
    """The regular grid is dropped when it would hold more than 40,000 points (per_axis^d of them), and kept
    up to that size: corners, grid, then the random points."""
    rng = np.random.default_rng(0)
    for d, per_axis in ((4, 15), (2, 201), (3, 35)):  # 50625, 40401, 42875 grid points
        assert per_axis**d > 40000
        assert check_sample(d, 3, rng, per_axis=per_axis).shape == (2**d + 3, d)
    for d, per_axis in ((2, 200), (4, 14), (1, 40000)):  # 40000, 38416, 40000: kept
        X = check_sample(d, 3, rng, per_axis=per_axis)
        assert X.shape == (2**d + per_axis**d + 3, d)
        assert ((X >= 0) & (X <= 1)).all()
