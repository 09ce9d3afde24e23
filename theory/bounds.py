"""Closed forms of the paper with every constant written out (Sections 1-3, Appendix B, F.1, F.2).

Scaling exponents (eq. 3-4, Appendix B.1) and the ID-free conversions (Section 3, Table 1):

    α_D = 2β/(2β+d),   α_N = 2β/d,   α_D = α_N/(1+α_N),   α_N = α_D/(1−α_D).

Lemma 2 (Appendix F.2), the covering number of 𝒯(L_T, L_FFN, w, l, d_embd, m, R, κ) for inputs
with ||x||∞ <= M, is computed as log N (natural log) so that L_T = 20 does not overflow:

* as written (the lemma's statement):
      log N = P_paper · log(C_stmt / δ),   P_paper = 4 d² w² D (m + L_FFN) L_T,
      C_stmt = 2^{L_T²+1} L_FFN M^{3L_T} d^{18L_T²} w^{18L_T² L_FFN} κ^{6L_T² L_FFN} m^{L_T²} l^{L_T²}
  (d = d_embd, w = w_FFN); `log_CT_proof` is the proof's last line, which differs (d^{18L_T²L_FFN}, no w).
* corrected: the same argument (perturb θ by η, bound |T − T'| <= C_T η, grid the weights) with
  each step redone; the derivation is `corrected_lipschitz`'s docstring. It differs from the paper in
  three consequential places: attention is cubic in H, so the hidden-state bound obeys
  M_{k+1} >= M_k + m l d⁴ κ³ M_k³ (a tower, M^{3^{L_T}}, not M^{3L_T}); the residual adds 1 to
  every block's Lipschitz constant; and the grid needs ceil(κ/η) points per weight, so
      log N <= P · log(κ C_T / δ + 1),   P = L_T (3 d² m + Σ_layers (fan_in + 1) fan_out).

Theorem 1 (Appendix F.1): E||T̂_n − f||² <= 2ε² + (104 R²/(3n)) log N(1/(4Rn)) + (4 + 1/(2R))/n with the
class chosen in F.1 and ε = n^{−β/(2β+d)}. Theorem 2 / Lemma 1 resources come from the explicit
construction of Appendix E.1 (N, the token count l = d + dN + dN^d, heads, blocks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from tmcheck.theory.spec import Theorem2Layout, lemma1_spec, theorem2_counts
from tmcheck.theory.targets import tight_N

LN2 = math.log(2.0)


def log_sum_exp(*xs: float) -> float:
    """log Σ exp(x_i), stable; -inf entries contribute nothing, a +inf entry makes it +inf."""
    top = max(xs)
    if top == -math.inf or top == math.inf:  # +inf: the sum is unbounded (inf - inf would make it nan)
        return top
    return top + math.log(sum(math.exp(x - top) for x in xs))


def _pos(name: str, v, integer: bool = False) -> None:
    if integer and (not isinstance(v, int) or isinstance(v, bool)):
        raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if not (v > 0) or (isinstance(v, float) and not math.isfinite(v)):
        raise ValueError(f"{name} must be positive and finite, got {v!r}")


# --------------------------------------------------------------------------------------------
# scaling exponents (eq. 3-4, Appendix B.1) and the ID-free conversions (Section 3)


def alpha_D(d, beta=1):
    """Data exponent α_D = 2β/(2β+d) (eq. 3). Exact for Fraction/int inputs."""
    _pos("d", d)
    _pos("beta", beta)
    return 2 * beta / (2 * beta + d)


def alpha_N(d, beta=1):
    """Model exponent α_N = 2β/d (eq. 4)."""
    _pos("d", d)
    _pos("beta", beta)
    return 2 * beta / d


def alpha_D_from_alpha_N(a_n):
    """α_D = α_N/(1+α_N) (Section 3), valid for every β since α_D = 2β/(2β+d) and α_N = 2β/d."""
    _pos("alpha_N", a_n)
    return a_n / (1 + a_n)


def alpha_N_from_alpha_D(a_d):
    """α_N = α_D/(1−α_D) (Section 3); needs 0 < α_D < 1."""
    _pos("alpha_D", a_d)
    if not a_d < 1:
        raise ValueError(f"alpha_D must be < 1 (it is 2β/(2β+d)), got {a_d}")
    return a_d / (1 - a_d)


def id_from_alpha_D(a_d, beta=1):
    """The intrinsic dimension d that α_D = 2β/(2β+d) implies: d = 2β(1−α_D)/α_D."""
    _pos("alpha_D", a_d)
    return 2 * beta * (1 - a_d) / a_d


def plugin_excess_risk(p, eta, eta_theta) -> float:
    """Appendix B.2: the excess risk E(f_θ) = Σ_x p(x) |2η(x) − 1| 1[f*(x) != f_θ(x)] of the plug-in rule
    f_θ = 1[η_θ >= 1/2] against the Bayes rule f* = 1[η >= 1/2], on a discrete distribution p."""
    import numpy as np

    p, eta, eta_theta = (np.asarray(a, dtype=np.float64) for a in (p, eta, eta_theta))
    return float(np.sum(p * np.abs(2 * eta - 1) * ((eta >= 0.5) != (eta_theta >= 0.5))))


def margin_constant(p, eta, gamma: float = 1.0) -> float:
    """The least c_M with P(0 < |η − 1/2| <= t) <= c_M t^γ for every t > 0 (Appendix B.2, eq. 10), on a discrete p:
    the maximum over the atoms' margins t of P(0 < |η − 1/2| <= t) / t^γ (0 when no atom has a margin)."""
    import numpy as np

    p, m = np.asarray(p, dtype=np.float64), np.abs(np.asarray(eta, dtype=np.float64) - 0.5)
    ts = np.unique(m[m > 0])
    return max((float(np.sum(p[(m > 0) & (m <= t)])) / t**gamma for t in ts), default=0.0)


def classification_bound(c_M: float, eps: float, gamma: float = 1.0) -> float:
    """Appendix B.2: E(f_θ) <= 2 c_M ε^{1+γ} when ||η_θ − η||∞ <= ε and the margin condition holds with c_M, γ."""
    return 2 * c_M * eps ** (1 + gamma)


# Table 1 as printed: observed exponent -> the ID-free prediction of the other one.
TABLE1 = {
    "GPT-2": {"alpha_N_hat": "0.076", "alpha_D_printed": "0.070", "alpha_D_hat": "0.095", "alpha_N_printed": "0.106"},
    "Chinchilla": {"alpha_N_hat": "0.34", "alpha_D_printed": "0.25", "alpha_D_hat": "0.28", "alpha_N_printed": "0.33"},
}


def round_half_up(x: Fraction, places: int) -> Fraction:
    q = Fraction(10) ** places
    return Fraction(math.floor(x * q + Fraction(1, 2))) / q


def table1() -> list[dict]:
    """Recompute Table 1 exactly: for each column the exact conversion, and its rounding to the
    number of decimals the paper prints (and to 3 decimals)."""
    rows = []
    for model, t in TABLE1.items():
        for src, dst, conv in (
            ("alpha_N_hat", "alpha_D", alpha_D_from_alpha_N),
            ("alpha_D_hat", "alpha_N", alpha_N_from_alpha_D),
        ):
            observed = Fraction(t[src])
            printed_str = t[f"{dst}_printed"]
            exact = conv(observed)
            places = len(printed_str.split(".")[1])
            rows.append(
                {
                    "model": model,
                    "from": f"{src} = {t[src]}",
                    "quantity": dst,
                    "exact": exact,
                    "value": float(exact),
                    "printed": printed_str,
                    "recomputed_at_printed_places": f"{float(round_half_up(exact, places)):.{places}f}",
                    "recomputed_3dp": f"{float(round_half_up(exact, 3)):.3f}",
                    "matches": round_half_up(exact, places) == Fraction(printed_str),
                }
            )
    return rows


# --------------------------------------------------------------------------------------------
# Lemma 2: the network class and its covering number


@dataclass(frozen=True)
class TransformerClass:
    """𝒯(L_T, L_FFN, w_FFN, l, d_embd, m, R, κ) of Definition 2, inputs with ||x||∞ <= M, x in R^D.

    R does not enter Lemma 2. Every FFN has exactly L_FFN affine layers of shapes
    d->w->...->w->d (one layer: d->d), the corrected Definition 5.
    """

    L_T: int
    L_FFN: int
    w: int
    l: int
    d_embd: int
    m: int
    kappa: float
    M: float
    D: int = 1

    def __post_init__(self) -> None:
        for name in ("L_T", "L_FFN", "w", "l", "d_embd", "m", "D"):
            _pos(name, getattr(self, name), integer=True)
        _pos("kappa", self.kappa)
        _pos("M", self.M)

    @property
    def ffn_dims(self) -> list[int]:
        """Widths through one FFN: [d, w, ..., w, d] (L_FFN + 1 entries); [d, d] when L_FFN = 1."""
        if self.L_FFN == 1:
            return [self.d_embd, self.d_embd]
        return [self.d_embd] + [self.w] * (self.L_FFN - 1) + [self.d_embd]


def n_params_paper_equality(c: TransformerClass) -> int:
    """|θ| = d + dD + L_T (3 d² m + L_FFN w²): the middle line of the count in Appendix F.2."""
    d = c.d_embd
    return d + d * c.D + c.L_T * (3 * d * d * c.m + c.L_FFN * c.w**2)


def n_params_paper(c: TransformerClass) -> int:
    """P_paper = 4 d² w² D (m + L_FFN) L_T: the exponent of Lemma 2."""
    return 4 * c.d_embd**2 * c.w**2 * c.D * (c.m + c.L_FFN) * c.L_T


def n_params(c: TransformerClass) -> int:
    """The true number of learnable weights: L_T (3 d² m + Σ_layers (fan_in + 1) fan_out).

    E and PE are fixed (Appendix F.2: "fixed among architectures"), so they are not counted.
    """
    dims = c.ffn_dims
    ffn = sum((dims[i] + 1) * dims[i + 1] for i in range(len(dims) - 1))
    return c.L_T * (3 * c.d_embd**2 * c.m + ffn)


def _log_CT(c: TransformerClass, d_exp: int, w_exp: int) -> float:
    """log of 2^{L²+1} L_FFN M^{3L} d^{d_exp} w^{w_exp} κ^{6L² L_FFN} m^{L²} l^{L²}: C_T with the exponents of d and
    w, the only factors on which the statement and the proof's last line differ, left open."""
    L, LF = c.L_T, c.L_FFN
    return (
        (L * L + 1) * LN2
        + math.log(LF)
        + 3 * L * math.log(c.M)
        + d_exp * math.log(c.d_embd)
        + w_exp * math.log(c.w)
        + 6 * L * L * LF * math.log(c.kappa)
        + L * L * (math.log(c.m) + math.log(c.l))
    )


def log_CT_statement(c: TransformerClass) -> float:
    """log of 2^{L²+1} L_FFN M^{3L} d^{18L²} w^{18L² L_FFN} κ^{6L² L_FFN} m^{L²} l^{L²} (Lemma 2 as stated)."""
    L, LF = c.L_T, c.L_FFN
    return _log_CT(c, d_exp=18 * L * L, w_exp=18 * L * L * LF)


def log_CT_proof(c: TransformerClass) -> float:
    """log of C_T as the last line of the proof in F.2 writes it (d^{18L² L_FFN}, no w factor)."""
    L, LF = c.L_T, c.L_FFN
    return _log_CT(c, d_exp=18 * L * L * LF, w_exp=0)


def log_covering_as_written(c: TransformerClass, delta: float) -> float:
    """log N(δ) of Lemma 2's statement: P_paper · (log C_stmt − log δ)."""
    _pos("delta", delta)
    return n_params_paper(c) * (log_CT_statement(c) - math.log(delta))


@dataclass
class BlockConstants:
    """The corrected per-block constants (all natural logs), input hidden states bounded by M_in."""

    log_M_in: float  # ||H||∞ <= M_in
    log_M_Z: float  # ||H + MHA(H)||∞ <= M_Z = M_in + m l d⁴ κ³ M_in³
    log_M_out: float  # ||B(H)||∞ <= M_Z + FFN output bound at M_Z
    log_attn_diff: float  # ||A_1(H) − A_2(H)||∞ <= 3 d⁴ κ² M_in³ l η      (per η)
    log_mha_lip: float  # ||MHA(H) − MHA(H')|| <= 3 m l d⁴ κ³ M_in² ||H − H'||
    log_ffn_lip: float  # ||FFN(z) − FFN(z')|| <= Π_i fan_in_i κ ||z − z'||
    log_block_lip: float  # (1 + ffn_lip)(1 + mha_lip)
    log_block_pert: float  # ||B_1(H) − B_2(H)|| <= [(1 + ffn_lip) m·attn_diff + ffn_pert(M_Z)] η


def log_ffn_output_bound(c: TransformerClass, log_z: float) -> float:
    """log bound of ||FFN(z)||∞ for ||z||∞ <= e^{log_z}: y <- fan_in κ y + κ per layer (σ never enlarges |.|)."""
    lk, y = math.log(c.kappa), log_z
    for fan_in in c.ffn_dims[:-1]:
        y = log_sum_exp(math.log(fan_in) + lk + y, lk)
    return y


def log_ffn_perturbation(c: TransformerClass, log_z: float) -> float:
    """log of the FFN perturbation bound per η at an input with ||z||∞ <= e^{log_z}:
    δ_i <= fan_in κ δ_{i−1} + fan_in η y_{i−1} + η, δ_0 = 0."""
    lk, y, dl = math.log(c.kappa), log_z, -math.inf
    for fan_in in c.ffn_dims[:-1]:
        lf = math.log(fan_in)
        dl = log_sum_exp(lf + lk + dl, lf + y, 0.0)
        y = log_sum_exp(lf + lk + y, lk)
    return dl


def block_constants(c: TransformerClass, log_M_in: float) -> BlockConstants:
    """One block's corrected constants; see `corrected_lipschitz` for the derivation."""
    lk, ld = math.log(c.kappa), math.log(c.d_embd)
    lml = math.log(c.m) + math.log(c.l)
    log_M_Z = log_sum_exp(log_M_in, lml + 4 * ld + 3 * lk + 3 * log_M_in)
    log_M_out = log_sum_exp(log_M_Z, log_ffn_output_bound(c, log_M_Z))
    log_attn = math.log(3) + 4 * ld + 2 * lk + 3 * log_M_in + math.log(c.l)
    log_mha_lip = math.log(3) + lml + 4 * ld + 3 * lk + 2 * log_M_in
    log_ffn_lip = sum(math.log(f) + lk for f in c.ffn_dims[:-1])
    log_block_lip = log_sum_exp(0.0, log_ffn_lip) + log_sum_exp(0.0, log_mha_lip)
    log_pert = log_sum_exp(log_sum_exp(0.0, log_ffn_lip) + math.log(c.m) + log_attn, log_ffn_perturbation(c, log_M_Z))
    return BlockConstants(log_M_in, log_M_Z, log_M_out, log_attn, log_mha_lip, log_ffn_lip, log_block_lip, log_pert)


def input_bound(c: TransformerClass) -> float:
    """||PE + E(x)||∞ <= max(M, 1): E = e_1 (U x)^T with U a 0/1 selection, PE entries in [0, 1].

    (F.2 writes ||PE + E(x)||∞ = ||x||∞ + 1 and then continues with M; see lemma2.embedding_bound.)
    """
    return max(float(c.M), 1.0)


@dataclass
class CorrectedLipschitz:
    log_CT: float  # |T(x) − T'(x)| <= C_T η whenever ||θ − θ'||∞ <= η
    blocks: list[BlockConstants] = field(default_factory=list)
    log_M_final: float = 0.0  # ||B_L ∘ ... ∘ B_1(H_0)||∞ <= M_final


def corrected_lipschitz(c: TransformerClass, log_M0: float | None = None) -> CorrectedLipschitz:
    """C_T for 𝒯 with every step of Appendix F.2 redone (d = d_embd, n_i = fan-in of FFN layer i).

    Norms: ||·||∞ is the max entry. A matrix with entries <= κ and n columns maps ||x||∞ <= X to <= nκX.
    * Score s = <Q h_i, K h_k> = h_k^T (K^T Q) h_i with |(K^T Q)_ab| <= d κ², so |s| <= d³ κ² M².
      A head: ||A(H)||∞ <= l · d³κ²M² · dκM = l d⁴ κ³ M³; MHA: <= m l d⁴ κ³ M³.
    * Perturbation (same H, weights within η): |s_1 − s_2| <= d² · 2dκη · M² and
      ||(V_1 − V_2) h|| <= dηM, so ||A_1(H) − A_2(H)||∞ <= 3 l d⁴ κ² M³ η.
    * Lipschitz in H on ||H||, ||H'|| <= M: |s − s'| <= 2 d³ κ² M Δ, so ||MHA(H) − MHA(H')|| <= 3 m l d⁴ κ³ M² Δ.
    * FFN (ReLU 1-Lipschitz): Lipschitz λ_F = Π n_i κ; output y_i <= n_i κ y_{i−1} + κ;
      perturbation δ_i <= n_i κ δ_{i−1} + n_i η y_{i−1} + η.
    * Block (residual included): B(H) − B(H') = (H − H') + ΔMHA + ΔFFN, so
      Lip_B <= (1 + λ_F)(1 + μ); ||B_1(H) − B_2(H)|| <= (1 + λ_F) m·attn_diff + FFN perturbation at M_Z.
    * Composition (E, PE fixed so δ_0 = 0): δ_k <= Lip_k δ_{k−1} + π_k η, each block evaluated at the bound
      M_{k−1} on its inputs (both networks lie in the class, so both hidden states obey it).
    """
    logM = math.log(input_bound(c)) if log_M0 is None else log_M0
    out = CorrectedLipschitz(log_CT=-math.inf)
    for _ in range(c.L_T):
        if logM == math.inf:  # the hidden states' log bound left float range (it triples per block): every
            out.log_CT = math.inf  # later constant is unbounded too, so stop (L_T may be astronomically large)
            break
        bc = block_constants(c, logM)
        out.blocks.append(bc)
        out.log_CT = log_sum_exp(bc.log_block_lip + out.log_CT, bc.log_block_pert)
        logM = bc.log_M_out
    out.log_M_final = logM
    return out


def log_covering_corrected(c: TransformerClass, delta: float) -> float:
    """log N(δ) <= P · log(κ C_T/δ + 1): ceil(κ/η) grid points of spacing 2η per weight, η = δ/C_T."""
    _pos("delta", delta)
    lct = corrected_lipschitz(c).log_CT
    return n_params(c) * log_sum_exp(math.log(c.kappa) + lct - math.log(delta), 0.0)


def covering_report(c: TransformerClass, delta: float) -> dict:
    """Everything `tmcheck bound covering` prints (natural logs; log10 alongside)."""
    cl = corrected_lipschitz(c)
    lw, lc = log_covering_as_written(c, delta), log_covering_corrected(c, delta)
    return {
        "class": dict(c.__dict__),
        "delta": delta,
        "as_written": {
            "n_params": n_params_paper(c),
            "log_C_T": log_CT_statement(c),
            "log_C_T_proof_last_line": log_CT_proof(c),
            "log_N": lw,
            "log10_N": lw / math.log(10),
        },
        "corrected": {
            "n_params": n_params(c),
            "log_C_T": cl.log_CT,
            "log_hidden_bound_final": cl.log_M_final,
            "log_N": lc,
            "log10_N": lc / math.log(10),
        },
    }


# --------------------------------------------------------------------------------------------
# Lemma 1 / Theorem 2 resources (Appendix E) and Theorem 1 (Appendix F.1)


def lemma1_N_corrected(d: int, eps: float, H_f: float = 1.0, beta: float = 1.0) -> int:
    """The corrected grid: `targets.tight_N` (kept under this name for proofs_check)."""
    return tight_N(d, H_f, beta, eps)


def lemma1_resources(d: int, N: int) -> dict:
    """N, l, m, L_T of the E.1 construction: `theory.spec.lemma1_spec` (the builder's layout)."""
    sp = lemma1_spec(d, N, with_kappa=False)
    return {"N": sp.N, "l": sp.l, "m": sp.m, "L_T": sp.L_T}


def theorem2_resources(
    d: int, D: int, eps: float, C_M: int = 1, H_f: float = 1.0, beta: float = 1.0, mu: int | None = None
) -> dict:
    """Theorem 2's counts on any (d, D, C_M) from the builder's layout (`theory.spec.theorem2_counts`):
    δ_1 = ε/(2μ) (μ = C_M unless given: every chart may contain the point), N = Lemma 1's tight N for the
    chart constant H_f. For the atlases tmcheck builds use `theory.spec.theorem2_spec`, which takes
    C_M, μ and the chart constant from the atlas."""
    mu = C_M if mu is None else mu
    delta1 = eps / (2 * mu)
    N = tight_N(d, H_f, beta, delta1)
    heads, L_T, _ = theorem2_counts(Theorem2Layout(d, D, N, C_M), 1)
    return {
        "delta_1": delta1,
        "N": N,
        "l": Theorem2Layout(d, D, N, C_M).l,
        "m": max(n for _, n in heads),
        "L_T": L_T,
        "stated_order_l_m": d * eps ** (-d / beta),
    }


def theorem1_eps(n: float, d: float, beta: float = 1.0) -> float:
    """ε = n^{−β/(2β+d)}, the solution of ε² = ε^{−d/β}/n (F.1)."""
    return n ** (-beta / (2 * beta + d))


def theorem1_n_for_eps(eps: float, d: float, beta: float = 1.0) -> float:
    """The n that balances a target approximation error ε: n = ε^{−(2β+d)/β}."""
    return eps ** (-(2 * beta + d) / beta)


def theorem1_class(d: int, n: float, beta: float = 1.0, C_M: int = 1, M: float = 1.0, D: int = 1) -> TransformerClass:
    """The class F.1 plugs into Lemma 2: L_T = log d, L_FFN = log ε^{−1}, w <= 4 C_M, d_embd = 5,
    l, m <= C_M d ε^{−d/β}, κ <= (M C_M d ε^{−d/β})² (rounded up to integers, logs base 2)."""
    eps = theorem1_eps(n, d, beta)
    size = math.ceil(C_M * d * eps ** (-d / beta))
    return TransformerClass(
        L_T=max(1, math.ceil(math.log2(d))),
        L_FFN=max(1, math.ceil(math.log2(1 / eps))),
        w=4 * C_M,
        l=size,
        d_embd=5,
        m=size,
        kappa=float((M * size) ** 2),
        M=M,
        D=D,
    )


def theorem1_bound(
    d: int, n: float, beta: float = 1.0, D: int = 1, R: float = 1.0, C_M: int = 1, M: float = 1.0
) -> dict:
    """E||T̂_n − f||² <= 2ε² + (104R²/(3n)) log N(1/(4Rn)) + (4 + 1/(2R))/n (eq. 24-25, δ = 1/n),
    with log N as written and corrected, next to the stated rate D d² n^{−2β/(2β+d)}."""
    _pos("n", n)
    eps = theorem1_eps(n, d, beta)
    c = theorem1_class(d, n, beta, C_M, M, D)
    delta = 1 / (4 * R * n)
    tail = (4 + 1 / (2 * R)) / n
    out = {"eps": eps, "alpha_D": alpha_D(d, beta), "class": dict(c.__dict__), "bias": 2 * eps**2}
    for key, logn in (
        ("as_written", log_covering_as_written(c, delta)),
        ("corrected", log_covering_corrected(c, delta)),
    ):
        out[key] = {"log_N": logn, "variance": 104 * R**2 / (3 * n) * logn + tail}
        out[key]["total"] = out["bias"] + out[key]["variance"]
    out["stated_rate"] = D * d**2 * n ** (-2 * beta / (2 * beta + d))
    out["paper_simplified_log_N"] = paper_simplified_log_N(d, eps, n, beta, C_M, D)
    return out


def paper_simplified_log_N(d: int, eps: float, n: float, beta: float = 1.0, C_M: float = 1.0, D: int = 1) -> float:
    """The proof's simplified log N (F.1): 900 (log d)² log(60 d³ ε^{−4d/β} n) C_M³ D d ε^{−d/β} (0 at d = 1)."""
    if d <= 1:
        return 0.0
    return (
        900 * math.log(d) ** 2 * math.log(60 * d**3 * eps ** (-4 * d / beta) * n) * C_M**3 * D * d * eps ** (-d / beta)
    )
