"""Theorem 2 (Section 2.4, proof in Appendix E.2): approximation on the manifold, step by step.

The error decomposition, the split of ε, the chart projection head (Step 2.2), the ramp indicator and
its deep version (Step 2.3a), the final product block (Step 3) and the resources.
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import sympy as sp

from tmcheck.proofs_check.registry import ORDER_SLACK, Evidence, Kind, Witness, obligation
from tmcheck.theory import bounds


def relu(v):
    return max(v, 0)


@obligation(
    "theorem2.error_decomposition",
    "Appendix E.2, Step 2: the error decomposition",
    "||f − T_f||_{L∞(M)} = Σ_n ||f̃_n∘φ_n 1_{U_n} − T_{f̃_n}∘T_{φ_n} T_{1_{U_n}}||_{L∞(M)}.",
    "exact",
    "the inequality; the rest of the proof only uses <=.",
    kind=Kind.STEP,
    satisfied={"errors": ((F(1, 10), F(1, 5)),)},
)
def error_decomposition(errors=((F(1, 10), F(-1, 10)), (F(1, 10), F(1, 5)), (F(-1, 3), F(1, 4)))) -> Evidence:
    """Two charts' errors e1, e2 at the same point x (the only point of M): the sup of the sum against the sum of sups."""
    at = [{"e1": a, "e2": b} for a, b in errors]
    return Evidence(
        f"two charts, errors (e1, e2) in {[(str(a), str(b)) for a, b in errors]} at one point",
        [Witness(x, abs(a + b), abs(a) + abs(b), "==") for x, (a, b) in zip(at, errors)],
        [Witness(x, abs(a + b), abs(a) + abs(b), "<=") for x, (a, b) in zip(at, errors)],
        "||f − T_f||_{L∞(M)} <= Σ_n ||f̃_n∘φ_n 1_{U_n} − T_{f̃_n}∘T_{φ_n} T_{1_{U_n}}||_{L∞(M)}.",
        note="The sup of a sum is at most, not equal to, the sum of sups; the rest of the chain only needs <=.",
    )


@obligation(
    "theorem2.delta_split",
    "Appendix E.2, Step 3: choosing δ_{n,1} and δ_{n,3}",
    "With δ_{n,1} = δ_{n,3} = ε/(2C_M): C_M δ_{n,1} + C_M δ_{n,3} = ε.",
    "symbolic",
    "theory.bounds.theorem2_resources uses δ_1 = ε/(2C_M).",
    kind=Kind.STEP,
)
def delta_split() -> Evidence:
    e, C = sp.symbols("epsilon C_M", positive=True)
    return Evidence("symbolic in ε, C_M > 0", [Witness({}, C * e / (2 * C) + C * e / (2 * C), e, "==")])


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
    kind=Kind.STEP,
)
def ramp_indicator(r2=F(1, 4), Delta=F(1, 20)) -> Evidence:
    pts = [F(k, 400) for k in range(-40, 400)]
    return Evidence(
        f"440 rationals s in [−1/10, 1), r² = {r2}, Δ = {Delta} (exact): the piecewise form against the ReLU form",
        [Witness({"s": s}, ramp(s, r2, Delta), relu(1 - relu((s - (r2 - Delta)) / Delta)), "==") for s in pts],
    )


def deep_ramp_error(Delta: float, K: int) -> float:
    """max |deep ramp − 1̂| on 2001 points of [0, 1/2] for K layers of weight (1/Δ)^{1/K}, r² = 1/4 (float64)."""
    a, r2 = (1 / Delta) ** (1 / K), 0.25
    s = np.linspace(0, 0.5, 2001)
    y = s - (r2 - Delta)
    for _ in range(K):
        y = np.maximum(a * y, 0)
    deep = np.maximum(1 - np.maximum(y, 0), 0)
    flat = np.array([float(ramp(F(v), F(r2), F(Delta))) for v in s])
    return float(np.abs(deep - flat).max())


@obligation(
    "theorem2.deep_ramp",
    "Appendix E.2, Step 2.3a: the deep ramp",
    "With log(1/Δ) layers of weight (1/Δ)^{1/log(1/Δ)}, σ(1 − σ(a σ(… σ(a(s − (r² − Δ)))…))) = 1̂_{r²,Δ}(s) "
    "and the weights stay bounded.",
    "exact",
    "theory uses K = ceil(ln(1/Δ)) layers of weight a = (1/Δ)^{1/K} <= e.",
    kind=Kind.STEP,
    satisfied={"Deltas": (math.exp(-1), math.exp(-2))},
)
def deep_ramp(Deltas=(0.1, 0.05, 0.2)) -> Evidence:
    at = [{"Delta": D} for D in Deltas]
    Ks = [math.ceil(math.log(1 / D)) for D in Deltas]
    return Evidence(
        f"Δ in {list(Deltas)}: is the depth log(1/Δ) an integer? corrected: with K = ceil(ln(1/Δ)) layers, the "
        "max error "
        "on 2001 points of [0, 1/2] against 1e-12 and the weight against e",
        [Witness(a, math.log(1 / D), round(math.log(1 / D)), "==") for a, D in zip(at, Deltas)],
        [
            Witness(a, deep_ramp_error(D, K) + max(0.0, (1 / D) ** (1 / K) - math.e), 1e-12, "<=")
            for a, D, K in zip(at, Deltas, Ks)
        ],
        "K = ceil(ln(1/Δ)) layers with weight (1/Δ)^{1/K} <= e.",
        note="A depth must be an integer; (1/Δ)^(1/ln(1/Δ)) = e exactly, so the weights are bounded as claimed.",
    )


@obligation(
    "theorem2.projection_head",
    "Appendix E.2, Step 2.2: the chart projection φ_n(x) = s_n(V_n^T(x − c_n) + u_n)",
    "A_{i,j}(h_{D+i}) = σ(v^j_{n,i}(x^j − c^j_n) + 2M) e_1 = (v^j_{n,i}(x^j − c^j_n) + 2M) e_1, the MHA sums to "
    "<v_{n,i}, x − c_n> + 2DM, and W_1 maps it to s_n(<v_{n,i}, x − c_n> + u_n).",
    "exact",
    "a scalar u_n suffices (u_n = r, s_n = 1/(2r) put φ_n(U_n) in [0,1]^d); a token-wise W_1 cannot add a "
    "different u_n^i per token.",
    kind=Kind.STEP,
)
def projection_head(n_points: int = 200) -> Evidence:
    rng = np.random.default_rng(0)
    M = F(1)
    V = [(F(3, 5), F(4, 5), F(0)), (F(-4, 5), F(3, 5), F(0))]  # orthonormal rows, D = 3, d = 2
    s_n, u_n = F(1, 2), F(1)
    wits = []
    for p in range(n_points):
        x = [F(int(k), 8) for k in rng.integers(-8, 9, size=3)]
        c = [F(int(k), 8) for k in rng.integers(-8, 9, size=3)]
        for i, v in enumerate(V):
            args = [v[j] * (x[j] - c[j]) + 2 * M for j in range(3)]
            inner = sum(v[j] * (x[j] - c[j]) for j in range(3))
            mha = sum(relu(a) for a in args)
            at = {"point": p, "row": i}
            wits += [
                Witness({**at, "quantity": "min σ argument"}, min(args), 0, ">="),
                Witness({**at, "quantity": "MHA sum"}, mha, inner + 2 * 3 * M, "=="),
                Witness(
                    {**at, "quantity": "W_1 output"},
                    s_n * mha + (-2 * 3 * M * s_n + u_n * s_n),
                    s_n * (inner + u_n),
                    "==",
                ),
            ]
    return Evidence(f"{n_points} random x, c in [−M, M]^3 (M = 1), orthonormal rational v (exact)", wits)


def final_product(c_f: F, c_U: F, M: F) -> F:
    """Row 1 of token D+i after B_1 of Step 3: c_f + σ(c_f c_U − c_f + M), then the FFN subtracts M."""
    return c_f + relu(c_f * c_U - c_f + M) - M


@obligation(
    "theorem2.final_product",
    "Appendix E.2, Step 3: multiplying the chart value by the indicator",
    "With Q^data = [[1,0,0,0,0],[−1,0,0,0,M]], K^data = [[1,0,0,0,0],[0,0,0,0,1]]: "
    "A_i(h_{D+i}) = σ(c_{f_i} c_{U_i} − c_{f_i} + M) e_1 = (c_{f_i} c_{U_i} − c_{f_i} + M) e_1, then "
    "subtracting M leaves c_{f_i} c_{U_i}.",
    "exact",
    "tmcheck's constructions must use an offset >= sup|c_f| (R + δ_1), not the input bound M.",
    kind=Kind.STEP,
    satisfied={"R": F(1, 2)},
)
def final_product_check(R=F(2), M=F(1)) -> Evidence:
    """c_f in [−R, R] (the chart value, bounded by R), c_U in {0, 1/2, 1} (the indicator), offset M (as written)
    or R + 1 (corrected)."""
    pts = [(cf, cu) for cf in (-R, -R / 2, F(0), R / 2, R) for cu in (F(0), F(1, 2), F(1))]
    at = [{"c_f": cf, "c_U": cu, "M": M, "R": R} for cf, cu in pts]
    return Evidence(
        f"c_f in [−R, R], R = {R}, c_U in {{0, 1/2, 1}}, M = {M}: the block's value against c_f c_U",
        [Witness(a, final_product(cf, cu, M), cf * cu, "==") for a, (cf, cu) in zip(at, pts)],
        [Witness(a, final_product(cf, cu, max(M, R + 1)), cf * cu, "==") for a, (cf, cu) in zip(at, pts)],
        "use an offset M' >= sup|c_f| (e.g. R + δ_1) in Q^data and in the FFN that subtracts it.",
        note="σ(c_f(c_U − 1) + M) = c_f(c_U − 1) + M needs M >= |c_f| when c_U = 0; M bounds ||x||∞, while c_f ≈ f̃_n is bounded by R.",
    )


@obligation(
    "theorem2.resources_d_dependence",
    "Theorem 2 (Section 2.4): the resources",
    "l = O(d ε^{−d/β}), m = O(d ε^{−d/β}), κ = O(d² ε^{−2d/β}), O(·) hiding terms in C_M, D, H_f, τ.",
    "exact",
    "theory.bounds.theorem2_resources reports the explicit l and m.",
    kind=Kind.RESOURCE,
    satisfied={"ds": (1, 2)},
)
def resources_d_dependence(ds=tuple(range(1, 7)), eps=0.5) -> Evidence:
    def ratio(dd):
        r = bounds.theorem2_resources(dd, 1, eps, C_M=1)
        return r["m"] / r["stated_order_l_m"]

    base = ratio(1)
    return Evidence(
        f"ε = {eps}, C_M = D = H_f = β = 1, d in {list(ds)}: m/(d ε^(−d)) of the construction against "
        f"{ORDER_SLACK}× its value at d = 1",
        [Witness({"d": dd}, ratio(dd), ORDER_SLACK * base, "<=") for dd in ds],
        note="Each chart runs Lemma 1 at accuracy δ_1 = ε/(2C_M), so m ≈ C_M d N^d with N ≈ (2/3)√d (2C_M H_f/ε)^(1/β): "
        "a factor (2√d/3)^d 2^(d/β) that depends on d and is not hidden by C_M, D, H_f, τ. Explicitly m = "
        "C_M(d N^d + dD), "
        "l = C_M(d + dN + dN^d + 2D), N = ceil((2/3)√d (2C_M H_f/ε)^{1/β}) + 1.",
    )


@obligation(
    "theorem2.heads_exponent",
    "Appendix E.2, Step 3: the parallel network",
    "Via Lemma 7 … a transformer with O(C_M(d δ_{n,1}^{−d} + dD)) attention heads.",
    "exact",
    "theory.bounds.theorem2_resources uses δ_1^{−d/β} (Step 2.1).",
    kind=Kind.RESOURCE,
    satisfied={"betas": (F(1),)},
)
def heads_exponent(betas=(F(1, 2), F(1)), ds=(1, 2), delta=F(1, 4)) -> Evidence:
    """Per (β, d): the heads per chart Step 3 writes, d δ^{−d}, against the d δ^{−d/β} that Step 2.1 needs."""
    pts = [(b, dd) for b in betas for dd in ds]
    return Evidence(
        f"β in {[str(b) for b in betas]}, d in {list(ds)}, δ_1 = {delta}",
        [
            Witness({"beta": b, "d": dd, "delta": delta}, dd * (1 / delta) ** dd, dd * (1 / delta) ** (dd / b), ">=")
            for b, dd in pts
        ],
        note="Corrected: O(C_M(d δ_{n,1}^{−d/β} + dD)) attention heads (theory.bounds.theorem2_resources).",
    )


@obligation(
    "theorem2.depth_vs_accuracy",
    "Section 1 (Approximation Theory; Contributions) vs Theorem 2 and Step 2.3a",
    "The constructed transformer requires O(log(d)) depth independent of the accuracy ε, unlike ReLU feed-forward "
    "networks, which need O(log(ε^{−1})) layers.",
    "exact",
    "tmcheck reports L_T (blocks) and L_FFN (FFN depth) separately (theory.bounds.theorem2_resources, resources()).",
    kind=Kind.RESOURCE,
    satisfied={"epss": (F(1, 2), F(2, 5))},
)
def depth_vs_accuracy(epss=(F(1, 10), F(1, 100), F(1, 10**6))) -> Evidence:
    """ReLU depth of the indicator's deep ramp, ceil(ln(1/Δ)) with Δ = ε/2 (c = r = C_M = 1), against its value at the
    largest ε; corrected: the transformer blocks L_T of theory.bounds.theorem2_resources against the same."""
    e0 = max(epss)
    depth = {e: math.ceil(math.log(2 / e)) for e in epss}
    blocks = {e: bounds.theorem2_resources(1, 1, float(e))["L_T"] for e in epss}
    at = [{"eps": e} for e in epss]
    return Evidence(
        f"ε in {[str(e) for e in epss]}, d = D = c = r = C_M = 1: depth at ε against depth at ε = {e0}",
        [Witness(a, depth[e], depth[e0], "<=") for a, e in zip(at, epss)],
        [Witness(a, blocks[e], blocks[e0], "<=") for a, e in zip(at, epss)],
        "O(log d) transformer blocks independent of ε, with feed-forward depth O(log ε^{−1}) (Theorem 2); "
        "depth independent of ε holds for Lemma 1 on [0,1]^d only.",
        note="L_T = O(log d) counts transformer blocks only; the indicator 1_{U_n} needs a deep ramp with ceil(ln(1/Δ)) "
        "layers, Δ ∝ ε (Step 2.3a).",
    )
