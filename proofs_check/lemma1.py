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

from tmcheck.proofs_check.registry import ORDER_SLACK, Evidence, Kind, Witness, obligation
from tmcheck.theory import sparse, targets
from tmcheck.theory.backends import run_blocks
from tmcheck.theory.heads import interaction_head
from tmcheck.theory.lemmas.lemma1 import lemma1_network, lemma1_plan
from tmcheck.theory.network import Block, Layer, resources, structured_positional
from tmcheck.theory.spec import Lemma1Layout
from tmcheck.theory.targets import parse_target


def psi_as_written(x: F) -> F:
    """ψ(x) = 1 on |x| <= 1, 1 − |x| on 1 <= |x| <= 2, 0 on |x| >= 2 (Appendix E.1, as printed)."""
    a = abs(x)
    return F(1) if a <= 1 else (1 - a if a <= 2 else F(0))


def network_psi(N: int, x: F) -> list[F]:
    """The ψ block of tmcheck's Lemma 1 network, run on tmcheck's exact backend: token j holds what the ψ heads
    write, row 1 = x − t_j + 1 (`sparse.psi_interactions`), and the block's FFN (`sparse.psi_ffn`) leaves
    ψ(3(N−1)(x − t_j)) in its row 0. Returns that row over j."""
    H = np.empty((1, 5, N), dtype=object)
    H[0] = structured_positional(N, "exact")
    H[0, 0, :] = F(0)
    H[0, 1, :] = [x - t + 1 for t in sparse.grid_points(N)]
    return list(run_blocks([Block((), sparse.psi_ffn(N))], H, "exact")[0, 0, :])


def pou_sum(x: F, N: int, scale, psi_fn=psi_as_written) -> F:
    """Σ_{j=1}^N ψ(scale·(x − (j−1)/(N−1))), the partition of unity of eq. (18) with a given ψ and scale."""
    return sum(psi_fn(scale * (x - F(j - 1, N - 1))) for j in range(1, N + 1))


GRID = tuple(F(k, 48) for k in range(49))


def near_grid(Ns, per_point: int = 4, scale=lambda N: 3 * (N - 1)) -> tuple:
    """(N, x) with x within 1/scale(N) of a grid point t_k (strictly): there ψ(scale (x − t_j)) is 1 at j = k and
    its argument is beyond 2 for every other j, for the printed ψ as for the trapezoid."""
    out = []
    for N in Ns:
        for k in range(N):
            for s_ in range(per_point):
                x = F(k, N - 1) + F(2 * s_ - per_point + 1, per_point) / (2 * scale(N))
                if 0 <= x <= 1:
                    out.append((N, x))
    return tuple(out)


@obligation(
    "lemma1.psi_partition_of_unity",
    "Appendix E.1, proof of Lemma 1: the trapezoid ψ and eq. (18)",
    "ψ(x) = 1 for |x| <= 1, 1 − |x| for 1 <= |x| <= 2, 0 for |x| >= 2, and the φ_n form a partition of unity.",
    "exact",
    "theory's Lemma 1 uses ψ(x) = 2 − |x| on 1 <= |x| <= 2 (the trapezoid), with scale 3(N−1).",
    kind=Kind.STEP,
    satisfied={"points": near_grid(range(2, 22), 4)},
)
def psi_partition_of_unity(points=None, Ns=(2, 3, 4, 5, 6)) -> Evidence:
    """Written: Σ_j of the printed ψ at scale 3(N−1). Corrected: the sum of what tmcheck's ψ block outputs."""
    pts = list(points) if points is not None else [(N, x) for N in Ns for x in GRID]
    at = [{"N": N, "x": x} for N, x in pts]
    return Evidence(
        f"{len(pts)} points (N, x), x in [0, 1]; scale 3(N−1); corrected: the ψ block of tmcheck's network",
        [Witness(a, pou_sum(x, N, 3 * (N - 1)), 1, "==") for a, (N, x) in zip(at, pts, strict=True)],
        [Witness(a, sum(network_psi(N, x)), 1, "==") for a, (N, x) in zip(at, pts, strict=True)],
        "ψ(x) = 1 on |x| <= 1, 2 − |x| on 1 <= |x| <= 2, 0 on |x| >= 2.",
        note=f"As written ψ is discontinuous at |x| = 1 and negative on (1, 2): ψ(3/2) = {psi_as_written(F(3, 2))}.",
    )


@obligation(
    "lemma1.pou_scale",
    "Appendix E.1, eq. (18) vs Step 2",
    "φ_n(x) = Π_i ψ(3N(x^i − (n^i−1)/(N−1))) (eq. 18), while Step 2 computes ψ(3(N−1)(x^i − (j−1)/(N−1))).",
    "exact",
    "theory uses the scale 3(N−1) of Step 2.",
    kind=Kind.STEP,
    satisfied={"points": near_grid(range(2, 16), 4, scale=lambda N: 3 * N)},
)
def pou_scale(points=None, Ns=(2, 3, 4)) -> Evidence:
    """Written: the trapezoid (theory's `sparse.psi`) at eq. (18)'s scale 3N. Corrected: tmcheck's ψ block."""
    pts = list(points) if points is not None else [(N, x) for N in Ns for x in GRID]
    at = [{"N": N, "x": x} for N, x in pts]
    return Evidence(
        f"{len(pts)} points (N, x), x in [0, 1], the trapezoid; corrected: the ψ block of tmcheck's network",
        [Witness(a, pou_sum(x, N, 3 * N, sparse.psi), 1, "==") for a, (N, x) in zip(at, pts, strict=True)],
        [Witness(a, sum(network_psi(N, x)), 1, "==") for a, (N, x) in zip(at, pts, strict=True)],
        "φ_n(x) = Π_i ψ(3(N−1)(x^i − (n^i−1)/(N−1))).",
        note="With the scale 3N the bumps are too narrow for the grid step 1/(N−1).",
    )


@obligation(
    "lemma1.grid_centers",
    "Appendix E.1, proof of Lemma 1: the blocks U_n and the values f_n",
    "U_n = {x in [0,1]^d : |x^i − n^i/(N−1)| <= 1/(N−1)}, n in {1..N}^d, and f_n = f(x_n), x_n the centre of U_n.",
    "exact",
    "theory centres φ_n and takes f_n at x_n = (n − 1)/(N−1) in [0,1]^d.",
    kind=Kind.STEP,
    satisfied={"points": tuple((N, n) for N in range(2, 10) for n in range(1, N))},
)
def grid_centers(Ns=(2, 3, 4, 5), points=None) -> Evidence:
    """Written: the centre n/(N−1) of U_n in [0, 1]. Corrected: the point tmcheck's network takes f_n at (the
    n-th of `sparse.grid_points`, where its ψ block outputs 1 for index n)."""
    pts = list(points) if points is not None else [(N, n) for N in Ns for n in range(1, N + 1)]
    at = [{"N": N, "n": n} for N, n in pts]

    def centre(N, n):
        t = sparse.grid_points(N)[n - 1]
        return t if network_psi(N, t)[n - 1] == 1 else math.inf

    return Evidence(
        f"{len(pts)} (N, n): is the centre of U_n in [0, 1], where f is defined?",
        [Witness(a, F(n, N - 1), 1, "<=") for a, (N, n) in zip(at, pts, strict=True)],
        [Witness(a, centre(N, n), 1, "<=") for a, (N, n) in zip(at, pts, strict=True)],
        "U_n and f_n = f(x_n) with x_n = (n − 1)/(N−1), the centre of φ_n.",
        note="The centre n/(N−1) is one grid step away from φ_n's centre (n−1)/(N−1).",
    )


def network_error(d: int, N: int, beta: float, a: tuple, n_points: int = 400, seed: int = 0) -> tuple[float, float]:
    """(sup |f − T| over sampled points of [0,1]^d, tmcheck's bound H_f((2/3)√d/(N−1))^β) for f(x) = ||x − a||₂^β
    (H_f = 1) and T tmcheck's Lemma 1 network at grid N, evaluated in float64."""
    from tmcheck.theory.fast_eval import evaluate_structured

    text = "(" + "+".join(f"(x{i}-{F(c)})^2" for i, c in enumerate(a)) + f")^({F(beta).limit_denominator(100) / 2})"
    plan = lemma1_plan(parse_target(text, d), 1.0, beta, 0.5, N=N)
    X = targets.check_sample(d, n_points, np.random.default_rng(seed), per_axis=33 if d == 1 else 17)
    err = float(np.abs(evaluate_structured(lemma1_network(plan, "exact"), X, "float64") - plan.target(X).real).max())
    return err, targets.tight_error_bound(d, 1.0, beta, N)


def boxes_containing(x: F, N: int) -> int:
    """How many U_n (as written: centre n/(N−1), half-width 1/(N−1)) contain x, d = 1."""
    return sum(abs(x - F(n, N - 1)) <= F(1, N - 1) for n in range(1, N + 1))


def bumps_at(x: F, N: int) -> int:
    """How many φ_n of tmcheck's network are positive at x, d = 1 (the outputs of its ψ block, `network_psi`)."""
    return sum(v > 0 for v in network_psi(N, x))


FINE = tuple(F(k, 96) for k in range(97))


@obligation(
    "lemma1.error_chain",
    "Appendix E.1, proof of Lemma 1: the approximation error of f̂ = Σ_n φ_n f_n",
    "sup|f − f̂| = sup Σ_{n: |x^i − n^i/(N−1)| <= 1/(N−1)} |f(x) − f_n| <= sup 2^d max H_f||x − x_n||^β <= 2^d "
    "d^β H_f/(N−1)^β.",
    "exact",
    "theory's Lemma 1 uses sup|f − f̂| <= max_{n: φ_n(x) > 0} |f(x) − f_n| <= H_f((2/3)√d/(N−1))^β (Σφ_n = 1).",
    kind=Kind.STEP,
    satisfied={"points": tuple((N, x) for N in (3, 4, 5) for x in FINE if (x * (N - 1)).denominator != 1)},
)
def error_chain(points=None, Ns=(3, 4, 5)) -> Evidence:
    """Written: the number of U_n (as printed) containing x against 2^d. Corrected: the number of φ_n of tmcheck's
    network positive at x against 2^d. The note measures tmcheck's network against its bound."""
    pts = list(points) if points is not None else [(N, x) for N in Ns for x in GRID]
    at = [{"d": 1, "N": N, "x": x} for N, x in pts]
    ratios = [
        err / bound
        for err, bound in (
            network_error(d, N_, beta, a)
            for d, N_, beta, a in ((1, 3, 1.0, (F(3, 10),)), (1, 5, 0.5, (F(2, 3),)), (2, 3, 1.0, (F(1, 4), F(3, 5))))
        )
    ]
    worst = max(ratios)
    return Evidence(
        f"d = 1, {len(pts)} points (N, x), x in [0, 1]: the number of terms of the sum, against 2^d",
        [Witness(a, boxes_containing(x, N), 2, "<=") for a, (N, x) in zip(at, pts, strict=True)],
        [Witness(a, bumps_at(x, N), 2, "<=") for a, (N, x) in zip(at, pts, strict=True)],
        "sum over the <= 2^d n with φ_n(x) > 0 (Σφ_n = 1): sup|f − f̂| <= H_f((2/3)√d/(N−1))^β <= 2^d d^β H_f/(N−1)^β.",
        note="tmcheck's network on f = ||x − a||^β (H_f = 1), d <= 2: worst sup|f − T| / ((2/3)√d/(N−1))^β = "
        f"{worst:.3f}.",
        data={"worst_ratio": worst},
    )


def paper_N(d: int, eps: F, H_f: int = 1) -> F:
    """N = d(2^d H_f/ε)^{1/β} + 1 at β = 1, as written (not rounded)."""
    return d * (2**d * H_f / eps) + 1


@obligation(
    "lemma1.choice_of_N",
    "Appendix E.1, proof of Lemma 1: the choice of N",
    "It suffices to pick N = d(2^d H_f/ε)^{1/β} + 1 to obtain an ε error bound.",
    "exact",
    "theory.targets.paper_N rounds the proof's N up; theory.bounds.lemma1_N_corrected: N = ceil((2/3)√d (H_f/ε)^{1/β}) "
    "+ 1.",
    kind=Kind.STEP,
    satisfied={"eps_values": (F(1, 2), F(1, 3), F(1, 4), F(1, 5), F(1, 6))},
)
def choice_of_N(eps_values=(F(3, 10), F(1, 2), F(1, 3), F(2, 7)), ds=(1, 2)) -> Evidence:
    """Written: is the printed N an integer (a grid size)? Corrected: the proof's error bound 2^d d^β H_f/(N−1)^β at
    tmcheck's rounded N (`targets.paper_N`, `targets.paper_error_bound`) against ε."""
    d_, Hf, e_, b_ = sp.symbols("d H_f epsilon beta", positive=True)
    Ns = d_ * (2**d_ * Hf / e_) ** (1 / b_) + 1
    exact = (
        sp.simplify(sp.powsimp(sp.expand_power_base(2**d_ * d_**b_ * Hf / (Ns - 1) ** b_, force=True), force=True) - e_)
        == 0
    )
    pts = [(d, e) for d in ds for e in eps_values]
    at = [{"d": d, "H_f": 1, "beta": 1, "eps": e} for d, e in pts]
    bound = [
        targets.paper_error_bound(d, 1.0, 1.0, targets.paper_N(d, 1.0, 1.0, float(e))) * (1 - 1e-12) for d, e in pts
    ]
    return Evidence(
        "H_f = β = 1, d in "
        + str(list(ds))
        + ", ε in "
        + ", ".join(map(str, eps_values))
        + ": is N a grid size (an integer)?",
        [Witness(a, paper_N(d, e), math.ceil(paper_N(d, e)), "==") for a, (d, e) in zip(at, pts, strict=True)],
        [Witness(a, b, float(e), "<=") for a, b, (d, e) in zip(at, bound, pts, strict=True)],
        "N = ceil(d(2^d H_f/ε)^{1/β}) + 1 (the error bound 2^d d^β H_f/(N−1)^β only shrinks when N is rounded up).",
        note=f"Symbolically 2^d d^β H_f/(N−1)^β = ε at the unrounded N: {exact}.",
    )


@obligation(
    "lemma1.resources_d_dependence",
    "Lemma 1 (Section 2.4): the resources",
    "l = O(d ε^{−d/β}), m = O(d ε^{−d/β}), κ = O(d² ε^{−2d/β}), where O(·) hides terms in H_f only.",
    "exact",
    "theory.bounds.lemma1_resources reports l = d + dN + dN^d and m = dN^d with N explicit; the d-dependence "
    "is not hidden.",
    kind=Kind.RESOURCE,
    satisfied={"grid": "tight", "ds": (1, 2, 3), "epss": (F(1, 2), F(1, 3), F(2, 3))},
)
def resources_d_dependence(ds=tuple(range(1, 7)), epss=(F(1, 2),), grid: str = "paper") -> Evidence:
    """l and m of the construction at the grid's N (the paper's by default), from the one spec
    (theory.spec.lemma1_spec), each divided by the paper's O(·) form at hidden constant 1 (the spec's `orders`),
    against ORDER_SLACK times its value at d = 1 (per ε)."""
    from tmcheck.theory.spec import lemma1_spec as construction_spec

    wits = []
    for eps in epss:
        specs = {d: construction_spec(d, eps=float(eps), grid=grid, with_kappa=False) for d in sorted(set(ds) | {1})}
        for q in ("l", "m"):
            base = getattr(specs[1], q) / specs[1].orders[q]
            wits += [
                Witness(
                    {"d": d, "eps": eps, "resource": q, "N": specs[d].N, q: getattr(specs[d], q)},
                    getattr(specs[d], q) / specs[d].orders[q],
                    ORDER_SLACK * base,
                    "<=",
                )
                for d in ds
            ]
    tight = {d: construction_spec(d, eps=float(epss[0]), grid="tight", with_kappa=False) for d in ds}
    return Evidence(
        f"H_f = β = 1, ε in {[str(e) for e in epss]}, d in {list(ds)}, the {grid} grid N: l/(dε^(−d/β)) and "
        f"m/(dε^(−d/β)) (theory.spec) against {ORDER_SLACK}× their values at d = 1",
        wits,
        note="The construction has l = d + dN + dN^d with N ≈ d(2^d H_f/ε)^{1/β}: the ratio grows like d^d 2^{d²/β}. "
        "With the tight N it is still ≈ (2√d/3)^d: "
        + ", ".join(f"d = {d}: {t.l / t.orders['l']:.3g}" for d, t in tight.items())
        + ". Theorem 1's rate inherits this (theorem1.d_dependence).",
    )


@obligation(
    "lemma1.token_count",
    "Appendix E.1, Step 1: the embedded input",
    "x' = [x, 0_{Nd+N^d}] in R^{d+Nd+N^d}, and H = E x' in R^{d_embd × (d+Nd+N^d d)}.",
    "exact",
    "theory pads x to l = d + dN + dN^d tokens.",
    kind=Kind.STEP,
    satisfied={"points": tuple((1, N) for N in range(2, 8))},
)
def token_count(points=((2, 2), (2, 3), (3, 2))) -> Evidence:
    """Written: the length of x' against the columns of H. Corrected: the tokens of tmcheck's built network."""
    at = [{"d": d, "N": N} for d, N in points]
    built = [
        resources(lemma1_network(lemma1_plan(parse_target("x0", d), 1.0, 1.0, 0.5, N=N), "float64")).l
        for d, N in points
    ]
    return Evidence(
        f"(d, N) in {list(points)}: the length of x' against the columns of H = E x'",
        [Witness(a, d + N * d + N**d, d + N * d + N**d * d, "==") for a, (d, N) in zip(at, points, strict=True)],
        [Witness(a, l, d + N * d + N**d * d, "==") for a, l, (d, N) in zip(at, built, points, strict=True)],
        "x' = [x, 0_{Nd + N^d d}], l = d + Nd + N^d d (the token count of theory's Lemma 1 network).",
        note="E = [1,0,0,0,0]^T applied column-wise keeps the number of columns.",
    )


def paper_s_index(i: int, j: int, d: int, N: int) -> int:
    """s_{i,j} in token d + i·d + j, as written (1-based)."""
    return d + i * d + j


def network_s_index(i: int, j: int, d: int, N: int) -> int:
    """The token (1-based) tmcheck's ψ heads write s_{i,j} into (`sparse.psi_interactions` at the layout's base)."""
    its = sparse.psi_interactions(range(d), N, Lemma1Layout(d, N).psi_base)
    return its[(i - 1) * N + (j - 1)].t1 + 1


@obligation(
    "lemma1.token_index_s",
    "Appendix E.1, Steps 2-3: where s_{i,j} is stored",
    "s_{i,j} is stored in token h_{ij} = h_{d + i·d + j} (1 <= i <= d, 1 <= j <= N), inside h_{d+1}, ..., h_{d+Nd}; "
    "Step 3 reads it from k = d + id + n^i.",
    "exact",
    "theory stores s_{i,j} in token d + (i−1)N + j (1-based).",
    kind=Kind.STEP,
    satisfied={"index": network_s_index},
)
def token_index_s(index=paper_s_index, sizes=((1, 2), (2, 2), (2, 3), (3, 4))) -> Evidence:
    """The tokens of all s_{i,j}, sorted, against d+1..d+Nd: as written, and where tmcheck's network writes them."""

    def slots(f, d, N):
        return sorted(f(i, j, d, N) for i in range(1, d + 1) for j in range(1, N + 1))

    at = [{"d": d, "N": N} for d, N in sizes]
    target = [list(range(d + 1, d + N * d + 1)) for d, N in sizes]
    return Evidence(
        f"(d, N) in {list(sizes)}: the tokens of all s_(i,j), sorted, against d+1..d+Nd",
        [Witness(a, slots(index, d, N), t, "==") for a, t, (d, N) in zip(at, target, sizes, strict=True)],
        [Witness(a, slots(network_s_index, d, N), t, "==") for a, t, (d, N) in zip(at, target, sizes, strict=True)],
        "s_{i,j} in token d + (i−1)N + j.",
    )


def product_slot(n: tuple[int, ...], i: int, d: int, N: int) -> int:
    """h_{n,i} = h_{d + Nd + d Σ_p (n^p − 1) N^{d−p} + i} (Step 3, as written; 1-based)."""
    return d + N * d + d * sum((n[p - 1] - 1) * N ** (d - p) for p in range(1, d + 1)) + i


def final_slot(n: tuple[int, ...], d: int, N: int) -> int:
    """The token B_{log d+3} reads φ_n from: d + Nd + Σ_p (n^p − 1) N^p + 1 (as written)."""
    return d + N * d + sum((n[p - 1] - 1) * N**p for p in range(1, d + 1)) + 1


def network_phi_slot(n: tuple[int, ...], d: int, N: int) -> int:
    """The token (1-based) tmcheck's f_n head for patch n reads φ_n from (`sparse.fvalue_interactions`)."""
    lay = Lemma1Layout(d, N)
    p = sparse.patches(d, N).index(tuple(k - 1 for k in n))
    return sparse.fvalue_interactions([F(0)] * N**d, lay.prod_base, lay.F, F(1))[p].t2 + 1


SIZES = tuple((d, N) for d in range(1, 4) for N in range(2, 5))


# why kept: an obligation is declared as data (id, place, claim, method, note, kind): alike in shape, each its own claim
@obligation(
    "lemma1.token_index_products",
    "Appendix E.1, Step 3: the slots of the partial products",
    "h_{n,i} = h_{d+Nd+dΣ_p(n^p−1)N^{d−p}+i}, n in {1..N}^d, 1 <= i <= d, fill tokens d+Nd+1, ..., d+Nd+N^d d.",
    "exact",
    "theory uses this index.",
    kind=Kind.STEP,
)
def token_index_products(sizes=SIZES) -> Evidence:
    """The slots the formula names, sorted, against the factor tokens of tmcheck's layout (`spec.Lemma1Layout`:
    prod_base.. l), and slot h_(n,1) against the token tmcheck's f_n head reads."""

    def slots(d, N):
        return sorted(
            product_slot(n, i, d, N) for n in itertools.product(range(1, N + 1), repeat=d) for i in range(1, d + 1)
        )

    wits = [
        Witness(
            {"d": d, "N": N, "slot": "all"},
            slots(d, N),
            list(range(Lemma1Layout(d, N).prod_base + 1, Lemma1Layout(d, N).l + 1)),
            "==",
        )
        for d, N in sizes
    ]
    wits += [
        Witness({"d": d, "N": N, "slot": n}, product_slot(n, 1, d, N), network_phi_slot(n, d, N), "==")
        for d, N in sizes
        for n in itertools.product(range(1, N + 1), repeat=d)
    ]
    return Evidence("d <= 3, 2 <= N <= 4: the formula's slots against tmcheck's layout and its f_n heads", wits)


@obligation(
    "lemma1.token_index_final",
    "Appendix E.1, Step 3: reading φ_n for the product with f_n",
    "φ_n(x) = P^{d+Nd+Σ_p(n^p−1)N^p+i}, and A_n reads h_{d+Nd+Σ_p(n^p−1)N^p+1} = h_{n,1}.",
    "exact",
    "theory reads φ_n from h_{n,1} = h_{d+Nd+dΣ_p(n^p−1)N^{d−p}+1}.",
    kind=Kind.STEP,
    satisfied={"sizes": tuple((d, N) for d in (1, 2, 3) for N in range(2, 9)), "ns": "ones"},
)
def token_index_final(sizes=((2, 2), (2, 3), (3, 2)), ns=None) -> Evidence:
    """Written: the token the formula names against h_(n,1). Corrected: the token tmcheck's f_n head reads."""

    def patches(d, N):
        return [(1,) * d] if ns == "ones" else (ns or itertools.product(range(1, N + 1), repeat=d))

    pts = [(d, N, n) for d, N in sizes for n in patches(d, N)]
    at = [{"d": d, "N": N, "n": n} for d, N, n in pts]
    return Evidence(
        f"{len(pts)} (d, N, n), n in {{1..N}}^d: the token the formula names against h_(n,1)",
        [Witness(a, final_slot(n, d, N), product_slot(n, 1, d, N), "==") for a, (d, N, n) in zip(at, pts, strict=True)],
        [
            Witness(a, network_phi_slot(n, d, N), product_slot(n, 1, d, N), "==")
            for a, (d, N, n) in zip(at, pts, strict=True)
        ],
        "A_n reads h_(n,1) = h_{d+Nd+dΣ_p(n^p−1)N^{d−p}+1} (the index of Step 3's products, as tmcheck's f_n heads "
        "do).",
        note="Step 3 also writes k ≠ d+Nd+Σ(n^p−1)N^{d−p}+i without the factor d.",
    )


def kernel_value(N: int, j: int, x: F, K_data) -> F:
    """The value tmcheck's Lemma 3 head (`interaction_head`) with Q^data = [e_5; e_5] (1-based) and the given K^data
    writes into the ψ token when the x-token holds h^1 = x: σ(<Q^data h_ij, K^data h_k>), on the exact backend."""
    Q = [[0, 0, 0, 0, 1], [0, 0, 0, 0, 1]]
    gap = sparse.interaction_gap(2, "exact")
    C = sparse.sufficient_C(sparse.data_bound(Q, K_data, F(1)), gap, "exact")
    head = interaction_head(2, 1, 0, 1, Q, K_data, C)
    H = np.empty((1, 5, 2), dtype=object)
    H[0] = structured_positional(2, "exact")
    H[0, 0, :], H[0, 1, :] = [F(x), F(0)], F(0)
    return run_blocks([Block((head,))], H, "exact")[0, 1, 1]


@obligation(
    "lemma1.step2_kernel",
    "Appendix E.1, Step 2: the data kernels of head A_ij",
    "With Q^data = [[0,0,0,0,1],[0,0,0,0,1]], K^data = [[1,0,0,0,0],[0,0,0,0,−j/(N−1)+1]]: "
    "<Q^data h_ij, K^data h_k> = h_k^1 − (j−1)/(N−1) + 1.",
    "exact",
    "theory's Step 2 uses K^data row 2 = (0,0,0,0, 1 − (j−1)/(N−1)).",
    kind=Kind.STEP,
    satisfied={"offset": 1},
)
def step2_kernel(Ns=(2, 3, 4), xs=(F(0), F(1, 2), F(1)), offset=0) -> Evidence:
    """A head built by tmcheck (`interaction_head`) with the written K^data, run on the exact backend, against
    h^1 − (j−1)/(N−1) + 1; corrected: the same head with the K^data of tmcheck's ψ heads (`sparse.psi_interactions`).
    `offset` shifts j in the written K^data (0: as written, −j/(N−1); 1: −(j−1)/(N−1))."""
    pts = [(N, j, x) for N in Ns for j in range(1, N + 1) for x in xs]
    at = [{"N": N, "j": j, "x": x} for N, j, x in pts]

    def theirs(N, j):
        return [list(r) for r in sparse.psi_interactions([0], N, 1)[j - 1].K_data]

    return Evidence(
        f"N in {list(Ns)}, every j, h_k^1 in {[str(x) for x in xs]} (a Lemma 3 head on the exact backend)",
        [
            Witness(
                a,
                kernel_value(N, j, x, [[1, 0, 0, 0, 0], [0, 0, 0, 0, 1 - F(j - offset, N - 1)]]),
                x - F(j - 1, N - 1) + 1,
                "==",
            )
            for a, (N, j, x) in zip(at, pts, strict=True)
        ],
        [
            Witness(a, kernel_value(N, j, x, theirs(N, j)), x - F(j - 1, N - 1) + 1, "==")
            for a, (N, j, x) in zip(at, pts, strict=True)
        ],
        "K^data row 2 = (0,0,0,0, 1 − (j−1)/(N−1)).",
        note="The constant −j/(N−1) is one grid step off from the −(j−1)/(N−1) that ψ needs.",
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


def tree_of_network(s: list, d: int):
    """The top of tmcheck's product tree on leaves s: the factor slots of one patch, level by level as tmcheck's
    product blocks compute them (`sparse.product_levels`: a pair (t1, t2) writes slot t1 times slot t2 into row 1
    of t1, a head with t1 = t2 carries its slot; the block's FFN then moves row 1 to row 0, so a slot no head
    writes becomes 0); the result is in slot 0."""
    slots = list(s)
    for level in sparse.product_levels(d, 1, 0):
        new = [0] * len(slots)
        for it in level:
            new[it.t1] = slots[it.t1] * slots[it.t2] if it.t1 != it.t2 else slots[it.t1]
        slots = new
    return slots[0]


@obligation(
    "lemma1.product_tree",
    "Appendix E.1, Step 3 and Figure 7: the partial products",
    "p_{n,k,i} = p_{n,k−1,2i−1}·p_{n,k−1,2i}, p_{n,1,i} = s_{i,n^i}, 1 <= k <= log2(d), 1 <= i <= d/2^k; "
    "at k = log(d), p_{n,log(d),1} = φ_n(x).",
    "symbolic",
    "theory multiplies in ceil(log2 d) levels above the d leaves, padding an odd level with the constant 1.",
    kind=Kind.STEP,
    satisfied={"tree": tree_of_network},
)
def product_tree(ds=tuple(range(1, 10)), tree=tree_as_written) -> Evidence:
    leaves = {d: list(sp.symbols(f"s1:{d + 1}")) for d in ds}
    at = [{"d": d} for d in ds]
    return Evidence(
        f"d in {list(ds)}, symbolic leaves s_1..s_d: the top of the tree against Π s_i (None: an index is not "
        "an integer); corrected: tmcheck's product heads",
        [Witness(a, tree(leaves[d], d), sp.Mul(*leaves[d]), "==") for a, d in zip(at, ds, strict=True)],
        [Witness(a, tree_of_network(leaves[d], d), sp.Mul(*leaves[d]), "==") for a, d in zip(at, ds, strict=True)],
        "levels k = 1..ceil(log2 d)+1 with ceil(d/2^(k−1)) entries, padding odd levels by 1; φ_n = "
        "p_{n,ceil(log2 d)+1,1}.",
        note="Level k holds products of 2^(k−1) leaves, so level log2 d holds products of d/2 of them.",
    )


def run_ffn_block(W: list[list], H: np.ndarray) -> np.ndarray:
    """B(H) = FFN(H) + H for a block with no heads and a one-layer FFN W (Def. 3), exactly."""
    blk = Block((), (Layer(np.array(W, dtype=object), np.zeros(len(W), dtype=object)),))
    return run_blocks([blk], H, "exact")[0]


def _subtract_ffn(R, row: list) -> list[list]:
    """One-layer FFN with `row` as W_1's row 2 (the −R e_5 part scaled by R), other rows 0."""
    return [[0] * 5, [v * (R if c == 4 else 1) for c, v in enumerate(row)], [0] * 5, [0] * 5, [0] * 5]


def network_sum_tail(R: F, fphi: F, P: int) -> F:
    """tmcheck's last two Lemma 1 blocks on tokens (n, 0) holding φ_n f_n + R in row 1 (what the f_n heads write):
    the f_n block's FFN (`sparse.zero_row0_ffn`), then the sum block (`sparse.sum_head`, FFN `sparse.shift_row0_ffn`
    subtracting P·R); returns row 0 of the last token, which must be Σ_n φ_n f_n = P·fphi."""
    H = np.empty((1, 5, P), dtype=object)
    H[0] = structured_positional(P, "exact")
    H[0, 0, :], H[0, 1, :] = F(1, 3), fphi + R
    blocks = [Block((), sparse.zero_row0_ffn()), Block((sparse.sum_head(),), sparse.shift_row0_ffn(-R * P))]
    return run_blocks(blocks, H, "exact")[0, 0, P - 1]


@obligation(
    "lemma1.residual_subtraction",
    "Appendix E.1, blocks B_{log d+3} and B_{log d+4}: the FFNs that subtract R and lR",
    "W_1 = e_2(e_2 − R e_5)^T subtracts R from row 2, and W_1 = e_1(e_1 − lR e_5)^T then leaves h^1 = Σ_n f_n φ_n.",
    "exact",
    "theory's FFNs output only the correction, −R e_5 (resp. −lR e_5) in the target row: the block adds its "
    "input back.",
    kind=Kind.STEP,
    satisfied={"written": "tmcheck"},
)
def residual_subtraction(points=((F(1), F(1, 2)), (F(2), F(-1)), (F(1, 3), F(0))), written="paper") -> Evidence:
    """Per (R, f_nφ_n): written: one token after the MHA, row 2 = f_nφ_n + R, through the block B(H) = FFN(H) + H
    (Def. 3) with the printed W_1 (written="tmcheck": through tmcheck's blocks instead; the printed W_1 holds only
    at R = f_nφ_n = 0). Corrected: tmcheck's f_n and sum blocks on 3 such tokens (`network_sum_tail`)."""

    def row2(R, fphi, row):
        if written == "tmcheck":
            return network_sum_tail(R, fphi, 3) / 3
        H = np.array([[0], [fphi + R], [0], [1], [1]], dtype=object)
        return run_ffn_block(_subtract_ffn(R, row), H)[1, 0]

    at = [{"R": R, "f_n_phi_n": fphi} for R, fphi in points]
    return Evidence(
        f"(R, f_nφ_n) in {[(str(a), str(b)) for a, b in points]}: row 2 after the block, run on tmcheck's "
        "exact backend",
        [Witness(a, row2(R, fphi, [0, 1, 0, 0, -1]), fphi, "==") for a, (R, fphi) in zip(at, points, strict=True)],
        [Witness(a, network_sum_tail(R, fphi, 3) / 3, fphi, "==") for a, (R, fphi) in zip(at, points, strict=True)],
        "W_1 = −R e_2 e_5^T in B_{log d+3} and −lR e_1 e_5^T in B_{log d+4}.",
        note="A block adds its FFN's output to its input (Def. 3); B_(log d+4) doubles row 1 the same way. "
        "(B_3's FFN, with −1 on the diagonal, does account for the residual.)",
    )


@obligation(
    "lemma1.final_sum_head",
    "Appendix E.1, block B_{log d+4}: the summing head",
    "With Q = e_1e_5^T + R e_5e_5^T, K = e_1e_2^T + e_5e_5^T, V = e_1e_5^T: A_1 h_t = Σ_k σ(h_k^2 + R) e_1 = "
    "(lR + Σ f_nφ_n) e_1.",
    "exact",
    "theory uses this head.",
    kind=Kind.STEP,
)
def final_sum_head(R=F(2), l=6, seeds=(0, 1, 2)) -> Evidence:
    """The printed head on the exact backend, against (lR + Σ h^2) e_1, and tmcheck's sum head (`sparse.sum_head`)
    against Σ h^2 on the same inputs."""
    from tmcheck.theory.network import Head

    def m(entries):
        a = np.zeros((5, 5), dtype=object)
        a[:] = F(0)
        for (r, c), v in entries.items():
            a[r, c] = F(v)
        return a

    head = Head(m({(0, 4): 1, (4, 4): R}), m({(0, 1): 1, (4, 4): 1}), m({(0, 4): 1}))
    wits = []
    for seed in seeds:
        H = np.zeros((5, l), dtype=object)
        H[:] = F(0)
        H[1, :] = [F(int(v), 7) for v in np.random.default_rng(seed).integers(-14, 15, size=l)]  # |row 2| <= R
        H[4, :] = F(1)
        out = run_blocks([Block((head,), ())], H, "exact")[0]
        ours = run_blocks([Block((sparse.sum_head(),), ())], H, "exact")[0]
        wits += [Witness({"seed": seed, "token": t}, out[0, t] - H[0, t], l * R + sum(H[1, :]), "==") for t in range(l)]
        wits += [
            Witness({"seed": seed, "token": t, "head": "tmcheck"}, ours[0, t] - H[0, t], sum(H[1, :]), "==")
            for t in range(l)
        ]
    return Evidence(f"l = {l}, R = {R}, {len(seeds)} random H with |h^2| <= R, every token", wits)
