"""The conformance suite: every lemma construction passes and names its network; broken constructions fail the right
property."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np
import pytest

from tmcheck.theory.check import PROPERTIES, ConstructionCheckError, check_construction
from tmcheck.theory.lemmas import standalone_network
from tmcheck.theory.lemmas.addition import addition
from tmcheck.theory.lemmas.gating import gating
from tmcheck.theory.lemmas.interaction import interaction
from tmcheck.theory.lemmas.parallel import parallelize
from tmcheck.theory.lemmas.replace import replace
from tmcheck.theory.network import Block, Head, zeros

Q, K = [[1, 0, 0, 0, 0], [0, 1, 0, 0, 1]], [[0, 1, 0, 0, 0], [1, 0, 0, 0, 0]]


def all_constructions():
    i = interaction(12, 0, 11, 1, Q, K, 2)
    g = gating(9, 4, "suffix", 3)
    a = addition([Fraction(1, 3), -1], 2)
    r = replace(5, 2)
    return [i, g, gating(7, 7, "prefix", 1), a, r, parallelize(i, g), parallelize(a, parallelize(r, g))]


@pytest.mark.parametrize("c", all_constructions(), ids=lambda c: c.name)
def test_every_lemma_passes(c):
    rep = check_construction(c, np.random.default_rng(0), n_inputs=8).raise_on_failure()
    assert set(rep.results) == set(PROPERTIES) and rep.ok


def test_network_meta_names_its_construction():
    """An exported network's meta name is the construction's name (its prefix for parametrised names)."""
    for c in all_constructions():
        assert c.network.meta["name"].startswith("lemma")
        assert c.name.startswith(c.network.meta["name"]), (c.name, c.network.meta)


def test_too_small_C_fails_exact():
    c = interaction(8, 1, 6, 0, Q, K, 2, C=1)
    rep = check_construction(c, np.random.default_rng(0), n_inputs=4)
    assert rep.failed == ["exact"]
    with pytest.raises(ConstructionCheckError, match="exact"):
        rep.raise_on_failure()


def test_writing_an_immutable_row_fails():
    c = interaction(6, 1, 2, 0, Q, K, 2)
    h = c.blocks[0].heads[0]
    V = zeros((5, 5), "exact")
    V[3, 4] = Fraction(1)  # the head now writes into row 3 (the interaction vector)
    bad_net = standalone_network(6, [Block((Head(h.Q, h.K, V),))], {})
    bad = dataclasses.replace(c, network=bad_net)
    rep = check_construction(bad, np.random.default_rng(0), n_inputs=4)
    assert "immutable_rows" in rep.failed and "exact" in rep.failed


def test_kappa_and_resources_fail_when_overstated():
    c = gating(8, 4, "prefix", 2)
    bad = dataclasses.replace(
        c, stated_kappa_bound=Fraction(1, 2), stated_resources={"L_T": 1, "m": 0, "L_FFN": 1, "l": 8}
    )
    rep = check_construction(bad, np.random.default_rng(0), n_inputs=4)
    assert set(rep.failed) == {"kappa", "resources"}


def test_wrong_shape_is_reported():
    c = replace(4, 2)
    bad = dataclasses.replace(c, sample_inputs=lambda rng, n: c.sample_inputs(rng, n)[:, :, :3])
    rep = check_construction(bad, np.random.default_rng(0), n_inputs=2)
    assert rep.failed == ["shapes"]


def test_backend_disagreement_is_reported(monkeypatch):
    import tmcheck.theory.check as check

    real = check.run_blocks

    def skewed(blocks, H, backend, trace=False):
        out = real(blocks, H, backend, trace)
        if backend != "float64":
            return out
        return [out[0]] + [s + 1e-3 for s in out[1:]] if trace else out + 1e-3

    monkeypatch.setattr(check, "run_blocks", skewed)
    rep = check_construction(replace(4, 2), np.random.default_rng(0), n_inputs=2)
    assert rep.failed == ["backends"]
