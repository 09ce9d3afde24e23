"""Obligations of the replacing-FFN lemma (Appendix G, Lemma 6), checked by computation."""

from __future__ import annotations

import numpy as np

from tmcheck.proofs_check.registry import Result, Verdict, obligation
from tmcheck.theory.backends import ExactBackend, ffn, run_blocks
from tmcheck.theory.lemmas import sample_structured
from tmcheck.theory.lemmas.replace import replace, replace_ffn

LOC = "Appendix G, Lemma 6"


@obligation(
    "lemma6.ffn_output",
    f"{LOC} and its proof",
    "FFN_replace(H) has first row -h^1 + h^2 and zeros elsewhere, with the single layer W = e_1(-e_1 + e_2)^T.",
    "exact",
    "replace.replace_ffn",
)
def ffn_output() -> Result:
    H = sample_structured(np.random.default_rng(0), 10, 7, 3)
    be = ExactBackend()
    out = be.output(ffn(replace_ffn(), be.inputs(H), be))
    want = np.zeros_like(out)
    want[:, 0, :] = H[:, 1, :] - H[:, 0, :]
    if not (out == want).all():
        return Result(Verdict.FAILS, "FFN output differs", counterexample="random structured H, l = 7")
    return Result(Verdict.HOLDS, "10 random structured H (l = 7): output equals (h^2 - h^1, 0, 0, 0, 0) exactly; one affine layer: in FFN(1)")


@obligation(
    "lemma6.replaces",
    LOC,
    "FFN_replace replaces the first row of H with the second.",
    "exact",
    "replace(): holds inside a block, B(H) = H + FFN(H) (Definition 3)",
)
def replaces() -> Result:
    c = replace(9, 4)
    H = c.sample_inputs(np.random.default_rng(1), 10)
    out = run_blocks(c.blocks, H, "exact")
    if not (out[:, 0] == H[:, 1]).all() or not (out[:, 1:] == H[:, 1:]).all():
        return Result(Verdict.FAILS, "row 1 not replaced", counterexample="random structured H, l = 9")
    return Result(
        Verdict.HOLDS,
        "in a block, row 1 becomes row 2 and rows 2-5 are unchanged (10 random H, l = 9); note that this reading "
        "counts the residual of Definition 3, which Lemma 4's statement does not",
    )
