"""Lemma 2 (Appendix F.2): the Lipschitz steps measured on members of 𝒯 with tmcheck's float64 backend.

`lipschitz.sweep` draws random and all-κ members of each class, perturbs them, and records measured / bound
for the paper's expressions and for theory.bounds' corrected ones; each class is one witness (ratio against
1 + 1e-9). The exact, per-inequality steps are in `proofs_check.lemma2`.
"""

from __future__ import annotations

import math

import numpy as np

from tmcheck.proofs_check import lipschitz
from tmcheck.proofs_check.registry import Evidence, Kind, Witness, obligation
from tmcheck.theory import bounds
from tmcheck.theory.network import Block, Head, Layer


def _lip_witnesses(rows: list[dict], key: str) -> list[Witness]:
    return [Witness({"class": r["class"]}, r[key], 1 + 1e-9, "<=") for r in rows]


@obligation(
    "lemma2.mha_lipschitz",
    "Appendix F.2, proof of Lemma 2: Lipschitz constant of MHA in H",
    "For ||H||∞, ||H'||∞ <= M: ||MHA(H) − MHA(H')||∞ <= 4 d_embd⁶ κ³ M² m l ||H − H'||∞.",
    "numeric search",
    "theory.bounds uses 3 m l d⁴ κ³ M² (smaller); the stated constant is valid.",
    kind=Kind.STEP,
)
def mha_lipschitz() -> Evidence:
    worst, rows = lipschitz.sweep(_sweep_classes(), seed=2, eta=1e-6, nets_per_class=1)
    return Evidence(
        f"{len(rows)} classes, random and all-κ members (float64 backend): measured/stated ratio against 1 + 1e-9",
        _lip_witnesses(rows, "mha_lip_paper"),
        note=f"Against the corrected 3 m l d⁴ κ³ M² the worst ratio is {worst.mha_lip_corr:.4g}. (The derivation's "
        "middle lines "
        "bound |<Qh', Kh'> − <Qh', Kh'>|, identically 0, where |<Qh', Kh'>| is meant; the final constant is "
        "still valid.)",
    )


KAPPAS, MS = (1e-3, 0.1, 1.0, 2.0), (0.5, 1.0, 10.0)


def _sweep_classes(kappas=KAPPAS, Ms=MS):
    out = []
    for LT in (1, 2, 3):
        for LF in (1, 2, 3):
            for kappa in kappas:
                for M in Ms:
                    out.append(bounds.TransformerClass(L_T=LT, L_FFN=LF, w=4, l=4, d_embd=3, m=2, kappa=kappa, M=M))
    # d_embd = w = 1: no d^{18L_T²} factor hides the tower M^{3^L_T} of the hidden states
    out += [
        bounds.TransformerClass(L_T=LT, L_FFN=1, w=1, l=1, d_embd=1, m=1, kappa=1.0, M=M)
        for LT in (2, 3)
        for M in (2.0, 3.0)
    ]
    return out


def zero_network_gap(kappa: float, eta: float) -> tuple[float, float]:
    """(|T(H) − T'(H)|, stated C_T η) for d = w = l = m = L_T = L_FFN = 1: T has all weights 0 (T(H) = H),
    T' equals T except its last FFN bias, which is η. Evaluated with tmcheck's float64 backend."""
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
    kind=Kind.STEP,
    satisfied={"kappas": (1.0, 1.5, 2.0, 3.0), "Ms": (0.5, 1.0, 5.0, 10.0), "tower": False},
)
def lipschitz_constant(kappas=KAPPAS, Ms=MS, tower: bool = True) -> Evidence:
    """Classes over κ in `kappas`, M in `Ms`; `tower`: include the d_embd = w = 1 classes with M > 1."""
    kappa_min = min(kappas)
    classes = [c for c in _sweep_classes(kappas, Ms) if tower or c.d_embd > 1]
    worst, rows = lipschitz.sweep(classes, seed=0, eta=1e-6, nets_per_class=2)
    written, corrected = _lip_witnesses(rows, "T_paper"), _lip_witnesses(rows, "T_corr")
    # the exact instance: all weights 0, T' with last bias η, at the smallest κ searched (0.01 at most)
    k0 = min(kappa_min, 0.01) if kappa_min <= 0.01 else kappa_min
    gap, ct = zero_network_gap(k0, 0.01)
    c = bounds.TransformerClass(L_T=1, L_FFN=1, w=1, l=1, d_embd=1, m=1, kappa=k0, M=1.0)
    at = {"class": dict(c.__dict__), "T": "all weights 0", "T_prime": "last FFN bias = eta", "eta": 0.01}
    written.append(Witness(at, gap, ct, "<="))
    corrected.append(Witness(at, gap, math.exp(bounds.corrected_lipschitz(c).log_CT) * 0.01 * (1 + 1e-9), "<="))
    return Evidence(
        f"{len(rows)} classes (L_T, L_FFN <= 3, κ in {list(kappas)}, M in {list(Ms)}, "
        "d_embd = 3"
        + (", and four with d_embd = w = 1" if tower else "")
        + "), random and all-κ members, η = 1e-6: |T − T'|/(C_T η) "
        "against 1 + 1e-9 (float64 backend)",
        written,
        corrected,
        "|T(x) − T'(x)| <= C_T η, C_T = Σ_k π_k Π_{j>k} Lip_j with Lip_j = (1 + Π_i n_i κ)(1 + 3 m l d⁴ κ³ M_{j−1}²), "
        "π_j the block perturbation bound and M_j = M_Z + y_L(M_Z), M_Z = M_{j−1} + m l d⁴ κ³ M_{j−1}³, M_0 = "
        "max(M, 1) "
        "(theory.bounds.corrected_lipschitz).",
        note=f"Worst ratio with the stated C_T {worst.T_paper:.3g}, with the corrected one {worst.T_corr:.3g}. The "
        "all-ones member "
        "of L_T = 3, L_FFN = d = w = l = m = 1, κ = 1, M = 2 has hidden states growing like M^(3^L_T) while "
        "C_T has M^(3L_T).",
        data={"worst": worst.__dict__},
    )


# why kept: an obligation is declared as data (id, place, claim, method, note, kind): alike in shape, each its own claim
@obligation(
    "lemma2.intermediate_inequalities_corrected",
    "Appendix F.2, proof of Lemma 2: the corrected intermediate bounds, measured",
    "(corrected forms) attention difference, MHA output, FFN output and block Lipschitz bounds of theory.bounds.",
    "numeric search",
    "theory.bounds.block_constants.",
    kind=Kind.STEP,
)
def intermediate_inequalities_corrected() -> Evidence:
    worst, rows = lipschitz.sweep(_sweep_classes(), seed=1, eta=1e-6, nets_per_class=1)
    keys = ("attn_corr", "mha_out_corr", "ffn_out_corr", "mha_lip_corr", "block_lip_corr", "T_corr")
    return Evidence(
        f"{len(rows)} classes × {len(keys)} corrected bounds, random and all-κ members (float64 backend): "
        "ratio against 1 + 1e-9",
        [Witness({"class": r["class"], "bound": k}, r[k], 1 + 1e-9, "<=") for r in rows for k in keys],
        note="Worst ratios: "
        + ", ".join(f"{k} {getattr(worst, k):.4g}" for k in keys)
        + ". MHA and FFN output bounds are attained (ratio 1) by the all-κ member at H = M_0.",
    )
