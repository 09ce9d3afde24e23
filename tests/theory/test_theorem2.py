"""Theorem 2 (Appendix E.2) as one network and its report (`tmcheck theorem 2`, Section 2.4): exact claim, exact
projections (E_{n,2} = 0), the indicator FFNs, the error split against Step 3's budget, an exported network read by
an independent numpy implementation, the report's resource table against its printed formulas and the measured
network, and the message naming the variables a target must use."""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from printed_formula import formula  # tests/theory/printed_formula.py

from tmcheck.theory import netfile
from tmcheck.theory.backends import evaluate, run_blocks
from tmcheck.theory.check import check_construction
from tmcheck.theory.fast_eval import evaluate_structured, forward_structured
from tmcheck.theory.lemmas.theorem2 import (
    claim_parts,
    claim_value,
    error_split,
    indicator_hat,
    psi_indicator_ffn,
    rational,
    theorem2,
    theorem2_network,
    theorem2_plan,
)
from tmcheck.theory.lemmas.theorem2_report import resource_table, theorem2_report
from tmcheck.theory.manifolds import make_manifold
from tmcheck.theory.network import Block, resources, structured_positional
from tmcheck.theory.sparse import psi
from tmcheck.theory.targets import TargetError, parse_target

SPEC_ROWS = ("L_T", "m", "l", "L_FFN", "w_FFN", "kappa")


@functools.cache
def circle_construction(N=3):
    """f = x0 x1 + x1/2 on the circle in R^2 (d = 1, D = 2, C_M = 14) at grid N, built in exact arithmetic."""
    m = make_manifold("circle", 2)
    return theorem2(m, parse_target("x0*x1 + x1/2", 2), 0.5, N=N, arithmetic="exact", H_f=2.0)


@functools.cache
def torus_float():
    """f = x0/2 on the torus in R^4 (d = 2, D = 4, C_M = 400) at N = 2, float64."""
    plan = theorem2_plan(make_manifold("torus", 4), parse_target("x0/2", 4), 0.9, N=2)
    return plan, theorem2_network(plan, "float64")


def test_network_computes_the_claim_exactly():
    c = circle_construction()
    spec = c.constants["plan"]
    X = np.array([[rational(v) for v in x] for x in spec.manifold.sample(np.random.default_rng(0), 4)], dtype=object)
    T = evaluate_structured(c.network, X, "exact")
    assert list(T) == [claim_value(spec, x) for x in X]


def test_projection_is_exact_so_E2_is_zero():
    c = circle_construction()
    spec = c.constants["plan"]
    x = [rational(v) for v in spec.manifold.sample(np.random.default_rng(1), 1)[0]]
    meta = {**c.network.meta, "interaction_pattern": c.network.meta["interaction_pattern"][:1]}
    first = dataclasses.replace(c.network, blocks=c.network.blocks[:1], meta=meta)  # block 1 only
    H1 = forward_structured(first, np.array([x], dtype=object), "exact")[0]
    for n, (_, _, z) in enumerate(claim_parts(spec, x)):
        base = n * spec.Lc
        assert [H1[0, base + spec.D + i] for i in range(spec.d)] == z  # z tokens hold φ_n(x) exactly
        assert [H1[0, base + j] for j in range(spec.D)] == [(x[j] - spec.c[n][j]) ** 2 for j in range(spec.D)]


def test_float_dense_and_structured_agree():
    c = circle_construction()
    spec = c.constants["plan"]
    net = theorem2_network(spec, "float64")
    X = spec.manifold.sample(np.random.default_rng(2), 5)
    assert np.max(np.abs(evaluate(net, X, "float64") - evaluate_structured(net, X, "float64"))) < 1e-7


@pytest.mark.parametrize("deep", [True, False])
def test_indicator_ffn_is_exact_and_deep_weights_are_bounded(deep):
    N, S_I, r2, L = 3, 9, Fraction(1, 16), 5
    layers = psi_indicator_ffn(N, S_I, r2, L, deep)
    Delta = Fraction(1, 2**L)
    ss = [Fraction(0), r2 - Delta, r2 - Delta / 3, r2 - Delta / 2, r2, Fraction(1, 3), Fraction(4)]
    H = np.empty((1, 5, len(ss) + 2), dtype=object)
    H[:] = structured_positional(len(ss) + 2, "exact")
    H[0, 0, :] = Fraction(0)
    H[0, 1, :] = [S_I + s for s in ss] + [Fraction(0), Fraction(5, 4)]  # indicator mailboxes, an empty one, a ψ one
    out = run_blocks([Block((), layers)], H, "exact")[0]
    assert list(out[0, : len(ss)]) == [indicator_hat(s, r2, Delta) for s in ss]
    assert out[0, len(ss)] == 0  # empty mailbox untouched
    assert out[0, len(ss) + 1] == psi(3 * (N - 1) * Fraction(1, 4))  # a ψ mailbox gets ψ, not the indicator
    assert (out[1, :] == 0).all()  # every mailbox is cleared
    W = max(abs(v) for lay in layers for v in lay.W.reshape(-1))
    if deep:
        assert W <= max(2 * (N - 1) * 3, 2)  # no weight grows with 1/Δ
        assert len(layers) == L + 2
    else:
        assert W == 1 / Delta


def test_error_split_bounds_the_error():
    c = circle_construction(N=6)
    spec = c.constants["plan"]
    X = spec.manifold.sample(np.random.default_rng(3), 60)
    es = error_split(spec, X)
    assert es["err"] <= spec.multiplicity * (es["E1"].max() + es["E3"].max()) + 1e-12
    assert (es["E2"] == 0).all()


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


def test_check_construction_circle():
    m = make_manifold("circle", 2)
    c = theorem2(m, parse_target("x0", 2), 0.5, N=2, arithmetic="exact")
    rep = check_construction(c, np.random.default_rng(0), n_inputs=2)
    assert rep.ok, rep.as_dict()


def test_sphere_report_runs_and_matches_the_claim():
    rep = theorem2_report("sphere", 4, 0.5, "x0*x1", N=2, n_points=40)
    assert rep["network_vs_claim"] < 1e-6
    assert rep["error"] <= rep["bound_mu_E"] + 1e-6
    res = {r["quantity"]: r for r in rep["resources"]}
    assert res["L_T"]["measured"] == 2 + 5  # ⌈log2 3⌉ + 5


def _numpy_eval(spec: dict, x: np.ndarray) -> float:
    """From the file format alone (README), with numpy: a dense, independent forward pass (exact "p/q" entries
    read as floats)."""

    def f(a):
        return np.vectorize(lambda v: float(Fraction(v)) if isinstance(v, str) else float(v), otypes=[float])(
            np.array(a, dtype=object)
        )

    H = f(spec["embedding"]["E"]) @ (f(spec["embedding"]["U"]) @ x)[None, :] + f(spec["positional"])
    for blk in spec["blocks"]:
        A = np.zeros_like(H)
        for h in blk["heads"]:
            Q, K, V = f(h["Q"]), f(h["K"]), f(h["V"])
            A += V @ H @ np.maximum((K @ H).T @ (Q @ H), 0)
        Z = H + A
        Y = Z
        for i, lay in enumerate(blk["ffn"]):
            Y = f(lay["W"]) @ Y + f(lay["b"])[:, None]
            if i < len(blk["ffn"]) - 1:
                Y = np.maximum(Y, 0)
        H = Z + (Y if blk["ffn"] else 0)
    return float(H[spec["decoder"]["row"], spec["decoder"]["col"]])


def test_exported_network_within_eps_by_independent_reader(tmp_path):
    eps = 0.9
    rep = theorem2_report("circle", 2, eps, "x0/4", N=5, n_points=100)
    path = netfile.save(rep["network"], tmp_path / "t2.json")
    spec = json.loads(path.read_text())
    m = rep["plan"].manifold
    f = parse_target("x0/4", 2)
    for x in m.sample(np.random.default_rng(4), 6):
        assert abs(_numpy_eval(spec, x) - f(x[None]).real[0]) <= eps
    assert rep["error"] <= eps


def test_plan_names_the_variables_a_target_must_use():
    m = make_manifold("circle", 2)
    with pytest.raises(TargetError, match=r"^the target must be a function of x0\.\.x1 \(D = 2\)$"):
        theorem2_plan(m, parse_target("x0", 1), 0.5, N=3)


# --------------------------------------------------------------------------------------------
# the report's resource table (theory/lemmas/theorem2_report.py)


@pytest.mark.parametrize("case", ["circle", "torus"])
def test_paper_rows_are_their_printed_formulas(case):
    """Each row after the spec's six states a formula and its value: the formula evaluated at the plan's
    d, D, N, C_M, ε (β = 1) is that value (at d = 2 the O(log d) row is log2(2) + 5 = 6; the head count
    is C_M (d N^d + d D), not the same form in D)."""
    if case == "circle":
        c = circle_construction()
        plan, net = c.constants["plan"], c.network
    else:
        plan, net = torus_float()
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
        value = formula(r["formula"]).subs({sp.Symbol(k): v for k, v in at.items()})
        assert value.is_number and math.isclose(float(value), r["value"], rel_tol=1e-12), r
    if case == "torus":
        assert paper[0]["value"] == 6.0


def test_spec_rows_match_the_exact_network():
    """On the exact network the spec, taken in the network's arithmetic, states every count it measures:
    ratio 1 in all six spec rows, κ included (the float64 spec would state twice the exact C of each head)."""
    c = circle_construction()
    rows = resource_table(c.constants["plan"], c.network)
    for r in rows[: len(SPEC_ROWS)]:
        assert r["ratio"] == 1.0, r
    kappa = rows[SPEC_ROWS.index("kappa")]
    assert kappa["value"] == float(resources(c.network).kappa_blocks)


def test_resource_table_reads_the_given_measurement():
    """`measured`, when given, is what the table compares with; the network is not measured again."""
    c = circle_construction()
    res = resources(c.network)
    shifted = dataclasses.replace(res, L_T=res.L_T + 1, m=res.m + 2, l=res.l + 3)
    rows = {r["quantity"]: r for r in resource_table(c.constants["plan"], c.network, shifted)}
    assert rows["L_T"]["measured"] == res.L_T + 1
    assert rows["m"]["measured"] == res.m + 2
    assert rows["l"]["measured"] == res.l + 3
    assert rows["L_T (paper)"]["measured"] == res.L_T + 1
