"""Lemma 1 (Section 2.4; proof in Appendix E.1) as one tmcheck-network: f̂(x) = Σ_n f_n φ_n(x) on [0,1]^d.

The construction is described as *sparse blocks* (`SparseBlock`): each attention head is one
Interaction-Lemma head (Appendix G, Lemma 3) given by (t1, t2, row, Q^B, K^B), so every head has
exactly one token pair (t1, t2) with a possibly non-zero score, on the domain where ||rows 0-1||_∞ <= M.
`realize` turns the description into weights and records the pattern (t1, t2) of every head and the
bound M of every block in `network.meta["interaction_pattern"]`: that is what `fast_eval` uses to
skip the scores the Interaction Lemma proves zero. Theorem 2 (`theorem2.py`) reuses these pieces.

Token layout (0-based): x^i in token i (i < d); s_{i,j} in token d + iN + j (j < N); the F factors
of patch n (n in {0..N-1}^d, row-major index n̄) in tokens d + dN + n̄F + k (k < F; F = d here).

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

import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Sequence

import numpy as np

from tmcheck.theory.construction import Construction
from tmcheck.theory.lemmas.interaction import interaction_head
from tmcheck.theory.network import Block, Head, Layer, Network, interaction_vectors, structured_positional, zeros
from tmcheck.theory.targets import Target, TargetError, grid_N, paper_error_bound, paper_N, tight_error_bound

F0 = Fraction(0)
F1 = Fraction(1)
E0 = (F1, F0, F0, F0, F0)  # reads row 0
E1 = (F0, F1, F0, F0, F0)  # reads row 1
ONE = (F0, F0, F0, F0, F1)  # reads the constant row 4
ZERO = (F0,) * 5


def _vec(row0=F0, const=F0) -> tuple:
    return (Fraction(row0), F0, F0, F0, Fraction(const))


# --------------------------------------------------------------------------------------------
# sparse blocks and their realisation as weights


@dataclass(frozen=True)
class Interaction:
    """One Lemma 3 head: σ(<Q^B h_t1, K^B h_t2>) (times sign) is added to entry (row, t1)."""

    t1: int
    t2: int
    row: int
    Q_data: tuple  # 2 rows of 5 Fractions
    K_data: tuple
    sign: int = 1

    def shifted(self, offset: int) -> "Interaction":
        return Interaction(self.t1 + offset, self.t2 + offset, self.row, self.Q_data, self.K_data, self.sign)


@dataclass
class SparseBlock:
    """A block whose heads are Interaction-Lemma heads (plus `dense` heads) and a token-wise FFN.

    M bounds |rows 0-1| of every token at the block's input on the claim's domain: the Interaction
    Lemma's hypothesis, from which each head's C is derived (`sufficient_C`)."""

    interactions: list[Interaction]
    ffn: tuple[Layer, ...]
    M: Fraction
    dense: tuple[Head, ...] = ()
    name: str = ""


def data_bound(Q_data, K_data, M) -> Fraction:
    """max |<Q^B h, K^B h'>| over tokens with |rows 0-1| <= M, |I_t| entries <= 1, row 4 = 1:
    Σ_r (Σ_c |Q^B_rc| m_c)(Σ_c |K^B_rc| m_c) with m = (M, M, 1, 1, 1)."""
    m = (M, M, F1, F1, F1)
    return sum(
        sum(abs(q) * mc for q, mc in zip(Qr, m)) * sum(abs(k) * mc for k, mc in zip(Kr, m))
        for Qr, Kr in zip(Q_data, K_data)
    )


def max_adjacent_cosine(l: int, arithmetic: str):
    """c_max = max_t <I_t, I_{t+1}>: the largest cosine between distinct interaction vectors
    (their angles increase inside [0, π/2], so the closest pair is adjacent); 0 when l = 1."""
    I = interaction_vectors(l, arithmetic)
    if l == 1:
        return F0 if arithmetic == "exact" else 0.0
    dots = I[0, :-1] * I[0, 1:] + I[1, :-1] * I[1, 1:]
    return max(dots)


def sufficient_C(b_max, c_max, arithmetic: str):
    """C = b_max / (1 - c_max) (twice that in float64, a margin against rounding).

    Proof. In Lemma 3's head the score of (t, k) is b(t,k) - C(1 - c_t c'_k) with c_t = <I_t, I_t1>,
    c'_k = <I_k, I_t2> in [0, 1] (first-quadrant unit vectors). For (t, k) != (t1, t2) one factor is a
    cosine between distinct vectors, so c_t c'_k <= c_max, and b(t,k) <= b_max: the score is
    <= b_max - C(1 - c_max) <= 0 and σ gives 0. Cheaper than the exact threshold (`minimal_C`,
    O(l^2) per head), and within the factor b_max / max b of it.
    """
    if arithmetic == "exact":
        return Fraction(b_max) / (1 - c_max)
    return 2.0 * float(b_max) / (1.0 - float(c_max))


def realize(blocks: Sequence[SparseBlock], l: int, arithmetic: str) -> tuple[list[Block], list[dict]]:
    """Weights for the sparse blocks, and the pattern meta: per block the (t1, t2) of each head
    ([-1, -1] for a dense head) and M."""
    c_max = max_adjacent_cosine(l, arithmetic)
    I = interaction_vectors(l, arithmetic)
    out, pattern = [], []
    cache: dict = {}
    for blk in blocks:
        heads, pairs = [], []
        for it in blk.interactions:
            key = (it.Q_data, it.K_data)
            if key not in cache:
                cache[key] = sufficient_C(data_bound(it.Q_data, it.K_data, blk.M), c_max, arithmetic)
            h = interaction_head(l, it.t1, it.t2, it.row, it.Q_data, it.K_data, cache[key], arithmetic, vectors=I)
            heads.append(h if it.sign > 0 else Head(h.Q, h.K, -h.V))
            pairs.append([it.t1, it.t2])
        for h in blk.dense:
            heads.append(Head(*(_conv(getattr(h, k), arithmetic) for k in "QKV")))
            pairs.append([-1, -1])
        ffn = tuple(Layer(_conv(x.W, arithmetic), _conv(x.b, arithmetic)) for x in blk.ffn)
        out.append(Block(tuple(heads), ffn))
        pattern.append({"name": blk.name, "pairs": pairs, "M": str(blk.M)})
        cache.clear()
    return out, pattern


def _conv(arr, arithmetic: str) -> np.ndarray:
    arr = np.asarray(arr, dtype=object)
    if arithmetic == "exact":
        return arr
    return np.array([float(v) for v in arr.reshape(-1)], dtype=np.float64).reshape(arr.shape)


def _layer(W, b) -> Layer:
    W = np.array([[Fraction(v) for v in r] for r in W], dtype=object)
    return Layer(W, np.array([Fraction(v) for v in b], dtype=object))


# --------------------------------------------------------------------------------------------
# the FFNs


def psi(u: Fraction) -> Fraction:
    """The trapezoid ψ(u) = 1 on |u| <= 1, 2 - |u| on 1 <= |u| <= 2, 0 beyond (the paper prints
    1 - |u| on the middle piece, which is discontinuous at |u| = 1 and not a partition of unity)."""
    a = abs(u)
    return F1 if a <= 1 else (2 - a if a <= 2 else F0)


def psi_ffn_layers(N: int) -> tuple[list, list, list, list]:
    """Hidden units and output rows of the ψ FFN (shared with Theorem 2's combined FFN).

    With r = row 1 and u = 3(N-1)(r - 1): ψ(u) = σ(u+2) - σ(u+1) - σ(u-1) + σ(u-2), and row 1 is
    cleared by -σ(r) (row 1 >= 0 on the domain). Returns (W1 rows, b1, out-row-0 coefficients,
    out-row-1 coefficients) over the 5 hidden units."""
    a = Fraction(3 * (N - 1))
    W1 = [[0, a, 0, 0, 0]] * 4 + [[0, 1, 0, 0, 0]]
    b1 = [-a + 2, -a + 1, -a - 1, -a - 2, 0]
    return W1, b1, [1, -1, -1, 1, 0], [0, 0, 0, 0, -1]


def psi_ffn(N: int) -> tuple[Layer, ...]:
    W1, b1, o0, o1 = psi_ffn_layers(N)
    W2 = [o0, o1] + [[0] * 5] * 3
    return (_layer(W1, b1), _layer(W2, [0] * 5))


def move_clear_ffn() -> tuple[Layer, ...]:
    """z + FFN(z): row 0 <- row 1, row 1 <- 0 (one affine layer; the paper's W_1 of B_3)."""
    return (_layer([[-1, 1, 0, 0, 0], [0, -1, 0, 0, 0]] + [[0] * 5] * 3, [0] * 5),)


def zero_row0_ffn() -> tuple[Layer, ...]:
    return (_layer([[-1, 0, 0, 0, 0]] + [[0] * 5] * 4, [0] * 5),)


def shift_row0_ffn(shift: Fraction) -> tuple[Layer, ...]:
    return (_layer([[0] * 5] * 5, [shift, 0, 0, 0, 0]),)


def sum_head() -> Head:
    """Constant score <Q h_t, K h_k> = 1·1 (row 4 is 1 on every token); V h_k = row1_k e_0."""
    Q, K, V = zeros((5, 5), "exact"), zeros((5, 5), "exact"), zeros((5, 5), "exact")
    Q[0, 4], K[0, 4], V[0, 1] = F1, F1, F1
    return Head(Q, K, V)


# --------------------------------------------------------------------------------------------
# the interactions of each stage


def grid_points(N: int) -> list[Fraction]:
    """t_j = j/(N-1), j = 0..N-1 (the paper's (n-1)/(N-1), n = 1..N)."""
    return [Fraction(j, N - 1) for j in range(N)]


def psi_interactions(z_tokens: Sequence[int], N: int, psi_base: int) -> list[Interaction]:
    """Token (i, j) = psi_base + iN + j gets row 1 += σ(z_i + 1 - t_j) (= z_i - t_j + 1 on z_i >= t_j - 1).
    K^B's constant is 1 - t_j (the paper prints -j/(N-1) + 1, off by one index)."""
    out = []
    for i, z in enumerate(z_tokens):
        for j, t in enumerate(grid_points(N)):
            out.append(Interaction(psi_base + i * N + j, z, 1, (ONE, ZERO), (_vec(1, 1 - t), ZERO)))
    return out


def patches(d: int, N: int) -> list[tuple[int, ...]]:
    return list(itertools.product(range(N), repeat=d))


def copy_interactions(d: int, N: int, psi_base: int, prod_base: int, F: int, extra_tokens: Sequence[int] = ()) -> list[Interaction]:
    """Factor k < d of patch n gets s_{k, n^k} (row 0, σ(1 · s) = s as s >= 0); factor d + e gets the
    extra token e's row 0 (Theorem 2's indicator)."""
    out = []
    for p, n in enumerate(patches(d, N)):
        for k in range(d):
            out.append(Interaction(prod_base + p * F + k, psi_base + k * N + n[k], 0, (ONE, ZERO), (E0, ZERO)))
        for e, tok in enumerate(extra_tokens):
            out.append(Interaction(prod_base + p * F + d + e, tok, 0, (ONE, ZERO), (E0, ZERO)))
    return out


def product_levels(F: int, n_patches: int, prod_base: int) -> list[list[Interaction]]:
    """⌈log2 F⌉ levels of pairwise products; the result of patch p ends in its slot 0."""
    levels, active = [], list(range(F))
    while len(active) > 1:
        its = []
        for p in range(n_patches):
            base = prod_base + p * F
            for a, b in zip(active[0::2], active[1::2]):
                its.append(Interaction(base + a, base + b, 1, (E0, ZERO), (E0, ZERO)))
            if len(active) % 2:
                c = base + active[-1]
                its.append(Interaction(c, c, 1, (ONE, ZERO), (E0, ZERO)))
        levels.append(its)
        active = active[0::2]
    return levels


def fvalue_interactions(fvals: Sequence[Fraction], prod_base: int, F: int, R: Fraction) -> list[Interaction]:
    """Token (n, 0) gets row 1 += σ(φ_n f_n + R) = φ_n f_n + R (|φ_n f_n| <= |f_n| <= R)."""
    return [
        Interaction(prod_base + p * F, prod_base + p * F, 1, (E0, ONE), (_vec(0, f), _vec(0, R)))
        for p, f in enumerate(fvals)
    ]


# --------------------------------------------------------------------------------------------
# Lemma 1


@dataclass
class Lemma1Spec:
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
    def l(self) -> int:
        return self.d + self.d * self.N + self.d * self.N**self.d

    @property
    def prod_base(self) -> int:
        return self.d + self.d * self.N


def lemma1_spec(target: Target, H: float, beta: float, eps: float, R=None, grid: str = "tight", N: int | None = None) -> Lemma1Spec:
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
    spec = Lemma1Spec(target, d, N, grid, H, beta, eps, R, fvals)
    psi_base, prod_base, F = d, d + d * N, d
    blocks = [SparseBlock(psi_interactions(range(d), N, psi_base), psi_ffn(N), F1, name="psi")]
    blocks.append(SparseBlock(copy_interactions(d, N, psi_base, prod_base, F), (), F1, name="copy"))
    for k, its in enumerate(product_levels(F, N**d, prod_base)):
        blocks.append(SparseBlock(its, move_clear_ffn(), F1, name=f"product{k + 1}"))
    blocks.append(SparseBlock(fvalue_interactions(fvals, prod_base, F, R), zero_row0_ffn(), F1, name="f_n"))
    blocks.append(SparseBlock([], shift_row0_ffn(-R * N**d), max(F1, 2 * R), dense=(sum_head(),), name="sum"))
    spec.blocks = blocks
    return spec


def lemma1_network(spec: Lemma1Spec, arithmetic: str = "exact") -> Network:
    d, l = spec.d, spec.l
    one = F1 if arithmetic == "exact" else 1.0
    U = zeros((l, d), arithmetic)
    for i in range(d):
        U[i, i] = one
    E = zeros((5, 1), arithmetic)
    E[0, 0] = one
    blocks, pattern = realize(spec.blocks, l, arithmetic)
    meta = {
        "name": "lemma1", "paper": "Appendix E.1, Lemma 1", "target": spec.target.text, "d": d, "N": spec.N,
        "grid": spec.grid, "H_f": spec.H, "beta": spec.beta, "eps": spec.eps, "R": str(spec.R),
        "domain": "[0,1]^d", "interaction_pattern": pattern,
    }
    return Network(arithmetic, l, d, U, E, structured_positional(l, arithmetic), blocks, meta=meta)


def fhat(spec: Lemma1Spec, x: Sequence) -> Fraction:
    """Σ_n f_n Π_i ψ(3(N-1)(x^i - t_{n^i})) computed directly (the claim's right-hand side)."""
    N, ts = spec.N, grid_points(spec.N)
    a = 3 * (N - 1)
    s = [[(j, psi(a * (Fraction(xi) - t))) for j, t in enumerate(ts)] for xi in x]
    s = [[(j, v) for j, v in row if v] for row in s]
    total = F0
    for combo in itertools.product(*s):
        idx, prod = 0, F1
        for j, v in combo:
            idx = idx * N + j
            prod *= v
        total += spec.fvals[idx] * prod
    return total


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


def stated_resources(spec: Lemma1Spec) -> dict:
    """The paper's counts for this d and N (Appendix E.1): B_2 = B(N^d d, ·), l = d + Nd + N^d d, B_1's
    FFN depth 7, and ⌈log2 d⌉ + 4 blocks (the paper's log(d) + 4 read for any d, not only powers of 2)."""
    d, N = spec.d, spec.N
    return {"L_T": math.ceil(math.log2(d)) + 4 if d > 1 else 4, "m": N**d * d, "l": d + N * d + N**d * d, "L_FFN": 7}


def lemma1(target: Target, H: float, beta: float, eps: float, R=None, grid: str = "tight", N: int | None = None) -> Construction:
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
    spec = lemma1_spec(target, H, beta, eps, R, grid, N)
    net = lemma1_network(spec, "exact")
    l = spec.l

    def sample(rng, n):
        return embed_exact(net, sample_domain(rng, n, spec.d, spec.N))

    def expected(Hs):
        out = np.array(Hs, dtype=object)
        for r in range(len(out)):
            out[r, 0, l - 1] = fhat(spec, out[r, 0, : spec.d])
        return out

    bound = tight_error_bound(spec.d, H, beta, spec.N) + 2.0**-41
    return Construction(
        name="lemma1.network",
        paper="Appendix E.1, Lemma 1",
        network=net,
        claim=f"T(x) = Σ_n f_n φ_n(x) exactly for x in [0,1]^{spec.d} (N = {spec.N}), so |T - f| <= {bound:.4g}",
        sample_inputs=sample,
        expected=expected,
        constants={
            "N": spec.N, "grid": grid, "R": spec.R, "H_f": H, "beta": beta, "eps": eps,
            "tight_bound": bound, "paper_bound": paper_error_bound(spec.d, H, beta, spec.N),
            "paper_N": paper_N(spec.d, H, beta, eps), "spec": spec,
        },
        stated_kappa_bound=None,
        stated_resources=stated_resources(spec),
        compare_rows=(0,),
        compare_cols=lambda l_: [l_ - 1],
    )


# --------------------------------------------------------------------------------------------
# measurement: error against ε and resources against the paper's formulas


def resource_table(spec: Lemma1Spec, net: Network) -> list[dict]:
    """Rows (quantity, paper formula, its value at this d and N, measured, ratio) for Lemma 1.

    Proof-level counts come from Appendix E.1's blocks (B_1 = B(Nd, 7), B_2 = B(N^d d, 0), log2 d
    product blocks, B(N^d, 1), B(1, 0)); κ's formula is Lemma 3's C = 16 d_embd^4 κ_B^2 M^2 l^2/π^2
    with the largest data kernel entry κ_B (R in the f_n block) and M = 1; the O(·) rows take the
    hidden constant to be 1, so their ratio is the constant the O(·) hides."""
    from tmcheck.theory.network import resources

    res = resources(net)
    d, N, l, eps, beta = spec.d, spec.N, spec.l, spec.eps, spec.beta
    kB = max(F1, spec.R)
    rows = [
        ("L_T", "⌈log2 d⌉ + 4 (paper: log(d) + 4)", math.ceil(math.log2(d)) + 4 if d > 1 else 4, res.L_T),
        ("m", "d N^d", d * N**d, res.m),
        ("l", "d + dN + dN^d", d + d * N + d * N**d, res.l),
        ("L_FFN", "7 (B_1's FFN)", 7, res.L_FFN),
        ("w_FFN", "5 (d_embd)", 5, res.w_FFN),
        ("kappa", "16·5^4 κ_B² M² l²/π² (Lemma 3)", float(16 * 5**4 * kB**2 * l * l) / math.pi**2, float(res.kappa)),
        ("l / O(·)", "d ε^{-d/β}", d * eps ** (-d / beta), res.l),
        ("m / O(·)", "d ε^{-d/β}", d * eps ** (-d / beta), res.m),
        ("kappa / O(·)", "d² ε^{-2d/β}", d * d * eps ** (-2 * d / beta), float(res.kappa)),
    ]
    return [
        {"quantity": q, "formula": f, "value": float(v), "measured": float(mv), "ratio": float(mv) / float(v) if v else float("nan")}
        for q, f, v, mv in rows
    ]


def measure_error(spec: Lemma1Spec, net: Network, n_points: int, backend: str, rng: np.random.Generator) -> dict:
    """max |T - f| over a dense sample of [0,1]^d (corners, a grid, uniform points), T evaluated by
    `fast_eval` in the given backend; with the exact backend T is also compared with f̂ (==)."""
    from tmcheck.theory.fast_eval import evaluate_structured
    from tmcheck.theory.targets import check_sample

    X = check_sample(spec.d, n_points, rng, per_axis=max(2, min(65, int(round((4 * n_points) ** (1 / spec.d))))))
    if backend == "exact":
        X = X[: n_points]
        Xq = np.array([[Fraction(v).limit_denominator(10**6) for v in x] for x in X], dtype=object)
        T = evaluate_structured(net, Xq, "exact")
        mismatches = sum(1 for x, t in zip(Xq, T) if t != fhat(spec, x))
        Xf = np.vectorize(float)(Xq).astype(np.float64)
        Tf = np.vectorize(float)(T).astype(np.float64)
    else:
        mismatches = None
        Xf = X
        Tf = evaluate_structured(net, X, "float64")
    err = np.abs(Tf - spec.target(Xf).real)
    worst = int(np.argmax(err))
    return {"max_error": float(err.max()), "argmax": Xf[worst].tolist(), "n_points": len(Xf),
            "exact_mismatches": mismatches, "backend": backend}


def lemma1_report(text: str, d: int, eps: float, beta: float, H: float, R=None, grid: str = "tight",
                  N: int | None = None, backend: str = "float64", n_points: int = 2000, seed: int = 0) -> dict:
    """Everything `tmcheck lemma 1` prints: grid, error bounds, measured error, resources."""
    from tmcheck.theory.network import resources
    from tmcheck.theory.targets import check_constants, check_target, parse_target

    check_constants(d, H, beta, eps)
    target = parse_target(text, d)
    rng = np.random.default_rng(seed)
    rep = check_target(target, H, beta, None if R is None else float(R), rng)
    spec = lemma1_spec(target, H, beta, eps, R, grid, N)
    net = lemma1_network(spec, "exact" if backend == "exact" else "float64")
    err = measure_error(spec, net, n_points if backend != "exact" else min(n_points, 200), backend, rng)
    return {
        "target": text, "d": d, "eps": eps, "beta": beta, "H_f": H, "R": float(spec.R), "grid": grid, "N": spec.N,
        "grid_points": [str(t) for t in grid_points(spec.N)], "paper_N": paper_N(d, H, beta, eps),
        "tight_bound": tight_error_bound(d, H, beta, spec.N) + 2.0**-41,
        "paper_bound": paper_error_bound(d, H, beta, spec.N), "sampled_holder_ratio": rep.holder_ratio,
        "error": err, "within_eps": err["max_error"] <= eps, "resources": resource_table(spec, net),
        "growth_with_d": growth_table(eps, H, beta, range(1, 7)), "measured": resources(net).as_dict(),
        "network": net, "spec": spec,
    }


def growth_table(eps: float, H: float = 1.0, beta: float = 1.0, ds=range(1, 9)) -> list[dict]:
    """l, m (the construction's exact counts) and κ ≈ `sufficient_C` with b_max = 2 (the f_n block at
    R = 1) and c_max = cos(π/2l), as functions of d at fixed ε, for the paper's and the tight N;
    `ratio_l` = l / (d ε^{-d/β}) is the factor Lemma 1's O(·) hides, which should depend on H_f only."""
    from tmcheck.theory.targets import tight_N as _tight

    out = []
    for d in ds:
        for kind, N in (("paper", paper_N(d, H, beta, eps)), ("tight", _tight(d, H, beta, eps))):
            l = d + d * N + d * N**d
            lf = float(l) if l < 1e300 else math.inf
            gap = 2 * math.sin(math.pi / (4 * lf)) ** 2  # 1 - cos(π/2l) without cancellation
            kappa = 2 / gap if gap > 0 else math.inf
            order = d * eps ** (-d / beta)
            out.append({"d": d, "grid": kind, "N": N, "l": lf, "m": float(d * N**d) if lf < math.inf else math.inf,
                        "kappa": kappa, "ratio_l": lf / order, "ratio_kappa": kappa / (d * d * eps ** (-2 * d / beta))})
    return out
