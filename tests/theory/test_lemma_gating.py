"""Gating FFNs (Appendix G, Lemma 4, corrected): exact on both variants, tight C, paper's FFN fails."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tmcheck.proofs_check.lemma4 import paper_gating_ffn
from tmcheck.theory.backends import run_blocks
from tmcheck.theory.lemmas import sample_structured
from tmcheck.theory.lemmas.gating import gating, gating_C, gating_ffn, paper_kappa_bound, pivot
from tmcheck.theory.network import Block, interaction_vectors


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
