"""lemma7.statement's random blocks cover what Lemmas 3-6 allow, edges included: gating cuts at 0 and at l,
addition vectors with negative entries, quarter steps and the ±1 ends, D = 1, and heads at every token. A sampler
that lost an edge (a cut range shifted by one, non-negative vectors only, a minimum D of 2) fails here, while the
statement's own verdict would not notice: it draws only 14 blocks."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tmcheck.proofs_check.lemma7 import _one


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
