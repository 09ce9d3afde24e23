"""Lemma 7's checks (proofs_check/lemma7.py, Appendix G): statement's random blocks cover what Lemmas 3-6 allow,
edges included: gating cuts at 0 and at l, addition vectors with negative entries, quarter steps and the ±1 ends,
D = 1, and heads at every token. A sampler that lost an edge (a cut range shifted by one, non-negative vectors only, a
minimum D of 2) fails here, while the statement's own verdict would not notice: it draws only 14 blocks. And the
width bound counts no written rows for a block without an FFN."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tmcheck.proofs_check import lemma7
from tmcheck.proofs_check.lemma7 import _one
from tmcheck.theory.lemmas.addition import addition
from tmcheck.theory.lemmas.gating import gating
from tmcheck.theory.lemmas.interaction import interaction
from tmcheck.theory.lemmas.replace import replace


def test_the_block_sampler_reaches_every_edge():
    rng = np.random.default_rng(11)
    blocks = [_one(rng) for _ in range(600)]
    cuts = {(int(b.constants["t_cut"]), b.network.l) for b in blocks if b.name.startswith("lemma4.gating")}
    assert any(t == 0 for t, _ in cuts) and any(t == l for t, l in cuts) and any(t == l - 1 for t, l in cuts)
    adds = [b.constants for b in blocks if b.name == "lemma5.addition"]
    entries = [Fraction(v) for a in adds for v in a["c"]]
    assert any(v < 0 for v in entries) and {Fraction(-1), Fraction(1)} <= set(entries)
    assert all((4 * v).denominator == 1 for v in entries)  # quarter steps
    assert any(int(a["D"]) == 1 for a in adds)
    kinds = {b.name.split(".")[0] for b in blocks}
    assert kinds == {"lemma3", "lemma4", "lemma5", "lemma6"}


def test_rows_written_counts_none_for_a_block_without_ffn():
    """A Lemma 3 head has no FFN: it writes no row through one (the width bound then adds 2(0 + 1)). The gate of
    Lemma 4 writes the two data rows, Lemmas 5 and 6 one row each."""
    head = interaction(4, 1, 2, 0, lemma7.Q, lemma7.K, lemma7.M)
    assert all(not b.ffn for b in head.blocks)
    assert lemma7._rows_written(head) == 0
    assert lemma7._rows_written(gating(4, 2, "prefix", lemma7.M)) == 2
    assert lemma7._rows_written(addition([Fraction(1, 2), Fraction(-1)], lemma7.M)) == 1
    assert lemma7._rows_written(replace(4, lemma7.M)) == 1
