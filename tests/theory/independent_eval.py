"""An independent implementation of the tmcheck-network v1 spec (README, "The network file format").

Written from the spec alone, in plain Python with Fractions (float files: floats), importing nothing
from tmcheck, so that agreement with tmcheck's evaluator checks both against the spec.
"""

from __future__ import annotations

import json
from fractions import Fraction


def _num(v, exact):
    return Fraction(v) if exact else float(v)


def _mat(rows, exact):
    return [[_num(v, exact) for v in row] for row in rows]


def _matvec(M, v):
    return [sum(a * b for a, b in zip(row, v, strict=True)) for row in M]


def _relu(v):
    return [x if x > 0 else 0 * x for x in v]


def load(path):
    with open(path) as fh:
        return json.load(fh)


def evaluate(spec: dict, x: list, hidden: bool = False):
    """T(x) for one input x (list of D numbers); with hidden=True the final hidden matrix as columns."""
    assert spec["format"] == "tmcheck-network" and spec["version"] == 1
    exact = spec["arithmetic"] == "exact"
    x = [_num(v, exact) for v in x]
    d, l = spec["d_embd"], spec["l"]
    U = _mat(spec["embedding"]["U"], exact)
    E = [row[0] for row in _mat(spec["embedding"]["E"], exact)]
    PE = _mat(spec["positional"], exact)
    ux = _matvec(U, x)
    # tokens as columns: h_t = E * (Ux)_t + PE[:, t]
    H = [[E[r] * ux[t] + PE[r][t] for r in range(d)] for t in range(l)]
    for blk in spec["blocks"]:
        mha = [[0 * H[0][0]] * d for _ in range(l)]
        for head in blk["heads"]:
            Q, K, V = (_mat(head[k], exact) for k in "QKV")
            q = [_matvec(Q, h) for h in H]
            k = [_matvec(K, h) for h in H]
            v = [_matvec(V, h) for h in H]
            for i in range(l):
                for j in range(l):
                    w = sum(a * b for a, b in zip(q[i], k[j], strict=True))
                    if w > 0:
                        mha[i] = [m + w * vv for m, vv in zip(mha[i], v[j], strict=True)]
        Z = [[a + b for a, b in zip(mha[t], H[t], strict=True)] for t in range(l)]
        layers = [(_mat(f["W"], exact), [_num(b, exact) for b in f["b"]]) for f in blk["ffn"]]
        newH = []
        for t in range(l):
            y = Z[t]
            for li, (W, b) in enumerate(layers):
                y = [a + c for a, c in zip(_matvec(W, y), b, strict=True)]
                if li < len(layers) - 1:
                    y = _relu(y)
            newH.append([a + c for a, c in zip(y, Z[t], strict=True)] if layers else Z[t])
        H = newH
    if hidden:
        return H
    return H[spec["decoder"]["col"]][spec["decoder"]["row"]]
