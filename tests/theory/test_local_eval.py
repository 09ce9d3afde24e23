"""`theory.lemmas.local_eval`: T(x) from the tokens that matter at x, with its certificate of locality, equals the full
network's exact output on every network small enough to build (Lemma 1, Theorem 2 on the circle, sphere and
torus); a dropped needed token, an input outside Lemma 3's domain, or a head generated for the wrong token is
caught; the box arithmetic is sound (hypothesis)."""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmcheck.theory.backends import evaluate
from tmcheck.theory.fast_eval import evaluate_structured
from tmcheck.theory.lemmas.lemma1 import lemma1_network, lemma1_plan, sample_domain
from tmcheck.theory.lemmas.local_eval import Lemma1Local, Theorem2Local, compile_ffn, ffn_box
from tmcheck.theory.lemmas.theorem2 import claim_value, rational, theorem2_network, theorem2_plan
from tmcheck.theory.manifolds import make_manifold
from tmcheck.theory.network import Layer
from tmcheck.theory.sparse import psi_ffn
from tmcheck.theory.targets import parse_target


@functools.cache
def lemma1_case(d: int, N: int):
    plan = lemma1_plan(parse_target("sin(3*x0)*x1" if d > 1 else "x0^2", d), 3, 1, 0.1, N=N)
    return plan, lemma1_network(plan, "exact"), Lemma1Local(plan)


@functools.cache
def theorem2_case(name: str, D: int, target: str, N: int):
    plan = theorem2_plan(make_manifold(name, D), parse_target(target, D), 0.9, N=N, H_f=2.0)
    return plan, theorem2_network(plan, "exact"), Theorem2Local(plan)


def manifold_points(plan, n: int, seed: int = 0) -> np.ndarray:
    X = plan.manifold.sample(n, np.random.default_rng(seed))
    return np.array([[rational(v) for v in x] for x in X], dtype=object)


@pytest.mark.parametrize("d, N", [(1, 3), (1, 6), (2, 3), (2, 4), (3, 2)])
def test_lemma1_local_equals_the_full_network_exactly(d, N):
    plan, net, local = lemma1_case(d, N)
    X = sample_domain(np.random.default_rng(d * 10 + N), 6, d, N)
    full = evaluate(net, X, "exact")
    for x, f in zip(X, full, strict=True):
        res = local.evaluate(x)
        assert res.certified, res.failures
        assert res.value == f  # Fractions: no tolerance
        assert res.l == net.l and res.tokens_chosen < net.l
        assert res.heads == [len(b.heads) for b in net.blocks]  # the partition counts every head of the network


@settings(max_examples=15, deadline=None)
@given(st.lists(st.fractions(min_value=0, max_value=1, max_denominator=97), min_size=2, max_size=2))
def test_lemma1_local_equals_the_full_network_on_any_rational_point(x):
    plan, net, local = lemma1_case(2, 4)
    res = local.evaluate(x)
    assert res.certified and res.value == evaluate(net, np.array([x], dtype=object), "exact")[0]


@pytest.mark.parametrize("N", [3, 4])
def test_theorem2_circle_local_equals_the_full_network_exactly(N):
    """The reference is the realized network's exact structured pass (`fast_eval`: every head's weights, the
    scores Lemma 3 proves zero skipped under a checked M; tested against the dense pass in test_fast_eval)."""
    plan, net, local = theorem2_case("circle", 2, "x0*x1 + x1/2", N)
    X = manifold_points(plan, 4, N)
    full = evaluate_structured(net, X, "exact")
    for x, f in zip(X, full, strict=True):
        res = local.evaluate(x)
        assert res.certified, res.failures
        assert res.value == f == claim_value(plan, x)
        assert res.heads == [len(b.heads) for b in net.blocks] and res.l == net.l


@pytest.mark.slow
@pytest.mark.parametrize("name, D, target", [("sphere", 3, "x0*x1"), ("torus", 4, "x0/2")])
def test_theorem2_sphere_and_torus_local_equal_the_full_network_exactly(name, D, target):
    """The smallest grid (N = 2) is buildable on both (l = 3080 and 9200); its exact output is the reference."""
    plan, net, local = theorem2_case(name, D, target, 2)
    X = manifold_points(plan, 2)
    full = evaluate_structured(net, X, "exact")
    for x, f in zip(X, full, strict=True):
        res = local.evaluate(x)
        assert res.certified, res.failures
        assert res.value == f
        assert res.heads == [len(b.heads) for b in net.blocks]


def test_generated_heads_are_the_built_plans_heads():
    """chart_blocks with a selection (what Theorem2Local reads) gives exactly the heads of the listed plan into
    the chosen tokens, for every kind of token."""
    plan, _, local = theorem2_case("circle", 2, "x0*x1 + x1/2", 4)
    lay = local.lay
    tokens = {lay.x_tokens(3)[1], lay.z_tokens(3)[0], lay.indicator(5), lay.psi_base(5) + 2, lay.prod_base(7) + 1}
    tokens |= {lay.prod_base(7) + lay.F * 2, lay.l - 1}
    generated = local.interactions(tokens)
    for b, blk in enumerate(plan.blocks[:-1]):
        assert sorted(map(repr, generated[b])) == sorted(repr(it) for it in blk.interactions if it.t1 in tokens)


def test_lazy_plan_values_are_the_listed_ones():
    m, target = make_manifold("circle", 2), parse_target("x0*x1 + x1/2", 2)
    listed = theorem2_plan(m, target, 0.9, N=5, H_f=2.0)
    lazy = theorem2_plan(m, target, 0.9, N=5, H_f=2.0, R=1.0, lazy=True)
    assert not lazy.blocks and lazy.R == 1
    for n in range(m.C_M):
        assert [lazy.fvals[n][p] for p in range(5)] == listed.fvals[n]


# --------------------------------------------------------------------------------------------
# the certificate fails when it must


def test_dropping_a_needed_s_token_is_caught():
    """Leave out s_{0,j} with ψ != 0 at x: from both windows its patches' product is only bounded; from the s
    window alone a chosen patch reads a left-out token."""
    plan, net, local = lemma1_case(2, 4)
    x = [Fraction(1, 2), Fraction(3, 5)]
    s_win, p_win = local.windows(x)
    assert len(s_win[0]) == 2
    fewer = ((s_win[0][1],), s_win[1])
    for windows in [(fewer, fewer), (fewer, p_win)]:
        res = local.evaluate(x, windows)
        assert not res.certified and res.value is None, windows
    res = local.evaluate(x, (s_win, fewer))  # the patch left out, its s token kept: the product is only bounded
    assert not res.certified and "only bounded" in res.failures[-1]


def test_dropping_a_needed_patch_of_theorem2_is_caught():
    plan, _, local = theorem2_case("circle", 2, "x0*x1 + x1/2", 4)
    x = manifold_points(plan, 1, 5)[0]
    wins = local.windows(x)
    active = next(n for n, (_, p) in wins.items() if p[0])
    assert local.evaluate(x, wins).certified
    s_win, p_win = wins[active]
    wins[active] = (s_win, (p_win[0][:-1],))
    res = local.evaluate(x, wins)
    assert not res.certified and res.value is None


def test_a_point_outside_lemma3s_domain_is_refused():
    """x = 2 puts row 0 of x's token at 2 > M = 1 at the ψ block: the skipped scores are not proven zero there."""
    _, _, local = lemma1_case(1, 3)
    res = local.evaluate([Fraction(2)])
    assert not res.certified and any("M = 1" in f for f in res.failures)


def test_a_head_generated_for_the_wrong_token_is_caught():
    """A mutant generator that gives one chosen token a head reading a left-out token breaks the closure."""
    plan, _, local = lemma1_case(2, 3)
    real = local.interactions

    def mutant(tokens):
        out = real(tokens)
        it = out[1][0]  # a copy head into a chosen patch slot
        out[1][0] = type(it)(it.t1, plan.layout.psi_base + plan.N - 1, it.row, it.Q_data, it.K_data)
        return out

    local.interactions = mutant
    try:
        res = local.evaluate([Fraction(0), Fraction(0)])
    finally:
        local.interactions = real
    assert not res.certified and any("left out" in f for f in res.failures)


# --------------------------------------------------------------------------------------------
# the boxes


@settings(max_examples=40, deadline=None)
@given(
    st.fractions(min_value=-1, max_value=3, max_denominator=50),
    st.fractions(min_value=0, max_value=1, max_denominator=50),
    st.fractions(min_value=0, max_value=1),
)
def test_ffn_box_holds_every_value_of_its_box(lo, width, where):
    """Soundness: ψ's FFN (ReLUs decided or not on the box) maps every point of the box into the box's image."""
    ffn = compile_ffn(psi_ffn(4))
    box = ((Fraction(0), Fraction(0)), (lo, lo + width))
    out = ffn_box(ffn, box)
    r = lo + where * width
    point = ffn_box(ffn, ((Fraction(0), Fraction(0)), (r, r)))
    assert point[0][0] == point[0][1] and point[1][0] == point[1][1]
    for k in (0, 1):
        assert out[k][0] <= point[k][0] <= out[k][1]


def test_ffn_box_is_exact_where_every_relu_is_decided_and_fails_to_be_where_one_is_not():
    """u = 3(N-1)(r - 1) >= 2 on the whole box: ψ's four ReLUs are active and cancel, so row 0 is exactly 0; a
    box across u = 1 leaves a ReLU undecided and gives an interval of positive width (the certificate's
    failure mode for a dropped token)."""
    ffn = compile_ffn(psi_ffn(4))
    far = ffn_box(ffn, ((Fraction(0), Fraction(0)), (Fraction(3, 2), Fraction(7, 4))))
    assert far == ((0, 0), (0, 0))
    across = ffn_box(ffn, ((Fraction(0), Fraction(0)), (Fraction(1), Fraction(13, 10))))
    assert across[0][0] < across[0][1]


def test_ffn_box_refuses_an_ffn_that_writes_the_fixed_rows():
    W = np.array([[Fraction(0)] * 5 for _ in range(5)], dtype=object)
    W[3, 0] = Fraction(1)
    with pytest.raises(ValueError, match="rows 2-4"):
        compile_ffn((Layer(W, np.array([Fraction(0)] * 5, dtype=object)),))


def test_a_partition_that_misses_tokens_is_caught(monkeypatch):
    """A mutant class size (one patch too few in each class) leaves tokens uncovered: the certificate fails."""
    from tmcheck.theory.lemmas import local_eval

    _, _, local = lemma1_case(2, 3)
    real = local_eval.Grid.patch_class_size
    monkeypatch.setattr(local_eval.Grid, "patch_class_size", lambda g, i: max(real(g, i) - 1, 0))
    res = local.evaluate([Fraction(1, 3), Fraction(1, 5)])
    assert not res.certified and any("cover" in f for f in res.failures)
