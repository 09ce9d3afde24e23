"""Obligations of the constant-addition lemma (Appendix G, Lemma 5), checked by computation."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tmcheck.proofs_check.registry import Result, Verdict, obligation
from tmcheck.theory.backends import run_blocks
from tmcheck.theory.check import check_construction
from tmcheck.theory.lemmas.addition import addition
from tmcheck.theory.lemmas.gating import gating
from tmcheck.theory.lemmas.interaction import interaction_head, minimal_C
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
)
def kernels() -> Result:
    M, c, x = Fraction(2), Fraction(0), Fraction(1, 2)
    Q = [[1, 0, 0, 0, 0], [0, 0, 0, 0, 1]]
    K = [[0, 0, 0, 0, 1], [0, 0, 0, 0, M - c]]
    C = minimal_C(2, Q, K, M / 2, t1=1, t2=0)
    H = _input([x], M)
    out = run_blocks([Block((interaction_head(2, 1, 0, 0, Q, K, C),))], H, "exact")
    got, claimed = out[0, 0, 1], x - c + M
    if got == claimed:
        return Result(Verdict.HOLDS, "kernels give x - c + M")
    return Result(
        Verdict.CORRECTED,
        f"D = 1, x = {x}, c = {c}, M = {M}: the head adds {got} to token D (= M - c: the query reads h_{{D+i}}^1 = 0 "
        f"and the key only the constant), not x - c + M = {claimed}",
        counterexample={"D": 1, "x": str(x), "c": str(c), "M": str(M), "got": str(got), "claimed": str(claimed)},
        corrected="K_i = [e_5; e_1 + (M - c^i) e_5] (1-based), giving <Q_i h_{D+i}, K_i h_i> = h_{D+i}^1 + x^i + M - c^i = x^i - c^i + M",
    )


@obligation(
    "lemma5.relu",
    LOC,
    "σ(x^i - c^i + M) = x^i - c^i + M, since ||x||, ||c|| <= M/2.",
    "exact",
    "addition(): checked exactly at x = -M/2, c = M/2 (where the argument is 0)",
)
def relu() -> Result:
    M = Fraction(4)
    c = addition([M / 2], M)
    H = _input([-M / 2], M)
    out = run_blocks(c.blocks, H, "exact")
    if not (out == c.expected(H)).all():
        return Result(Verdict.FAILS, "corner case breaks", counterexample={"x": str(-M / 2), "c": str(M / 2)})
    return Result(Verdict.HOLDS, "the argument x - c + M is >= 0 on the domain, 0 at x = -M/2, c = M/2, where the block is exact")


@obligation(
    "lemma5.ffn",
    LOC,
    "Via the gating Lemma 4 we can design a three layer FFN to subtract M from only h_{D+1}, ..., h_{2D}.",
    "exact",
    "addition.shift_ffn: σ(C v.I_t) - σ(C v.I_t - M) with the suffix pivot: two layers, width 2",
)
def ffn_step() -> Result:
    M = Fraction(2)
    D = 2
    H = _input([Fraction(1, 2), Fraction(-1)], M)
    H[0, 0, D:] = H[0, 0, :D] + M  # after the heads, c = 0: x + M on tokens D..2D-1
    outs = set()
    for keep in ("prefix", "suffix"):
        g = gating(2 * D, D, keep, 2 * M)
        outs.add(str(run_blocks(g.blocks, H, "exact")[0, 0, D]))
    return Result(
        Verdict.CORRECTED,
        f"a gating FFN keeps or zeroes data: on token D holding x + M = {H[0, 0, D]} it yields one of {sorted(outs)}, "
        f"never x = {H[0, 0, 0]}; subtracting a constant needs a different FFN",
        counterexample={"token_value": str(H[0, 0, D]), "gating_outputs": sorted(outs), "wanted": str(H[0, 0, 0])},
        corrected="FFN(z) = -(σ(C v.I_t) - σ(C v.I_t - M)) e_1 with v the suffix pivot at D and C = M / min_{t > D} v.I_t: "
        "-M e_1 on tokens D+1..2D, 0 before (depth 2, width 2, reads only the interaction rows)",
    )


@obligation(
    "lemma5.weight_bound",
    "Appendix G, Lemma 5 (statement)",
    "||θ_B||_inf = O(l M).",
    "exact",
    "addition(): heads with the exact C of Lemma 3; stated bound taken from Lemma 3 (O(d^4 κ^2 M^2 l^2))",
)
def weight_bound() -> Result:
    M = Fraction(2)
    rows = []
    for D in (1, 2, 4, 8, 16, 32):
        c = addition([Fraction(0)] * D, M)
        rows.append((2 * D, max(c.constants["C_heads"])))
    ratios = [float(C / (l * M)) for l, C in rows]
    return Result(
        Verdict.CORRECTED,
        "the proof's heads need C >= C*, the exact threshold of Lemma 3; for c = 0, M = 2: C*/(lM) = "
        + ", ".join(f"{r:.3g}" for r in ratios)
        + " for l = 2..64, growing linearly in l: C* ~ M l^2, so O(lM) does not follow from the proof",
        counterexample={"l": [r[0] for r in rows], "C_min": [str(r[1]) for r in rows], "C_over_lM": ratios},
        corrected="||θ_B||_inf = O(M l^2) for this construction (C* / (M l^2) = "
        + ", ".join(f"{float(C / (l * l * M)):.3g}" for l, C in rows) + ")",
        data={"ratios_lM": ratios},
    )


@obligation(
    "lemma5.statement",
    "Appendix G, Lemma 5 (statement)",
    "There is B in B(D, 3) with B(H) = [x, x - c] on row 1 (and rows 2-5 unchanged).",
    "exact",
    "addition(): D heads, FFN depth 2; passes check_construction",
)
def statement() -> Result:
    rng = np.random.default_rng(5)
    for D in (1, 2, 3, 5):
        M = Fraction(int(rng.integers(2, 6)))
        c = [M / 2 * Fraction(int(v), 8) for v in rng.integers(-8, 9, size=D)]
        con = addition(c, M)
        rep = check_construction(con, rng, n_inputs=8)
        res = con.resources()
        if not rep.ok or res.m > D or res.L_FFN > 3:
            return Result(Verdict.FAILS, f"construction fails {rep.failed}", counterexample={"c": [str(v) for v in c], "M": str(M)})
    return Result(Verdict.HOLDS, "with the corrected kernels and FFN, D in {1, 2, 3, 5}, random c: exact on every check, m = D, L_FFN = 2 <= 3")
