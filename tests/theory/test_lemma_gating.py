"""Gating FFNs (Appendix G, Lemma 4, corrected): exact on both variants, tight C, paper's FFN fails; the pivot's
reflection, and the float64 pivot and FFN built from the paper's vectors, against oracles written here."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tmcheck.proofs_check.lemma4 import paper_gating_ffn
from tmcheck.theory.backends import run_blocks
from tmcheck.theory.lemmas import sample_structured
from tmcheck.theory.lemmas.gating import _reflect, gating, gating_C, gating_ffn, paper_kappa_bound, pivot
from tmcheck.theory.network import INTERACTION, Block, interaction_vectors


@st.composite
def cuts(draw):
    l = draw(st.integers(1, 40))
    t_cut = draw(st.one_of(st.sampled_from([0, l]), st.integers(0, l)))
    return (
        l,
        t_cut,
        draw(st.sampled_from(["prefix", "suffix"])),
        draw(st.sampled_from([Fraction(1), Fraction(5, 2), Fraction(7)])),
    )


@given(cuts(), st.integers(0, 2**32 - 1))
def test_gating_is_exact(case, seed):
    l, t_cut, keep, M = case
    c = gating(l, t_cut, keep, M)
    H = c.sample_inputs(np.random.default_rng(seed), 6)
    out = run_blocks(c.blocks, H, "exact")
    kept = [t for t in range(l) if (t < t_cut) == (keep == "prefix")]
    gone = [t for t in range(l) if t not in kept]
    assert (out[:, :, kept] == H[:, :, kept]).all()
    assert (out[:, 0:2, gone] == 0).all() and (out[:, 2:, :] == H[:, 2:, :]).all()
    assert c.resources().kappa_blocks <= paper_kappa_bound(l, M)


@given(cuts())
def test_pivot_separates(case):
    l, t_cut, keep, _ = case
    v, I = pivot(l, t_cut, keep), interaction_vectors(l, "exact")
    assert all(((v @ I[:, t]) > 0) == ((t < t_cut) == (keep == "prefix")) for t in range(l))


def test_gating_C_is_tight():
    l, t_cut, M = 10, 4, Fraction(3)
    C = gating_C(l, t_cut, "prefix", M)
    v, I = pivot(l, t_cut, "prefix"), interaction_vectors(l, "exact")
    t = min(range(l), key=lambda s: abs(v @ I[:, s]))  # the token closest to the pivot line
    layers = gating_ffn(l, t_cut, "prefix", M)
    H = sample_structured(np.random.default_rng(0), 1, l, M)
    H[0, 0, t] = -M if t < t_cut else M  # the sign that needs the full C
    assert run_blocks([Block((), layers)], H, "exact")[0, 0, t] == (H[0, 0, t] if t < t_cut else 0)
    # the same FFN with C scaled down by 1e-6 breaks on that token
    W1 = layers[0].W.copy()
    W1[:, 2:4] = W1[:, 2:4] * (1 - Fraction(1, 10**6))
    broken = (type(layers[0])(W1, layers[0].b), layers[1])
    assert run_blocks([Block((), broken)], H, "exact")[0, 0, t] != (H[0, 0, t] if t < t_cut else 0)
    assert C > 0


def test_paper_ffn_leaves_residue_on_gated_tokens():
    l, k, M = 8, 3, Fraction(2)
    H = sample_structured(np.random.default_rng(4), 3, l, M)
    layers = paper_gating_ffn(l, k, gating_C(l, k, "prefix", M))
    from tmcheck.theory.backends import ExactBackend, ffn

    be = ExactBackend()
    out = be.output(ffn(layers, be.inputs(H), be))
    assert (out[:, :, :k] == H[:, :, :k]).all()  # kept tokens are right
    assert (out[:, 0:2, k:] != 0).all()  # gated tokens keep -C v.I_t: the paper's error


def test_float_pivot_is_float64():
    """float64 arithmetic gives float64 arrays: the backends take an object array for exact rationals."""
    for l, t_cut in ((1, 0), (1, 1), (5, 0), (5, 2), (5, 5)):
        for keep in ("prefix", "suffix"):
            assert pivot(l, t_cut, keep, "float64").dtype == np.float64


def _unit(s: Fraction) -> np.ndarray:
    """The rational point ((1-s²)/(1+s²), 2s/(1+s²)) of the unit circle."""
    return np.array([(1 - s * s) / (1 + s * s), 2 * s / (1 + s * s)], dtype=object)


fractions = st.fractions(min_value=-5, max_value=5, max_denominator=20)


@given(fractions, fractions, fractions)
def test_reflect_is_the_reflection_across_u(s, a0, a1):
    """r = 2<a,u>u - a: same norm as a, same component along u, opposite component across u (exact)."""
    u, a = _unit(s), np.array([a0, a1], dtype=object)
    r = _reflect(a, u)
    perp = np.array([-u[1], u[0]], dtype=object)
    assert r[0] ** 2 + r[1] ** 2 == a0**2 + a1**2
    assert r @ u == a @ u
    assert r @ perp == -(a @ perp)


def test_reflect_known_answer():
    """(1, 0) reflected across (3/5, 4/5) is (2·(9/25) - 1, 2·(12/25)) = (-7/25, 24/25)."""
    u = np.array([Fraction(3, 5), Fraction(4, 5)], dtype=object)
    assert list(_reflect(np.array([Fraction(1), Fraction(0)], dtype=object), u)) == [Fraction(-7, 25), Fraction(24, 25)]


def test_float_pivot_matches_exact_at_one_token():
    """l = 1 (one token at angle π/2, its neighbours at 0 and π): the float64 and exact pivots are the same
    vector, (1, -1) for the prefix cut at 0 and (1, 1) at 1 (R_{π/2}((1, 0) + (0, 1)), R_{π/2}((0, 1) + (-1, 0)))."""
    for t_cut, want in ((0, (1, -1)), (1, (1, 1))):
        for keep, sign in (("prefix", 1), ("suffix", -1)):
            ex = pivot(1, t_cut, keep, "exact")
            fl = pivot(1, t_cut, keep, "float64")
            assert list(ex) == [sign * w for w in want]
            np.testing.assert_allclose(fl, [float(sign * w) for w in want], rtol=0, atol=1e-15)  # cos(π/2) in float


def _paper_gating_W1(l: int, t_cut: int, keep: str, M: float) -> np.ndarray:
    """Lemma 4's first layer in float64 from the paper's vectors I_t = (cos tπ/2l, sin tπ/2l), t = 1..l:
    v = R_{π/2}(I_k + I_{k+1}) (clockwise, unnormalised; minus for a suffix), C = M / min_t |v.I_t|, rows
    -z_i - C v.I_t (i = 0, 1) and -C v.I_t."""
    ang = lambda t: (t + 1) * math.pi / (2 * l)  # noqa: E731  (0-based token t)
    I = np.array([[math.cos(ang(t)), math.sin(ang(t))] for t in range(l)])
    s = I[t_cut - 1] + I[t_cut]
    v = np.array([s[1], -s[0]]) * (1 if keep == "prefix" else -1)
    C = M / min(abs(v @ I[t]) for t in range(l))
    W = np.zeros((3, 5))
    W[:, INTERACTION] = -C * v
    W[0, 0] = W[1, 1] = -1.0
    return W


def test_float_gating_ffn_uses_the_paper_vectors():
    """gating_ffn(..., "float64") is Lemma 4's FFN built from the paper's sinusoidal I_t (interior cuts)."""
    for l, t_cut, keep, M in ((6, 2, "prefix", 1.0), (6, 4, "suffix", 2.5), (11, 5, "prefix", 3.0)):
        W1 = gating_ffn(l, t_cut, keep, M, "float64")[0].W
        assert W1.dtype == np.float64
        np.testing.assert_allclose(W1, _paper_gating_W1(l, t_cut, keep, M), rtol=1e-12, atol=0)


def test_gating_ffn_default_domain_is_one():
    """M defaults to 1: the default FFN is the one for |z_0|, |z_1| <= 1, whose C is the least with C|v.I_t| >= 1."""
    for l, t_cut, keep in ((5, 2, "prefix"), (7, 7, "suffix"), (3, 0, "prefix")):
        got, want = gating_ffn(l, t_cut, keep), gating_ffn(l, t_cut, keep, 1)
        assert all((a.W == b.W).all() and (a.b == b.b).all() for a, b in zip(got, want, strict=True))
        v, I = pivot(l, t_cut, keep), interaction_vectors(l, "exact")
        C = 1 / min(abs(v[0] * I[0, t] + v[1] * I[1, t]) for t in range(l))
        assert list(got[0].W[2, INTERACTION]) == list(-C * v)
