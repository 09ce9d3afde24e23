"""Lemma 2 (Appendix F.2): the covering number of 𝒯(L_T, L_FFN, w, l, d_embd, m, R, κ), step by step.

Each inequality of the proof is an obligation. Counterexamples are exact (Fractions) wherever the
step is about explicit numbers, and come from `lipschitz.py` (tmcheck's float64 backend on members
of the class) for the statements about networks. Notation: d = d_embd, w = w_FFN, L = L_FFN.
The corrected chain is `theory.bounds.corrected_lipschitz`; the measured Lipschitz steps (float64 members of the
class) are in `proofs_check.lemma2_lipschitz`.
"""

from __future__ import annotations

import math
from fractions import Fraction as F
from itertools import pairwise

import numpy as np
import sympy as sp

from tmcheck.proofs_check.registry import Evidence, Kind, Witness, obligation
from tmcheck.theory import bounds
from tmcheck.theory.backends import run_blocks
from tmcheck.theory.network import Block, Head, Layer

FLOAT_SLACK = 1 + 1e-12  # exact measurements against float64 bounds of theory.bounds: one rounding of slack


def _m(v) -> np.ndarray:
    return np.array([[F(v)]], dtype=object)


def attention(Q, K, V, h) -> F:
    """One head, d_embd = l = 1, on tmcheck's exact backend: A(h) = σ(<Qh, Kh>) V h."""
    return run_blocks([Block((Head(_m(Q), _m(K), _m(V)),))], np.array([[[F(h)]]], dtype=object), "exact")[0, 0, 0] - h


def scalar_class(kappa, M, **kw) -> bounds.TransformerClass:
    base = dict(L_T=1, L_FFN=1, w=1, l=1, d_embd=1, m=1)
    return bounds.TransformerClass(**{**base, **kw}, kappa=float(kappa), M=float(M))


def _corr(kappa, M, **kw) -> bounds.BlockConstants:
    """theory.bounds' corrected per-block constants at input bound M."""
    return bounds.block_constants(scalar_class(kappa, M, **kw), math.log(float(M)))


KAPPAS = (F(1, 10), F(1, 2), F(1), F(2))


@obligation(
    "lemma2.attention_difference",
    "Appendix F.2, proof of Lemma 2: bound on ||A_1(H) − A_2(H)||∞",
    "||A_1(H) − A_2(H)||∞ <= 3 κ³ d_embd⁶ M³ l η for heads whose weights differ by at most η.",
    "exact",
    "theory.bounds uses 3 d⁴ κ² M³ l η (the proof's own steps, with |(K^TQ)_ab| <= dκ² and "
    "||(V_1 − V_2)h||∞ <= dηM); it holds for every κ > 0.",
    kind=Kind.STEP,
    satisfied={"kappas": (F(1, 2), F(1), F(3, 2), F(2))},
)
def attention_difference(kappas=KAPPAS, Ms=(F(1), F(2)), eta=F(1, 1000)) -> Evidence:
    pts = [(k, M) for k in kappas for M in Ms]
    at = [{"kappa": k, "M": M, "eta": eta} for k, M in pts]
    diff = [abs(attention(k, k, k, M) - attention(k, k - eta, k, M)) for k, M in pts]
    return Evidence(
        "d = l = 1, Q = K = V = κ, K' = κ − η, h = M (exact backend); corrected bound from "
        "theory.bounds.block_constants",
        [Witness(a, dv, 3 * k**3 * M**3 * eta, "<=") for a, dv, (k, M) in zip(at, diff, pts, strict=True)],
        [
            Witness(a, dv, math.exp(_corr(k, M).log_attn_diff) * float(eta) * FLOAT_SLACK, "<=")
            for a, dv, (k, M) in zip(at, diff, pts, strict=True)
        ],
        "||A_1(H) − A_2(H)||∞ <= 3 d_embd⁴ κ² M³ l η for all κ > 0 (the stated one follows when κ >= 1).",
        note="The proof writes ||V_1 − V_2||_1 <= d²κη and 2κ²d⁴M²η where the factors are η and κ: the stated bound "
        "needs κ >= 1/3 here.",
    )


@obligation(
    "lemma2.mha_output_bound",
    "Appendix F.2, proof of Lemma 2: bound on M' = ||H + MHA(H)||∞",
    "||H + MHA(H)||∞ <= M + m l d_embd⁶ κ³ M <= 2 d_embd⁶ κ³ m l M.",
    "exact",
    "theory.bounds: ||H + MHA(H)||∞ <= M + m l d⁴ κ³ M³ (attention is cubic in H), attained by the "
    "all-κ network at H = M.",
    kind=Kind.STEP,
    satisfied={"Ms": (F(1, 4), F(1, 3), F(1, 2), F(1))},
)
def mha_output_bound(Ms=(F(1, 2), F(1), F(2), F(3)), kappa=F(1)) -> Evidence:
    at = [{"M": M, "kappa": kappa} for M in Ms]
    measured = [M + attention(kappa, kappa, kappa, M) for M in Ms]
    return Evidence(
        "d = m = l = 1, Q = K = V = κ, H = M (exact backend); corrected bound from theory.bounds.block_constants",
        [Witness(a, v, M + kappa**3 * M, "<=") for a, v, M in zip(at, measured, Ms, strict=True)],
        [
            Witness(a, v, math.exp(_corr(kappa, M).log_M_Z) * FLOAT_SLACK, "<=")
            for a, v, M in zip(at, measured, Ms, strict=True)
        ],
        "||H + MHA(H)||∞ <= M + m l d⁴ κ³ M³ (tight).",
        note="Each head is a product of three factors linear in H, so its output scales as M³; the proof drops M². "
        "The hidden-state bound then grows like a tower M^{3^L_T} through the blocks.",
    )


def ffn_all_kappa(dims: list[int], kappa: F, x: F) -> F:
    """Output entry of the FFN with every weight and bias κ on the input x·1, on tmcheck's exact backend."""
    layers = tuple(
        Layer(np.full((dims[i + 1], dims[i]), F(kappa), dtype=object), np.full(dims[i + 1], F(kappa), dtype=object))
        for i in range(len(dims) - 1)
    )
    H = np.full((1, dims[0], 1), F(x), dtype=object)
    return run_blocks([Block((), layers)], H, "exact")[0, 0, 0] - x  # B(H) = FFN(H) + H


def ffn_output_paper(kappa: F, d: int, L: int, M: F) -> F:
    """(κ d²)^{L−1} M + κ (κ d²)^{L−2}, as written (negative powers for L = 1)."""
    return (kappa * d * d) ** (L - 1) * M + kappa * (kappa * d * d) ** (L - 2)


@obligation(
    "lemma2.ffn_output_bound",
    "Appendix F.2, proof of Lemma 2: bound on ||FFN(H')||∞",
    "For ||H'||∞ <= M: ||FFN(H')||∞ <= (κ d_embd²)^{L_FFN−1} M + κ (κ d_embd²)^{L_FFN−2}.",
    "exact",
    "theory.bounds iterates y <- fan_in·κ·y + κ over the L_FFN layers (one factor per layer).",
    kind=Kind.STEP,
    satisfied={"kappas": (F(1, 100), F(1, 20), F(1, 10))},
)
def ffn_output_bound(kappas=(F(1, 100), F(1, 2), F(1)), Ls=(1, 2), d=5, M=F(1)) -> Evidence:
    pts = [(k, L) for k in kappas for L in Ls]
    at = [{"kappa": k, "L_FFN": L, "d_embd": d, "w": d, "M": M} for k, L in pts]
    got = [ffn_all_kappa([d] * (L + 1), k, M) for k, L in pts]
    corr = [
        math.exp(bounds.log_ffn_output_bound(scalar_class(k, M, L_FFN=L, w=d, d_embd=d), math.log(float(M))))
        * FLOAT_SLACK
        for k, L in pts
    ]
    return Evidence(
        f"every weight and bias κ, d = w = {d}, input all M = {M} (exact backend); corrected bound "
        "theory.bounds.log_ffn_output_bound",
        [Witness(a, g, ffn_output_paper(k, d, L, M), "<=") for a, g, (k, L) in zip(at, got, pts, strict=True)],
        [Witness(a, g, c, "<=") for a, g, c in zip(at, got, corr, strict=True)],
        "||FFN(z)||∞ <= y_L with y_0 = ||z||∞, y_i = n_i κ y_{i−1} + κ (n_i the fan-in of layer i).",
        note="An L-layer FFN multiplies by up to (fan-in·κ) L times; the stated bound has L − 1 factors.",
    )


@obligation(
    "lemma2.ffn_lipschitz",
    "Appendix F.2, proof of Lemma 2: Lipschitz constant of FFN_1",
    "||FFN(H) − FFN(H')||∞ <= Π ||W_i||_1 ||H − H'||∞ <= w_FFN^{2 L_FFN} κ^{L_FFN} ||H − H'||∞.",
    "exact",
    "theory.bounds uses Π_i n_i κ (n_i the fan-in), which is <= the stated one only when w_FFN >= d_embd.",
    kind=Kind.STEP,
    satisfied={"sizes": ((5, 5), (6, 5), (7, 3))},
)
def ffn_lipschitz(sizes=((1, 5), (2, 5), (5, 5)), kappa=F(1), delta=F(1, 7)) -> Evidence:
    """Per (w, d_embd): W_1 = κ·1 (w x d), W_2 = κ·1 (d x w), h = 0, h' = δ·1: how far the output moves."""
    wits, corr = [], []
    for w, d in sizes:
        layers = (
            Layer(np.full((w, d), kappa, dtype=object), np.zeros(w, dtype=object)),
            Layer(np.full((d, w), kappa, dtype=object), np.zeros(d, dtype=object)),
        )
        H = np.full((1, d, 1), delta, dtype=object)
        moved = run_blocks([Block((), layers)], H, "exact")[0, 0, 0] - delta  # FFN(h') − FFN(0), FFN(0) = 0
        a = {"w": w, "d_embd": d, "L_FFN": 2, "kappa": kappa, "delta": delta}
        wits.append(Witness(a, moved, F(w) ** 4 * kappa**2 * delta, "<="))
        lip = math.exp(_corr(kappa, 1, L_FFN=2, w=w, d_embd=d).log_ffn_lip)
        corr.append(Witness(a, moved, lip * float(delta) * FLOAT_SLACK, "<="))
    return Evidence(
        f"(w, d_embd) in {list(sizes)}, all-κ weights, h = 0, h' = δ·1 (exact backend); corrected "
        "theory.bounds' Π n_i κ",
        wits,
        corr,
        "Lip(FFN) <= Π_i n_i κ <= max(w, d_embd)^{2 L_FFN} κ^{L_FFN}.",
        note="||W_1||_1 = w·d·κ, not w²κ.",
    )


@obligation(
    "lemma2.ffn_perturbation",
    "Appendix F.2, proof of Lemma 2: ||f_1(H) − f_2(H)||∞ for FFNs with weights η apart",
    "||f_1(H) − f_2(H)||∞ <= L_FFN (w_FFN M' + 2)(κ w_FFN)^{L_FFN−1} η for ||H||∞ <= M'.",
    "exact",
    "theory.bounds: δ_i <= n_i κ δ_{i−1} + n_i η y_{i−1} + η, which has a term η per layer however small κ is.",
    kind=Kind.STEP,
    satisfied={"kappas": (F(1, 5), F(1, 2), F(1))},
)
def ffn_perturbation(kappas=(F(1, 100), F(1, 10), F(1)), eta=F(1, 100)) -> Evidence:
    """d_embd = w = 1, L_FFN = 2: f_1 has weights κ and biases 0, f_2 equals f_1 except its last bias η; H = 1."""
    wits, corr = [], []
    for k in kappas:

        def out(b, k=k):
            layers = (Layer(_m(k), np.array([F(0)], dtype=object)), Layer(_m(k), np.array([F(b)], dtype=object)))
            return run_blocks([Block((), layers)], np.array([[[F(1)]]], dtype=object), "exact")[0, 0, 0]

        diff = abs(out(eta) - out(0))
        a = {"kappa": k, "eta": eta, "M_prime": 1}
        wits.append(Witness(a, diff, 2 * (1 * 1 + 2) * k * eta, "<="))
        pert = math.exp(bounds.log_ffn_perturbation(scalar_class(k, 1, L_FFN=2), 0.0))
        corr.append(Witness(a, diff, pert * float(eta) * FLOAT_SLACK, "<="))
    return Evidence(
        "d_embd = w = 1, L_FFN = 2, M' = 1, f_2 = f_1 with last bias η (exact backend); corrected "
        "theory.bounds.log_ffn_perturbation",
        wits,
        corr,
        "δ_L with δ_0 = 0, δ_i = n_i κ δ_{i−1} + n_i η y_{i−1} + η (y_i the output bound of layer i).",
        note="The bias of the last layer enters with factor 1, not (κw)^{L−1}: the stated bound needs κ w >= 1/6 here.",
    )


def scalar_block(Q, K, V, W, b) -> Block:
    """A block of the scalar class (d_embd = m = l = L_FFN = 1): one head (Q, K, V) and a one-layer FFN (W, b)."""
    return Block((Head(_m(Q), _m(K), _m(V)),), (Layer(_m(W), np.array([F(b)], dtype=object)),))


def block_perturbation(kappa: F, eta: F, M: F = F(1)) -> F:
    """|B_1(H) − B_2(H)| at H = M for the all-κ scalar block B_1 and B_2 with every weight κ + η, on tmcheck's
    exact backend."""
    H = np.array([[[F(M)]]], dtype=object)
    k2 = kappa + eta
    one = run_blocks([scalar_block(kappa, kappa, kappa, kappa, kappa)], H, "exact")[0, 0, 0]
    two = run_blocks([scalar_block(k2, k2, k2, k2, k2)], H, "exact")[0, 0, 0]
    return abs(one - two)


@obligation(
    "lemma2.block_perturbation_sum",
    "Appendix F.2, proof of Lemma 2: combining the three terms of ||B_1(H) − B_2(H)||∞",
    "3κ³d⁶M³mlη + 3κ^{3+L}w^{2L}d⁶M³mlη + L(wM'+2)(κw)^{L−1}η <= (4κ^{3+L}w^{2L}d⁶M³ml + L(wM'+2)(κw)^{L−1})η.",
    "exact",
    "theory.bounds adds the terms: (1 + Lip(FFN))·m·attention difference + FFN perturbation.",
    kind=Kind.STEP,
    satisfied={"points": ((F(3), 1), (F(1), 2), (F(1), 3), (F(2), 2))},
)
def block_perturbation_sum(points=((F(1), 1), (F(1, 2), 1), (F(1), 2), (F(2), 1)), eta=F(1, 1000)) -> Evidence:
    """Per (κ, w), d = M = m = l = L = 1. Written: the two sides of the step, per η (the common last term dropped).
    Corrected: the perturbation of tmcheck's scalar block with all weights κ (`block_perturbation`, exact backend)
    against theory.bounds.block_constants' perturbation bound (which counts the residual's 1 + Lip(FFN))."""
    wits, corr = [], []
    for k, w in points:
        X = 3 * k**3
        a = {"kappa": k, "w": w, "L_FFN": 1, "d_embd": 1, "M": 1, "m": 1, "l": 1}
        wits.append(Witness(a, X + 3 * k**4 * w**2, 4 * k**4 * w**2, "<="))
        bound = math.exp(_corr(k + eta, 1, w=w).log_block_pert) * float(eta) * FLOAT_SLACK
        corr.append(Witness(a, block_perturbation(k, eta), bound, "<="))
    return Evidence(
        "κ, w over " + str([(str(k), w) for k, w in points]) + ", d = M = m = l = L_FFN = 1; corrected: the scalar "
        f"block with weights κ against κ + η, η = {eta} (exact backend), against theory.bounds' perturbation bound",
        wits,
        corr,
        "||B_1(H) − B_2(H)||∞ <= [(1 + Lip(FFN)) m · 3 d⁴ κ² M³ l + FFN perturbation at M_Z] η (theory.bounds."
        "block_constants); the step's factor 4 becomes 6 when κ^L w^{2L} >= 1.",
        note="3a + 3ab <= 4ab needs b = κ^L w^(2L) >= 3.",
    )


def block_output_terms(d: int, w: int, k: F, L: int, m: int, l: int, M: F) -> tuple[F, F]:
    """LHS and RHS of the last inequality bounding ||B(H)||∞ in F.2."""
    X = 2 * d**6 * k**3 * m * l * M
    Y = (k * w * w) ** (L - 1)
    lhs = X + Y * X + k * (k * w * w) ** (L - 2)
    rhs = 4 * d**4 * w ** (2 * L) * k ** (L + 1) * m * l * M
    return lhs, rhs


def block_output(d: int, kappa: F, L: int, M: F = F(1)) -> F:
    """||B(H)||∞ for tmcheck's block with every weight and bias κ (one head, d_embd = w = d, L FFN layers) at
    H = M·1, on the exact backend: the member of the class that attains the output bound."""
    full = np.full((d, d), F(kappa), dtype=object)
    layers = tuple(Layer(np.full((d, d), F(kappa), dtype=object), np.full(d, F(kappa), dtype=object)) for _ in range(L))
    H = np.full((1, d, 1), F(M), dtype=object)
    return max(abs(v) for v in run_blocks([Block((Head(full, full, full),), layers)], H, "exact").reshape(-1))


@obligation(
    "lemma2.block_output_bound",
    "Appendix F.2, proof of Lemma 2: bound on ||B(H)||∞",
    "2d⁶κ³mlM + (κw²)^{L−1} 2d⁶κ³mlM + κ(κw²)^{L−2} <= 4 d⁴ w^{2L} κ^{L+1} m l M, and iterating, "
    "||B_{L_T−1}∘…∘B_1(H)||∞ <= (4 d⁴ w^{2L} κ^{L+1} m l)^{L_T−1} M.",
    "exact",
    "theory.bounds.block_constants: M_{k+1} = M_Z + FFN output bound at M_Z, M_Z = M_k + m l d⁴ κ³ M_k³.",
    kind=Kind.STEP,
    satisfied={"kappas": (F(1, 100), F(1, 20), F(1, 10)), "ds": (5, 6)},
)
def block_output_bound(kappas=(F(1, 10), F(1), F(10)), ds=(1, 5), L=2) -> Evidence:
    """Written: the two sides of the step. Corrected: ||B(H)||∞ of tmcheck's all-κ block (`block_output`, exact
    backend) against theory.bounds.block_constants' M_out."""
    pts = [(k, d) for k in kappas for d in ds]
    at = [{"kappa": k, "d_embd": d, "w": d, "L_FFN": L} for k, d in pts]
    bound = [
        math.exp(bounds.block_constants(scalar_class(k, 1, L_FFN=L, w=d, d_embd=d), 0.0).log_M_out) * FLOAT_SLACK
        for k, d in pts
    ]
    return Evidence(
        f"κ in {[str(k) for k in kappas]}, d = w in {list(ds)}, L_FFN = {L}, m = l = M = 1: the two sides of the step; "
        "corrected: the all-κ block (exact backend) against theory.bounds",
        [Witness(a, *block_output_terms(d, d, k, L, 1, 1, F(1)), "<=") for a, (k, d) in zip(at, pts, strict=True)],
        [Witness(a, block_output(d, k, L), b, "<=") for a, b, (k, d) in zip(at, bound, pts, strict=True)],
        "||B(H)||∞ <= M_Z + y_L(M_Z), M_Z = M + m l d⁴ κ³ M³, y_L the FFN output bound "
        "(theory.bounds.block_constants).",
        note="The step turns d⁶ into d⁴ and κ^(L+2) into κ^(L+1); its left side already uses the wrong M' "
        "(lemma2.mha_output_bound) and FFN bound (lemma2.ffn_output_bound), and the iteration treats a cubic "
        "recursion as linear. theory.bounds.block_constants recomputes M_{k+1} = M_Z + y_L(M_Z) per block instead of "
        "this step.",
    )


def block_lipschitz_paper(w: int, k: F, L: int, d: int, M: F, m: int, l: int) -> F:
    return 8 * w ** (2 * L) * k**L * d**6 * k**3 * M**2 * m * l


@obligation(
    "lemma2.block_lipschitz",
    "Appendix F.2, proof of Lemma 2: Lipschitz constant of a block B in H",
    "||B(H) − B(H')||∞ <= 8 w^{2L} κ^L d⁶ κ³ M² m l ||H − H'||∞ (first line: B(H) − B(H') = "
    "ΔFFN + ΔMHA, the residual H − H' omitted).",
    "exact",
    "theory.bounds: Lip(B) <= (1 + Lip(FFN))(1 + Lip(MHA)), Lip(MHA) <= 3 m l d⁴ κ³ M²; the 1 is the residual.",
    kind=Kind.STEP,
    satisfied={"kappas": (F(1, 10), F(1, 2), F(1))},
)
def block_lipschitz(kappas=(F(1, 1000), F(1, 10), F(1)), w=5, d=5, L=2) -> Evidence:
    """The block with all weights 0 (in the class for every κ) is the identity: its Lipschitz constant is measured."""
    z = np.zeros((d, d), dtype=object)
    z[:] = F(0)
    blk = Block(
        (Head(z, z, z),),
        (
            Layer(np.full((w, d), F(0), dtype=object), np.full(w, F(0), dtype=object)),
            Layer(np.full((d, w), F(0), dtype=object), np.full(d, F(0), dtype=object)),
        ),
    )
    H = np.full((1, d, 1), F(1, 2), dtype=object)
    Hp = np.full((1, d, 1), F(1, 3), dtype=object)
    lip = abs(run_blocks([blk], H, "exact") - run_blocks([blk], Hp, "exact")).max() / F(1, 6)
    at = [{"kappa": k, "w": w, "d_embd": d, "L_FFN": L, "m": 1, "l": 1, "M": 1, "weights": "all zero"} for k in kappas]
    corr = [math.exp(_corr(k, 1, L_FFN=L, w=w, d_embd=d).log_block_lip) * FLOAT_SLACK for k in kappas]
    return Evidence(
        f"κ in {[str(k) for k in kappas]}, the all-zero block of d = w = {d}, L_FFN = {L}, m = l = M = 1 "
        "(exact backend)",
        [Witness(a, lip, block_lipschitz_paper(w, k, L, d, F(1), 1, 1), "<=") for a, k in zip(at, kappas, strict=True)],
        [Witness(a, lip, c, "<=") for a, c in zip(at, corr, strict=True)],
        "Lip(B) <= (1 + Π n_i κ)(1 + 3 m l d⁴ κ³ M²).",
        note="B(H) = FFN(MHA(H) + H) + MHA(H) + H contains H itself, so Lip(B) >= 1 whenever the weights are small.",
    )


def m_exponent(log_CT, L_T: int) -> float:
    """d log C_T / d log m of a log C_T function of the class (theory.bounds), at m = 10^12 (L_FFN = 1, d = w = l =
    κ = M = 1): the power of m it grows like (to about 10^-12 there)."""
    big, bigger = 10**12, 2 * 10**12

    def at(m):
        return log_CT(bounds.TransformerClass(L_T=L_T, L_FFN=1, w=1, l=1, d_embd=1, m=m, kappa=1.0, M=1.0))

    return (at(bigger) - at(big)) / math.log(2)


def corrected_log_CT(c) -> float:
    return bounds.corrected_lipschitz(c).log_CT


@obligation(
    "lemma2.composition_exponents",
    "Appendix F.2, proof of Lemma 2: second term of the multi-block difference",
    "4κ^{3+L}d^{6+2L}((4d^{2L+4}κ^{L+1}ml)^{L_T−1}M)³ml + … <= 4^{3L_T−2} L d^{…} κ^{…} M³ m^{L_T} l^{L_T} η.",
    "symbolic",
    "theory.bounds composes the per-block constants numerically in log space; no exponent bookkeeping.",
    kind=Kind.STEP,
    satisfied={"bound": "tmcheck"},
)
def composition_exponents(L_Ts=(1, 2, 3, 4), bound: str = "paper") -> Evidence:
    """Per L_T: the exponent of m in the first term (symbolic) against the claimed m^L_T (a bound must dominate its
    summands); bound="tmcheck": against the power of m in theory.bounds.corrected_lipschitz's C_T instead.
    Corrected: the power of m in tmcheck's corrected C_T (theory.bounds) dominates the term."""
    m, LT, LF, d, k, l, M = sp.symbols("m L_T L_FFN d kappa l M", positive=True)
    first = (
        4
        * k ** (3 + LF)
        * d ** (6 + 2 * LF)
        * ((4 * d ** (2 * LF + 4) * k ** (LF + 1) * m * l) ** (LT - 1) * M) ** 3
        * m
        * l
    )
    exp_m = sp.simplify(m * sp.diff(sp.expand_log(sp.log(first), force=True), m))  # d log(term)/d log m
    ours = {t: m_exponent(corrected_log_CT, t) for t in L_Ts}
    claimed = {t: (ours[t] * (1 + 1e-6) if bound == "tmcheck" else t) for t in L_Ts}
    return Evidence(
        f"L_T in {list(L_Ts)}: the exponent of m in the first term against the claimed m^L_T (a bound must "
        "dominate its summands); corrected: against the power of m in theory.bounds' corrected C_T",
        [Witness({"L_T": t}, int(exp_m.subs(LT, t)), claimed[t], "<=") for t in L_Ts],
        [Witness({"L_T": t}, int(exp_m.subs(LT, t)), ours[t] * (1 + 1e-6), "<=") for t in L_Ts],
        "the corrected C_T (theory.bounds.corrected_lipschitz, hidden states growing like M^(3^L_T)) grows in m at "
        "least like every summand of the multi-block difference.",
        note=f"The first term has m to the power {exp_m}; l likewise. theory.bounds' C_T grows like m^"
        + ", m^".join(f"{v:.3g}" for v in ours.values())
        + ".",
    )


def induction_log(c) -> float:
    """log of (2^{7L_T} L_FFN M³ d^{18L_T} w^{18L_T L} κ^{6L_T L} m^{L_T} l^{L_T})^{L_T}: what the induction gives."""
    LT, L = c.L_T, c.L_FFN
    one = (
        7 * LT * math.log(2)
        + math.log(L)
        + 3 * math.log(c.M)
        + 18 * LT * math.log(c.d_embd)
        + 18 * LT * L * math.log(c.w)
        + 6 * LT * L * math.log(c.kappa)
        + LT * (math.log(c.m) + math.log(c.l))
    )
    return LT * one


@obligation(
    "lemma2.induction_power",
    "Appendix F.2, proof of Lemma 2: closing the induction and the final C_T",
    "(2^{7L_T} L_FFN M³ d^{18L_T} w^{18L_T L} κ^{6L_T L} m^{L_T} l^{L_T})^{L_T} η <= 2^{7L_T²} L_FFN M^{3L_T} …, "
    "and then C_T = 2^{L_T²+1} L_FFN M^{3L_T} d_embd^{18L_T² L_FFN} κ^{6L_T² L_FFN} m^{L_T²} l^{L_T²}.",
    "exact",
    "theory.bounds.corrected_lipschitz: C_T = Σ_k π_k Π_{j>k} Lip_j from the recursion δ_k <= Lip_k δ_{k−1} + π_k η.",
    kind=Kind.STEP,
    satisfied={"final": "induction"},
)
def induction_power(points=((2, 2), (2, 1), (3, 2)), final: str = "statement") -> Evidence:
    """Per (L_T, L_FFN), d = w = 2, κ = M = 1, m = l = 2: the log of what the induction gives against the log of
    the stated C_T (theory.bounds.log_CT_statement, what `tmcheck bound covering` prints as written); the C_T
    must not be smaller. final="induction": against the induction's own product (its own closing)."""
    wits = []
    for LT, LF in points:
        c = bounds.TransformerClass(L_T=LT, L_FFN=LF, w=2, l=2, d_embd=2, m=2, kappa=1.0, M=1.0)
        rhs = induction_log(c) if final == "induction" else bounds.log_CT_statement(c)
        wits.append(Witness({"L_T": LT, "L_FFN": LF}, induction_log(c), rhs * (1 + 1e-12), "<="))
    return Evidence(
        f"(L_T, L_FFN) in {list(points)}, d = w = m = l = 2, κ = M = 1: log of the induction's product against log C_T "
        "as stated (theory.bounds)",
        wits,
        note="L_FFN^L_T becomes L_FFN, 2^(7L_T²) becomes 2^(L_T²+1), d^(18L_T) w^(18L_T L) becomes d^(18L_T² L_FFN) "
        "with w dropped. theory.bounds.corrected_lipschitz computes C_T from the recursion instead.",
    )


@obligation(
    "lemma2.statement_vs_proof",
    "Lemma 2 (statement, Appendix F.1) vs the end of its proof (Appendix F.2)",
    "N(δ) <= (C_T κ / δ)^P = (2^{L_T²+1} L_FFN M^{3L_T} d^{18L_T²} w^{18L_T²L_FFN} κ^{6L_T²L_FFN} m^{L_T²} "
    "l^{L_T²} / δ)^P.",
    "exact",
    "theory.bounds.log_covering_as_written uses the statement; log_CT_proof keeps the proof's last line.",
    kind=Kind.STEP,
    satisfied={"w": 4},
)
def statement_vs_proof(kappas=(1.0, 10.0), ds=(1, 5), w: int = 1) -> Evidence:
    """The proof's log(C_T κ) against the statement's log base: the statement may not claim less than the proof shows
    (with w >= d the statement's w^{18L_T²L_FFN} covers the proof's d^{18L_T²L_FFN})."""
    wits = []
    for k in kappas:
        for d in ds:
            c = bounds.TransformerClass(L_T=2, L_FFN=2, w=w, l=8, d_embd=d, m=4, kappa=k, M=1.0)
            wits.append(
                Witness(
                    {"kappa": k, "d_embd": d, "L_T": 2, "L_FFN": 2, "w": w, "l": 8, "m": 4, "M": 1},
                    bounds.log_CT_proof(c) + math.log(c.kappa),
                    bounds.log_CT_statement(c) * (1 + 1e-12),
                    "<=",
                )
            )
    return Evidence(
        f"κ in {list(kappas)}, d_embd in {list(ds)}, L_T = L_FFN = 2, w = {w}, l = 8, m = 4, M = 1 (theory.bounds)",
        wits,
        note="The last equality replaces C_T κ by C_T (κ^(6L_T²L_FFN+1) becomes κ^(6L_T²L_FFN)), d^(18L_T²L_FFN) by "
        "d^(18L_T²) and adds w^(18L_T²L_FFN). theory.bounds.log_covering_corrected uses P log(κ C_T/δ + 1) "
        "with the corrected C_T.",
    )


def embedded_norm(x: F) -> F:
    """||PE + E(x)||∞ of tmcheck's Lemma 1 network for d = 1 (`lemma1_network`: U selects x into token 0, PE holds
    the interaction vectors and the constant 1), embedded by tmcheck's exact backend."""
    from tmcheck.theory.backends import ExactBackend, embedding
    from tmcheck.theory.lemmas.lemma1 import lemma1_network, lemma1_plan
    from tmcheck.theory.targets import parse_target

    net = lemma1_network(lemma1_plan(parse_target("x0", 1), 1.0, 1.0, 0.5, N=2), "exact")
    H = ExactBackend().output(embedding(net, [[x]], ExactBackend()))
    return max(abs(v) for v in H.reshape(-1))


@obligation(
    "lemma2.embedding_bound",
    "Appendix F.2, proof of Lemma 2: the encoding layer",
    "||PE + E(x)||∞ = ||x||∞ + 1 <= M + 1; the following line continues with M.",
    "exact",
    "theory.bounds.input_bound: ||PE + E(x)||∞ <= max(M, 1) for E = e_1(Ux)^T, U a 0/1 selection, PE entries "
    "in [0, 1].",
    kind=Kind.STEP,
    satisfied={"relation": "<="},
)
def embedding_bound(xs=(F(1, 2), F(0), F(2), F(-3, 2)), relation: str = "==") -> Evidence:
    """||PE + E(x)||∞ of tmcheck's embedding (`embedded_norm`) against ||x||∞ + 1 (as written: equal; relation="<=":
    the first line read as an inequality, which holds) and, corrected, against theory.bounds.input_bound."""
    at = [{"x": x, "M": abs(x)} for x in xs]
    norms = [embedded_norm(x) for x in xs]
    M0 = [
        bounds.input_bound(
            bounds.TransformerClass(L_T=1, L_FFN=1, w=1, l=1, d_embd=5, m=1, kappa=1.0, M=float(abs(x)) or 1.0)
        )
        for x in xs
    ]
    return Evidence(
        f"x in {[str(x) for x in xs]}, M = |x|, the embedding of tmcheck's Lemma 1 network (d = 1)",
        [Witness(a, n, abs(x) + 1, relation) for a, n, x in zip(at, norms, xs, strict=True)],
        [Witness(a, n, m0, "<=") for a, n, m0 in zip(at, norms, M0, strict=True)],
        "||PE + E(x)||∞ <= max(M, 1), and M_0 = max(M, 1) replaces M from there on.",
        note="The next line's bound (…)^L_T·M then uses M where max(M, 1) is needed.",
    )


# why kept: an obligation is declared as data (id, place, claim, method, note, kind): alike in shape, each its own claim
@obligation(
    "lemma2.parameter_count",
    "Appendix F.2, proof of Lemma 2: the number of parameters",
    "|θ| = d + dD + L_T(3d²m + L_FFN w²) <= 4 d² w² D (m + L_FFN) L_T.",
    "exact",
    "theory.bounds.n_params counts L_T(3d²m + Σ_layers (fan_in + 1)·fan_out) (E and PE fixed).",
    kind=Kind.STEP,
    satisfied={"middle_line": bounds.n_params},
)
def parameter_count(sizes=((1, 2, 5, 5, 1), (2, 3, 4, 2, 2), (1, 1, 1, 1, 1)), middle_line=None) -> Evidence:
    """Per (L_T, L_FFN, w, d, m): the middle line's count against the true count; corrected: the true count against
    the final bound."""
    wits, corr = [], []
    for LT, LF, w, d, m in sizes:
        c = bounds.TransformerClass(L_T=LT, L_FFN=LF, w=w, l=1, d_embd=d, m=m, kappa=1.0, M=1.0)
        a = {"L_T": LT, "L_FFN": LF, "w": w, "d_embd": d, "m": m}
        true = bounds.n_params(c)
        middle = middle_line(c) if middle_line else bounds.n_params_paper_equality(c) - c.d_embd - c.d_embd * c.D
        wits.append(Witness(a, middle, true, "=="))
        corr.append(Witness(a, true, bounds.n_params_paper(c), "<="))
    return Evidence(
        f"(L_T, L_FFN, w, d, m) in {list(sizes)} (theory.bounds.n_params)",
        wits,
        corr,
        "|θ| = L_T(3d²m + Σ_layers (fan_in+1)·fan_out) <= 4d²w²D(m + L_FFN)L_T.",
        note="The middle line counts no biases, and W_1, W_L are w×d and d×w, not w×w.",
    )


def weight_grid(kappa: F, eta: F) -> list[F]:
    """The fewest points with every t in [−κ, κ] within η of one: −κ + η, −κ + 3η, ... (each covers an interval of
    length 2η), checked to cover."""
    n = math.ceil(kappa / eta)
    pts = [-kappa + (2 * j + 1) * eta for j in range(n)]
    if not (pts[0] - eta <= -kappa and pts[-1] + eta >= kappa and all(b - a <= 2 * eta for a, b in pairwise(pts))):
        raise AssertionError("the grid does not cover [−κ, κ]")
    return pts


def covering_per_weight(kappa: F, eta: F) -> float:
    """Grid points per weight in theory.bounds' corrected covering number at δ = η C_T: exp(log N(δ) / P)."""
    c = bounds.TransformerClass(L_T=1, L_FFN=1, w=1, l=1, d_embd=1, m=1, kappa=float(kappa), M=1.0)
    delta = float(eta) * math.exp(bounds.corrected_lipschitz(c).log_CT)
    return math.exp(bounds.log_covering_corrected(c, delta) / bounds.n_params(c))


@obligation(
    "lemma2.grid_count",
    "Appendix F.2, proof of Lemma 2: the grid of weights",
    "The number of grid steps per parameter is 2κ/η, so N(T, δ, ||·||∞) <= (κ/η)^{|θ|}.",
    "exact",
    "theory.bounds.log_covering_corrected: (κ/η + 1)^P >= ceil(κ/η)^P grid points.",
    kind=Kind.STEP,
    satisfied={"points": ((F(1), F(1, 5)), (F(1), F(1, 4)), (F(2), F(1, 2)), (F(3), F(1, 3)))},
)
def grid_count(points=((F(1), F(2, 5)), (F(1), F(3, 10)), (F(2), F(1, 2)))) -> Evidence:
    """The points a grid needs to cover [−κ, κ] within η (`weight_grid`, built and checked) against κ/η (as
    written) and, corrected, against the points per weight that theory.bounds' covering number counts."""
    at = [{"kappa": k, "eta": e} for k, e in points]
    need = [len(weight_grid(k, e)) for k, e in points]
    return Evidence(
        f"(κ, η) in {[(str(k), str(e)) for k, e in points]}: points needed to cover [−κ, κ] within η, against κ/η",
        [Witness(a, n, k / e, "<=") for a, n, (k, e) in zip(at, need, points, strict=True)],
        [
            Witness(a, n, covering_per_weight(k, e) * (1 + 1e-9), "<=")
            for a, n, (k, e) in zip(at, need, points, strict=True)
        ],
        "N <= ceil(κ/η)^P <= (κ/η + 1)^P, the count theory.bounds.log_covering_corrected uses.",
        note="The proof's own grid of step η has 2κ/η + 1 points, not κ/η.",
    )
