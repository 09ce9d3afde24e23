"""Tests that kill the survivors of the held-out mutation sample (seed 2026, commit 3cf6ca865c) in proofs_check/:
mutation/SURVIVORS.md lists each mutant; every test names the mutants it kills. Each compares the evidence's
helpers with a closed form from the paper's definitions, or with the same measurement made step by step."""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmcheck.proofs_check import lemma2, lemma2_lipschitz, lemma8, lipschitz
from tmcheck.theory import bounds

# ---------------------------------------------------------------------------------------------------------------
# proofs_check/lemma2.py


def _scalar_block_by_hand(kappa: F, M: F) -> F:
    """B(H) for d_embd = m = l = L_FFN = 1, every weight and bias κ, H = M: the head adds κM·σ(κM·κM) (ReLU
    attention), then the one-layer FFN adds κZ + κ."""
    Z = M + kappa * M * max(kappa * M * kappa * M, F(0))
    return Z + kappa * Z + kappa


@settings(max_examples=20, deadline=None)
@given(
    st.fractions(min_value=F(1, 10), max_value=3, max_denominator=12),
    st.fractions(min_value=F(1, 12), max_value=1, max_denominator=12),
    st.fractions(min_value=F(1, 4), max_value=2, max_denominator=8),
)
def test_block_perturbation_is_the_scalar_blocks_difference(kappa, eta, M):
    """The all-κ scalar block against the all-(κ + η) one, exactly; at κ = η = M = 1 the outputs are 5 and 29.
    kills tmcheck.proofs_check.lemma2.x_scalar_block__mutmut_1 (a block without its head)."""
    want = abs(_scalar_block_by_hand(kappa, M) - _scalar_block_by_hand(kappa + eta, M))
    assert lemma2.block_perturbation(kappa, eta, M) == want


def test_block_perturbation_known_value():
    """kills tmcheck.proofs_check.lemma2.x_scalar_block__mutmut_1."""
    assert lemma2.block_perturbation(F(1), F(1)) == 24


@pytest.mark.parametrize(
    "kappa, eta",
    [(F(1), F(1, 5)), (F(2), F(1, 2)), (F(3), F(1, 3)), (F(10**6), F(1, 7)), (F(3 * 10**102), F(1))],
)
def test_covering_per_weight_is_kappa_over_eta_plus_one(kappa, eta):
    """theory.bounds' covering number at δ = η C_T counts (κ/η + 1)^P points, so κ/η + 1 per weight, for every κ
    whose C_T is a float (κ = 3·10^102 puts log C_T of the scalar class within log 2 of the float range).
    kills tmcheck.proofs_check.lemma2.x_covering_per_weight__mutmut_21 (l = 2 raises C_T past it)."""
    assert lemma2.covering_per_weight(kappa, eta) == pytest.approx(float(kappa / eta + 1), rel=1e-12)


# ---------------------------------------------------------------------------------------------------------------
# proofs_check/lemma2_lipschitz.py


def test_tower_classes_of_the_lipschitz_sweep():
    """The d_embd = w = 1 classes that expose the tower M^(3^L_T): L_T in (2, 3) at M in (2, 3), κ = 1.
    kills tmcheck.proofs_check.lemma2_lipschitz.x__sweep_classes__mutmut_56."""
    tower = [c for c in lemma2_lipschitz._sweep_classes() if c.d_embd == 1]
    assert sorted((c.L_T, c.M) for c in tower) == [(2, 2.0), (2, 3.0), (3, 2.0), (3, 3.0)]
    assert all(c.w == c.l == c.m == c.L_FFN == 1 and c.kappa == 1.0 for c in tower)


# ---------------------------------------------------------------------------------------------------------------
# proofs_check/lemma8.py


@pytest.mark.parametrize("tau, r", [(1.0, 0.5), (2.0, 1.0), (1.0, 1.9)])
def test_circle_check_derivative_is_the_closed_form(tau, r):
    """On the circle of radius τ the chord ||x - c|| < r is the arc |θ| < 2 arcsin(r/2τ), where the tangent
    coordinate's derivative τ cos θ is least at the ends: τ cos(2 arcsin(r/2τ)) = τ - r²/(2τ).
    kills tmcheck.proofs_check.lemma8.x_circle_check__mutmut_4 (3 arcsin)."""
    deriv, spacing = lemma8.circle_check(tau, r)
    assert deriv == pytest.approx(tau - r * r / (2 * tau), rel=1e-3)
    assert spacing == pytest.approx((tau - r * r / (2 * tau)) * 2 * (2 * math.asin(r / (2 * tau))) / 20000, rel=2e-2)


# ---------------------------------------------------------------------------------------------------------------
# proofs_check/lipschitz.py


def test_paper_attention_bound_is_three_kappa_cubed_d6_M3_l():
    """F.2's attention difference per η: 3 κ³ d⁶ M³ l (log form), at M != 1 so that the power of M shows.
    kills tmcheck.proofs_check.lipschitz.x_paper_logs__mutmut_45."""
    c = bounds.TransformerClass(L_T=1, L_FFN=2, w=3, l=4, d_embd=2, m=2, kappa=0.5, M=3.0)
    M = 3.0
    logs = lipschitz.paper_logs(c, M, M)
    assert logs["attn"] == pytest.approx(math.log(3 * 0.5**3 * 2**6 * M**3 * 4))
    assert logs["mha_lip"] == pytest.approx(math.log(4 * 2**6 * 0.5**3 * M**2 * 2 * 4))


def test_sweep_with_no_random_members_measures_the_extremal_member_only():
    """nets_per_class = 0: each class's row is the all-κ member's measurement, drawn from the one seeded stream in
    class order.
    kills tmcheck.proofs_check.lipschitz.x_sweep__mutmut_10 (one member more per class)."""
    classes = [bounds.TransformerClass(L_T=1, L_FFN=1, w=2, l=2, d_embd=2, m=1, kappa=k, M=1.0) for k in (1.0, 0.5)]
    worst, rows = lipschitz.sweep(classes, seed=0, nets_per_class=0)
    rng = np.random.default_rng(0)
    for c, row in zip(classes, rows, strict=True):
        ref = lipschitz.measure(c, rng, 1e-6, extremal=True)
        assert {k: v for k, v in row.items() if k != "class"} == ref.__dict__
