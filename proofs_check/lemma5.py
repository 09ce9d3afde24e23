"""Obligations of the constant-addition lemma (Appendix G, Lemma 5), checked by computation."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tmcheck.proofs_check.registry import ORDER_SLACK, Evidence, Kind, Witness, obligation
from tmcheck.theory.backends import run_blocks
from tmcheck.theory.check import check_construction
from tmcheck.theory.heads import interaction_head, minimal_C
from tmcheck.theory.lemmas import sample_structured
from tmcheck.theory.lemmas.addition import addition, addition_kernels, shift_ffn
from tmcheck.theory.network import Block, structured_positional

LOC = "Appendix G, proof of Lemma 5"


def _input(x, M) -> np.ndarray:
    """The lemma's H for data x (l = 2D): row 0 = (x, 0_D), row 1 = 0."""
    D = len(x)
    H = np.empty((1, 5, 2 * D), dtype=object)
    H[0] = structured_positional(2 * D, "exact")
    H[0, 0:2, :] = Fraction(0)
    H[0, 0, :D] = [Fraction(v) for v in x]
    return H


@obligation(
    "lemma5.kernels",
    LOC,
    "With Q_i = [e_1; e_5], K_i = [e_5; (M - c^i) e_5] (1-based rows), A_i(h_{D+i}) = σ(x^i - c^i + M) e_1.",
    "exact",
    "addition.addition_kernels: K_i = [e_5; e_1 + (M - c^i) e_5], so the key contributes x^i",
    kind=Kind.STEP,
    satisfied={"xs": (Fraction(0),), "cs": tuple(Fraction(k, 4) for k in range(-4, 5) if k)},
)
def kernels(
    xs=(Fraction(1, 2), Fraction(-1, 2), Fraction(0), Fraction(1)), cs=(Fraction(0), Fraction(1, 2)), M=Fraction(2)
) -> Evidence:
    """D = 1: the head (Lemma 3, exact C for the box M/2) with the written kernels, run on tmcheck's exact backend."""

    def added(Q, K, x):
        C = minimal_C(2, Q, K, M / 2, t1=1, t2=0)
        return run_blocks([Block((interaction_head(2, 1, 0, 0, Q, K, C),))], _input([x], M), "exact")[0, 0, 1]

    pts = [(x, c) for x in xs for c in cs]
    at = [{"D": 1, "x": x, "c": c, "M": M} for x, c in pts]
    written = [added([[1, 0, 0, 0, 0], [0, 0, 0, 0, 1]], [[0, 0, 0, 0, 1], [0, 0, 0, 0, M - c]], x) for x, c in pts]
    ours = [added(*addition_kernels(c, M), x) for x, c in pts]
    return Evidence(
        f"D = 1, x in {[str(x) for x in xs]}, c in {[str(c) for c in cs]}, M = {M}: what the head adds to token D",
        [Witness(a, g, x - c + M, "==") for a, g, (x, c) in zip(at, written, pts, strict=True)],
        [Witness(a, g, x - c + M, "==") for a, g, (x, c) in zip(at, ours, pts, strict=True)],
        "K_i = [e_5; e_1 + (M - c^i) e_5] (1-based), giving <Q_i h_{D+i}, K_i h_i> = h_{D+i}^1 + x^i + M - c^i "
        "= x^i - c^i + M",
        note="As written the query reads h_{D+i}^1 = 0 and the key only the constant: the head adds M − c.",
    )


@obligation(
    "lemma5.relu",
    LOC,
    "σ(x^i - c^i + M) = x^i - c^i + M, since ||x||, ||c|| <= M/2.",
    "exact",
    "addition(): checked exactly at x = -M/2, c = M/2 (where the argument is 0)",
    kind=Kind.STEP,
)
def relu(M=Fraction(4)) -> Evidence:
    wits = []
    for x in (-M / 2, Fraction(0), M / 2):
        for c in (-M / 2, Fraction(0), M / 2):
            con = addition([c], M)
            H = _input([x], M)
            wits.append(Witness({"x": x, "c": c, "M": M, "quantity": "argument"}, x - c + M, 0, ">="))
            wits.append(
                Witness(
                    {"x": x, "c": c, "M": M, "quantity": "wrong entries of the block"},
                    int((run_blocks(con.blocks, H, "exact") != con.expected(H)).sum()),
                    0,
                    "==",
                )
            )
    return Evidence(
        f"x, c at the corners and centre of [−M/2, M/2], M = {M}: the σ argument and the exact block output", wits
    )


@obligation(
    "lemma5.ffn",
    LOC,
    "Via the gating Lemma 4 we can design a three layer FFN to subtract M from only h_{D+1}, ..., h_{2D}.",
    "exact",
    "addition.shift_ffn: σ(C v.I_t) - σ(C v.I_t - M) with the suffix pivot of the gating lemma: two layers, width 2",
    kind=Kind.STEP,
)
def ffn_step(Ds=(1, 2, 3, 5), M=Fraction(2), n=3) -> Evidence:
    """tmcheck's FFN from the gating lemma's pivot, in a block (Def. 3) on structured H: token t loses M exactly when
    t >= D."""
    wits = []
    for D in Ds:
        layers = shift_ffn(2 * D, D, M)
        wits.append(Witness({"D": D, "quantity": "FFN layers"}, len(layers), 3, "<="))
        H = sample_structured(np.random.default_rng(D), n, 2 * D, M)
        out = run_blocks([Block((), layers)], H, "exact")
        for i in range(n):
            for t in range(2 * D):
                want = tuple(H[i, :, t]) if t < D else (H[i, 0, t] - M, *H[i, 1:, t])
                wits.append(Witness({"D": D, "sample": i, "t": t}, tuple(out[i, :, t]), want, "=="))
    return Evidence(
        f"D in {list(Ds)}, M = {M}, {n} structured inputs each (exact backend): each output token against 'M "
        "subtracted "
        "from tokens D+1..2D only', and the FFN's depth against 3",
        wits,
        note="The FFN reads only the interaction rows through the gating lemma's (suffix) pivot v: σ(C v.I_t) − σ(C "
        "v.I_t − M) "
        "is M on the later tokens and 0 before. (The gating FFN itself zeroes data rather than subtracting a constant; "
        "the paper only claims its pivot gives such an FFN, which holds.)",
    )


@obligation(
    "lemma5.weight_bound",
    "Appendix G, Lemma 5 (statement)",
    "||θ_B||_inf = O(l M).",
    "exact",
    "addition(): heads with the exact C of Lemma 3; stated bound taken from Lemma 3 (O(d^4 κ^2 M^2 l^2))",
    kind=Kind.RESOURCE,
    satisfied={"Ds": (1, 2, 3, 4), "Ms": (Fraction(2), Fraction(3))},
)
def weight_bound(Ds=(1, 2, 4, 8, 16, 32), Ms=(Fraction(2),)) -> Evidence:
    at, written, corr, notes = [], [], [], []
    for M in Ms:
        rows = [(2 * D, max(addition([Fraction(0)] * D, M).constants["C_heads"])) for D in sorted(set(Ds) | {1})]
        base_lM = rows[0][1] / (rows[0][0] * M)
        base_l2M = rows[0][1] / (rows[0][0] ** 2 * M)
        rows = [r for r in rows if r[0] // 2 in Ds]
        for l, C in rows:
            a = {"l": l, "M": M, "C*": C}
            at.append(a)
            written.append(Witness(a, C / (l * M), ORDER_SLACK * base_lM, "<="))
            corr.append(Witness(a, C / (l * l * M), ORDER_SLACK * base_l2M, "<="))
        notes.append(f"M = {M}: C*/(lM) = " + ", ".join(f"{float(C / (l * M)):.3g}" for l, C in rows))
    return Evidence(
        f"c = 0, M in {[str(M) for M in Ms]}, l = 2D for D in {list(Ds)}: the exact head weight C*/(lM) against "
        f"{ORDER_SLACK}× its value at l = 2",
        written,
        corr,
        "||θ_B||_inf = O(M l^2) for this construction (the heads need C >= C*, Lemma 3's exact threshold)",
        note="; ".join(notes) + ": linear in l.",
    )


# why kept: an obligation is declared as data (id, place, claim, method, note, kind): alike in shape, each its own claim
@obligation(
    "lemma5.statement",
    "Appendix G, Lemma 5 (statement)",
    "There is B in B(D, 3) with B(H) = [x, x - c] on row 1 (and rows 2-5 unchanged).",
    "exact",
    "addition(): D heads, FFN depth 2; passes check_construction",
    kind=Kind.STATEMENT,
)
def statement(Ds=(1, 2, 3, 5)) -> Evidence:
    rng = np.random.default_rng(5)
    wits = []
    for D in Ds:
        M = Fraction(int(rng.integers(2, 6)))
        c = [M / 2 * Fraction(int(v), 8) for v in rng.integers(-8, 9, size=D)]
        con = addition(c, M)
        rep = check_construction(con, rng, n_inputs=8)
        res = con.resources()
        a = {"D": D, "M": M, "c": tuple(c)}
        wits += [
            Witness({**a, "quantity": "failed checks"}, len(rep.failed), 0, "=="),
            Witness({**a, "quantity": "heads"}, res.m, D, "<="),
            Witness({**a, "quantity": "L_FFN"}, res.L_FFN, 3, "<="),
        ]
    return Evidence(
        f"D in {list(Ds)}, random c in [−M/2, M/2]^D: tmcheck's check_construction, heads and FFN depth", wits
    )
