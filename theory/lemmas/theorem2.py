"""Theorem 2 (Section 2.4; proof in Appendix E.2) as one tmcheck-network on a manifold from `manifolds`.

    T(x) = Σ_n L_n(φ_n(x)) · 1̂_{r²,Δ}(||x - c_n||²),   L_n(z) = Σ_m f̃_n(t_m) φ_m(z)   (Lemma 1 on chart n)

with f̃_n = (f ρ_n) ∘ φ_n^{-1} on φ_n(U_n) and 0 elsewhere in [0,1]^d. Every chart n owns a run of
L_c = D + d + 1 + dN + (d+1)N^d tokens (0-based offsets): its copy of x (D), the chart coordinates z
(d), the indicator (1), the s_{i,j} (dN) and d+1 factor slots per patch (N^d). The charts run side
by side (Lemma 7) in one sequence of l = C_M L_c tokens; blocks:

  1. chart block: heads write s V_n^{ji}(x^j - c^j) + a into row 1 of z_i (D heads each) and
     (x^j - c^j)^2 - x^j + S into row 1 of the x-copy j; the FFN "mailbox" adds row1 - S to row 0 of
     every token whose row 1 is non-zero (row 1 in [S - b, S + b], S = b + 1) and clears row 1:
     z_i = φ_n(x)_i exactly (E_{n,2} = 0) and x-copy j holds (x^j - c_n^j)^2.
  2. ψ + indicator block: Lemma 1's ψ heads on z, and D heads summing the squares into row 1 of the
     indicator token, shifted by S_I above every ψ mailbox; one FFN computes ψ on the ψ range and
     1̂_{r²,Δ}(row1 - S_I) on the indicator range, zero on empty mailboxes. The indicator part is
     the deep FFN with bounded weights: Δ = 2^-L and L layers multiplying by 2 (the paper's
     (1/Δ)^{1/log(1/Δ)}), or one layer with weight 1/Δ (`deep=False`).
  3. copy block: the d factors s_{i,n^i} and the indicator into each patch's d+1 slots.
  4. ⌈log2(d+1)⌉ product blocks, 5. f_n block, 6. sum block: as in Lemma 1, over all charts.

Corrections to the paper (each explained in `theorem2`'s docstring): the final product with the
indicator is one more factor of the Lemma 1 product tree (the paper's B_1 of Step 3 needs
|c_f| <= M and a separate block); the mailbox FFNs replace the gating FFNs of Lemmas 4-5, so every
block has one FFN shared by all charts and Lemma 7 needs no gating (depth and width unchanged); the
projection and indicator run before the Lemma 1 blocks instead of "in parallel" with them.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from tmcheck.theory import spec as resources_spec
from tmcheck.theory.construction import Construction
from tmcheck.theory.lemmas.parallel import union
from tmcheck.theory.manifolds import Manifold
from tmcheck.theory.network import Network, structured_positional, zeros
from tmcheck.theory.sparse import (
    E0,
    F1,
    ONE,
    ZERO,
    Interaction,
    SparseBlock,
    copy_interactions,
    exact_layer,
    fvalue_interactions,
    grid_value,
    kernel_row,
    move_clear_ffn,
    patch_index,
    patches,
    product_levels,
    psi_ffn_layers,
    psi_interactions,
    realize,
    shift_row0_ffn,
    sum_head,
    zero_row0_ffn,
)
from tmcheck.theory.targets import Target, TargetError


def rational(v: float) -> Fraction:
    """The exact rational value of a float64 (the network's weights are these rationals)."""
    return Fraction(float(v))


@functools.cache
def mailbox_ffn(b: int) -> tuple:
    """z + FFN(z): row 0 += row1 - S, row 1 = 0 when row 1 in [S - b, S + b] (S = b + 1); nothing when row 1 = 0.

    Hidden σ(r - 1), σ(r); row 0 gets (1 + b) σ(r - 1) - b σ(r): 0 at r = 0, and for r >= 1
    (1 + b)(r - 1) - b r = r - 1 - b = r - S. Row 1 gets -σ(r) = -r (r >= 0 on the domain)."""
    W1 = [[0, 1, 0, 0, 0], [0, 1, 0, 0, 0]]
    W2 = [[1 + b, -b], [0, -1], [0, 0], [0, 0], [0, 0]]
    return (exact_layer(W1, [-1, 0]), exact_layer(W2, [0] * 5))


@functools.cache
def psi_indicator_ffn(N: int, S_I: int, r2: Fraction, L: int, deep: bool = True) -> tuple:
    """ψ on the ψ mailboxes (row 1 <= S_I - 2) and 1̂_{r²,Δ}(row1 - S_I) on the indicator mailbox.

    Units (all >= 0, so extra layers pass them on unchanged): the five ψ units of Lemma 1;
    u1 = σ(r - S_I + 1), u2 = σ(r - S_I) (u1 - u2 = 1 on the indicator range, 0 below S_I - 1);
    y_1 = σ(k(r - c0)) with c0 = S_I + r² - Δ, then y_{i+1} = σ(k y_i): y_L = σ((s - r² + Δ)/Δ) by
    positive homogeneity (k = 2, Δ = 2^-L; or k = 1/Δ and L = 1 when not deep). Last hidden layer:
    σ(y_L), σ(y_L - 1). Row 0 += ψ-part + u1 - u2 - min(y_L, 1), which is 1̂(s) on the indicator
    range and ψ(3(N-1)(r-1)) below; row 1 = -σ(r)."""
    Delta = Fraction(1, 2**L)
    k = Fraction(2) if deep else 1 / Delta
    n_scale = L if deep else 1
    W1p, b1p, o0p, o1p = psi_ffn_layers(N)
    c0 = S_I + r2 - Delta
    W = [list(r) for r in W1p] + [[0, 1, 0, 0, 0], [0, 1, 0, 0, 0], [0, k, 0, 0, 0]]
    b = list(b1p) + [-S_I + 1, -S_I, -k * c0]
    layers = [exact_layer(W, b)]
    nu = 8  # 5 ψ units, u1, u2, y

    def ident(n):
        return [[1 if i == j else 0 for j in range(n)] for i in range(n)]

    for _ in range(n_scale - 1):
        Wk = ident(nu)
        Wk[7][7] = k
        layers.append(exact_layer(Wk, [0] * nu))
    last = ident(nu) + [[0] * 7 + [1]]
    layers.append(exact_layer(last, [0] * 8 + [-1]))  # ..., u2, σ(y) (index 7), σ(y - 1) (index 8)
    row0 = list(o0p) + [1, -1, -1, 1]
    row1 = list(o1p) + [0, 0, 0, 0]
    layers.append(exact_layer([row0, row1] + [[0] * 9] * 3, [0] * 5))
    return tuple(layers)


def indicator_hat(s: Fraction, r2: Fraction, Delta: Fraction) -> Fraction:
    """1̂_{r²,Δ}(s): 1 for s <= r² - Δ, 0 for s >= r², linear in between (E.2, Step 2.3a)."""
    if s <= r2 - Delta:
        return F1
    if s >= r2:
        return Fraction(0)
    return (r2 - s) / Delta


@dataclass
class Theorem2Plan:
    manifold: Manifold
    target: Target
    eps: float
    N: int
    N_proven: int
    L_ind: int
    deep: bool
    R: Fraction
    V: list  # per chart (D, d) rationals
    c: list  # per chart (D,) rationals
    fvals: list  # per chart, N^d rationals
    H_est: float  # the chart constant H̃ = H_f L_φ^β + R L_ρ the grid is chosen for
    multiplicity: int
    H_f: float = 1.0
    R_declared: float = 1.0
    blocks: list = field(default_factory=list)  # `plan_blocks`, filled by theorem2_plan

    @property
    def layout(self) -> resources_spec.Theorem2Layout:
        return resources_spec.Theorem2Layout(self.d, self.D, self.N, self.manifold.C_M)

    def stated(self, arithmetic: str = "float64") -> resources_spec.ConstructionSpec:
        """The resource count (`theory.spec.theorem2_spec`: N, l, m, L_T, ...) for this atlas, grid and H_f, R."""
        return resources_spec.theorem2_spec(
            self.manifold,
            eps=self.eps,
            H_f=self.H_f,
            R=self.R_declared,
            N=self.N,
            deep=self.deep,
            arithmetic=arithmetic,
        )

    @property
    def D(self):
        return self.manifold.D

    @property
    def d(self):
        return self.manifold.d

    @property
    def Lc(self) -> int:
        return self.layout.Lc

    @property
    def l(self) -> int:
        return self.layout.l

    @property
    def Delta(self) -> Fraction:
        return Fraction(1, 2**self.L_ind)

    @property
    def r2(self) -> Fraction:
        return rational(self.manifold.r) ** 2


def chart_value(m: Manifold, target: Target, n: int, N: int, p: tuple[int, ...]) -> float:
    """f̃_n(t_p) = (f ρ_n)(φ_n^{-1}(t_p)) where t_p ∈ φ_n(U_n), else 0."""
    x = m.chart_inverse(n, np.array([j / (N - 1) for j in p]))
    if x is None:
        return 0.0
    return float(target(x[None]).real[0] * m.partition(x[None])[0, n])


def chart_values(m: Manifold, target: Target, n: int, N: int) -> list[float]:
    """f̃_n at every grid point of chart n (`chart_value`)."""
    return [chart_value(m, target, n, N, p) for p in patches(m.d, N)]


class LazyChartValues(Sequence):
    """Chart n's N^d rational f̃_n(t_p), each computed (and checked against |f̃_n| <= R) when first read: the
    values of a network too large to list (`theorem2_plan(lazy=True)`, read by `local_eval`)."""

    def __init__(self, m: Manifold, target: Target, n: int, N: int, R: Fraction):
        self.m, self.target, self.n, self.N, self.R = m, target, n, N, R
        self._cache: dict[int, Fraction] = {}

    def __len__(self) -> int:
        return self.N**self.m.d

    def __getitem__(self, idx: int) -> Fraction:
        if idx not in self._cache:
            p, q = [], idx
            for _ in range(self.m.d):
                q, j = divmod(q, self.N)
                p.append(j)
            v = rational(chart_value(self.m, self.target, self.n, self.N, tuple(reversed(p))))
            if abs(v) > self.R:
                raise TargetError(
                    f"|f̃_{self.n}| = {float(v):.6g} > R = {float(self.R)} at a grid point; pass a larger --R"
                )
            self._cache[idx] = v
        return self._cache[idx]


def theorem2_plan(
    m: Manifold,
    target: Target,
    eps: float,
    N: int | None = None,
    max_tokens: int | None = None,
    deep: bool = True,
    seed: int = 0,
    H_f: float = 1.0,
    R: float = 1.0,
    lazy: bool = False,
) -> Theorem2Plan:
    """Grid, indicator depth and values for Theorem 2; N = the proven N (`theory.spec.theorem2_spec`)
    unless given, or lowered until l <= max_tokens when that is given.

    lazy: the f̃_n are computed when read (`LazyChartValues`), R is the declared bound instead of the
    largest |f̃_n|, and no blocks are listed: a plan for a network too large to build, whose blocks
    `chart_blocks` generates per chart and per chosen token (`local_eval`).

    Error budget (corrected Step 3): only charts containing x contribute (1̂_n = 0 outside B(c_n, r)),
    so |T - f|(x) <= Σ_{n: x ∈ U_n} (E_{n,1} + E_{n,3}) <= μ (δ_1 + δ_3) with μ the largest number of
    charts containing a point (the paper sums over all C_M charts). δ_1 = δ_3 = ε/(2μ): N is Lemma 1's
    tight N for the chart constant H̃ = H_f L_φ^β + R L_ρ; E_{n,3} <= R e^{-r²/Δ} / b_min (b_min the
    least bump sum) and Δ = 2^-L the largest power of 2 meeting δ_3. H_f and R are declared (|f| <= R,
    f H_f-Lipschitz on 𝓜) and refuted here when a sample contradicts them.
    """
    if not (0 < eps < 1):
        raise TargetError(f"ε must lie in (0, 1) as in Theorem 2, got {eps}")
    if target.d != m.D:
        raise TargetError(f"the target must be a function of x0..x{m.D - 1} (D = {m.D})")
    rng = np.random.default_rng(seed)
    Xs = m.sample(4000, rng)
    fv = target(Xs)
    if not np.all(np.isfinite(fv)) or np.abs(fv.imag).max() > 1e-12:
        raise TargetError(f"target {target.text!r} is unbounded or not real on the {m.name}")
    check_declared(m, target, Xs, fv.real, H_f, R, rng)
    rs = resources_spec.theorem2_spec(m, eps=eps, H_f=H_f, R=R, deep=deep, seed=seed, with_kappa=False)
    N_proven = rs.N
    if N is None:
        N = N_proven
        if max_tokens is not None:
            while N > 2 and resources_spec.Theorem2Layout(m.d, m.D, N, m.C_M).l > max_tokens:
                N -= 1
    if N < 2:
        raise TargetError(f"the grid needs N >= 2, got {N}")
    V = [[[rational(v) for v in row] for row in m.tangent(n)] for n in range(m.C_M)]
    c = [[rational(v) for v in m.centres[n]] for n in range(m.C_M)]
    if lazy:
        Rg = rational(R)
        fvals = [LazyChartValues(m, target, n, N, Rg) for n in range(m.C_M)]
    else:
        fvals = [[rational(v) for v in chart_values(m, target, n, N)] for n in range(m.C_M)]
        Rg = max(max(abs(v) for v in fs) for fs in fvals)
    plan = Theorem2Plan(
        m,
        target,
        eps,
        N,
        N_proven,
        rs.extra["L_indicator"],
        deep,
        Rg,
        V,
        c,
        fvals,
        rs.extra["H_chart"],
        rs.extra["mu"],
        H_f,
        R,
    )
    if not lazy:
        plan.blocks = plan_blocks(plan)
    return plan


def check_declared(
    m: Manifold, target: Target, X: np.ndarray, f: np.ndarray, H_f: float, R: float, rng: np.random.Generator
) -> None:
    """Refute |f| <= R and |f(x) - f(x')| <= H_f |x - x'| on sampled (nearby) pairs of 𝓜 (evidence, not proof)."""
    if np.abs(f).max() > R * (1 + 1e-12):
        raise TargetError(f"declared R = {R} but |f| = {np.abs(f).max():.6g} on the {m.name}; pass a larger --R")
    Xp = m.project(X + 0.02 * (m.sample_model(rng, len(X)) @ m.Q.T))
    dx = np.linalg.norm(X - Xp, axis=1)
    ok = dx > 0
    ratio = float(np.max(np.abs(f - target(Xp).real)[ok] / dx[ok])) if ok.any() else 0.0
    if ratio > H_f * (1 + 1e-9):
        raise TargetError(
            f"declared H_f = {H_f} but a sampled pair has |f(x) - f(x')| / |x - x'| = {ratio:.4g}; pass a larger --H-f"
        )


def chart_blocks(plan: Theorem2Plan, n: int, chosen: Selection | None = None) -> list[SparseBlock]:
    """Chart n's blocks on its own run of L_c tokens (offsets from 0): chart, ψ + indicator, copy, the product
    levels and f_n (module docstring). Every chart's blocks have the same FFNs. `chosen`: only the heads into
    the chosen s_{i,j} and patches (and every chart and indicator head), for `local_eval`; default all."""
    m, d, D, N = plan.manifold, plan.d, plan.D, plan.N
    lay = resources_spec.Theorem2Layout(d, D, N, 1)
    const = resources_spec.theorem2_constants(m)
    s, a = const.s, const.a
    X, z, ind = lay.x_tokens(0), lay.z_tokens(0), lay.indicator(0)
    psi_base, prod_base = lay.psi_base(0), lay.prod_base(0)
    V, c = plan.V[n], plan.c[n]
    chart = []
    for i in range(d):
        for j in range(D):
            chart.append(
                Interaction(z[i], X[j], 1, (ONE, ZERO), (kernel_row(s * V[j][i], -s * V[j][i] * c[j] + a), ZERO))
            )
    for j in range(D):
        K = (kernel_row(1, -(2 * c[j] + 1)), kernel_row(0, c[j] ** 2 + const.S))
        chart.append(Interaction(X[j], X[j], 1, (E0, ONE), K))
    window = None if chosen is None else chosen.s
    pats = None if chosen is None else chosen.patches
    idx = None if pats is None else [patch_index(p, N) for p in pats]
    psi_ind = psi_interactions(z, N, psi_base, window)
    psi_ind += [Interaction(ind, X[j], 1, (ONE, ZERO), (kernel_row(1, Fraction(const.S_I, D)), ZERO)) for j in range(D)]
    blocks = [
        SparseBlock(chart, mailbox_ffn(const.b), const.M1, name="chart"),
        SparseBlock(
            psi_ind, psi_indicator_ffn(N, const.S_I, plan.r2, plan.L_ind, plan.deep), const.M2, name="psi+indicator"
        ),
        SparseBlock(
            copy_interactions(d, N, psi_base, prod_base, lay.F, extra_tokens=[ind], chosen=pats),
            (),
            const.M2,
            name="copy",
        ),
    ]
    for level, its in enumerate(product_levels(lay.F, N**d, prod_base, idx)):
        blocks.append(SparseBlock(its, move_clear_ffn(), const.M2 if level == 0 else F1, name=f"product{level + 1}"))
    blocks.append(
        SparseBlock(fvalue_interactions(plan.fvals[n], prod_base, lay.F, plan.R, idx), zero_row0_ffn(), F1, name="f_n")
    )
    return blocks


@dataclass(frozen=True)
class Selection:
    """Some tokens of one chart's run: s[i] the j of the chosen s_{i,j}, and the chosen patches n."""

    s: tuple[tuple[int, ...], ...]
    patches: tuple[tuple[int, ...], ...]


def sum_block(plan: Theorem2Plan) -> SparseBlock:
    """The last block: one dense head adds Σ_t row 1 to row 0 of every token, the FFN subtracts R C_M N^d."""
    total = plan.R * plan.manifold.C_M * plan.N**plan.d
    return SparseBlock([], shift_row0_ffn(-total), max(F1, 2 * plan.R), dense=(sum_head(),), name="sum")


def plan_blocks(plan: Theorem2Plan) -> list[SparseBlock]:
    """The network's blocks: per stage, the union (Lemma 7, `parallel.union`) of every chart's block at its run of
    tokens, sharing the stage's FFN; then the sum block over all charts (one dense head, the shift R C_M N^d)."""
    Lc, C_M = plan.Lc, plan.manifold.C_M
    per_chart = [chart_blocks(plan, n) for n in range(C_M)]
    blocks = [
        union([(stage[n], n * Lc, Lc) for n in range(C_M)], stage[0].name) for stage in zip(*per_chart, strict=True)
    ]
    return blocks + [sum_block(plan)]


def theorem2_network(plan: Theorem2Plan, arithmetic: str = "float64") -> Network:
    """The tmcheck-network of a plan: x copied into every chart's first D tokens, the plan's blocks realized."""
    m, l, Lc, D = plan.manifold, plan.l, plan.Lc, plan.D
    one = F1 if arithmetic == "exact" else 1.0
    U = zeros((l, D), arithmetic)
    for n in range(m.C_M):
        for j in range(D):
            U[n * Lc + j, j] = one
    E = zeros((5, 1), arithmetic)
    E[0, 0] = one
    blocks, pattern = realize(plan.blocks, l, arithmetic)
    meta = {
        "name": "theorem2",
        "paper": "Appendix E.2, Theorem 2",
        "manifold": m.name,
        "D": D,
        "d": m.d,
        "C_M": m.C_M,
        "r": m.r,
        "N": plan.N,
        "N_proven": plan.N_proven,
        "Delta": str(plan.Delta),
        "L_indicator": plan.L_ind,
        "deep_indicator": plan.deep,
        "target": plan.target.text,
        "eps": plan.eps,
        "R": str(plan.R),
        "interaction_pattern": pattern,
    }
    return Network(arithmetic, l, D, U, E, structured_positional(l, arithmetic), blocks, meta=meta)


# --------------------------------------------------------------------------------------------
# the claim, computed directly, and the error split


def claim_parts(plan: Theorem2Plan, x) -> list[tuple[Fraction, Fraction, list]]:
    """Per chart: (L_n(φ_n(x)), 1̂_n(x), φ_n(x)) computed exactly from the network's rational V_n, c_n."""
    x = [Fraction(v) for v in x]
    s = 1 / (2 * rational(plan.manifold.r))
    out = []
    for n in range(plan.manifold.C_M):
        V, c = plan.V[n], plan.c[n]
        z = [sum(s * V[j][i] * (x[j] - c[j]) for j in range(plan.D)) + Fraction(1, 2) for i in range(plan.d)]
        dist2 = sum((x[j] - c[j]) ** 2 for j in range(plan.D))
        out.append((grid_value(plan.fvals[n], plan.N, z), indicator_hat(dist2, plan.r2, plan.Delta), z))
    return out


def claim_value(plan: Theorem2Plan, x) -> Fraction:
    return sum((Ln * ind for Ln, ind, _ in claim_parts(plan, x)), Fraction(0))


def error_split(plan: Theorem2Plan, X: np.ndarray) -> dict:
    """On manifold points X: |T_claim - f|, and per chart E_{n,1} = |f̃_n∘φ_n - L_n∘φ_n| on U_n,
    E_{n,2} = 0 (φ_n is exact; see `theorem2`), E_{n,3} = |f̃_n∘φ_n| |1_{U_n} - 1̂_n| (max over X)."""
    m = plan.manifold
    f = plan.target(X).real
    rho = m.partition(X)
    inside = m.in_chart(X)
    E1 = np.zeros(m.C_M)
    E3 = np.zeros(m.C_M)
    T = np.zeros(len(X))
    for k, x in enumerate(X):
        parts = claim_parts(plan, [rational(v) for v in x])
        for n, (Ln, ind, _) in enumerate(parts):
            ft = f[k] * rho[k, n]
            T[k] += float(Ln * ind)
            if inside[k, n]:
                E1[n] = max(E1[n], abs(ft - float(Ln)))
                E3[n] = max(E3[n], abs(ft) * abs(1 - float(ind)))
    return {"T": T, "err": float(np.abs(T - f).max()), "E1": E1, "E3": E3, "E2": np.zeros(m.C_M)}


def theorem2(
    m: Manifold,
    target: Target,
    eps: float,
    N: int | None = None,
    max_tokens: int | None = 60000,
    deep: bool = True,
    arithmetic: str = "exact",
    H_f: float = 1.0,
    R: float = 1.0,
) -> Construction:
    """Theorem 2 as a Construction (exact by default; float64 for large atlases).

    Proof (Appendix E.2, corrected).
    Step 1. U_n = 𝓜 ∩ B(c_n, r), r = τ/4, ρ_n the bump partition of unity of `manifolds` (supported
      in U_n), f = Σ_n f ρ_n = Σ_n f̃_n(φ_n(x)) 1_{U_n}(x).
    Step 2.2 (E_{n,2} = 0). Block 1's heads are Lemma 3 heads with data term s V^{ji}(x^j - c^j) + a
      >= 0 (a = (S + 1/2)/D >= s |x^j - c^j|), so z_i's row 1 is Σ_j (...) = φ_n(x)_i + S and the
      mailbox FFN leaves φ_n(x)_i in row 0: T_φ = φ exactly. The x-copies get (x^j - c^j)^2 the
      same way (data term (x - c)^2 - x + S >= 0). The paper's five-layer FFN with two gates is
      replaced by the mailbox FFN, which vanishes on tokens whose row 1 is 0.
    Step 2.3. Block 2 sums the squares into the indicator token (shift S_I) and its FFN yields
      1̂_{r²,Δ}(||x - c_n||²); the deep version has L = log2(1/Δ) layers with weights 2 (bounded).
    Step 2.1 and 3. The Lemma 1 blocks run on every chart at once with one more factor, the
      indicator, in each patch's product: the product tree yields φ_m(z) 1̂_n and the f_n and sum
      blocks give T(x) = Σ_n L_n(φ_n(x)) 1̂_n(x). ψ is exact for every real z, and Σ_m φ_m(z) <= 1,
      so |L_n(z)| <= R also off the chart, where 1̂_n = 0 anyway (the paper needs |c_f| <= M there).
    Error. |T - f|(x) = |Σ_{n: x∈U_n} (L_n(φ_n x) 1̂_n - f̃_n(φ_n x))| <= Σ_{n: x∈U_n} E_{n,1} + E_{n,3}
      (using 0 <= 1̂_n <= 1 = 1_{U_n} there): μ terms, not C_M (see `theorem2_spec`).
    Lemma 7. All charts share each block's FFN (the same N, S, S_I, Δ), so the parallel block is the
      union of the re-indexed heads (C recomputed for l = C_M L_c by `sufficient_C`) and that FFN.
    """
    plan = theorem2_plan(m, target, eps, N, max_tokens, deep, H_f=H_f, R=R)
    return construction_of(plan, theorem2_network(plan, arithmetic))


def construction_of(plan: Theorem2Plan, net: Network) -> Construction:
    """The Construction of a built Theorem 2 network: inputs on the manifold, the exact claim, and the
    spec's counts and κ as the stated resources."""
    m, l = plan.manifold, plan.l
    stated = plan.stated(net.arithmetic)

    def sample(rng, n):
        H = np.empty((n, 5, l), dtype=object)
        H[:] = structured_positional(l, "exact")
        H[:, 0:2, :] = Fraction(0)
        for r, x in enumerate(m.sample(n, rng)):
            for c in range(m.C_M):
                H[r, 0, c * plan.Lc : c * plan.Lc + plan.D] = [rational(v) for v in x]
        return H

    def expected(Hs):
        out = np.array(Hs, dtype=object)
        for r in range(len(out)):
            out[r, 0, l - 1] = claim_value(plan, out[r, 0, : plan.D])
        return out

    return Construction(
        name="theorem2.network",
        paper="Appendix E.2, Theorem 2",
        network=net,
        claim=f"T(x) = Σ_n L_n(φ_n(x)) 1̂_n(x) exactly on the {m.name} (C_M = {m.C_M}, N = {plan.N}, Δ = {plan.Delta})",
        sample_inputs=sample,
        expected=expected,
        constants={
            "plan": plan,
            "N": plan.N,
            "N_proven": plan.N_proven,
            "Delta": plan.Delta,
            "L_ind": plan.L_ind,
            "mu": plan.multiplicity,
            "H_est": plan.H_est,
            "R": plan.R,
            "resources_spec": stated,
        },
        stated_kappa_bound=stated.kappa,
        stated_resources=stated.stated_resources(),
        compare_rows=(0,),
        compare_cols=lambda l_: [l_ - 1],
    )
