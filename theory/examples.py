"""Small hand-made networks: the README's worked example of the file format, and random networks for tests.

Worked example (two tokens, D = 2, one block with one head and a two-layer FFN):

    U = I_2, E' = e_1, PE rows 2-3 = I_1 = (4/5, 3/5), I_2 = (0, 1), row 4 = 1.
    h_t = (x_t, 0, I_t, 1).
    Head: Q = e_5 e_5^T, K = e_5 e_1^T, V = e_2 e_1^T (1-based e_i), so <Q h_i, K h_k> = x_k and
          A(h_i) = Σ_k σ(x_k) x_k e_2 for every i.
    FFN:  W_1 = e_2^T, b_1 = -1, W_2 = e_1, b_2 = 0: adds σ(z^2 - 1) to row 1 of each token.
    T(x) = H[0, 1] = x_2 + σ(σ(x_1) x_1 + σ(x_2) x_2 - 1).

For x = (1/2, 3/2): A's row 2 is 1/4 + 9/4 = 5/2, the FFN adds σ(5/2 - 1) = 3/2, so T(x) = 3/2 + 3/2 = 3.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tmcheck.theory.network import D_EMBD, Block, Head, Layer, Network, as_array, structured_positional


def _unit(i: int, j: int) -> list[list[int]]:
    m = [[0] * D_EMBD for _ in range(D_EMBD)]
    m[i][j] = 1
    return m


def worked_example(arithmetic: str = "exact") -> Network:
    F = Fraction
    pe = [[0, 0], [0, 0], [F(4, 5), 0], [F(3, 5), 1], [1, 1]]
    head = Head(Q=_unit(4, 4), K=_unit(4, 0), V=_unit(1, 0))
    ffn = (Layer(W=[[0, 1, 0, 0, 0]], b=[-1]), Layer(W=[[1], [0], [0], [0], [0]], b=[0, 0, 0, 0, 0]))
    return Network(
        arithmetic=arithmetic,
        l=2,
        D=2,
        U=[[1, 0], [0, 1]],
        E=[[1], [0], [0], [0], [0]],
        PE=pe,
        blocks=[Block((head,), ffn)],
        meta={"name": "worked-example", "computes": "x2 + relu(relu(x1)*x1 + relu(x2)*x2 - 1)"},
    )


def worked_example_value(x1, x2):
    relu = lambda v: max(v, 0)  # noqa: E731
    return x2 + relu(relu(x1) * x1 + relu(x2) * x2 - 1)


def random_network(
    rng: np.random.Generator,
    arithmetic: str = "exact",
    l: int = 4,
    D: int = 3,
    n_blocks: int = 2,
    n_heads: int = 2,
    ffn_depth: int = 2,
    width: int = 6,
    scale: int = 4,
    structured: bool = True,
) -> Network:
    """A random network with small rational weights k/scale, k in [-scale, scale]."""

    def r(*shape):
        return as_array(rng.integers(-scale, scale + 1, size=shape).astype(object) * Fraction(1, scale), arithmetic)

    def ffn_layers():
        if ffn_depth == 0:
            return ()
        dims = [D_EMBD] + [width] * (ffn_depth - 1) + [D_EMBD]
        return tuple(Layer(r(dims[i + 1], dims[i]), r(dims[i + 1])) for i in range(ffn_depth))

    blocks = [
        Block(tuple(Head(r(5, 5), r(5, 5), r(5, 5)) for _ in range(n_heads)), ffn_layers()) for _ in range(n_blocks)
    ]
    E = np.zeros((D_EMBD, 1), dtype=object)
    E[0, 0] = 1
    PE = structured_positional(l, arithmetic) if structured else r(D_EMBD, l)
    return Network(arithmetic, l, D, r(l, D), as_array(E, arithmetic), PE, blocks)
