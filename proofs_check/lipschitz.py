"""Empirical check of the central step of Lemma 2's proof (Appendix F.2): |T(x) − T'(x)| <= C_T η.

Networks of 𝒯(L_T, L_FFN, w, l, d_embd, m, R, κ) are drawn in float64 (weights uniform in [−κ, κ],
plus the extremal member with every weight κ), perturbed to θ' with ||θ − θ'||∞ <= η (clipped back
into [−κ, κ], so θ' is in the class too), and evaluated with tmcheck's own backend
(`theory.backends.block`, `mha`, `ffn`; blocks of any d_embd). Inputs are hidden matrices H_0 with
entries in [−M_0, M_0], M_0 = `bounds.input_bound`: a superset of {PE + E(x)}, and every step of the
proof only uses ||H_0||∞ <= M_0. For each network we record the ratio measured / bound for

* the attention difference ||A_1(H) − A_2(H)||∞ (paper: 3κ³d⁶M³lη),
* the MHA output ||H + MHA(H)||∞ (paper: M + m l d⁶ κ³ M),
* the FFN output ||FFN(Z)||∞ (paper: (κd²)^{L−1} M' + κ(κd²)^{L−2}, at M' = max|Z|),
* the MHA Lipschitz constant ||MHA(H) − MHA(H')||/||H − H'|| (paper: 4 d⁶ κ³ M² m l),
* the block Lipschitz constant ||B(H) − B(H')||/||H − H'|| (paper: 8 w^{2L} κ^L d⁶ κ³ M² m l),
* the whole network |T(H_0) − T'(H_0)| / (C_T η) with Lemma 2's C_T,

each against the paper's expression and against the corrected one of `theory.bounds`. A ratio
above 1 is a counterexample to that inequality.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tmcheck.theory import bounds
from tmcheck.theory.backends import ELEMENT_BUDGET, FloatBackend, block, ffn, mha
from tmcheck.theory.network import Block, Head, Layer

_BE = FloatBackend()
_BUDGET = ELEMENT_BUDGET["float64"]
DECODER = (0, -1)  # Definition 1: first element of the last column


def draw_blocks(rng: np.random.Generator, c: bounds.TransformerClass, extremal: bool = False) -> list[Block]:
    """A member of the class: weights uniform in [−κ, κ], or all equal to κ when extremal."""

    def w(*shape):
        if extremal:
            return np.full(shape, float(c.kappa))
        return rng.uniform(-c.kappa, c.kappa, size=shape)

    d, dims = c.d_embd, c.ffn_dims
    return [
        Block(
            tuple(Head(w(d, d), w(d, d), w(d, d)) for _ in range(c.m)),
            tuple(Layer(w(dims[i + 1], dims[i]), w(dims[i + 1])) for i in range(len(dims) - 1)),
        )
        for _ in range(c.L_T)
    ]


def perturb(rng: np.random.Generator, blocks: list[Block], eta: float, kappa: float) -> list[Block]:
    """θ' = clip(θ ± η, −κ, κ) entrywise with random signs: ||θ − θ'||∞ <= η and θ' in the class."""

    def p(a):
        return np.clip(a + eta * rng.choice([-1.0, 1.0], size=a.shape), -kappa, kappa)

    return [
        Block(tuple(Head(p(h.Q), p(h.K), p(h.V)) for h in b.heads), tuple(Layer(p(x.W), p(x.b)) for x in b.ffn))
        for b in blocks
    ]


def draw_inputs(rng: np.random.Generator, c: bounds.TransformerClass, n: int) -> np.ndarray:
    """n hidden matrices (n, d_embd, l) with entries in [−M_0, M_0]; the first is all M_0 (a corner)."""
    M0 = bounds.input_bound(c)
    H = rng.uniform(-M0, M0, size=(n, c.d_embd, c.l))
    H[0] = M0
    return H


def forward(blocks: list[Block], H: np.ndarray) -> np.ndarray:
    for blk in blocks:
        H = block(blk, H, _BE, _BUDGET)
    return H


def _ratio(measured: float, log_bound: float) -> float:
    if measured == 0:
        return 0.0
    x = math.log(measured) - log_bound
    return math.inf if x > 709 else math.exp(x)  # beyond float64: the bound is off by more than 1e308


@dataclass
class Ratios:
    """measured / bound (paper's expression and corrected one); > 1 refutes that bound."""

    # why kept: one ratio per bound and version (paper, corrected): fields alike in shape, each its own bound
    attn_paper: float = 0.0
    attn_corr: float = 0.0
    mha_out_paper: float = 0.0
    mha_out_corr: float = 0.0
    ffn_out_paper: float = 0.0
    ffn_out_corr: float = 0.0
    mha_lip_paper: float = 0.0
    mha_lip_corr: float = 0.0
    block_lip_paper: float = 0.0
    block_lip_corr: float = 0.0
    T_paper: float = 0.0
    T_corr: float = 0.0

    def worst(self, other: Ratios) -> Ratios:
        return Ratios(**{k: max(v, getattr(other, k)) for k, v in self.__dict__.items()})


def paper_logs(c: bounds.TransformerClass, M: float, M_ffn_in: float) -> dict[str, float]:
    """The paper's intermediate bounds (F.2) for inputs bounded by M, as natural logs (per η where relevant)."""
    lk, ld, lw, L = math.log(c.kappa), math.log(c.d_embd), math.log(c.w), c.L_FFN
    lml = math.log(c.m) + math.log(c.l)
    ffn_out = (L - 1) * (lk + 2 * ld) + math.log(M_ffn_in)
    if L >= 2:
        ffn_out = bounds.log_sum_exp(ffn_out, lk + (L - 2) * (lk + 2 * ld))
    return {
        "attn": math.log(3) + 3 * lk + 6 * ld + 3 * math.log(M) + math.log(c.l),
        "mha_out": bounds.log_sum_exp(math.log(M), lml + 6 * ld + 3 * lk + math.log(M)),
        "ffn_out": ffn_out,
        "mha_lip": math.log(4) + 6 * ld + 3 * lk + 2 * math.log(M) + lml,
        "block_lip": math.log(8) + 2 * L * lw + L * lk + 6 * ld + 3 * lk + 2 * math.log(M) + lml,
    }


def measure(
    c: bounds.TransformerClass, rng: np.random.Generator, eta: float, n_inputs: int = 16, extremal: bool = False
) -> Ratios:
    """All ratios for one network of the class and one perturbation of it."""
    net = draw_blocks(rng, c, extremal)
    net2 = perturb(rng, net, eta, c.kappa)
    H = draw_inputs(rng, c, n_inputs)
    M0 = bounds.input_bound(c)
    corr = bounds.block_constants(c, math.log(M0))
    r = Ratios()
    # attention difference, one head at a time (first block, inputs bounded by M0)
    worst_attn = max(
        float(np.abs(mha((h1,), H, _BE, _BUDGET) - mha((h2,), H, _BE, _BUDGET)).max())
        for h1, h2 in zip(net[0].heads, net2[0].heads, strict=True)
    )
    Z = H + mha(net[0].heads, H, _BE, _BUDGET)
    mz = float(np.abs(Z).max())
    pl = paper_logs(c, M0, mz)
    r.attn_paper = _ratio(worst_attn, pl["attn"] + math.log(eta))
    r.attn_corr = _ratio(worst_attn, corr.log_attn_diff + math.log(eta))
    r.mha_out_paper = _ratio(mz, pl["mha_out"])
    r.mha_out_corr = _ratio(mz, corr.log_M_Z)
    fo = float(np.abs(ffn(net[0].ffn, Z, _BE)).max())
    r.ffn_out_paper = _ratio(fo, pl["ffn_out"])
    r.ffn_out_corr = _ratio(fo, bounds.log_ffn_output_bound(c, math.log(mz)))
    # block Lipschitz: a nearby H' inside the same ball
    Hp = np.clip(H + rng.uniform(-1e-3, 1e-3, size=H.shape) * M0, -M0, M0)
    dH = float(np.abs(H - Hp).max())
    mlip = float(np.abs(mha(net[0].heads, H, _BE, _BUDGET) - mha(net[0].heads, Hp, _BE, _BUDGET)).max()) / dH
    r.mha_lip_paper = _ratio(mlip, pl["mha_lip"])
    r.mha_lip_corr = _ratio(mlip, corr.log_mha_lip)
    lip = float(np.abs(forward(net[:1], H) - forward(net[:1], Hp)).max()) / dH
    r.block_lip_paper = _ratio(lip, pl["block_lip"])
    r.block_lip_corr = _ratio(lip, corr.log_block_lip)
    # the whole network at the decoder entry
    dT = float(np.abs(forward(net, H)[:, DECODER[0], DECODER[1]] - forward(net2, H)[:, DECODER[0], DECODER[1]]).max())
    r.T_paper = _ratio(dT, bounds.log_CT_statement(c) + math.log(eta))
    r.T_corr = _ratio(dT, bounds.corrected_lipschitz(c).log_CT + math.log(eta))
    return r


def sweep(classes, seed: int = 0, eta: float = 1e-6, nets_per_class: int = 3) -> tuple[Ratios, list[dict]]:
    """Worst ratios over random and extremal members of each class; also each class's own worst."""
    rng = np.random.default_rng(seed)
    worst, rows = Ratios(), []
    for c in classes:
        mine = Ratios()
        for k in range(nets_per_class + 1):
            mine = mine.worst(measure(c, rng, eta, extremal=(k == 0)))
        worst = worst.worst(mine)
        rows.append({"class": dict(c.__dict__), **mine.__dict__})
    return worst, rows
