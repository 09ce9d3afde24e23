"""Sup-norm certificates (`theory.certify`, issue #41 item 3): a known answer, soundness against exact values,
counterexamples, refusals, and the mutants each test catches (a cell narrowed without splitting, a candidate
pair dropped from the locality certificate)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmcheck.theory import certify
from tmcheck.theory.certify_arith import Aff, CertifyError, TargetEnclosure
from tmcheck.theory.lemmas.lemma1 import fhat, lemma1_network, lemma1_plan
from tmcheck.theory.targets import parse_target


def small_lemma1(text: str = "x0", d: int = 1, N: int = 5):
    plan = lemma1_plan(parse_target(text, d), 1.0, 1.0, 0.5, N=N)
    return plan, lemma1_network(plan, "exact")


PLAN, NET = small_lemma1()
SUP = Fraction(1, 12)  # f = x0, N = 5: f̂ is flat on |u| <= 1, so the sup of |f̂ - f| is 1/(3(N-1)), at t_n ± 1/12


def check_known_answer() -> None:
    above = certify.certify_lemma1(PLAN, NET, eps=0.09)
    assert above.status == "proven" and SUP <= Fraction(above.bound) <= Fraction(0.09)
    below = certify.certify_lemma1(PLAN, NET, eps=0.08)
    assert below.status == "refuted"
    x = Fraction(below.counterexample[0])
    assert 0.08 < below.error_at_counterexample <= abs(fhat(PLAN, [x]) - x) <= SUP


def test_known_sup_is_proven_above_and_refuted_below():
    check_known_answer()


def narrowing_split(lo, hi):
    """The mutant: the cell is narrowed by a tenth of its width on each side instead of split, so its border is
    never enclosed again."""
    w = tuple((b - a) / 10 for a, b in zip(lo, hi, strict=True))
    return [(tuple(a + e for a, e in zip(lo, w, strict=True)), tuple(b - e for b, e in zip(hi, w, strict=True)))]


def test_a_cell_narrowed_without_splitting_is_caught(monkeypatch):
    monkeypatch.setattr(certify, "split", narrowing_split)
    with pytest.raises(AssertionError):
        check_known_answer()


def test_an_error_above_eps_gets_a_counterexample_not_proven():
    plan, net = small_lemma1("sin(3*x0)*x1", d=2, N=3)  # a coarse grid: error about 0.5
    cert = certify.certify_lemma1(plan, net, eps=0.2, max_cells=4000)
    assert cert.status == "refuted"
    x = [Fraction(v) for v in cert.counterexample]
    assert abs(float(fhat(plan, x)) - float(plan.target(np.array([cert.counterexample])).real[0])) > 0.2


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(0, 47), min_size=2, max_size=2),
    st.integers(1, 8),
    st.lists(st.integers(0, 1000), min_size=2, max_size=2),
)
def test_cell_bounds_contain_the_exact_error(corner, width, where):
    """Soundness: on a random cell of [0,1]^2, |T - f| at a random rational point lies inside the enclosure
    (T exactly: T = f̂ on the domain, checked by the construction's suite; f at 50 digits)."""
    plan, net = SOUND
    lo = [Fraction(c, 48) for c in corner]
    hi = [min(Fraction(1), a + Fraction(width, 48)) for a in lo]
    x = [a + (b - a) * Fraction(w, 1000) for a, b, w in zip(lo, hi, where, strict=True)]
    elo, ehi = ENC.enclose(np.array([[float(v) for v in lo]]), np.array([[float(v) for v in hi]]))
    err = float(fhat(plan, x)) - float(plan.target(np.array([[float(v) for v in x]])).real[0])
    assert elo[0] - 1e-12 <= err <= ehi[0] + 1e-12


SOUND = small_lemma1("sin(3*x0)*x1", d=2, N=4)
ENC = certify.ErrorEnclosure(SOUND[1], SOUND[0].target)


def test_dropping_a_candidate_pair_breaks_soundness(monkeypatch):
    """The locality certificate's pairs are all needed: without the last pair of each head, the enclosure of a
    cell misses T (here T is the f̂ of the construction, computed directly)."""
    real = certify.locality
    monkeypatch.setattr(certify, "locality", lambda *a: (lambda p: p if p is None else p[:1])(real(*a)))
    plan, net = SOUND
    enc = certify.ErrorEnclosure(net, plan.target)
    x = [Fraction(3, 10), Fraction(7, 10)]
    xf = np.array([[0.3, 0.7]])
    elo, ehi = enc.enclose(xf, xf)
    err = float(fhat(plan, x)) - float(plan.target(xf).real[0])
    assert not (elo[0] - 1e-12 <= err <= ehi[0] + 1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=8, max_size=8), st.lists(st.floats(-1, 1), min_size=2, max_size=2))
def test_affine_products_and_relu_contain_the_exact_value(v, e):
    """Aff.mul and Aff.relu against exact rational evaluation at a point e of the cell."""
    a = Aff(np.array([v[0]]), np.array([[v[1]], [v[2]]]), np.array([-abs(v[3])]), np.array([abs(v[3])]))
    b = Aff(np.array([v[4]]), np.array([[v[5]], [v[6]]]), np.array([0.0]), np.array([abs(v[7])]))
    E = [Fraction(x) for x in e]

    def at(f, r=Fraction(0)):
        return Fraction(f.c[0]) + sum(Fraction(g) * x for g, x in zip(f.g[:, 0], E, strict=True)) + r

    va, vb = at(a, Fraction(a.lo[0]) / 2), at(b, Fraction(b.hi[0]) / 3)
    for f, exact in ((a.mul(b), va * vb), (a.relu(), max(va, Fraction(0))), (a.add(b), va + vb)):
        lo, hi = f.bounds()
        assert Fraction(lo[0]) <= exact <= Fraction(hi[0])


def test_targets_without_a_sound_enclosure_are_refused():
    with pytest.raises(CertifyError, match="floor"):
        TargetEnclosure(parse_target("floor(x0)", 1))


def test_a_head_of_another_shape_is_refused():
    plan, net = small_lemma1()
    blk = net.blocks[0]
    h = blk.heads[0]
    Q = h.Q.copy()
    Q[2, 4] = Fraction(1)  # a cross term between the interaction rows and the constant
    net.blocks[0] = type(blk)((type(h)(Q, h.K, h.V),) + blk.heads[1:], blk.ffn)
    with pytest.raises(CertifyError, match="neither an interaction head"):
        certify.prepare_certificate(net)
