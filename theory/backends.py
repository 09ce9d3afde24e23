"""Evaluation backends for `network.Network`: exact rational arithmetic and float64.

One forward pass (`forward`) is written once over a small backend interface, vectorised over a batch of
inputs and over the heads of a block (heads are processed in chunks so memory stays bounded).

Exact backend. A tensor is an integer numerator array and one positive integer denominator, so no
per-entry gcd is ever taken inside a product. Numerators are held as float64 whenever every value
the next operation can produce is below 2^53 in magnitude: then every partial sum is an integer that
float64 represents exactly, whatever order BLAS sums in, and the result is exact. The bound is
checked before each operation (max|a| * max|b| * inner for a product); when it fails, a product
runs in int64 if the same bound is below 2^63, and otherwise on Python integers (object arrays). Common factors are
divided out after each block.
Nothing is ever rounded, so exact equalities are checked with no tolerance.

Float backend: numpy float64 with BLAS.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from tmcheck.theory.network import Network, NetworkError, to_fraction

_EXACT_FLOAT = 2**53  # every integer of smaller magnitude is a float64
_EXACT_INT64 = 2**63
ELEMENT_BUDGET = {"exact": 4_000_000, "float64": 40_000_000}  # attention scores held at once
# exact numerators and denominators grow about threefold in bits per block (a head is cubic in H):
# a 20 KB file of 40 blocks would need numbers of 3^40 bits, so evaluation stops at this size
MAX_BITS = 100_000


# --------------------------------------------------------------------------------------------
# exact rational tensors


def _maxabs(a: np.ndarray) -> int:
    if a.size == 0:
        return 0
    return int(np.abs(a).max())


def _as_obj(a: np.ndarray) -> np.ndarray:
    return a if a.dtype == object else a.astype(np.int64).astype(object)


def _as_int64(a: np.ndarray) -> np.ndarray:
    return a.astype(np.int64)


def _as_float(a: np.ndarray) -> np.ndarray:
    return a if a.dtype != object else a.astype(np.float64)


class Rat:
    """A rational tensor num/den: num integer-valued (float64 below 2^53, else Python ints), den > 0."""

    __slots__ = ("num", "den")

    def __init__(self, num: np.ndarray, den: int):
        self.num, self.den = num, int(den)

    @classmethod
    def from_array(cls, arr) -> Rat:
        arr = np.asarray(arr, dtype=object)
        flat = [to_fraction(v) for v in arr.reshape(-1)]
        den = math.lcm(*(f.denominator for f in flat)) if flat else 1
        num = np.array([f.numerator * (den // f.denominator) for f in flat], dtype=object)
        return cls(num.reshape(arr.shape), den).compact()

    def compact(self) -> Rat:
        """Use float64 numerators when every entry is below 2^53 in magnitude."""
        if self.num.dtype == object and _maxabs(self.num) < _EXACT_FLOAT:
            return Rat(self.num.astype(np.float64), self.den)
        return self

    def reduce(self) -> Rat:
        """Divide numerators and denominator by their common factor."""
        if self.num.size == 0:
            return Rat(self.num, 1)
        ints = self.num.astype(np.int64) if self.num.dtype != object else self.num
        g = math.gcd(int(np.gcd.reduce(ints.reshape(-1))), self.den)
        if g <= 1:
            return self
        if self.num.dtype == object:
            return Rat(self.num // g, self.den // g).compact()
        return Rat(self.num / g, self.den // g)  # exact: g divides every numerator

    def to_fractions(self) -> np.ndarray:
        out = np.empty(self.num.shape, dtype=object)
        out.reshape(-1)[:] = [Fraction(int(v), self.den) for v in self.num.reshape(-1)]
        return out

    @property
    def shape(self):
        return self.num.shape


def _num_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ma, mb = _maxabs(a), _maxabs(b)
    if ma == 0 or mb == 0:
        shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
        return np.zeros(shape)
    bound = ma * mb * a.shape[-1]
    if bound < _EXACT_FLOAT:
        return np.matmul(_as_float(a), _as_float(b))
    if bound < _EXACT_INT64:  # no partial sum can overflow int64
        return np.matmul(_as_int64(a), _as_int64(b)).astype(object)
    return np.matmul(_as_obj(a), _as_obj(b))


def _num_scale(a: np.ndarray, k: int) -> np.ndarray:
    ma = _maxabs(a)
    if k == 1 or ma == 0:  # zeros stay zeros, even when k itself is beyond float range
        return a
    if ma * k < _EXACT_FLOAT:
        return _as_float(a) * k
    return _as_obj(a) * k


def _num_add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if _maxabs(a) + _maxabs(b) < _EXACT_FLOAT:
        return _as_float(a) + _as_float(b)
    return _as_obj(a) + _as_obj(b)


class ExactBackend:
    name = "exact"

    def weight(self, arr) -> Rat:
        return Rat.from_array(arr)

    def inputs(self, X) -> Rat:
        return Rat.from_array(X)

    def matmul(self, a: Rat, b: Rat) -> Rat:
        return Rat(_num_matmul(a.num, b.num), a.den * b.den)

    def add(self, a: Rat, b: Rat) -> Rat:
        den = math.lcm(a.den, b.den)
        return Rat(_num_add(_num_scale(a.num, den // a.den), _num_scale(b.num, den // b.den)), den)

    def relu(self, a: Rat) -> Rat:
        return Rat(np.maximum(a.num, 0), a.den)

    def sum(self, a: Rat, axis: int) -> Rat:
        n = a.num.shape[axis]
        num = a.num if _maxabs(a.num) * n < _EXACT_FLOAT else _as_obj(a.num)
        return Rat(num.sum(axis=axis), a.den)

    def transpose(self, a: Rat) -> Rat:
        return Rat(np.swapaxes(a.num, -1, -2), a.den)

    def index(self, a: Rat, idx) -> Rat:
        return Rat(a.num[idx], a.den)

    def concat(self, parts: Sequence[Rat], axis: int) -> Rat:
        den = math.lcm(*(p.den for p in parts))
        nums = [_num_scale(p.num, den // p.den) for p in parts]
        if any(n.dtype == object for n in nums):
            nums = [_as_obj(n) for n in nums]
        return Rat(np.concatenate(nums, axis=axis), den)

    def tidy(self, a: Rat) -> Rat:
        return a.reduce()

    def output(self, a: Rat) -> np.ndarray:
        return a.to_fractions()


class FloatBackend:
    name = "float64"

    def weight(self, arr) -> np.ndarray:
        arr = np.asarray(arr)
        if arr.dtype == object:
            return np.array([float(v) for v in arr.reshape(-1)], dtype=np.float64).reshape(arr.shape)
        return arr.astype(np.float64)

    def inputs(self, X) -> np.ndarray:
        X = self.weight(X)
        if not np.all(np.isfinite(X)):
            raise NetworkError("input contains NaN or inf")
        return X

    matmul = staticmethod(np.matmul)
    add = staticmethod(np.add)

    @staticmethod
    def relu(a):
        return np.maximum(a, 0.0)

    @staticmethod
    def sum(a, axis):
        return a.sum(axis=axis)

    @staticmethod
    def transpose(a):
        return np.swapaxes(a, -1, -2)

    @staticmethod
    def index(a, idx):
        return a[idx]

    @staticmethod
    def concat(parts, axis):
        return np.concatenate(parts, axis=axis)

    @staticmethod
    def tidy(a):
        return a

    @staticmethod
    def output(a):
        return np.asarray(a, dtype=np.float64)


BACKENDS = {"exact": ExactBackend, "float64": FloatBackend, "float": FloatBackend}


def get_backend(name: str | None, net: Network):
    name = name or net.arithmetic
    try:
        return BACKENDS[name]()
    except KeyError:
        raise NetworkError(f"unknown backend {name!r}; expected 'exact' or 'float64'") from None


# --------------------------------------------------------------------------------------------
# forward pass


def _check_inputs(net: Network, X) -> np.ndarray:
    arr = np.asarray(X, dtype=object)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != net.D:
        raise NetworkError(f"inputs must have shape (n, D={net.D}), got {np.asarray(X, dtype=object).shape}")
    return arr


def embedding(net: Network, X, be) -> object:
    """H_0 = E'(U x)^T + PE for each input: (B, d_embd, l)."""
    Xb = be.inputs(_check_inputs(net, X))  # (B, D)
    UX = be.matmul(Xb, be.transpose(be.weight(net.U)))  # (B, l)
    UX = be.index(UX, (slice(None), None, slice(None)))  # (B, 1, l)
    H = be.matmul(be.weight(net.E), UX)  # (B, d, l)
    return be.add(H, be.weight(net.PE))


def mha(heads, H, be, budget: int) -> object | None:
    """Σ_j V_j H σ((K_j H)^T Q_j H) over the heads, in chunks: (B, d, l), or None with no heads."""
    if not heads:
        return None
    B, _, l = H.shape
    Ht = be.transpose(H)  # (B, l, d)
    chunk = max(1, budget // max(1, B * l * l))
    total = None
    for s in range(0, len(heads), chunk):
        hs = heads[s : s + chunk]
        # <Q h_i, K h_k> = h_k^T (K^T Q) h_i, so one d x d kernel per head replaces two products.
        KtQ = be.weight(np.stack([h.K.T @ h.Q for h in hs]))  # (m, d, d)
        V = be.weight(np.stack([h.V for h in hs]))  # (m, d, d)
        Hm = be.index(H, (slice(None), None))  # (B, 1, d, l)
        S = be.matmul(be.index(Ht, (slice(None), None)), be.matmul(KtQ, Hm))  # (B, m, l[k], l[i])
        out = be.matmul(be.matmul(V, Hm), be.relu(S))  # (B, m, d, l)
        out = be.sum(out, axis=1)
        total = out if total is None else be.add(total, out)
    return total


def ffn(layers, Z, be) -> object:
    """Def. 5 token-wise: ReLU between layers, none after the last one."""
    Y = Z
    for i, lay in enumerate(layers):
        W, b = be.weight(lay.W), be.weight(lay.b)
        Y = be.add(be.matmul(W, Y), be.index(b, (slice(None), None)))  # (B, out, l)
        if i < len(layers) - 1:
            Y = be.relu(Y)
    return Y


def block(blk, H, be, budget: int) -> object:
    """B(H) = FFN(MHA(H) + H) + MHA(H) + H  (Def. 3)."""
    A = mha(blk.heads, H, be, budget)
    Z = H if A is None else be.add(A, H)
    if blk.ffn:
        Z = be.add(ffn(blk.ffn, Z, be), Z)
    return be.tidy(Z)


def _bits(a: Rat) -> int:
    return max(_maxabs(a.num).bit_length() if a.num.dtype == object else 53, a.den.bit_length())


def run_blocks(blocks, H, backend: str, trace: bool = False, max_bits: int = MAX_BITS):
    """Apply blocks to hidden matrices H (B, d_embd, l) directly (entries Fractions or floats).

    This is what a lemma's claim is about: the map H -> B(H) on structured hidden matrices, which
    the embedding E'(Ux)^T + PE cannot reach in full (it fills one data row only).
    Returns the final hidden matrices, or [H_in, H_1, ..., H_L] if trace. Exact evaluation stops
    with a NetworkError once a numerator or denominator exceeds max_bits bits; float64 overflow
    gives inf/nan without warnings (`forward` refuses it).
    """
    be = BACKENDS[backend]()
    budget = ELEMENT_BUDGET[be.name]
    arr = np.asarray(H, dtype=object)
    if arr.ndim == 2:
        arr = arr[None]
    Hb = be.tidy(be.inputs(arr) if be.name == "float64" else Rat.from_array(arr))
    states = [be.output(Hb)] if trace else None
    with np.errstate(over="ignore", invalid="ignore"):
        for k, blk in enumerate(blocks):
            Hb = block(blk, Hb, be, budget)
            if be.name == "exact" and _bits(Hb) > max_bits:
                raise NetworkError(
                    f"exact values reached {_bits(Hb)} bits after block {k + 1} of {len(blocks)} "
                    f"(limit {max_bits}: raise it with --max-bits, or evaluate with --float)"
                )
            if trace:
                states.append(be.output(Hb))
    return states if trace else be.output(Hb)


def forward(net: Network, X, backend: str | None = None, trace: bool = False, max_bits: int = MAX_BITS):
    """Hidden matrices for a batch of inputs: the final (B, d, l) one, or [H_0, ..., H_L] if trace.

    Exact results are numpy object arrays of Fractions, float results float64 arrays; a float64
    pass that overflows raises NetworkError instead of returning inf or nan.
    """
    be = get_backend(backend, net)
    with np.errstate(over="ignore", invalid="ignore"):
        H0 = be.output(be.tidy(embedding(net, X, be)))
    out = run_blocks(net.blocks, H0, be.name, trace=trace, max_bits=max_bits)
    if be.name == "float64" and not all(np.isfinite(h).all() for h in (out if trace else [out])):
        raise NetworkError("float64 evaluation overflowed (a hidden value beyond ±1.8e308); evaluate with --exact")
    return out


def evaluate(net: Network, X, backend: str | None = None, max_bits: int = MAX_BITS) -> np.ndarray:
    """T(x) = H_final[row, col] (Def. 1) for each input row of X: shape (B,)."""
    r, c = net.decoder
    return forward(net, X, backend, max_bits=max_bits)[:, r, c]
