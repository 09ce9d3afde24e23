"""One source for the resources of the full constructions: Lemma 1 (Appendix E.1) and Theorem 2 (E.2).

A spec computes N, l, m, L_T, L_FFN, w_FFN and κ (= max |θ| over heads and FFNs, `kappa_blocks` of
`network.resources`) from the token layout and the block constants the builders use
(`lemmas/lemma1.py`, `lemmas/theorem2.py` read their offsets and constants from here), so
`tmcheck bound lemma1|theorem2`, the constructions' `stated_resources`/`resource_table` and
proofs_check all read one set of numbers. The paper's O(·) forms (hidden constant 1) sit beside
them in `orders`, for comparison only.

Why the counts are what they are (0-based token offsets; F factors per patch):
  Lemma 1 (F = d): x (d tokens), s_{i,j} (dN), patches (F N^d): l = d + dN + dN^d. Blocks: ψ (dN heads,
    FFN 2 layers of 5 hidden units), copy (d N^d heads), ⌈log2 F⌉ product levels (per patch ⌊a/2⌋ +
    (a mod 2) heads for a active factors, one affine layer), f_n (N^d heads), sum (one dense head).
  Theorem 2 (F = d + 1, per chart L_c = D + d + 1 + dN + F N^d, l = C_M L_c): chart (C_M (d + 1) D
    heads, mailbox FFN 2 layers of 2), ψ + indicator (C_M (dN + D) heads, FFN L_ind + 2 layers of at
    most 9 units when deep, 3 otherwise), copy (C_M F N^d), product levels, f_n (C_M N^d), sum.
  κ: a Lemma 3 head's largest entry is its C = b/(1 - c_max) (`sparse.sufficient_C`; twice that in
    float64), b the data bound of its kernels at the block's M, c_max the largest adjacent cosine of
    the interaction vectors at this l; the FFNs contribute 3N - 1 (ψ's bias), the sum block's shift
    R · (number of patches), and Theorem 2's mailbox 1 + b and indicator weights.
Theorem 2's grid (corrected Step 3): |T - f| <= μ (δ_1 + δ_3), δ_1 = δ_3 = ε/(2μ), with μ the atlas's
multiplicity; N = Lemma 1's tight N for the chart constant H̃ = H_f L_φ^β + R L_ρ of f̃_n = (f ρ_n)∘φ_n^{-1}
(L_φ, L_ρ: Lipschitz constants of φ_n^{-1} and of ρ_n∘φ_n^{-1}, μ and the least bump sum b_min from the
closed forms of `theory.atlas`), and Δ = 2^-L_ind the largest power of 2 with R e^{-r²/Δ} / b_min <= δ_3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from tmcheck.theory.atlas import AtlasConstants, atlas_constants
from tmcheck.theory.construction import SIZE_LIMIT
from tmcheck.theory.manifolds import Manifold, make_manifold
from tmcheck.theory.targets import TargetError, check_constants, grid_N

BYTES_PER_FLOAT = 8


def product_depth(F: int) -> int:
    """⌈log2 F⌉ pairwise product levels for F factors (0 for F = 1): the paper's log d."""
    return math.ceil(math.log2(F)) if F > 1 else 0


def level_sizes(F: int) -> list[int]:
    """Heads per patch at each product level: ⌊a/2⌋ pairs plus one carry when a is odd."""
    out, a = [], F
    while a > 1:
        out.append(a // 2 + a % 2)
        a = (a + 1) // 2
    return out


@dataclass(frozen=True)
class ConstructionSpec:
    """Resources of one full construction, computed from its layout (not measured)."""

    construction: str  # "lemma1" or "theorem2"
    d: int
    N: int
    l: int
    m: int
    L_T: int
    L_FFN: int
    w_FFN: int
    kappa: float | Fraction  # max |θ| over heads and FFNs (exact arithmetic: a Fraction; an upper bound when f_max < R)
    arithmetic: str
    heads_per_block: tuple[tuple[str, int], ...]
    orders: dict = field(default_factory=dict)  # the paper's O(·) forms at hidden constant 1
    extra: dict = field(default_factory=dict)  # construction-specific constants (C_M, μ, δ, N_proven, ...)

    def stated_resources(self) -> dict:
        """What check_construction compares with the measured network."""
        return {"L_T": self.L_T, "m": self.m, "L_FFN": self.L_FFN, "l": self.l}

    def as_dict(self) -> dict:
        out = {k: getattr(self, k) for k in ("construction", "d", "N", "l", "m", "L_T", "L_FFN", "w_FFN", "arithmetic")}
        out["kappa"] = float(self.kappa)
        out["heads_per_block"] = dict(self.heads_per_block)
        out["orders"] = dict(self.orders)
        out.update({k: v for k, v in self.extra.items() if isinstance(v, (int, float, str, bool))})
        return out

    def n_weights(self) -> int:
        """Entries of the heads (3 matrices 5 x 5 each) and the positional rows (5 l): the weights that grow
        with N. The FFNs, shared by all tokens, add fewer than 10^4 entries and are left out."""
        return 75 * sum(n for _, n in self.heads_per_block) + 5 * self.l

    def check_size(self, limit: int = SIZE_LIMIT, option: str = "--size-limit") -> None:
        """Resource guard, before anything is built: refuse when the tokens or the heads exceed `limit`,
        naming the estimate (tokens, heads, float64 bytes of the weights) and the option that raises it."""
        heads = sum(n for _, n in self.heads_per_block)
        if self.l > limit or heads > limit:
            raise TargetError(
                f"the {self.construction} network would have l = {_approx(self.l)} tokens and {_approx(heads)} heads "
                f"(~{_approx(self.n_weights() * BYTES_PER_FLOAT)} bytes of float64 weights) at N = "
                f"{_approx(self.N)}; the limit is "
                f"{limit} tokens and heads: raise it with {option}, or take a larger ε or a smaller N or d"
            )


def _pow(x: float, e: float) -> float:
    """x ** e, inf where it overflows (the stated orders at a tiny ε)."""
    try:
        return x**e
    except OverflowError:
        return math.inf


def _approx(n: int) -> str:
    """A count for a message: 4 significant digits, or a power of ten when it is too large for a float."""
    if n < 10**15:
        return f"{n:.4g}"
    return f"10^{n.bit_length() * math.log10(2):.1f}"


MAX_KAPPA_L = 10**8  # exact κ needs the l rational interaction vectors themselves


def _gap(l: int, arithmetic: str):
    """1 - c_max at l tokens (`sparse.interaction_gap`): exact from the rational vectors (refused beyond
    MAX_KAPPA_L tokens), float64 in closed form; None when l is too large for a float (log-space κ then)."""
    from tmcheck.theory.sparse import interaction_gap

    if arithmetic == "exact" and l > MAX_KAPPA_L:
        raise TargetError(
            f"exact κ is computed from the l interaction vectors and l = {_approx(l)} exceeds {MAX_KAPPA_L}; "
            "take a larger ε or a smaller N, or the float64 κ"
        )
    if arithmetic != "exact" and l > 10**150:
        return None
    return interaction_gap(l, arithmetic)


def _stated_C(b, gap, arithmetic: str, l: int = 0):
    """A head's largest entry, C (exact: a Fraction, so the stated κ is not rounded below the measured one).
    float64 at l beyond 10^150 (gap None): log C = log 2b - log(2 sin²(π/4l)), sin x = x to 10^-300 there;
    inf when C exceeds the float range."""
    from tmcheck.theory.sparse import sufficient_C

    if gap is None:
        log_gap = math.log(2) + 2 * (math.log(math.pi / 4) - math.log(l))
        log_C = math.log(2 * float(b)) - log_gap
        return math.exp(log_C) if log_C < 709 else math.inf
    C = sufficient_C(Fraction(b) if arithmetic == "exact" else b, gap, arithmetic)
    return C if arithmetic == "exact" else float(C)


def _kappa(values, arithmetic: str):
    """max of the candidate entries, exact (Fraction) in exact arithmetic, float otherwise (inf past the range)."""
    if arithmetic == "exact":
        return max(Fraction(v) for v in values)
    return max(_float_or_inf(v) for v in values)


def _float_or_inf(v) -> float:
    try:
        return float(v)
    except OverflowError:
        return math.inf


# --------------------------------------------------------------------------------------------
# Lemma 1


@dataclass(frozen=True)
class Lemma1Layout:
    """Token offsets of Lemma 1's network (module docstring of lemmas/lemma1.py)."""

    d: int
    N: int

    @property
    def F(self) -> int:
        return self.d

    @property
    def psi_base(self) -> int:
        return self.d

    @property
    def prod_base(self) -> int:
        return self.d + self.d * self.N

    @property
    def l(self) -> int:
        return self.prod_base + self.F * self.N**self.d


MAX_GRID_DIGITS = 10**6  # Lemma 1 counts its N^d grid points exactly: larger counts are refused, not computed


def lemma1_spec(
    d: int,
    N: int | None = None,
    *,
    eps: float | None = None,
    H_f: float = 1.0,
    beta: float = 1.0,
    R: float = 1.0,
    f_max: float | None = None,
    grid: str = "tight",
    arithmetic: str = "exact",
    with_kappa: bool = True,
) -> ConstructionSpec:
    """Lemma 1's resources at grid N (or the `grid` N for ε, H_f, β). R bounds |f_n|; f_max (default R)
    is the largest |f_n| actually used, which sets the f_n heads' data bound R + f_max."""
    if N is None:
        if eps is None:
            raise TargetError("give N or ε")
        N = grid_N(grid, d, H_f, beta, eps)
    if N < 2:
        raise TargetError(f"the grid needs N >= 2 points per axis, got {N}")
    digits = d * math.log10(N)
    if digits > MAX_GRID_DIGITS:  # N^d is an exact integer below: 2^(10^20) would never finish
        raise TargetError(
            f"the grid's N^d = 10^{digits:.4g} points has more than 10^6 digits (d = {d}, N = {N}); take a smaller d"
        )
    lay = Lemma1Layout(d, N)
    P = N**d
    heads = [("psi", d * N), ("copy", d * P)]
    heads += [(f"product{k + 1}", P * s) for k, s in enumerate(level_sizes(lay.F))]
    heads += [("f_n", P), ("sum", 1)]
    R = float(R)
    fm = R if f_max is None else float(f_max)
    kappa = math.nan
    if with_kappa:
        gap = _gap(lay.l, arithmetic)
        kappa = _kappa(
            [_stated_C(max(2, Fraction(fm) + Fraction(R)), gap, arithmetic, lay.l), 3 * N - 1, Fraction(R) * P, 1],
            arithmetic,
        )
    orders = {}
    if eps is not None:
        orders = {
            "l": d * _pow(eps, -d / beta),
            "m": d * _pow(eps, -d / beta),
            "kappa": d * d * _pow(eps, -2 * d / beta),
            "L_T": math.log2(d) + 4,
            "L_FFN": 7,
        }
    return ConstructionSpec(
        "lemma1",
        d,
        N,
        lay.l,
        max(n for _, n in heads),
        4 + product_depth(lay.F),
        2,
        5,
        kappa,
        arithmetic,
        tuple(heads),
        orders,
        {"R": R, "grid": grid},
    )


# --------------------------------------------------------------------------------------------
# Theorem 2


@dataclass(frozen=True)
class Theorem2Layout:
    """Token offsets of chart n's run (module docstring of lemmas/theorem2.py) and the block constants."""

    d: int
    D: int
    N: int
    C_M: int

    @property
    def F(self) -> int:
        return self.d + 1

    @property
    def Lc(self) -> int:
        return self.D + self.d + 1 + self.d * self.N + self.F * self.N**self.d

    @property
    def l(self) -> int:
        return self.C_M * self.Lc

    def x_tokens(self, n: int) -> list[int]:
        return [n * self.Lc + j for j in range(self.D)]

    def z_tokens(self, n: int) -> list[int]:
        return [n * self.Lc + self.D + i for i in range(self.d)]

    def indicator(self, n: int) -> int:
        return n * self.Lc + self.D + self.d

    def psi_base(self, n: int) -> int:
        return self.indicator(n) + 1

    def prod_base(self, n: int) -> int:
        return self.psi_base(n) + self.d * self.N


@dataclass(frozen=True)
class Theorem2Constants:
    """The mailbox and indicator constants of Theorem 2's blocks (one set for all charts)."""

    s: Fraction  # 1/(2r)
    Mx: int  # ⌈max ||x||_∞⌉
    zmax: int
    b: int  # mailbox half-width
    S: int  # mailbox shift b + 1
    S_I: int  # indicator shift
    a: Fraction  # per-head offset of the chart heads: Σ_j a = S + 1/2
    M1: Fraction  # |rows 0-1| bound at the chart block
    M2: Fraction  # ... at the ψ + indicator, copy and first product blocks


def theorem2_constants(m: Manifold) -> Theorem2Constants:
    D = m.D
    s = 1 / (2 * Fraction(float(m.r)))
    Mx = math.ceil(m.M_inf)
    zmax = math.ceil(0.5 + float(s) * m.diameter * 1.001)
    b = max(zmax, 4 * Mx * Mx + Mx, math.ceil(D * float(s) * 2 * Mx))
    S = b + 1
    return Theorem2Constants(
        s,
        Mx,
        zmax,
        b,
        S,
        zmax + 3,
        Fraction(2 * S + 1, 2 * D),
        Fraction(max(1, Mx)),
        Fraction(max(1, zmax, 4 * Mx * Mx)),
    )


def indicator_depth(m: Manifold, R: float, delta3: float, b_min: float) -> int:
    """L_ind: the least L with R e^{-r² 2^L} / b_min <= δ_3 (Δ = 2^-L; b_min the least bump sum, `atlas`)."""
    L = 1
    while R * math.exp(-(m.r**2) * 2**L) / b_min > delta3:
        L += 1
    return L


def chart_constant(atlas: AtlasConstants, H_f: float, R: float, beta: float = 1.0) -> float:
    """H̃ = H_f L_φ^β + R L_ρ: |f̃_n(z) - f̃_n(z')| <= H_f |x - x'|^β ρ + |f| |ρ - ρ'| and |z - z'| < 1 in a chart."""
    return H_f * atlas.L_phi**beta + R * atlas.L_rho


def theorem2_counts(lay: Theorem2Layout, L_ind: int, deep: bool = True) -> tuple[list[tuple[str, int]], int, int]:
    """Heads per block, L_T and L_FFN of Theorem 2's network on this layout (any d, D, C_M)."""
    d, C, N, P, F = lay.d, lay.C_M, lay.N, lay.N**lay.d, lay.F
    heads = [("chart", C * (d + 1) * lay.D), ("psi+indicator", C * (d * N + lay.D)), ("copy", C * F * P)]
    heads += [(f"product{k + 1}", C * P * s) for k, s in enumerate(level_sizes(F))]
    heads += [("f_n", C * P), ("sum", 1)]
    return heads, 5 + product_depth(F), max(2, L_ind + 2 if deep else 3)


def theorem2_spec(
    manifold: str | Manifold,
    D: int | None = None,
    eps: float = 0.3,
    *,
    H_f: float = 1.0,
    R: float = 1.0,
    beta: float = 1.0,
    N: int | None = None,
    deep: bool = True,
    seed: int = 0,
    arithmetic: str = "float64",
    with_kappa: bool = True,
) -> ConstructionSpec:
    """Theorem 2's resources on the named manifold's atlas (the one `make_manifold(name, D, seed)` builds
    and the builder uses). N defaults to the proven N; `extra` holds C_M, μ, δ, H̃, N_proven, L_ind."""
    m = manifold if isinstance(manifold, Manifold) else make_manifold(manifold, D, seed)
    if not (0 < eps < 1):
        raise TargetError(f"ε must lie in (0, 1) as in Theorem 2, got {eps}")
    check_constants(m.d, H_f, beta, eps)
    if not (R > 0 and math.isfinite(R)):
        raise TargetError(f"R must be a positive number, got {R}")
    atlas = atlas_constants(m)
    delta = eps / (2 * atlas.mu)
    H = chart_constant(atlas, H_f, R, beta)
    N_proven = grid_N("tight", m.d, H, beta, delta)
    N = N_proven if N is None else int(N)
    if N < 2:
        raise TargetError(f"the grid needs N >= 2, got {N}")
    L_ind = indicator_depth(m, R, delta, atlas.b_min)
    lay = Theorem2Layout(m.d, m.D, N, m.C_M)
    d, C = m.d, m.C_M
    heads, L_T, L_FFN = theorem2_counts(lay, L_ind, deep)
    kappa = math.nan
    k = theorem2_constants(m)
    if with_kappa:
        kappa = _theorem2_kappa(m, k, lay, R, L_ind, deep, arithmetic)
    orders = {
        "l": d * _pow(eps, -d / beta),
        "m": d * _pow(eps, -d / beta),
        "kappa": d * d * _pow(eps, -2 * d / beta),
        "L_T": math.log2(d + 1) + 5,
        "L_FFN": math.log(1 / eps),
    }
    extra = {
        "manifold": m.name,
        "D": m.D,
        "C_M": C,
        "mu": atlas.mu,
        "delta": delta,
        "H_chart": H,
        "H_f": H_f,
        "R": R,
        "L_phi": atlas.L_phi,
        "L_rho": atlas.L_rho,
        "b_min": atlas.b_min,
        "coverage": atlas.coverage,
        "N_proven": N_proven,
        "proven": N >= N_proven,
        "L_indicator": L_ind,
        "deep": deep,
        "Lc": lay.Lc,
    }
    return ConstructionSpec(
        "theorem2", d, N, lay.l, max(n for _, n in heads), L_T, L_FFN, 9, kappa, arithmetic, tuple(heads), orders, extra
    )


def _theorem2_kappa(
    m: Manifold, k: Theorem2Constants, lay: Theorem2Layout, R: float, L_ind: int, deep: bool, arithmetic: str
) -> float:
    """max |θ|: the largest head C per block (from the data bounds of its kernels) and the FFN entries."""
    gap = _gap(lay.l, arithmetic)

    def q(v):  # the builder's rationals
        return Fraction(float(v))

    M1, M2 = k.M1, k.M2
    F0 = Fraction(0)
    b_chart = F0
    for n in range(m.C_M):
        V, cn = m.tangent(n), m.centres[n]
        for j in range(m.D):
            cj = q(cn[j])
            for i in range(m.d):
                sv = k.s * q(V[j][i])
                b_chart = max(b_chart, abs(sv) * M1 + abs(-sv * cj + k.a))
            b_chart = max(b_chart, M1 * (M1 + abs(2 * cj + 1)) + cj * cj + k.S)
    b_psi = max(M2 + 1, M2 + Fraction(k.S_I, m.D))
    b = [b_chart, b_psi, M2, M2 * M2 if lay.F > 1 else F0, Fraction(1), 2 * Fraction(R)]
    heads = [_stated_C(v, gap, arithmetic, lay.l) for v in b if v > 0]
    Delta = Fraction(1, 2**L_ind)
    kk = Fraction(2) if deep else 1 / Delta
    r2 = q(m.r) ** 2
    ffn = [1 + k.b, 3 * lay.N - 1, kk, kk * (k.S_I + r2 - Delta), k.S_I, Fraction(R) * m.C_M * lay.N**m.d]
    return _kappa(heads + ffn, arithmetic)


def memory_bytes(spec: ConstructionSpec) -> int:
    """float64 bytes of the structured network's head and positional weights (`n_weights`)."""
    return BYTES_PER_FLOAT * spec.n_weights()


def smallest_eps_within(
    manifold: str | Manifold, D: int | None, budget_bytes: float, H_f: float = 1.0, R: float = 1.0, seed: int = 0
) -> tuple[float, dict]:
    """The boundary ε* on the grid k/1000 of (0, 1): the least ε whose proven network's weights (float64,
    `memory_bytes`) fit in `budget_bytes`, computed from the spec, not by building. Bytes fall as ε
    grows (N_proven is monotone in ε), so bisection finds it; (nan, {}) when even ε = 0.999 does not fit."""
    m = manifold if isinstance(manifold, Manifold) else make_manifold(manifold, D, seed)

    def fits(k: int) -> bool:
        return memory_bytes(theorem2_spec(m, eps=k / 1000, H_f=H_f, R=R, seed=seed, with_kappa=False)) <= budget_bytes

    lo, hi = 1, 999
    if not fits(hi):
        return math.nan, {}
    if fits(lo):
        hi = lo
    while hi - lo > 1:  # invariant: fits(hi), not fits(lo)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    sp = theorem2_spec(m, eps=hi / 1000, H_f=H_f, R=R, seed=seed, with_kappa=False)
    return hi / 1000, {**sp.as_dict(), "weights_bytes": memory_bytes(sp)}


def resource_rows(sp: ConstructionSpec, measured, paper: list[tuple[str, str, float, str]]) -> list[dict]:
    """The resource table: each count as the spec states it against the measured network (ratio 1 when
    the spec is right), then the paper's forms (`paper`: (quantity, formula, value, measured key))."""
    rows = [
        (q, "spec (token layout)", getattr(sp, q), getattr(measured, "kappa_blocks" if q == "kappa" else q))
        for q in ("L_T", "m", "l", "L_FFN", "w_FFN", "kappa")
    ]
    rows += [(q, f, v, getattr(measured, key)) for q, f, v, key in paper]
    return [
        {
            "quantity": q,
            "formula": f,
            "value": float(v),
            "measured": float(mv),
            "ratio": float(mv) / float(v) if v else float("nan"),
        }
        for q, f, v, mv in rows
    ]


RESOURCE_COLUMNS = ("quantity", "formula", "formula value", "measured", "ratio")


def resource_cells(rows: list[dict]) -> list[tuple[str, ...]]:
    """`resource_rows` as the cells of a printed table (RESOURCE_COLUMNS)."""
    return [
        (r["quantity"], r["formula"], f"{r['value']:.4g}", f"{r['measured']:.4g}", f"{r['ratio']:.3g}") for r in rows
    ]
