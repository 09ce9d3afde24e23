"""The derived float64 error bound (theory/float_error.py): it holds on every construction, it is small enough
to see a 1e-6 error, and the conformance check fails when a float64 output is off by 1e-6."""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np
import pytest

from tmcheck.theory import check, float_error
from tmcheck.theory.check import check_construction
from tmcheck.theory.lemmas.addition import addition
from tmcheck.theory.lemmas.gating import gating
from tmcheck.theory.lemmas.interaction import interaction
from tmcheck.theory.lemmas.lemma1 import lemma1
from tmcheck.theory.lemmas.parallel import parallelize
from tmcheck.theory.lemmas.theorem2 import theorem2
from tmcheck.theory.manifolds import make_manifold
from tmcheck.theory.targets import parse_target

Q3 = [[1, 0, 0, 0, 0], [0, 1, 0, 0, 1]]
K3 = [[0, 1, 0, 0, 0], [1, 0, 0, 0, 0]]

CASES = {
    "lemma3": lambda: interaction(8, 2, 6, 1, Q3, K3, Fraction(2)),
    "lemma4": lambda: gating(12, 5, "suffix", 2),
    "lemma5": lambda: addition([Fraction(1, 2), Fraction(-1, 3)], 2),
    "lemma7": lambda: parallelize(gating(6, 3, "prefix", 2), addition([Fraction(1, 2)] * 3, 2)),
    "lemma1_d1": lambda: lemma1(parse_target("sin(3*x0)", 1), 3, 1, 0.5, N=5),
    "lemma1_d2": lambda: lemma1(parse_target("x0*x1 + x0/4", 2), 2, 1, 0.5, N=3),
    "theorem2_circle": lambda: theorem2(make_manifold("circle", 2), parse_target("x0/2", 2), 0.5, N=3),
}


@functools.cache
def built(name):
    return CASES[name]()


def _float_and_exact(c, n=4, seed=0):
    H = c.sample_inputs(np.random.default_rng(seed), n)
    ex = np.asarray(check._run(c.network, H, "exact"), dtype=object).astype(np.float64)
    fl = check._run(c.network, H, "float64")
    return H, fl, ex


@pytest.mark.parametrize("name", list(CASES))
def test_a_priori_bound_holds(name):
    c = built(name)
    H, fl, ex = _float_and_exact(c)
    values, tol = float_error.bound(c.network, c.network.blocks, H)
    assert np.all(np.abs(fl - ex) <= tol)
    assert np.all(np.abs(values - ex) <= tol)  # the bound's own float64 pass (another order) obeys it too
    if name != "theorem2_circle":  # Theorem 2's deep indicator amplifies the a priori bound by 2^L
        r, col = c.network.decoder
        assert np.max(tol[:, r, col]) < 1e-6, "the bound is too loose to see a 1e-6 error at the output"


@pytest.mark.parametrize("name", list(CASES))
def test_blockwise_bounds_hold_and_see_1e_6(name):
    c = built(name)
    H = c.sample_inputs(np.random.default_rng(2), 3)
    rows = float_error.blockwise(
        c.network, c.network.blocks, check._run(c.network, H, "float64", True), check._run(c.network, H, "exact", True)
    )
    assert all(r["ok"] for r in rows), rows
    assert rows[-1]["max_bound"] < 1e-6


def _perturb_output(monkeypatch, eps=1e-6):
    run = check._run

    def perturbed(net, H, backend, trace=False):
        out = run(net, H, backend, trace)
        if backend != "float64":
            return out
        states = list(out) if trace else [out]
        last = np.array(states[-1], dtype=np.float64)
        r, col = net.decoder
        last[:, r, col] += eps
        states[-1] = last
        return states if trace else last

    monkeypatch.setattr(check, "_run", perturbed)


@pytest.mark.parametrize("name", list(CASES))
def test_check_fails_on_a_float_output_off_by_1e_6(name, monkeypatch):
    c = built(name)
    assert check_construction(c, np.random.default_rng(1), n_inputs=3).results["backends"][0]
    _perturb_output(monkeypatch)
    passed, detail = check_construction(c, np.random.default_rng(1), n_inputs=3).results["backends"]
    assert not passed, detail


def test_gamma_and_a_sum_in_any_order():
    """γ_n bounds the rounding of a sum of n products in any order (Higham 3.5): checked on a bad sum."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(500) * 10.0 ** rng.integers(-8, 8, 500)
    b = rng.standard_normal(500)
    exact = sum(Fraction(float(x)) * Fraction(float(y)) for x, y in zip(a, b, strict=True))
    for order in (np.arange(500), np.argsort(np.abs(a * b)), rng.permutation(500)):
        s = 0.0
        for i in order:
            s += a[i] * b[i]
        assert abs(Fraction(s) - exact) <= Fraction(float_error.gamma(501)) * sum(
            abs(Fraction(float(x)) * Fraction(float(y))) for x, y in zip(a, b, strict=True)
        )
