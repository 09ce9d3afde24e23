"""Theorem 2 (Appendix E.2) as one network: exact claim, exact projections (E_{n,2} = 0), the indicator
FFNs, the error split, and an exported network read by an independent numpy implementation."""

from __future__ import annotations

import dataclasses
import functools
import json
from fractions import Fraction

import numpy as np
import pytest

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
)
from tmcheck.theory.lemmas.theorem2_report import theorem2_report
from tmcheck.theory.manifolds import make_manifold
from tmcheck.theory.network import Block, structured_positional
from tmcheck.theory.sparse import psi
from tmcheck.theory.targets import parse_target


@functools.cache
def circle_construction(N=3):
    m = make_manifold("circle", 2)
    return theorem2(m, parse_target("x0*x1 + x1/2", 2), 0.5, N=N, arithmetic="exact", H_f=2.0)


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
