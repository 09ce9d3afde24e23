"""Obligations of the gating lemma (Appendix G, Lemma 4), checked by computation.

`paper_gating_ffn` is the FFN exactly as written (W_1 = I + C v rows, W_2 = I - C v rows, b = 0),
with the pivot left unnormalised (its norm is an irrational square root; scaling v by a positive
factor only rescales C, and no conclusion depends on it).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np

from tmcheck.proofs_check.registry import Result, Verdict, obligation
from tmcheck.theory.backends import ExactBackend, ffn, run_blocks
from tmcheck.theory.lemmas import sample_structured
from tmcheck.theory.lemmas.gating import PI_LOWER, gating, gating_C, pivot
from tmcheck.theory.network import Layer, interaction_vectors, zeros

LOC = "Appendix G, proof of Lemma 4"
M = Fraction(2)


def paper_gating_ffn(l: int, k: int, C) -> tuple[Layer, ...]:
    """The paper's FFN for the prefix h_1..h_k (paper's 1-based k = our t_cut)."""
    v = pivot(l, k, "prefix")
    W1, W2 = zeros((5, 5), "exact"), zeros((5, 5), "exact")
    for i in range(5):
        W1[i, i] = W2[i, i] = Fraction(1)
    for i in (0, 1):
        W1[i, 2:4] = C * v
        W2[i, 2:4] = -C * v
    return (Layer(W1, zeros((5,), "exact")), Layer(W2, zeros((5,), "exact")))


def _apply(layers, H):
    be = ExactBackend()
    return be.output(ffn(layers, be.inputs(H), be))


def _mp_vectors(l: int):
    """The paper's vectors at the working precision (callers hold mpmath.workdps(50))."""
    return [(mpmath.cos(t * mpmath.pi / (2 * l)), mpmath.sin(t * mpmath.pi / (2 * l))) for t in range(1, l + 1)]


def _mp_pivot(I, k: int):
    a, b = I[k - 1][0] + I[k][0], I[k - 1][1] + I[k][1]
    n = mpmath.sqrt(a * a + b * b)
    return (b / n, -a / n)  # clockwise quarter turn of the normalised bisector


@obligation(
    "lemma4.pivot_sign",
    LOC,
    "v = R_{π/2}((I_k + I_{k+1}) / ||I_k + I_{k+1}||) has v.I_t > 0 for t <= k and v.I_t < 0 for t > k.",
    "numeric (50 digits) and exact",
    "gating.pivot (unnormalised), for tmcheck's exact vectors too",
)
def pivot_sign() -> Result:
    for l in (2, 3, 8, 33):
        with mpmath.workdps(50):
            I = _mp_vectors(l)
            for k in range(1, l):
                v = _mp_pivot(I, k)
                for t in range(1, l + 1):
                    s = v[0] * I[t - 1][0] + v[1] * I[t - 1][1]
                    if (s > 0) != (t <= k):
                        return Result(Verdict.FAILS, "pivot sign wrong", counterexample={"l": l, "k": k, "t": t})
        Ie = interaction_vectors(l, "exact")
        for k in range(0, l + 1):
            v = pivot(l, k, "prefix")
            if any(((v @ Ie[:, t]) > 0) != (t < k) for t in range(l)):
                return Result(Verdict.FAILS, "exact pivot sign wrong", counterexample={"l": l, "t_cut": k})
    return Result(Verdict.HOLDS, "sinusoidal (50 digits) and exact vectors, l in {2, 3, 8, 33}, every cut: signs as claimed")


@obligation(
    "lemma4.first_layer",
    LOC,
    "z = σ(W_1 h_t) = (σ(h^1 + C I_t.v), σ(h^2 + C I_t.v), I_t^1, I_t^2, 1): the ReLU keeps the interaction rows.",
    "exact",
    "relies on I_t >= 0 entrywise (first quadrant), true for the paper's and tmcheck's vectors",
)
def first_layer() -> Result:
    for l in (1, 2, 9, 64):
        if (interaction_vectors(l, "exact") < 0).any() or (interaction_vectors(l, "float64") < -1e-300).any():
            return Result(Verdict.FAILS, "negative interaction entry", counterexample={"l": l})
    return Result(Verdict.HOLDS, "every interaction vector lies in the closed first quadrant (l in {1, 2, 9, 64}), so σ(I_t) = I_t")


@obligation(
    "lemma4.kept_tokens",
    LOC,
    "If I_t.v > 0 (and C I_t.v >= ||H||_inf), W_2 z + b_2 = h_t.",
    "exact",
    "gating.gating_ffn keeps the same tokens",
)
def kept_tokens() -> Result:
    rng = np.random.default_rng(0)
    l, k = 8, 3
    H = sample_structured(rng, 20, l, M)
    out = _apply(paper_gating_ffn(l, k, gating_C(l, k, "prefix", M)), H)
    ok = (out[:, :, :k] == H[:, :, :k]).all()
    if not ok:
        return Result(Verdict.FAILS, "kept token changed", counterexample={"l": l, "k": k})
    return Result(Verdict.HOLDS, f"l = {l}, k = {k}, 20 inputs with ||H|| <= 2: the paper's FFN returns h_t exactly on t <= k")


@obligation(
    "lemma4.gated_tokens",
    LOC,
    "If I_t.v < 0, z = (0, 0, I_t, 1) and 'applying the second layer to (0, I_t, 1) yields (0, I_t, 1)'.",
    "exact",
    "gating.gating_ffn: the C I_t.v term is subtracted through a ReLU unit σ(-C v.I_t), which is 0 on kept tokens",
)
def gated_tokens() -> Result:
    l, k = 8, 3
    C = gating_C(l, k, "prefix", M)
    H = sample_structured(np.random.default_rng(1), 1, l, M)
    out = _apply(paper_gating_ffn(l, k, C), H)
    t = l - 1
    got = (out[0, 0, t], out[0, 1, t])
    if got == (0, 0):
        return Result(Verdict.HOLDS, "gated token zeroed")
    return Result(
        Verdict.CORRECTED,
        f"l = {l}, keep t < {k} (0-based), token {t}: the paper's FFN outputs data rows {tuple(str(g) for g in got)} "
        "= -C v.I_t, not 0: W_2 subtracts C v.I_t from every token, but W_1 + σ added it only where v.I_t > 0",
        counterexample={"l": l, "k": k, "token": t, "data_rows": [str(g) for g in got]},
        corrected="add the unit σ(C v.I_t) to the hidden layer and subtract it (not the linear C v.I_t) in W_2: "
        "then FFN(h_t) = h_t for t <= k and (0, 0, I_t, 1) otherwise; tmcheck implements the block version (lemma4.residual)",
    )


@obligation(
    "lemma4.residual",
    "Appendix G, Lemma 4 (statement) with Definition 3",
    "FFN(h_t) = h_t on the kept tokens and (0, 0, I_t, 1) on the others, used inside a block B(H) = FFN(Z) + Z.",
    "exact",
    "gating.gating_ffn: z + FFN(z) is the gated token (FFN(z) = 0 on kept tokens, -data on gated ones)",
)
def residual() -> Result:
    l, k = 6, 2
    I = interaction_vectors(l, "exact")
    # The statement's own map, inside a block, adds it to z: z + FFN(z).
    H = sample_structured(np.random.default_rng(2), 1, l, M)
    stated = H.copy()
    stated[:, 0:2, k:] = Fraction(0)
    block_out = H + stated
    c = gating(l, k, "prefix", M)
    ours = run_blocks(c.blocks, H, "exact")
    assert (ours == c.expected(H)).all()
    return Result(
        Verdict.CORRECTED,
        f"with the residual of Def. 3 the stated FFN gives 2h_t on kept tokens and moves row 2 of token 0 from "
        f"{I[0, 0]} to {block_out[0, 2, 0]}: the immutable rows change. The corrected block gating is exact on the same input.",
        counterexample={"l": l, "k": k, "row2_token0_after": str(block_out[0, 2, 0])},
        corrected="FFN(z) = 0 on kept tokens and (-z_0, -z_1, 0, 0, 0) on gated ones, so that the block B = FFN(Z) + Z gates; "
        "two layers, width 3, C = M / min_t |v.I_t|",
    )


@obligation(
    "lemma4.pivot_bound",
    LOC,
    "|I_t.v| >= (1/2)|<I_k, R I_{k+1}>| = (1/2) sin(π/2l) >= π/(8l) for l >= 2, hence C > 8 l ||H|| / π suffices.",
    "numeric (50 digits)",
    "gating.gating_C: the exact M / min_t |v.I_t|",
)
def pivot_bound() -> Result:
    worst = None
    with mpmath.workdps(50):
        for l in (2, 3, 5, 16, 64):
            I = _mp_vectors(l)
            for k in range(1, l):
                v = _mp_pivot(I, k)
                m = min(abs(v[0] * a + v[1] * b) for a, b in I)
                r = m / (mpmath.sin(mpmath.pi / (2 * l)) / 2)
                if r < 1 or mpmath.sin(mpmath.pi / (2 * l)) / 2 < mpmath.pi / (8 * l):
                    return Result(Verdict.FAILS, "pivot bound fails", counterexample={"l": l, "k": k})
                worst = r if worst is None else min(worst, r)
    return Result(
        Verdict.HOLDS,
        f"sinusoidal vectors (50 digits), l in {{2, 3, 5, 16, 64}}, every k: min_t |I_t.v| / (sin(π/2l)/2) >= {float(worst):.4f}; "
        "the sharp value is sin(π/4l) (the nearest tokens are π/4l from the bisector), ratio 1/cos(π/4l) -> 1: the "
        "first step is tight, the last one (sin x >= x/2) loses a factor about 2",
    )


@obligation(
    "lemma4.weight_bound",
    "Appendix G, Lemma 4 (statement)",
    "||θ_FFN||_inf <= O(l ||H||_inf), from C = 8 l ||H|| / π.",
    "exact",
    "gating(): measured κ against max(1, 8 l M / π) in check_construction",
)
def weight_bound() -> Result:
    rows = []
    for l in (2, 8, 32, 128):
        for k in (0, l // 2, l):
            kap = max(abs(w) for lay in gating(l, k, "prefix", M).blocks[0].ffn for w in lay.W.reshape(-1))
            rows.append((l, k, kap, 8 * l * M / PI_LOWER))
    bad = [r for r in rows if r[2] > max(1, r[3])]
    if bad:
        return Result(Verdict.FAILS, "weight above 8lM/π", counterexample=[str(x) for x in bad[0]])
    worst = max(float(r[2] / r[3]) for r in rows)
    return Result(Verdict.HOLDS, f"l up to 128, cuts at both ends and the middle: measured κ <= {worst:.3f} x 8lM/π")
