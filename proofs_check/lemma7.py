"""Obligations of the parallelisation lemma (Appendix G, Lemma 7), checked by computation."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tmcheck.proofs_check.registry import Result, Verdict, obligation
from tmcheck.theory.backends import ExactBackend, ffn, run_blocks
from tmcheck.theory.check import check_construction
from tmcheck.theory.lemmas import sample_structured
from tmcheck.theory.lemmas.addition import addition
from tmcheck.theory.lemmas.gating import gating
from tmcheck.theory.lemmas.interaction import critical_input, interaction, interaction_head, threshold
from tmcheck.theory.lemmas.parallel import parallelize
from tmcheck.theory.lemmas.replace import replace, replace_ffn
from tmcheck.theory.network import Block, Layer, zeros

LOC = "Appendix G, proof of Lemma 7"
Q, K = [[1, 0, 0, 0, 0], [0, 1, 0, 0, 1]], [[0, 1, 0, 0, 0], [1, 0, 0, 0, 0]]
M = Fraction(2)


def _compositions(rng: np.random.Generator, n: int):
    """n random pairs of single blocks from Lemmas 3-6, parallelised (one nested pair among them)."""

    def one():
        kind = int(rng.integers(0, 4))
        l = int(rng.integers(2, 7))
        if kind == 0:
            return interaction(l, int(rng.integers(0, l)), int(rng.integers(0, l)), int(rng.integers(0, 2)), Q, K, M)
        if kind == 1:
            return gating(l, int(rng.integers(0, l + 1)), ("prefix", "suffix")[int(rng.integers(0, 2))], M)
        if kind == 2:
            D = max(1, l // 2)
            return addition([Fraction(int(v), 4) for v in rng.integers(-4, 5, size=D)], M)
        return replace(l, M)

    out = [parallelize(one(), one()) for _ in range(n - 1)]
    out.append(parallelize(one(), out[0]))
    return out


@obligation(
    "lemma7.heads_reindexed",
    LOC,
    "Replacing the interaction kernels of each Lemma-3 head by those of the new vectors I_{3,t} gives A_{3,j}(H_3) = A_{1,j}(H_1).",
    "exact",
    "parallel.parallel_block: every head is rebuilt with C recomputed exactly for l1 + l2 tokens and the joint bound M",
)
def heads_reindexed() -> Result:
    l1, l2, t1, t2 = 8, 8, 2, 5
    c_old = threshold(l1, t1, t2, Q, K, M).C
    l = l1 + l2
    H = critical_input(l, t1, t2, Q, K, M)
    c_new = threshold(l, t1, t2, Q, K, M).C
    kept = interaction_head(l, t1, t2, 0, Q, K, c_old)  # new interaction kernels, the old C
    want = interaction(l, t1, t2, 0, Q, K, M).expected(H)
    got = run_blocks([Block((kept,))], H, "exact")
    diff = np.argwhere(got != want)
    if len(diff) == 0:
        return Result(Verdict.HOLDS, "re-indexed head exact with the old C")
    _, r, t = diff[0]
    return Result(
        Verdict.CORRECTED,
        f"a head (t1 = {t1}, t2 = {t2}) sized for l1 = {l1} (C* = {float(c_old):.6g}), re-indexed into l = {l} tokens with "
        f"the same C, leaks: entry (row {r}, token {t}) = {got[0, r, t]} instead of {want[0, r, t]} on an H with ||H|| <= {M}. "
        f"Interaction vectors of {l} tokens are closer, so the gap 1 - cos shrinks; it needs C >= {float(c_new):.6g}",
        counterexample={"l1": l1, "l2": l2, "t1": t1, "t2": t2, "C_kept": str(c_old), "C_needed": str(c_new)},
        corrected="rebuild each head with the interaction kernels of I_3 AND C recomputed for l1 + l2 tokens and "
        "||H_3|| <= max(M1, M2) (theory.lemmas.interaction.minimal_C)",
    )


@obligation(
    "lemma7.mha",
    LOC,
    "MHA_3(H_3) = [B_1(H_1) B_2(H_2)] up to the interaction terms.",
    "exact",
    "parallel.parallelize: MHA_3(H_3) = [MHA_1(H_1) MHA_2(H_2)] on the data rows",
)
def mha() -> Result:
    c1 = interaction(4, 1, 2, 0, Q, K, M)
    c2 = interaction(3, 0, 2, 1, Q, K, M)
    c = parallelize(c1, c2)
    H = c.sample_inputs(np.random.default_rng(0), 1)
    att = run_blocks([Block(c.blocks[0].heads)], H, "exact") - H  # MHA_3(H_3)
    blocks_out = c.expected(H)  # [B_1(H_1) B_2(H_2)] with the new interaction rows
    t = 0
    return Result(
        Verdict.CORRECTED,
        f"on token {t}, row 0: MHA_3 gives {att[0, 0, t]} while B_1(H_1) holds {blocks_out[0, 0, t]} (the residual H_1 and "
        "FFN_1 are part of B_1): a slip for [MHA_1(H_1) MHA_2(H_2)]",
        counterexample={"token": t, "mha": str(att[0, 0, t]), "block": str(blocks_out[0, 0, t])},
        corrected="MHA_3(H_3) = [MHA_1(H_1) MHA_2(H_2)] on rows 1-2 (and 0 on rows 3-5)",
    )


@obligation(
    "lemma7.duplication",
    LOC,
    "W_{3,0} = [I; I] duplicates the input token h_{3,t} for parallel processing.",
    "exact",
    "parallel.parallel_ffn: the duplication is merged into the first layers (affine after affine), no ReLU in between",
)
def duplication() -> Result:
    eye = zeros((5, 5), "exact")
    for i in range(5):
        eye[i, i] = Fraction(1)
    dup = (Layer(np.concatenate([eye, eye]), zeros((10,), "exact")), Layer(np.concatenate([eye, zeros((5, 5), "exact")], axis=1), zeros((5,), "exact")))
    H = sample_structured(np.random.default_rng(0), 1, 3, M)
    H[0, 0, 0] = Fraction(-1)
    be = ExactBackend()
    out = be.output(ffn(dup, be.inputs(H), be))
    return Result(
        Verdict.CORRECTED,
        f"as a layer of an FFN (Def. 5), [I; I] is followed by a ReLU: a token with data -1 comes out of the first copy as {out[0, 0, 0]}",
        counterexample={"h_data": "-1", "after_duplication": str(out[0, 0, 0])},
        corrected="merge [I; I] into the first layers of FFN_1 and FFN_2 (their first weight matrices stacked, reading h directly)",
    )


@obligation(
    "lemma7.gating_composition",
    LOC,
    "FFN_{1,gating} FFN_1 (h_{3,t}) equals FFN_1(h_{3,t}) for t <= l1 and 0 otherwise (gating by Lemma 4).",
    "exact",
    "parallel.parallel_ffn: I_t carried through the hidden layers (σ(I_t) = I_t), gate sized by an exact interval bound",
)
def gating_composition() -> Result:
    l1, l2 = 3, 3
    H = sample_structured(np.random.default_rng(3), 1, l1 + l2, M)
    H[0, 0:2, l1] = H[0, 0:2, 0]  # token l1 (part 2) holds the same data as token 0 (part 1)
    be = ExactBackend()
    y = be.output(ffn(replace_ffn(), be.inputs(H), be))
    same = (y[0, :2, 0] == y[0, :2, l1]).all()
    return Result(
        Verdict.CORRECTED,
        f"with FFN_1 = Lemma 6's FFN (output {y[0, 0, 0]} on both token 0 and token {l1}, which have equal data), "
        "the gate sees only FFN_1's output, which carries no interaction term: it cannot keep one token and zero the other"
        if same else "outputs differ",
        counterexample={"tokens": [0, l1], "FFN_1_output": str(y[0, 0, 0])},
        corrected="carry I_t alongside FFN_1's hidden layers (two units, σ(I_t) = I_t) and gate with σ(y + C v.I_t) - σ(C v.I_t), "
        "C = sup|y| / min_t |v.I_t| from an interval bound of FFN_1 on the other part's tokens",
    )


@obligation(
    "lemma7.statement",
    "Appendix G, Lemma 7 (statement)",
    "There is B_3 in B(m1 + m2, max(L_FFN1, L_FFN2) + 2, w_FFN1 + w_FFN2) with B_3([H1' H2']) = [B_1(H1) B_2(H2)].",
    "exact",
    "parallel.parallelize: m1 + m2 heads, depth max + 1, hidden width w1 + w2 + 2 (plus the gate layer)",
)
def statement() -> Result:
    rng = np.random.default_rng(7)
    widest = None
    for c in _compositions(rng, 8):
        rep = check_construction(c, rng, n_inputs=6)
        res = c.resources()
        if not rep.ok or res.m > c.stated_resources["m"] or res.L_FFN > c.stated_resources["L_FFN"]:
            return Result(Verdict.FAILS, f"{c.name} fails {rep.failed}", counterexample=c.name)
        widest = res.w_FFN if widest is None else max(widest, res.w_FFN)
    example = parallelize(gating(4, 2, "prefix", M), gating(4, 1, "suffix", M))
    w = example.resources().w_FFN
    return Result(
        Verdict.CORRECTED,
        f"8 random parallelisations of Lemma 3-6 blocks (one nested) are exact on every check with m = m1 + m2 and depth "
        f"<= max + 1; the width is not w1 + w2: two gating FFNs (w = 3 each) need width {w}",
        counterexample={"parts": ["gating(4, 2, prefix)", "gating(4, 1, suffix)"], "w1_plus_w2": 6, "measured_width": w},
        corrected="B_3 in B(m1 + m2, max(L_FFN1, L_FFN2) + 1, w) with w = max(w1' + w2' + 2, 2(r1 + 1) + 2(r2 + 1)), where "
        "w' is the hidden width after lifting depth-1 FFNs (10) and r the number of rows an FFN writes",
    )
