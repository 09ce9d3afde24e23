"""Transformer parallelisation (Appendix G, Lemma 7): run two blocks side by side on [H1 H2], as a union of
sparse blocks (`union`, the composition layer's Lemma 7, which Theorem 2's charts use as well).

Tokens of H1 keep indices 0..l1-1, tokens of H2 move to l1..l1+l2-1, and every token gets the
interaction vector of the longer sequence (the paper's I'_3,t). Errors of the paper corrected here
(each checked in proofs_check.lemma7):
- re-indexing a head's interaction kernels is not enough: its C was sized for l1 tokens, and with
  l1 + l2 tokens (closer interaction vectors, more keys) it leaks; C is recomputed exactly;
- its FFN starts with a duplicating layer [I; I], which in Definition 5 is followed by a ReLU that
  erases negative data; the duplication is merged into the first layers instead;
- gating FFN_1's output requires the interaction vector deep inside the FFN, and a bound on that
  output on the other part's tokens: we carry I_t through the hidden layers (σ(I_t) = I_t, its
  entries are >= 0) and size the gate with an exact interval bound. Width is w1 + w2 + 2 in the
  hidden layers, not w1 + w2.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tmcheck.theory.construction import Construction
from tmcheck.theory.lemmas import standalone_network, with_positional
from tmcheck.theory.lemmas.addition import addition
from tmcheck.theory.lemmas.gating import gating, pivot
from tmcheck.theory.lemmas.interaction import default_kernels, interaction
from tmcheck.theory.lemmas.replace import replace
from tmcheck.theory.network import Layer, interaction_vectors, zeros
from tmcheck.theory.sparse import PositionalFFN, SparseBlock, realize


def _frac_eye(n: int) -> np.ndarray:
    out = zeros((n, n), "exact")
    for i in range(n):
        out[i, i] = Fraction(1)
    return out


def output_bound(ffn, Mz) -> list[Fraction]:
    """Exact interval bound of |FFN(z)_r| per output row over structured z with |z_0|, |z_1| <= Mz.

    Interval propagation: an affine map sends [lo, hi] to [W+ lo + W- hi + b, W+ hi + W- lo + b]
    (W+ / W- the positive / negative parts), ReLU clamps at 0; z_2, z_3 in [0, 1], z_4 = 1.
    """
    Mz = Fraction(Mz)
    lo = np.array([-Mz, -Mz, Fraction(0), Fraction(0), Fraction(1)], dtype=object)
    hi = np.array([Mz, Mz, Fraction(1), Fraction(1), Fraction(1)], dtype=object)
    for i, lay in enumerate(ffn):
        Wp = np.vectorize(lambda w: max(w, 0), otypes=[object])(lay.W)
        Wm = lay.W - Wp
        lo, hi = Wp @ lo + Wm @ hi + lay.b, Wp @ hi + Wm @ lo + lay.b
        if i < len(ffn) - 1:
            lo = np.array([max(v, 0) for v in lo], dtype=object)
            hi = np.array([max(v, 0) for v in hi], dtype=object)
    return [max(abs(a), abs(b)) for a, b in zip(lo, hi, strict=True)]


def _lift(ffn) -> tuple[list[Layer], Layer]:
    """Hidden layers and the last layer of an FFN of depth >= 1, depth 1 made depth 2 via z = σ(z) - σ(-z)."""
    if len(ffn) >= 2:
        return list(ffn[:-1]), ffn[-1]
    eye = _frac_eye(5)
    W = np.concatenate([eye, -eye])
    return [Layer(W, zeros((10,), "exact"))], Layer(ffn[0].W @ np.concatenate([eye, -eye], axis=1), ffn[0].b)


def _pad(hidden: list[Layer], n: int) -> list[Layer]:
    """n hidden layers: identity layers after the first (after a ReLU the values are >= 0, σ(x) = x)."""
    w = hidden[0].W.shape[0]
    pads = [Layer(_frac_eye(w), zeros((w,), "exact")) for _ in range(n - len(hidden))]
    return hidden[:1] + pads + hidden[1:]


def parallel_ffn(l: int, split: int, ffn_a, ffn_b, Mz) -> tuple[Layer, ...]:
    """FFN_3(z_t) = FFN_a(z_t) for t < split and FFN_b(z_t) for t >= split, for |z data| <= Mz.

    Layers: hidden layers of both FFNs side by side (block-diagonal, padded to the same depth) plus
    two units carrying I_t; then a gate layer with, per part p and output row r that FFN_p can
    write, σ(y_pr + C_p s_pt) and σ(C_p s_pt), where y_p = FFN_p(z) (before its last layer's sum)
    and s_pt = v_p.I_t (v_a the prefix pivot at split, v_b the suffix one); the output layer adds
    σ(y + C s) - σ(C s), which is y on the part's tokens and 0 on the other's as soon as
    C_p min_t |s_pt| >= max_r sup |y_pr| (`output_bound`). Depth max(L_a, L_b) + 1.
    """
    parts = []
    for ffn, keep in ((ffn_a, "prefix"), (ffn_b, "suffix")):
        if ffn:
            Y = output_bound(ffn, Mz)
            rows = [r for r in range(5) if Y[r] > 0]
            if rows:
                hidden, last = _lift(ffn)
                parts.append((hidden, last, rows, max(Y), pivot(l, split, keep)))
    if not parts:
        return ()
    depth = max(len(h) for h, *_ in parts)
    parts = [(_pad(h, depth), last, rows, Y, v) for h, last, rows, Y, v in parts]
    I = interaction_vectors(l, "exact")
    layers = []
    for k in range(depth):  # hidden layers: [part a | part b | carry I]
        blocks = [h[k] for h, *_ in parts]
        width_in = 5 if k == 0 else sum(b.W.shape[1] for b in blocks) + 2
        width_out = sum(b.W.shape[0] for b in blocks) + 2
        W, b = zeros((width_out, width_in), "exact"), zeros((width_out,), "exact")
        r0, c0 = 0, 0
        for blk in blocks:
            ro, ci = blk.W.shape
            W[r0 : r0 + ro, (0 if k == 0 else c0) : (0 if k == 0 else c0) + ci] = blk.W
            b[r0 : r0 + ro] = blk.b
            r0, c0 = r0 + ro, c0 + ci
        W[r0, 2 if k == 0 else c0], W[r0 + 1, 3 if k == 0 else c0 + 1] = Fraction(1), Fraction(1)
        layers.append(Layer(W, b))
    width_in = layers[-1].W.shape[0]
    gate_rows, gate_b, out_cols = [], [], []
    c0 = 0
    for hidden, last, rows, Y, v in parts:
        C = Y / min(abs(v[0] * I[0, t] + v[1] * I[1, t]) for t in range(l))
        w = hidden[-1].W.shape[0]
        carry = np.zeros(width_in, dtype=object)
        carry[:] = Fraction(0)
        carry[width_in - 2 :] = C * v
        shared = len(gate_rows) + len(rows)
        for r in rows:
            row = carry.copy()
            row[c0 : c0 + w] = last.W[r]
            gate_rows.append(row)
            gate_b.append(last.b[r])
            out_cols.append((r, len(gate_rows) - 1, shared))
        gate_rows.append(carry)
        gate_b.append(Fraction(0))
        c0 += w
    layers.append(Layer(np.array(gate_rows, dtype=object), np.array(gate_b, dtype=object)))
    Wout = zeros((5, len(gate_rows)), "exact")
    for r, unit, shared in out_cols:
        Wout[r, unit] += 1
        Wout[r, shared] -= 1
    layers.append(Layer(Wout, zeros((5,), "exact")))
    return tuple(layers)


def _interaction_bound(it, M) -> Fraction:
    """sup |<Q^B h, K^B h'>| <= Σ|(Q^B^T K^B)_ab| M^2: what one interaction head can add to one entry."""
    Q, K = np.array(it.Q_data, dtype=object), np.array(it.K_data, dtype=object)
    G = Q.T @ K
    return sum(abs(v) for v in G.reshape(-1)) * Fraction(M) ** 2


class ParallelFFN(PositionalFFN):
    """Lemma 7's FFN for two parts side by side: FFN_a on the tokens before l_a (the second part's first token,
    counted from the union's start), FFN_b on the others (`parallel_ffn`, gated by the interaction vectors), sized
    for the union's heads."""

    def __init__(self, a: SparseBlock, b: SparseBlock, l_a: int, interactions):
        self.a, self.b, self.l_a, self.interactions = a, b, l_a, tuple(interactions)

    def layers(self, l: int, offset: int, M) -> tuple[Layer, ...]:
        Mz = Fraction(M) + sum(_interaction_bound(it, M) for it in self.interactions)  # ||MHA(H) + H|| on rows 0-1
        ffn_a = self.a.ffn_layers(l, offset, M)
        ffn_b = self.b.ffn_layers(l, offset + self.l_a, M)
        return parallel_ffn(l, offset + self.l_a, ffn_a, ffn_b, Mz)


def _same_layers(f, g) -> bool:
    return len(f) == len(g) and all(
        x.W.shape == y.W.shape and (x.W == y.W).all() and (x.b == y.b).all() for x, y in zip(f, g, strict=True)
    )


def union(parts, name: str = "") -> SparseBlock:
    """Lemma 7 as a union: parts (block, offset, tokens) side by side become one block whose heads are every part's
    interactions shifted to its tokens (each head's C recomputed when the union is realized, for the longer
    sequence and the joint bound M = max M_i), with one FFN: none, the parts' common FFN when every part has the
    same position-independent layers (all charts of Theorem 2), or for two parts `ParallelFFN`."""
    parts = list(parts)
    its = [it.shifted(off) for blk, off, _ in parts for it in blk.interactions]
    M = max(Fraction(blk.M) for blk, _, _ in parts)
    dense = tuple(h for blk, _, _ in parts for h in blk.dense)
    with_ffn = [(blk, off, n) for blk, off, n in parts if isinstance(blk.ffn, PositionalFFN) or blk.ffn]
    first = parts[0][0].ffn
    if not with_ffn:
        ffn = ()
    elif all(not isinstance(b.ffn, PositionalFFN) and _same_layers(b.ffn, first) for b, _, _ in parts):
        ffn = tuple(first)
    elif len(parts) == 2 and parts[1][1] == parts[0][1] + parts[0][2]:
        (a, off_a, l_a), (b, off_b, _) = parts
        # the split is where the second part starts (off_a + l_a), not l_a: a first part that does not start at
        # token 0 would otherwise hand its last off_a tokens to the second part's FFN
        ffn = ParallelFFN(_at(a, off_a), b, off_b, its)
    else:
        raise ValueError(
            "Lemma 7 puts two blocks with different FFNs side by side at a time (or any number sharing one)"
        )
    return SparseBlock(its, ffn, M, dense, name)


def _at(blk: SparseBlock, offset: int) -> SparseBlock:
    """blk with its positional FFN read `offset` tokens later (a part that does not start at the union's 0)."""
    if offset == 0 or not isinstance(blk.ffn, PositionalFFN):
        return blk
    inner = blk.ffn

    class Shifted(PositionalFFN):
        rows = inner.rows

        def layers(self, l, off, M):
            return inner.layers(l, off + offset, M)

    return SparseBlock(blk.interactions, Shifted(), blk.M, blk.dense, blk.name)


KINDS = ("interaction", "gating", "addition", "replace")


def build_kind(kind: str, l: int, M) -> Construction:
    """A default construction of one kind on l tokens with data bound M (what `tmcheck lemma parallel` combines):
    interaction t1 = 0 reads t2 = l - 1 into row 0 (κ = 1 kernels), gating keeps the prefix t < l/2, addition
    subtracts c = (1/2, ..., 1/2) from D = l/2 entries (M raised to 2, the lemma's least), replace copies row 1.
    """
    M = Fraction(M)
    if kind == "interaction":
        return interaction(l, 0, l - 1, 0, *default_kernels(Fraction(1)), M)
    if kind == "gating":
        return gating(l, l // 2, "prefix", M)
    if kind == "addition":
        if l % 2:
            raise ValueError(f"addition needs an even number of tokens (l = 2D), got {l}")
        return addition([Fraction(1, 2)] * (l // 2), max(M, Fraction(2)))
    if kind == "replace":
        return replace(l, M)
    raise ValueError(f"unknown block kind {kind!r}; expected one of {', '.join(KINDS)}")


def parallelize(c1: Construction, c2: Construction) -> Construction:
    """Lemma 7 (corrected): one block B_3 with B_3([H1' H2']) = [B_1(H1) B_2(H2)] on rows 0-1.

    Proof. Heads: every head of c1 (c2) is re-indexed to tokens 0.. (l1..) of a sequence of l1 + l2 tokens, and
    its C recomputed for that sequence and the box ||H_3||_inf <= max(M1, M2) (Lemma 3) when the union is
    realized; it then writes into the same token and row as before and nothing else, so MHA_3(H_3) = [MHA_1(H_1)
    MHA_2(H_2)] on the data rows. FFN: `parallel_ffn`, which applies the re-indexed FFN_1 to the tokens < l1 and
    FFN_2 to the others. Rows 2-4 are never written.
    """
    for c in (c1, c2):
        if c.sparse_blocks is None or len(c.sparse_blocks) != 1 or len(c.blocks) != 1:
            raise ValueError(f"{c.name}: Lemma 7 parallelises single blocks built from Lemmas 3-6 (or 7)")
    l1, l2 = c1.network.l, c2.network.l
    l = l1 + l2
    M = max(Fraction(c1.constants["M"]), Fraction(c2.constants["M"]))
    blk = union([(c1.sparse_blocks[0], 0, l1), (c2.sparse_blocks[0], l1, l2)], name="lemma7.parallel")
    blk.M = M
    blocks, _ = realize([blk], l, "exact")

    def sample(rng, n):
        return with_positional(np.concatenate([c1.sample_inputs(rng, n), c2.sample_inputs(rng, n)], axis=2), l)

    def expected(H):
        out = np.concatenate(
            [c1.expected(with_positional(H[:, :, :l1], l1)), c2.expected(with_positional(H[:, :, l1:], l2))], axis=2
        )
        return with_positional(out, l)

    r1, r2 = c1.resources(), c2.resources()
    return Construction(
        name=f"lemma7.parallel({c1.name},{c2.name})",
        paper="Appendix G, Lemma 7",
        network=standalone_network(l, blocks, {"name": "lemma7.parallel", "parts": [c1.name, c2.name]}),
        claim=f"B_3([H1' H2']) = [B_1(H1) B_2(H2)] on rows 0-1 with l1 = {l1}, l2 = {l2}; rows 2-4 hold I for l = {l}",
        sample_inputs=sample,
        expected=expected,
        constants={"l1": l1, "l2": l2, "M": M, "parts": [c1.name, c2.name]},
        stated_kappa_bound=None,
        stated_resources={"L_T": 1, "m": r1.m + r2.m, "L_FFN": max(r1.L_FFN, r2.L_FFN) + 2, "l": l},
        sparse_blocks=[blk],
    )
