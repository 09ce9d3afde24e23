"""Parallelisation (Appendix G, Lemma 7, corrected) on randomly composed blocks of Lemmas 3-6, and the output bound
of an FFN it sizes C with, sound and tight where an oracle's brute-force sup is exact."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmcheck.theory.backends import run_blocks
from tmcheck.theory.check import check_construction
from tmcheck.theory.heads import critical_input, interaction_head
from tmcheck.theory.lemmas.addition import addition
from tmcheck.theory.lemmas.gating import gating
from tmcheck.theory.lemmas.interaction import interaction
from tmcheck.theory.lemmas.parallel import output_bound, parallelize
from tmcheck.theory.lemmas.replace import replace
from tmcheck.theory.network import Block, Layer

Q, K = [[1, 0, 0, 0, 0], [0, 1, 0, 0, 1]], [[0, 1, 0, 0, 0], [1, 0, 0, 0, 0]]


@st.composite
def blocks(draw):
    kind = draw(st.sampled_from(["interaction", "gating", "addition", "replace"]))
    l = draw(st.integers(2, 7))
    M = draw(st.sampled_from([Fraction(1), Fraction(2), Fraction(3)]))
    if kind == "interaction":
        return interaction(
            l, draw(st.integers(0, l - 1)), draw(st.integers(0, l - 1)), draw(st.integers(0, 1)), Q, K, M
        )
    if kind == "gating":
        return gating(l, draw(st.integers(0, l)), draw(st.sampled_from(["prefix", "suffix"])), M)
    if kind == "addition":
        D = max(1, l // 2)
        return addition([Fraction(draw(st.integers(-2, 2)), 2) for _ in range(D)], 2 * M)
    return replace(l, M)


@settings(max_examples=25)
@given(blocks(), blocks(), st.integers(0, 2**32 - 1))
def test_parallel_of_random_blocks(c1, c2, seed):
    c = parallelize(c1, c2)
    rep = check_construction(c, np.random.default_rng(seed), n_inputs=4, backends=("exact",))
    assert rep.ok, rep.results
    r, r1, r2 = c.resources(), c1.resources(), c2.resources()
    assert r.m == r1.m + r2.m and r.L_FFN <= max(r1.L_FFN, r2.L_FFN) + 2 and r.l == r1.l + r2.l


@settings(max_examples=8)
@given(blocks(), blocks(), blocks(), st.integers(0, 2**32 - 1))
def test_nested_parallel(c1, c2, c3, seed):
    c = parallelize(c1, parallelize(c2, c3))
    assert check_construction(c, np.random.default_rng(seed), n_inputs=3, backends=("exact",)).ok


def test_keeping_old_C_leaks():
    c1 = interaction(8, 2, 5, 0, Q, K, 2)
    l = 16
    H = critical_input(l, 2, 5, Q, K, 2)
    old = interaction_head(l, 2, 5, 0, Q, K, c1.constants["C_min"])
    par = parallelize(c1, replace(8, 2))
    assert (run_blocks([Block((old,))], H, "exact") != interaction(l, 2, 5, 0, Q, K, 2).expected(H)).any()
    assert (run_blocks(par.blocks, H, "exact")[:, :, :8] == par.expected(H)[:, :, :8]).all()


def test_output_bound_is_sound():
    layers = gating(6, 3, "prefix", 2).blocks[0].ffn
    Y = output_bound(layers, 2)
    H = gating(6, 3, "prefix", 2).sample_inputs(np.random.default_rng(0), 30)
    out = run_blocks([Block((), layers)], H, "exact") - H
    assert all(np.abs(out[:, r]).max() <= Y[r] for r in range(5))
    assert Y[2:] == [0, 0, 0]


def test_rejects_multi_block():
    c = replace(3, 1)
    c.network.blocks = c.network.blocks * 2
    with pytest.raises(ValueError, match="single blocks"):
        parallelize(c, replace(3, 1))


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
