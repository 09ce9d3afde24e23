"""What a Construction states (theory/construction.py) and holds: its stated resources use the names
check_construction compares (a misspelt one is refused at construction, instead of silently dropping that claim from
the check) and are the lemmas' counts; an exact construction's networks and FFNs hold only exact numbers."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np
import pytest

from tmcheck.theory.construction import STATED_RESOURCES
from tmcheck.theory.lemmas.addition import addition, shift_ffn
from tmcheck.theory.lemmas.gating import gating, gating_ffn
from tmcheck.theory.lemmas.interaction import interaction
from tmcheck.theory.lemmas.parallel import parallel_ffn
from tmcheck.theory.lemmas.replace import replace, replace_ffn


def test_stated_resources_are_the_lemmas_counts():
    """Lemma 3: one block, one head, no FFN; Lemma 6: one block, no head, one affine layer; both on l tokens.
    Every checked resource is stated, and the measured network has exactly these counts."""
    Q, K = [[1, 0, 0, 0, 0], [0, 1, 0, 0, 1]], [[0, 1, 0, 0, 0], [1, 0, 0, 0, 0]]
    cases = [
        (interaction(5, 1, 3, 0, Q, K, 2), dict(L_T=1, m=1, L_FFN=0, l=5)),
        (replace(4, 2), dict(L_T=1, m=0, L_FFN=1, l=4)),
    ]
    for c, want in cases:
        assert c.stated_resources == want
        assert set(c.stated_resources) == set(STATED_RESOURCES)
        res = c.resources()
        assert {k: getattr(res, k) for k in want} == want


def test_every_lemma_states_only_checked_resources():
    c = replace(4, Fraction(2))
    assert set(c.stated_resources) <= set(STATED_RESOURCES) and c.stated_resources["m"] == 0


@pytest.mark.parametrize("bad", ["M", "l_ffn", "L", "kappa"])
def test_a_misspelt_resource_is_refused(bad):
    c = replace(4, Fraction(2))
    stated = {**{k: v for k, v in c.stated_resources.items() if k.lower() != bad.lower()}, bad: 1}
    with pytest.raises(ValueError, match="stated_resources"):
        dataclasses.replace(c, stated_resources=stated)


def _ffn_entries(layers):
    for layer in layers:
        yield from (v for M in (layer.W, layer.b) for v in np.asarray(M).ravel())


def _entries(net):
    for blk in net.blocks:
        for h in blk.heads:
            yield from (v for M in (h.Q, h.K, h.V) for v in np.asarray(M).ravel())
        yield from _ffn_entries(blk.ffn)


@pytest.mark.parametrize(
    "build",
    [
        lambda: replace(4, Fraction(2)),
        lambda: gating(4, 2, "prefix", Fraction(2)),
        lambda: addition([Fraction(1, 4), Fraction(-1)], Fraction(2)),
        lambda: interaction(4, 1, 2, 0, [[1, 0, 0, 0, 0]] * 2, [[0, 1, 0, 0, 0]] * 2, Fraction(2)),
    ],
)
def test_exact_networks_hold_only_exact_numbers(build):
    """An exact construction's weights are Fractions or ints: a float among them (1.0 where Fraction(1) was
    meant) would pass every == check against the exact claim while the arithmetic is no longer exact."""
    net = build().network
    assert net.arithmetic == "exact"
    inexact = lambda n: [v for v in _entries(n) if not isinstance(v, (Fraction, int, np.integer))]  # noqa: E731
    assert not inexact(net), inexact(net)[:3]
    # mutation: one weight turned into the float it equals is found
    W = net.blocks[-1].ffn[0].W if net.blocks[-1].ffn else net.blocks[-1].heads[0].Q
    W[np.unravel_index(0, W.shape)] = float(W[np.unravel_index(0, W.shape)])
    assert len(inexact(net)) == 1


def test_exact_ffns_hold_only_fractions():
    """In exact arithmetic every weight is a Fraction (not even an int): Lemma 4's gating FFN (biases included),
    Lemma 5's shift FFN (its ±1 output weights), Lemma 6's FFN by default, and Lemma 7's parallel FFN (its output
    layer)."""

    def fractions_only(layers):
        return all(type(v) is Fraction for v in _ffn_entries(layers))

    assert fractions_only(gating_ffn(5, 2, "prefix", 2, "exact"))
    assert fractions_only(gating_ffn(5, 2, "suffix"))
    assert fractions_only(shift_ffn(4, 2, 3, "exact"))
    assert fractions_only(replace_ffn())
    assert fractions_only(parallel_ffn(6, 3, replace_ffn(), gating_ffn(6, 4, "prefix", 2), 2))
