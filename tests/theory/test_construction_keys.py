"""A Construction's stated resources use the names check_construction compares: a misspelt one is refused at
construction, instead of silently dropping that claim from the check."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np
import pytest

from tmcheck.theory.construction import STATED_RESOURCES
from tmcheck.theory.lemmas.addition import addition
from tmcheck.theory.lemmas.gating import gating
from tmcheck.theory.lemmas.interaction import interaction
from tmcheck.theory.lemmas.replace import replace


def test_every_lemma_states_only_checked_resources():
    c = replace(4, Fraction(2))
    assert set(c.stated_resources) <= set(STATED_RESOURCES) and c.stated_resources["m"] == 0


@pytest.mark.parametrize("bad", ["M", "l_ffn", "L", "kappa"])
def test_a_misspelt_resource_is_refused(bad):
    c = replace(4, Fraction(2))
    stated = {**{k: v for k, v in c.stated_resources.items() if k.lower() != bad.lower()}, bad: 1}
    with pytest.raises(ValueError, match="stated_resources"):
        dataclasses.replace(c, stated_resources=stated)


def _entries(net):
    for blk in net.blocks:
        for h in blk.heads:
            yield from (v for M in (h.Q, h.K, h.V) for v in np.asarray(M).ravel())
        for layer in blk.ffn:
            yield from (v for M in (layer.W, layer.b) for v in np.asarray(M).ravel())


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
