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
from tmcheck.theory import bounds, sparse
from tmcheck.theory.backends import run_blocks
from tmcheck.theory.lemmas.theorem2 import indicator_hat, psi_indicator_ffn
from tmcheck.theory.network import Block, structured_positional


def relu(v):
    return max(v, 0)


def chart_errors(n_points: int, seed: int = 0, single_chart: bool = False):
    """Tmcheck's Theorem 2 network on the circle in R^2 (N = 3, f = x0/2 + x1/4) on n_points sampled points:
    (max_x |f(x) − T(x)|, T the network on the exact backend; per chart n max_x |f(x)ρ_n(x) − L_n(φ_n x) 1̂_n(x)|,
    the sup of its term, from `claim_parts` and the manifold's partition of unity; and max_x of |f − T|(x) minus
    the sum of the terms at x). single_chart: the points are drawn inside one chart's ball only (the first
    chart's, away from every other)."""
    from tmcheck.theory.fast_eval import evaluate_structured
    from tmcheck.theory.lemmas.theorem2 import claim_parts, rational, theorem2
    from tmcheck.theory.manifolds import make_manifold
    from tmcheck.theory.targets import parse_target

    m = make_manifold("circle", 2)
    c = theorem2(m, parse_target("x0/2 + x1/4", 2), 0.5, N=3)
    plan = c.constants["plan"]
    X = m.sample(40 * n_points, np.random.default_rng(seed))
    if single_chart:
        inside = m.in_chart(X)
        X = X[inside[:, 0] & (inside.sum(1) == 1)]
    X = X[:n_points]
    Xq = np.array([[rational(v) for v in x] for x in X], dtype=object)
    T = evaluate_structured(c.network, Xq, "exact")
    f = plan.target(X).real
    rho = m.partition(X)
    terms = np.zeros((len(X), m.C_M))
    for k, x in enumerate(Xq):
        for n, (Ln, ind, _) in enumerate(claim_parts(plan, x)):
            terms[k, n] = abs(f[k] * rho[k, n] - float(Ln * ind))
    err = np.abs(f - np.array([float(t) for t in T]))
    return float(err.max()), terms.max(0), float(np.max(err - terms.sum(1)))


@obligation(
    "theorem2.error_decomposition",
    "Appendix E.2, Step 2: the error decomposition",
    "||f − T_f||_{L∞(M)} = Σ_n ||f̃_n∘φ_n 1_{U_n} − T_{f̃_n}∘T_{φ_n} T_{1_{U_n}}||_{L∞(M)}.",
    "exact",
    "the inequality; the rest of the proof only uses <=.",
    kind=Kind.STEP,
    satisfied={"single_chart": True},
)
def error_decomposition(seeds=(0, 1, 2), n_points: int = 12, single_chart: bool = False) -> Evidence:
    """Per sample of the circle: the sup of tmcheck's network error against the sum over charts of the sups of the
    chart terms (`chart_errors`): equal as written. Corrected, point by point: |f − T|(x) at most the sum of the
    chart terms at x (which needs T = Σ_n L_n 1̂_n and Σ_n ρ_n = 1, so a wrong network or partition breaks it);
    the sup-form inequality follows. Inside one chart the sums have one term."""
    rows = [chart_errors(n_points, seed, single_chart) for seed in seeds]
    at = [{"seed": s_} for s_ in seeds]
    return Evidence(
        f"{len(seeds)} samples of {n_points} points of the circle in R^2{' inside one chart' if single_chart else ''}, "
        "tmcheck's network (N = 3, exact backend): sup |f − T| against Σ_n sup of the chart terms",
        [Witness(a, err, float(sups.sum()), "==") for a, (err, sups, _) in zip(at, rows, strict=True)],
        [Witness(a, excess, 1e-12, "<=") for a, (_, _, excess) in zip(at, rows, strict=True)],
        "|f − T_f|(x) <= Σ_n |f̃_n∘φ_n 1_{U_n} − T_{f̃_n}∘T_{φ_n} T_{1_{U_n}}|(x) at every x, hence ||f − T_f||_{L∞(M)} "
        "<= Σ_n ||f̃_n∘φ_n 1_{U_n} − T_{f̃_n}∘T_{φ_n} T_{1_{U_n}}||_{L∞(M)}.",
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
def delta_split(epss=(0.1, 0.3, 0.5), C_Ms=(1, 7, 14)) -> Evidence:
    """Symbolic, and theory.bounds.theorem2_resources' δ_1 (with μ = C_M, the paper's split) at numeric ε, C_M."""
    e, C = sp.symbols("epsilon C_M", positive=True)
    wits = [Witness({}, C * e / (2 * C) + C * e / (2 * C), e, "==")]
    for eps in epss:
        for cm in C_Ms:
            d1 = bounds.theorem2_resources(1, 2, eps, C_M=cm)["delta_1"]
            wits.append(Witness({"eps": eps, "C_M": cm}, abs(2 * cm * d1 - eps) / eps, 1e-12, "<="))
    return Evidence(
        "symbolic in ε, C_M > 0; theory.bounds at ε in " + str(list(epss)) + ", C_M in " + str(list(C_Ms)), wits
    )


def ramp(s: F, r2: F, Delta: F) -> F:
    """The approximate indicator as written: 1, then 1 − s/Δ + (r² − Δ)/Δ, then 0."""
    if s <= r2 - Delta:
        return F(1)
    if s < r2:
        return 1 - s / Delta + (r2 - Delta) / Delta
    return F(0)


def network_indicator(s: F, r2: F, L: int, deep: bool, S_I: int = 10) -> F:
    """tmcheck's indicator FFN (`theorem2.psi_indicator_ffn`, Δ = 2^-L) in a block on a token whose row 1 holds
    s + S_I (the indicator's mailbox), on the exact backend: row 0 afterwards."""
    H = np.empty((1, 5, 1), dtype=object)
    H[0] = structured_positional(1, "exact")
    H[0, 0, 0], H[0, 1, 0] = F(0), s + S_I
    return run_blocks([Block((), psi_indicator_ffn(2, S_I, r2, L, deep))], H, "exact")[0, 0, 0]


@obligation(
    "theorem2.ramp_indicator",
    "Appendix E.2, Step 2.3a: the approximate indicator",
    "1̂_{r²,Δ}(s) = 1 for s <= r² − Δ, 1 − s/Δ + (r² − Δ)/Δ on (r² − Δ, r²), 0 for s >= r², "
    "and 1̂_{r²,Δ}(s) = σ(1 − σ((s − (r² − Δ))/Δ)).",
    "exact",
    "theory's indicator FFN implements σ(1 − σ((s − r² + Δ)/Δ)).",
    kind=Kind.STEP,
)
def ramp_indicator(r2=F(1, 4), Delta=F(1, 20), L: int = 4) -> Evidence:
    """The piecewise form against the ReLU form (Δ = 1/20), and at Δ = 2^-L: tmcheck's 1̂ (`indicator_hat`) and its
    indicator FFN, shallow and deep (`network_indicator`), against the piecewise form."""
    pts = [F(k, 400) for k in range(-40, 400)]
    wits = [Witness({"s": s}, ramp(s, r2, Delta), relu(1 - relu((s - (r2 - Delta)) / Delta)), "==") for s in pts]
    D2 = F(1, 2**L)
    for s in [s for s in pts[::8] if s >= 0]:  # the indicator reads s = ||x − c||² >= 0
        wits.append(
            Witness({"s": s, "Delta": D2, "form": "tmcheck 1̂"}, indicator_hat(s, r2, D2), ramp(s, r2, D2), "==")
        )
        for deep in (False, True):
            wits.append(
                Witness(
                    {"s": s, "Delta": D2, "form": f"tmcheck FFN {'deep' if deep else 'shallow'}"},
                    network_indicator(s, r2, L, deep),
                    ramp(s, r2, D2),
                    "==",
                )
            )
    return Evidence(
        f"440 rationals s in [−1/10, 1), r² = {r2}, Δ = {Delta} (exact): the piecewise form against the ReLU form; "
        f"tmcheck's indicator at Δ = {D2} on every 8th s >= 0 (s = ||x − c||²)",
        wits,
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


def network_deep_ramp(Delta: float, r2: F = F(1, 4)) -> tuple[int, F]:
    """tmcheck's deep indicator at Δ' = 2^-K <= Δ, K = ceil(log2(1/Δ)) (`theorem2.psi_indicator_ffn`, K layers of
    weight 2): (the points of a grid of 81 rationals in [0, 1/2] where it differs from 1̂_{r², Δ'}, its largest
    weight)."""
    K = math.ceil(math.log2(1 / Delta) - 1e-12)
    D2 = F(1, 2**K)
    bad = sum(network_indicator(F(k, 160), r2, K, True) != indicator_hat(F(k, 160), r2, D2) for k in range(81))
    top = max(abs(v) for lay in psi_indicator_ffn(2, 10, r2, K, True)[1:-2] for v in lay.W.reshape(-1))
    return bad, top


@obligation(
    "theorem2.deep_ramp",
    "Appendix E.2, Step 2.3a: the deep ramp",
    "With log(1/Δ) layers of weight (1/Δ)^{1/log(1/Δ)}, σ(1 − σ(a σ(… σ(a(s − (r² − Δ)))…))) = 1̂_{r²,Δ}(s) "
    "and the weights stay bounded.",
    "exact",
    "theory uses K = ceil(log2(1/Δ)) layers of weight 2 at Δ' = 2^-K <= Δ.",
    kind=Kind.STEP,
    satisfied={"Deltas": (math.exp(-1), math.exp(-2), math.exp(-3))},
)
def deep_ramp(Deltas=(0.1, 0.05, 0.2)) -> Evidence:
    """Written: is the depth log(1/Δ) an integer? Corrected: tmcheck's deep indicator FFN (`network_deep_ramp`, exact
    backend) equals 1̂ on the grid, with weights at most 2."""
    at = [{"Delta": D} for D in Deltas]
    corr = []
    for a, D in zip(at, Deltas, strict=True):
        bad, top = network_deep_ramp(D)
        corr.append(Witness(a, bad + max(F(0), top - 2), 0, "<="))
    return Evidence(
        f"Δ in {list(Deltas)}: is the depth log(1/Δ) an integer? corrected: tmcheck's deep indicator at Δ' = 2^-K, "
        "K = ceil(log2(1/Δ)), against 1̂ on 81 points of [0, 1/2], and its weights against 2",
        [Witness(a, math.log(1 / D), round(math.log(1 / D)), "==") for a, D in zip(at, Deltas, strict=True)],
        corr,
        "K = ceil(log2(1/Δ)) layers of weight 2 compute 1̂_{r², 2^-K} exactly (σ is positively homogeneous).",
        note="A depth must be an integer; (1/Δ)^(1/ln(1/Δ)) = e exactly, so the weights are bounded as claimed. "
        f"(the float64 form with K = ceil(ln(1/Δ)) layers of weight (1/Δ)^(1/K) has error "
        f"{max(deep_ramp_error(D, math.ceil(math.log(1 / D))) for D in Deltas):.2g}.)",
    )


def projection_block(v, c, M: F, s_n: F, u_n: F, W: F, b: F) -> F:
    """Step 2.2 as a block of tmcheck's composition layer (`sparse.SparseBlock`, `sparse.realize`), run on the exact
    backend: D tokens x^j (row 0) and the target token D; head j writes σ(v^j(x^j − c^j) + 2M) into row 0 of token
    D; the FFN is one layer W e_1e_1^T + b e_1 (1-based rows). Returns row 0 of token D after the block, whose
    output is H + MHA(H) + FFN(H + MHA(H)) (Def. 3). Inputs x come through `x`; this returns a function of x."""
    D = len(v)
    its = [
        sparse.Interaction(
            D, j, 0, (sparse.ONE, sparse.ZERO), (sparse.kernel_row(v[j], -v[j] * c[j] + 2 * M), sparse.ZERO)
        )
        for j in range(D)
    ]
    ffn = (sparse.exact_layer([[W, 0, 0, 0, 0]] + [[0] * 5] * 4, [b, 0, 0, 0, 0]),)
    blocks, _ = sparse.realize([sparse.SparseBlock(its, ffn, M)], D + 1, "exact")

    def run(x):
        H = np.empty((1, 5, D + 1), dtype=object)
        H[0] = structured_positional(D + 1, "exact")
        H[0, 0, :], H[0, 1, :] = list(x) + [F(0)], F(0)
        return run_blocks(blocks, H, "exact")[0, 0, D]

    return run


@obligation(
    "theorem2.projection_head",
    "Appendix E.2, Step 2.2: the chart projection φ_n(x) = s_n(V_n^T(x − c_n) + u_n)",
    "A_{i,j}(h_{D+i}) = σ(v^j_{n,i}(x^j − c^j_n) + 2M) e_1 = (v^j_{n,i}(x^j − c^j_n) + 2M) e_1, the MHA sums to "
    "<v_{n,i}, x − c_n> + 2DM, and W_1 maps it to s_n(<v_{n,i}, x − c_n> + u_n).",
    "exact",
    "a scalar u_n suffices (u_n = r, s_n = 1/(2r) put φ_n(U_n) in [0,1]^d); tmcheck's chart block (mailbox FFN, "
    "theorem2.network_exact_projection) computes φ_n exactly with the block's residual counted.",
    kind=Kind.STEP,
    satisfied={"ffn": "residual"},
)
def projection_head(n_points: int = 40, ffn: str = "paper") -> Evidence:
    """Step 2.2 built with tmcheck's composition layer and run on the exact backend (`projection_block`): as
    written (W_1 = s_n, b = s_n(u_n − 2DM)), and corrected with the block's residual counted (W_1 = s_n − 1);
    ffn="residual" runs the corrected FFN as the written one too. Per point, the MHA sum and the block's output."""
    rng = np.random.default_rng(0)
    M = F(1)
    V = [(F(3, 5), F(4, 5), F(0)), (F(-4, 5), F(3, 5), F(0))]  # orthonormal rows, D = 3, d = 2
    s_n, u_n, D = F(1, 2), F(1), 3
    b = s_n * (u_n - 2 * D * M)
    wits, corr = [], []
    for p in range(n_points):
        x = [F(int(k), 8) for k in rng.integers(-8, 9, size=3)]
        c = [F(int(k), 8) for k in rng.integers(-8, 9, size=3)]
        for i, v in enumerate(V):
            inner = sum(v[j] * (x[j] - c[j]) for j in range(3))
            mha = projection_block(v, c, M, s_n, u_n, F(0), F(0))(x)  # no FFN: the heads' sum
            paper = projection_block(v, c, M, s_n, u_n, s_n if ffn == "paper" else s_n - 1, b)(x)
            fixed = projection_block(v, c, M, s_n, u_n, s_n - 1, b)(x)
            at = {"point": p, "row": i}
            wits += [
                Witness({**at, "quantity": "MHA sum"}, mha, inner + 2 * D * M, "=="),
                Witness({**at, "quantity": "block output"}, paper, s_n * (inner + u_n), "=="),
            ]
            corr += [
                Witness({**at, "quantity": "MHA sum"}, mha, inner + 2 * D * M, "=="),
                Witness({**at, "quantity": "block output"}, fixed, s_n * (inner + u_n), "=="),
            ]
    return Evidence(
        f"{n_points} random x, c in [−M, M]^3 (M = 1), orthonormal rational v; the block built by tmcheck's "
        "composition layer on the exact backend",
        wits,
        corr,
        "The block adds its input (Def. 3): W_1 = (s_n − 1) e_1e_1^T with bias s_n(u_n − 2DM) e_1 leaves "
        "s_n(<v_{n,i}, x − c_n> + u_n); tmcheck's chart block uses a mailbox FFN instead "
        "(theorem2.network_exact_projection).",
        note="With W_1 = s_n the block outputs MHA + s_n·MHA + b = (1 + s_n)<v, x − c> + ..., the residual counted "
        "twice.",
    )


def final_product(c_f: F, c_U: F, M: F) -> F:
    """Row 1 of token D+i after B_1 of Step 3: c_f + σ(c_f c_U − c_f + M), then the FFN subtracts M."""
    return c_f + relu(c_f * c_U - c_f + M) - M


def network_product(c_f: F, c_U: F, R: F) -> F:
    """tmcheck's f_n head (`sparse.fvalue_interactions` with the bound R, realized by `sparse.realize`) on a token
    holding the product c_U in row 0, exact backend: row 1 minus the offset R."""
    its = sparse.fvalue_interactions([c_f], 0, 1, R)
    blocks, _ = sparse.realize([sparse.SparseBlock(its, (), max(F(1), abs(c_U)))], 1, "exact")
    H = np.empty((1, 5, 1), dtype=object)
    H[0] = structured_positional(1, "exact")
    H[0, 0, 0], H[0, 1, 0] = c_U, F(0)
    return run_blocks(blocks, H, "exact")[0, 1, 0] - R


@obligation(
    "theorem2.final_product",
    "Appendix E.2, Step 3: multiplying the chart value by the indicator",
    "With Q^data = [[1,0,0,0,0],[−1,0,0,0,M]], K^data = [[1,0,0,0,0],[0,0,0,0,1]]: "
    "A_i(h_{D+i}) = σ(c_{f_i} c_{U_i} − c_{f_i} + M) e_1 = (c_{f_i} c_{U_i} − c_{f_i} + M) e_1, then "
    "subtracting M leaves c_{f_i} c_{U_i}.",
    "exact",
    "tmcheck's f_n heads use the offset R >= sup|f| (sparse.fvalue_interactions), not the input bound M.",
    kind=Kind.STEP,
    satisfied={"R": F(1, 2)},
)
def final_product_check(R=F(2), M=F(1)) -> Evidence:
    """c_f in [−R, R] (the chart value, bounded by R), c_U in {0, 1/2, 1} (the indicator), offset M (as written);
    corrected: tmcheck's f_n head, offset R (`network_product`)."""
    pts = [(cf, cu) for cf in (-R, -R / 2, F(0), R / 2, R) for cu in (F(0), F(1, 2), F(1))]
    at = [{"c_f": cf, "c_U": cu, "M": M, "R": R} for cf, cu in pts]
    return Evidence(
        f"c_f in [−R, R], R = {R}, c_U in {{0, 1/2, 1}}, M = {M}: the block's value against c_f c_U",
        [Witness(a, final_product(cf, cu, M), cf * cu, "==") for a, (cf, cu) in zip(at, pts, strict=True)],
        [Witness(a, network_product(cf, cu, R), cf * cu, "==") for a, (cf, cu) in zip(at, pts, strict=True)],
        "use an offset >= sup|c_f c_U| (tmcheck: the bound R of |f|) in the head and in the FFN that subtracts it.",
        note="σ(c_f(c_U − 1) + M) = c_f(c_U − 1) + M needs M >= |c_f| when c_U = 0; M bounds ||x||∞, while c_f ≈ "
        "f̃_n is bounded by R.",
    )


@obligation(
    "theorem2.resources_d_dependence",
    "Theorem 2 (Section 2.4): the resources",
    "l = O(d ε^{−d/β}), m = O(d ε^{−d/β}), κ = O(d² ε^{−2d/β}), O(·) hiding terms in C_M, D, H_f, τ.",
    "exact",
    "theory.bounds.theorem2_resources reports the explicit l and m.",
    kind=Kind.RESOURCE,
    satisfied={"ds": (1, 2), "epss": (0.5, 0.4, 0.3)},
)
def resources_d_dependence(ds=tuple(range(1, 7)), epss=(0.5,)) -> Evidence:
    def ratio(dd, eps):
        r = bounds.theorem2_resources(dd, 1, eps, C_M=1)
        return r["m"] / r["stated_order_l_m"]

    return Evidence(
        f"ε in {list(epss)}, C_M = D = H_f = β = 1, d in {list(ds)}: m/(d ε^(−d)) of the construction against "
        f"{ORDER_SLACK}× its value at d = 1",
        [Witness({"d": dd, "eps": e}, ratio(dd, e), ORDER_SLACK * ratio(1, e), "<=") for e in epss for dd in ds],
        note="Each chart runs Lemma 1 at accuracy δ_1 = ε/(2C_M), so m ≈ C_M d N^d with N ≈ (2/3)√d (2C_M "
        "H_f/ε)^(1/β): "
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
    satisfied={"betas": (F(1),), "ds": (1, 2, 3, 4)},
)
def heads_exponent(betas=(F(1, 2), F(1)), ds=(1, 2), delta=F(1, 4)) -> Evidence:
    """Per (β, d): the power of 1/δ in the heads per chart Step 3 writes, d δ^{−d}, against the power of 1/δ in
    the f_n heads of tmcheck's chart network (`spec.theorem2_counts` at Lemma 1's tight N for δ, `targets.tight_N`),
    measured between δ = 10^-6 and 10^-7 (it tends to d/β)."""
    from tmcheck.theory.spec import Theorem2Layout, theorem2_counts
    from tmcheck.theory.targets import tight_N

    def heads(dd, b, dl):
        counts, _, _ = theorem2_counts(Theorem2Layout(dd, 1, tight_N(dd, 1.0, float(b), dl), 1), 1)
        return dict(counts)["f_n"]

    def power(dd, b):
        return math.log(heads(dd, b, 1e-7) / heads(dd, b, 1e-6)) / math.log(10)

    pts = [(b, dd) for b in betas for dd in ds]
    return Evidence(
        f"β in {[str(b) for b in betas]}, d in {list(ds)}, δ_1 = {delta}: the power of 1/δ",
        [Witness({"beta": b, "d": dd, "delta": delta}, dd * (1 + 1e-6), power(dd, b), ">=") for b, dd in pts],
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
    satisfied={"epss": (F(1, 2), F(2, 5), F(1, 3))},
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
        [Witness(a, depth[e], depth[e0], "<=") for a, e in zip(at, epss, strict=True)],
        [Witness(a, blocks[e], blocks[e0], "<=") for a, e in zip(at, epss, strict=True)],
        "O(log d) transformer blocks independent of ε, with feed-forward depth O(log ε^{−1}) (Theorem 2); "
        "depth independent of ε holds for Lemma 1 on [0,1]^d only.",
        note="L_T = O(log d) counts transformer blocks only; the indicator 1_{U_n} needs a deep ramp with "
        "ceil(ln(1/Δ)) "
        "layers, Δ ∝ ε (Step 2.3a).",
    )
