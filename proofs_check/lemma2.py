"""Lemma 2 (Appendix F.2): the covering number of 𝒯(L_T, L_FFN, w, l, d_embd, m, R, κ), step by step.

Each inequality of the proof is an obligation. Counterexamples are exact (Fractions) wherever the
step is about explicit numbers, and come from `lipschitz.py` (tmcheck's float64 backend on members
of the class) for the statements about networks. Notation: d = d_embd, w = w_FFN, L = L_FFN.
The corrected chain is `theory.bounds.corrected_lipschitz`.
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import sympy as sp

from tmcheck.proofs_check import lipschitz
from tmcheck.proofs_check.registry import Result, Verdict, obligation
from tmcheck.theory import bounds


def relu(v):
    return max(v, 0)


def scalar_attention(Q, K, V, h):
    """One head, d_embd = 1, l = 1: A(h) = σ(<Qh, Kh>) V h."""
    return relu(Q * h * K * h) * V * h


def attention_example(kappa: F, eta: F, M: F) -> tuple[F, F, F]:
    """(measured difference, paper's 3κ³d⁶M³lη, corrected 3κ²d⁴M³lη) for d = l = 1, K perturbed by η."""
    diff = abs(scalar_attention(kappa, kappa, kappa, M) - scalar_attention(kappa, kappa - eta, kappa, M))
    return diff, 3 * kappa**3 * M**3 * eta, 3 * kappa**2 * M**3 * eta


@obligation(
    "lemma2.attention_difference",
    "Appendix F.2, proof of Lemma 2: bound on ||A_1(H) − A_2(H)||∞",
    "||A_1(H) − A_2(H)||∞ <= 3 κ³ d_embd⁶ M³ l η for heads whose weights differ by at most η.",
    "exact",
    "theory.bounds uses 3 d⁴ κ² M³ l η (the proof's own steps, with |(K^TQ)_ab| <= dκ² and "
    "||(V_1 − V_2)h||∞ <= dηM); it holds for every κ > 0.",
)
def attention_difference() -> Result:
    k, eta, M = F(1, 10), F(1, 1000), F(1)
    diff, paper, corr = attention_example(k, eta, M)
    return Result(
        Verdict.CORRECTED,
        f"d = l = 1, Q = K = V = κ = 1/10, K' = κ − η, η = 1/1000, h = M = 1: the difference is κ²η = {diff}, "
        f"above the stated {paper} (ratio {float(diff / paper):.3g}). The proof writes ||V_1 − V_2||_1 <= d²κη "
        "and 2κ²d⁴M²η where the factors are η and κ: the stated bound needs κ >= 1.",
        counterexample={"kappa": "1/10", "eta": "1/1000", "M": "1", "d_embd": 1, "l": 1, "difference": str(diff), "stated_bound": str(paper)},
        corrected="||A_1(H) − A_2(H)||∞ <= 3 d_embd⁴ κ² M³ l η for all κ > 0 (the stated one follows when κ >= 1).",
        data={"difference": diff, "stated": paper, "corrected": corr},
    )


def mha_output_example(M: F, kappa: F = F(1)) -> tuple[F, F, F]:
    """(||H + MHA(H)||∞, paper's M + m l d⁶ κ³ M, corrected M + m l d⁴ κ³ M³) with d = m = l = 1."""
    measured = M + scalar_attention(kappa, kappa, kappa, M)
    return measured, M + kappa**3 * M, M + kappa**3 * M**3


@obligation(
    "lemma2.mha_output_bound",
    "Appendix F.2, proof of Lemma 2: bound on M' = ||H + MHA(H)||∞",
    "||H + MHA(H)||∞ <= M + m l d_embd⁶ κ³ M <= 2 d_embd⁶ κ³ m l M.",
    "exact",
    "theory.bounds: ||H + MHA(H)||∞ <= M + m l d⁴ κ³ M³ (attention is cubic in H), attained by the "
    "all-κ network at H = M.",
)
def mha_output_bound() -> Result:
    measured, paper, corr = mha_output_example(F(2))
    return Result(
        Verdict.FAILS,
        f"d = m = l = 1, Q = K = V = 1, H = M = 2: H + A(H) = 2 + σ(4)·2 = {measured} > {paper}. Each head is "
        "a product of three factors linear in H, so its output scales as M³; the proof drops M². The "
        "hidden-state bound then obeys M_{k+1} >= m l d⁴ κ³ M_k³, a tower M^{3^L_T} (not M^{3L_T}) "
        "through the blocks, so every later step inherits the error.",
        counterexample={"d_embd": 1, "m": 1, "l": 1, "kappa": "1", "M": "2", "measured": str(measured), "stated_bound": str(paper)},
        corrected="||H + MHA(H)||∞ <= M + m l d⁴ κ³ M³ (tight).",
        data={"measured": measured, "stated": paper, "corrected": corr},
    )


def ffn_all_kappa(dims: list[int], kappa: F, x: F) -> F:
    """Output entry of the FFN with every weight and bias κ on the input x·1 (all entries equal)."""
    y = x
    for i in range(len(dims) - 1):
        y = dims[i] * kappa * y + kappa
        if i < len(dims) - 2:
            y = relu(y)
    return y


def ffn_output_paper(kappa: F, d: int, L: int, M: F) -> F:
    """(κ d²)^{L−1} M + κ (κ d²)^{L−2}, as written (negative powers for L = 1)."""
    return (kappa * d * d) ** (L - 1) * M + kappa * (kappa * d * d) ** (L - 2)


@obligation(
    "lemma2.ffn_output_bound",
    "Appendix F.2, proof of Lemma 2: bound on ||FFN(H')||∞",
    "For ||H'||∞ <= M: ||FFN(H')||∞ <= (κ d_embd²)^{L_FFN−1} M + κ (κ d_embd²)^{L_FFN−2}.",
    "exact",
    "theory.bounds iterates y <- fan_in·κ·y + κ over the L_FFN layers (one factor per layer).",
)
def ffn_output_bound() -> Result:
    rows = []
    for L in (1, 2):
        dims = [5, 5] if L == 1 else [5, 5, 5]
        rows.append((L, ffn_all_kappa(dims, F(1), F(1)), ffn_output_paper(F(1), 5, L, F(1))))
    return Result(
        Verdict.FAILS,
        "All weights and biases 1, d = w = 5, input all ones (M = 1): "
        + "; ".join(f"L_FFN = {L}: output {got} > stated {paper}" for L, got, paper in rows)
        + ". An L-layer FFN multiplies by up to (fan-in·κ) L times; the stated bound has L − 1 factors.",
        counterexample={"d_embd": 5, "w": 5, "kappa": "1", "M": "1", "L_FFN": 2, "output": str(rows[1][1]), "stated_bound": str(rows[1][2])},
        corrected="||FFN(z)||∞ <= y_L with y_0 = ||z||∞, y_i = n_i κ y_{i−1} + κ (n_i the fan-in of layer i).",
        data={"rows": rows},
    )


@obligation(
    "lemma2.ffn_lipschitz",
    "Appendix F.2, proof of Lemma 2: Lipschitz constant of FFN_1",
    "||FFN(H) − FFN(H')||∞ <= Π ||W_i||_1 ||H − H'||∞ <= w_FFN^{2 L_FFN} κ^{L_FFN} ||H − H'||∞.",
    "exact",
    "theory.bounds uses Π_i n_i κ (n_i the fan-in), which is <= the stated one only when w_FFN >= d_embd.",
)
def ffn_lipschitz() -> Result:
    k, delta = F(1), F(1, 7)
    # W_1 = κ·1 (1 x 5), W_2 = κ·1 (5 x 1); h' = h + δ·1 with h = 0: the output moves by 5κ·κ·δ... per entry
    moved = 1 * k * relu(5 * k * delta)  # W_2 row times σ(W_1 δ 1)
    stated = F(1) ** 4 * k**2 * delta
    return Result(
        Verdict.CORRECTED,
        f"w_FFN = 1 < d_embd = 5, W_1 = (1,...,1), W_2 = (1,...,1)^T, h = 0, h' = δ·1 with δ = 1/7: the output "
        f"moves by {moved} > w^{{2L}} κ^L δ = {stated}. ||W_1||_1 = w·d·κ, not w²κ.",
        counterexample={"w": 1, "d_embd": 5, "L_FFN": 2, "kappa": "1", "delta": "1/7", "moved": str(moved), "stated": str(stated)},
        corrected="Lip(FFN) <= Π_i n_i κ <= max(w, d_embd)^{2 L_FFN} κ^{L_FFN}.",
    )


@obligation(
    "lemma2.ffn_perturbation",
    "Appendix F.2, proof of Lemma 2: ||f_1(H) − f_2(H)||∞ for FFNs with weights η apart",
    "||f_1(H) − f_2(H)||∞ <= L_FFN (w_FFN M' + 2)(κ w_FFN)^{L_FFN−1} η for ||H||∞ <= M'.",
    "exact",
    "theory.bounds: δ_i <= n_i κ δ_{i−1} + n_i η y_{i−1} + η, which has a term η per layer however small κ is.",
)
def ffn_perturbation() -> Result:
    k = eta = F(1, 100)
    # d_embd = w = 1, L = 2: f_1 = 0, f_2 equal except its last bias is η.
    measured = eta
    stated = 2 * (1 * 1 + 2) * (k * 1) * eta
    return Result(
        Verdict.CORRECTED,
        f"d_embd = w = 1, L_FFN = 2, κ = η = 1/100, f_1 ≡ 0 and f_2 = f_1 with last bias η: the outputs differ by "
        f"η = {measured} > stated {stated}. The bias of the last layer enters with factor 1, not (κw)^{{L−1}}; "
        "the stated bound needs κ w >= 1.",
        counterexample={"d_embd": 1, "w": 1, "L_FFN": 2, "kappa": "1/100", "eta": "1/100", "M_prime": "1", "difference": str(measured), "stated": str(stated)},
        corrected="δ_L with δ_0 = 0, δ_i = n_i κ δ_{i−1} + n_i η y_{i−1} + η (y_i the output bound of layer i).",
    )


@obligation(
    "lemma2.block_perturbation_sum",
    "Appendix F.2, proof of Lemma 2: combining the three terms of ||B_1(H) − B_2(H)||∞",
    "3κ³d⁶M³mlη + 3κ^{3+L}w^{2L}d⁶M³mlη + L(wM'+2)(κw)^{L−1}η <= (4κ^{3+L}w^{2L}d⁶M³ml + L(wM'+2)(κw)^{L−1})η.",
    "exact",
    "theory.bounds adds the terms: (1 + Lip(FFN))·m·attention difference + FFN perturbation.",
)
def block_perturbation_sum() -> Result:
    k, w, L, d, M, m, l = F(1), 1, 1, 1, F(1), 1, 1
    X = 3 * k**3 * d**6 * M**3 * m * l
    lhs = X + 3 * k ** (3 + L) * w ** (2 * L) * d**6 * M**3 * m * l
    rhs = 4 * k ** (3 + L) * w ** (2 * L) * d**6 * M**3 * m * l
    return Result(
        Verdict.FAILS,
        f"3a + 3ab <= 4ab needs b = κ^L w^(2L) >= 3. With κ = w = d = M = m = l = L = 1: {lhs} > {rhs}.",
        counterexample={"kappa": "1", "w": 1, "L_FFN": 1, "d_embd": 1, "M": "1", "m": 1, "l": 1, "lhs_per_eta": str(lhs), "rhs_per_eta": str(rhs)},
        corrected="3κ³d⁶M³ml(1 + κ^L w^{2L})η + L(wM'+2)(κw)^{L−1}η, i.e. the factor 4 becomes 6 when κ^L w^{2L} >= 1.",
    )


def block_output_terms(d: int, w: int, k: F, L: int, m: int, l: int, M: F) -> tuple[F, F]:
    """LHS and RHS of the last inequality bounding ||B(H)||∞ in F.2."""
    X = 2 * d**6 * k**3 * m * l * M
    Y = (k * w * w) ** (L - 1)
    lhs = X + Y * X + k * (k * w * w) ** (L - 2)
    rhs = 4 * d**4 * w ** (2 * L) * k ** (L + 1) * m * l * M
    return lhs, rhs


@obligation(
    "lemma2.block_output_bound",
    "Appendix F.2, proof of Lemma 2: bound on ||B(H)||∞",
    "2d⁶κ³mlM + (κw²)^{L−1} 2d⁶κ³mlM + κ(κw²)^{L−2} <= 4 d⁴ w^{2L} κ^{L+1} m l M, and iterating, "
    "||B_{L_T−1}∘…∘B_1(H)||∞ <= (4 d⁴ w^{2L} κ^{L+1} m l)^{L_T−1} M.",
    "exact",
    "theory.bounds.block_constants: M_{k+1} = M_Z + FFN output bound at M_Z, M_Z = M_k + m l d⁴ κ³ M_k³.",
)
def block_output_bound() -> Result:
    lhs, rhs = block_output_terms(5, 5, F(10), 2, 1, 1, F(1))
    return Result(
        Verdict.FAILS,
        f"The step turns d⁶ into d⁴ and κ^(L+2) into κ^(L+1): with d = w = 5, κ = 10, L_FFN = 2, m = l = M = 1 the "
        f"left side is {lhs} > right side {rhs} (ratio {float(lhs / rhs):.3g}). Besides, the left side already uses "
        "the wrong M' (lemma2.mha_output_bound) and FFN bound (lemma2.ffn_output_bound), and the iteration "
        "treats a cubic recursion as a linear one.",
        counterexample={"d_embd": 5, "w": 5, "kappa": "10", "L_FFN": 2, "m": 1, "l": 1, "M": "1", "lhs": str(lhs), "rhs": str(rhs)},
        corrected="M_{k+1} <= M_Z + y_L(M_Z), M_Z = M_k + m l d⁴ κ³ M_k³ (y_L the FFN output bound), iterated per block.",
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
)
def block_lipschitz() -> Result:
    k = F(1, 1000)
    stated = block_lipschitz_paper(5, k, 2, 5, F(1), 1, 1)
    return Result(
        Verdict.FAILS,
        "B(H) = FFN(MHA(H) + H) + MHA(H) + H contains H itself, so Lip(B) >= 1 whenever the weights are small: "
        f"the block with all weights 0 (allowed for any κ) is the identity, Lipschitz constant 1, while the "
        f"stated constant at κ = 1/1000, w = d = 5, L_FFN = 2, m = l = M = 1 is {stated}.",
        counterexample={"weights": "all zero", "kappa": "1/1000", "w": 5, "d_embd": 5, "L_FFN": 2, "m": 1, "l": 1, "M": "1", "lipschitz": "1", "stated": str(stated)},
        corrected="Lip(B) <= (1 + Π n_i κ)(1 + 3 m l d⁴ κ³ M²).",
    )


@obligation(
    "lemma2.mha_lipschitz",
    "Appendix F.2, proof of Lemma 2: Lipschitz constant of MHA in H",
    "For ||H||∞, ||H'||∞ <= M: ||MHA(H) − MHA(H')||∞ <= 4 d_embd⁶ κ³ M² m l ||H − H'||∞.",
    "numeric search",
    "theory.bounds uses 3 m l d⁴ κ³ M² (smaller); the stated constant is valid.",
)
def mha_lipschitz() -> Result:
    worst, rows = lipschitz.sweep(_sweep_classes(), seed=2, eta=1e-6, nets_per_class=1)
    ok = worst.mha_lip_paper <= 1 + 1e-9
    ev = (
        f"worst measured/stated over {len(rows)} classes (random and all-κ members): {worst.mha_lip_paper:.4g}; "
        f"against the corrected 3 m l d⁴ κ³ M²: {worst.mha_lip_corr:.4g}. (The derivation's middle lines bound "
        "|<Qh', Kh'> − <Qh', Kh'>|, identically 0, where |<Qh', Kh'>| is meant; the final constant is still valid.)"
    )
    if ok:
        return Result(Verdict.HOLDS, ev, data={"worst": worst.mha_lip_paper})
    row = max(rows, key=lambda r: r["mha_lip_paper"])
    return Result(Verdict.FAILS, ev, counterexample=row["class"], corrected="3 m l d⁴ κ³ M²")


@obligation(
    "lemma2.composition_exponents",
    "Appendix F.2, proof of Lemma 2: second term of the multi-block difference",
    "4κ^{3+L}d^{6+2L}((4d^{2L+4}κ^{L+1}ml)^{L_T−1}M)³ml + … <= 4^{3L_T−2} L d^{…} κ^{…} M³ m^{L_T} l^{L_T} η.",
    "symbolic",
    "theory.bounds composes the per-block constants numerically in log space; no exponent bookkeeping.",
)
def composition_exponents() -> Result:
    m, LT, LF, d, k, l, M = sp.symbols("m L_T L_FFN d kappa l M", positive=True)
    first = 4 * k ** (3 + LF) * d ** (6 + 2 * LF) * ((4 * d ** (2 * LF + 4) * k ** (LF + 1) * m * l) ** (LT - 1) * M) ** 3 * m * l
    exp_m = sp.simplify(m * sp.diff(sp.expand_log(sp.log(first), force=True), m))  # d log(term)/d log m
    at2 = int(exp_m.subs(LT, 2))
    return Result(
        Verdict.FAILS,
        f"The first term alone has m to the power {exp_m} (= {at2} at L_T = 2), but the bound claims m^L_T "
        "(and l^L_T likewise): for m, l large the bound is smaller than one of its own summands.",
        counterexample={"L_T": 2, "exponent_of_m_in_term": at2, "claimed_exponent": 2},
        corrected=f"the exponent of m (and l) is {exp_m} in that term, before the (wrong) cube is even fixed.",
    )


@obligation(
    "lemma2.induction_power",
    "Appendix F.2, proof of Lemma 2: closing the induction and the final C_T",
    "(2^{7L_T} L_FFN M³ d^{18L_T} w^{18L_T L} κ^{6L_T L} m^{L_T} l^{L_T})^{L_T} η <= 2^{7L_T²} L_FFN M^{3L_T} …, "
    "and then C_T = 2^{L_T²+1} L_FFN M^{3L_T} d_embd^{18L_T² L_FFN} κ^{6L_T² L_FFN} m^{L_T²} l^{L_T²}.",
    "exact",
    "theory.bounds.corrected_lipschitz: C_T = Σ_k π_k Π_{j>k} Lip_j from the recursion δ_k <= Lip_k δ_{k−1} + π_k η.",
)
def induction_power() -> Result:
    LT, LF = 2, 2
    lhs_LF, rhs_LF = LF**LT, LF
    lhs_2, rhs_2 = 2 ** (7 * LT * LT), 2 ** (LT * LT + 1)
    return Result(
        Verdict.FAILS,
        f"Raising to the power L_T = 2 turns L_FFN = 2 into {lhs_LF}, not {rhs_LF}; and the next line replaces "
        f"2^(7L_T²) = {lhs_2} by 2^(L_T²+1) = {rhs_2}. Both steps make the constant smaller; d^(18L_T) w^(18L_T L) "
        "also becomes d^(18L_T² L_FFN) with w dropped.",
        counterexample={"L_T": LT, "L_FFN": LF, "power_of_2_before": lhs_2, "power_of_2_after": rhs_2},
        corrected="C_T from the recursion of theory.bounds.corrected_lipschitz.",
    )


@obligation(
    "lemma2.statement_vs_proof",
    "Lemma 2 (statement, Appendix F.1) vs the end of its proof (Appendix F.2)",
    "N(δ) <= (C_T κ / δ)^P = (2^{L_T²+1} L_FFN M^{3L_T} d^{18L_T²} w^{18L_T²L_FFN} κ^{6L_T²L_FFN} m^{L_T²} l^{L_T²} / δ)^P.",
    "exact",
    "theory.bounds.log_covering_as_written uses the statement; log_CT_proof keeps the proof's last line.",
)
def statement_vs_proof() -> Result:
    c = bounds.TransformerClass(L_T=2, L_FFN=2, w=1, l=8, d_embd=5, m=4, kappa=10.0, M=1.0)
    proof_with_kappa = bounds.log_CT_proof(c) + math.log(c.kappa)
    stmt = bounds.log_CT_statement(c)
    return Result(
        Verdict.FAILS,
        "The last equality replaces C_T κ by C_T (κ^(6L_T²L_FFN+1) becomes κ^(6L_T²L_FFN)), d^(18L_T²L_FFN) by "
        f"d^(18L_T²) and adds w^(18L_T²L_FFN). For L_T = L_FFN = 2, d = 5, w = 1, κ = 10, l = 8, m = 4, M = 1: "
        f"log(C_T κ) = {proof_with_kappa:.2f} from the proof, but the stated base has log {stmt:.2f}: the lemma "
        "claims less than its proof shows.",
        counterexample={"L_T": 2, "L_FFN": 2, "d_embd": 5, "w": 1, "kappa": 10, "l": 8, "m": 4, "M": 1, "log_CT_kappa_proof": proof_with_kappa, "log_stated_base": stmt},
        corrected="log N <= P log(κ C_T/δ + 1) with the corrected C_T (theory.bounds.log_covering_corrected).",
    )


@obligation(
    "lemma2.embedding_bound",
    "Appendix F.2, proof of Lemma 2: the encoding layer",
    "||PE + E(x)||∞ = ||x||∞ + 1 <= M + 1; the following line continues with M.",
    "exact",
    "theory.bounds.input_bound: ||PE + E(x)||∞ <= max(M, 1) for E = e_1(Ux)^T, U a 0/1 selection, PE entries in [0, 1].",
)
def embedding_bound() -> Result:
    x = F(1, 2)
    h0 = [x, 0, 0, 1, 1]  # token: data row, zero row, interaction (0, 1), constant 1
    actual = max(abs(v) for v in h0)
    return Result(
        Verdict.CORRECTED,
        f"x = 1/2 in one token with interaction vector (0, 1) and constant 1: ||PE + E(x)||∞ = {actual}, not "
        f"||x||∞ + 1 = {x + 1}; and with M = 1/2 the next line's bound (…)^L_T·M uses M = 1/2 < {actual}.",
        counterexample={"x": "1/2", "token": [str(v) for v in h0], "norm": str(actual), "claimed": str(x + 1)},
        corrected="||PE + E(x)||∞ <= max(M, 1), and M_0 = max(M, 1) replaces M from there on.",
    )


@obligation(
    "lemma2.parameter_count",
    "Appendix F.2, proof of Lemma 2: the number of parameters",
    "|θ| = d + dD + L_T(3d²m + L_FFN w²) <= 4 d² w² D (m + L_FFN) L_T.",
    "exact",
    "theory.bounds.n_params counts L_T(3d²m + Σ_layers (fan_in + 1)·fan_out) (E and PE fixed).",
)
def parameter_count() -> Result:
    c = bounds.TransformerClass(L_T=1, L_FFN=2, w=5, l=1, d_embd=5, m=1, kappa=1.0, M=1.0)
    true, eq = bounds.n_params(c), bounds.n_params_paper_equality(c) - c.d_embd - c.d_embd * c.D
    worst = 0.0
    for LT in range(1, 5):
        for LF in range(1, 6):
            for w in range(1, 9):
                for d in range(1, 7):
                    for m in range(1, 9):
                        cc = bounds.TransformerClass(L_T=LT, L_FFN=LF, w=w, l=1, d_embd=d, m=m, kappa=1.0, M=1.0)
                        worst = max(worst, bounds.n_params(cc) / bounds.n_params_paper(cc))
    return Result(
        Verdict.CORRECTED,
        f"One block, m = 1, L_FFN = 2, w = d = 5: the blocks hold 3·25 + (5+1)·5 + (5+1)·5 = {true} weights, the "
        f"middle line counts {eq} (no biases; W_1 and W_L are w×d and d×w, not w×w). The final bound still "
        f"holds: over L_T <= 4, L_FFN <= 5, w <= 8, d <= 6, m <= 8 the true count is at most {worst:.3f} of "
        "4d²w²D(m + L_FFN)L_T.",
        counterexample={"L_T": 1, "L_FFN": 2, "w": 5, "d_embd": 5, "m": 1, "true_block_params": true, "paper_block_params": eq},
        corrected="|θ| = L_T(3d²m + Σ_layers (fan_in+1)·fan_out) <= 4d²w²D(m + L_FFN)L_T.",
        data={"worst_fraction": worst},
    )


def min_grid_points(kappa: F, eta: F) -> int:
    """Fewest points p_j with every t in [−κ, κ] within η of one: ceil(κ/η) (each covers an interval of length 2η)."""
    return math.ceil(kappa / eta)


@obligation(
    "lemma2.grid_count",
    "Appendix F.2, proof of Lemma 2: the grid of weights",
    "The number of grid steps per parameter is 2κ/η, so N(T, δ, ||·||∞) <= (κ/η)^{|θ|}.",
    "exact",
    "theory.bounds.log_covering_corrected: (κ/η + 1)^P >= ceil(κ/η)^P grid points.",
)
def grid_count() -> Result:
    kappa, eta = F(1), F(2, 5)
    need = min_grid_points(kappa, eta)
    return Result(
        Verdict.CORRECTED,
        f"κ = 1, η = 2/5: covering [−1, 1] by points within η needs ceil(κ/η) = {need} points > κ/η = {kappa / eta}; "
        "the proof's own grid of step η has 2κ/η + 1 = 6 points, not κ/η.",
        counterexample={"kappa": "1", "eta": "2/5", "points_needed": need, "claimed": str(kappa / eta)},
        corrected="N <= ceil(κ/η)^P <= (κ/η + 1)^P.",
    )


def _sweep_classes():
    out = []
    for LT in (1, 2, 3):
        for LF in (1, 2, 3):
            for kappa in (1e-3, 0.1, 1.0, 2.0):
                for M in (0.5, 1.0, 10.0):
                    out.append(bounds.TransformerClass(L_T=LT, L_FFN=LF, w=4, l=4, d_embd=3, m=2, kappa=kappa, M=M))
    # d_embd = w = 1: no d^{18L_T²} factor hides the tower M^{3^L_T} of the hidden states
    out += [bounds.TransformerClass(L_T=LT, L_FFN=1, w=1, l=1, d_embd=1, m=1, kappa=1.0, M=M) for LT in (2, 3) for M in (2.0, 3.0)]
    return out


def tower_example() -> float:
    """Measured/stated for the all-ones member of (L_T = 3, L_FFN = d = w = l = m = 1, κ = 1, M = 2)."""
    c = bounds.TransformerClass(L_T=3, L_FFN=1, w=1, l=1, d_embd=1, m=1, kappa=1.0, M=2.0)
    return lipschitz.measure(c, np.random.default_rng(0), 1e-7, extremal=True).T_paper


def zero_network_gap(kappa: float, eta: float) -> tuple[float, float]:
    """(|T(H) − T'(H)|, stated C_T η) for d = w = l = m = L_T = L_FFN = 1: T has all weights 0 (T(H) = H),
    T' equals T except its last FFN bias, which is η. Evaluated with tmcheck's float64 backend."""
    import numpy as np

    from tmcheck.theory.network import Block, Head, Layer

    z = np.zeros((1, 1))
    net = [Block((Head(z, z, z),), (Layer(z, np.zeros(1)),))]
    net2 = [Block((Head(z, z, z),), (Layer(z, np.full(1, eta)),))]
    H = np.full((1, 1, 1), 1.0)
    gap = float(abs(lipschitz.forward(net, H) - lipschitz.forward(net2, H)).max())
    c = bounds.TransformerClass(L_T=1, L_FFN=1, w=1, l=1, d_embd=1, m=1, kappa=kappa, M=1.0)
    return gap, math.exp(bounds.log_CT_statement(c)) * eta


@obligation(
    "lemma2.lipschitz_constant",
    "Appendix F.2, proof of Lemma 2: the central step |T(x) − T'(x)| <= C_T η",
    "For T, T' in 𝒯 with ||θ − θ'||∞ < η: |T(x) − T'(x)| <= C_T η, "
    "C_T = 2^{L_T²+1} L_FFN M^{3L_T} d^{18L_T²} w^{18L_T² L_FFN} κ^{6L_T² L_FFN} m^{L_T²} l^{L_T²}.",
    "numeric search",
    "theory.bounds.corrected_lipschitz; tmcheck proofs measures both on random and extremal float64 members "
    "(tests/proofs_check/test_lipschitz.py lets hypothesis choose the classes).",
)
def lipschitz_constant() -> Result:
    worst, rows = lipschitz.sweep(_sweep_classes(), seed=0, eta=1e-6, nets_per_class=2)
    big_kappa = [r for r in rows if r["class"]["kappa"] >= 1]
    worst_big = max(r["T_paper"] for r in big_kappa)
    worst_row = max(rows, key=lambda r: r["T_paper"])
    gap, ct = zero_network_gap(0.01, 0.01)
    tower = tower_example()
    return Result(
        Verdict.FAILS,
        f"Over {len(rows)} classes (L_T, L_FFN <= 3, κ in {{1e-3, 0.1, 1, 2}}, M in {{0.5, 1, 10}}, d_embd = 3, and four with "
        f"d_embd = w = 1), random "
        f"and all-κ members, η = 1e-6: worst |T − T'|/(C_T η) = {worst.T_paper:.3g} with the stated C_T "
        f"(class {worst_row['class']}); {worst_big:.3g} among classes with κ >= 1, e.g. {tower:.3g} for the all-ones "
        "member of L_T = 3, L_FFN = d = w = l = m = 1, κ = 1, M = 2, whose hidden states grow like M^(3^L_T) while "
        f"C_T has M^(3L_T). With the corrected C_T the worst "
        f"ratio is {worst.T_corr:.3g} (<= 1). Exact instance: d = w = l = m = L_T = L_FFN = 1, κ = 1/100, all "
        f"weights 0 and T' with last bias η = 1/100: T(H) = H, T'(H) = H + η, so |T − T'| = {gap:.3g} while C_T η = {ct:.3g}.",
        counterexample={"class": {"L_T": 1, "L_FFN": 1, "w": 1, "l": 1, "d_embd": 1, "m": 1, "kappa": 0.01, "M": 1.0},
                        "eta": 0.01, "T": "all weights 0", "T_prime": "last FFN bias = eta", "gap": gap, "CT_eta": ct},
        corrected="|T(x) − T'(x)| <= C_T η, C_T = Σ_k π_k Π_{j>k} Lip_j with Lip_j = (1 + Π_i n_i κ)(1 + 3 m l d⁴ κ³ M_{j−1}²), "
        "π_j the block perturbation bound and M_j = M_Z + y_L(M_Z), M_Z = M_{j−1} + m l d⁴ κ³ M_{j−1}³, M_0 = max(M, 1) "
        "(theory.bounds.corrected_lipschitz).",
        data={"worst": worst.__dict__, "worst_kappa_ge_1": worst_big},
    )


@obligation(
    "lemma2.intermediate_inequalities_corrected",
    "Appendix F.2, proof of Lemma 2: the corrected intermediate bounds, measured",
    "(corrected forms) attention difference, MHA output, FFN output and block Lipschitz bounds of theory.bounds.",
    "numeric search",
    "theory.bounds.block_constants.",
)
def intermediate_inequalities_corrected() -> Result:
    worst, rows = lipschitz.sweep(_sweep_classes(), seed=1, eta=1e-6, nets_per_class=1)
    keys = ("attn_corr", "mha_out_corr", "ffn_out_corr", "mha_lip_corr", "block_lip_corr", "T_corr")
    tol = 1 + 1e-9
    bad = {k: getattr(worst, k) for k in keys if getattr(worst, k) > tol}
    ev = ", ".join(f"{k} {getattr(worst, k):.4g}" for k in keys)
    if bad:
        row = max(rows, key=lambda r: max(r[k] for k in bad))
        return Result(Verdict.FAILS, f"corrected bound exceeded: {ev}", counterexample=row)
    return Result(
        Verdict.HOLDS,
        f"worst measured/bound over {len(rows)} classes (random and all-κ members): {ev}. MHA and FFN output "
        "bounds are attained (ratio 1) by the all-κ member at H = M_0.",
        data={"worst": {k: getattr(worst, k) for k in keys}},
    )
