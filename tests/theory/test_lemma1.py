"""Lemma 1 (Appendix E.1) as one network and its report (`tmcheck lemma 1`, Section 2.4): exactness T = f̂, the
partition of unity, error vs ε, resources and the sum block's domain; the report's printed formulas against their
values, the sample the error is measured on, and the arguments it passes through."""

from __future__ import annotations

import dataclasses
import functools
import math
from fractions import Fraction

import independent_eval  # tests/theory/independent_eval.py
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from printed_formula import formula  # tests/theory/printed_formula.py

from tmcheck.theory import netfile
from tmcheck.theory import spec as resources_spec
from tmcheck.theory.backends import evaluate
from tmcheck.theory.check import check_construction
from tmcheck.theory.fast_eval import evaluate_structured, run_structured
from tmcheck.theory.lemmas.lemma1 import fhat, lemma1, lemma1_network, lemma1_plan
from tmcheck.theory.lemmas.lemma1_report import growth_table, lemma1_report, measure_error, resource_table
from tmcheck.theory.network import NetworkError, resources, structured_positional
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


def test_sum_block_guard_is_2R():
    """The sum block reads row 1 = φ_n f_n + R in [0, 2R] (|f_n| <= R, φ_n in [0, 1]): its domain bound M is
    max(1, 2R), so a token with row 1 = 2R passes and one with 5R/2 is refused."""
    plan = lemma1_plan(parse_target("x0", 1), 1.0, 1.0, 0.25, R=2)
    net = lemma1_network(plan, "exact")
    pattern = net.meta["interaction_pattern"]
    assert pattern[-1]["name"] == "sum" and Fraction(pattern[-1]["M"]) == 4
    last = dataclasses.replace(net, blocks=net.blocks[-1:], meta={**net.meta, "interaction_pattern": pattern[-1:]})
    for value, ok in ((Fraction(4), True), (Fraction(5), False)):
        H = np.empty((1, 5, net.l), dtype=object)
        H[:] = structured_positional(net.l, "exact")
        H[0, 0, :] = Fraction(0)
        H[0, 1, :] = Fraction(0)
        H[0, 1, plan.layout.prod_base] = value
        if ok:
            run_structured(last, H, "exact")
        else:
            with pytest.raises(NetworkError, match="> M = 4"):
                run_structured(last, H, "exact")


# --------------------------------------------------------------------------------------------
# the report (theory/lemmas/lemma1_report.py)

RESOURCE_OF = {"L_T": "L_T", "L_FFN": "L_FFN", "kappa": "kappa_blocks", "l": "l", "m": "m"}


def _plan_net(text, d, eps, beta):
    plan = lemma1_plan(parse_target(text, d), 1.0, beta, eps)
    return plan, lemma1_network(plan, "exact")


@pytest.fixture(scope="module")
def x0_net():
    """f(x) = x on [0, 1] (H_f = 1, β = 1) at ε = 1/4: the tight grid has N = 4."""
    return _plan_net("x0", 1, 0.25, 1.0)


def test_resource_table_formulas_are_their_values(x0_net):
    """Each O(·) row's value is its printed formula at the plan's d, ε, β, and each row of the paper's forms
    is compared with the measured resource its label names."""
    plan, net = x0_net
    for p, n in ((plan, net), _plan_net("x0*x1", 2, 0.5, 1.0)):
        res = resources(n)
        rows = resource_table(p, n, res)
        o_rows = [r for r in rows if r["quantity"].endswith("/ O(·)")]
        assert [r["quantity"] for r in o_rows] == ["l / O(·)", "m / O(·)", "kappa / O(·)"]
        for r in o_rows:
            value = formula(r["formula"]).subs({"d": p.d, "eps": p.eps, "beta": p.beta})
            assert value.is_number and math.isclose(float(value), r["value"], rel_tol=1e-12), r
        for r in rows[6:]:  # after the spec's six rows, the paper's forms
            name = r["quantity"].split()[0]
            assert r["measured"] == float(getattr(res, RESOURCE_OF[name])), r


def test_measure_error_grid_density(x0_net):
    """The sample: 2^d corners, a grid of min(65, round((4n)^{1/d})) points per axis (about 4n points), n uniform
    points; d = 1 and n = 2000 make 2 + 65 + 2000 points, n = 10 make 2 + 40 + 10."""
    plan, net = x0_net
    for n, per_axis in ((2000, 65), (10, 40)):
        got = measure_error(plan, net, n, "float64", np.random.default_rng(0))
        assert got["n_points"] == 2 + per_axis + n


def test_measure_error_argmax_attains_the_error(x0_net):
    """The reported point is where the reported error is attained: |T(x) - f(x)| there is max_error."""
    plan, net = x0_net
    got = measure_error(plan, net, 300, "float64", np.random.default_rng(1))
    x = np.array([got["argmax"]])
    err = abs(evaluate_structured(net, x, "float64")[0] - x[0, 0])
    assert err == got["max_error"]


def test_measure_error_exact_rounds_points_to_six_digit_denominators(x0_net):
    """With the exact backend the points are rationals of denominator <= 10^6 (x.limit_denominator(10^6)); the
    worst one, a uniform point here, is such a rational."""
    plan, net = x0_net
    for seed in range(4):
        got = measure_error(plan, net, 200, "exact", np.random.default_rng(seed))
        assert got["exact_mismatches"] == 0
        a = got["argmax"][0]
        q = Fraction(a).limit_denominator(10**6)
        assert float(q) == a and a not in (0.0, 1.0) and (a * 64) % 1 != 0, (seed, a)


def test_lemma1_report_passes_R_and_N_and_checks_four_inputs_by_default():
    rep = lemma1_report("x0", 1, 0.25, 1.0, 1.0, R=3, N=6)
    assert rep["R"] == 3.0 and rep["N"] == 6 and len(rep["grid_points"]) == 6
    assert rep["check"]["results"]["exact"]["detail"].startswith("4 inputs")
    assert lemma1_report("x0", 1, 0.25, 1.0, 1.0, trials=5)["check"]["results"]["exact"]["detail"].startswith(
        "5 inputs"
    )


def test_growth_table_ratios():
    """ratio_l = l / (d ε^{-d/β}) and ratio_kappa = κ / (d² ε^{-2d/β}), the constants Lemma 1's O(·) hides."""
    eps, beta = 0.5, 1.0
    for row in growth_table(eps, 1.0, beta, range(1, 4)):
        d = row["d"]
        sp_ = resources_spec.lemma1_spec(d, eps=eps, beta=beta, grid=row["grid"], arithmetic="float64")
        assert row["kappa"] == float(sp_.kappa)
        assert math.isclose(row["ratio_kappa"], row["kappa"] / (d * d * eps ** (-2 * d / beta)), rel_tol=1e-12)
        assert math.isclose(row["ratio_l"], row["l"] / (d * eps ** (-d / beta)), rel_tol=1e-12)
