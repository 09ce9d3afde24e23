"""Theorem 2 (Section 2.4, Appendix E.2) and Lemma 1's sum block: the resource table against its printed
formulas and the measured network, the error split against Step 3's budget, the order and wording of the
guards, and the spec's default atlas, for the mutants mutation testing left alive."""

from __future__ import annotations

import dataclasses
import functools
import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from sympy.parsing.sympy_parser import implicit_multiplication_application, parse_expr, standard_transformations

from tmcheck.theory import spec as resources_spec
from tmcheck.theory.fast_eval import run_structured
from tmcheck.theory.lemmas.lemma1 import lemma1_network, lemma1_plan
from tmcheck.theory.lemmas.theorem2 import claim_parts, error_split, rational, theorem2_network, theorem2_plan
from tmcheck.theory.lemmas.theorem2_report import resource_table, theorem2_report
from tmcheck.theory.manifolds import make_manifold
from tmcheck.theory.network import NetworkError, resources, structured_positional
from tmcheck.theory.targets import TargetError, parse_target

SPEC_ROWS = ("L_T", "m", "l", "L_FFN", "w_FFN", "kappa")


@functools.cache
def circle_exact(N=3):
    """f = x0 x1 + x1/2 on the circle in R^2 (d = 1, D = 2, C_M = 14) at grid N, built in exact arithmetic."""
    m = make_manifold("circle", 2)
    plan = theorem2_plan(m, parse_target("x0*x1 + x1/2", 2), 0.5, N=N, H_f=2.0)
    return plan, theorem2_network(plan, "exact")


@functools.cache
def torus_float():
    """f = x0/2 on the torus in R^4 (d = 2, D = 4, C_M = 400) at N = 2, float64."""
    plan = theorem2_plan(make_manifold("torus", 4), parse_target("x0/2", 4), 0.9, N=2)
    return plan, theorem2_network(plan, "float64")


def _formula(text: str) -> sp.Expr:
    """A printed formula ("O(log d): log2(d) + 5", "C_M (d N^d + d D)", "d² ε^{-2d/β}") as a sympy
    expression in d, D, N, C_M, ε, β (the text after an "O(·):" prefix)."""
    t = text.split(": ", 1)[-1]
    t = t.replace("C_M", "C*").replace("²", "**2").replace("^{", "**(").replace("}", ")").replace("^", "**")
    t = t.replace("ε", "eps").replace("β", "beta")
    names = {k: sp.Symbol(k) for k in ("d", "D", "N", "C", "eps", "beta")}
    names["log2"] = lambda x: sp.log(x, 2)
    names["log"] = sp.log
    return parse_expr(
        t, local_dict=names, transformations=standard_transformations + (implicit_multiplication_application,)
    )


@pytest.mark.parametrize("case", ["circle", "torus"])
def test_paper_rows_are_their_printed_formulas(case):
    """Each row after the spec's six states a formula and its value: the formula evaluated at the plan's
    d, D, N, C_M, ε (β = 1) is that value (at d = 2 the O(log d) row is log2(2) + 5 = 6; the head count
    is C_M (d N^d + d D), not the same form in D)."""
    plan, net = circle_exact() if case == "circle" else torus_float()
    rows = resource_table(plan, net, resources(net))
    at = {"d": plan.d, "D": plan.D, "N": plan.N, "C": plan.manifold.C_M, "eps": plan.eps, "beta": 1}
    paper = rows[len(SPEC_ROWS) :]
    assert [r["quantity"] for r in paper] == [
        "L_T (paper)",
        "L_FFN (paper)",
        "m (proof)",
        "l / O(·)",
        "m / O(·)",
        "kappa / O(·)",
    ]
    for r in paper:
        value = _formula(r["formula"]).subs({sp.Symbol(k): v for k, v in at.items()})
        assert value.is_number and math.isclose(float(value), r["value"], rel_tol=1e-12), r
    if case == "torus":
        assert paper[0]["value"] == 6.0


def test_spec_rows_match_the_exact_network():
    """On the exact network the spec, taken in the network's arithmetic, states every count it measures:
    ratio 1 in all six spec rows, κ included (the float64 spec would state twice the exact C of each head)."""
    plan, net = circle_exact()
    rows = resource_table(plan, net)
    for r in rows[: len(SPEC_ROWS)]:
        assert r["ratio"] == 1.0, r
    kappa = rows[SPEC_ROWS.index("kappa")]
    assert kappa["value"] == float(resources(net).kappa_blocks)


def test_resource_table_reads_the_given_measurement():
    """`measured`, when given, is what the table compares with; the network is not measured again."""
    plan, net = circle_exact()
    res = resources(net)
    shifted = dataclasses.replace(res, L_T=res.L_T + 1, m=res.m + 2, l=res.l + 3)
    rows = {r["quantity"]: r for r in resource_table(plan, net, shifted)}
    assert rows["L_T"]["measured"] == res.L_T + 1
    assert rows["m"]["measured"] == res.m + 2
    assert rows["l"]["measured"] == res.l + 3
    assert rows["L_T (paper)"]["measured"] == res.L_T + 1


def test_error_split_meets_step3_budget_on_the_proven_grid():
    """Corrected Step 3: on the proven grid E_{n,1} = |f ρ_n - L_n∘φ_n| <= δ_1 and E_{n,3} <= δ_3 on U_n,
    δ = ε/(2μ); and the recorded terms are those of f̃_n = f ρ_n, recomputed here on a few points."""
    m = make_manifold("circle", 2)
    f = parse_target("x0*x1 + x1/2", 2)
    plan = theorem2_plan(m, f, 0.5, H_f=2.0)
    assert plan.N == plan.N_proven
    delta = 0.5 / (2 * plan.multiplicity)
    X = m.sample(40, np.random.default_rng(3))
    split = error_split(plan, X)
    assert split["E1"].max() <= delta and split["E3"].max() <= delta
    Y = X[:6]
    split6 = error_split(plan, Y)
    fx, rho, inside = f(Y).real, m.partition(Y), m.in_chart(Y)
    E1, E3 = np.zeros(m.C_M), np.zeros(m.C_M)
    for k, x in enumerate(Y):
        for n, (Ln, ind, _) in enumerate(claim_parts(plan, [rational(v) for v in x])):
            if inside[k, n]:
                ft = fx[k] * rho[k, n]  # f̃_n(φ_n(x)) = (f ρ_n)(x)
                E1[n] = max(E1[n], abs(ft - float(Ln)))
                E3[n] = max(E3[n], abs(ft) * abs(1 - float(ind)))
    assert np.allclose(split6["E1"], E1, rtol=0, atol=1e-15)
    assert np.allclose(split6["E3"], E3, rtol=0, atol=1e-15)


def test_plan_names_the_variables_a_target_must_use():
    m = make_manifold("circle", 2)
    with pytest.raises(TargetError, match=r"^the target must be a function of x0\.\.x1 \(D = 2\)$"):
        theorem2_plan(m, parse_target("x0", 1), 0.5, N=3)


def test_lemma1_spec_names_the_too_small_grid():
    with pytest.raises(TargetError, match=r"^the grid needs N >= 2 points per axis, got 1$"):
        resources_spec.lemma1_spec(1, 1)


def test_report_checks_eps_before_building_the_atlas():
    """ε = 0 is refused first, before the manifold is made or the target parsed (neither is valid here)."""
    with pytest.raises(TargetError, match="ε must lie in \\(0, 1\\) as in Theorem 2, got 0"):
        theorem2_report("no-such-manifold", 2, 0.0, "not a target (")


def test_report_size_guard_computes_no_kappa(monkeypatch):
    """The size guard before the grid values refuses from the counts alone: κ is not computed for it."""

    def no_kappa(*args, **kwargs):
        raise AssertionError("κ computed by the size guard")

    monkeypatch.setattr(resources_spec, "_theorem2_kappa", no_kappa)
    with pytest.raises(TargetError, match="the theorem2 network would have"):
        theorem2_report("circle", 2, 0.5, "x0*x1", H_f=2.0, size_limit=10)


def test_theorem2_spec_by_name_is_the_default_atlas():
    """theorem2_spec(name, D) describes the atlas make_manifold(name, D) builds by default (seed 0); in
    R^6 the chart heads' κ depends on where the centres lie, so another seed's atlas states another κ."""
    by_name = resources_spec.theorem2_spec("circle", 6, 0.5)
    built = resources_spec.theorem2_spec(make_manifold("circle", 6), eps=0.5)
    assert by_name.kappa == built.kappa and by_name.as_dict() == built.as_dict()
    assert resources_spec.theorem2_spec("circle", 6, 0.5, seed=1).kappa != built.kappa


def test_lemma1_sum_block_guard_is_2R():
    """Lemma 1's sum block reads row 1 = φ_n f_n + R in [0, 2R] (|f_n| <= R, φ_n in [0, 1]): its domain
    bound M is max(1, 2R), so a token with row 1 = 2R passes and one with 5R/2 is refused."""
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
