"""A derived bound on |float64 − exact| for a network's forward pass (Definitions 3-5; Higham's running error
analysis), the tolerance `check.check_construction` compares the float64 backend with.

The float64 backends evaluate the same formulas as the exact one: every entry they compute is a sum of n
products of k factors (weights rounded once to float64, hidden values carrying the error of the previous
block), evaluated in some order. For such a sum, with |â - a| <= e_a for each factor,

    |fl(Σ Π â) - Σ Π a| <= Σ [Π(|â| + e) - Π|â|] + γ_{n+k-1} Σ Π|â|,   γ_j = j u / (1 - j u),  u = 2^-53

(the first term: the factors' errors; the second: the rounding of the products and the sum in any order,
Higham, Accuracy and Stability, Lemma 3.1 and eq. 3.5). σ is 1-Lipschitz and exact in float64. The bound is
propagated block by block on the float values themselves (|a| <= |â| + e throughout), so it needs no exact
pass: per head and token pair the score h_k^T (K^T Q) h_i is a sum of 25 products of 3 factors, the value
(V h_k) σ(s) of 5 products of 3, and the block output sums the heads, the residual and the FFN, whose layers
are sums of n_in + 1 terms. A network with an interaction pattern (`fast_eval`) is bounded over its live
token pairs only, the scores its structured pass computes; the skipped scores are exact zeros there.

Two uses. `bound` propagates the bound from the rounded input through every block (a priori: it needs no
exact values, and it is loose where a block amplifies errors, as the deep indicator of Theorem 2 does by
2^L). `blockwise`, what `check.check_construction` uses, checks each block on its own: the float64 output of
block k against the exact one, within the bound of block k applied to the float64 input of block k with
its measured error |float64 - exact| at that input. An error the float64 pass makes anywhere that the
analysis does not allow (a wrong weight, a skipped term, an output off by 10^-6) fails the block it is in.

Nothing here is first order: the bounds are bounds, computed in float64 with a relative margin of 10^-6 for
their own rounding (their sums have fewer than 10^6 terms).
"""

from __future__ import annotations

import numpy as np

from tmcheck.theory.fast_eval import constant_score
from tmcheck.theory.network import Network

U = 2.0**-53
SELF_MARGIN = 1 + 1e-6


def gamma(n: int) -> float:
    """γ_n = n u / (1 - n u)."""
    return n * U / (1 - n * U)


def _weight(arr) -> tuple[np.ndarray, np.ndarray]:
    """A weight as float64 and its rounding error u|w| (round to nearest; 0 more for a float64 weight)."""
    w = np.asarray(arr)
    w = w.astype(np.float64) if w.dtype == object else np.asarray(w, dtype=np.float64)
    return w, U * np.abs(w)


def _kernel_with_error(h) -> tuple[np.ndarray, np.ndarray]:
    """K^T Q in float64 and its error: γ_6 |K|^T |Q| covers both the exact product rounded once and a product
    of rounded weights computed in float64 (5 products and 4 sums per entry, weights rounded once)."""
    K, Q = np.asarray(h.K), np.asarray(h.Q)
    A = (K.T @ Q).astype(np.float64) if K.dtype == object else K.T @ Q
    return np.asarray(A, dtype=np.float64), _kernel_error([h])[0]


def _kernel_error(heads) -> np.ndarray:
    """γ_6 |K|^T |Q| per head, (m, 5, 5), in float64 only."""
    K = np.stack([_weight(h.K)[0] for h in heads])
    Q = np.stack([_weight(h.Q)[0] for h in heads])
    return gamma(6) * np.einsum("mra,mrc->mac", np.abs(K), np.abs(Q))


def _ffn(layers, Z: np.ndarray, E: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """FFN(Z) token-wise with its error bound; Z, E (B, 5, l)."""
    Y, EY = Z, E
    for i, lay in enumerate(layers):
        W, EW = _weight(lay.W)
        b, Eb = _weight(lay.b)
        aW, aY = np.abs(W), np.abs(Y)
        val = np.einsum("oi,bil->bol", W, Y) + b[None, :, None]
        prop = np.einsum("oi,bil->bol", aW, EY) + np.einsum("oi,bil->bol", EW, aY + EY) + Eb[None, :, None]
        mag = np.einsum("oi,bil->bol", aW, aY) + np.abs(b)[None, :, None]
        EY = prop + gamma(W.shape[1] + 2) * mag
        Y = val
        if i < len(layers) - 1:
            Y = np.maximum(Y, 0.0)
    return Y, EY


def _dense_bound(heads, H: np.ndarray, E: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Σ_heads V H σ((K H)^T Q H) with its error bound, every token pair (the dense backend)."""
    B, d, l = H.shape
    out, Eout, mag_sum = np.zeros_like(H), np.zeros_like(H), np.zeros_like(H)
    aH = np.abs(H)
    for h in heads:
        V, EV = _weight(h.V)
        aV = np.abs(V)
        if constant_score(h):  # score <Q e_4, K e_4> for every pair: out = σ(s) V Σ_k h_k, σ(s) V rounded once
            s = sum(np.asarray(h.Q)[r, 4] * np.asarray(h.K)[r, 4] for r in range(5))
            W, EW = _weight(np.asarray(h.V) * (s if s > 0 else 0 * s))
            sH, sE = H.sum(2), (aH + E).sum(2)  # (B, 5)
            val = np.einsum("rc,bc->br", W, sH)
            base = np.einsum("rc,bc->br", np.abs(W), aH.sum(2))
            err = np.einsum("rc,bc->br", np.abs(W) + EW, sE) - base
            out += val[:, :, None]
            Eout += err[:, :, None]
            mag_sum += base[:, :, None]
            continue
        A, EA = _kernel_with_error(h)
        aA = np.abs(A)
        S = np.einsum("bak,ac,bci->bki", H, A, H)  # (B, l[k], l[i])
        Sbase = np.einsum("bak,ac,bci->bki", aH, aA, aH)
        ES = np.einsum("bak,ac,bci->bki", aH + E, aA + EA, aH + E) - Sbase + gamma(25 + 2) * Sbase
        R = np.maximum(S, 0.0)
        aR = np.abs(R)
        base = np.einsum("rc,bck,bki->bri", aV, aH, aR)
        out += np.einsum("rc,bck,bki->bri", V, H, R)
        Eout += np.einsum("rc,bck,bki->bri", aV + EV, aH + E, aR + ES) - base
        mag_sum += base
    n_terms = 5 * l * max(1, len(heads))
    return out, Eout + gamma(n_terms + 2) * mag_sum


def _sparse_bound(prep: dict, H: np.ndarray, E: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The live pair of each structured head (`fast_eval.prepare`, float64): value and error, scattered."""
    t1, t2 = prep["t1"], prep["t2"]
    A, EA = prep["A"], prep["EA"]  # (m, 5, 5): K^T Q in float64 and its error (`_kernel`)
    V = prep["V"]
    EV = U * np.abs(V)
    aA, aV = np.abs(A), np.abs(V)
    h1, h2, e1, e2 = H[:, :, t1], H[:, :, t2], E[:, :, t1], E[:, :, t2]  # (B, 5, m)
    a1, a2 = np.abs(h1), np.abs(h2)
    s = np.einsum("bam,mac,bcm->bm", h2, A, h1)
    base = np.einsum("bam,mac,bcm->bm", a2, aA, a1)
    es = np.einsum("bam,mac,bcm->bm", a2 + e2, aA + EA, a1 + e1) - base + gamma(25 + 2) * base
    r = np.maximum(s, 0.0)
    ar = np.abs(r)
    val = np.einsum("mrc,bcm,bm->brm", V, h2, r)
    vbase = np.einsum("mrc,bcm,bm->brm", aV, a2, ar)
    ev = np.einsum("mrc,bcm,bm->brm", aV + EV, a2 + e2, ar + es) - vbase + gamma(5 + 2) * vbase
    B, _, l = H.shape
    out, Eout, mag = np.zeros((B, 5, l)), np.zeros((B, 5, l)), np.zeros((B, 5, l))
    np.add.at(out, (slice(None), slice(None), t1), val)
    np.add.at(Eout, (slice(None), slice(None), t1), ev)
    np.add.at(mag, (slice(None), slice(None), t1), np.abs(val) + ev)
    per_col = np.bincount(t1, minlength=l)  # heads summed into each column
    return out, Eout + gamma(int(per_col.max(initial=0)) + 1) * mag


def block_bound(blk, H: np.ndarray, E: np.ndarray, prep: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """B(H) = FFN(MHA(H) + H) + MHA(H) + H with its error bound (prep: the block's structured pattern)."""
    parts = []
    if prep is None:
        dense = list(blk.heads)
    else:
        dense = [h for h, p in zip(blk.heads, prep["pairs"], strict=True) if p[0] < 0]
        if prep["sparse"] is not None:
            parts.append(_sparse_bound(prep["sparse"], H, E))
    if dense:
        parts.append(_dense_bound(dense, H, E))
    Z, EZ = H, E
    for val, err in parts:
        Z = Z + val
        EZ = EZ + err + U * np.abs(Z)  # the sum of the parts: one more rounding each
    if blk.ffn:
        Fv, EF = _ffn(blk.ffn, Z, EZ)
        Z, EZ = Z + Fv, EZ + EF + U * np.abs(Z + Fv)
    return Z, EZ


def _structured(net: Network) -> list[dict]:
    """fast_eval's float64 preparation, with the error of each sparse head's kernel (`_kernel`)."""
    from tmcheck.theory.fast_eval import prepare

    preps = prepare(net, "float64")
    for blk, p in zip(net.blocks, preps, strict=True):
        if p["sparse"] is not None:
            live = [h for h, q in zip(blk.heads, p["pairs"], strict=True) if q[0] >= 0]
            p["sparse"] = {**p["sparse"], "EA": _kernel_error(live)}
    return preps


def _preparations(net: Network | None, pattern: bool | None) -> list | None:
    if net is not None and "interaction_pattern" in net.meta and pattern is not False:
        return _structured(net)
    return None


def _float(H) -> np.ndarray:
    H = np.asarray(H)
    return H.astype(np.float64) if H.dtype == object else np.asarray(H, dtype=np.float64)


def blockwise(net: Network, blocks, float_states, exact_states) -> list[dict]:
    """The input rounded once (|float64 - exact| <= u |exact|), then per block k its float64 output against its
    exact output, within `block_bound` at the float64 input with its measured error. States are traces
    [H_0, H_1, ..., H_L] (the input first)."""
    preps = _preparations(net, None)
    f0, e0 = _float(float_states[0]), _float(exact_states[0])
    d0, t0 = np.abs(f0 - e0), U * np.abs(e0) * SELF_MARGIN  # the input: rounded once
    bad0 = np.argwhere(~(d0 <= t0))
    out = [
        {
            "block": "input",
            "ok": len(bad0) == 0,
            "max_error": float(d0.max(initial=0.0)),
            "max_bound": float(t0.max(initial=0.0)),
            "first_bad": None if not len(bad0) else tuple(int(v) for v in bad0[0]),
            "at_first_bad": None if not len(bad0) else (float(d0[tuple(bad0[0])]), float(t0[tuple(bad0[0])])),
        }
    ]
    with np.errstate(over="ignore", invalid="ignore"):
        for k, blk in enumerate(blocks):
            fin, ein = _float(float_states[k]), _float(exact_states[k])
            E_in = np.abs(fin - ein)
            _, tol = block_bound(blk, fin, E_in, None if preps is None else preps[k])
            tol = tol * SELF_MARGIN
            diff = np.abs(_float(float_states[k + 1]) - _float(exact_states[k + 1]))
            bad = np.argwhere(~(diff <= tol))
            out.append(
                {
                    "block": k,
                    "ok": len(bad) == 0,
                    "max_error": float(diff.max(initial=0.0)),
                    "max_bound": float(tol.max(initial=0.0)),
                    "first_bad": None if not len(bad) else tuple(int(v) for v in bad[0]),
                    "at_first_bad": None if not len(bad) else (float(diff[tuple(bad[0])]), float(tol[tuple(bad[0])])),
                }
            )
    return out


def bound(net: Network | None, blocks, H0, pattern: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(float64 values, error bound) of the blocks applied to the exact hidden matrices H0 (B, 5, l) rounded to
    float64, over the live pairs only when the network records an interaction pattern."""
    H = _float(H0)
    E = U * np.abs(H)
    preps = _preparations(net, pattern)
    with np.errstate(over="ignore", invalid="ignore"):
        for k, blk in enumerate(blocks):
            H, E = block_bound(blk, H, E, None if preps is None else preps[k])
    return H, E * SELF_MARGIN
