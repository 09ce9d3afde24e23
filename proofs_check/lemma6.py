"""Obligations of the replacing-FFN lemma (Appendix G, Lemma 6), checked by computation."""

from __future__ import annotations

import numpy as np

from tmcheck.proofs_check.registry import Evidence, Kind, Witness, obligation
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
    kind=Kind.STEP,
)
def ffn_output(n=10, l=7) -> Evidence:
    H = sample_structured(np.random.default_rng(0), n, l, 3)
    be = ExactBackend()
    out = be.output(ffn(replace_ffn(), be.inputs(H), be))
    return Evidence(
        f"{n} random structured H, l = {l} (exact): each output token against (h^2 − h^1, 0, 0, 0, 0); the "
        "layer count against 1",
        [Witness({"quantity": "FFN layers"}, len(replace_ffn()), 1, "==")]
        + [
            Witness({"sample": i, "t": t}, tuple(out[i, :, t]), (H[i, 1, t] - H[i, 0, t], 0, 0, 0, 0), "==")
            for i in range(n)
            for t in range(l)
        ],
    )


@obligation(
    "lemma6.replaces",
    LOC,
    "FFN_replace replaces the first row of H with the second.",
    "exact",
    "replace(): holds inside a block, B(H) = H + FFN(H) (Definition 3)",
    kind=Kind.STATEMENT,
)
def replaces(n=10, l=9) -> Evidence:
    c = replace(l, 4)
    H = c.sample_inputs(np.random.default_rng(1), n)
    out = run_blocks(c.blocks, H, "exact")
    return Evidence(
        f"{n} random structured H, l = {l}, inside a block (exact): each output token against (h^2, h^2, h^3, "
        "h^4, h^5)",
        [
            Witness({"sample": i, "t": t}, tuple(out[i, :, t]), (H[i, 1, t], *H[i, 1:, t]), "==")
            for i in range(n)
            for t in range(l)
        ],
        note="This reading counts the residual of Definition 3.",
    )
