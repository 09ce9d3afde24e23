"""Lemma 1 (Appendix E.1) as one network: exactness T = f̂, the partition of unity, error vs ε, resources."""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import independent_eval  # tests/theory/independent_eval.py
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tmcheck.theory import netfile
from tmcheck.theory.backends import evaluate
from tmcheck.theory.check import check_construction
from tmcheck.theory.fast_eval import evaluate_structured
from tmcheck.theory.lemmas.lemma1 import fhat, lemma1, lemma1_network, lemma1_plan
from tmcheck.theory.lemmas.lemma1_report import lemma1_report, resource_table
from tmcheck.theory.network import resources
from tmcheck.theory.sparse import grid_points, psi
from tmcheck.theory.targets import parse_target, tight_error_bound

TARGETS = {1: "sin(3*x0) - x0/2", 2: "sin(3*x0)*x1", 3: "x0*x1 - x2/3"}


@functools.cache
def built(d: int, N: int):
    c = lemma1(parse_target(TARGETS[d], d), 3, 1, 0.5, N=N)
    return c, c.constants["plan"]


def coordinate(N: int):
    # grid points, the boundary, and other rationals of [0, 1]
    return st.one_of(
        st.integers(0, N - 1).map(lambda j: Fraction(j, N - 1)),
        st.sampled_from([Fraction(0), Fraction(1)]),
        st.fractions(min_value=0, max_value=1, max_denominator=60),
    )


@given(st.data())
def test_network_computes_fhat_exactly(data):
    d = data.draw(st.sampled_from([1, 2, 3]))
    N = data.draw(st.sampled_from([2, 3]))
    c, spec = built(d, N)
    X = np.array([[data.draw(coordinate(N)) for _ in range(d)] for _ in range(3)], dtype=object)
    want = [fhat(spec, x) for x in X]
    assert list(evaluate_structured(c.network, X, "exact")) == want
    if c.network.l <= 30:  # the dense exact backend too, which skips nothing
        assert list(evaluate(c.network, X, "exact")) == want


def test_dense_backend_agrees_exactly():
    """The dense evaluator (no skipping) gives the same exact values: fast_eval's skip is sound here."""
    c, spec = built(2, 3)
    X = np.array(
        [[Fraction(0), Fraction(1)], [Fraction(1, 2), Fraction(1, 3)], [Fraction(5, 7), Fraction(1)]], dtype=object
    )
    assert list(evaluate(c.network, X, "exact")) == [fhat(spec, x) for x in X]


@given(st.fractions(min_value=0, max_value=1, max_denominator=200), st.integers(2, 9))
def test_psi_partition_of_unity_and_misprints(x, N):
    ts = grid_points(N)
    assert sum(psi(3 * (N - 1) * (x - t)) for t in ts) == 1
    # the printed middle piece 1 - |u| is not a partition of unity: halfway between grid points it sums to -1
    misprint = lambda u: 1 if abs(u) <= 1 else (1 - abs(u) if abs(u) <= 2 else 0)  # noqa: E731
    mid = Fraction(1, 2 * (N - 1))
    assert sum(misprint(3 * (N - 1) * (mid - t)) for t in ts) == -1
    # eq. (18)'s scale 3N leaves gaps (the sum drops below 1 halfway between grid points)
    assert sum(psi(3 * N * (mid - t)) for t in ts) < 1


@pytest.mark.parametrize(
    "text,d,H,beta,eps",
    [
        ("sin(3*x0)*x1", 2, 3.0, 1.0, 0.2),
        ("x0*x1*x2", 3, 1.8, 1.0, 0.5),
        ("abs(x0-1/3)^(1/2)", 1, 1.0, 0.5, 0.2),
        ("abs(x0-1/3)^(1/2)*x1", 2, 1.5, 0.5, 0.5),
    ],
)
def test_error_within_tight_bound_and_eps(text, d, H, beta, eps):
    rep = lemma1_report(text, d, eps, beta, H, n_points=600)
    assert rep["error"]["max_error"] <= rep["tight_bound"] <= eps


@pytest.mark.parametrize("d,N", [(1, 3), (2, 2), (3, 2), (4, 2), (5, 2)])
def test_resources_counts(d, N):
    spec = lemma1_plan(parse_target("x0", d), 1, 1, 0.5, N=N)
    res = resources(lemma1_network(spec, "float64"))
    assert res.L_T == (math.ceil(math.log2(d)) if d > 1 else 0) + 4
    assert res.m == d * N**d
    assert res.l == d + d * N + d * N**d
    assert (res.L_FFN, res.w_FFN, res.d_embd) == (2, 5, 5)
    rows = {r["quantity"]: r for r in resource_table(spec, lemma1_network(spec, "float64"))}
    assert rows["m"]["ratio"] == 1 and rows["l"]["ratio"] == 1


@pytest.mark.parametrize("d,N", [(1, 4), (2, 2), (3, 2)])
def test_check_construction(d, N):
    c = lemma1(parse_target(TARGETS[d], d), 3, 1, 0.5, N=N)
    rep = check_construction(c, np.random.default_rng(0), n_inputs=4)
    assert rep.ok, rep.as_dict()


@pytest.mark.parametrize("text,d,H,eps", [("x0^2", 1, 2.0, 0.3), ("x0*x1", 2, 1.5, 0.5)])
def test_exported_network_within_eps_by_independent_reader(tmp_path, text, d, H, eps):
    rep = lemma1_report(text, d, eps, 1.0, H, backend="exact", n_points=20)
    path = netfile.save(rep["network"], tmp_path / "l1.json")
    spec_file = independent_eval.load(path)
    f = parse_target(text, d)
    rng = np.random.default_rng(1)
    for x in rng.integers(0, 97, size=(2, d)):
        xq = [Fraction(int(v), 96) for v in x]
        T = independent_eval.evaluate(spec_file, xq)
        assert T == fhat(rep["plan"], xq)  # exact file, exact reader: == the claim
        assert abs(float(T) - f(np.array([[float(v) for v in xq]])).real[0]) <= eps
    assert rep["error"]["max_error"] <= tight_error_bound(d, H, 1.0, rep["N"]) + 2.0**-41 <= eps
