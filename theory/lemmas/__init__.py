"""The building blocks of Appendix G (Lemmas 3-7), one module per lemma, and what they share.

Every constructor returns a `Construction` whose claim is about structured hidden matrices H
(Appendix D, Figure 6): rows 0-1 data, rows 2-3 the interaction vector I_t, row 4 the constant 1
(0-based rows and tokens here; the paper counts from 1). The helpers below build the standalone
network around a block (embedding x_t into row 0 of token t) and draw structured inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from tmcheck.theory.network import FIXED, Block, Network, structured_positional, zeros


def standalone_network(l: int, blocks: Sequence[Block], meta: dict, arithmetic: str = "exact") -> Network:
    """Blocks behind the embedding x -> (x_t, 0, I_t, 1)_t (U = identity, E' = e_0), decoder (0, l-1)."""
    U = zeros((l, l), arithmetic)
    for t in range(l):
        U[t, t] = Fraction(1) if arithmetic == "exact" else 1.0
    E = zeros((5, 1), arithmetic)
    E[0, 0] = Fraction(1) if arithmetic == "exact" else 1.0
    return Network(arithmetic, l, l, U, E, structured_positional(l, arithmetic), list(blocks), meta=meta)


def sample_structured(rng: np.random.Generator, n: int, l: int, M, data_rows=(0, 1)) -> np.ndarray:
    """n structured H (n, 5, l) with data entries in [-M, M]: multiples of M/64, and ±M one time in five."""
    M = Fraction(M)
    H = np.empty((n, 5, l), dtype=object)
    H[:] = structured_positional(l, "exact")
    for r in (0, 1):
        if r not in data_rows:
            H[:, r, :] = Fraction(0)
            continue
        k = rng.integers(-64, 65, size=(n, l))
        edge = rng.random((n, l)) < 0.2
        k = np.where(edge, 64 * np.sign(rng.integers(0, 2, size=(n, l)) * 2 - 1), k)
        H[:, r, :] = [[M * Fraction(int(v), 64) for v in row] for row in k]
    return H


def with_positional(H: np.ndarray, l: int) -> np.ndarray:
    """H (n, 5, l') with rows 2-4 replaced by the structured rows for length l (l' == l)."""
    out = np.array(H, dtype=object)
    out[:, FIXED, :] = structured_positional(l, "exact")[FIXED]
    return out
