"""proofs_check's Lemma 1 helpers (proofs_check/lemma1.py, lemma1_construction.py; Appendix E.1): the network's
measured error, the one-block FFN runner and the proof's grid bound, against oracles written here."""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np

from tmcheck.proofs_check.lemma1 import network_error, run_ffn_block
from tmcheck.proofs_check.lemma1_construction import grid_bound
from tmcheck.theory.fast_eval import evaluate_structured
from tmcheck.theory.lemmas.lemma1 import lemma1_network, lemma1_plan
from tmcheck.theory.targets import check_sample, parse_target


def _oracle_error(d: int, N: int, beta: float, a: tuple) -> float:
    """sup |f − T| for f(x) = ||x − a||₂^β' (β' = β as a fraction of denominator <= 100) on the documented sample:
    corners, a grid of 33 points per axis at d = 1 and 17 beyond, and 400 uniform points of seed 0; T the Lemma 1
    network at grid N evaluated in float64, f evaluated with numpy."""
    b = F(beta).limit_denominator(100)
    text = "(" + "+".join(f"(x{i}-{c})^2" for i, c in enumerate(a)) + f")^({b / 2})"
    net = lemma1_network(lemma1_plan(parse_target(text, d), 1.0, float(b), 0.5, N=N), "exact")
    X = check_sample(d, 400, np.random.default_rng(0), per_axis=33 if d == 1 else 17)
    f = np.linalg.norm(X - np.array([float(c) for c in a]), axis=1) ** float(b)
    return float(np.abs(evaluate_structured(net, X, "float64") - f).max())


CASES = ((1, 5, 0.5, (F(2, 3),)), (2, 3, 1.0, (F(1, 4), F(3, 5))), (2, 4, 0.5, (F(1, 3), F(1, 2))))


def test_network_error_is_the_float64_sup_on_the_documented_sample():
    """Both the error (to float rounding of f; evaluating T exactly would move it by ~1e-12) and the bound
    H_f(2√d/(3(N−1)))^β with H_f = 1."""
    for d, N, beta, a in CASES:
        err, bound = network_error(d, N, beta, a)
        assert abs(err - _oracle_error(d, N, beta, a)) <= 1e-14, (d, N, beta)
        assert math.isclose(bound, (2 * math.sqrt(d) / (3 * (N - 1))) ** beta, rel_tol=1e-12)
        assert err <= bound


def test_network_error_rounds_beta_to_denominators_up_to_100():
    """β = 50/101 is taken as 49/99 in f (the target's exponent is a fraction of denominator <= 100), while the
    bound keeps β itself."""
    beta, a = 50 / 101, (F(2, 3),)
    assert F(beta).limit_denominator(100) == F(49, 99)
    err, bound = network_error(1, 5, beta, a)
    assert abs(err - _oracle_error(1, 5, beta, a)) <= 1e-14
    assert bound == (2 / (3 * 4)) ** beta


def test_run_ffn_block_is_exact_on_mixed_int_and_float_weights():
    """B(H) = H + W H exactly: an integer beyond 2^53 beside a float weight is not rounded."""
    W = [[0] * 5 for _ in range(5)]
    W[1][1], W[1][4] = 0.5, 2**53 + 1
    H = np.array([[0], [1], [0], [1], [1]], dtype=object)
    out = run_ffn_block(W, H)
    assert out[1, 0] == 1 + F(1, 2) + 2**53 + 1
    assert list(out[[0, 2, 3, 4], 0]) == [0, 0, 1, 1]


def test_grid_bound_known_answers():
    """H_f (2√d/(3(N−1)))^β: d = 9, N = 5 gives base 2·3/12 = 1/2; d = 4, N = 3, β = 1 gives 2/3; d = 1, N = 2,
    β = 2 gives 4/9."""
    assert math.isclose(grid_bound(9, 3.0, 0.5, 5), 3 * 0.5**0.5, rel_tol=1e-12)
    assert math.isclose(grid_bound(4, 1.0, 1.0, 3), 2 / 3, rel_tol=1e-12)
    assert math.isclose(grid_bound(1, 1.5, 2.0, 2), 1.5 * 4 / 9, rel_tol=1e-12)
