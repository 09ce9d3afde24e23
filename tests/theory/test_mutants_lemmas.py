"""Lemmas 3-7 (Appendix G): known answers and properties that tell apart the mutants mutation testing left alive.

Each test says which property of the paper's construction (or of tmcheck's documented contract) it checks; the
oracles are written here from the definitions (the paper's float64 pivot, a brute-force sup of an FFN, the
reflection across a unit vector), not copied from the implementation.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tmcheck.theory.construction import STATED_RESOURCES
from tmcheck.theory.lemmas import sample_structured, with_positional
from tmcheck.theory.lemmas.addition import addition, shift_ffn
from tmcheck.theory.lemmas.gating import _reflect, gating, gating_ffn, pivot
from tmcheck.theory.lemmas.interaction import interaction
from tmcheck.theory.lemmas.parallel import output_bound, parallel_ffn, parallelize
from tmcheck.theory.lemmas.replace import replace, replace_ffn
from tmcheck.theory.network import FIXED, INTERACTION, Layer, interaction_vectors, structured_positional

Q, K = [[1, 0, 0, 0, 0], [0, 1, 0, 0, 1]], [[0, 1, 0, 0, 0], [1, 0, 0, 0, 0]]


def _fractions_only(layers) -> bool:
    """Every weight and bias of an exact FFN is a Fraction held in an object array (no float sneaks in)."""
    return all(
        a.dtype == object and all(type(v) is Fraction for v in a.reshape(-1)) for lay in layers for a in (lay.W, lay.b)
    )


# --------------------------------------------------------------------------------------------
# shared helpers (lemmas/__init__.py)


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


# --------------------------------------------------------------------------------------------
# exact constructions hold exact numbers


def test_exact_ffns_hold_only_fractions():
    """In exact arithmetic every weight is a Fraction: Lemma 4's gating FFN (biases included), Lemma 5's shift
    FFN (its ±1 output weights), Lemma 6's FFN by default, and Lemma 7's parallel FFN (its output layer)."""
    assert _fractions_only(gating_ffn(5, 2, "prefix", 2, "exact"))
    assert _fractions_only(gating_ffn(5, 2, "suffix"))
    assert _fractions_only(shift_ffn(4, 2, 3, "exact"))
    assert _fractions_only(replace_ffn())
    assert _fractions_only(parallel_ffn(6, 3, replace_ffn(), gating_ffn(6, 4, "prefix", 2), 2))


def test_float_pivot_is_float64():
    """float64 arithmetic gives float64 arrays: the backends take an object array for exact rationals."""
    for l, t_cut in ((1, 0), (1, 1), (5, 0), (5, 2), (5, 5)):
        for keep in ("prefix", "suffix"):
            assert pivot(l, t_cut, keep, "float64").dtype == np.float64


# --------------------------------------------------------------------------------------------
# Lemma 4: pivot and gating FFN


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


# --------------------------------------------------------------------------------------------
# Lemma 5


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


# --------------------------------------------------------------------------------------------
# names, claims and stated resources


def _constructions():
    yield interaction(5, 1, 3, 0, Q, K, 2)
    yield gating(5, 2, "prefix", 2)
    yield addition([Fraction(1, 2)], 2)
    yield replace(4, 2)
    yield parallelize(replace(3, 1), gating(4, 1, "suffix", 1))


def test_network_meta_names_its_construction():
    """An exported network's meta name is the construction's name (its prefix for parametrised names)."""
    for c in _constructions():
        assert c.network.meta["name"].startswith("lemma")
        assert c.name.startswith(c.network.meta["name"]), (c.name, c.network.meta)


def test_replace_claim_names_the_rows():
    for src, dst in ((1, 0), (0, 1)):
        claim = replace(3, 1, src, dst).claim
        assert isinstance(claim, str) and f"row {dst} replaced by row {src}" in claim


def test_stated_resources_are_the_lemmas_counts():
    """Lemma 3: one block, one head, no FFN; Lemma 6: one block, no head, one affine layer; both on l tokens.
    Every checked resource is stated, and the measured network has exactly these counts."""
    cases = [
        (interaction(5, 1, 3, 0, Q, K, 2), dict(L_T=1, m=1, L_FFN=0, l=5)),
        (replace(4, 2), dict(L_T=1, m=0, L_FFN=1, l=4)),
    ]
    for c, want in cases:
        assert c.stated_resources == want
        assert set(c.stated_resources) == set(STATED_RESOURCES)
        res = c.resources()
        assert {k: getattr(res, k) for k in want} == want


# --------------------------------------------------------------------------------------------
# Lemma 7: output bound


def _box_sup(ffn, Mz) -> list[Fraction]:
    """sup |FFN(z)_r| over the structured box by brute force at the box's vertices (exact where the FFN is
    monotone in each input, as below): z_0, z_1 in {-Mz, Mz}, z_2, z_3 in {0, 1}, z_4 = 1."""
    best = [Fraction(0)] * 5
    for z0, z1, z2, z3 in itertools.product((-Mz, Mz), (-Mz, Mz), (0, 1), (0, 1)):
        h = np.array([z0, z1, z2, z3, 1], dtype=object)
        for i, lay in enumerate(ffn):
            h = lay.W @ h + lay.b
            if i < len(ffn) - 1:
                h = np.array([max(v, 0) for v in h], dtype=object)
        best = [max(b, abs(v)) for b, v in zip(best, h, strict=True)]
    return best


def _layer(W, b) -> Layer:
    return Layer(
        np.array([[Fraction(v) for v in r] for r in W], dtype=object), np.array([Fraction(v) for v in b], dtype=object)
    )


def test_output_bound_is_tight_for_monotone_ffns():
    """Interval propagation is exact when every weight is >= 0 (each output is monotone in each input): a hidden
    unit σ(z_0/4) lies in [0, Mz/4], a unit with zero weights is 0, and the bound is that sup, not more
    (clamping an upper end below 1 up to 1 would not be)."""
    Mz = Fraction(2)
    ffn = (
        _layer([[Fraction(1, 4), 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 1, 0, 0]], [0, 0, 0]),
        _layer([[1, 0, 0], [0, 3, 0], [0, 0, Fraction(1, 2)], [0, 0, 0], [0, 0, 0]], [0, 0, 0, 0, 0]),
    )
    assert output_bound(ffn, Mz) == _box_sup(ffn, Mz) == [Fraction(1, 2), 0, Fraction(1, 2), 0, 0]
