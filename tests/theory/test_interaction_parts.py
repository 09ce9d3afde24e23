"""Parts of theory/lemmas/interaction.py that `tmcheck lemma interaction` shows and Lemma 1's uniform C uses:
the default kernels, the attention pattern, the pattern input, the float64 range search and the uniform threshold,
each checked against a computation written out here."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from tmcheck.theory.heads import head_value, minimal_C, threshold, uniform_threshold
from tmcheck.theory.lemmas.interaction import (
    attention_pattern,
    default_kernels,
    float_error,
    interaction,
    largest_float_l,
    pattern_input,
)

Q0, K0 = [[1, 0, 0, 0, 0], [0, 1, 0, 0, 1]], [[0, 1, 0, 0, 0], [1, 0, 0, 0, 0]]


def test_default_kernels_are_the_documented_ones():
    Q, K = default_kernels(Fraction(3, 2))
    k = Fraction(3, 2)
    assert Q == [[k, 0, 0, 0, 0], [0, k, 0, 0, k]]
    assert K == [[0, k, 0, 0, 0], [k, 0, 0, 0, 0]]
    # b(t, k) = κ² (x_t0 x_k1 + (x_t1 + 1) x_k0) on data rows (x0, x1) and the constant row 4 = 1
    h_t, h_k = np.array([2, 3, 0, 0, 1]), np.array([5, 7, 0, 0, 1])
    b = (np.array(Q) @ h_t) @ (np.array(K) @ h_k)
    assert b == k * k * (2 * 7 + (3 + 1) * 5)


def test_attention_pattern_is_relu_of_the_head_scores():
    l = 5
    Q, K = default_kernels(Fraction(1))
    c = interaction(l, 0, l - 1, 0, Q, K, 2)
    H = c.sample_inputs(np.random.default_rng(3), 1)[0]
    P = attention_pattern(c, H)
    head = c.blocks[0].heads[0]
    assert P.shape == (l, l)
    for t, k in itertools.product(range(l), range(l)):
        s = sum(
            H[a, t] * head.Q[i, a] * head.K[i, b] * H[b, k]
            for i in range(head.Q.shape[0])
            for a in range(H.shape[0])
            for b in range(H.shape[0])
        )
        assert P[t, k] == max(s, 0) and isinstance(P[t, k], (Fraction, int))
    # the lemma's head is sparse: at most the pair (t1, t2) scores above 0
    assert {(int(a), int(b)) for a, b in np.argwhere(P != 0)} <= {(0, l - 1)}


def test_pattern_input_is_the_sample_with_the_largest_score():
    Q, K = default_kernels(Fraction(1))
    c = interaction(6, 1, 4, 0, Q, K, 2)
    H = pattern_input(c, Q, K)
    samples = c.sample_inputs(np.random.default_rng(0), 16)
    scores = head_value(samples, 1, 4, Q, K)
    best = int(np.argmax(scores))
    assert np.array_equal(H, samples[best])
    assert all(head_value(H[None], 1, 4, Q, K)[0] >= s for s in scores)
    assert head_value(H[None], 1, 4, Q, K)[0] > min(scores)


def test_float_error_is_the_leak_below_the_threshold_and_rounding_at_it():
    l, t1, t2 = 8, 2, 5
    C = threshold(l, t1, t2, Q0, K0, 2.0, "float64").C
    at = float_error(l, t1, t2, Q0, K0, 2, C, np.random.default_rng(0), n_random=0)
    below = float_error(l, t1, t2, Q0, K0, 2, C / 2, np.random.default_rng(0), n_random=0)
    assert 0 <= at <= 1e-12 < below
    # C* is attained at the critical input: at half of it the head leaks there, by far more than rounding
    assert below > 1e-3
    more = float_error(l, t1, t2, Q0, K0, 2, C, np.random.default_rng(0), n_random=3)
    assert 0 <= more <= 1e-12


def test_largest_float_l_search():
    errors = largest_float_l(Q0, K0, 2, tol=1.0, l_max=16)
    assert errors["l"] == 16 and errors["first_bad"] is None
    assert list(errors["errors"]) == [2, 4, 8, 16] and errors["tol"] == 1.0 and errors["C"] == "minimal"
    never = largest_float_l(Q0, K0, 2, tol=-1.0, l_max=16)
    assert never["l"] == 1 and never["first_bad"] == 2 and list(never["errors"]) == [2]
    # bisection between the last good and the first bad power of two
    errs = largest_float_l(Q0, K0, 2, tol=1.0, l_max=64)["errors"]
    tol = (errs[32] + errs[64]) / 2 if errs[64] > errs[32] else None
    if tol is not None:
        res = largest_float_l(Q0, K0, 2, tol=tol, l_max=64)
        assert res["first_bad"] - res["l"] == 1
        assert res["errors"][res["l"]] <= tol < res["errors"][res["first_bad"]]
        assert 32 <= res["l"] < 64
    paper = largest_float_l(Q0, K0, 2, tol=1.0, l_max=8, which="paper")
    assert paper["C"] == "paper" and paper["errors"] != largest_float_l(Q0, K0, 2, tol=1.0, l_max=8)["errors"]


@pytest.mark.parametrize("l", [2, 3, 5, 6])
@pytest.mark.parametrize(
    "Q,K",
    [
        (Q0, K0),
        ([[1, 0, 0, 0, 0], [0, 2, 0, 0, 0]], [[0, 1, 0, 0, 0], [1, 0, 0, 0, Fraction(1, 2)]]),
        ([[Fraction(-1, 2), 1, 0, 0, 0], [0, 0, 0, 0, 1]], [[1, 1, 0, 0, 0], [0, -1, 0, 0, 0]]),
    ],
)
def test_uniform_threshold_is_the_largest_per_head_threshold(l, Q, K):
    each = [threshold(l, t1, t2, Q, K, Fraction(2)).C for t1 in range(l) for t2 in range(l)]
    u = uniform_threshold(l, Q, K, Fraction(2))
    assert u.C == max(each) == minimal_C(l, Q, K, Fraction(2))
    assert isinstance(u.C, Fraction)
    # float64 uses the sinusoidal vectors (exact: rational points on the circle), so it has its own maximum
    each_f = [threshold(l, t1, t2, Q, K, 2.0, "float64").C for t1 in range(l) for t2 in range(l)]
    assert uniform_threshold(l, Q, K, 2.0, "float64").C == pytest.approx(max(each_f), rel=1e-9, abs=1e-12)
    if u.C > 0:
        t, k = u.pair
        assert u.pair is not None and 0 <= t < l and 0 <= k < l


def test_uniform_threshold_one_token():
    th = uniform_threshold(1, Q0, K0, Fraction(2))
    assert th.C == 0 and isinstance(th.C, Fraction) and th.pair is None
    assert uniform_threshold(1, Q0, K0, 2.0, "float64").C == 0.0


def test_float_error_inputs():
    from tmcheck.theory.lemmas.interaction import float_error_inputs
    from tmcheck.theory.network import structured_positional

    l, t1, t2, M = 9, 2, 6, 2
    H = float_error_inputs(l, t1, t2, Q0, K0, M, np.random.default_rng(5), n_random=3)
    assert H.shape == (4, 5, l) and H.dtype == np.float64
    assert np.array_equal(H[:, 2:], np.repeat(structured_positional(l, "float64")[None, 2:], 4, axis=0))
    th = threshold(l, t1, t2, Q0, K0, float(M), "float64")
    t, k = th.pair
    assert np.array_equal(H[0, 0:2, t], th.x_t)
    if th.x_k is not None and k != t:
        assert np.array_equal(H[0, 0:2, k], th.x_k)
    rest = [s for s in range(l) if s not in th.pair]
    assert not H[0, 0:2, rest].any()
    want = np.random.default_rng(5).uniform(-M, M, size=(3, 2, l))
    assert np.array_equal(H[1:, 0:2], want) and (want < 0).any()


def test_float_error_measures_one_random_input_by_default(monkeypatch):
    from tmcheck.theory.lemmas import interaction as mod

    seen = []
    real = mod.float_error_inputs

    def spy(*args, **kwargs):
        H = real(*args, **kwargs)
        seen.append(H.shape[0])
        return H

    monkeypatch.setattr(mod, "float_error_inputs", spy)
    mod.float_error(6, 1, 4, Q0, K0, 2, 100.0, np.random.default_rng(0))
    mod.float_error(6, 1, 4, Q0, K0, 2, 100.0, np.random.default_rng(0), n_random=0)
    assert seen == [2, 1]


def test_uniform_threshold_float_is_float():
    u = uniform_threshold(4, Q0, K0, 2.0, "float64").C
    assert isinstance(u, float) and not isinstance(u, Fraction)
    assert isinstance(uniform_threshold(4, Q0, K0, 2).C, Fraction)


def test_largest_float_l_defaults_and_comparisons(monkeypatch):
    from types import SimpleNamespace

    from tmcheck.theory.lemmas import interaction as mod

    calls, whiches = [], []

    def fake_threshold(l, t1, t2, Q, K, M, arithmetic):
        whiches.append("minimal")
        return SimpleNamespace(C=1.0)

    def fake_paper_C(l, kap, M):
        whiches.append("paper")
        return Fraction(1)

    def fake_error(l, t1, t2, Q, K, M, C, rng):
        calls.append((l, t1, t2, float(rng.random())))
        return l * 1e-12  # exceeds the default tolerance 1e-9 first at l = 1001

    monkeypatch.setattr(mod, "threshold", fake_threshold)
    monkeypatch.setattr(mod, "paper_C", fake_paper_C)
    monkeypatch.setattr(mod, "float_error", fake_error)
    res = mod.largest_float_l(Q0, K0, 2)
    assert (res["l"], res["first_bad"], res["tol"], res["C"]) == (1000, 1001, 1e-9, "minimal")
    assert set(whiches) == {"minimal"}
    seed0 = float(np.random.default_rng(0).random())
    assert all(r == seed0 for *_, r in calls)
    assert all((t1, t2) == (l // 3, 2 * l // 3) for l, t1, t2, _ in calls)
    whiches.clear()
    assert mod.largest_float_l(Q0, K0, 2, which="paper")["l"] == 1000 and set(whiches) == {"paper"}
    # an error equal to the tolerance is within it, in the doubling as in the bisection
    assert mod.largest_float_l(Q0, K0, 2, tol=16e-12, l_max=64)["l"] == 16
    assert mod.largest_float_l(Q0, K0, 2, tol=24e-12, l_max=64)["l"] == 24
    calls.clear()
    assert mod.largest_float_l(Q0, K0, 2, tol=1.0)["first_bad"] is None and max(c[0] for c in calls) == 4096


@pytest.mark.parametrize("arithmetic", ["exact", "float64"])
def test_thresholds_refuse_a_bound_below_one(arithmetic):
    with pytest.raises(ValueError, match="M must be >= 1"):
        uniform_threshold(4, Q0, K0, 0.5, arithmetic)
    with pytest.raises(ValueError, match="M must be >= 1"):
        threshold(4, 0, 1, Q0, K0, 0.5, arithmetic)
