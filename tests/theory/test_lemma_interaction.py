"""Interaction Lemma (Appendix G, Lemma 3): exact sparsity, exact minimal C and its tightness, float64 range."""

from __future__ import annotations

from fractions import Fraction

import independent_eval  # tests/theory/independent_eval.py
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmcheck.theory import netfile
from tmcheck.theory.backends import run_blocks
from tmcheck.theory.heads import (
    _diag_max,
    _kernel,
    critical_input,
    data_kernels,
    interaction_head,
    kappa_data,
    minimal_C,
    pair_threshold,
    paper_C,
    threshold,
)
from tmcheck.theory.lemmas.interaction import float_error, interaction, largest_float_l
from tmcheck.theory.network import Block, structured_positional

entries = st.fractions(min_value=-2, max_value=2, max_denominator=4)
kernel = st.lists(st.lists(entries, min_size=5, max_size=5), min_size=2, max_size=2)
bounds = st.sampled_from([Fraction(1), Fraction(3, 2), Fraction(2), Fraction(3)])


@st.composite
def heads(draw, max_l=16):
    l = draw(st.integers(1, max_l))
    pick = st.one_of(st.sampled_from([0, l - 1]), st.integers(0, l - 1))  # first and last tokens often
    t1 = draw(pick)
    t2 = draw(st.one_of(st.just(t1), pick))  # t1 = t2 often
    return l, t1, t2, draw(st.integers(0, 1)), draw(kernel), draw(kernel), draw(bounds)


def _run(c, H):
    return run_blocks(c.blocks, H, "exact")


@given(heads(), st.integers(0, 2**32 - 1))
def test_head_is_exact_and_sparse(case, seed):
    l, t1, t2, row, Q, K, M = case
    c = interaction(l, t1, t2, row, Q, K, M)
    H = c.sample_inputs(np.random.default_rng(seed), 6)
    out = _run(c, H)
    assert (out == c.expected(H)).all()
    diff = out - H
    others = [(r, t) for r in range(5) for t in range(l) if (r, t) != (row, t1)]
    assert all((diff[:, r, t] == 0).all() for r, t in others)  # A(h_t) = 0 for t != t1, other rows untouched
    b = (np.array(Q, dtype=object) @ H[:, :, t1].T).T * (np.array(K, dtype=object) @ H[:, :, t2].T).T
    assert list(diff[:, row, t1]) == [max(Fraction(0), v) for v in b.sum(axis=1)]


@settings(max_examples=6)
@given(st.sampled_from([128, 200, 256]), st.data())
def test_long_sequences_up_to_256(l, data):
    t1 = data.draw(st.sampled_from([0, l - 1, l // 2]))
    t2 = data.draw(st.sampled_from([0, l - 1, t1, 7]))
    Q, K = [[1, 0, 0, 0, 0], [0, 1, 0, 0, 1]], [[0, 1, 0, 0, 0], [1, 0, 0, 0, Fraction(1, 2)]]
    c = interaction(l, t1, t2, 0, Q, K, 2)
    H = c.sample_inputs(np.random.default_rng(l + t1 + t2), 4)
    assert (_run(c, H) == c.expected(H)).all()


@settings(max_examples=25)
@given(heads(max_l=6))
def test_threshold_equals_pairwise_brute_force(case):
    l, t1, t2, _, Q, K, M = case
    brute = max(
        [pair_threshold(l, t1, t2, Q, K, M, t, k) for t in range(l) for k in range(l) if (t, k) != (t1, t2)],
        default=Fraction(0),
    )
    assert threshold(l, t1, t2, Q, K, M).C == brute


@settings(max_examples=25)
@given(heads(max_l=10))
def test_threshold_is_tight(case):
    l, t1, t2, row, Q, K, M = case
    th = threshold(l, t1, t2, Q, K, M)
    H = critical_input(l, t1, t2, Q, K, M)
    if th.C == 0:
        assert H is None
        return
    assert np.abs(H[:, 0:2]).max() <= M
    c = interaction(l, t1, t2, row, Q, K, M)
    assert (_run(c, H) == c.expected(H)).all()
    below = interaction_head(l, t1, t2, row, Q, K, th.C * (1 - Fraction(1, 10**6)))
    leak = run_blocks([Block((below,))], H, "exact")
    assert (leak != c.expected(H)).any()  # slightly below C* the head leaks on the critical input


@settings(max_examples=20)
@given(heads(max_l=12))
def test_minimal_C_below_paper_C(case):
    l, t1, t2, _, Q, K, M = case
    assert threshold(l, t1, t2, Q, K, M).C <= paper_C(l, kappa_data(Q, K), M)


@settings(max_examples=15)
@given(heads(max_l=5))
def test_uniform_minimal_C_is_the_max_over_heads(case):
    l, _, _, _, Q, K, M = case
    per_pair = [minimal_C(l, Q, K, M, t1=a, t2=b) for a in range(l) for b in range(l)]
    assert minimal_C(l, Q, K, M) == max(per_pair)


def test_paper_C_formula():
    # 16 d^4 κ^2 M^2 l^2 / π^2 with d = 5, κ = 1, M = 2, l = 10: 16 * 625 * 4 * 100 / π^2
    assert abs(float(paper_C(10, 1, 2)) - 16 * 625 * 4 * 100 / np.pi**2) < 1e-6 * 16 * 625 * 400
    assert paper_C(10, 1, 2) >= Fraction(16 * 625 * 4 * 100) / Fraction(np.pi**2 + 1e-12)


def test_bad_arguments():
    Q, K = [[1, 0, 0, 0, 0], [0, 1, 0, 0, 1]], [[0, 1, 0, 0, 0], [1, 0, 0, 0, 0]]
    with pytest.raises(ValueError, match="outside"):
        interaction(4, 4, 0, 0, Q, K, 2)
    with pytest.raises(ValueError, match="data row"):
        interaction(4, 0, 1, 3, Q, K, 2)
    with pytest.raises(ValueError, match="M must be"):
        interaction(4, 0, 1, 0, Q, K, Fraction(1, 2))
    with pytest.raises(ValueError):
        interaction(4, 0, 1, 0, [[1, 2]], K, 2)


def test_float64_sinusoidal_holds_at_128_and_not_at_1024():
    Q, K = [[1, 0, 0, 0, 0], [0, 1, 0, 0, 1]], [[0, 1, 0, 0, 0], [1, 0, 0, 0, 0]]
    errs = {}
    for l in (128, 1024):
        t1, t2 = l // 3, 2 * l // 3
        C = threshold(l, t1, t2, Q, K, 2.0, "float64").C
        errs[l] = float_error(l, t1, t2, Q, K, 2, C, np.random.default_rng(0))
    assert errs[128] <= 1e-9 < errs[1024]


def test_exported_head_is_sparse_under_independent_evaluator(tmp_path):
    Q, K = [[1, 0, 0, 0, 0], [0, 1, 0, 0, 1]], [[0, 1, 0, 0, 0], [1, 0, 0, 0, Fraction(1, 2)]]
    l, t1, t2, row = 9, 6, 2, 1
    c = interaction(l, t1, t2, row, Q, K, 2)
    spec = independent_eval.load(netfile.save(c.network, tmp_path / "head.json"))
    rng = np.random.default_rng(1)
    for _ in range(5):
        x = [Fraction(int(v), 8) for v in rng.integers(-16, 17, size=l)]  # embedding: h_t = (x_t, 0, I_t, 1)
        H = independent_eval.evaluate(spec, [str(v) for v in x], hidden=True)
        H0 = c.network.PE.T.copy()
        H0[:, 0] = x
        b = x[t2] + Fraction(1, 2)  # Q h_t1 = (x_t1, 1), K h_t2 = (0, x_t2 + 1/2): row 1 of every h is 0
        for t in range(l):
            want = list(H0[t])
            if t == t1:
                want[row] += max(Fraction(0), b)
            assert H[t] == want


@pytest.mark.slow
def test_largest_float_l_matches_the_benchmark():
    Q, K = [[1, 0, 0, 0, 0], [0, 1, 0, 0, 1]], [[0, 1, 0, 0, 0], [1, 0, 0, 0, 0]]
    minimal, paper = largest_float_l(Q, K, 2, which="minimal"), largest_float_l(Q, K, 2, which="paper")
    assert (minimal["l"], minimal["first_bad"]) == (939, 940) and (paper["l"], paper["first_bad"]) == (65, 66)


@given(kernel, kernel, bounds, st.integers(0, 7))
def test_diag_max_against_a_grid(Q, K, M, t):
    G = _kernel(*data_kernels(Q, K))
    p = structured_positional(8, "exact")[2:5, t]
    val, x = _diag_max(G, p, M)

    def q(x0, x1):
        h = np.array([x0, x1, *p], dtype=object)
        return h @ G @ h

    assert all(abs(v) <= M for v in x) and q(*x) == val
    grid = [M * Fraction(i, 8) for i in range(-8, 9)]
    assert max(q(a, b) for a in grid for b in grid) <= val
