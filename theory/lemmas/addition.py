"""Constant addition (Appendix G, Lemma 5): one block writing x - c next to x.

Input (l = 2D tokens, 0-based): row 0 holds x_0..x_{D-1} on tokens 0..D-1 and 0 on tokens D..2D-1,
row 1 is 0, ||x||_inf, ||c||_inf <= M/2. Output: row 0 of token D+i becomes x_i - c_i.

Two errors of the paper are corrected here (checked in proofs_check.lemma5):
- its data kernels K_i = [e_4; (M - c_i) e_4] give <Q_i h_{D+i}, K_i h_i> = M - c_i, without x_i;
  the key must read x_i: K_i = [e_4; e_0 + (M - c_i) e_4] (0-based e_j), giving x_i - c_i + M;
- the heads come from Lemma 3, whose C grows like l^2, so ||θ_B||_inf = O(lM) does not follow:
  the exact C these heads need grows like M l^2.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from tmcheck.theory.construction import Construction
from tmcheck.theory.heads import domain_bound, kappa_data, paper_C
from tmcheck.theory.lemmas import sample_structured, standalone_network
from tmcheck.theory.lemmas.gating import paper_kappa_bound, pivot, pivot_threshold
from tmcheck.theory.network import CONSTANT, INTERACTION, Layer, interaction_vectors, zeros
from tmcheck.theory.sparse import MINIMAL, Interaction, PositionalFFN, SparseBlock, realize


def addition_kernels(c_i, M) -> tuple[list, list]:
    """Corrected data kernels of head i: <Q h_{D+i}, K h_i> = h_{D+i}[0] + x_i + M - c_i = x_i - c_i + M."""
    Q = [[1, 0, 0, 0, 0], [0, 0, 0, 0, 1]]
    K = [[0, 0, 0, 0, 1], [1, 0, 0, 0, Fraction(M) - Fraction(c_i)]]
    return Q, K


def shift_ffn(l: int, t_from: int, shift, arithmetic: str = "exact") -> tuple[Layer, ...]:
    """FFN(z) = -shift e_0 on tokens t >= t_from and 0 before: two layers, width 2, reading only I_t.

    With s_t = v.I_t (suffix pivot) and C = shift / min_{t >= t_from} s_t: σ(C s_t) - σ(C s_t - shift)
    is shift when C s_t >= shift and 0 when s_t < 0. (The paper says "via the gating lemma 4 ... a
    three layer FFN"; gating zeroes data, it does not subtract constants, so this is the FFN it needs.)
    """
    shift = Fraction(shift) if arithmetic == "exact" else float(shift)
    v = pivot(l, t_from, "suffix", arithmetic)
    I = interaction_vectors(l, arithmetic)
    C = pivot_threshold(shift, v, I, range(t_from, l)) if t_from < l else 0 * shift  # v.I_t > 0 on t >= t_from
    one = Fraction(1) if arithmetic == "exact" else 1.0
    W1, b1 = zeros((2, 5), arithmetic), zeros((2,), arithmetic)
    W1[0, INTERACTION] = W1[1, INTERACTION] = C * v
    b1[1] = -shift
    W2, b2 = zeros((5, 2), arithmetic), zeros((5,), arithmetic)
    W2[0, 0], W2[0, 1] = -one, one
    return (Layer(W1, b1), Layer(W2, b2))


class ShiftFFN(PositionalFFN):
    """`shift_ffn` as a positional FFN of the composition layer: -M e_0 on the block's tokens from D on."""

    rows = (0,)

    def __init__(self, D: int, M):
        self.D, self.M = D, M

    def layers(self, l: int, offset: int, M) -> tuple[Layer, ...]:
        return shift_ffn(l, offset + self.D, self.M)


def addition_block(c: Sequence, M) -> SparseBlock:
    """The block for c (D = len(c)) on tokens 0..2D-1: D Lemma 3 heads (token D+i reads token i, with the exact
    threshold C* for structured H with ||H||_inf <= M/2, the lemma's domain) and the shift FFN."""
    D = len(c)
    its = []
    for i, ci in enumerate(c):
        Q, K = addition_kernels(ci, M)
        kernels = tuple(tuple(Fraction(v) for v in r) for r in Q), tuple(tuple(Fraction(v) for v in r) for r in K)
        its.append(Interaction(D + i, i, 0, *kernels, C=MINIMAL))
    return SparseBlock(its, ShiftFFN(D, Fraction(M)), Fraction(M) / 2, name="addition")


def addition(c: Sequence, M) -> Construction:
    """Lemma 5 (corrected) as a construction with D = len(c) heads and a depth-2 FFN of width 2.

    Proof. Head i is the interaction head (Lemma 3) with t1 = D+i, t2 = i and the corrected kernels:
    it adds σ(x_i - c_i + M) = x_i - c_i + M (>= 0 as |x_i|, |c_i| <= M/2) to row 0 of token D+i and
    nothing elsewhere. `shift_ffn` then subtracts M from row 0 of tokens D..2D-1 only.
    """
    c = [Fraction(v) for v in c]
    M = domain_bound(M)
    D = len(c)
    if D < 1:
        raise ValueError("c must have at least one coordinate")
    if max(abs(v) for v in c) > M / 2:
        raise ValueError(f"||c||_inf must be <= M/2 = {M / 2}")
    if M / 2 < 1:
        raise ValueError(f"M must be >= 2 (||H||_inf <= M/2 and row 4 holds 1), got {M}")
    l = 2 * D
    block = addition_block(c, M)
    blocks, _ = realize([block], l, "exact")
    blk = blocks[0]

    def sample(rng, n):
        H = sample_structured(rng, n, l, M / 2, data_rows=(0,))
        H[:, 0, D:] = Fraction(0)
        return H

    def expected(H):
        out = np.array(H, dtype=object)
        for i in range(D):
            out[:, 0, D + i] = out[:, 0, i] - c[i]
        return out

    kap = max(kappa_data(*addition_kernels(ci, M)) for ci in c)
    return Construction(
        name="lemma5.addition",
        paper="Appendix G, Lemma 5",
        network=standalone_network(l, blocks, {"name": "lemma5.addition", "c": [str(v) for v in c]}),
        claim=f"row 0 of token D+i becomes x_i - c_i (D = {D}), for H as in Lemma 5 with ||x||_inf <= {M / 2}",
        sample_inputs=sample,
        expected=expected,
        constants={"c": c, "M": M, "D": D, "C_heads": [-h.K[CONSTANT, CONSTANT] for h in blk.heads]},
        # Lemma 3's written-out bound for these kernels on ||H|| <= M/2, and the gating bound; the
        # lemma's own O(lM) has no constant and does not hold for this construction.
        stated_kappa_bound=max(paper_C(l, kap, M / 2), paper_kappa_bound(l, M), kap),
        stated_resources={"L_T": 1, "m": D, "L_FFN": 3, "l": l},
        sparse_blocks=[block],
    )
