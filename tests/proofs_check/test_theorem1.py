"""Theorem 1's checks (proofs_check/theorem1.py, Appendix F.1): the first simplification of log N is F.1's two sides,
written here, at m, M != 1."""

from __future__ import annotations

import math

import pytest

from tmcheck.proofs_check import theorem1


@pytest.mark.parametrize(
    "p", [(1, 1, 1, 1, 2.0, 1.0, 3, 1, 1.0), (2, 2, 5, 4, 3.0, 0.5, 2, 8, 100.0), (1, 2, 2, 3, 0.5, 2.0, 4, 2, 7.0)]
)
def test_log_N_step_is_F1s_two_sides(p):
    """log(2^{L²+1} L_FFN M^{3L} d^{18L²} w^{18L²L_FFN} κ^{6L²L_FFN} m^{L²} l^{L²} n) and
    5 L² L_FFN log(2 M L_FFN d κ m l n), written here from F.1, at m and M != 1."""
    L, LF, d, w, M, k, m, l, n = p
    lhs = math.log(2 ** (L * L + 1) * LF * M ** (3 * L) * d ** (18 * L * L) * w ** (18 * L * L * LF))
    lhs += 6 * L * L * LF * math.log(k) + L * L * math.log(m * l) + math.log(n)
    rhs = 5 * L * L * LF * math.log(2 * M * LF * d * k * m * l * n)
    got = theorem1.log_N_step(*p)
    assert got == pytest.approx((lhs, rhs), rel=1e-12, abs=0)
