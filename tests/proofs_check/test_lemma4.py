"""Lemma 4's checks (proofs_check/lemma4.py, Appendix G): the gating FFN as written holds only exact numbers, and the
paper's vectors are the l vectors I_1..I_l of the first quadrant."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from tmcheck.proofs_check import lemma4
from tmcheck.theory.lemmas.gating import gating_C
from tmcheck.theory.network import structured_positional


@pytest.mark.parametrize("l,k", [(4, 2), (6, 1), (3, 3)])
def test_the_written_gating_ffn_is_exact(l, k):
    """Every weight and bias of the paper's FFN is a Fraction, so the exact backend's output is exact too (a float
    zero bias would turn it into floats while comparing equal)."""
    layers = lemma4.paper_gating_ffn(l, k, gating_C(l, k, "prefix", lemma4.M))
    for lay in layers:
        assert all(type(v) is Fraction for v in np.asarray(lay.W).reshape(-1))
        assert all(type(v) is Fraction for v in np.asarray(lay.b).reshape(-1))
    H = np.empty((1, 5, l), dtype=object)
    H[0] = structured_positional(l, "exact")
    H[0, 0:2, :] = [[Fraction(j + 1, 3) for j in range(l)], [Fraction(-1, 2)] * l]
    assert all(type(v) is Fraction for v in np.asarray(lemma4._apply(layers, H)).reshape(-1))


@pytest.mark.parametrize("l", [2, 3, 8])
def test_the_papers_vectors_are_I_1_to_I_l(l):
    """I_t = (cos(tπ/2l), sin(tπ/2l)) for t = 1..l: l vectors in the closed first quadrant, the last I_l = (0, 1)."""
    with mpmath.workdps(50):
        I = lemma4._mp_vectors(l)
        assert len(I) == l
        for t, (c, s) in enumerate(I, start=1):
            assert abs(c - mpmath.cos(t * mpmath.pi / (2 * l))) < mpmath.mpf(10) ** -45
            assert abs(s - mpmath.sin(t * mpmath.pi / (2 * l))) < mpmath.mpf(10) ** -45
            assert c > -(mpmath.mpf(10) ** -45) and s > 0
        assert abs(I[-1][0]) < mpmath.mpf(10) ** -45 and abs(I[-1][1] - 1) < mpmath.mpf(10) ** -45
