"""Theorem 2 (Section 2.4, proof in Appendix E.2): approximation on the manifold, step by step.

The error decomposition, the split of ε, the chart projection head (Step 2.2), the ramp indicator and
its deep version (Step 2.3a), the final product block (Step 3) and the resources.
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import sympy as sp

from tmcheck.proofs_check.registry import Result, Verdict, obligation
from tmcheck.theory import bounds


def relu(v):
    return max(v, 0)


@obligation(
    "theorem2.error_decomposition",
    "Appendix E.2, Step 2: the error decomposition",
    "||f − T_f||_{L∞(M)} = Σ_n ||f̃_n∘φ_n 1_{U_n} − T_{f̃_n}∘T_{φ_n} T_{1_{U_n}}||_{L∞(M)}.",
    "exact",
    "the inequality; the rest of the proof only uses <=.",
)
def error_decomposition() -> Result:
    e1, e2 = F(1, 10), F(-1, 10)  # two charts' errors at the same point, of opposite signs
    return Result(
        Verdict.CORRECTED,
        f"The sup of a sum is at most, not equal to, the sum of sups: chart errors {e1} and {e2} at the same x give "
        f"|e1 + e2| = {abs(e1 + e2)} but |e1| + |e2| = {abs(e1) + abs(e2)}. The rest of the chain only needs <=.",
        counterexample={"e1": str(e1), "e2": str(e2), "norm_of_sum": str(abs(e1 + e2)), "sum_of_norms": str(abs(e1) + abs(e2))},
        corrected="||f − T_f||_{L∞(M)} <= Σ_n ||f̃_n∘φ_n 1_{U_n} − T_{f̃_n}∘T_{φ_n} T_{1_{U_n}}||_{L∞(M)}.",
    )


@obligation(
    "theorem2.delta_split",
    "Appendix E.2, Step 3: choosing δ_{n,1} and δ_{n,3}",
    "With δ_{n,1} = δ_{n,3} = ε/(2C_M): C_M δ_{n,1} + C_M δ_{n,3} = ε.",
    "symbolic",
    "theory.bounds.theorem2_resources uses δ_1 = ε/(2C_M).",
)
def delta_split() -> Result:
    e, C = sp.symbols("epsilon C_M", positive=True)
    val = sp.simplify(C * e / (2 * C) + C * e / (2 * C))
    return Result(Verdict.HOLDS if val == e else Verdict.FAILS, f"C_M·ε/(2C_M) + C_M·ε/(2C_M) = {val}.",
                  counterexample=None if val == e else {"value": str(val)})


def ramp(s: F, r2: F, Delta: F) -> F:
    """The approximate indicator as written: 1, then 1 − s/Δ + (r² − Δ)/Δ, then 0."""
    if s <= r2 - Delta:
        return F(1)
    if s < r2:
        return 1 - s / Delta + (r2 - Delta) / Delta
    return F(0)


@obligation(
    "theorem2.ramp_indicator",
    "Appendix E.2, Step 2.3a: the approximate indicator",
    "1̂_{r²,Δ}(s) = 1 for s <= r² − Δ, 1 − s/Δ + (r² − Δ)/Δ on (r² − Δ, r²), 0 for s >= r², "
    "and 1̂_{r²,Δ}(s) = σ(1 − σ((s − (r² − Δ))/Δ)).",
    "exact",
    "theory's indicator FFN implements σ(1 − σ((s − r² + Δ)/Δ)).",
)
def ramp_indicator() -> Result:
    r2, Delta = F(1, 4), F(1, 20)
    pts = [F(k, 400) for k in range(-40, 400)]
    ok = all(ramp(s, r2, Delta) == relu(1 - relu((s - (r2 - Delta)) / Delta)) for s in pts)
    cont = ramp(r2 - Delta, r2, Delta) == 1 and ramp(r2 - Delta / 1000, r2, Delta) > 0
    return Result(Verdict.HOLDS if ok and cont else Verdict.FAILS,
                  f"the piecewise form and the ReLU form agree exactly at 440 rationals (r² = 1/4, Δ = 1/20): {ok}; continuous at r² − Δ: {cont}.",
                  counterexample=None if ok and cont else {"r2": "1/4", "Delta": "1/20"})


@obligation(
    "theorem2.deep_ramp",
    "Appendix E.2, Step 2.3a: the deep ramp",
    "With log(1/Δ) layers of weight (1/Δ)^{1/log(1/Δ)}, σ(1 − σ(a σ(… σ(a(s − (r² − Δ)))…))) = 1̂_{r²,Δ}(s) and the weights stay bounded.",
    "exact",
    "theory uses K = ceil(ln(1/Δ)) layers of weight a = (1/Δ)^{1/K} <= e.",
)
def deep_ramp() -> Result:
    Delta = 0.1
    layers = math.log(1 / Delta)
    K = math.ceil(layers)
    a = (1 / Delta) ** (1 / K)
    r2 = 0.25
    s = np.linspace(0, 0.5, 2001)
    y = s - (r2 - Delta)
    for _ in range(K):
        y = np.maximum(a * y, 0)
    deep = np.maximum(1 - np.maximum(y, 0), 0)
    flat = np.array([float(ramp(F(v), F(r2), F(Delta))) for v in s])
    err = float(np.abs(deep - flat).max())
    return Result(
        Verdict.CORRECTED,
        f"A depth must be an integer: Δ = 1/10 gives log(1/Δ) = {layers:.4f} layers. With K = ceil(ln(1/Δ)) = {K} "
        f"layers of weight (1/Δ)^(1/K) = {a:.4f} <= e the deep ramp equals 1̂ to {err:.1e} on 2001 points of [0, 1/2]; "
        "(1/Δ)^(1/ln(1/Δ)) = e exactly, so the weights are bounded as claimed.",
        counterexample={"Delta": "1/10", "layers_as_written": layers},
        corrected="K = ceil(ln(1/Δ)) layers with weight (1/Δ)^{1/K} <= e.",
        data={"max_error": err},
    )


@obligation(
    "theorem2.projection_head",
    "Appendix E.2, Step 2.2: the chart projection φ_n(x) = s_n(V_n^T(x − c_n) + u_n)",
    "A_{i,j}(h_{D+i}) = σ(v^j_{n,i}(x^j − c^j_n) + 2M) e_1 = (v^j_{n,i}(x^j − c^j_n) + 2M) e_1, the MHA sums to "
    "<v_{n,i}, x − c_n> + 2DM, and W_1 maps it to s_n(<v_{n,i}, x − c_n> + u_n).",
    "exact",
    "a scalar u_n suffices (u_n = r, s_n = 1/(2r) put φ_n(U_n) in [0,1]^d); a token-wise W_1 cannot add a different u_n^i per token.",
)
def projection_head() -> Result:
    rng = np.random.default_rng(0)
    M = F(1)
    V = [(F(3, 5), F(4, 5), F(0)), (F(-4, 5), F(3, 5), F(0))]  # orthonormal rows, D = 3, d = 2
    ok, worst_arg = True, None
    for _ in range(200):
        x = [F(int(k), 8) for k in rng.integers(-8, 9, size=3)]
        c = [F(int(k), 8) for k in rng.integers(-8, 9, size=3)]
        s_n, u_n = F(1, 2), F(1)
        for v in V:
            args = [v[j] * (x[j] - c[j]) + 2 * M for j in range(3)]
            worst_arg = min(args) if worst_arg is None else min(worst_arg, min(args))
            mha = sum(relu(a) for a in args)
            inner = sum(v[j] * (x[j] - c[j]) for j in range(3))
            ok &= mha == inner + 2 * 3 * M
            w1 = s_n * mha + (-2 * 3 * M * s_n + u_n * s_n)  # W_1 row 1 applied to (mha, 0, I, I, 1)
            ok &= w1 == s_n * (inner + u_n)
    return Result(Verdict.HOLDS if ok else Verdict.FAILS,
                  f"200 random x, c in [−M, M]^3 (M = 1), orthonormal rational v: every σ argument is >= {worst_arg} >= 0 "
                  f"(|v^j| <= 1, |x^j − c^j| <= 2M), the heads sum to <v, x − c> + 2DM and W_1 gives s_n(<v, x − c> + u_n): {ok}.",
                  counterexample=None if ok else {"M": "1"})


def final_product(c_f: F, c_U: F, M: F) -> F:
    """Row 1 of token D+i after B_1 of Step 3: c_f + σ(c_f c_U − c_f + M), then the FFN subtracts M."""
    return c_f + relu(c_f * c_U - c_f + M) - M


@obligation(
    "theorem2.final_product",
    "Appendix E.2, Step 3: multiplying the chart value by the indicator",
    "With Q^data = [[1,0,0,0,0],[−1,0,0,0,M]], K^data = [[1,0,0,0,0],[0,0,0,0,1]]: "
    "A_i(h_{D+i}) = σ(c_{f_i} c_{U_i} − c_{f_i} + M) e_1 = (c_{f_i} c_{U_i} − c_{f_i} + M) e_1, then subtracting M leaves c_{f_i} c_{U_i}.",
    "exact",
    "tmcheck's constructions must use an offset >= sup|c_f| (R + δ_1), not the input bound M.",
)
def final_product_check() -> Result:
    c_f, c_U, M = F(2), F(0), F(1)
    got = final_product(c_f, c_U, M)
    fixed = final_product(c_f, c_U, max(M, F(2) + 1))
    return Result(
        Verdict.CORRECTED,
        f"σ(c_f(c_U − 1) + M) = c_f(c_U − 1) + M needs M >= |c_f| when c_U = 0; M bounds ||x||∞, while c_f ≈ f̃_n "
        f"is bounded by R. With R = 2: c_f = 2, c_U = 0, M = 1 the block yields {got}, not c_f c_U = 0. With the "
        f"offset R + 1: {fixed}.",
        counterexample={"c_f": "2", "c_U": "0", "M": "1", "R": "2", "result": str(got), "claimed": "0"},
        corrected="use an offset M' >= sup|c_f| (e.g. R + δ_1) in Q^data and in the FFN that subtracts it.",
    )


@obligation(
    "theorem2.resources_d_dependence",
    "Theorem 2 (Section 2.4): the resources",
    "l = O(d ε^{−d/β}), m = O(d ε^{−d/β}), κ = O(d² ε^{−2d/β}), O(·) hiding terms in C_M, D, H_f, τ.",
    "exact",
    "theory.bounds.theorem2_resources reports the explicit l and m.",
)
def resources_d_dependence() -> Result:
    rows = {}
    for dd in range(1, 7):
        r = bounds.theorem2_resources(dd, 1, 0.5, C_M=1)
        rows[dd] = r["m"] / r["stated_order_l_m"]
    return Result(
        Verdict.FAILS,
        "Each chart runs Lemma 1 at accuracy δ_1 = ε/(2C_M), so m ≈ C_M d N^d with N ≈ (2/3)√d (2C_M H_f/ε)^(1/β): "
        "a factor (2√d/3)^d 2^(d/β) that depends on d and is not hidden by C_M, D, H_f, τ. At ε = 1/2, C_M = D = "
        "H_f = β = 1, m/(d ε^(−d)) = " + ", ".join(f"d = {k}: {v:.3g}" for k, v in rows.items()) + ".",
        counterexample={"eps": 0.5, "C_M": 1, "D": 1, "ratio_m_over_d_eps^-d": {k: float(f"{v:.6g}") for k, v in rows.items()}},
        corrected="m = C_M(d N^d + dD), l = C_M(d + dN + dN^d + 2D), N = ceil((2/3)√d (2C_M H_f/ε)^{1/β}) + 1.",
    )


@obligation(
    "theorem2.heads_exponent",
    "Appendix E.2, Step 3: the parallel network",
    "Via Lemma 7 … a transformer with O(C_M(d δ_{n,1}^{−d} + dD)) attention heads.",
    "exact",
    "theory.bounds.theorem2_resources uses δ_1^{−d/β} (Step 2.1).",
)
def heads_exponent() -> Result:
    delta, dd, b = F(1, 4), 2, F(1, 2)
    written, step21 = (1 / delta) ** dd, (1 / delta) ** int(dd / b)
    return Result(
        Verdict.FAILS,
        f"Step 2.1 needs d δ_1^(−d/β) heads per chart; Step 3 writes δ_1^(−d). For β = 1/2, d = 2, δ_1 = 1/4: "
        f"δ^(−d) = {written} < δ^(−d/β) = {step21}.",
        counterexample={"beta": "1/2", "d": dd, "delta": "1/4", "written": str(written), "needed": str(step21)},
        corrected="O(C_M(d δ_{n,1}^{−d/β} + dD)) attention heads.",
    )


@obligation(
    "theorem2.depth_vs_accuracy",
    "Section 1 (Approximation Theory; Contributions) vs Theorem 2 and Step 2.3a",
    "The constructed transformer requires O(log(d)) depth independent of the accuracy ε, unlike ReLU feed-forward "
    "networks, which need O(log(ε^{−1})) layers.",
    "exact",
    "tmcheck reports L_T (blocks) and L_FFN (FFN depth) separately (theory.bounds.theorem2_resources, resources()).",
)
def depth_vs_accuracy() -> Result:
    depths = {}
    for e in (F(1, 100), F(1, 10**6)):
        Delta = e / 2  # E_{n,3} <= (c/r)Δ <= ε/(2C_M) with c = r = C_M = 1
        depths[str(e)] = math.ceil(math.log(1 / Delta))
    return Result(
        Verdict.CORRECTED,
        "L_T = O(log d) counts transformer blocks only. Theorem 2 itself has L_FFN = O(log ε^(−1)): the indicator "
        "1_{U_n} needs a deep ramp with ceil(ln(1/Δ)) layers, Δ ∝ ε (Step 2.3a); with c = r = C_M = 1 that is "
        + ", ".join(f"{v} layers at ε = {k}" for k, v in depths.items())
        + ". The ReLU depth of the network therefore grows like log(1/ε), as for a ReLU FFN; only Lemma 1 "
        "(L_FFN = O(1)) is accuracy-independent.",
        counterexample={"eps": list(depths), "ffn_layers": list(depths.values()), "c": 1, "r": 1, "C_M": 1},
        corrected="O(log d) transformer blocks independent of ε, with feed-forward depth O(log ε^{−1}) (Theorem 2); "
        "depth independent of ε holds for Lemma 1 on [0,1]^d only.",
    )
