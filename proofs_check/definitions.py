"""Definitions 1-7 (Section 2.1 and Appendix D): the decoder and the feed-forward shapes.

Both findings are definitions that no computation can decide: the decoder is stated twice,
differently (Definition 1: "the first element of the last column"; Appendix F.2: "the first element
of the first row"), and Definition 5 gives b_1 the wrong length. They are NOT-EVALUABLE: the check
computes what the two readings give and says which one tmcheck takes.
"""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np

from tmcheck.proofs_check.registry import Kind, Unevaluable, obligation
from tmcheck.theory.backends import forward
from tmcheck.theory.examples import worked_example


@obligation(
    "definitions.decoder",
    "Definition 1 (Section 2.1) vs Appendix F.2",
    "Definition 1: D outputs the first element of the last column. Appendix F.2: D is fixed to output the "
    "first element of the first row.",
    "exact",
    "tmcheck follows Definition 1: the decoder reads H[0, l−1] (row 0, last column, 0-based). Lemma 2 only "
    "needs |D(H) − D(H')| <= ||H − H'||∞, true for any fixed entry.",
    kind=Kind.NOTATION,
)
def decoder() -> Unevaluable:
    net = worked_example("exact")
    H = forward(net, [[F(1, 2), F(3, 2)]], "exact")[0]
    return Unevaluable(
        f"two definitions of one map; they differ on the README's worked example at x = (1/2, 3/2): H[0, l−1] = "
        f"{H[0, net.l - 1]} (Definition 1), H[0, 0] = {H[0, 0]} (Appendix F.2). The constructions put their result in "
        "the last token (E.2, Step 3).",
        "D(H) = H[0, l−1] (Definition 1) throughout, including Appendix F.2.",
    )


@obligation(
    "definitions.ffn_shapes",
    "Definition 5 (Appendix D): the feed-forward layer",
    "W_2, ..., W_{L−1} in R^{d_embd×d_embd}, W_1 in R^{w×d_embd}, W_L in R^{d_embd×w}, b_1, ..., b_L in R^{d_embd}.",
    "exact",
    "theory.network validates W_i as out×in with b_i of length out: W_1 w×d_embd, W_2..W_{L−1} w×w, "
    "W_L d_embd×w, b_1..b_{L−1} in R^w, b_L in R^{d_embd}.",
    kind=Kind.NOTATION,
)
def ffn_shapes() -> Unevaluable:
    """The worked example's FFN replaced by one with the shapes as written (w = 6, d_embd = 5, b_1 in R^5), given to
    tmcheck's network validation (`network.validate`)."""
    import dataclasses

    from tmcheck.theory.network import Block, Layer, NetworkError

    d, w = 5, 6
    net = worked_example("float64")
    ffn = (Layer(np.ones((w, d)), np.ones(d)), Layer(np.ones((d, w)), np.ones(d)))
    try:  # a Network validates its shapes when it is made (`network.validate`)
        dataclasses.replace(net, blocks=[Block(net.blocks[0].heads, ffn)])
        msg = "no error"
    except NetworkError as exc:
        msg = str(exc).splitlines()[0]
    return Unevaluable(
        f"a definition whose shapes do not compose unless w = d_embd (w = 6, d_embd = 5, b_1 in R^5: tmcheck's network "
        f"validation says '{msg}'); W_2..W_(L−1) must be w×w to compose with W_1 (w×d) and W_L (d×w).",
        "W_1 in R^{w×d}, W_2..W_{L−1} in R^{w×w}, W_L in R^{d×w}; b_1..b_{L−1} in R^w, b_L in R^d.",
    )
