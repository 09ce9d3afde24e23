"""Obligations of the gating lemma (Appendix G, Lemma 4), checked by computation.

`paper_gating_ffn` is the FFN exactly as written (W_1 = I + C v rows, W_2 = I - C v rows, b = 0),
with the pivot left unnormalised (its norm is an irrational square root; scaling v by a positive
factor only rescales C, and no conclusion depends on it).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np

from tmcheck.proofs_check.registry import Evidence, Kind, Witness, obligation
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


# why kept: an obligation is declared as data (id, place, claim, method, note, kind): alike in shape, each its own claim
@obligation(
    "lemma4.pivot_sign",
    LOC,
    "v = R_{π/2}((I_k + I_{k+1}) / ||I_k + I_{k+1}||) has v.I_t > 0 for t <= k and v.I_t < 0 for t > k.",
    "numeric (50 digits) and exact",
    "gating.pivot (unnormalised), for tmcheck's exact vectors too",
    kind=Kind.STEP,
)
def pivot_sign(ls=(2, 3, 8, 33)) -> Evidence:
    wits = []
    for l in ls:
        with mpmath.workdps(50):
            I = _mp_vectors(l)
            for k in range(1, l):
                v = _mp_pivot(I, k)
                for t in range(1, l + 1):
                    s = v[0] * I[t - 1][0] + v[1] * I[t - 1][1]
                    wits.append(Witness({"vectors": "sinusoidal", "l": l, "k": k, "t": t}, bool(s > 0), t <= k, "=="))
        Ie = interaction_vectors(l, "exact")
        for k in range(0, l + 1):
            v = pivot(l, k, "prefix")
            wits += [
                Witness({"vectors": "exact", "l": l, "t_cut": k, "t": t}, bool(v @ Ie[:, t] > 0), t < k, "==")
                for t in range(l)
            ]
    return Evidence(
        f"sinusoidal (50 digits) and tmcheck's exact vectors, l in {list(ls)}, every cut and token: sign of v.I_t", wits
    )


@obligation(
    "lemma4.first_layer",
    LOC,
    "z = σ(W_1 h_t) = (σ(h^1 + C I_t.v), σ(h^2 + C I_t.v), I_t^1, I_t^2, 1): the ReLU keeps the interaction rows.",
    "exact",
    "relies on I_t >= 0 entrywise (first quadrant), true for the paper's and tmcheck's vectors",
    kind=Kind.STEP,
)
def first_layer(ls=(1, 2, 9, 64)) -> Evidence:
    wits = []
    for l in ls:
        wits.append(Witness({"l": l, "vectors": "exact"}, interaction_vectors(l, "exact").min(), 0, ">="))
        wits.append(
            Witness({"l": l, "vectors": "float64"}, float(interaction_vectors(l, "float64").min()), -1e-300, ">=")
        )
    return Evidence(f"l in {list(ls)}: the smallest entry of the interaction vectors (σ(I_t) = I_t needs >= 0)", wits)


@obligation(
    "lemma4.kept_tokens",
    LOC,
    "If I_t.v > 0 (and C I_t.v >= ||H||_inf), W_2 z + b_2 = h_t.",
    "exact",
    "gating.gating_ffn keeps the same tokens",
    kind=Kind.STEP,
)
def kept_tokens(l=8, k=3, n=20) -> Evidence:
    H = sample_structured(np.random.default_rng(0), n, l, M)
    out = _apply(paper_gating_ffn(l, k, gating_C(l, k, "prefix", M)), H)
    wits = [
        Witness({"l": l, "k": k, "sample": i, "t": t}, int((out[i, :, t] != H[i, :, t]).sum()), 0, "==")
        for i in range(n)
        for t in range(k)
    ]
    return Evidence(
        f"l = {l}, k = {k}, {n} structured inputs with ||H|| <= {M}: changed entries of each kept token "
        "under the paper's FFN (exact)",
        wits,
    )


@obligation(
    "lemma4.gated_tokens",
    LOC,
    "If I_t.v < 0, z = (0, 0, I_t, 1) and 'applying the second layer to (0, I_t, 1) yields (0, I_t, 1)'.",
    "exact",
    "gating.gating_ffn: the C I_t.v term is subtracted through a ReLU unit σ(-C v.I_t), which is 0 on kept tokens",
    kind=Kind.STEP,
    satisfied={"written": "corrected"},
)
def gated_tokens(l=8, k=3, n=3, written="paper") -> Evidence:
    """The data rows of every gated token: the paper's FFN (as a map) against 0; corrected: tmcheck's gating block.
    `written="corrected"` evaluates the written claim on tmcheck's block instead (a satisfying input for tests)."""
    H = sample_structured(np.random.default_rng(1), n, l, M)
    paper = _apply(paper_gating_ffn(l, k, gating_C(l, k, "prefix", M)), H)
    ours = run_blocks(gating(l, k, "prefix", M).blocks, H, "exact")
    first = paper if written == "paper" else ours
    at = [{"l": l, "k": k, "sample": i, "t": t} for i in range(n) for t in range(k, l)]
    return Evidence(
        f"l = {l}, keep t < {k} (0-based), {n} structured inputs: data rows of each gated token",
        [Witness(a, (first[a["sample"], 0, a["t"]], first[a["sample"], 1, a["t"]]), (0, 0), "==") for a in at],
        [Witness(a, (ours[a["sample"], 0, a["t"]], ours[a["sample"], 1, a["t"]]), (0, 0), "==") for a in at],
        "add the unit σ(C v.I_t) to the hidden layer and subtract it (not the linear C v.I_t) in W_2: "
        "then FFN(h_t) = h_t for t <= k and (0, 0, I_t, 1) otherwise; tmcheck implements the block version "
        "(theory.lemmas.gating)",
        note="W_2 subtracts C v.I_t from every token, but W_1 + σ added it only where v.I_t > 0: the paper's FFN "
        "leaves −C v.I_t.",
    )


@obligation(
    "lemma4.residual",
    "Appendix G, Lemma 4 (statement)",
    "There is an FFN with FFN(h_t) = h_t for t <= k and FFN(h_t) = (0, 0, I_t, 1) for t > k (any ||H||∞ <= M).",
    "exact",
    "gating.gating(): a block B(z) = z + FFN(z) (Def. 3) that realises the stated map token-wise; FFN(z) = 0 on kept "
    "tokens and (−z_0, −z_1, 0, 0, 0) on gated ones (two layers, width 3, C = M / min_t |v.I_t|)",
    kind=Kind.STATEMENT,
)
def residual(cuts=((6, 2, "prefix"), (8, 0, "prefix"), (8, 8, "prefix"), (5, 3, "suffix")), n=4) -> Evidence:
    """The stated map on random structured H, realised by tmcheck's gating construction; every token, every row."""
    wits = []
    for l, k, keep in cuts:
        H = sample_structured(np.random.default_rng(2), n, l, M)
        out = run_blocks(gating(l, k, keep, M).blocks, H, "exact")
        for i in range(n):
            for t in range(l):
                kept = (t < k) if keep == "prefix" else (t >= k)
                want = tuple(H[i, :, t]) if kept else (0, 0, *H[i, 2:, t])
                wits.append(
                    Witness({"l": l, "k": k, "keep": keep, "sample": i, "t": t}, tuple(out[i, :, t]), want, "==")
                )
    return Evidence(
        f"cuts (l, k, keep) in {list(cuts)}, {n} structured inputs each with ||H|| <= {M}: each output token "
        "against the stated map",
        wits,
        note="The statement is a token-wise map; the paper's FFN does not realise it (lemma4.gated_tokens), "
        "tmcheck's block does. "
        "A block z + FFN(z) is itself an FFN of the statement's kind once the identity is carried by σ(z) − "
        "σ(−z) units.",
    )


@obligation(
    "lemma4.pivot_bound",
    LOC,
    "|I_t.v| >= (1/2)|<I_k, R I_{k+1}>| = (1/2) sin(π/2l) >= π/(8l) for l >= 2, hence C > 8 l ||H|| / π suffices.",
    "numeric (50 digits)",
    "gating.gating_C: the exact M / min_t |v.I_t|",
    kind=Kind.STEP,
)
def pivot_bound(ls=(2, 3, 5, 16, 64)) -> Evidence:
    """The paper's normalised pivot at 50 digits, and tmcheck's own pivot (`gating.pivot`, float64 and its vectors)
    normalised: min_t |I_t.v| / ||v|| against sin(π/2l)/2."""
    wits = []
    with mpmath.workdps(50):
        for l in ls:
            I = _mp_vectors(l)
            half_sin = mpmath.sin(mpmath.pi / (2 * l)) / 2
            wits.append(Witness({"l": l, "step": "sin(π/2l)/2 >= π/8l"}, half_sin, mpmath.pi / (8 * l), ">="))
            If = interaction_vectors(l, "float64")
            for k in range(1, l):
                v = _mp_pivot(I, k)
                wits.append(
                    Witness(
                        {"l": l, "k": k, "step": "min_t |I_t.v| >= sin(π/2l)/2"},
                        min(abs(v[0] * a + v[1] * b) for a, b in I),
                        half_sin,
                        ">=",
                    )
                )
                w = pivot(l, k, "prefix", "float64")
                ours = float(np.abs(w @ If).min() / np.linalg.norm(w))
                wits.append(
                    Witness(
                        {"l": l, "k": k, "step": "tmcheck's pivot: min_t |I_t.v|/|v| >= sin(π/2l)/2"},
                        ours * (1 + 1e-12),
                        float(half_sin),
                        ">=",
                    )
                )
    return Evidence(
        f"sinusoidal vectors (50 digits) and tmcheck's pivot (float64), l in {list(ls)}, every k",
        wits,
        note="The sharp value is sin(π/4l) (the nearest tokens are π/4l from the bisector): the first step is tight "
        "as l grows, "
        "the last one (sin x >= x/2) loses a factor about 2.",
    )


# why kept: an obligation is declared as data (id, place, claim, method, note, kind): alike in shape, each its own claim
@obligation(
    "lemma4.weight_bound",
    "Appendix G, Lemma 4 (statement)",
    "||θ_FFN||_inf <= O(l ||H||_inf), from C = 8 l ||H|| / π.",
    "exact",
    "gating(): measured κ against max(1, 8 l M / π) in check_construction",
    kind=Kind.RESOURCE,
)
def weight_bound(ls=(2, 8, 32, 128)) -> Evidence:
    wits = []
    for l in ls:
        for k in (0, l // 2, l):
            kap = max(abs(w) for lay in gating(l, k, "prefix", M).blocks[0].ffn for w in lay.W.reshape(-1))
            wits.append(Witness({"l": l, "k": k}, kap, max(1, 8 * l * M / PI_LOWER), "<="))
    return Evidence(
        f"l in {list(ls)}, cuts at both ends and the middle: measured κ of tmcheck's gating FFN against max(1, 8lM/π)",
        wits,
    )
