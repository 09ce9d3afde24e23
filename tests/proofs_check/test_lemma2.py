"""Lemma 2's checks (proofs_check/lemma2.py, lemma2_lipschitz.py) against oracles written here from Appendix F.2's
formulas and Def. 5, at points the obligations' default searches do not visit: FFN widths that change between layers,
M != 1 and m != 1 in the written bounds, grid steps η > 1, κ large enough that a deeper class's C_T overflows, and
the stated C_T of the one-block class."""

from __future__ import annotations

import math
from fractions import Fraction as F

import pytest

from tmcheck.proofs_check import lemma2, lemma2_lipschitz


def ffn_oracle(dims: list[int], kappa: F, x: F) -> F:
    """Def. 5 on the input x·1 with every weight and bias κ: y_0 = x, y_i = n_i κ y_{i−1} + κ (n_i the fan-in of
    layer i), ReLU between layers and none after the last; all entries of a layer's output are equal."""
    y = x
    for i, n in enumerate(dims[:-1]):
        y = n * kappa * y + kappa
        if i < len(dims) - 2:
            y = max(F(0), y)
    return y


@pytest.mark.parametrize(
    "dims,kappa,x",
    [
        ([2, 3, 2], F(1, 2), F(1)),
        ([2, 3, 2], F(1, 2), F(-1)),  # the hidden ReLU cuts: the output is the last bias
        ([3, 1, 2, 3], F(1, 3), F(2)),
        ([1, 4, 1], F(-1, 5), F(1, 2)),
        ([4, 4, 4], F(1, 10), F(3)),
    ],
)
def test_ffn_all_kappa_is_def5_on_any_widths(dims, kappa, x):
    """Layers of different widths (the class allows w != d_embd): the input is d_embd = dims[0] entries."""
    assert lemma2.ffn_all_kappa(dims, kappa, x) == ffn_oracle(dims, kappa, x)


@pytest.mark.parametrize("kappa,d,L,M", [(F(1, 2), 2, 2, F(3)), (F(1, 10), 5, 3, F(7, 2)), (F(2), 1, 2, F(1, 4))])
def test_ffn_output_paper_is_the_written_bound_at_any_M(kappa, d, L, M):
    """(κ d²)^{L−1} M + κ (κ d²)^{L−2}, as printed in F.2, at M != 1 (where M and 1/M differ)."""
    q = kappa * d * d
    assert lemma2.ffn_output_paper(kappa, d, L, M) == q ** (L - 1) * M + kappa * q ** (L - 2)
    assert lemma2.ffn_output_paper(F(1, 2), 2, 2, F(3)) == F(13, 2)  # 2·3 + (1/2)·1


@pytest.mark.parametrize("d,w,k,L,m,l,M", [(2, 3, F(1, 2), 2, 3, 4, F(5)), (1, 1, F(2), 1, 2, 1, F(1, 3))])
def test_block_output_terms_are_the_written_sides_at_any_m_l_M(d, w, k, L, m, l, M):
    """Both sides of F.2's last inequality for ||B(H)||∞, with m, l, M != 1 (the default search fixes them at 1)."""
    X = 2 * d**6 * k**3 * m * l * M
    lhs = X + (k * w * w) ** (L - 1) * X + k * (k * w * w) ** (L - 2)
    rhs = 4 * d**4 * w ** (2 * L) * k ** (L + 1) * m * l * M
    assert lemma2.block_output_terms(d, w, k, L, m, l, M) == (lhs, rhs)


@pytest.mark.parametrize("kappa,eta", [(F(4), F(2)), (F(3), F(3, 2)), (F(5), F(2)), (F(1), F(1, 3))])
def test_weight_grid_covers_at_any_step(kappa, eta):
    """The fewest points within η of every t in [−κ, κ], also for η > 1: ceil(κ/η) points −κ + η, −κ + 3η, ...
    and every t of a fine grid of [−κ, κ] is within η of one of them."""
    pts = lemma2.weight_grid(kappa, eta)
    assert pts == [-kappa + (2 * j + 1) * eta for j in range(math.ceil(kappa / eta))]
    ts = [-kappa + 2 * kappa * F(i, 400) for i in range(401)]
    assert all(min(abs(t - p) for p in pts) <= eta for t in ts)


@pytest.mark.parametrize("kappa,eta", [(F(10**50), F(10**48)), (F(10**60), F(10**55)), (F(1), F(1, 3))])
def test_covering_per_weight_is_kappa_over_eta_plus_one(kappa, eta):
    """theory.bounds' corrected covering number is P log(κ C_T/δ + 1); at δ = η C_T each weight has κ/η + 1 grid
    points whatever C_T is, for the one-block class even when κ is large (its C_T stays finite in float64)."""
    assert lemma2.covering_per_weight(kappa, eta) == pytest.approx(float(kappa / eta + 1), rel=1e-9, abs=0)


@pytest.mark.parametrize("kappa,eta", [(0.5, 0.01), (2.0, 0.25), (1e-3, 1e-6)])
def test_zero_network_gap_is_eta_against_the_stated_constant(kappa, eta):
    """T = the zero network (T(H) = H), T' = T with last bias η: |T − T'| = η exactly (the last layer has no ReLU);
    Lemma 2's C_T = 2^{L²+1} L_FFN M^{3L} d^{18L²} w^{18L²L_FFN} κ^{6L²L_FFN} m^{L²} l^{L²} at every size 1, M = 1
    is 4κ⁶."""
    gap, ct = lemma2_lipschitz.zero_network_gap(kappa, eta)
    assert gap == pytest.approx(eta, rel=0, abs=1e-15)  # (1 + η) − 1 in float64
    assert ct == pytest.approx(4 * kappa**6 * eta, rel=1e-12, abs=0)
