"""Replacing FFN (Appendix G, Lemma 6): one affine layer that overwrites a data row with another.

The lemma holds as written once the residual of Definition 3 is counted: FFN(h) = (h_1 - h_0) e_0
and B(H) = H + FFN(H) has row 0 equal to row 1 (0-based; the paper's rows 1 and 2).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tmcheck.theory.construction import Construction
from tmcheck.theory.heads import domain_bound
from tmcheck.theory.lemmas import sample_structured, standalone_network
from tmcheck.theory.network import Layer, zeros
from tmcheck.theory.sparse import SparseBlock, realize


def replace_ffn(src: int = 1, dst: int = 0, arithmetic: str = "exact") -> tuple[Layer, ...]:
    """FFN(h) = (h_src - h_dst) e_dst: W = e_dst (e_src - e_dst)^T, b = 0 (depth 1, no hidden layer).

    Proof: z + FFN(z) has entry dst equal to z_dst + z_src - z_dst = z_src and every other entry
    unchanged, token by token; no interaction term is read, so no bound on H is needed.
    """
    if src not in (0, 1) or dst not in (0, 1) or src == dst:
        raise ValueError(f"src and dst must be the two data rows 0 and 1, got src={src}, dst={dst}")
    one = Fraction(1) if arithmetic == "exact" else 1.0
    W = zeros((5, 5), arithmetic)
    W[dst, dst], W[dst, src] = -one, one
    return (Layer(W, zeros((5,), arithmetic)),)


def replace(l: int, M=1, src: int = 1, dst: int = 0) -> Construction:
    """Lemma 6 as a one-block construction: row dst becomes a copy of row src on every token."""
    M = domain_bound(M)
    block = SparseBlock([], replace_ffn(src, dst), M, name="replace")
    blocks, _ = realize([block], l, "exact")

    def expected(H):
        out = np.array(H, dtype=object)
        out[:, dst, :] = out[:, src, :]
        return out

    return Construction(
        name="lemma6.replace",
        paper="Appendix G, Lemma 6",
        network=standalone_network(l, blocks, {"name": "lemma6.replace"}),
        claim=f"B(H) equals H with row {dst} replaced by row {src} on every token (0-based), any structured H",
        sample_inputs=lambda rng, n: sample_structured(rng, n, l, M),
        expected=expected,
        constants={"M": M, "src": src, "dst": dst},
        stated_kappa_bound=1,
        stated_resources={"L_T": 1, "m": 0, "L_FFN": 1, "l": l},
        sparse_blocks=[block],
    )
