"""The paper's transformer class: Definitions 1-7 (Section 2.1 and Appendix D), nothing more.

    T(x) = D ∘ B_{L_T} ∘ ... ∘ B_1 ∘ (PE + E(x))                                   (Def. 1, eq. 5)
    E(x) = E' (U x)^T,  U in R^{l x D},  E' in R^{d_embd x 1}, applied column-wise    (Def. 1)
    A(H) = V H σ((K H)^T Q H),  column i: Σ_k σ(<Q h_i, K h_k>) V h_k                 (Def. 4, eq. 14-15)
    MHA(H) = Σ_j A_j(H)   (W_O taken as a sum, eq. 17)
    FFN(h) = W_L σ(... σ(W_1 h + b_1) ...) + b_L, token-wise; an empty FFN is zero     (Def. 5)
    B(H) = FFN(MHA(H) + H) + MHA(H) + H                                               (Def. 3, eq. 13)
    D(H) = H[decoder_row, decoder_col]

Decoder: Definition 1 says "the first element of the last column"; Appendix F.2 says "the first
element of the first row". We follow Definition 1 (row 0, column l-1, 0-based) by default; the
contradiction is recorded as `definitions.decoder` in proofs_check. Indices here are 0-based.

Structured tokens (Appendix D, Figure 6): d_embd = 5, rows 0-1 hold data, rows 2-3 the interaction
vector, row 4 the constant 1 (1-based in the paper: rows 1-2, 3-4, 5).

A network is plain data: numpy arrays whose entries are `fractions.Fraction` (arithmetic "exact") or
float64 (arithmetic "float64"). Evaluation takes a backend (`backends.py`) and is vectorised over
inputs and heads. Resources are measured from the weights (`resources`), never copied from a formula.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from typing import Any

import numpy as np

D_EMBD = 5
# the structured rows of a token h_t (0-based; the paper's rows 1-2, 3-4, 5)
DATA = slice(0, 2)  # the data rows x (rows 0-1): what blocks read and write
INTERACTION = slice(2, 4)  # the interaction vector I_t (rows 2-3)
CONSTANT = 4  # the constant 1 (row 4)
FIXED = slice(2, 5)  # rows no block may change: I_t and the constant
ARITHMETICS = ("exact", "float64")


class NetworkError(ValueError):
    """A network (or a file describing one) violates Definitions 1-7 or the file format."""


@dataclass(frozen=True)
class Head:
    """One ReLU attention head (Def. 4): d_embd x d_embd query, key and value matrices."""

    Q: np.ndarray
    K: np.ndarray
    V: np.ndarray


@dataclass(frozen=True)
class Layer:
    """One affine layer of an FFN (Def. 5): W is out x in, b has length out."""

    W: np.ndarray
    b: np.ndarray


@dataclass(frozen=True)
class Block:
    """A transformer block (Def. 3): an MHA (sum of heads) and a token-wise FFN."""

    heads: tuple[Head, ...] = ()
    ffn: tuple[Layer, ...] = ()


@dataclass
class Network:
    """T(x) = D ∘ B_L ∘ ... ∘ B_1 ∘ (PE + E'(Ux)^T)  (Def. 1)."""

    arithmetic: str
    l: int
    D: int
    U: np.ndarray  # (l, D)
    E: np.ndarray  # (d_embd, 1)
    PE: np.ndarray  # (d_embd, l)
    blocks: list[Block]
    decoder: tuple[int, int] | None = None  # (row, col); None = Def. 1: (0, l-1)
    meta: dict[str, Any] = field(default_factory=dict)
    d_embd: int = D_EMBD

    def __post_init__(self) -> None:
        if self.decoder is None:
            self.decoder = (0, self.l - 1)
        self.decoder = (int(self.decoder[0]), int(self.decoder[1]))
        validate(self)


# --------------------------------------------------------------------------------------------
# conversion of numbers and arrays


# exact numbers as text: ASCII digits only (Fraction also takes '1_000' and other scripts' digits),
# 'p', 'p/q' or a decimal with an exponent ('1e-3'); at most MAX_DIGITS digits in all, exponent
# included, so '1e1000000000' is refused before Fraction expands it
MAX_DIGITS = 4000
_EXACT = re.compile(r"^[+-]?(?:(\d+)/(\d+)|(\d+)?(?:\.(\d*))?(?:[eE]([+-]?\d+))?)$", re.ASCII)


def _short(v: str) -> str:
    return repr(v) if len(v) <= 40 else repr(v[:37] + "...")


def to_fraction(v) -> Fraction:
    """Exact rational value of an int, Fraction, finite float, or a 'p/q' / 'p' / decimal string."""
    if isinstance(v, Fraction):
        return v
    if isinstance(v, (bool, np.bool_)):
        raise NetworkError(f"boolean {v!r} is not a number")
    if isinstance(v, (int, np.integer)):
        return Fraction(int(v))
    if isinstance(v, (float, np.floating)):
        if not math.isfinite(v):
            raise NetworkError(f"non-finite weight {v!r}")
        return Fraction(float(v))
    if isinstance(v, str):
        t = v.strip()
        m = _EXACT.match(t)
        if not m or not any(m.group(k) for k in (1, 3, 4)):
            raise NetworkError(f"{_short(v)} is not an exact number 'p/q', 'p' or a decimal like '1e-3'")
        if m.group(5) is not None and len(m.group(5)) > 12:
            raise NetworkError(f"{_short(v)}: exponent too large (at most {MAX_DIGITS} digits in a number)")
        digits = sum(len(m.group(k) or "") for k in (1, 2, 3, 4)) + abs(int(m.group(5) or 0))
        if digits > MAX_DIGITS:
            raise NetworkError(f"{_short(v)} has about {digits} digits; at most {MAX_DIGITS} are allowed in a number")
        try:
            return Fraction(t)
        except (ValueError, ZeroDivisionError):
            raise NetworkError(f"{_short(v)} is not an exact number 'p/q' or 'p'") from None
    try:  # sympy Rational and friends
        return Fraction(int(v.p), int(v.q))
    except AttributeError:
        raise NetworkError(f"{v!r} ({type(v).__name__}) is not a number") from None


def as_array(a, arithmetic: str, shape: Sequence[int] | None = None, name: str = "array") -> np.ndarray:
    """Convert nested lists / arrays to the network's entry type, checking shape and finiteness."""
    if arithmetic == "exact":
        arr = np.asarray(a, dtype=object)
        if arr.dtype != object:
            arr = arr.astype(object)
        flat = [to_fraction(v) for v in arr.reshape(-1)]
        out = np.empty(arr.shape, dtype=object)
        out.reshape(-1)[:] = flat if flat else []
    elif arithmetic == "float64":
        try:
            if isinstance(a, np.ndarray) and a.dtype == object:
                flat = [float(to_fraction(v)) for v in a.reshape(-1)]
                out = np.array(flat, dtype=np.float64).reshape(a.shape)
            else:
                out = np.array(a, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise NetworkError(f"{name}: entries must be numbers ({exc})") from None
        if out.size and not np.all(np.isfinite(out)):
            raise NetworkError(f"{name}: non-finite weight")
    else:
        raise NetworkError(f"unknown arithmetic {arithmetic!r}; expected one of {ARITHMETICS}")
    if shape is not None and tuple(out.shape) != tuple(shape):
        raise NetworkError(f"{name}: shape {tuple(out.shape)}, expected {tuple(shape)}")
    return out


def zeros(shape: Sequence[int], arithmetic: str) -> np.ndarray:
    if arithmetic == "exact":
        out = np.empty(tuple(shape), dtype=object)
        out.reshape(-1)[:] = [Fraction(0)] * out.size
        return out
    return np.zeros(tuple(shape), dtype=np.float64)


# --------------------------------------------------------------------------------------------
# structured tokens


# Primes p = 1 (mod 4), each a sum of two squares: products of them have many representations.
_PYTHAGOREAN_PRIMES = (5, 13, 17, 29, 37, 41, 53, 61, 73, 89, 97, 101, 109, 113, 137, 149)


@cache
def _circle_points(k: int) -> tuple[int, tuple[tuple[int, int], ...]]:
    """All integer points (x, y) with x^2 + y^2 = c^2, x >= 0, y > 0, for c the product of k primes
    p = 1 (mod 4), sorted by angle. With p = ππ̄ in the Gaussian integers, the points are the
    products Π π_i^e_i π̄_i^(2-e_i) (e_i in {0,1,2}) times units: 3^k - 1 in the open quadrant plus (0, c)."""
    c, gz = 1, [(1, 0)]
    for p in _PYTHAGOREAN_PRIMES[:k]:
        a = next(a for a in range(1, p) if round((p - a * a) ** 0.5) ** 2 == p - a * a)
        b = round((p - a * a) ** 0.5)
        choices = [(a * a - b * b, 2 * a * b), (p, 0), (a * a - b * b, -2 * a * b)]  # π², ππ̄, π̄²
        gz = [(x * u - y * v, x * v + y * u) for x, y in gz for u, v in choices]
        c *= p
    pts = set()
    for x, y in gz:
        for _ in range(4):  # the four units
            x, y = -y, x
            if x >= 0 and y > 0:
                pts.add((x, y))
    return c, tuple(sorted(pts, key=lambda q: math.atan2(q[1], q[0])))


@cache
def _exact_interaction(l: int) -> tuple[int, tuple[tuple[int, int], ...]]:
    k = 1
    while 3**k - 1 < 8 * l:  # 8 candidates per token keep each I_t close to the paper's angle
        k += 1
    c, pts = _circle_points(k)
    ang = [math.atan2(y, x) for x, y in pts]
    chosen, lo = [], 0
    for t in range(1, l):
        target = t * math.pi / (2 * l)
        hi = len(pts) - 1 - (l - 1 - t)  # leave room for the remaining tokens and the final (0, c)
        j = min(max(bisect.bisect_left(ang, target, lo, hi), lo), hi - 1)
        if j > lo and abs(ang[j - 1] - target) <= abs(ang[j] - target):
            j -= 1
        chosen.append(pts[j])
        lo = j + 1
    chosen.append((0, c))
    return c, tuple(chosen)


def interaction_vectors(l: int, arithmetic: str) -> np.ndarray:
    """The interaction vectors I_1..I_l as a (2, l) array (Appendix E.1, Step 1).

    float64: the paper's I_t = (cos(tπ/2l), sin(tπ/2l)).
    exact: rational points (x_t/c, y_t/c) on the unit circle that share ONE denominator c, with
    strictly increasing angle in the first quadrant, ending at (0, 1) as the paper's do. Every
    rational point on the circle is ((1-s²)/(1+s²), 2s/(1+s²)) for s = tan(angle/2); choosing them
    with a common denominator (c a product of primes p = 1 mod 4, which has 3^k - 1 such points in
    the open quadrant) keeps exact evaluation fast: tokens never force a common denominator that is
    the lcm of l different ones. Each I_t is the available point nearest the paper's angle tπ/2l.
    """
    if l < 1:
        raise NetworkError(f"l must be >= 1, got {l}")
    t = np.arange(1, l + 1)
    if arithmetic == "float64":
        ang = t * np.pi / (2 * l)
        return np.stack([np.cos(ang), np.sin(ang)])
    if arithmetic != "exact":
        raise NetworkError(f"unknown arithmetic {arithmetic!r}")
    c, pts = _exact_interaction(l)
    out = np.empty((2, l), dtype=object)
    for j, (x, y) in enumerate(pts):
        out[0, j], out[1, j] = Fraction(x, c), Fraction(y, c)
    return out


def structured_positional(l: int, arithmetic: str) -> np.ndarray:
    """PE with rows 0-1 zero, rows 2-3 the interaction vectors, row 4 the constant 1."""
    pe = zeros((D_EMBD, l), arithmetic)
    pe[INTERACTION, :] = interaction_vectors(l, arithmetic)
    pe[4, :] = Fraction(1) if arithmetic == "exact" else 1.0
    return pe


# --------------------------------------------------------------------------------------------
# validation and resources


def validate(net: Network) -> None:
    """Check every shape and entry against Definitions 1-7; raise NetworkError naming the problem."""
    if net.arithmetic not in ARITHMETICS:
        raise NetworkError(f"unknown arithmetic {net.arithmetic!r}; expected one of {ARITHMETICS}")
    if net.d_embd != D_EMBD:
        raise NetworkError(f"d_embd must be {D_EMBD} (structured tokens, Appendix D), got {net.d_embd}")
    if not isinstance(net.l, int) or net.l < 1:
        raise NetworkError(f"l must be a positive integer, got {net.l!r}")
    if not isinstance(net.D, int) or net.D < 1:
        raise NetworkError(f"D must be a positive integer, got {net.D!r}")
    d, a = net.d_embd, net.arithmetic
    net.U = as_array(net.U, a, (net.l, net.D), "embedding.U")
    net.E = as_array(net.E, a, (d, 1), "embedding.E")
    net.PE = as_array(net.PE, a, (d, net.l), "positional")
    blocks = []
    for bi, blk in enumerate(net.blocks):
        heads = tuple(
            Head(*(as_array(getattr(h, k), a, (d, d), f"blocks[{bi}].heads[{hi}].{k}") for k in "QKV"))
            for hi, h in enumerate(blk.heads)
        )
        ffn, width_in = [], d
        for li, lay in enumerate(blk.ffn):
            W = as_array(lay.W, a, None, f"blocks[{bi}].ffn[{li}].W")
            if W.ndim != 2 or W.shape[1] != width_in:
                raise NetworkError(f"blocks[{bi}].ffn[{li}].W: shape {W.shape}, expected (out, {width_in})")
            b = as_array(lay.b, a, (W.shape[0],), f"blocks[{bi}].ffn[{li}].b")
            ffn.append(Layer(W, b))
            width_in = W.shape[0]
        if ffn and width_in != d:
            raise NetworkError(f"blocks[{bi}].ffn: last layer has {width_in} outputs, expected {d}")
        blocks.append(Block(heads, tuple(ffn)))
    net.blocks = blocks
    r, c = net.decoder
    if not (0 <= r < d and 0 <= c < net.l):
        raise NetworkError(f"decoder (row {r}, col {c}) outside the {d} x {net.l} hidden matrix")


def parameters(net: Network) -> Iterable[tuple[str, np.ndarray]]:
    """Every weight array θ of the network with its name (embedding, positional, heads, FFNs)."""
    yield "embedding.U", net.U
    yield "embedding.E", net.E
    yield "positional", net.PE
    for bi, blk in enumerate(net.blocks):
        for hi, h in enumerate(blk.heads):
            for k in "QKV":
                yield f"blocks[{bi}].heads[{hi}].{k}", getattr(h, k)
        for li, lay in enumerate(blk.ffn):
            yield f"blocks[{bi}].ffn[{li}].W", lay.W
            yield f"blocks[{bi}].ffn[{li}].b", lay.b


def _maxabs(arr: np.ndarray):
    if arr.size == 0:
        return Fraction(0) if arr.dtype == object else 0.0
    return np.abs(arr).max()


@dataclass(frozen=True)
class Resources:
    """Resources of Definition 2, measured from the weights."""

    L_T: int  # number of blocks
    m: int  # max heads per block
    L_FFN: int  # max FFN depth (number of affine layers)
    w_FFN: int  # max hidden FFN width (0 when no FFN has a hidden layer)
    l: int  # hidden tokens
    d_embd: int
    D: int
    kappa: Fraction | float  # max |θ| over every weight, embedding and PE included
    kappa_blocks: Fraction | float  # max |θ| over attention and FFN weights only
    n_params: int  # number of weight entries
    n_nonzero: int  # of which non-zero

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        for k in ("kappa", "kappa_blocks"):
            out[k] = float(out[k])
        return out


def resources(net: Network) -> Resources:
    kappa_all, kappa_blocks, n_params, n_nonzero = 0, 0, 0, 0
    for name, arr in parameters(net):
        mx = _maxabs(arr)
        kappa_all = max(kappa_all, mx)
        if name.startswith("blocks"):
            kappa_blocks = max(kappa_blocks, mx)
        n_params += arr.size
        n_nonzero += int(np.count_nonzero(arr != 0))
    hidden = [lay.W.shape[0] for blk in net.blocks for lay in blk.ffn[:-1]]
    return Resources(
        L_T=len(net.blocks),
        m=max((len(b.heads) for b in net.blocks), default=0),
        L_FFN=max((len(b.ffn) for b in net.blocks), default=0),
        w_FFN=max(hidden, default=0),
        l=net.l,
        d_embd=net.d_embd,
        D=net.D,
        kappa=kappa_all,
        kappa_blocks=kappa_blocks,
        n_params=n_params,
        n_nonzero=n_nonzero,
    )


def convert(net: Network, arithmetic: str) -> Network:
    """The same weights in the other arithmetic (float64 -> exact is exact; exact -> float64 rounds)."""
    conv = lambda arr: as_array(arr, arithmetic)  # noqa: E731
    return Network(
        arithmetic=arithmetic,
        l=net.l,
        D=net.D,
        U=conv(net.U),
        E=conv(net.E),
        PE=conv(net.PE),
        blocks=[
            Block(
                tuple(Head(conv(h.Q), conv(h.K), conv(h.V)) for h in b.heads),
                tuple(Layer(conv(x.W), conv(x.b)) for x in b.ffn),
            )
            for b in net.blocks
        ],
        decoder=net.decoder,
        meta=dict(net.meta),
    )
