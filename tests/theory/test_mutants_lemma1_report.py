"""`tmcheck lemma 1`'s report (Section 2.4, Appendix E.1): the printed formulas against their values, the sample
the error is measured on, and the arguments passed through, for the mutants mutation testing left alive."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from sympy.parsing.sympy_parser import implicit_multiplication_application, parse_expr, standard_transformations

from tmcheck.theory import spec as resources_spec
from tmcheck.theory.fast_eval import evaluate_structured
from tmcheck.theory.lemmas.lemma1 import lemma1_network, lemma1_plan
from tmcheck.theory.lemmas.lemma1_report import growth_table, lemma1_report, measure_error, resource_table
from tmcheck.theory.network import resources
from tmcheck.theory.targets import parse_target

RESOURCE_OF = {"L_T": "L_T", "L_FFN": "L_FFN", "kappa": "kappa_blocks", "l": "l", "m": "m"}


@pytest.fixture(scope="module")
def x0_net():
    """f(x) = x on [0, 1] (H_f = 1, β = 1) at ε = 1/4: the tight grid has N = 4."""
    plan = lemma1_plan(parse_target("x0", 1), 1.0, 1.0, 0.25)
    return plan, lemma1_network(plan, "exact")


def _formula(text: str) -> sp.Expr:
    """A printed O(·) form ("d ε^{-d/β}", "d² ε^{-2d/β}") as a sympy expression in d, ε, β."""
    t = text.replace("²", "**2").replace("^{", "**(").replace("}", ")").replace("ε", "eps").replace("β", "beta")
    names = {"d": sp.Symbol("d"), "eps": sp.Symbol("eps"), "beta": sp.Symbol("beta")}
    return parse_expr(
        t, local_dict=names, transformations=standard_transformations + (implicit_multiplication_application,)
    )


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
            value = _formula(r["formula"]).subs({"d": p.d, "eps": p.eps, "beta": p.beta})
            assert value.is_number and math.isclose(float(value), r["value"], rel_tol=1e-12), r
        for r in rows[6:]:  # after the spec's six rows, the paper's forms
            name = r["quantity"].split()[0]
            assert r["measured"] == float(getattr(res, RESOURCE_OF[name])), r


def _plan_net(text, d, eps, beta):
    plan = lemma1_plan(parse_target(text, d), 1.0, beta, eps)
    return plan, lemma1_network(plan, "exact")


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
