"""Lemma 3's head (Appendix G, the Interaction Lemma), the base every construction composes: one ReLU
attention head in which token t1 reads token t2, with its exact threshold and the witness of that threshold.

`interaction_head` builds the paper's head, its corrected proof beside the weights; `minimal_C` computes,
exactly, the smallest C for which it is correct on every structured H with ||H||_inf <= M (the paper only
shows that some C = O(d_embd^4 kappa^2 M^2 l^2) suffices, `paper_C`); `critical_input` is an H on which
any smaller C leaks; `pair_threshold` computes the same threshold pair by pair, an independent oracle.
`theory.sparse` composes these heads into blocks; `theory.lemmas.interaction` states Lemma 3 as a
construction. Indices are 0-based: token t here is the paper's token t+1, row r the paper's row r+1.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from math import lcm

import numpy as np

from tmcheck.theory.network import (
    CONSTANT,
    D_EMBD,
    DATA,
    FIXED,
    INTERACTION,
    Head,
    as_array,
    interaction_vectors,
    structured_positional,
    zeros,
)

# A rational lower bound of pi^2 (9.8696044010...), so paper_C is a rational upper bound of 16 d^4 k^2 M^2 l^2 / pi^2.
PI2_LOWER = Fraction(98696044, 10**7)
_SIGNS = list(itertools.product((-1, 1), repeat=2))


def check_indices(l: int, *tokens: int) -> None:
    """Refuse an l below 1 or a token outside 0..l-1 (0-based): the indices of a Lemma 3 head."""
    if not isinstance(l, int) or l < 1:
        raise ValueError(f"l must be a positive integer, got {l!r}")
    for t in tokens:
        if not 0 <= t < l:
            raise ValueError(f"token index {t} outside 0..{l - 1} (0-based)")


def domain_bound(M) -> Fraction:
    """A domain bound ||H||_inf <= M; structured tokens hold 1 in row 4, so M >= 1."""
    M = Fraction(M)
    if M < 1:
        raise ValueError(f"M must be >= 1 (row 4 of a structured token is 1), got {M}")
    return M


def data_kernels(Q_data, K_data, arithmetic: str = "exact") -> tuple[np.ndarray, np.ndarray]:
    """Q^B, K^B as 2 x 5 arrays (the paper's (d_embd - 3) x d_embd data kernels)."""
    return as_array(Q_data, arithmetic, (2, D_EMBD), "Q_data"), as_array(K_data, arithmetic, (2, D_EMBD), "K_data")


def rotation(u, w) -> np.ndarray:
    """The 2 x 2 rotation R with R u = w for unit vectors u, w (rational when u, w are)."""
    c = u[0] * w[0] + u[1] * w[1]
    s = u[0] * w[1] - u[1] * w[0]
    return np.array([[c, -s], [s, c]], dtype=object if isinstance(c, Fraction) else np.float64)


def interaction_head(
    l: int, t1: int, t2: int, row: int, Q_data, K_data, C, arithmetic: str = "exact", vectors: np.ndarray | None = None
) -> Head:
    """The head of Lemma 3: A(h_t1) = σ(<Q^B h_t1, K^B h_t2>) e_row and A(h_t) = 0 for t != t1.

    Weights (1-based blocks as in the paper; here rows 0-1, 2-3, 4):
        Q = [Q^B; 0 Q^I 0; 0 0 1],  K = [K^B; 0 K^I 0; 0 0 -C],  V = e_row e_4^T,
        Q^I = C R (R the rotation taking I_t1 to I_t2),  K^I = I_t2 I_t2^T (projection onto I_t2).
    Proof (corrected). With c_t = <I_t, I_t1> and c'_k = <I_k, I_t2>,
        <Q h_t, K h_k> = b(t, k) + C <R I_t, I_t2><I_t2, I_k> - C = b(t, k) - C (1 - c_t c'_k),
    where b(t, k) = <Q^B h_t, K^B h_k> and <R I_t, I_t2> = <I_t, R^T I_t2> = <I_t, I_t1> (R is a rotation).
    V h_k = h_k[4] e_row = e_row, so A(h_t) = Σ_k σ(b(t, k) - C (1 - c_t c'_k)) e_row, a sum of
    non-negative terms.
      1a (t, k) = (t1, t2): c = c' = 1, the term is σ(b(t1, t2)): the claimed value.
      1b, 2a, 2b (every other pair): 1 - c_t c'_k > 0, since c_t < 1 for t != t1 and c'_k < 1 for
         k != t2 (distinct unit vectors). The term vanishes iff b(t, k) <= C (1 - c_t c'_k).
    Hence the head is correct on every structured H with ||H||_inf <= M iff
        C >= C* = max(0, max_{(t,k) != (t1,t2)} max_H b(t, k) / (1 - c_t c'_k))        (`minimal_C`)
    (the paper's Case 2b writes Q^I I_t = C I_{t+t1-t2}; it is C I_{t+t2-t1}, which the bound above
    does not need). The paper bounds |b| <= d^4 κ^2 M^2 and 1 - c c' >= 1 - cos(π/2l) >= π^2/(16 l^2),
    giving C = 16 d^4 κ^2 M^2 l^2 / π^2 (`paper_C`); both bounds hold (see proofs_check.lemma3).
    `vectors`: interaction_vectors(l, arithmetic), when the caller builds many heads on one l.
    """
    check_indices(l, t1, t2)
    if not 0 <= row < D_EMBD:
        raise ValueError(f"row must be in 0..{D_EMBD - 1}, got {row}")
    Qb, Kb = data_kernels(Q_data, K_data, arithmetic)
    C = Fraction(C) if arithmetic == "exact" else float(C)
    if C < 0:
        raise ValueError(f"C must be >= 0, got {C}")
    I = interaction_vectors(l, arithmetic) if vectors is None else vectors  # (2, l)
    one = Fraction(1) if arithmetic == "exact" else 1.0
    Q, K, V = zeros((5, 5), arithmetic), zeros((5, 5), arithmetic), zeros((5, 5), arithmetic)
    Q[DATA], K[DATA] = Qb, Kb
    Q[INTERACTION, INTERACTION] = C * rotation(I[:, t1], I[:, t2])
    K[INTERACTION, INTERACTION] = np.outer(I[:, t2], I[:, t2])
    Q[CONSTANT, CONSTANT], K[CONSTANT, CONSTANT] = one, -C
    V[row, CONSTANT] = one
    return Head(Q, K, V)


# --------------------------------------------------------------------------------------------
# the exact threshold C*


def _integer_columns(P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P (r, l) of Fractions -> (d, P~) with d_t > 0 integers and P~ = P * d integers, column-wise."""
    d = np.array([lcm(*(v.denominator for v in P[:, t])) for t in range(P.shape[1])], dtype=object)
    Pi = np.array([[int(v * d[t]) for t, v in enumerate(r)] for r in P], dtype=object)
    return d, Pi


def _kernel(Qb: np.ndarray, Kb: np.ndarray) -> np.ndarray:
    """G = Q^B^T K^B (5 x 5): b(t, k) = h_t^T G h_k."""
    return Qb.T @ Kb


def _diag_max(G: np.ndarray, p, M):
    """max over x in [-M, M]^2 of h^T G h with h = (x, p), p = (I_t, 1), and a maximiser x.

    A quadratic on a square attains its maximum at a vertex, at a critical point of an edge with
    negative curvature, or at an interior critical point when the Hessian is negative definite.
    """
    S = [[(G[i][j] + G[j][i]) / 2 for j in range(2)] for i in range(2)]
    lin = [sum(G[i][2 + a] * p[a] + G[2 + a][i] * p[a] for a in range(3)) for i in range(2)]
    const = sum(p[a] * G[2 + a][2 + b] * p[b] for a in range(3) for b in range(3))

    def q(x):
        return sum(x[i] * S[i][j] * x[j] for i in range(2) for j in range(2)) + lin[0] * x[0] + lin[1] * x[1] + const

    cands = [(s0 * M, s1 * M) for s0, s1 in _SIGNS]
    for i in range(2):  # edges: coordinate 1-i fixed at ±M, coordinate i free
        if S[i][i] < 0:
            for s in (-M, M):
                xi = -(2 * S[i][1 - i] * s + lin[i]) / (2 * S[i][i])
                if -M <= xi <= M:
                    cands.append((xi, s) if i == 0 else (s, xi))
    det = S[0][0] * S[1][1] - S[0][1] * S[1][0]
    if S[0][0] < 0 and det > 0:  # 2 S x = -lin
        x0 = (-lin[0] * S[1][1] + lin[1] * S[0][1]) / (2 * det)
        x1 = (-lin[1] * S[0][0] + lin[0] * S[1][0]) / (2 * det)
        if -M <= x0 <= M and -M <= x1 <= M:
            cands.append((x0, x1))
    best = max(cands, key=q)
    return q(best), best


@dataclass(frozen=True)
class Threshold:
    """C* with the pair (t, k) and data (x_t, x_k) that force it (x_k is None when t == k)."""

    C: Fraction | float
    pair: tuple[int, int] | None
    x_t: tuple | None
    x_k: tuple | None


@dataclass
class _BoxMaxima:
    """max over structured H with ||H||_inf <= M of b(t, k) = h_t^T G h_k, for every pair (t, k).

    Off the diagonal b is bilinear in (x_t, x_k), so its maximum is at one of 16 vertex pairs.
    Everything is scaled column-wise to integers (d_t I_t integer, g G integer, M = Mn/Md), so
    max b(t, k) = N[t, k] / (g Md^2 d_t d_k) with N an integer matrix. Diagonal pairs (a quadratic
    in x_t) are maximised exactly one by one (`diag`). In float64 the same code runs with d = 1.
    """

    l: int
    exact: bool
    M: Fraction | float
    P: np.ndarray  # (3, l): I_t and the constant
    d: np.ndarray  # (l,) column denominators
    n: np.ndarray  # (2, l) integer interaction vectors d_t I_t
    N: np.ndarray  # (l, l) scaled off-diagonal maxima
    unit: Fraction | float  # 1 / (g Md^2)
    diag: list  # [(max b(t, t), maximiser x_t)]
    vertex: Callable  # (t, k) -> (x_t, x_k) attaining N[t, k]

    @classmethod
    def build(cls, l: int, Qb: np.ndarray, Kb: np.ndarray, M, arithmetic: str) -> _BoxMaxima:
        exact = arithmetic == "exact"
        G = _kernel(Qb, Kb)
        P = structured_positional(l, arithmetic)[FIXED]
        if exact:
            d, Pi = _integer_columns(P)
            g = lcm(*(v.denominator for v in G.reshape(-1)))
            Gi = np.array([[int(v * g) for v in r] for r in G], dtype=object)
            Mn, Md = M.numerator, M.denominator
        else:
            d, Pi, g, Gi, Mn, Md = np.ones(l), P, 1, G, M, 1
        Gxx, Gxp, Gpx, Gpp = Gi[:2, :2], Gi[:2, 2:], Gi[2:, :2], Gi[2:, 2:]
        DD = np.outer(d, d)
        base = Md * Md * (Pi.T @ Gpp @ Pi)  # (l, l)
        xp = {su: Mn * Md * np.outer(d, np.array(su) @ Gxp @ Pi) for su in _SIGNS}
        px = {sw: Mn * Md * np.outer(Pi.T @ Gpx @ np.array(sw), d) for sw in _SIGNS}

        def at(s, t, k):
            return (
                base[t, k]
                + xp[s[0]][t, k]
                + px[s[1]][t, k]
                + Mn * Mn * (np.array(s[0]) @ Gxx @ np.array(s[1])) * DD[t, k]
            )

        N = None
        for su, sw in itertools.product(_SIGNS, _SIGNS):
            cur = base + xp[su] + px[sw] + (Mn * Mn * (np.array(su) @ Gxx @ np.array(sw))) * DD
            N = cur if N is None else np.maximum(N, cur)

        def vertex(t, k):
            su, sw = max(itertools.product(_SIGNS, _SIGNS), key=lambda s: at(s, t, k))
            return tuple(M * v for v in su), tuple(M * v for v in sw)

        unit = Fraction(1, g * Md * Md) if exact else 1.0
        diag = [_diag_max(G, P[:, t], M) for t in range(l)]
        return cls(l, exact, M, P, d, Pi[:2], N, unit, diag, vertex)


def _max_ratio(num: np.ndarray, den: np.ndarray, valid: np.ndarray, exact: bool, rtol: float):
    """(max num/den over valid entries, (t, k)), den > 0: located in float64, decided exactly among
    the candidates within rtol of the float maximum (rtol above the float error of the ratios)."""
    if not valid.any():
        return None, None
    r = np.where(valid, num.astype(np.float64) / np.where(valid, den, 1).astype(np.float64), -np.inf)
    top = r.max()
    best, arg = None, None
    for t, k in zip(*np.nonzero(valid & (r >= top - abs(top) * rtol)), strict=True):
        v = Fraction(num[t, k]) / Fraction(den[t, k]) if exact else r[t, k]
        if best is None or v > best:
            best, arg = v, (int(t), int(k))
    return best, arg


def _threshold_of(box: _BoxMaxima, gap_num: np.ndarray, gap_den: np.ndarray, skip) -> Threshold:
    """max over pairs (t, k) other than `skip` of max_H b(t,k) / gap(t,k), gap = gap_num / gap_den > 0.

    Off the diagonal the ratio is N unit gap_den / (d_t d_k gap_num).
    """
    l, exact = box.l, box.exact
    zero = Fraction(0) if exact else 0.0
    valid = np.ones((l, l), dtype=bool)
    np.fill_diagonal(valid, False)
    if skip is not None:
        valid[skip] = False
    valid &= box.N.astype(np.float64) > 0
    best, pair = _max_ratio(box.N * gap_den, np.outer(box.d, box.d) * gap_num, valid, exact, 1e-9)
    best = zero if best is None else best * box.unit
    diag_best = None
    for t in range(l):
        val, x = box.diag[t]
        if (t, t) != skip and val > 0:
            r = val * (Fraction(gap_den[t, t]) / Fraction(gap_num[t, t]) if exact else gap_den[t, t] / gap_num[t, t])
            if r > best:
                best, pair, diag_best = r, (t, t), x
    if pair is None:
        return Threshold(best, None, None, None)
    t, k = pair
    if t == k:
        return Threshold(best, pair, tuple(diag_best), None)
    return Threshold(best, pair, *box.vertex(t, k))


def threshold(l: int, t1: int, t2: int, Q_data, K_data, M, arithmetic: str = "exact") -> Threshold:
    """C* = max(0, max_{(t,k) != (t1,t2)} max_H b(t,k) / (1 - c_t c'_k)), exactly (see interaction_head).

    With the integer columns n_t = d_t I_t: 1 - c_t c'_k = Gn(t, k) / (d_t d_k d_t1 d_t2),
    Gn = d_t d_k d_t1 d_t2 - (n_t.n_t1)(n_k.n_t2), which is > 0 for (t, k) != (t1, t2).
    """
    check_indices(l, t1, t2)
    exact = arithmetic == "exact"
    Qb, Kb = data_kernels(Q_data, K_data, arithmetic)
    bound = domain_bound(M)  # refused below 1 in either arithmetic
    box = _BoxMaxima.build(l, Qb, Kb, bound if exact else float(bound), arithmetic)
    d, n = box.d, box.n
    a, b = n.T @ n[:, t1], n.T @ n[:, t2]  # d_t d_t1 c_t and d_k d_t2 c'_k
    DD = (d[t1] * d[t2]) * np.outer(d, d)
    return _threshold_of(box, DD - np.outer(a, b), DD, (t1, t2))


def uniform_threshold(l: int, Q_data, K_data, M, arithmetic: str = "exact") -> Threshold:
    """The smallest C that serves every head (t1, t2) at once.

    For a pair (t, k), the largest c_t c'_k over heads (t1, t2) != (t, k) is max(ρ_t, ρ_k) with
    ρ_s = max_{s' != s} <I_s, I_s'> (one factor 1, the other as large as possible; a product of
    two factors < 1 is smaller), so C = max_{t,k} max_H b(t, k) / (1 - max(ρ_t, ρ_k)).
    """
    check_indices(l)
    exact = arithmetic == "exact"
    Qb, Kb = data_kernels(Q_data, K_data, arithmetic)
    bound = domain_bound(M)  # refused below 1 in either arithmetic
    box = _BoxMaxima.build(l, Qb, Kb, bound if exact else float(bound), arithmetic)
    if l == 1:  # one token: the only pair is the head's own
        return Threshold(Fraction(0) if exact else 0.0, None, None, None)
    d, n = box.d, box.n
    gram, dd = n.T @ n, np.outer(d, d)
    r = gram.astype(np.float64) / dd.astype(np.float64)
    np.fill_diagonal(r, -np.inf)
    rho = []  # per row: the float maximum locates the candidates, exact arithmetic decides
    for s in range(l):
        cands = np.nonzero(r[s] >= r[s].max() - 1e-9)[0]
        rho.append(max(Fraction(gram[s, j]) / Fraction(dd[s, j]) if exact else r[s, j] for j in cands))
    one = Fraction(1) if exact else 1.0
    gap = np.array(
        [[one - max(rho[t], rho[k]) for k in range(l)] for t in range(l)], dtype=object if exact else np.float64
    )
    den = np.full((l, l), one, dtype=object if exact else np.float64)
    return _threshold_of(box, gap, den, None)


def pair_threshold(l: int, t1: int, t2: int, Q_data, K_data, M, t: int, k: int) -> Fraction:
    """The C that the single term (t, k) != (t1, t2) needs: max(0, max_H b(t, k)) / (1 - c_t c'_k), exactly.

    A direct computation, pair by pair (vertices of the box, or `_diag_max` when t == k): the
    independent oracle for `threshold` and the per-case checks of proofs_check.lemma3.
    """
    if (t, k) == (t1, t2):
        raise ValueError("the pair (t1, t2) is the one the head keeps")
    Qb, Kb = data_kernels(Q_data, K_data)
    M = domain_bound(M)
    G = _kernel(Qb, Kb)
    P = structured_positional(l, "exact")
    if t == k:
        bmax = _diag_max(G, P[FIXED, t], M)[0]
    else:
        hs = []
        for su in _SIGNS:
            h = P[:, t].copy()
            h[DATA] = [M * s for s in su]
            hs.append(h)
        hk = []
        for sw in _SIGNS:
            h = P[:, k].copy()
            h[DATA] = [M * s for s in sw]
            hk.append(h)
        bmax = max(a @ G @ b for a in hs for b in hk)
    I = P[INTERACTION]
    gap = 1 - (I[:, t] @ I[:, t1]) * (I[:, k] @ I[:, t2])
    return max(Fraction(0), bmax) / gap


def minimal_C(l: int, Q_data, K_data, M, arithmetic: str = "exact", t1: int | None = None, t2: int | None = None):
    """The exact smallest C for which the head (t1, t2) is correct on all structured H with ||H||_inf <= M.

    Without t1, t2: the smallest C that serves every pair (t1, t2) at once (the maximum over pairs).
    """
    if t1 is not None and t2 is not None:
        return threshold(l, t1, t2, Q_data, K_data, M, arithmetic).C
    return uniform_threshold(l, Q_data, K_data, M, arithmetic).C


def kappa_data(Q_data, K_data) -> Fraction:
    """κ of the lemma: the largest entry of the data kernels in absolute value."""
    Qb, Kb = data_kernels(Q_data, K_data)
    return max(max(abs(v) for v in Qb.reshape(-1)), max(abs(v) for v in Kb.reshape(-1)))


def paper_C(l: int, kappa, M, d_embd: int = D_EMBD) -> Fraction:
    """The proof's C = d^4 κ^2 M^2 / (π^2 / (16 l^2)) = 16 d^4 κ^2 M^2 l^2 / π^2, as a rational upper bound."""
    return 16 * Fraction(d_embd) ** 4 * Fraction(kappa) ** 2 * Fraction(M) ** 2 * l * l / PI2_LOWER


def critical_input(l: int, t1: int, t2: int, Q_data, K_data, M) -> np.ndarray | None:
    """A structured H (1, 5, l), ||H||_inf <= M, on which every C < C* leaks (None when C* = 0)."""
    th = threshold(l, t1, t2, Q_data, K_data, M)
    if th.pair is None:
        return None
    H = np.empty((1, 5, l), dtype=object)
    H[0] = structured_positional(l, "exact")
    H[0, 0:2, :] = Fraction(0)
    t, k = th.pair
    H[0, 0:2, t] = th.x_t
    if th.x_k is not None:
        H[0, 0:2, k] = th.x_k
    return H


def head_value(H: np.ndarray, t1: int, t2: int, Q_data, K_data):
    """σ(<Q^B h_t1, K^B h_t2>) for each H in a batch (n, 5, l), in the arithmetic of H."""
    Qb, Kb = data_kernels(Q_data, K_data, "exact" if H.dtype == object else "float64")
    vals = np.einsum("ij,nj->ni", Qb, H[:, :, t1]) * np.einsum("ij,nj->ni", Kb, H[:, :, t2])
    s = vals.sum(axis=1)
    return np.array([max(v, 0 * v) for v in s], dtype=H.dtype)
