"""Sup-norm certificates (issue #41, item 3): sup_x |T(x) - f(x)| over a whole domain, proven.

A sampled maximum of |T - f| is a lower bound on the sup (Section 2.4's "error <= ε" is a sup). Here the
network and the target are enclosed on boxes ("cells") by sound float64 arithmetic (`certify_arith.Aff`:
affine forms with outward-rounded remainders; the target by mpmath's interval arithmetic), and a branch
and bound splits every cell whose bound exceeds ε until each cell's bound is <= ε ("proven") or the
enclosure at a cell's centre point shows |T - f| > ε there ("refuted", with that point); a cell budget
ends it as "undecided". Every cell is either proven, split into halves that cover it, or a counterexample:
no part of the domain is skipped. A cell's parts inherit every token its pass left narrower than ε/(100 l) and
recompute the others (`freeze`, `certify_tiles`), so deep cells cost what their few live tokens cost.

An FFN whose first layer reads one data row r (every FFN of Lemma 1 and Theorem 2: the ψ, mailbox and indicator
FFNs read row 1) is a continuous piecewise-linear function of r, computed exactly once (`PiecewiseLinear`: its
breakpoints, values and slopes) and enclosed on a cell as λ r + [m] with m the range of h - λ r over r's range,
read at the ends and at the breakpoints inside (`_scalar_ffn_enclosure`). Every ReLU case is then exact: on one
piece it is that piece's line, across one kink the chord, across several the function's own range (λ = 0). A
chord per ReLU (the general path below) charged each of ψ's four units the width of ψ's argument 3(N - 1)(z - t_j):
at the circle's proven N = 425 a θ-tile of width 2π/512 left ψ (which lies in [0, 1]) about 31 wide, past the copy
block's data bound, so no tile got beyond block 2.
Inside any other FFN each data row's remainder is a direction of its own (`_ffn_enclosure`): the constructions'
FFNs add and take away the same quantity (Theorem 2's mailbox writes (1 + b)σ(r - 1) - bσ(r) and clears row 1 by
r - σ(r); its indicator is σ(y) - σ(y - 1) after L doublings), and a remainder charged once per unit made the
enclosure of T - f on the circle about 10^6 w² wide on cells of width w; with the lift it is at most about 10 w.

The network pass is structured like `fast_eval`, but nothing is taken from the build plan: which token
pairs can have a non-zero ReLU score is derived from the weights (`locality`), and its hypothesis, a
bound on the data rows, is checked on every cell's enclosure.

Locality (from the weights). A head's score is h_k^T A h_t with A = K^T Q, t the query and k the key
token. Rows 2-4 of every token are its positional rows P_t = (I_t, 1) (no head's V and no FFN's last layer
writes them: checked), so with data rows D (0-1)
    score(t, k) = F(t, k) + b(t, k),  F(t, k) = P_k^T A_FF P_t,  |b(t, k)| <= B(M) = Σ_{a or b ∈ D} |A_ab| m_a m_b
on tokens with |D| <= M (m = (M, M, 1, 1, 1); |I_t| entries <= 1 is checked). When A_FF has no cross terms
between I and the constant and its I-block is rank one, p q^T, F(t, k) = β_k α_t + γ with α_t = q·I_t,
β_k = p·I_k. Let C' = -γ - B(M_cap) > 0 and θ_α = C'/max|β|, θ_β = C'/max|α|. A pair outside
{t: |α_t| >= θ_α} x {k: |β_k| >= θ_β} has |α_t β_k| < C', so its score is < 0 and σ gives exactly 0 on
every input with |D| <= M_cap. Those few pairs (for a Lemma 3 head: the intended pair and its angular
neighbours) are the only ones evaluated; α and β are computed in float64 with their rounding bounded.
M_cap = 2 M (M the block's bound in meta.interaction_pattern, used only as this cap) leaves the float
enclosures room above M. A head of another shape is refused unless its Q and K read only the constant row
(a constant score, as the sum head).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from tmcheck.theory.certify_arith import (
    TINY,
    Aff,
    CertifyError,
    PiecewiseLinear,
    TargetEnclosure,
    U,
    down,
    frac_interval,
    rounding_gamma,
    scatter_add,
    up,
)
from tmcheck.theory.network import Network, to_fraction

MAX_PAIRS_PER_HEAD = 64  # a head whose certificate leaves more candidate pairs is refused
METHOD = "interval arithmetic (affine forms, outward-rounded float64; mpmath intervals for f) with branch and bound"


def _exact(arr) -> np.ndarray:
    a = np.asarray(arr, dtype=object)
    out = np.empty(a.shape, dtype=object)
    out.reshape(-1)[:] = [to_fraction(v) for v in a.reshape(-1)]
    return out


def _interval_pair(values) -> tuple[np.ndarray, np.ndarray]:
    return frac_interval(np.asarray(values, dtype=object))


@dataclass
class HeadTerms:
    """The candidate pairs of a block's heads and each pair's exact coefficients (as float intervals)."""

    t: np.ndarray  # query tokens (P,)
    k: np.ndarray  # key tokens (P,)
    score: list  # (kind, i, j, lo, hi): kind "c" constant, "k" D_k[i], "t" D_t[j], "kt" D_k[i] D_t[j]
    value: list  # per data row r: list of ("c", lo, hi) or ("k", j, lo, hi)


@dataclass
class BlockPlan:
    M_cap: float
    sparse: HeadTerms | None
    const: list = field(default_factory=list)  # per constant-score head: value coefficients (2 rows)
    ffn: list = field(default_factory=list)  # [(W float, blo, bhi)], first layer: (W_data, const lo, hi (w, l))
    scalar: PiecewiseLinear | None = None  # the FFN as exact functions of the one data row it reads, if it reads one


def _fixed_rows(net: Network) -> np.ndarray:
    """P (3, l) exact: rows 2-4 of every token, checked to be interaction entries in [-1, 1] and the constant 1."""
    P = _exact(net.PE)[2:5]
    E = _exact(net.E)
    if any(v != 0 for v in E[2:5, 0]):
        raise CertifyError("the embedding writes rows 2-4; the certificate needs them positional")
    if any(abs(v) > 1 for v in P[0:2].reshape(-1)) or any(v != 1 for v in P[2]):
        raise CertifyError("positional rows are not structured (|I_t| entries <= 1, row 4 = 1)")
    return P


def locality(
    A: np.ndarray, P: np.ndarray, M_cap: Fraction, I: np.ndarray | None = None
) -> list[tuple[int, int]] | None:
    """The (query, key) pairs whose score can be positive when |rows 0-1| <= M_cap (module docstring); None
    for a head of another shape. A: K^T Q exact (5, 5); P: fixed rows (3, l) exact; I: P[0:2] rounded to
    float64 (computed here when not given)."""
    if any(A[a, 4] != 0 or A[4, a] != 0 for a in (2, 3)):
        return None
    AI = A[2:4, 2:4]
    if AI[0, 0] * AI[1, 1] != AI[0, 1] * AI[1, 0]:
        return None
    m = (M_cap, M_cap, 1, 1, 1)
    nonzero = [(a, b) for a in range(5) for b in range(5) if (a < 2 or b < 2) and A[a, b] != 0]
    bound = sum((abs(A[a, b]) * m[a] * m[b] for a, b in nonzero), Fraction(0))
    C = -A[4, 4] - bound
    if C <= 0:
        return None
    nz = [(i, j) for i in range(2) for j in range(2) if AI[i, j] != 0]
    if not nz:
        return []
    i0, j0 = nz[0]
    p, q = AI[:, j0], AI[i0, :] / AI[i0, j0]  # AI = p q^T (rank one, checked above)
    if I is None:
        I = np.array([[float(v) for v in row] for row in P[0:2]])  # (2, l), round-to-nearest

    def proj(w):
        wf = np.array([float(v) for v in w])
        err = 5 * U * float(sum(abs(v) for v in w)) + 1e-300
        return wf @ I, err

    alpha, ea = proj(q)
    beta, eb = proj(p)
    Cf = float(C) * (1 - 2 * U)
    amax, bmax = up(np.abs(alpha).max() + ea), up(np.abs(beta).max() + eb)
    th_a, th_b = down(down(Cf / bmax) * (1 - 2 * U)), down(down(Cf / amax) * (1 - 2 * U))
    T = np.flatnonzero(up(np.abs(alpha) + ea) >= th_a)
    K = np.flatnonzero(up(np.abs(beta) + eb) >= th_b)
    return [(int(t), int(k)) for t in T for k in K]


def _head_kernel(Q: np.ndarray, K: np.ndarray) -> np.ndarray:
    """A = K^T Q (5, 5) from the exact Q and K."""
    qs = [(r, b, Q[r, b]) for r in range(5) for b in range(5) if Q[r, b] != 0]
    A = np.full((5, 5), Fraction(0), dtype=object)
    for r, a in zip(*np.nonzero(K != 0), strict=True):
        for rq, b, q in qs:
            if rq == r:
                A[a, b] += K[r, a] * q
    return A


def _terms(A: np.ndarray) -> dict:
    """The non-zero entries of a kernel that `_head_terms` reads, per coefficient (each a list of (a, b, A_ab))."""
    out = {"c": [(a, b, A[a + 2, b + 2]) for a in range(3) for b in range(3) if A[a + 2, b + 2] != 0]}
    for i in range(2):
        out[f"k{i}"] = [(b, A[i, b + 2]) for b in range(3) if A[i, b + 2] != 0]
        out[f"t{i}"] = [(a, A[a + 2, i]) for a in range(3) if A[a + 2, i] != 0]
    return out


def _head_terms(pairs: list, kernels: list, values: list, P: np.ndarray) -> HeadTerms:
    """Exact coefficients of every candidate pair: score = c0 + Σ α_i D_k[i] + Σ β_j D_t[j] + Σ A_ij D_k[i] D_t[j],
    (V h_k)_r = g_r + Σ_j V_rj D_k[j] for r in the data rows."""
    rows = {key: [] for key in ("c", "k0", "k1", "t0", "t1", "kt00", "kt01", "kt10", "kt11", "g0", "g1")}
    rows.update({f"v{r}{j}": [] for r in range(2) for j in range(2)})
    ts, ks = [], []
    compiled: dict = {}  # id of a kernel (each head's, shared by its pairs) -> its non-zero terms
    zero = Fraction(0)
    for (t, k), A, V in zip(pairs, kernels, values, strict=True):
        Pt, Pk = P[:, t], P[:, k]
        ts.append(t)
        ks.append(k)
        if id(A) not in compiled:
            vt = [[(b, V[i, b + 2]) for b in range(3) if V[i, b + 2] != 0] for i in range(2)]
            compiled[id(A)] = (_terms(A), vt, A)  # A kept alive so that its id is not reused
        tm, vt, _ = compiled[id(A)]
        rows["c"].append(sum((Pk[a] * w * Pt[b] for a, b, w in tm["c"]), zero))
        for i in range(2):
            rows[f"k{i}"].append(sum((w * Pt[b] for b, w in tm[f"k{i}"]), zero))
            rows[f"t{i}"].append(sum((Pk[a] * w for a, w in tm[f"t{i}"]), zero))
            rows[f"g{i}"].append(sum((w * Pk[b] for b, w in vt[i]), zero))
            for j in range(2):
                rows[f"kt{i}{j}"].append(A[i, j])
                rows[f"v{i}{j}"].append(V[i, j])
    iv = {key: _interval_pair(vals) for key, vals in rows.items() if any(v != 0 for v in vals)}
    score = [("c", None, None, *iv["c"])] if "c" in iv else []
    score += [("k", i, None, *iv[f"k{i}"]) for i in range(2) if f"k{i}" in iv]
    score += [("t", None, i, *iv[f"t{i}"]) for i in range(2) if f"t{i}" in iv]
    score += [("kt", i, j, *iv[f"kt{i}{j}"]) for i in range(2) for j in range(2) if f"kt{i}{j}" in iv]
    value = []
    for r in range(2):
        terms = [("c", None, *iv[f"g{r}"])] if f"g{r}" in iv else []
        terms += [("k", j, *iv[f"v{r}{j}"]) for j in range(2) if f"v{r}{j}" in iv]
        value.append(terms)
    return HeadTerms(np.array(ts, dtype=np.int64), np.array(ks, dtype=np.int64), score, value)


def prepare_certificate(net: Network) -> list[BlockPlan]:
    """Per block: the certified candidate pairs with their coefficients, the constant-score heads, the FFN."""
    P = _fixed_rows(net)
    pattern = net.meta.get("interaction_pattern")
    if pattern is None or len(pattern) != len(net.blocks):
        raise CertifyError("the network has no per-block data bound (meta.interaction_pattern)")
    if net.decoder[0] not in (0, 1):
        raise CertifyError("the decoder reads a positional row")
    plans = []
    I = np.array([[float(v) for v in row] for row in P[0:2]])
    for blk, pat in zip(net.blocks, pattern, strict=True):
        M_cap = 2 * Fraction(pat["M"])
        pairs, kernels, values, const = [], [], [], []
        for h in blk.heads:
            V = _exact(h.V)
            if any(v != 0 for v in V[2:5].reshape(-1)):
                raise CertifyError("a head writes rows 2-4")
            Q, K = _exact(h.Q), _exact(h.K)
            if not any(v != 0 for v in np.concatenate([Q[:, :4], K[:, :4]]).reshape(-1)):
                s = sum(Q[r, 4] * K[r, 4] for r in range(5))
                if s > 0:
                    const.append(_interval_pair(V[0:2] * s))
                continue
            A = _head_kernel(Q, K)
            near = locality(A, P, M_cap, I)
            if near is None:
                raise CertifyError("a head is neither an interaction head (rank-one positional kernel) nor constant")
            if len(near) > MAX_PAIRS_PER_HEAD:
                raise CertifyError(f"a head's certificate leaves {len(near)} candidate pairs")
            for pr in near:
                pairs.append(pr)
                kernels.append(A)
                values.append(V)
        sparse = _head_terms(pairs, kernels, values, P) if pairs else None
        plans.append(
            BlockPlan(float(M_cap) * (1 - 4 * U), sparse, const, _cert_ffn_plan(blk.ffn, P), _scalar_ffn(blk.ffn))
        )
    return plans


def _scalar_ffn(layers) -> PiecewiseLinear | None:
    """The FFN as `PiecewiseLinear` when its first layer reads one data row and no interaction row (its bias is then
    the same on every token), else None."""
    if not layers:
        return None
    W, b = _exact(layers[0].W), _exact(layers[0].b)
    reads = [c for c in range(4) if any(v != 0 for v in W[:, c])]
    if len(reads) > 1 or any(c in (2, 3) for c in reads):
        return None
    c = reads[0] if reads else 0
    exact = [(W, W[:, 4] + b)] + [(_exact(lay.W), _exact(lay.b)) for lay in layers[1:]]
    exact[-1] = (exact[-1][0][0:2], exact[-1][1][0:2])
    return PiecewiseLinear.of(exact, c)


def _cert_ffn_plan(layers, P: np.ndarray) -> list:
    if not layers:
        return []
    last = _exact(layers[-1].W)
    if any(v != 0 for v in last[2:5].reshape(-1)) or any(v != 0 for v in _exact(layers[-1].b)[2:5]):
        raise CertifyError("an FFN writes rows 2-4")
    out = []
    for i, lay in enumerate(layers):
        W, b = _exact(lay.W), _exact(lay.b)
        if i == len(layers) - 1:
            W, b = W[0:2], b[0:2]
        if i == 0:
            fixed = W[:, 4:5] + b[:, None]  # the positional part W[:, 2:5] P + b (w, l), exact
            if any(v != 0 for v in W[:, 2:4].reshape(-1)):
                lo, hi = _interval_pair(W[:, 2:4].dot(P[0:2]) + fixed)
            else:  # the same on every token
                lo, hi = (np.repeat(v, P.shape[1], axis=1) for v in _interval_pair(fixed))
            out.append((np.array([[float(v) for v in r] for r in W[:, 0:2]]), lo, hi))
        else:
            lo, hi = _interval_pair(b)
            out.append((np.array([[float(v) for v in r] for r in W]), lo, hi))
    return out


# --------------------------------------------------------------------------------------------
# the pass


def _stack(parts: list[Aff], axis: int) -> Aff:
    axis = axis % (parts[0].c.ndim + 1)
    return Aff(
        np.stack([p.c for p in parts], axis),
        np.stack([p.g for p in parts], axis + 1),
        np.stack([p.lo for p in parts], axis),
        np.stack([p.hi for p in parts], axis),
    )


@dataclass
class Embedding:
    """H_0's data rows as float data: U (l, D) (checked float-exact), E's rows 0-1 and PE's rows 0-1 as intervals."""

    U: np.ndarray
    E: list  # per data row r: (lo, hi) of E[r, 0]
    PE: tuple[np.ndarray, np.ndarray]  # (2, l) each

    @classmethod
    def of(cls, net: Network) -> Embedding:
        Ue = _exact(net.U)
        if any(Fraction(float(v)) != v for v in Ue.reshape(-1)):
            raise CertifyError("embedding U is not float-exact")
        E = _exact(net.E)
        U = np.array([[float(v) for v in r] for r in Ue]).reshape(net.l, -1)
        return cls(
            U, [tuple(v[0] for v in _interval_pair([E[r, 0]])) for r in range(2)], _interval_pair(_exact(net.PE)[0:2])
        )


def embed_cell(net: Network, x: Aff, tokens: np.ndarray, emb: Embedding | None = None) -> Aff:
    """Data rows of H_0 = E'(Ux)^T + PE at the given tokens: (B, 2, n) from x (B, D)."""
    emb = Embedding.of(net) if emb is None else emb
    Ux = x.lincomb(emb.U[tokens], axis=1)  # (B, n)
    rows = []
    for r in range(2):
        elo, ehi = emb.E[r]
        rows.append(Ux.scale(elo, ehi).add_interval(emb.PE[0][r, tokens], emb.PE[1][r, tokens]))
    return _stack(rows, 1)


def _heads(sp: HeadTerms, H: Aff) -> list[Aff]:
    """The candidate pairs' contributions σ(score) (V h_k)_r, r = 0, 1: (B, P) each (None when zero)."""
    Dk, Dt = H[:, :, sp.k], H[:, :, sp.t]
    k = H.k
    score = Aff.zeros(Dk.c[:, 0].shape, k)
    for kind, i, j, lo, hi in sp.score:
        if kind == "c":
            score = score.add_interval(lo, hi)
        elif kind == "k":
            score = score.add(Dk[:, i].scale(lo, hi))
        elif kind == "t":
            score = score.add(Dt[:, j].scale(lo, hi))
        else:
            score = score.add(Dk[:, i].mul(Dt[:, j]).scale(lo, hi))
    gate = score.relu()
    out = []
    for terms in sp.value:
        if not terms:
            out.append(None)
            continue
        v = Aff.zeros(score.c.shape, k)
        for term in terms:
            v = v.add_interval(term[2], term[3]) if term[0] == "c" else v.add(Dk[:, term[1]].scale(term[2], term[3]))
        out.append(gate.mul(v))
    return out


@dataclass
class Frozen:
    """What a cell inherits from a cell containing it (every enclosure of the larger cell holds on the smaller).

    Per stage s (0: after the embedding; b + 1: after block b): `active[s]` (sorted) are the tokens recomputed on
    the cell; every other token that is read takes the interval `[lo[s][:, t], hi[s][:, t]]` of the containing
    cell's pass, and the constant-score heads take `[sum_lo[s], sum_hi[s]]`, the sum of those intervals over all tokens
    not in active[s]. The root (`Frozen.root`) recomputes every token; only it may check the data bound of the
    tokens that no later stage reads (`run_pass`)."""

    active: list[np.ndarray]
    lo: list[np.ndarray]  # (2, l) per stage
    hi: list[np.ndarray]
    sum_lo: list[np.ndarray]  # (2,) per stage
    sum_hi: list[np.ndarray]

    @classmethod
    def root(cls, l: int, stages: int) -> Frozen:
        z2, zl = np.zeros(2), np.zeros((2, l))
        return cls([np.arange(l)] * stages, [zl] * stages, [zl] * stages, [z2] * stages, [z2] * stages)


def needed_tokens(net: Network, plans: list[BlockPlan]) -> list[np.ndarray]:
    """Per stage, the tokens the decoder's value can depend on (backwards through the candidate pairs, each token's
    own update and the constant-score heads, which read every token): (l,) bool each."""
    l = net.l
    need = np.zeros(l, bool)
    need[net.decoder[1]] = True
    out = [need]
    for plan in reversed(plans):
        prev = need.copy()
        if plan.sparse is not None:
            prev[plan.sparse.k[need[plan.sparse.t]]] = True
        if plan.const and need.any():
            prev[:] = True
        out.append(prev)
        need = prev
    return out[::-1]


def freeze(
    states: list[Aff], tokens: list[np.ndarray], j: int, parent: Frozen, needed: list, tol: float, upto: int = -1
) -> Frozen:
    """The inheritance of cell j of a pass (`run_pass` with `parent`): a token whose enclosure on the cell is an
    interval narrower than tol in both data rows keeps that interval; the others that some stage needs are
    recomputed on sub-cells. Any choice would be sound (the cell's enclosures hold on its sub-cells); this one
    recomputes only what a smaller cell can tighten. Only stages 0..upto are taken from this pass (upto: the
    number of blocks whose data bounds held on the cell, the stages after them are not enclosures; -1: all);
    later stages keep the parent's inheritance."""
    active, los, his, slo, shi = [], [], [], [], []
    for s, (H, idx) in enumerate(zip(states, tokens, strict=True)):
        if 0 <= upto < s:
            active.append(parent.active[s])
            los.append(parent.lo[s])
            his.append(parent.hi[s])
            slo.append(parent.sum_lo[s])
            shi.append(parent.sum_hi[s])
            continue
        lo, hi = H[j].bounds()  # (2, n)
        tight = (hi - lo).max(axis=0) <= tol
        active.append(idx[~tight & needed[s][idx]])
        flo, fhi = parent.lo[s].copy(), parent.hi[s].copy()
        flo[:, idx], fhi[:, idx] = lo, hi
        los.append(flo)
        his.append(fhi)
        gone = ~np.isin(idx, active[-1])
        n = int(gone.sum()) + 2
        sl, sh = lo[:, gone].sum(axis=1), hi[:, gone].sum(axis=1)
        pad = rounding_gamma(n) * (np.abs(lo[:, gone]) + np.abs(hi[:, gone])).sum(axis=1)
        slo.append(down(down(sl + parent.sum_lo[s]) - pad))
        shi.append(up(up(sh + parent.sum_hi[s]) + pad))
    return Frozen(active, los, his, slo, shi)


def _gather(H: Aff, have: np.ndarray, want: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> Aff:
    """The data rows of tokens `want` (sorted): from H (over the sorted tokens `have`) where computed, else the
    inherited interval [lo, hi] (2, l)."""
    pos = np.minimum(np.searchsorted(have, want), max(len(have) - 1, 0))
    inside = have[pos] == want if len(have) else np.zeros(len(want), bool)
    if inside.all():
        return H[:, :, pos]
    B = H.c.shape[0]
    shape = (B, 2, len(want))
    out = Aff.interval(np.broadcast_to(lo[:, want], shape), np.broadcast_to(hi[:, want], shape), H.k)
    p = pos[inside]
    out.c[:, :, inside], out.g[:, :, :, inside] = H.c[:, :, p], H.g[:, :, :, p]
    out.lo[:, :, inside], out.hi[:, :, inside] = H.lo[:, :, p], H.hi[:, :, p]
    return out


def _select(sp: HeadTerms, mask: np.ndarray, t: np.ndarray, k: np.ndarray) -> HeadTerms:
    """The candidate pairs `mask` of sp, with query and key renumbered t, k."""
    score = [(kind, i, j, lo[mask], hi[mask]) for kind, i, j, lo, hi in sp.score]
    value = [[(*term[:-2], term[-2][mask], term[-1][mask]) for term in terms] for terms in sp.value]
    return HeadTerms(t, k, score, value)


def run_block(
    plan: BlockPlan, H: Aff, have: np.ndarray, out: np.ndarray, frozen: Frozen, s: int
) -> tuple[Aff, np.ndarray]:
    """One block: from the data rows (B, 2, n) of the tokens `have` at stage s (the others inherited from `frozen`) to
    those of the tokens `out` at stage s + 1; also which inputs met the block's data bound (B,) bool, checked on every
    token the block reads (the root pass reads all)."""
    sp = plan.sparse
    if sp is not None:
        mask = np.isin(sp.t, out)
        read = np.union1d(out, sp.k[mask])
        X = _gather(H, have, read, frozen.lo[s], frozen.hi[s])
        # the data bound is the hypothesis of the locality certificate: only blocks with candidate pairs need it
        ok = X.absmax().max(axis=(1, 2), initial=0.0) <= plan.M_cap
        rows = X[:, :, np.searchsorted(read, out)]
        rows = [rows[:, 0], rows[:, 1]]
        sub = _select(sp, mask, np.searchsorted(read, sp.t[mask]), np.searchsorted(read, sp.k[mask]))
        into = np.searchsorted(out, sp.t[mask])
        for r, contrib in enumerate(_heads(sub, X)):
            if contrib is not None:
                rows[r] = scatter_add(rows[r], contrib, into, -1)
    else:
        ok = np.ones(H.c.shape[0], bool)
        rows = _gather(H, have, out, frozen.lo[s], frozen.hi[s])
        rows = [rows[:, 0], rows[:, 1]]
    for lo, hi in plan.const:
        # Σ_k D_k over every token: the computed ones and the inherited sum; the positional part of Σ_k V h_k is zero
        # for the sum head (checked)
        tot = H.sum(axis=2).add_interval(frozen.sum_lo[s], frozen.sum_hi[s])  # (B, 2)
        for r in range(2):
            add = tot.lincomb(np.array([[float(lo[r, 0]), float(lo[r, 1])]]), axis=1)[:, 0]
            if (lo[r] != hi[r]).any() or (lo[r, 2:] != 0).any():
                raise CertifyError("a constant-score head reads positional rows or has inexact weights")
            rows[r] = rows[r].add(Aff(add.c[:, None], add.g[:, :, None], add.lo[:, None], add.hi[:, None]))
    Z = _stack(rows, 1)
    if plan.scalar is not None:
        Z = _scalar_ffn_enclosure(plan.scalar, Z)
    elif plan.ffn:
        Z = _ffn_enclosure(plan.ffn, Z, out)
    return Z, ok


def _scalar_ffn_enclosure(pl: PiecewiseLinear, Z: Aff) -> Aff:
    """Z + FFN(Z) on the data rows Z (B, 2, n) of an FFN that reads one row, r = Z[:, c]: row c becomes h_c(r), the
    other row Z_o + h_o(r) (`PiecewiseLinear`: exact on every piece of r's range, the range itself where r spans
    several breakpoints)."""
    r = Z[:, pl.c]
    rows = [pl.enclose(o, r) if o == pl.c else Z[:, o].add(pl.enclose(o, r)) for o in range(2)]
    return _stack(rows, 1)


def _ffn_enclosure(layers: list, Z: Aff, tokens: np.ndarray) -> Aff:
    """Z + FFN(Z) on the data rows Z (B, 2, n). Each row's remainder enters as a direction of its own (`Aff.lift`), so
    that what an FFN adds and takes away again (the mailbox's row 1 - σ(row 1), the indicator's σ(y) - σ(y - 1))
    cancels in the remainder as it does in the linear part; a unit that is a non-negative combination of ReLU
    outputs plus a non-negative bias is >= 0, so its ReLU is the identity (`Aff.relu`'s known_pos)."""
    k = Z.k
    Z = Z.lift(np.broadcast_to(np.arange(2)[None, :, None], Z.c.shape))
    W, lo, hi = layers[0]
    Y = Z.lincomb(W, axis=1).add_interval(lo[None][:, :, tokens], hi[None][:, :, tokens])  # (B, w, n)
    known = None
    for W, blo, bhi in layers[1:]:
        Y = Y.relu(known).lincomb(W, axis=1, blo=blo, bhi=bhi)
        known = ((W >= 0) & ~np.signbit(W)).all(axis=1) & (blo >= 0)  # -0.0: a negative weight rounded to 0
        known = known[:, None]
    return Z.add(Y).collapse(k)


def run_pass(
    net: Network, plans: list[BlockPlan], x: Aff, frozen: Frozen, emb: Embedding | None = None
) -> tuple[list[Aff], Aff, np.ndarray]:
    """The network on cells given by their inputs x (B, D) as forms: the data rows per stage over frozen.active[s]
    (the others inherited), T at the decoder, and per cell how many blocks, from the first, met their data bound
    (stages 0..that many are enclosures; T is one where it is every block). A pass that inherits (not the
    root) checks the bound on the tokens it reads; the others lie in its parent's enclosures, checked there."""
    states = [embed_cell(net, x, frozen.active[0], emb)]
    ok = np.ones(x.c.shape[0], bool)
    valid = np.zeros(x.c.shape[0], np.int64)
    for s, plan in enumerate(plans):
        H, good = run_block(plan, states[-1], frozen.active[s], frozen.active[s + 1], frozen, s)
        states.append(H)
        ok &= good
        valid += ok
    r, c = net.decoder
    last = len(plans)
    T = _gather(states[-1], frozen.active[last], np.array([c]), frozen.lo[last], frozen.hi[last])[:, r, 0]
    return states, T, valid


def enclose_network(net: Network, plans: list[BlockPlan], mid: np.ndarray, half: np.ndarray) -> tuple[Aff, np.ndarray]:
    """T on the boxes mid ± half (B, D) as forms in the box directions, and which boxes met every data bound."""
    _, T, valid = run_pass(net, plans, box_form(mid, half), Frozen.root(net.l, len(plans) + 1))
    return T, valid == len(plans)


def box_form(mid: np.ndarray, half: np.ndarray) -> Aff:
    """x = mid + half·e on the boxes (B, D): the identity form."""
    B, D = mid.shape
    g = np.zeros((D, B, D))
    g[np.arange(D), :, np.arange(D)] = half.T
    return Aff(mid.copy(), g, np.zeros((B, D)), np.zeros((B, D)))


# --------------------------------------------------------------------------------------------
# branch and bound


def split(lo: tuple, hi: tuple) -> list[tuple[tuple, tuple]]:
    """Bisect a cell (exact Fractions) along its widest axis: two halves that cover it."""
    i = max(range(len(lo)), key=lambda a: hi[a] - lo[a])
    m = (lo[i] + hi[i]) / 2
    return [(lo, hi[:i] + (m,) + hi[i + 1 :]), (lo[:i] + (m,) + lo[i + 1 :], hi)]


@dataclass
class Certificate:
    status: str  # "proven", "refuted" or "undecided"
    eps: float
    bound: float  # the largest certified bound over the proven cells (an upper bound on the sup when proven)
    cells: int  # cells enclosed
    counterexample: list | None = None
    error_at_counterexample: float | None = None  # a certified lower bound on |T - f| there
    seconds: float = 0.0
    method: str = METHOD

    def as_dict(self) -> dict:
        return dict(self.__dict__)


class CubeDomain:
    """Cells are boxes of [0,1]^D: x is the box itself, f enclosed on it (`TargetEnclosure`)."""

    def __init__(self, target):
        self.target = TargetEnclosure(target)

    def forms(self, lo: np.ndarray, hi: np.ndarray) -> tuple[Aff, Aff]:
        """x (B, D) and f (B,) as forms in the directions of the boxes [lo, hi] (B, D)."""
        mid = (lo + hi) / 2
        half = up(np.maximum(up(hi - mid), up(mid - lo)))
        return box_form(mid, half), self.target.enclose(mid, half, lo, hi)


@dataclass
class CurveTarget:
    """A target read as a function of the curve's parameters (what `TargetEnclosure` encloses)."""

    expr: object  # sympy expression
    symbols: list


class CircleDomain:
    """Cells are angle intervals (k = 1) on the circle x(θ) = Q (cos θ, sin θ) of `manifolds` (Q its (D, 2) isometry,
    float entries read exactly). On θ = m + h e: cos θ = cos m - sin m · h e + R with |R| <= h²/2 + h³/6 + the
    radii of the enclosures of cos m, sin m (mpmath intervals), and likewise sin θ; x is Q times those forms. f(x(θ))
    is a function of θ, enclosed by `TargetEnclosure` (its derivative in θ by sympy)."""

    def __init__(self, Q: np.ndarray, target):
        import sympy

        theta = sympy.Symbol("theta", real=True)
        Qr = [[sympy.Rational(float(v)) for v in row] for row in np.asarray(Q, dtype=np.float64)]
        subs = {s: Qr[j][0] * sympy.cos(theta) + Qr[j][1] * sympy.sin(theta) for j, s in enumerate(target.symbols)}
        self.Q = np.asarray(Q, dtype=np.float64)
        self.target = TargetEnclosure(CurveTarget(target.expr.subs(subs), [theta]))

    def forms(self, lo: np.ndarray, hi: np.ndarray) -> tuple[Aff, Aff]:
        from mpmath import iv

        mid = (lo + hi) / 2
        half = up(np.maximum(up(hi - mid), up(mid - lo)))
        h = half[:, 0]
        cs = np.array([[float(v.a), float(v.b)] for m in mid[:, 0] for v in (iv.cos(iv.mpf(m)), iv.sin(iv.mpf(m)))])
        cs = cs.reshape(len(mid), 2, 2)  # (B, cos/sin, lo/hi)
        centre = (cs[:, :, 0] + cs[:, :, 1]) / 2
        rad = up(np.maximum(up(cs[:, :, 1] - centre), up(centre - cs[:, :, 0])))  # (B, 2)
        g = np.stack([-centre[:, 1] * h, centre[:, 0] * h])  # d/dθ: (-sin m, cos m) h
        tail = up(up(h * h / 2) + up(h * h * h / 6))
        rem = up(up(up(rad + tail[:, None]) + up(rad[:, ::-1] * h[:, None])) + U * np.abs(g.T) + TINY)
        y = Aff(centre, g.T[None], -rem, rem)  # (B, 2): cos θ, sin θ
        return y.lincomb(self.Q, axis=1), self.target.enclose(mid, half, lo, hi)


class ErrorEnclosure:
    """|T - f| enclosed on cells of a domain (a network and its target): `enclose(lo, hi)` gives intervals of T - f,
    with `frozen` what the cells inherit from a cell containing them (default: nothing, every token computed)."""

    def __init__(self, net: Network, target=None, plans: list[BlockPlan] | None = None, domain=None):
        self.net, self.domain = net, CubeDomain(target) if domain is None else domain
        self.plans = prepare_certificate(net) if plans is None else plans
        self.root = Frozen.root(net.l, len(self.plans) + 1)
        self.needed = needed_tokens(net, self.plans)
        self.emb = Embedding.of(net)

    def pass_(self, lo: np.ndarray, hi: np.ndarray, frozen: Frozen | None = None):
        """(states, bounds of T - f (lo, hi), valid) on the cells [lo, hi] (n, k) of floats: valid[j] blocks, from
        the first, met their data bounds on cell j (`run_pass`); the bounds are -inf/inf unless all did."""
        x, f = self.domain.forms(lo, hi)
        states, T, valid = run_pass(self.net, self.plans, x, self.root if frozen is None else frozen, self.emb)
        ok = valid == len(self.plans)
        elo, ehi = T.add(f.scale(-1.0, -1.0)).bounds()
        return states, np.where(ok, elo, -np.inf), np.where(ok, ehi, np.inf), valid

    def enclose(self, lo: np.ndarray, hi: np.ndarray, frozen: Frozen | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Bounds of T(x) - f(x) over each cell [lo, hi] (n, k) of floats; -inf/inf where a data bound failed."""
        _, elo, ehi, _ = self.pass_(lo, hi, frozen)
        return elo, ehi


def cell_floats(cells: list) -> tuple[np.ndarray, np.ndarray]:
    """Float boxes (n, k) containing the exact cells: endpoints rounded outward where not representable."""
    lo = np.array([[down(float(v)) if Fraction(float(v)) != v else float(v) for v in c[0]] for c in cells])
    hi = np.array([[up(float(v)) if Fraction(float(v)) != v else float(v) for v in c[1]] for c in cells])
    return lo, hi


def branch_and_bound(enclose, cells: list, eps: float, max_cells: int = 200_000, batch: int = 256) -> Certificate:
    """Split cells (exact Fraction boxes) until every one has sup |T - f| <= ε, or a centre point is certified
    to have |T - f| > ε, or max_cells cells were enclosed."""
    t0 = time.perf_counter()
    queue, bound, done = list(cells), 0.0, 0
    while queue:
        if done >= max_cells:
            return Certificate("undecided", eps, math.inf, done, seconds=time.perf_counter() - t0)
        work, queue = queue[-batch:], queue[:-batch]
        elo, ehi = enclose(*cell_floats(work))
        done += len(work)
        sup = np.maximum(np.abs(elo), np.abs(ehi))
        bad = [j for j in range(len(work)) if not sup[j] <= eps]
        if len(bad) < len(work):
            bound = max(bound, float(np.max(np.where(sup <= eps, sup, 0.0))))
        if not bad:
            continue
        centres = np.array([[float((a + b) / 2) for a, b in zip(*work[j], strict=True)] for j in bad])
        plo, phi = enclose(centres, centres)
        below = np.where(plo > 0, plo, np.where(phi < 0, -phi, 0.0))  # certified lower bounds on |T - f|
        if (below > eps).any():
            j = int(np.argmax(below))
            return Certificate(
                "refuted", eps, math.inf, done, centres[j].tolist(), float(below[j]), time.perf_counter() - t0
            )
        for j in bad:
            queue.extend(split(*work[j]))
    return Certificate("proven", eps, bound, done, seconds=time.perf_counter() - t0)


def subdivide(lo: tuple, hi: tuple, fan: int) -> list[tuple[tuple, tuple]]:
    """A cell (exact Fractions) cut into fan equal parts along every axis: fan^k cells that cover it."""
    import itertools

    edges = [[a + (b - a) * Fraction(j, fan) for j in range(fan + 1)] for a, b in zip(lo, hi, strict=True)]
    return [
        (tuple(e[i] for e, i in zip(edges, idx, strict=True)), tuple(e[i + 1] for e, i in zip(edges, idx, strict=True)))
        for idx in itertools.product(range(fan), repeat=len(lo))
    ]


def halves(cell: tuple, times: int) -> list[tuple[tuple, tuple]]:
    """A cell (exact Fractions) bisected `times` times by `split`: 2^times cells that cover it."""
    cells = [cell]
    for _ in range(times):
        cells = [c for lo, hi in cells for c in split(lo, hi)]
    return cells


class _Stop(Exception):
    """Ends the search with a refuted or undecided certificate."""

    def __init__(self, cert: Certificate):
        self.cert = cert


@dataclass
class _Search:
    """The state of `certify_tiles`: the enclosure, ε, the budget, how many cells were enclosed, the bound so far."""

    enc: ErrorEnclosure
    eps: float
    max_cells: int
    times: int
    tol: float
    t0: float
    done: int = 0
    bound: float = 0.0

    def stop(self, status: str, point=None, below=None) -> _Stop:
        bound = math.inf
        return _Stop(Certificate(status, self.eps, bound, self.done, point, below, time.perf_counter() - self.t0))

    def visit(self, cells: list, frozen: Frozen) -> None:
        """Enclose cells (one pass, inheriting `frozen`); a cell whose bound exceeds ε is refuted at its centre, or
        cut (`halves`) and its parts visited, inheriting what this pass left narrower than tol (`freeze`) at the
        stages up to the first block whose data bound failed on the cell, and what this pass inherited after it."""
        if self.done >= self.max_cells:
            raise self.stop("undecided")
        states, elo, ehi, valid = self.enc.pass_(*cell_floats(cells), frozen)
        self.done += len(cells)
        sup = np.maximum(np.abs(elo), np.abs(ehi))
        bad = [j for j in range(len(cells)) if not sup[j] <= self.eps]
        if len(bad) < len(cells):
            self.bound = max(self.bound, float(np.max(np.where(sup <= self.eps, sup, 0.0))))
        if not bad:
            return
        centres = np.array([[float((a + b) / 2) for a, b in zip(*cells[j], strict=True)] for j in bad])
        plo, phi = self.enc.enclose(centres, centres, frozen)
        below = np.where(plo > 0, plo, np.where(phi < 0, -phi, 0.0))  # certified lower bounds on |T - f|
        if (below > self.eps).any():
            j = int(np.argmax(below))
            raise self.stop("refuted", centres[j].tolist(), float(below[j]))
        for j in bad:
            inherit = freeze(states, frozen.active, j, frozen, self.enc.needed, self.tol, int(valid[j]))
            self.visit(halves(cells[j], self.times), inherit)


def certify_tiles(
    enc: ErrorEnclosure,
    tiles: list,
    eps: float,
    max_cells: int = 200_000,
    fan: int = 2,
    tile_batch: int = 16,
    tol: float | None = None,
) -> Certificate:
    """sup |T - f| <= ε over the union of the tiles (exact Fraction cells), by a depth-first branch and bound.

    Tiles are enclosed `tile_batch` at a time by passes that compute every token and check the data bound on every
    one (the root pass). A cell whose bound exceeds ε and whose centre is not a counterexample is cut into fan^k
    parts (bisections by `split`), enclosed by one pass that recomputes only the tokens the cell's own pass left
    wider than tol (`freeze`; every enclosure of a cell holds on its parts) and inherits the others, and so on down.
    tol (default ε / (100 l)) must sit above the rounding that tokens constant on a cell carry (Theorem 2's ψ and
    product tokens far from x: 1e-13 ... 1e-9 at N = 425; the varying ones 1e-6 and more); the inherited widths
    then add about l tol = ε/100 to T's enclosure.
    Nothing of the domain is skipped: every cell is proven, or cut into parts that cover it."""
    times = round(math.log2(fan)) * len(tiles[0][0])
    if 2 ** round(math.log2(fan)) != fan:
        raise CertifyError(f"fan must be a power of 2, got {fan}")
    tol = eps / (100 * enc.net.l) if tol is None else tol
    search = _Search(enc, eps, max_cells, times, tol, time.perf_counter())
    try:
        for i in range(0, len(tiles), tile_batch):
            search.visit(tiles[i : i + tile_batch], enc.root)
    except _Stop as stop:
        return stop.cert
    return Certificate("proven", eps, search.bound, search.done, seconds=time.perf_counter() - search.t0)


def grid_cells(d: int, n: int) -> list[tuple[tuple, tuple]]:
    """[0,1]^d cut into n^d equal cells (exact)."""
    return subdivide((Fraction(0),) * d, (Fraction(1),) * d, n)


def certify_lemma1(
    plan, net: Network, eps: float | None = None, max_cells: int = 200_000, per_axis: int | None = None
) -> Certificate:
    """sup over [0,1]^d of |T - f| for a Lemma 1 network against ε. The tiles are the grid's patches cut in
    thirds, spacing 1/(3(N-1)) (per_axis to change it): their edges are the ψ kinks t_j ± 1/(3(N-1)),
    t_j ± 2/(3(N-1)), so on a tile every ReLU of the ψ FFN has one sign and T is a product of affine factors;
    tiles where the products' second-order terms leave the bound above ε are split (`certify_tiles`)."""
    enc = ErrorEnclosure(net, plan.target)
    tiles = grid_cells(plan.d, per_axis or 3 * (plan.N - 1))
    return certify_tiles(enc, tiles, plan.eps if eps is None else eps, max_cells, fan=2)


def circle_enclosure(plan, net: Network) -> ErrorEnclosure:
    """T - f over θ-cells for a Theorem 2 network on the circle (`lemmas.theorem2`)."""
    if plan.manifold.name != "circle":
        raise CertifyError(f"the sup-norm certificate covers Theorem 2 on the circle, not the {plan.manifold.name}")
    return ErrorEnclosure(net, domain=CircleDomain(plan.manifold.Q, plan.target))


def certify_circle(
    plan,
    net: Network,
    eps: float | None = None,
    max_cells: int = 200_000,
    tiles: int = 16,
    enc: ErrorEnclosure | None = None,
) -> Certificate:
    """sup over the circle of |T - f| for a Theorem 2 network on the circle (`lemmas.theorem2`) against ε: the
    branch and bound of `certify_tiles` over θ ∈ [0, 710/113] ⊃ [0, 2π] (710/113 > 2π, so every point of the circle
    is some x(θ)), in `tiles` equal tiles, each cut in 8 (fan) where its bound exceeds ε.

    16 tiles: every data bound holds on them (the FFNs' enclosures stay in their range, module docstring), so each
    tile's one full pass (every token) serves all its parts; at the proven N = 425 (ε = 0.3, R^3) the search took
    about 15,000 cells, 150 to 230 s beside a training run on 2 cores, against about 240 s with 1 tile or 128 tiles
    (more full passes, or wide cells that need more cuts) and 350 s with fan 4."""
    enc = circle_enclosure(plan, net) if enc is None else enc  # (`circle_enclosure(plan, net)` when given)
    top = Fraction(710, 113)
    cells = [((top * j / tiles,), (top * (j + 1) / tiles,)) for j in range(tiles)]
    return certify_tiles(enc, cells, plan.eps if eps is None else eps, max_cells, fan=8)
