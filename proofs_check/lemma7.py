"""Obligations of the parallelisation lemma (Appendix G, Lemma 7), checked by computation."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tmcheck.proofs_check.registry import Evidence, Kind, Witness, obligation
from tmcheck.theory.backends import ExactBackend, ffn, run_blocks
from tmcheck.theory.check import check_construction
from tmcheck.theory.heads import critical_input, interaction_head, threshold
from tmcheck.theory.lemmas import sample_structured
from tmcheck.theory.lemmas.addition import addition
from tmcheck.theory.lemmas.gating import gating
from tmcheck.theory.lemmas.interaction import interaction
from tmcheck.theory.lemmas.parallel import parallelize
from tmcheck.theory.lemmas.replace import replace, replace_ffn
from tmcheck.theory.network import Block, Layer, zeros

LOC = "Appendix G, proof of Lemma 7"
Q, K = [[1, 0, 0, 0, 0], [0, 1, 0, 0, 1]], [[0, 1, 0, 0, 0], [1, 0, 0, 0, 0]]
M = Fraction(2)


def _one(rng: np.random.Generator, heads_only: bool = False):
    """A random single block from Lemmas 3-6 (from Lemma 3 only when `heads_only`)."""
    kind = 0 if heads_only else int(rng.integers(0, 4))
    l = int(rng.integers(2, 7))
    if kind == 0:
        return interaction(l, int(rng.integers(0, l)), int(rng.integers(0, l)), int(rng.integers(0, 2)), Q, K, M)
    if kind == 1:
        return gating(l, int(rng.integers(0, l + 1)), ("prefix", "suffix")[int(rng.integers(0, 2))], M)
    if kind == 2:
        D = max(1, l // 2)
        return addition([Fraction(int(v), 4) for v in rng.integers(-4, 5, size=D)], M)
    return replace(l, M)


@obligation(
    "lemma7.heads_reindexed",
    LOC,
    "Replacing the interaction kernels of each Lemma-3 head by those of the new vectors I_{3,t} gives "
    "A_{3,j}(H_3) = A_{1,j}(H_1).",
    "exact",
    "parallel.parallel_block: every head is rebuilt with C recomputed exactly for l1 + l2 tokens and the joint bound M",
    kind=Kind.STEP,
    satisfied={"parts": ((8, 0, 2, 5), (4, 0, 1, 2), (6, 0, 0, 5))},
)
def heads_reindexed(parts=((8, 8, 2, 5), (4, 4, 1, 2), (6, 2, 0, 5))) -> Evidence:
    """Per (l1, l2, t1, t2): a head sized for l1 tokens (its C*), re-indexed into l1 + l2 tokens, on the critical
    input."""
    at, written, corr = [], [], []
    for l1, l2, t1, t2 in parts:
        l = l1 + l2
        H = critical_input(l, t1, t2, Q, K, M)
        want = interaction(l, t1, t2, 0, Q, K, M).expected(H)
        kept = interaction_head(l, t1, t2, 0, Q, K, threshold(l1, t1, t2, Q, K, M).C)  # new kernels, the old C
        rebuilt = interaction_head(l, t1, t2, 0, Q, K, threshold(l, t1, t2, Q, K, M).C)
        at.append({"l1": l1, "l2": l2, "t1": t1, "t2": t2})
        written.append(int((run_blocks([Block((kept,))], H, "exact") != want).sum()))
        corr.append(int((run_blocks([Block((rebuilt,))], H, "exact") != want).sum()))
    return Evidence(
        f"(l1, l2, t1, t2) in {list(parts)}, ||H|| <= {M}, the critical input of the joint head (exact): wrong entries",
        [Witness(a, w, 0, "==") for a, w in zip(at, written, strict=True)],
        [Witness(a, w, 0, "==") for a, w in zip(at, corr, strict=True)],
        "rebuild each head with the interaction kernels of I_3 AND C recomputed for l1 + l2 tokens and "
        "||H_3|| <= max(M1, M2) (theory.lemmas.interaction.minimal_C)",
        note="Interaction vectors of l1 + l2 tokens are closer, so the gap 1 − cos shrinks and the head needs a "
        "larger C.",
    )


@obligation(
    "lemma7.mha",
    LOC,
    "MHA_3(H_3) = [B_1(H_1) B_2(H_2)] up to the interaction terms.",
    "exact",
    "parallel.parallelize: MHA_3(H_3) = [MHA_1(H_1) MHA_2(H_2)] on the data rows",
    kind=Kind.STEP,
    satisfied={"zero_data": True},
)
def mha(zero_data: bool = False) -> Evidence:
    """Two interaction constructions (no FFN, so B_i(H_i) − H_i = MHA_i(H_i)), parallelised; data rows of every
    token."""
    c = parallelize(interaction(4, 1, 2, 0, Q, K, M), interaction(3, 0, 2, 1, Q, K, M))
    H = c.sample_inputs(np.random.default_rng(0), 1)
    if zero_data:
        H[:, 0:2, :] = Fraction(0)
    att = run_blocks([Block(c.blocks[0].heads)], H, "exact") - H  # MHA_3(H_3)
    blocks_out = c.expected(H)  # [B_1(H_1) B_2(H_2)] with the new interaction rows
    at = [{"token": t, "row": r} for t in range(H.shape[2]) for r in (0, 1)]
    return Evidence(
        "parallelize(interaction(4, 1, 2), interaction(3, 0, 2)), one random structured H"
        + (" with zero data" if zero_data else "")
        + " (exact): MHA_3 against [B_1(H_1) B_2(H_2)] on the data rows",
        [Witness(a, att[0, a["row"], a["token"]], blocks_out[0, a["row"], a["token"]], "==") for a in at],
        [
            Witness(
                a, att[0, a["row"], a["token"]], blocks_out[0, a["row"], a["token"]] - H[0, a["row"], a["token"]], "=="
            )
            for a in at
        ],
        "MHA_3(H_3) = [MHA_1(H_1) MHA_2(H_2)] on rows 1-2 (and 0 on rows 3-5)",
        note="The residual H_i and FFN_i are part of B_i: a slip for [MHA_1(H_1) MHA_2(H_2)].",
    )


@obligation(
    "lemma7.duplication",
    LOC,
    "W_{3,0} = [I; I] duplicates the input token h_{3,t} for parallel processing.",
    "exact",
    "parallel.parallel_ffn: the duplication is merged into the first layers (affine after affine), no ReLU in between",
    kind=Kind.STEP,
    satisfied={"negative": False},
)
def duplication(negative: bool = True, l: int = 3) -> Evidence:
    """[I; I] as a layer of an FFN (Def. 5: a ReLU follows) on tokens with data −1 (or their absolute values);
    corrected: tmcheck's parallelisation of two Lemma 6 blocks on the same tokens."""
    eye = zeros((5, 5), "exact")
    for i in range(5):
        eye[i, i] = Fraction(1)
    dup = (
        Layer(np.concatenate([eye, eye]), zeros((10,), "exact")),
        Layer(np.concatenate([eye, zeros((5, 5), "exact")], axis=1), zeros((5,), "exact")),
    )
    c = parallelize(replace(l, M), replace(l, M))
    H = c.sample_inputs(np.random.default_rng(0), 1)
    H[0, 0:2, :] = -abs(H[0, 0:2, :]) - 1 if negative else abs(H[0, 0:2, :])
    be = ExactBackend()
    copy = be.output(ffn(dup, be.inputs(H), be))
    ours, want = run_blocks(c.blocks, H, "exact"), c.expected(H)
    at = [{"token": t, "row": r} for t in range(H.shape[2]) for r in (0, 1)]
    return Evidence(
        f"parallelize(replace({l}), replace({l})), one structured H with data {'< 0' if negative else '>= 0'} (exact): "
        "the first copy against the token",
        [Witness(a, copy[0, a["row"], a["token"]], H[0, a["row"], a["token"]], "==") for a in at],
        [Witness(a, ours[0, a["row"], a["token"]], want[0, a["row"], a["token"]], "==") for a in at],
        "merge [I; I] into the first layers of FFN_1 and FFN_2 (their first weight matrices stacked, reading h "
        "directly)",
        note="As a layer of an FFN (Def. 5), [I; I] is followed by a ReLU, which clips negative data.",
    )


@obligation(
    "lemma7.gating_composition",
    LOC,
    "FFN_{1,gating} FFN_1 (h_{3,t}) equals FFN_1(h_{3,t}) for t <= l1 and 0 otherwise (gating by Lemma 4).",
    "exact",
    "parallel.parallel_ffn: I_t carried through the hidden layers (σ(I_t) = I_t), gate sized by an exact "
    "interval bound",
    kind=Kind.STEP,
    satisfied={"same_data": False},
)
def gating_composition(same_data: bool = True, l1: int = 3, l2: int = 3) -> Evidence:
    """Per pair (token t of part 1, token l1 + t of part 2): the gate must tell them apart. As written it sees only
    FFN_1's output. Corrected: tmcheck's parallelisation of Lemma 6 with a gating block, whose gate also sees I_t
    (carried through the hidden layers), gives both tokens their own part's output on the same input."""
    H = sample_structured(np.random.default_rng(3), 1, l1 + l2, M)
    if same_data:
        H[0, 0:2, l1:] = H[0, 0:2, :l2]  # part 2 holds the data of part 1
    be = ExactBackend()
    y = be.output(ffn(replace_ffn(), be.inputs(H), be))
    at = [{"t": t, "t_other": l1 + t} for t in range(min(l1, l2))]
    c = parallelize(replace(l1, M), gating(l2, 1, "prefix", M))
    ours, want = run_blocks(c.blocks, H, "exact"), c.expected(H)
    exact = int((ours != want).sum())
    return Evidence(
        f"l1 = l2 = {l1}, FFN_1 = Lemma 6's FFN, one structured H"
        + (" whose parts hold equal data" if same_data else "")
        + ": what the gate sees at t and at l1 + t must differ",
        [Witness(a, tuple(y[0, :2, a["t"]]), tuple(y[0, :2, a["t_other"]]), "!=") for a in at],
        [
            Witness(
                a,
                (tuple(ours[0, :2, a["t"]]), tuple(ours[0, :2, a["t_other"]])),
                (tuple(want[0, :2, a["t"]]), tuple(want[0, :2, a["t_other"]])),
                "==",
            )
            for a in at
        ],
        "carry I_t alongside FFN_1's hidden layers (two units, σ(I_t) = I_t) and gate with σ(y + C v.I_t) - "
        "σ(C v.I_t), "
        "C = sup|y| / min_t |v.I_t| from an interval bound of FFN_1 on the other part's tokens",
        note=f"tmcheck's parallelize(replace({l1}), gating({l2}, 1)) on the same H: {exact} wrong entries.",
    )


def _rows_written(c) -> int:
    last = [b.ffn[-1].W for b in c.blocks if b.ffn]
    return max((int((np.abs(np.array(W, dtype=float)).sum(axis=1) > 0).sum()) for W in last), default=0)


def _lifted_width(c) -> int:
    r = c.resources()
    return r.w_FFN if r.L_FFN >= 2 else (10 if r.L_FFN == 1 else 0)


@obligation(
    "lemma7.statement",
    "Appendix G, Lemma 7 (statement)",
    "There is B_3 in B(m1 + m2, max(L_FFN1, L_FFN2) + 2, w_FFN1 + w_FFN2) with B_3([H1' H2']) = [B_1(H1) B_2(H2)].",
    "exact",
    "parallel.parallelize: m1 + m2 heads, depth max + 1, hidden width w1 + w2 + 2 (plus the gate layer)",
    kind=Kind.RESOURCE,  # exactness holds; what breaks is the class bound on the width of tmcheck's construction
    satisfied={"n": 9, "gating_pair": False, "heads_only": True},
)
def statement(n: int = 8, gating_pair: bool = True, heads_only: bool = False) -> Evidence:
    """Random parallelisations of Lemma 3-6 blocks (one nested), and two gating FFNs side by side: exactness,
    heads, depth and width against the statement; corrected width: max(w1' + w2' + 2, 2(r1 + 1) + 2(r2 + 1)).
    `heads_only`: Lemma 3 blocks only (no FFN, so no width to add up)."""
    rng = np.random.default_rng(7)
    pairs = []
    for _ in range(n - 1):
        a, b = (_one(rng, heads_only), _one(rng, heads_only))
        pairs.append((a, b, parallelize(a, b)))
    pairs.append((pairs[0][2], pairs[-1][1], parallelize(pairs[0][2], pairs[-1][1])))
    if gating_pair:
        a, b = gating(4, 2, "prefix", M), gating(4, 1, "suffix", M)
        pairs.append((a, b, parallelize(a, b)))
    written, corr = [], []
    for a, b, c in pairs:
        ra, rb, rc = a.resources(), b.resources(), c.resources()
        at = {"parts": (a.name, b.name)}
        failed = len(check_construction(c, rng, n_inputs=6).failed)
        stated = [(failed, 0, "=="), (rc.m, ra.m + rb.m, "<="), (rc.L_FFN, max(ra.L_FFN, rb.L_FFN) + 2, "<=")]
        for q, (lhs, rhs, rel) in zip(("failed checks", "heads", "L_FFN"), stated, strict=True):
            written.append(Witness({**at, "quantity": q}, lhs, rhs, rel))
            corr.append(Witness({**at, "quantity": q}, lhs, rhs, rel))
        written.append(Witness({**at, "quantity": "w_FFN"}, rc.w_FFN, ra.w_FFN + rb.w_FFN, "<="))
        corr.append(
            Witness(
                {**at, "quantity": "w_FFN"},
                rc.w_FFN,
                max(_lifted_width(a) + _lifted_width(b) + 2, 2 * (_rows_written(a) + 1) + 2 * (_rows_written(b) + 1)),
                "<=",
            )
        )
    return Evidence(
        f"{n} random parallelisations of Lemma 3-6 blocks (one nested)"
        + (" and gating(4, 2, prefix) ‖ gating(4, 1, suffix)" if gating_pair else "")
        + ": check_construction, heads, depth and width of tmcheck's parallelize",
        written,
        corr,
        "B_3 in B(m1 + m2, max(L_FFN1, L_FFN2) + 1, w) with w = max(w1' + w2' + 2, 2(r1 + 1) + 2(r2 + 1)), where "
        "w' is the hidden width after lifting depth-1 FFNs (10) and r the number of rows an FFN writes",
    )
