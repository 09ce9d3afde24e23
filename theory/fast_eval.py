"""Structured evaluation of networks built from Interaction-Lemma heads (Appendix G, Lemma 3; used for
Lemma 1 and Theorem 2, Appendix E), exact or float64, exploiting the sparsity the construction proves.

The dense forward pass (`backends.forward`) computes every head's l x l score matrix. A network built
by `lemmas.lemma1.realize` records, for each head, the single token pair (t1, t2) whose score can be
non-zero, and for each block the bound M on |rows 0-1| under which Lemma 3 (with `sufficient_C`)
proves every other score <= 0. Here a head costs one score instead of l^2:

    A(H)[:, t1] = σ(h_t2^T (K^T Q) h_t1) V h_t2,   A(H)[:, t] = 0 for t != t1,

which is the dense formula with the proven-zero terms dropped. The hypothesis is checked, not
assumed: before each block the largest |rows 0-1| entry of every input is compared with M (exactly
in exact arithmetic; in float64 with relative slack 1e-3, which the factor 2 of the float `sufficient_C`
covers) and an input outside the certified domain raises `NetworkError`. Heads marked
dense ((t1, t2) = (-1, -1)) whose Q and K read only the constant row 4 have the same score
<Q e_4, K e_4> for every pair (row 4 is 1 on every token and no block writes rows 2-4, which is
checked), so they cost Σ_k V h_k; other dense heads run the dense formula. FFNs are token-wise and
run as in `backends` (heads batched as tensors: (B, m, 5) gathers, one einsum, a scatter-add).
"""

from __future__ import annotations

import weakref
from fractions import Fraction

import numpy as np
from scipy import sparse

from tmcheck.theory.backends import BACKENDS, ELEMENT_BUDGET, Rat, embedding, ffn, mha
from tmcheck.theory.network import FIXED, Network, NetworkError


def _pattern(net: Network) -> list[dict]:
    pat = net.meta.get("interaction_pattern")
    if pat is None or len(pat) != len(net.blocks):
        raise NetworkError("network has no interaction pattern (meta.interaction_pattern): use backends.evaluate")
    for blk, p in zip(net.blocks, pat, strict=True):
        if len(p["pairs"]) != len(blk.heads):
            raise NetworkError("interaction pattern does not match the heads")
        for h in blk.heads:
            if any(v != 0 for v in np.asarray(h.V)[FIXED].reshape(-1)):
                raise NetworkError("a head writes rows 2-4; the structured skip needs them fixed")
        if blk.ffn and any(v != 0 for v in np.asarray(blk.ffn[-1].W)[FIXED].reshape(-1)):
            raise NetworkError("an FFN writes rows 2-4; the structured skip needs them fixed")
        if blk.ffn and any(v != 0 for v in np.asarray(blk.ffn[-1].b)[FIXED]):
            raise NetworkError("an FFN writes rows 2-4; the structured skip needs them fixed")
    return pat


def constant_score(h) -> bool:
    """A head whose Q and K read only the constant row 4: the same score <Q e_4, K e_4> for every token pair."""
    Q, K = np.asarray(h.Q), np.asarray(h.K)
    return not np.any(Q[:, :4] != 0) and not np.any(K[:, :4] != 0)


class _Ops:
    """The handful of tensor operations the structured pass needs, for Rat (exact) or ndarray (float)."""

    def __init__(self, name: str):
        self.be = BACKENDS[name]()
        self.exact = name == "exact"

    def scatter_add(self, H, cols: np.ndarray, vals):
        """H (B, 5, l) plus vals (B, m, 5) added to columns cols (m,)."""
        if not self.exact:
            out = np.zeros(H.shape)
            np.add.at(out, (slice(None), slice(None), cols), np.swapaxes(vals, 1, 2))
            return H + out
        num = vals.num
        exact_ints = num.dtype == object
        if not exact_ints:
            counts = np.bincount(cols, minlength=H.shape[2]).max()
            if float(np.abs(num).max(initial=0)) * counts >= 2**53:
                exact_ints, num = True, num.astype(object)
        out = np.zeros(H.shape, dtype=object if exact_ints else num.dtype)
        if exact_ints:
            out[:] = 0
        np.add.at(out, (slice(None), slice(None), cols), np.swapaxes(num, 1, 2))
        return self.be.add(H, Rat(out, vals.den))

    def max_data(self, H):
        if self.exact:
            return Fraction(int(np.abs(H.num[:, 0:2]).max(initial=0)), H.den)
        return float(np.abs(H[:, 0:2]).max(initial=0.0))


_KERNELS: dict[int, tuple] = {}  # id(network) -> (weak reference, per block (A, V) stacks): computed once


def _kernels(net: Network, pattern: list[dict]) -> list[tuple | None]:
    """Per block, the stacked K^T Q and V of its sparse heads (m, 5, 5), in the network's own arithmetic
    (the exact products cost 125 rational operations a head, so they are computed once per network)."""
    hit = _KERNELS.get(id(net))
    if hit is not None and hit[0]() is net:
        return hit[1]
    out = []
    for blk, p in zip(net.blocks, pattern, strict=True):
        idx = [i for i, q in enumerate(p["pairs"]) if q[0] >= 0]
        if not idx:
            out.append(None)
            continue
        kernel = _exact_kernel if net.arithmetic == "exact" else (lambda K, Q: K.T @ Q)
        A = np.stack([kernel(blk.heads[i].K, blk.heads[i].Q) for i in idx])
        out.append((A, np.stack([blk.heads[i].V for i in idx])))
    key = id(net)
    _KERNELS[key] = (weakref.ref(net, lambda _, k=key: _KERNELS.pop(k, None)), out)
    return out


def _exact_kernel(K: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """K^T Q = Σ_r K_r^T Q_r over the non-zero entries of each row only (an interaction head has about 11
    non-zero products of the 125 of a dense product), exactly."""
    A = np.empty((5, 5), dtype=object)
    A[:] = Fraction(0)
    for r in range(5):
        ks = [(a, x) for a, x in enumerate(K[r]) if x]
        if ks:
            qs = [(b, y) for b, y in enumerate(Q[r]) if y]
            for a, x in ks:
                for b, y in qs:
                    A[a, b] += x * y
    return A


def prepare(net: Network, backend: str) -> list[dict]:
    """Per block: the pairs, the kernels K^T Q and values V of the sparse heads as backend tensors, and
    (float64) the scatter matrix S (m x l, S[j, t1_j] = 1) as a scipy CSR matrix."""
    be = BACKENDS[backend]()
    out = []
    pattern = _pattern(net)
    for blk, p, kv in zip(net.blocks, pattern, _kernels(net, pattern), strict=True):
        idx = [i for i, q in enumerate(p["pairs"]) if q[0] >= 0]
        prep = {"M": Fraction(p["M"]), "name": p.get("name", ""), "pairs": p["pairs"], "sparse": None}
        if backend == "float64":
            prep["ffn_float"] = _ffn_plan(blk.ffn, be)
        if idx:
            t1 = np.array([p["pairs"][i][0] for i in idx])
            t2 = np.array([p["pairs"][i][1] for i in idx])
            A, V = kv  # (m, 5, 5) each
            prep["sparse"] = {"t1": t1, "t2": t2, "A": be.weight(A), "V": be.weight(V)}
            if backend == "float64":
                prep["sparse"].update(_float_terms(prep["sparse"], net, t1, t2))
        out.append(prep)
    return out


def _float_terms(sp: dict, net: Network, t1: np.ndarray, t2: np.ndarray) -> dict:
    """The float64 pass's coefficients. Rows 2-4 of every token are its positional rows P (no block writes
    them, checked by `_pattern`), so of score = Σ_ij h2_i A_ij h1_j the fixed-by-fixed part is one number a
    head, computed once; what depends on the input is Σ over the data rows (0, 1):
        score = c + Σ_i α_i h2_i + Σ_j β_j h1_j + Σ_ij A_ij h2_i h1_j,   (V h2)_r = g_r + Σ_j V_rj h2_j
    with c = P2^T A_FF P1, α = A_DF P1, β = A_FD^T P2, g = V_DF P2 (D the data rows, F the fixed ones).
    Only coefficients non-zero in some head are kept. S (m x l, S[j, t1_j] = 1) scatters the heads."""
    A, V = sp["A"], sp["V"]
    P = np.asarray(np.asarray(net.PE)[2:5], dtype=np.float64) if net.PE.dtype != object else None
    if P is None:
        P = np.asarray(net.PE)[2:5].astype(np.float64)
    P1, P2 = P[:, t1], P[:, t2]  # (3, m)
    F_, D_ = slice(2, 5), (0, 1)
    const = np.einsum("im,mij,jm->m", P2, A[:, F_, F_], P1)
    terms = [(None, None, const)] if const.any() else []
    for i in D_:
        a = np.einsum("mj,jm->m", A[:, i, F_], P1)
        if a.any():
            terms.append((i, None, a))
    for j in D_:
        b = np.einsum("mi,im->m", A[:, F_, j], P2)
        if b.any():
            terms.append((None, j, b))
    for i in D_:
        for j in D_:
            if A[:, i, j].any():
                terms.append((i, j, np.ascontiguousarray(A[:, i, j])))
    vterms = []
    for r in D_:
        g = np.einsum("mj,jm->m", V[:, r, F_], P2)
        row = [(None, g)] if g.any() else []
        row += [(j, np.ascontiguousarray(V[:, r, j])) for j in D_ if V[:, r, j].any()]
        vterms.append(row)
    S = sparse.csr_matrix((np.ones(len(t1)), (np.arange(len(t1)), t1)), shape=(len(t1), net.l))
    return {"S": S, "score_terms": terms, "value_terms": vterms}


def _sparse_heads(ops: _Ops, sp: dict, H):
    """Σ over the sparse heads of their single pair's term, added to H: (B, 5, l)."""
    be = ops.be
    t1, t2 = sp["t1"], sp["t2"]
    if not ops.exact:  # `_float_terms`: only the data rows 0-1 vary with the input
        h1, h2 = H[:, 0:2, t1], H[:, 0:2, t2]  # (B, 2, m)
        B, m = H.shape[0], len(t1)
        score = np.zeros((B, m))
        for i, j, a in sp["score_terms"]:
            if i is None and j is None:
                score += a
            elif j is None:
                score += a * h2[:, i, :]
            elif i is None:
                score += a * h1[:, j, :]
            else:
                score += a * h2[:, i, :] * h1[:, j, :]
        relu = np.maximum(score, 0.0)
        vals = np.zeros((B, 2, m))
        for r, row in enumerate(sp["value_terms"]):
            for j, v in row:
                vals[:, r, :] += v if j is None else v * h2[:, j, :]
            vals[:, r, :] *= relu
        out = H.copy()
        out[:, 0:2, :] += np.asarray(sp["S"].T @ vals.reshape(B * 2, -1).T).T.reshape(B, 2, -1)
        return out
    h1 = be.index(be.transpose(be.index(H, (slice(None), slice(None), t1))), (Ellipsis, None))  # (B, m, 5, 1)
    h2 = be.index(be.transpose(be.index(H, (slice(None), slice(None), t2))), (Ellipsis, None))  # (B, m, 5, 1)
    # tidy (divide out common factors) after each product: the C terms cancel exactly in the score,
    # and without it the common denominator would grow past what float64 scaling factors can hold
    score = be.tidy(be.matmul(be.transpose(h2), be.matmul(sp["A"], h1)))  # (B, m, 1, 1)
    vals = be.tidy(be.matmul(be.matmul(sp["V"], h2), be.relu(score)))  # (B, m, 5, 1)
    return ops.scatter_add(H, t1, be.index(vals, (Ellipsis, 0)))


def _dense_heads(ops: _Ops, heads, pairs, H, budget: int):
    be = ops.be
    const = [h for h, p in zip(heads, pairs, strict=True) if p[0] < 0 and constant_score(h)]
    other = [h for h, p in zip(heads, pairs, strict=True) if p[0] < 0 and not constant_score(h)]
    total = None
    if const:
        # score = <Q e_4, K e_4> for every pair: A(H)[:, i] = σ(score) Σ_k V h_k
        sumH = be.sum(H, axis=2)  # (B, 5)
        sumH = be.index(sumH, (slice(None), slice(None), None))  # (B, 5, 1)
        for h in const:
            s = sum(h.Q[r, 4] * h.K[r, 4] for r in range(5))
            s = s if s > 0 else 0 * s
            col = be.matmul(be.weight(h.V * s), sumH)  # (B, 5, 1)
            ones = be.weight(np.ones((1, H.shape[2])))
            out = be.matmul(col, ones)  # (B, 5, l)
            total = out if total is None else be.add(total, out)
    if other:
        out = mha(tuple(other), H, be, budget)
        total = out if total is None else be.add(total, out)
    return total


def _ffn_float(ffn: dict, Z: np.ndarray) -> np.ndarray:
    """Z + FFN(Z) in float64 (`prepare`'s "ffn_float"): the first layer reads only the rows it has non-zero
    columns for, and only the rows the last layer writes are added to."""
    layers, cols, rows = ffn["layers"], ffn["cols"], ffn["rows"]
    out = Z.copy()
    if not rows:
        return out
    W, b = layers[0]
    Y = np.matmul(W[:, cols], Z[:, cols, :]) + b[None, :, None]  # (B, width, l)
    for W, b in layers[1:]:
        np.maximum(Y, 0.0, out=Y)
        Y = np.matmul(W, Y) + b[None, :, None]
    out[:, rows, :] += Y[:, rows, :]
    return out


def _ffn_plan(layers, be) -> dict:
    """The float64 layers of an FFN, the input rows its first layer reads and the output rows it writes."""
    fl = [(np.ascontiguousarray(be.weight(lay.W)), be.weight(lay.b)) for lay in layers]
    if not fl:
        return {"layers": [], "cols": [], "rows": []}
    cols = [c for c in range(fl[0][0].shape[1]) if fl[0][0][:, c].any()]
    W, b = fl[-1]
    rows = [r for r in range(W.shape[0]) if W[r].any() or b[r]]
    return {"layers": fl, "cols": cols, "rows": rows}


def _backend_name(net: Network, backend: str | None) -> str:
    name = backend or net.arithmetic
    return "float64" if name == "float" else name


def forward_structured(net: Network, X, backend: str | None = None, prepared: list[dict] | None = None):
    """Final hidden matrices (B, 5, l) using the recorded interaction pattern (see module docstring)."""
    name = _backend_name(net, backend)
    be = BACKENDS[name]()
    if name == "float64" and net.arithmetic == "exact":  # the embedding's weights as float64 once
        key = ("float64 embedding", id(net))
        if key not in _EMBEDDINGS or _EMBEDDINGS[key][0]() is not net:
            _EMBEDDINGS[key] = (weakref.ref(net, lambda _, k=key: _EMBEDDINGS.pop(k, None)), convert_embedding(net))
        return run_structured(net, be.tidy(embedding(_EMBEDDINGS[key][1], X, be)), name, prepared)[-1]
    return run_structured(net, be.tidy(embedding(net, X, be)), name, prepared)[-1]


_EMBEDDINGS: dict = {}


def convert_embedding(net: Network) -> Network:
    """A network with net's embedding (U, E, PE) in float64 and no blocks: what `embed` reads."""
    import dataclasses

    f = BACKENDS["float64"]()
    return dataclasses.replace(
        net, arithmetic="float64", U=f.weight(net.U), E=f.weight(net.E), PE=f.weight(net.PE), blocks=[]
    )


def run_structured(net: Network, H, backend: str, prepared: list[dict] | None = None, trace: bool = False) -> list:
    """The blocks on hidden matrices H (B, 5, l), structured: [H_final], or every block's output
    (H_0 first) with trace=True, as backend outputs (object arrays in exact, float64 otherwise)."""
    prepared = prepare(net, backend) if prepared is None else prepared
    ops = _Ops(backend)
    be = ops.be
    budget = ELEMENT_BUDGET[be.name]
    H = be.tidy(be.weight(H) if isinstance(H, np.ndarray) else H)
    states = [be.output(H)] if trace else []
    for bi, (blk, p) in enumerate(zip(net.blocks, prepared, strict=True)):
        M = p["M"]
        mx = ops.max_data(H)
        if (mx > M) if ops.exact else (mx > float(M) * (1 + 1e-3)):
            raise NetworkError(
                f"block {bi} ({p['name']}): |rows 0-1| reaches {float(mx):.6g} > M = {float(M):.6g}; "
                "the input is outside the domain on which the skipped scores are proven zero"
            )
        Z = H if p["sparse"] is None else _sparse_heads(ops, p["sparse"], H)
        dn = _dense_heads(ops, blk.heads, p["pairs"], H, budget)
        if dn is not None:
            Z = be.add(Z, dn)
        if blk.ffn:
            Z = be.tidy(Z)
            Z = be.add(ffn(blk.ffn, Z, be), Z) if ops.exact else _ffn_float(p["ffn_float"], Z)
        H = be.tidy(Z)
        if trace:
            states.append(be.output(H))
    return states if trace else [be.output(H)]


def evaluate_structured(net: Network, X, backend: str | None = None, batch: int | None = None) -> np.ndarray:
    """T(x) = H_final[decoder] for each row of X, in batches (memory O(batch · l)): 64 inputs in exact
    arithmetic, 32 in float64, whose larger temporaries leave the cache and cost page faults (a batch of 64
    spent as long in the kernel as in numpy at l = 1862)."""
    X = np.asarray(X, dtype=object if (backend or net.arithmetic) == "exact" else None)
    if X.ndim == 1:
        X = X[None]
    from threadpoolctl import threadpool_limits

    r, c = net.decoder
    name = _backend_name(net, backend)
    batch = batch or (64 if name == "exact" else 32)
    prepared = prepare(net, name)
    # one BLAS thread: the products are 5 x 5 times 5 x (batch·l), where extra threads only contend
    # (5x slower with 2 threads on a loaded 2-core machine)
    with threadpool_limits(1, user_api="blas"):
        outs = [forward_structured(net, X[s : s + batch], backend, prepared)[:, r, c] for s in range(0, len(X), batch)]
    return np.concatenate(outs) if outs else np.zeros(0)
