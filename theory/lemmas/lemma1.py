"""Lemma 1 (Section 2.4; proof in Appendix E.1) as one tmcheck-network: f̂(x) = Σ_n f_n φ_n(x) on [0,1]^d.

The construction is a list of sparse blocks (`theory.sparse`, the composition layer shared with
Theorem 2) in a build plan (`lemma1_plan`); its resources come from `theory.spec.lemma1_spec`, which reads
the same layout. Measuring and reporting live in `lemmas.lemma1_report`.

Token layout (0-based, `spec.Lemma1Layout`): x^i in token i (i < d); s_{i,j} in token d + iN + j
(j < N); the F factors of patch n (n in {0..N-1}^d, row-major index n̄) in tokens d + dN + n̄F + k
(k < F; F = d here).

Blocks (L_T = ⌈log2 d⌉ + 4, as in the paper's B_1 ... B_{log d + 4}):
  1. ψ block: dN heads write x^i - t_j + 1 into row 1 of token (i, j); the FFN turns row 1 into
     row 0 += ψ(3(N-1)(row1 - 1)), row 1 = 0. Tokens with row 1 = 0 are untouched, since
     ψ(-3(N-1)) = 0 for N >= 2: no gating FFN is needed (the paper uses 7 FFN layers with two gates).
  2. copy block: d N^d heads copy s_{i,n^i} into row 0 of factor token (n, i); no FFN.
  3. ⌈log2 F⌉ product blocks: heads multiply the factors pairwise (row0 · row0 into row 1 of the
     first; an unpaired last factor is carried by a head σ(1 · row0)), and the FFN moves row 1 to
     row 0 and clears row 1 (the paper's W_1; Lemma 6 does not clear row 1 and cannot be reused).
  4. f_n block: N^d heads write φ_n f_n + R into row 1 of token (n, 0); the FFN zeroes row 0.
  5. sum block: one head with constant score 1 adds Σ_t row1_t to row 0 of every token; the FFN
     subtracts N^d R. T(x) = H[0, l-1] = Σ_n f_n φ_n(x).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from tmcheck.theory import spec as resources_spec
from tmcheck.theory.construction import Construction
from tmcheck.theory.network import Network, structured_positional, zeros
from tmcheck.theory.sparse import (
    F1,
    SparseBlock,
    copy_interactions,
    fvalue_interactions,
    grid_points,
    grid_value,
    move_clear_ffn,
    patches,
    product_levels,
    psi_ffn,
    psi_interactions,
    realize,
    shift_row0_ffn,
    sum_head,
    zero_row0_ffn,
)
from tmcheck.theory.targets import Target, TargetError, grid_N, paper_error_bound, paper_N, tight_error_bound

# --------------------------------------------------------------------------------------------
# Lemma 1


@dataclass
class Lemma1Plan:
    """Everything the network is built from, with the error analysis."""

    target: Target
    d: int
    N: int
    grid: str
    H: float
    beta: float
    eps: float
    R: Fraction
    fvals: list[Fraction]
    blocks: list[SparseBlock] = field(default_factory=list)

    @property
    def layout(self) -> resources_spec.Lemma1Layout:
        return resources_spec.Lemma1Layout(self.d, self.N)

    @property
    def l(self) -> int:
        return self.layout.l

    @property
    def prod_base(self) -> int:
        return self.layout.prod_base

    def stated(self, arithmetic: str = "exact") -> resources_spec.ConstructionSpec:
        """The resource count (`theory.spec.lemma1_spec`) for this grid and these f_n (κ at this arithmetic)."""
        fmax = max(abs(v) for v in self.fvals)
        return resources_spec.lemma1_spec(
            self.d,
            self.N,
            eps=self.eps,
            H_f=self.H,
            beta=self.beta,
            R=float(self.R),
            f_max=float(fmax),
            grid=self.grid,
            arithmetic=arithmetic,
        )


def lemma1_plan(
    target: Target, H: float, beta: float, eps: float, R=None, grid: str = "tight", N: int | None = None
) -> Lemma1Plan:
    """Grid, values f_n (rounded to multiples of 2^-40) and the sparse blocks of Lemma 1."""
    d = target.d
    N = grid_N(grid, d, H, beta, eps) if N is None else int(N)
    if N < 2:
        raise TargetError(f"the grid needs N >= 2 points per axis, got {N}")
    ts = grid_points(N)
    fvals = target.values_dyadic([tuple(ts[k] for k in n) for n in patches(d, N)])
    fmax = max(abs(v) for v in fvals)
    if R is None:
        R = fmax
    R = Fraction(R).limit_denominator(10**12) if not isinstance(R, Fraction) else R
    if R < fmax:
        raise TargetError(f"declared R = {float(R)} but |f| = {float(fmax):.6g} at a grid point")
    plan = Lemma1Plan(target, d, N, grid, H, beta, eps, R, fvals)
    lay = plan.layout
    psi_base, prod_base, F = lay.psi_base, lay.prod_base, lay.F
    blocks = [SparseBlock(psi_interactions(range(d), N, psi_base), psi_ffn(N), F1, name="psi")]
    blocks.append(SparseBlock(copy_interactions(d, N, psi_base, prod_base, F), (), F1, name="copy"))
    for k, its in enumerate(product_levels(F, N**d, prod_base)):
        blocks.append(SparseBlock(its, move_clear_ffn(), F1, name=f"product{k + 1}"))
    blocks.append(SparseBlock(fvalue_interactions(fvals, prod_base, F, R), zero_row0_ffn(), F1, name="f_n"))
    blocks.append(SparseBlock([], shift_row0_ffn(-R * N**d), max(F1, 2 * R), dense=(sum_head(),), name="sum"))
    plan.blocks = blocks
    return plan


def lemma1_network(plan: Lemma1Plan, arithmetic: str = "exact") -> Network:
    d, l = plan.d, plan.l
    one = F1 if arithmetic == "exact" else 1.0
    U = zeros((l, d), arithmetic)
    for i in range(d):
        U[i, i] = one
    E = zeros((5, 1), arithmetic)
    E[0, 0] = one
    blocks, pattern = realize(plan.blocks, l, arithmetic)
    meta = {
        "name": "lemma1",
        "paper": "Appendix E.1, Lemma 1",
        "target": plan.target.text,
        "d": d,
        "N": plan.N,
        "grid": plan.grid,
        "H_f": plan.H,
        "beta": plan.beta,
        "eps": plan.eps,
        "R": str(plan.R),
        "domain": "[0,1]^d",
        "interaction_pattern": pattern,
    }
    return Network(arithmetic, l, d, U, E, structured_positional(l, arithmetic), blocks, meta=meta)


def fhat(plan: Lemma1Plan, x: Sequence) -> Fraction:
    """Σ_n f_n Π_i ψ(3(N-1)(x^i - t_{n^i})) computed directly (the claim's right-hand side)."""
    return grid_value(plan.fvals, plan.N, x)


def sample_domain(rng: np.random.Generator, n: int, d: int, N: int) -> np.ndarray:
    """Rational points of [0,1]^d: grid points, boundary points, and random multiples of 1/(6(N-1)·7)."""
    den = 42 * (N - 1)
    X = np.empty((n, d), dtype=object)
    for r in range(n):
        kind = r % 3
        for i in range(d):
            if kind == 0:
                X[r, i] = Fraction(int(rng.integers(0, N)), N - 1)
            elif kind == 1 and rng.random() < 0.5:
                X[r, i] = Fraction(int(rng.integers(0, 2)))
            else:
                X[r, i] = Fraction(int(rng.integers(0, den + 1)), den)
    return X


def embed_exact(net: Network, X) -> np.ndarray:
    """H_0 = E'(Ux)^T + PE for exact inputs: (n, 5, l) object array."""
    X = np.asarray(X, dtype=object)
    H = np.empty((len(X), 5, net.l), dtype=object)
    H[:] = net.PE
    UX = X @ net.U.T  # (n, l)
    for r in range(5):
        if net.E[r, 0] != 0:
            H[:, r, :] = H[:, r, :] + net.E[r, 0] * UX
    return H


def lemma1(
    target: Target, H: float, beta: float, eps: float, R=None, grid: str = "tight", N: int | None = None
) -> Construction:
    """Lemma 1 as a Construction: the exact network, its claim, constants and the paper's counts.

    Proof (Appendix E.1, corrected).
    (a) Partition of unity. With t_j = j/(N-1) and ψ the trapezoid (2 - |u| on 1 <= |u| <= 2; the
        paper's 1 - |u| is a misprint), s_{i,j}(x) = ψ(3(N-1)(x^i - t_j)) satisfies Σ_j s_{i,j} = 1 on
        [0,1]: neighbours are 3 apart in u, and ψ(u) + ψ(3 - u) = 1 for u in [1, 2]. The paper's
        φ_n uses 3N (eq. 18), which leaves gaps; its Step 2 uses 3(N-1), which is right. So the
        φ_n = Π_i s_{i,n^i} are >= 0 and sum to 1, and f_n = f(t_n) at the grid point t_n (the paper's
        "centre of U_n"; its U_n is shifted by one index).
    (b) Error. `targets.tight_error_bound`: |f̂ - f| <= H_f (2√d/(3(N-1)))^β, which gives the tight N;
        the paper's 2^d d^β H_f/(N-1)^β also holds and gives its N. The f_n are f(t_n) rounded to
        multiples of 2^-40, adding at most 2^-41 to the error.
    (c) Network. Module docstring: every head is a Lemma 3 head whose data term is bounded by
        `data_bound` on the domain (all rows 0-1 lie in [0, 1] before the sum block: x, s, partial
        products of numbers in [0, 1]), so `sufficient_C` makes it exact; each FFN is evaluated in
        the module docstring. Hence T(x) = H_final[0, l-1] = Σ_n f_n φ_n(x) = f̂(x) exactly for
        every x in [0,1]^d.
    """
    plan = lemma1_plan(target, H, beta, eps, R, grid, N)
    return construction_of(plan, lemma1_network(plan, "exact"))


def construction_of(plan: Lemma1Plan, net: Network) -> Construction:
    """The Construction of a built Lemma 1 network: rational inputs of [0,1]^d, the claim T = f̂ (computed
    directly), and the spec's counts and κ (`theory.spec.lemma1_spec`) as the stated resources."""
    l, H, beta, eps, grid = plan.l, plan.H, plan.beta, plan.eps, plan.grid
    stated = plan.stated(net.arithmetic)

    def sample(rng, n):
        return embed_exact(net, sample_domain(rng, n, plan.d, plan.N))

    def expected(Hs):
        out = np.array(Hs, dtype=object)
        for r in range(len(out)):
            out[r, 0, l - 1] = fhat(plan, out[r, 0, : plan.d])
        return out

    bound = tight_error_bound(plan.d, H, beta, plan.N) + 2.0**-41
    # why kept: a Construction's fields by keyword, as theorem2's network gives its own: alike in shape only
    return Construction(
        name="lemma1.network",
        paper="Appendix E.1, Lemma 1",
        network=net,
        claim=f"T(x) = Σ_n f_n φ_n(x) exactly for x in [0,1]^{plan.d} (N = {plan.N}), so |T - f| <= {bound:.4g}",
        sample_inputs=sample,
        expected=expected,
        constants={
            "N": plan.N,
            "grid": grid,
            "R": plan.R,
            "H_f": H,
            "beta": beta,
            "eps": eps,
            "tight_bound": bound,
            "paper_bound": paper_error_bound(plan.d, H, beta, plan.N),
            "paper_N": paper_N(plan.d, H, beta, eps),
            "plan": plan,
        },
        stated_kappa_bound=stated.kappa,
        stated_resources=stated.stated_resources(),
        compare_rows=(0,),
        compare_cols=lambda l_: [l_ - 1],
    )
