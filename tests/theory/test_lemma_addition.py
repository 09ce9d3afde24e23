"""Constant addition (Appendix G, Lemma 5, corrected): exact on any constants, the stated domain and constants, and
the heads' threshold C growing like l²."""

from __future__ import annotations

from fractions import Fraction
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tmcheck.theory.backends import run_blocks
from tmcheck.theory.lemmas.addition import addition


@given(
    st.integers(1, 6),
    st.sampled_from([Fraction(2), Fraction(3), Fraction(9, 2)]),
    st.data(),
)
def test_addition_is_exact(D, M, data):
    c = [data.draw(st.fractions(min_value=-M / 2, max_value=M / 2, max_denominator=6)) for _ in range(D)]
    con = addition(c, M)
    H = con.sample_inputs(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))), 6)
    H[0, 0, :D] = -M / 2  # the corner where σ(x - c + M) has the smallest argument
    out = run_blocks(con.blocks, H, "exact")
    assert (out[:, 0, D:] == H[:, 0, :D] - np.array(c, dtype=object)).all()
    assert (out[:, 0, :D] == H[:, 0, :D]).all() and (out[:, 1:] == H[:, 1:]).all()
    r = con.resources()
    assert (r.m, r.L_FFN, r.w_FFN) == (D, 2, 2)


def test_addition_rejects_out_of_range():
    with pytest.raises(ValueError, match="M/2"):
        addition([Fraction(2)], 2)
    with pytest.raises(ValueError, match="M must be"):
        addition([0], Fraction(3, 2))
    with pytest.raises(ValueError, match="at least one"):
        addition([], 2)


def test_head_C_grows_like_l_squared():
    Cs = {D: max(addition([0] * D, 2).constants["C_heads"]) for D in (2, 4, 8, 16)}
    # C* / l grows (so O(lM) fails for the proof's heads) while C* / l^2 stays within a factor 3
    per_l = [Cs[D] / (2 * D) for D in sorted(Cs)]
    per_l2 = [Cs[D] / (2 * D) ** 2 for D in sorted(Cs)]
    assert all(a < b for a, b in pairwise(per_l))
    assert max(per_l2) / min(per_l2) < 3


def test_addition_expected_is_exact_on_integer_input():
    """The claim x_i - c_i is computed exactly, also when H arrives as an integer array (no truncation)."""
    c = addition([Fraction(1, 2), Fraction(-1, 3)], 2)
    H = np.zeros((1, 5, 4), dtype=np.int64)
    H[0, 0, :2] = [1, -1]
    out = c.expected(H)
    assert list(out[0, 0]) == [1, -1, Fraction(1, 2), Fraction(-2, 3)]


def test_addition_states_its_domain_and_constants():
    """Lemma 5's domain is ||x||_inf <= M/2 (the heads' threshold is sized for it); c is recorded as given."""
    for c_, M in (([Fraction(1, 2)], 4), ([Fraction(-1), Fraction(3, 4)], 6)):
        con = addition(c_, M)
        assert con.claim.endswith(f"||x||_inf <= {Fraction(M, 2)}")
        assert con.constants["c"] == c_ and con.constants["M"] == M
        H = con.sample_inputs(np.random.default_rng(0), 40)
        assert max(abs(v) for v in H[:, 0, :].reshape(-1)) == Fraction(M, 2)  # the edge is sampled
