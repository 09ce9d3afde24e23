"""The structured inputs Lemmas 3-7 are checked on (theory/lemmas/__init__.py, Appendix D's rows): sample_structured
draws both faces of the box often, and with_positional writes the exact structured rows whatever array arrives."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tmcheck.theory.lemmas import sample_structured, with_positional
from tmcheck.theory.network import FIXED, structured_positional


def test_sample_structured_puts_both_edges_one_time_in_five():
    """Data entries are ±M one time in five (the box's two faces, where thresholds are tight): about 10% each.
    Without the edge draw, -M would come only from the uniform multiples of M/64 (1 in 129)."""
    M = Fraction(3)
    H = sample_structured(np.random.default_rng(0), 400, 5, M)
    data = H[:, 0:2, :].reshape(-1)
    for edge in (M, -M):
        share = sum(v == edge for v in data) / len(data)
        assert 0.07 < share < 0.14, (edge, share)
    assert all(abs(v) <= M for v in data)


def test_with_positional_is_exact_for_integer_and_float_input():
    """Rows 2-4 become the exact structured rows (rational I_t, constant 1) whatever array H arrives as; rows
    0-1 keep their values."""
    l = 4
    want = structured_positional(l, "exact")[FIXED]
    for H in (np.arange(2 * 5 * l).reshape(2, 5, l), np.full((2, 5, l), 0.5)):
        out = with_positional(H, l)
        assert out.dtype == object
        assert all(type(v) is Fraction for v in out[:, FIXED, :].reshape(-1))
        assert (out[:, FIXED, :] == want).all()
        assert (out[:, 0:2, :] == H[:, 0:2, :]).all()
    assert any((want[0:2] != np.vectorize(float)(want[0:2])).reshape(-1))  # I_t is not a float: the check bites
