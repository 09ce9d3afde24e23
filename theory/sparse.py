"""The one composition layer of theory/: sparse blocks of Interaction-Lemma heads plus token-wise FFNs
(Appendix G, Lemmas 3-7; the FFN pieces of Appendix E.1-E.2), used by every construction.

A `SparseBlock` lists its heads as `Interaction`s (t1, t2, row, Q^B, K^B, C): every head has exactly one
token pair (t1, t2) with a possibly non-zero score on the domain where ||rows 0-1||_∞ <= M. Its FFN is a
tuple of layers, or a `PositionalFFN` whose weights depend on where its tokens sit in the sequence (the
gating and shift FFNs of Lemmas 4-5 read the interaction vectors). Lemmas 3-6 emit one block each;
Lemma 7 is their union (`lemmas.parallel.union`): the heads shifted to their tokens, one FFN (shared when
the parts' FFNs agree, gated by position when two differ). Lemma 1 is a list of blocks; Theorem 2 the union
over charts of Lemma 1-like blocks. `realize` turns blocks into weights for a sequence of l tokens (each
head's C: `sufficient_C`, Lemma 3's exact `minimal_C`, or a given number) and, for the full constructions,
records the pattern (t1, t2) of every head and the bound M of every block in
`network.meta["interaction_pattern"]`: what `fast_eval` uses to skip the scores Lemma 3 proves zero. The
interaction builders (ψ, copy, product tree, f_n) and `grid_value` (the claim Σ_n f_n Π_i ψ(3(N-1)(z_i -
t_{n_i})), computed directly) are shared by Lemma 1 and Theorem 2.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from tmcheck.theory.heads import interaction_head, minimal_C
from tmcheck.theory.network import Block, Head, Layer, interaction_vectors, zeros

F0 = Fraction(0)
F1 = Fraction(1)
E0 = (F1, F0, F0, F0, F0)  # reads row 0
ONE = (F0, F0, F0, F0, F1)  # reads the constant row 4
ZERO = (F0,) * 5


def kernel_row(row0=F0, const=F0) -> tuple:
    """A row of a data kernel Q^B or K^B: `row0` times row 0 plus `const` times the constant row 4."""
    return (Fraction(row0), F0, F0, F0, Fraction(const))


MINIMAL = "minimal"  # Interaction.C: Lemma 3's exact threshold C* for the realized sequence (`minimal_C`)


@dataclass(frozen=True)
class Interaction:
    """One Lemma 3 head: σ(<Q^B h_t1, K^B h_t2>) (times sign) is added to entry (row, t1).

    C: None for `sufficient_C` (cheap, O(1) per head), MINIMAL for the exact threshold at the realized l and
    the block's M (O(l^2)), or a given number."""

    t1: int
    t2: int
    row: int
    Q_data: tuple  # 2 rows of 5 Fractions
    K_data: tuple
    sign: int = 1
    C: object = None

    def shifted(self, offset: int) -> Interaction:
        return dataclasses.replace(self, t1=self.t1 + offset, t2=self.t2 + offset)


class PositionalFFN:
    """An FFN whose weights depend on its tokens' place: `layers(l, offset, M)` for a block whose tokens start at
    `offset` in a sequence of l tokens, on inputs with |rows 0-1| <= M. `rows` are the rows it can write."""

    rows: tuple[int, ...] = (0, 1)

    def layers(self, l: int, offset: int, M) -> tuple[Layer, ...]:
        raise NotImplementedError


@dataclass
class SparseBlock:
    """A block whose heads are Interaction-Lemma heads (plus `dense` heads) and a token-wise FFN.

    M bounds |rows 0-1| of every token at the block's input on the claim's domain: the Interaction
    Lemma's hypothesis, from which each head's C is derived."""

    interactions: list[Interaction]
    ffn: tuple[Layer, ...] | PositionalFFN
    M: Fraction
    dense: tuple[Head, ...] = ()
    name: str = ""

    def ffn_layers(self, l: int, offset: int = 0, M=None) -> tuple[Layer, ...]:
        """The FFN's layers for a sequence of l tokens, this block's tokens starting at offset."""
        if isinstance(self.ffn, PositionalFFN):
            return self.ffn.layers(l, offset, self.M if M is None else M)
        return tuple(self.ffn)


def data_bound(Q_data, K_data, M) -> Fraction:
    """max |<Q^B h, K^B h'>| over tokens with |rows 0-1| <= M, |I_t| entries <= 1, row 4 = 1:
    Σ_r (Σ_c |Q^B_rc| m_c)(Σ_c |K^B_rc| m_c) with m = (M, M, 1, 1, 1)."""
    m = (M, M, F1, F1, F1)
    return sum(
        sum(abs(q) * mc for q, mc in zip(Qr, m, strict=True)) * sum(abs(k) * mc for k, mc in zip(Kr, m, strict=True))
        for Qr, Kr in zip(Q_data, K_data, strict=True)
    )


def max_adjacent_cosine(l: int, arithmetic: str):
    """c_max = max_t <I_t, I_{t+1}>: the largest cosine between distinct interaction vectors
    (their angles increase inside [0, π/2], so the closest pair is adjacent); 0 when l = 1."""
    I = interaction_vectors(l, arithmetic)
    if l == 1:
        return F0 if arithmetic == "exact" else 0.0
    dots = I[0, :-1] * I[0, 1:] + I[1, :-1] * I[1, 1:]
    return max(dots)


def interaction_gap(l: int, arithmetic: str):
    """1 - c_max, the margin every Lemma 3 score needs.

    exact: 1 - max_t <I_t, I_{t+1}> over the rational vectors (a Fraction, > 0). float64: the paper's
    vectors are π/(2l) apart, so 1 - c_max = 1 - cos(π/2l) = 2 sin²(π/4l), written without the
    cancellation of 1 - cos (which is 0 in float64 once l exceeds about 10^8) and without the l vectors.
    1 when l = 1 (no distinct pair)."""
    if l == 1:
        return F1 if arithmetic == "exact" else 1.0
    if arithmetic == "exact":
        return 1 - max_adjacent_cosine(l, arithmetic)
    return 2.0 * math.sin(math.pi / (4 * l)) ** 2


def sufficient_C(b_max, gap, arithmetic: str):
    """C = b_max / (1 - c_max), with gap = 1 - c_max (`interaction_gap`); twice that in float64, a margin
    against rounding.

    Proof. In Lemma 3's head the score of (t, k) is b(t,k) - C(1 - c_t c'_k) with c_t = <I_t, I_t1>,
    c'_k = <I_k, I_t2> in [0, 1] (first-quadrant unit vectors). For (t, k) != (t1, t2) one factor is a
    cosine between distinct vectors, so c_t c'_k <= c_max, and b(t,k) <= b_max: the score is
    <= b_max - C(1 - c_max) <= 0 and σ gives 0. Cheaper than the exact threshold (`minimal_C`,
    O(l^2) per head), and within the factor b_max / max b of it.
    """
    if arithmetic == "exact":
        return Fraction(b_max) / gap
    return 2.0 * float(b_max) / float(gap)


def _head_C(it: Interaction, blk: SparseBlock, l: int, gap, arithmetic: str, cache: dict):
    if it.C == MINIMAL:
        C = minimal_C(l, it.Q_data, it.K_data, blk.M, t1=it.t1, t2=it.t2)
        return C if arithmetic == "exact" else float(C)
    if it.C is not None:
        return it.C
    key = (it.Q_data, it.K_data)
    if key not in cache:
        cache[key] = sufficient_C(data_bound(it.Q_data, it.K_data, blk.M), gap, arithmetic)
    return cache[key]


def realize(blocks: Sequence[SparseBlock], l: int, arithmetic: str) -> tuple[list[Block], list[dict]]:
    """Weights for the sparse blocks on a sequence of l tokens, and the pattern meta: per block the (t1, t2) of
    each head ([-1, -1] for a dense head) and M."""
    gap = interaction_gap(l, arithmetic)
    I = interaction_vectors(l, arithmetic)
    out, pattern = [], []
    cache: dict = {}
    for blk in blocks:
        heads, pairs = [], []
        for it in blk.interactions:
            C = _head_C(it, blk, l, gap, arithmetic, cache)
            h = interaction_head(l, it.t1, it.t2, it.row, it.Q_data, it.K_data, C, arithmetic, vectors=I)
            heads.append(h if it.sign > 0 else Head(h.Q, h.K, -h.V))
            pairs.append([it.t1, it.t2])
        for h in blk.dense:
            heads.append(Head(*(_conv(getattr(h, k), arithmetic) for k in "QKV")))
            pairs.append([-1, -1])
        ffn = tuple(Layer(_conv(x.W, arithmetic), _conv(x.b, arithmetic)) for x in blk.ffn_layers(l))
        out.append(Block(tuple(heads), ffn))
        pattern.append({"name": blk.name, "pairs": pairs, "M": str(blk.M)})
        cache.clear()
    return out, pattern


def _conv(arr, arithmetic: str) -> np.ndarray:
    arr = np.asarray(arr, dtype=object)
    if arithmetic == "exact":
        return arr
    return np.array([float(v) for v in arr.reshape(-1)], dtype=np.float64).reshape(arr.shape)


def exact_layer(W, b) -> Layer:
    """An FFN layer from rows of numbers, as Fractions."""
    W = np.array([[Fraction(v) for v in r] for r in W], dtype=object)
    return Layer(W, np.array([Fraction(v) for v in b], dtype=object))


# --------------------------------------------------------------------------------------------
# the FFNs


def psi(u: Fraction) -> Fraction:
    """The trapezoid ψ(u) = 1 on |u| <= 1, 2 - |u| on 1 <= |u| <= 2, 0 beyond (the paper prints
    1 - |u| on the middle piece, which is discontinuous at |u| = 1 and not a partition of unity)."""
    a = abs(u)
    return F1 if a <= 1 else (2 - a if a <= 2 else F0)


def psi_scale(N: int) -> int:
    """3(N-1): the ψ argument's scale, u = 3(N-1)(x - t_j), neighbours 3 apart in u (Lemma 1 (a); the
    paper's eq. 18 prints 3N, which leaves gaps). The network's ψ FFN and the claim both read it."""
    return 3 * (N - 1)


def psi_ffn_layers(N: int) -> tuple[list, list, list, list]:
    """Hidden units and output rows of the ψ FFN (shared with Theorem 2's combined FFN).

    With r = row 1 and u = 3(N-1)(r - 1): ψ(u) = σ(u+2) - σ(u+1) - σ(u-1) + σ(u-2), and row 1 is
    cleared by -σ(r) (row 1 >= 0 on the domain). Returns (W1 rows, b1, out-row-0 coefficients,
    out-row-1 coefficients) over the 5 hidden units."""
    a = Fraction(psi_scale(N))
    W1 = [[0, a, 0, 0, 0]] * 4 + [[0, 1, 0, 0, 0]]
    b1 = [-a + 2, -a + 1, -a - 1, -a - 2, 0]
    return W1, b1, [1, -1, -1, 1, 0], [0, 0, 0, 0, -1]


def psi_ffn(N: int) -> tuple[Layer, ...]:
    W1, b1, o0, o1 = psi_ffn_layers(N)
    W2 = [o0, o1] + [[0] * 5] * 3
    return (exact_layer(W1, b1), exact_layer(W2, [0] * 5))


def move_clear_ffn() -> tuple[Layer, ...]:
    """z + FFN(z): row 0 <- row 1, row 1 <- 0 (one affine layer; the paper's W_1 of B_3)."""
    return (exact_layer([[-1, 1, 0, 0, 0], [0, -1, 0, 0, 0]] + [[0] * 5] * 3, [0] * 5),)


def zero_row0_ffn() -> tuple[Layer, ...]:
    return (exact_layer([[-1, 0, 0, 0, 0]] + [[0] * 5] * 4, [0] * 5),)


def shift_row0_ffn(shift: Fraction) -> tuple[Layer, ...]:
    return (exact_layer([[0] * 5] * 5, [shift, 0, 0, 0, 0]),)


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


def psi_interactions(
    z_tokens: Sequence[int], N: int, psi_base: int, window: Sequence[Sequence[int]] | None = None
) -> list[Interaction]:
    """Token (i, j) = psi_base + iN + j gets row 1 += σ(z_i + 1 - t_j) (= z_i - t_j + 1 on z_i >= t_j - 1).
    K^B's constant is 1 - t_j (the paper prints -j/(N-1) + 1, off by one index). `window[i]`: only these j
    (the heads of a few tokens, for `local_eval`); default every j."""
    out = []
    for i, z in enumerate(z_tokens):
        for j in range(N) if window is None else window[i]:
            t = Fraction(j, N - 1)
            out.append(Interaction(psi_base + i * N + j, z, 1, (ONE, ZERO), (kernel_row(1, 1 - t), ZERO)))
    return out


def patches(d: int, N: int) -> list[tuple[int, ...]]:
    return list(itertools.product(range(N), repeat=d))


def patch_index(n: Sequence[int], N: int) -> int:
    """The row-major index n̄ of patch n (the order of `patches`)."""
    idx = 0
    for j in n:
        idx = idx * N + j
    return idx


def indexed_patches(d: int, N: int, chosen: Sequence[tuple[int, ...]] | None = None) -> list[tuple[int, tuple]]:
    """(n̄, n) for every patch, or for the `chosen` ones only (`local_eval`)."""
    if chosen is None:
        return list(enumerate(patches(d, N)))
    return [(patch_index(n, N), tuple(n)) for n in chosen]


def copy_interactions(
    d: int,
    N: int,
    psi_base: int,
    prod_base: int,
    F: int,
    extra_tokens: Sequence[int] = (),
    chosen: Sequence[tuple[int, ...]] | None = None,
) -> list[Interaction]:
    """Factor k < d of patch n gets s_{k, n^k} (row 0, σ(1 · s) = s as s >= 0); factor d + e gets the
    extra token e's row 0 (Theorem 2's indicator). `chosen`: only these patches (default all)."""
    out = []
    for p, n in indexed_patches(d, N, chosen):
        for k in range(d):
            out.append(Interaction(prod_base + p * F + k, psi_base + k * N + n[k], 0, (ONE, ZERO), (E0, ZERO)))
        for e, tok in enumerate(extra_tokens):
            out.append(Interaction(prod_base + p * F + d + e, tok, 0, (ONE, ZERO), (E0, ZERO)))
    return out


def product_levels(
    F: int, n_patches: int, prod_base: int, chosen: Sequence[int] | None = None
) -> list[list[Interaction]]:
    """⌈log2 F⌉ levels of pairwise products; the result of patch p ends in its slot 0. `chosen`: only these
    patch indices n̄ (default all)."""
    levels, active = [], list(range(F))
    while len(active) > 1:
        its = []
        for p in range(n_patches) if chosen is None else chosen:
            base = prod_base + p * F
            for a, b in zip(active[0::2], active[1::2], strict=False):  # pairs; an odd last one follows
                its.append(Interaction(base + a, base + b, 1, (E0, ZERO), (E0, ZERO)))
            if len(active) % 2:
                c = base + active[-1]
                its.append(Interaction(c, c, 1, (ONE, ZERO), (E0, ZERO)))
        levels.append(its)
        active = active[0::2]
    return levels


def fvalue_interactions(
    fvals: Sequence[Fraction], prod_base: int, F: int, R: Fraction, chosen: Sequence[int] | None = None
) -> list[Interaction]:
    """Token (n, 0) gets row 1 += σ(φ_n f_n + R) = φ_n f_n + R (|φ_n f_n| <= |f_n| <= R). `chosen`: only these
    patch indices n̄ (default all; `fvals` may then be computed on demand)."""
    ps = range(len(fvals)) if chosen is None else chosen
    return [
        Interaction(prod_base + p * F, prod_base + p * F, 1, (E0, ONE), (kernel_row(0, fvals[p]), kernel_row(0, R)))
        for p in ps
    ]


def psi_window(z: Fraction, N: int) -> tuple[int, ...]:
    """The j with ψ(3(N-1)(z - t_j)) != 0 (at most two: |z - t_j| < 2/(3(N-1)) and the t_j are 1/(N-1) apart)."""
    a, c = psi_scale(N), math.floor(z * (N - 1))
    return tuple(j for j in range(c - 1, c + 3) if 0 <= j < N and psi(a * (z - Fraction(j, N - 1))) != 0)


def grid_value(fvals: Sequence[Fraction], N: int, z: Sequence) -> Fraction:
    """Σ_n f_n Π_i ψ(3(N-1)(z_i - t_{n_i})) computed directly, exact when z is rational (Lemma 1's f̂;
    Theorem 2's L_n on a chart). Only the ≤ 2 grid points per axis where ψ ≠ 0 are visited."""
    a = psi_scale(N)
    rows = [[(j, psi(a * (Fraction(zi) - Fraction(j, N - 1)))) for j in psi_window(Fraction(zi), N)] for zi in z]
    total = F0
    for combo in itertools.product(*rows):
        idx, prod = 0, F1
        for j, v in combo:
            idx = idx * N + j
            prod *= v
        total += fvals[idx] * prod
    return total
