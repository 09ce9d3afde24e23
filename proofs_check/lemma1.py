"""Lemma 1 (Section 2.4, proof in Appendix E.1): piecewise-constant approximation on [0,1]^d.

Obligations for the partition of unity (ψ, the scale 3N vs 3(N−1), the grid centres), the error
chain and the choice of N, the resources as functions of d, the token indexing of Steps 2-3, the
product tree, and the final two blocks (run on tmcheck's exact backend). h = 1/(N−1) is the grid step.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction as F

import numpy as np
import sympy as sp

from tmcheck.proofs_check.registry import Result, Verdict, obligation
from tmcheck.theory import bounds
from tmcheck.theory.backends import run_blocks
from tmcheck.theory.network import Block, Layer


def psi_as_written(x: F) -> F:
    """ψ(x) = 1 on |x| <= 1, 1 − |x| on 1 <= |x| <= 2, 0 on |x| >= 2 (Appendix E.1)."""
    a = abs(x)
    return F(1) if a <= 1 else (1 - a if a <= 2 else F(0))


def psi(x: F) -> F:
    """The trapezoid ψ(x) = 1 on |x| <= 1, 2 − |x| on 1 <= |x| <= 2, 0 beyond (the corrected ψ)."""
    a = abs(x)
    return F(1) if a <= 1 else (2 - a if a <= 2 else F(0))


def pou_sum(x: F, N: int, scale, psi_fn=psi) -> F:
    """Σ_{j=1}^N ψ(scale·(x − (j−1)/(N−1)))."""
    return sum(psi_fn(scale * (x - F(j - 1, N - 1))) for j in range(1, N + 1))


@obligation(
    "lemma1.psi_partition_of_unity",
    "Appendix E.1, proof of Lemma 1: the trapezoid ψ and eq. (18)",
    "ψ(x) = 1 for |x| <= 1, 1 − |x| for 1 <= |x| <= 2, 0 for |x| >= 2, and the φ_n form a partition of unity.",
    "exact",
    "theory's Lemma 1 uses ψ(x) = 2 − |x| on 1 <= |x| <= 2 (the trapezoid), with scale 3(N−1).",
)
def psi_partition_of_unity() -> Result:
    N, x = 3, F(1, 4)
    written = pou_sum(x, N, 3 * (N - 1), psi_as_written)
    grid = [F(k, 240) for k in range(241)]
    ok = all(pou_sum(t, n, 3 * (n - 1)) == 1 for n in range(2, 7) for t in grid)
    return Result(
        Verdict.CORRECTED,
        f"As written ψ is discontinuous at |x| = 1 (1 vs 0) and negative on (1, 2): ψ(3/2) = {psi_as_written(F(3, 2))}. "
        f"For N = 3 at x = 1/4 the functions sum to {written}, not 1. With ψ = 2 − |x| on [1, 2] the sum "
        f"Σ_j ψ(3(N−1)(x − (j−1)/(N−1))) is exactly 1 at all 241 points k/240 of [0, 1] for N = 2..6: {ok}; the "
        "product over coordinates is then a partition of unity on [0,1]^d.",
        counterexample={"psi(3/2)": str(psi_as_written(F(3, 2))), "N": N, "x": "1/4", "sum": str(written)},
        corrected="ψ(x) = 1 on |x| <= 1, 2 − |x| on 1 <= |x| <= 2, 0 on |x| >= 2.",
        data={"corrected_is_pou": ok},
    )


@obligation(
    "lemma1.pou_scale",
    "Appendix E.1, eq. (18) vs Step 2",
    "φ_n(x) = Π_i ψ(3N(x^i − (n^i−1)/(N−1))) (eq. 18), while Step 2 computes ψ(3(N−1)(x^i − (j−1)/(N−1))).",
    "exact",
    "theory uses the scale 3(N−1) of Step 2.",
)
def pou_scale() -> Result:
    N, x = 2, F(1, 2)
    s = pou_sum(x, N, 3 * N)
    return Result(
        Verdict.FAILS,
        f"With the scale 3N the bumps are too narrow for the grid step 1/(N−1): N = 2, x = 1/2 gives "
        f"Σ_j ψ(6(x − (j−1))) = {s} (even with the corrected ψ), so eq. (18) is not a partition of unity. "
        f"With 3(N−1) the same sum is {pou_sum(x, N, 3 * (N - 1))}.",
        counterexample={"N": N, "x": "1/2", "scale": "3N", "sum": str(s)},
        corrected="φ_n(x) = Π_i ψ(3(N−1)(x^i − (n^i−1)/(N−1))).",
    )


@obligation(
    "lemma1.grid_centers",
    "Appendix E.1, proof of Lemma 1: the blocks U_n and the values f_n",
    "U_n = {x in [0,1]^d : |x^i − n^i/(N−1)| <= 1/(N−1)}, n in {1..N}^d, and f_n = f(x_n), x_n the centre of U_n.",
    "exact",
    "theory centres φ_n and takes f_n at x_n = (n − 1)/(N−1) in [0,1]^d.",
)
def grid_centers() -> Result:
    N = 2
    centre = F(N, N - 1)
    return Result(
        Verdict.FAILS,
        f"The centre of U_n is n/(N−1), one grid step away from φ_n's centre (n−1)/(N−1), and for n^i = N it is "
        f"N/(N−1) = {centre} (N = 2) outside [0, 1], where f is not defined: f_n = f(x_n) does not exist.",
        counterexample={"N": N, "n": N, "centre": str(centre)},
        corrected="U_n and f_n = f(x_n) with x_n = (n − 1)/(N−1), the centre of φ_n.",
    )


def holder_test(d: int, N: int, beta: float, a: np.ndarray, pts: np.ndarray) -> tuple[float, float]:
    """(sup |f − f̂| over pts, H_f((2/3)√d/(N−1))^β) for f(x) = ||x − a||₂^β (H_f = 1), float64."""
    c = np.arange(N) / (N - 1)

    def psi_v(t):
        return np.clip(2 - np.abs(t), 0, 1)

    S = psi_v(3 * (N - 1) * (pts[:, :, None] - c[None, None, :]))  # (P, d, N)
    fx = np.linalg.norm(pts - a, axis=1) ** beta
    fhat = np.zeros(len(pts))
    for n in itertools.product(range(N), repeat=d):
        phi = np.prod([S[:, i, n[i]] for i in range(d)], axis=0)
        fhat += phi * np.linalg.norm(c[list(n)] - a) ** beta
    err = float(np.abs(fx - fhat).max())
    return err, ((2 / 3) * math.sqrt(d) / (N - 1)) ** beta


@obligation(
    "lemma1.error_chain",
    "Appendix E.1, proof of Lemma 1: the approximation error of f̂ = Σ_n φ_n f_n",
    "sup|f − f̂| = sup Σ_{n: |x^i − n^i/(N−1)| <= 1/(N−1)} |f(x) − f_n| <= sup 2^d max H_f||x − x_n||^β <= 2^d d^β H_f/(N−1)^β.",
    "numeric search",
    "theory's Lemma 1 uses sup|f − f̂| <= max_{n: φ_n(x) > 0} |f(x) − f_n| <= H_f((2/3)√d/(N−1))^β (Σφ_n = 1).",
)
def error_chain() -> Result:
    N, x = 3, F(1)
    boxes = [n for n in range(1, N + 1) if abs(x - F(n, N - 1)) <= F(1, N - 1)]  # U_n as written
    rng = np.random.default_rng(0)
    worst = 0.0
    for d, N_, beta in ((1, 3, 1.0), (1, 5, 0.5), (2, 3, 1.0), (2, 4, 0.7), (3, 3, 1.0)):
        pts = rng.uniform(0, 1, size=(4000, d))
        for _ in range(3):
            err, bound = holder_test(d, N_, beta, rng.uniform(0, 1, size=d), pts)
            worst = max(worst, err / bound)
    return Result(
        Verdict.CORRECTED,
        f"The sum over boxes U_n containing x has up to 3^d terms, not 2^d: d = 1, N = 3, x = 1 lies in the "
        f"{len(boxes)} boxes U_1, U_2, U_3 as written (centres 1/2, 1, 3/2). The factor is not "
        "needed: φ_n >= 0 and Σφ_n = 1 give sup|f − f̂| <= max over the <= 2^d n with φ_n(x) > 0, where "
        "|x^i − x_n^i| < (2/3)/(N−1). Measured on f = ||x − a||^β (H_f = 1), d <= 3: worst sup|f − f̂| / "
        f"((2/3)√d/(N−1))^β = {worst:.3f} <= 1.",
        counterexample={"d": 1, "N": N, "x": "1", "boxes_containing_x": len(boxes), "claimed_at_most": 2},
        corrected="sup|f − f̂| <= H_f((2/3)√d/(N−1))^β (<= 2^d d^β H_f/(N−1)^β, so the paper's final bound holds).",
        data={"worst_ratio": worst},
    )


@obligation(
    "lemma1.choice_of_N",
    "Appendix E.1, proof of Lemma 1: the choice of N",
    "It suffices to pick N = d(2^d H_f/ε)^{1/β} + 1 to obtain an ε error bound.",
    "symbolic",
    "theory.bounds.lemma1_N_corrected: N = ceil((2/3)√d (H_f/ε)^{1/β}) + 1, an integer.",
)
def choice_of_N() -> Result:
    d, Hf, eps, beta = sp.symbols("d H_f epsilon beta", positive=True)
    N = d * (2**d * Hf / eps) ** (1 / beta) + 1
    err = 2**d * d**beta * Hf / (N - 1) ** beta
    exact = sp.simplify(sp.powsimp(sp.expand_power_base(err, force=True), force=True) - eps) == 0
    val = F(1) * (2 * 1 / F(3, 10)) + 1
    return Result(
        Verdict.CORRECTED,
        f"Symbolically 2^d d^β H_f/(N−1)^β = ε at that N: {exact}. But N must be an integer (the grid has N points "
        f"per axis): d = 1, H_f = 1, β = 1, ε = 3/10 gives N = {val}.",
        counterexample={"d": 1, "H_f": 1, "beta": 1, "eps": "3/10", "N": str(val)},
        corrected="N = ceil(d(2^d H_f/ε)^{1/β}) + 1 (error <= ε as (N−1)^β only grows).",
    )


def lemma1_l_ratio(d: int, eps: F, H_f: int = 1) -> F:
    """l / (d ε^{−d}) for β = 1 with the paper's N (rounded up), l = d + dN + dN^d."""
    N = math.ceil(d * 2**d * H_f / eps) + 1
    l = d + d * N + d * N**d
    return F(l) / (d * (1 / eps) ** d)


@obligation(
    "lemma1.resources_d_dependence",
    "Lemma 1 (Section 2.4): the resources",
    "l = O(d ε^{−d/β}), m = O(d ε^{−d/β}), κ = O(d² ε^{−2d/β}), where O(·) hides terms in H_f only.",
    "exact",
    "theory.bounds.lemma1_resources reports l = d + dN + dN^d and m = dN^d with N explicit; the d-dependence is not hidden.",
)
def resources_d_dependence() -> Result:
    eps = F(1, 2)
    ratios = {d: lemma1_l_ratio(d, eps) for d in range(1, 7)}
    corr = {d: bounds.lemma1_resources(d, bounds.lemma1_N_corrected(d, 0.5))["l"] / (d * 2.0**d) for d in range(1, 7)}
    return Result(
        Verdict.FAILS,
        "The construction stores dN^d tokens and uses dN^d heads with N ≈ d(2^d H_f/ε)^{1/β}, so l/(dε^{−d/β}) ≈ "
        "d^d 2^{d²/β} H_f^{d/β}, which no constant depending on H_f alone bounds. At H_f = β = 1, ε = 1/2: "
        + ", ".join(f"d = {d}: {float(r):.3g}" for d, r in ratios.items())
        + ". With the corrected N (lemma1.error_chain) the ratio is still ≈ (2√d/3)^d: "
        + ", ".join(f"d = {d}: {r:.3g}" for d, r in corr.items())
        + ". Theorem 1's rate inherits this (theorem1.d_dependence).",
        counterexample={"eps": "1/2", "H_f": 1, "beta": 1, "ratio_l_over_d_eps^-d": {d: f"{float(r):.6g}" for d, r in ratios.items()}},
        corrected="l = d + dN + dN^d, m = dN^d with N = ceil((2/3)√d (H_f/ε)^{1/β}) + 1, i.e. l = O(d^{1+d/2} (H_f/ε)^{d/β}).",
    )


@obligation(
    "lemma1.token_count",
    "Appendix E.1, Step 1: the embedded input",
    "x' = [x, 0_{Nd+N^d}] in R^{d+Nd+N^d}, and H = E x' in R^{d_embd × (d+Nd+N^d d)}.",
    "exact",
    "theory pads x to l = d + dN + dN^d tokens.",
)
def token_count() -> Result:
    d, N = 2, 2
    return Result(
        Verdict.FAILS,
        f"E = [1,0,0,0,0]^T applied column-wise keeps the number of columns: x' has d + Nd + N^d = {d + N * d + N**d} "
        f"entries but H has d + Nd + N^d d = {d + N * d + N**d * d} columns (d = N = 2).",
        counterexample={"d": d, "N": N, "len_x_prime": d + N * d + N**d, "columns_H": d + N * d + N**d * d},
        corrected="x' = [x, 0_{Nd + N^d d}], l = d + Nd + N^d d.",
    )


@obligation(
    "lemma1.token_index_s",
    "Appendix E.1, Steps 2-3: where s_{i,j} is stored",
    "s_{i,j} is stored in token h_{ij} = h_{d + i·d + j} (1 <= i <= d, 1 <= j <= N), inside h_{d+1}, ..., h_{d+Nd}; "
    "Step 3 reads it from k = d + id + n^i.",
    "exact",
    "theory stores s_{i,j} in token d + (i−1)N + j (1-based).",
)
def token_index_s() -> Result:
    d, N = 2, 3
    idx = {(i, j): d + i * d + j for i in range(1, d + 1) for j in range(1, N + 1)}
    seen: dict[int, tuple[int, int]] = {}
    clash = next(((seen[v], k) for k, v in idx.items() if v in seen or seen.setdefault(v, k) is None), None)
    out = max(idx.values())
    fixed = sorted(d + (i - 1) * N + j for i in range(1, d + 1) for j in range(1, N + 1))
    return Result(
        Verdict.FAILS,
        f"d = 2, N = 3: (i, j) = {clash[0]} and {clash[1]} both map to token {idx[clash[0]]}, and the largest index "
        f"{out} exceeds d + Nd = {d + N * d}. The index d + (i−1)N + j is a bijection onto d+1..d+Nd: {fixed == list(range(d + 1, d + N * d + 1))}.",
        counterexample={"d": d, "N": N, "pair_1": list(clash[0]), "pair_2": list(clash[1]), "token": idx[clash[0]]},
        corrected="s_{i,j} in token d + (i−1)N + j.",
    )


def product_slot(n: tuple[int, ...], i: int, d: int, N: int) -> int:
    """h_{n,i} = h_{d + Nd + d Σ_p (n^p − 1) N^{d−p} + i} (Step 3, as written; 1-based)."""
    return d + N * d + d * sum((n[p - 1] - 1) * N ** (d - p) for p in range(1, d + 1)) + i


def final_slot(n: tuple[int, ...], d: int, N: int) -> int:
    """The token B_{log d+3} reads φ_n from: d + Nd + Σ_p (n^p − 1) N^p + 1 (as written)."""
    return d + N * d + sum((n[p - 1] - 1) * N**p for p in range(1, d + 1)) + 1


@obligation(
    "lemma1.token_index_products",
    "Appendix E.1, Step 3: the slots of the partial products",
    "h_{n,i} = h_{d+Nd+dΣ_p(n^p−1)N^{d−p}+i}, n in {1..N}^d, 1 <= i <= d, fill tokens d+Nd+1, ..., d+Nd+N^d d.",
    "exact",
    "theory uses this index.",
)
def token_index_products() -> Result:
    ok = True
    for d in range(1, 4):
        for N in range(2, 5):
            got = sorted(product_slot(n, i, d, N) for n in itertools.product(range(1, N + 1), repeat=d) for i in range(1, d + 1))
            ok &= got == list(range(d + N * d + 1, d + N * d + N**d * d + 1))
    return Result(Verdict.HOLDS, f"bijection onto d+Nd+1..d+Nd+N^d d for every d <= 3, 2 <= N <= 4: {ok}") if ok else Result(
        Verdict.FAILS, "not a bijection", counterexample={"d_max": 3, "N_max": 4}
    )


@obligation(
    "lemma1.token_index_final",
    "Appendix E.1, Step 3: reading φ_n for the product with f_n",
    "φ_n(x) = P^{d+Nd+Σ_p(n^p−1)N^p+i}, and A_n reads h_{d+Nd+Σ_p(n^p−1)N^p+1} = h_{n,1}.",
    "exact",
    "theory reads φ_n from h_{n,1} = h_{d+Nd+dΣ_p(n^p−1)N^{d−p}+1}.",
)
def token_index_final() -> Result:
    d, N = 2, 2
    n = (2, 1)
    a, b = final_slot(n, d, N), product_slot(n, 1, d, N)
    far = max(final_slot(m, 2, 3) for m in itertools.product(range(1, 4), repeat=2))
    return Result(
        Verdict.FAILS,
        f"d = N = 2, n = (2, 1): the formula gives token {a}, but φ_n was assembled in h_{{n,1}} = token {b}. "
        f"For d = 2, N = 3 it reaches token {far} > l = {2 + 6 + 18}. (Step 3 also writes "
        "k ≠ d+Nd+Σ(n^p−1)N^{d−p}+i without the factor d.)",
        counterexample={"d": d, "N": N, "n": list(n), "formula_token": a, "h_n1_token": b},
        corrected="φ_n is in h_{n,1} = h_{d+Nd+dΣ_p(n^p−1)N^{d−p}+1}.",
    )


@obligation(
    "lemma1.step2_kernel",
    "Appendix E.1, Step 2: the data kernels of head A_ij",
    "With Q^data = [[0,0,0,0,1],[0,0,0,0,1]], K^data = [[1,0,0,0,0],[0,0,0,0,−j/(N−1)+1]]: "
    "<Q^data h_ij, K^data h_k> = h_k^1 − (j−1)/(N−1) + 1.",
    "exact",
    "theory's Step 2 uses K^data row 2 = (0,0,0,0, 1 − (j−1)/(N−1)).",
)
def step2_kernel() -> Result:
    N, j, x = 3, 1, F(1, 2)
    q = np.array([[0, 0, 0, 0, 1], [0, 0, 0, 0, 1]], dtype=object)
    k = np.array([[1, 0, 0, 0, 0], [0, 0, 0, 0, 1 - F(j, N - 1)]], dtype=object)
    h_ij = np.array([0, 0, 0, 0, 1], dtype=object)
    h_k = np.array([x, 0, 0, 0, 1], dtype=object)
    got = (q @ h_ij) @ (k @ h_k)
    claimed = x - F(j - 1, N - 1) + 1
    return Result(
        Verdict.FAILS,
        f"N = 3, j = 1, h_k^1 = x = 1/2: the kernels give {got}, the text {claimed}: the constant is −j/(N−1), "
        "one grid step off from the −(j−1)/(N−1) that ψ needs.",
        counterexample={"N": N, "j": j, "x": "1/2", "kernel_value": str(got), "claimed": str(claimed)},
        corrected="K^data = [[1,0,0,0,0],[0,0,0,0,1 − (j−1)/(N−1)]].",
    )


def tree_as_written(s: list, d: int):
    """p_{n,k,i} = p_{n,k−1,2i−1} p_{n,k−1,2i}, p_{n,1,i} = s_i, 1 <= k <= log2 d, 1 <= i <= d/2^k; returns
    p_{n,log d,1} (what the proof calls φ_n), or None when an index is not an integer."""
    K = math.log2(d)
    if K != int(K) or K < 1:
        return None
    level = {i: s[i - 1] for i in range(1, d // 2 + 1)}  # k = 1: i <= d/2
    for k in range(2, int(K) + 1):
        level = {i: level[2 * i - 1] * level[2 * i] for i in range(1, d // 2**k + 1)}
    return level[1]


def tree_corrected(s: list):
    """ceil(log2 d) levels above the leaves; an odd one out is multiplied by the constant 1."""
    level = list(s)
    while len(level) > 1:
        if len(level) % 2:
            level.append(1)
        level = [level[2 * i] * level[2 * i + 1] for i in range(len(level) // 2)]
    return level[0]


@obligation(
    "lemma1.product_tree",
    "Appendix E.1, Step 3 and Figure 7: the partial products",
    "p_{n,k,i} = p_{n,k−1,2i−1}·p_{n,k−1,2i}, p_{n,1,i} = s_{i,n^i}, 1 <= k <= log2(d), 1 <= i <= d/2^k; "
    "at k = log(d), p_{n,log(d),1} = φ_n(x).",
    "symbolic",
    "theory multiplies in ceil(log2 d) levels above the d leaves, padding an odd level with the constant 1.",
)
def product_tree() -> Result:
    s4 = sp.symbols("s1:5")
    top4 = tree_as_written(list(s4), 4)
    ok = all(sp.expand(tree_corrected(list(sp.symbols(f"s1:{d + 1}"))) - sp.Mul(*sp.symbols(f"s1:{d + 1}"))) == 0 for d in range(1, 10))
    return Result(
        Verdict.FAILS,
        f"Level k holds products of 2^(k−1) leaves, so level log2 d holds products of d/2 of them: for d = 4, "
        f"p_(n,2,1) = {top4}, not s1·s2·s3·s4 (and i <= d/2^k leaves only d/2 leaves at k = 1). For d not a power "
        f"of 2 (d = 3) the index range d/2^k is not an integer. With levels 1..ceil(log2 d)+1 and padding by 1 the "
        f"top equals Π s_i for d = 1..9: {ok}.",
        counterexample={"d": 4, "top_as_written": str(top4), "phi_n": "s1*s2*s3*s4"},
        corrected="levels k = 1..ceil(log2 d)+1 with ceil(d/2^(k−1)) entries, padding odd levels by 1; φ_n = p_{n,ceil(log2 d)+1,1}.",
    )


def run_ffn_block(W: list[list], H: np.ndarray) -> np.ndarray:
    """B(H) = FFN(H) + H for a block with no heads and a one-layer FFN W (Def. 3), exactly."""
    blk = Block((), (Layer(np.array(W, dtype=object), np.zeros(len(W), dtype=object)),))
    return run_blocks([blk], H, "exact")[0]


@obligation(
    "lemma1.residual_subtraction",
    "Appendix E.1, blocks B_{log d+3} and B_{log d+4}: the FFNs that subtract R and lR",
    "W_1 = e_2(e_2 − R e_5)^T subtracts R from row 2, and W_1 = e_1(e_1 − lR e_5)^T then leaves h^1 = Σ_n f_n φ_n.",
    "exact",
    "theory's FFNs output only the correction, −R e_5 (resp. −lR e_5) in the target row: the block adds its input back.",
)
def residual_subtraction() -> Result:
    R, fphi = F(1), F(1, 2)
    H = np.array([[0], [fphi + R], [0], [1], [1]], dtype=object)  # one token after MHA: row 2 = f_nφ_n + R
    W = [[0] * 5, [0, 1, 0, 0, -R], [0] * 5, [0] * 5, [0] * 5]
    out = run_ffn_block(W, H)
    Wc = [[0] * 5, [0, 0, 0, 0, -R], [0] * 5, [0] * 5, [0] * 5]
    fixed = run_ffn_block(Wc, H)
    return Result(
        Verdict.FAILS,
        f"A block adds its FFN's output to its input (Def. 3). With f_nφ_n = 1/2, R = 1 the token after the MHA has "
        f"row 2 = 3/2; the FFN as written adds 3/2 − 1, giving row 2 = {out[1, 0]} instead of 1/2. The FFN of "
        f"B_(log d+4) doubles row 1 the same way. With W_1 row 2 = (0,0,0,0,−R): {fixed[1, 0]}. (B_3's FFN, with −1 "
        "on the diagonal, does account for the residual.)",
        counterexample={"R": "1", "f_n_phi_n": "1/2", "row2_after_block": str(out[1, 0]), "claimed": "1/2"},
        corrected="W_1 = −R e_2 e_5^T in B_{log d+3} and −lR e_1 e_5^T in B_{log d+4}.",
    )


@obligation(
    "lemma1.final_sum_head",
    "Appendix E.1, block B_{log d+4}: the summing head",
    "With Q = e_1e_5^T + R e_5e_5^T, K = e_1e_2^T + e_5e_5^T, V = e_1e_5^T: A_1 h_t = Σ_k σ(h_k^2 + R) e_1 = (lR + Σ f_nφ_n) e_1.",
    "exact",
    "theory uses this head.",
)
def final_sum_head() -> Result:
    from tmcheck.theory.network import Head

    def m(entries):
        a = np.zeros((5, 5), dtype=object)
        a[:] = F(0)
        for (r, c), v in entries.items():
            a[r, c] = F(v)
        return a

    R, l = F(2), 6
    head = Head(m({(0, 4): 1, (4, 4): R}), m({(0, 1): 1, (4, 4): 1}), m({(0, 4): 1}))
    rng = np.random.default_rng(0)
    H = np.zeros((5, l), dtype=object)
    H[:] = F(0)
    H[1, :] = [F(int(v), 7) for v in rng.integers(-14, 15, size=l)]  # |row 2| <= R
    H[4, :] = F(1)
    out = run_blocks([Block((head,), ())], H, "exact")[0]
    want = l * R + sum(H[1, :])
    ok = all(out[0, t] - H[0, t] == want for t in range(l))
    return Result(Verdict.HOLDS, f"every token gets (lR + Σ_k h_k^2) e_1 exactly (l = 6, R = 2, random |h^2| <= R): {ok}") if ok else Result(
        Verdict.FAILS, "the head does not sum row 2", counterexample={"H": H.tolist()}
    )
