"""Gating FFNs (Appendix G, Lemma 4): zero the data rows of every token outside a prefix or a suffix.

The paper's FFN, taken literally, leaves -C v.I_t in the data rows of gated tokens (its second layer
subtracts C v.I_t from every token, but the first layer only added it to kept ones), and its
"FFN(h_t) = h_t" ignores the residual of Definition 3. `gating_ffn` is the corrected version with
block semantics; the as-written one lives in proofs_check.lemma4 with its counterexample.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tmcheck.theory.construction import Construction
from tmcheck.theory.heads import domain_bound
from tmcheck.theory.lemmas import sample_structured, standalone_network
from tmcheck.theory.network import INTERACTION, Layer, interaction_vectors, zeros
from tmcheck.theory.sparse import PositionalFFN, SparseBlock, realize

PI_LOWER = Fraction(314159265, 10**8)
KEEPS = ("prefix", "suffix")


def _reflect(a, u):
    """a reflected across the unit vector u: 2<a,u>u - a (rational when a, u are)."""
    dot = a[0] * u[0] + a[1] * u[1]
    return np.array([2 * dot * u[0] - a[0], 2 * dot * u[1] - a[1]], dtype=a.dtype)


def pivot(l: int, t_cut: int, keep: str = "prefix", arithmetic: str = "exact") -> np.ndarray:
    """The pivot vector v with v.I_t > 0 exactly on the kept tokens (0-based).

    keep="prefix" keeps t < t_cut, keep="suffix" keeps t >= t_cut. The paper's pivot is
    R_{π/2}(I_k + I_{k+1}) / ||I_k + I_{k+1}|| (R clockwise, paper's k = t_cut); we drop the
    normalisation (an irrational square root; C absorbs the scale). At t_cut = 0 or l the missing
    neighbour is the reflection of the next vector across the end one, one angle step beyond it.
    """
    if keep not in KEEPS:
        raise ValueError(f"keep must be one of {KEEPS}, got {keep!r}")
    if not 0 <= t_cut <= l:
        raise ValueError(f"t_cut must be in 0..{l}, got {t_cut}")
    I = interaction_vectors(l, arithmetic)
    one = Fraction(1) if arithmetic == "exact" else 1.0
    dt = object if arithmetic == "exact" else np.float64

    def vec(t):
        if 0 <= t < l:
            return I[:, t]
        if l == 1:  # one token at angle π/2: neighbours at angles 0 and π
            return np.array([one, 0 * one], dtype=dt) if t < 0 else np.array([-one, 0 * one], dtype=dt)
        return _reflect(I[:, 1], I[:, 0]) if t < 0 else _reflect(I[:, l - 2], I[:, l - 1])

    s = vec(t_cut - 1) + vec(t_cut)
    v = np.array([s[1], -s[0]], dtype=dt)  # clockwise quarter turn
    return v if keep == "prefix" else -v


def pivot_threshold(target, v: np.ndarray, I: np.ndarray, tokens) -> object:
    """The least C with C |v.I_t| >= target on every token in `tokens`: target / min_t |v.I_t| (the one
    pivot threshold; Lemma 4's gating and Lemma 5's shift FFN both use it)."""
    return target / min(abs(v[0] * I[0, t] + v[1] * I[1, t]) for t in tokens)


def gating_C(l: int, t_cut: int, keep: str, M, arithmetic: str = "exact"):
    """The exact smallest C: C |v.I_t| >= M for every token t (both sides must switch cleanly)."""
    return pivot_threshold(M, pivot(l, t_cut, keep, arithmetic), interaction_vectors(l, arithmetic), range(l))


def gating_ffn(l: int, t_cut: int, keep: str = "prefix", M=1, arithmetic: str = "exact") -> tuple[Layer, ...]:
    """A two-layer FFN, width 3, with z + FFN(z) = z on kept tokens and (0, 0, I_t, 1) on gated ones.

    For every structured z with |z_0|, |z_1| <= M (block semantics, Def. 3: B adds FFN(z) to z).
    Proof (corrected). Let s_t = v.I_t (`pivot`), C = M / min_t |s_t| (`gating_C`). Hidden units
        u_i = σ(-z_i - C s_t) (i = 0, 1),  u_2 = σ(-C s_t),  output rows 0-1: u_i - u_2, rows 2-4: 0.
    Kept (C s_t >= M >= -z_i): all three units are 0, so FFN(z) = 0.
    Gated (-C s_t >= M >= z_i): u_i = -z_i - C s_t and u_2 = -C s_t, so FFN(z)_i = -z_i.
    C is tight: for C < M / |s_t|, the token t with z_i = ±M breaks one of the two cases.
    The paper's proof bounds |v.I_t| >= sin(π/2l)/2 >= π/(8l) for its unit pivot, so C = 8lM/π.
    """
    M = Fraction(M) if arithmetic == "exact" else float(M)
    v = pivot(l, t_cut, keep, arithmetic)
    C = gating_C(l, t_cut, keep, M, arithmetic)
    one = Fraction(1) if arithmetic == "exact" else 1.0
    W1, b1 = zeros((3, 5), arithmetic), zeros((3,), arithmetic)
    for i in range(3):
        W1[i, INTERACTION] = -C * v
    W1[0, 0] = W1[1, 1] = -one
    W2, b2 = zeros((5, 3), arithmetic), zeros((5,), arithmetic)
    W2[0, 0] = W2[1, 1] = one
    W2[0, 2] = W2[1, 2] = -one
    return (Layer(W1, b1), Layer(W2, b2))


class GatingFFN(PositionalFFN):
    """`gating_ffn` as a positional FFN of the composition layer (`sparse.PositionalFFN`): the cut t_cut counts
    from the block's first token, and the pivot is taken among the l interaction vectors of the sequence."""

    rows = (0, 1)

    def __init__(self, t_cut: int, keep: str):
        self.t_cut, self.keep = t_cut, keep

    def layers(self, l: int, offset: int, M) -> tuple[Layer, ...]:
        return gating_ffn(l, self.t_cut + offset, self.keep, M)


def paper_kappa_bound(l: int, M) -> Fraction:
    """The proof's weight bound max(1, 8 l M / π) (identity entries and C), a rational upper bound."""
    return max(Fraction(1), 8 * l * Fraction(M) / PI_LOWER)


def gating(l: int, t_cut: int, keep: str = "prefix", M=1) -> Construction:
    """Lemma 4 (corrected) as a one-block construction: data rows outside the kept range become 0."""
    M = domain_bound(M)
    block = SparseBlock([], GatingFFN(t_cut, keep), M, name="gating")
    blocks, _ = realize([block], l, "exact")
    kept = (lambda t: t < t_cut) if keep == "prefix" else (lambda t: t >= t_cut)

    def expected(H):
        out = np.array(H, dtype=object)
        for t in range(l):
            if not kept(t):
                out[:, 0:2, t] = Fraction(0)
        return out

    return Construction(
        name=f"lemma4.gating.{keep}",
        paper="Appendix G, Lemma 4",
        network=standalone_network(l, blocks, {"name": "lemma4.gating", "t_cut": t_cut, "keep": keep}),
        claim=f"B(H) keeps tokens with t {'<' if keep == 'prefix' else '>='} {t_cut} and zeroes the data rows of the "
        "others, "
        f"for structured H with ||H||_inf <= {M} (0-based)",
        sample_inputs=lambda rng, n: sample_structured(rng, n, l, M),
        expected=expected,
        constants={
            "C": gating_C(l, t_cut, keep, M),
            "M": M,
            "t_cut": t_cut,
            "keep": keep,
            "pivot": pivot(l, t_cut, keep),
        },
        stated_kappa_bound=paper_kappa_bound(l, M),
        stated_resources={"L_T": 1, "m": 0, "L_FFN": 2, "l": l},
        sparse_blocks=[block],
    )
