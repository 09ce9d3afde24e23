"""Definitions 1-7 (Section 2.1 and Appendix D): the decoder and the feed-forward shapes.

The decoder is stated twice, differently: Definition 1 reads "the first element of the last column",
Appendix F.2 "the first element of the first row". The FFN of Definition 5 gives b_1 the wrong length.
"""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np

from tmcheck.proofs_check.registry import Result, Verdict, obligation
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
)
def decoder() -> Result:
    net = worked_example("exact")
    x = [F(1, 2), F(3, 2)]
    H = forward(net, [x], "exact")[0]
    last_col, first = H[0, net.l - 1], H[0, 0]
    return Result(
        Verdict.CORRECTED,
        f"The two readings differ on the README's worked example at x = (1/2, 3/2): H[0, l−1] = {last_col} "
        f"(Definition 1), H[0, 0] = {first} (first element of the first row). The paper's constructions put their "
        "result in the last token (E.2, Step 3: 'the first component of the last token t = l').",
        counterexample={"network": "worked example", "x": ["1/2", "3/2"], "H[0,l-1]": str(last_col), "H[0,0]": str(first)},
        corrected="D(H) = H[0, l−1] (Definition 1) throughout, including Appendix F.2.",
    )


@obligation(
    "definitions.ffn_shapes",
    "Definition 5 (Appendix D): the feed-forward layer",
    "W_2, ..., W_{L−1} in R^{d_embd×d_embd}, W_1 in R^{w×d_embd}, W_L in R^{d_embd×w}, b_1, ..., b_L in R^{d_embd}.",
    "exact",
    "theory.network validates W_i as out×in with b_i of length out: W_1 w×d_embd, W_2..W_{L−1} w×w, "
    "W_L d_embd×w, b_1..b_{L−1} in R^w, b_L in R^{d_embd}.",
)
def ffn_shapes() -> Result:
    d, w = 5, 6
    W1, b1, h = np.ones((w, d)), np.ones(d), np.ones(d)
    try:
        W1 @ h + b1
        msg = "no error"
    except ValueError as exc:
        msg = str(exc).splitlines()[0]
    return Result(
        Verdict.CORRECTED,
        f"W_1 h is in R^w but b_1 is in R^d_embd, so W_1 h + b_1 is undefined unless w = d_embd; with w = 6, "
        f"d_embd = 5: numpy says '{msg}'. W_2..W_(L−1) must be w×w to compose with W_1 (w×d) and W_L (d×w).",
        counterexample={"w": w, "d_embd": d, "shape_W1h": [w], "shape_b1": [d]},
        corrected="W_1 in R^{w×d}, W_2..W_{L−1} in R^{w×w}, W_L in R^{d×w}; b_1..b_{L−1} in R^w, b_L in R^d.",
    )
