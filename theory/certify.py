"""Sup-norm certificates (issue #41, item 3): sup_x |T(x) - f(x)| over a whole domain, proven.

A sampled maximum of |T - f| is a lower bound on the sup (Section 2.4's "error <= ε" is a sup). Here the
network and the target are enclosed on boxes ("cells") by sound float64 arithmetic (`certify_arith.Aff`:
affine forms with outward-rounded remainders; the target by mpmath's interval arithmetic), and a branch
and bound splits every cell whose bound exceeds ε until each cell's bound is <= ε ("proven") or the
enclosure at a cell's centre point shows |T - f| > ε there ("refuted", with that point); a cell budget
ends it as "undecided". Every cell is either proven, split into halves that cover it, or a counterexample:
no part of the domain is skipped.

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

from tmcheck.theory.certify_arith import Aff, CertifyError, TargetEnclosure, U, down, frac_interval, scatter_add, up
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
    bound = sum(abs(A[a, b]) * m[a] * m[b] for a in range(5) for b in range(5) if a < 2 or b < 2)
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


def _head_kernel(h) -> np.ndarray:
    Q, K = _exact(h.Q), _exact(h.K)
    A = np.empty((5, 5), dtype=object)
    for a in range(5):
        for b in range(5):
            A[a, b] = sum((K[r, a] * Q[r, b] for r in range(5) if K[r, a] and Q[r, b]), Fraction(0))
    return A


def _head_terms(pairs: list, kernels: list, values: list, P: np.ndarray) -> HeadTerms:
    """Exact coefficients of every candidate pair: score = c0 + Σ α_i D_k[i] + Σ β_j D_t[j] + Σ A_ij D_k[i] D_t[j],
    (V h_k)_r = g_r + Σ_j V_rj D_k[j] for r in the data rows."""
    rows = {key: [] for key in ("c", "k0", "k1", "t0", "t1", "kt00", "kt01", "kt10", "kt11", "g0", "g1")}
    rows.update({f"v{r}{j}": [] for r in range(2) for j in range(2)})
    ts, ks = [], []
    for (t, k), A, V in zip(pairs, kernels, values, strict=True):
        Pt, Pk = P[:, t], P[:, k]
        ts.append(t)
        ks.append(k)
        rows["c"].append(sum(Pk[a] * A[a + 2, b + 2] * Pt[b] for a in range(3) for b in range(3)))
        for i in range(2):
            rows[f"k{i}"].append(sum(A[i, b + 2] * Pt[b] for b in range(3)))
            rows[f"t{i}"].append(sum(Pk[a] * A[a + 2, i] for a in range(3)))
            rows[f"g{i}"].append(sum(V[i, b + 2] * Pk[b] for b in range(3)))
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
            A = _head_kernel(h)
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
        plans.append(BlockPlan(float(M_cap) * (1 - 4 * U), sparse, const, _cert_ffn_plan(blk.ffn, P)))
    return plans


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
            fixed = W[:, 2:5].dot(P) + b[:, None]  # (w, l): the positional part, exact
            lo, hi = _interval_pair(fixed)
            out.append((np.array([[float(v) for v in r] for r in W[:, 0:2]]), lo, hi))
        else:
            lo, hi = _interval_pair(b)
            out.append((np.array([[float(v) for v in r] for r in W]), lo, hi))
    return out


# --------------------------------------------------------------------------------------------
# the pass


def _stack(parts: list[Aff], axis: int) -> Aff:
    gax = axis if axis >= 0 else axis - 1
    return Aff(
        np.stack([p.c for p in parts], axis),
        np.stack([p.g for p in parts], gax),
        np.stack([p.lo for p in parts], axis),
        np.stack([p.hi for p in parts], axis),
    )


def embed_cell(net: Network, x: Aff) -> Aff:
    """Data rows of H_0 = E'(Ux)^T + PE: (B, 2, l) from x (B, D)."""
    Ux = x.lincomb(np.array([[float(v) for v in r] for r in _exact(net.U)]), axis=1)  # (B, l); U is 0/1 here
    if any(Fraction(float(v)) != v for v in _exact(net.U).reshape(-1)):
        raise CertifyError("embedding U is not float-exact")
    E, PE = _exact(net.E), _exact(net.PE)
    rows = []
    for r in range(2):
        elo, ehi = _interval_pair([E[r, 0]])
        plo, phi = _interval_pair(PE[r])
        rows.append(Ux.scale(elo[0], ehi[0]).add_interval(plo, phi))
    return _stack(rows, 1)


def _terms(D: Aff, idx: np.ndarray) -> Aff:
    return D[:, :, idx]


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


def run_block(plan: BlockPlan, H: Aff) -> tuple[Aff, np.ndarray]:
    """One block on the data rows (B, 2, l); also which inputs met the block's data bound (B,) bool."""
    # the data bound is the hypothesis of the locality certificate: only blocks with candidate pairs need it
    ok = np.ones(H.c.shape[0], bool) if plan.sparse is None else H.absmax().max(axis=(1, 2)) <= plan.M_cap
    rows = [H[:, 0], H[:, 1]]  # (B, l) each
    if plan.sparse is not None:
        for r, contrib in enumerate(_heads(plan.sparse, H)):
            if contrib is not None:
                rows[r] = scatter_add(rows[r], contrib, plan.sparse.t, -1)
    for lo, hi in plan.const:
        tot = H.sum(axis=2)  # (B, 2): Σ_k D_k; positional part of Σ_k V h_k is zero for the sum head (checked)
        for r in range(2):
            add = tot.lincomb(np.array([[float(lo[r, 0]), float(lo[r, 1])]]), axis=1)[:, 0]
            if (lo[r] != hi[r]).any() or (lo[r, 2:] != 0).any():
                raise CertifyError("a constant-score head reads positional rows or has inexact weights")
            rows[r] = rows[r].add(Aff(add.c[:, None], add.g[:, None], add.lo[:, None], add.hi[:, None]))
    Z = _stack(rows, 1)
    if plan.ffn:
        Z = Z.add(_ffn_enclosure(plan.ffn, Z))
    return Z, ok


def _ffn_enclosure(layers: list, Z: Aff) -> Aff:
    W, lo, hi = layers[0]
    Y = Z.lincomb(W, axis=1).add_interval(lo[None], hi[None])  # (B, w, l)
    for W, blo, bhi in layers[1:]:
        Y = Y.relu().lincomb(W, axis=1, blo=blo, bhi=bhi)
    return Y


def enclose_network(net: Network, plans: list[BlockPlan], mid: np.ndarray, half: np.ndarray) -> tuple[Aff, np.ndarray]:
    """T on the boxes mid ± half (B, D) as forms in the box directions, and which boxes met every data bound."""
    B, D = mid.shape
    g = np.zeros((B, D, D))
    g[:, np.arange(D), np.arange(D)] = half
    x = Aff(mid.copy(), g, np.zeros((B, D)), np.zeros((B, D)))
    H = embed_cell(net, x)
    ok = np.ones(B, bool)
    for plan in plans:
        H, good = run_block(plan, H)
        ok &= good
    r, c = net.decoder
    return H[:, r, c], ok


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


class ErrorEnclosure:
    """|T - f| enclosed on cells of R^D (a network and its target): `enclose(lo, hi)` gives intervals of T - f."""

    def __init__(self, net: Network, target, plans: list[BlockPlan] | None = None):
        self.net, self.target = net, TargetEnclosure(target)
        self.plans = prepare_certificate(net) if plans is None else plans

    def enclose(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bounds of T(x) - f(x) over each box [lo, hi] (n, D) of floats; -inf/inf where a data bound failed."""
        mid = (lo + hi) / 2
        half = up(np.maximum(up(hi - mid), up(mid - lo)))
        T, ok = enclose_network(self.net, self.plans, mid, half)
        f = self.target.enclose(mid, half, lo, hi)
        elo, ehi = T.add(f.scale(-1.0, -1.0)).bounds()
        return np.where(ok, elo, -np.inf), np.where(ok, ehi, np.inf)


def branch_and_bound(enclose, cells: list, eps: float, max_cells: int = 200_000, batch: int = 64) -> Certificate:
    """Split cells (exact Fraction boxes) until every one has sup |T - f| <= ε, or a centre point is certified
    to have |T - f| > ε, or max_cells cells were enclosed."""
    t0 = time.perf_counter()
    queue, bound, done = list(cells), 0.0, 0
    while queue:
        if done >= max_cells:
            return Certificate("undecided", eps, math.inf, done, seconds=time.perf_counter() - t0)
        work, queue = queue[-batch:], queue[:-batch]
        lo = np.array([[down(float(v)) if Fraction(float(v)) != v else float(v) for v in c[0]] for c in work])
        hi = np.array([[up(float(v)) if Fraction(float(v)) != v else float(v) for v in c[1]] for c in work])
        elo, ehi = enclose(lo, hi)
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


def grid_cells(d: int, n: int) -> list[tuple[tuple, tuple]]:
    """[0,1]^d cut into n^d equal cells (exact)."""
    import itertools

    edges = [Fraction(j, n) for j in range(n + 1)]
    return [
        (tuple(edges[i] for i in idx), tuple(edges[i + 1] for i in idx))
        for idx in itertools.product(range(n), repeat=d)
    ]


def certify_lemma1(
    plan, net: Network, eps: float | None = None, max_cells: int = 200_000, per_axis: int | None = None
) -> Certificate:
    """sup over [0,1]^d of |T - f| for a Lemma 1 network against ε. The first cells are the grid's patches,
    spacing 1/(N-1) (per_axis to change it); cells where a ψ kink makes the bound too loose are split."""
    enc = ErrorEnclosure(net, plan.target)
    cells = grid_cells(plan.d, per_axis or plan.N - 1)
    return branch_and_bound(enc.enclose, cells, plan.eps if eps is None else eps, max_cells)
