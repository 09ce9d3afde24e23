"""Sound enclosures in float64 for the sup-norm certificates of `theory.certify` (issue #41, item 3).

`Aff` is a first-order affine form with an interval remainder (a Taylor model of order 1), batched:

    v(e) ∈ c + Σ_i g_i e_i + [lo, hi]   for every e ∈ [-1, 1]^k,

where e are the k input directions of a cell (x_i = m_i + h_i e_i). Affine maps are exact on the
linear part, so the network's cancellations (ψ = σ(u+2) - σ(u+1) - σ(u-1) + σ(u-2) is 0 far from a
grid point) cost nothing; products keep the first-order terms and bound the rest; ReLU is the identity
or exactly 0 when its input's range has one sign, and a chord relaxation otherwise.

Rounding. Every result is computed in round-to-nearest, and the rounding error is bounded and added to
the remainder, rounded outward with `down`/`up` (one `nextafter` step beyond a round-to-nearest result
bounds the exact value): a sum of n products has error at most γ_n Σ|a_i b_i| (Higham, Thm. 3.5,
whatever order BLAS sums in), with γ_n = n u / (1 - n u) < 1.01 n u; weights are the round-to-nearest
floats of rationals (relative error u), counted as one more term. Underflow adds at most 2^-1074 an
operation, which TINY covers.

`enclose_target` encloses a target f (a sympy expression) on a box with mpmath's interval arithmetic
(`mpmath.iv`, outward-rounded): the mean-value form f(m) + ∇f(X)(x - m) as an `Aff`, or the plain
range where ∇f has no finite enclosure. Functions outside a known list are refused (`CertifyError`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

U = 2.0**-53  # unit roundoff of float64
TINY = 2.0**-1000  # covers every underflow error (each < 2^-1074) of any one operation's sum


class CertifyError(ValueError):
    """A network or target outside what the certificate can enclose soundly (said in one line)."""


def down(x):
    """A float <= the exact value whose round-to-nearest is x (x - 4u|x| - 2^-1073, rounded, is below it)."""
    return x - (np.abs(x) * (4 * U) + 2.0**-1073)


def up(x):
    return x + (np.abs(x) * (4 * U) + 2.0**-1073)


def rounding_gamma(n: int) -> float:
    """A bound on the relative error of an n-term float dot product whose weights are rounded rationals."""
    return 1.01 * (n + 2) * U


def frac_interval(values) -> tuple[np.ndarray, np.ndarray]:
    """Float bounds [lo, hi] of exact rationals (an array of Fractions or ints), lo = hi where exact."""
    arr = np.asarray(values, dtype=object)
    mid = np.array([float(v) for v in arr.reshape(-1)], dtype=np.float64).reshape(arr.shape)
    exact = np.array([_same(m, v) for m, v in zip(mid.reshape(-1).tolist(), arr.reshape(-1), strict=True)], bool)
    exact = exact.reshape(arr.shape)
    return np.where(exact, mid, down(mid)), np.where(exact, mid, up(mid))


def _same(m: float, v) -> bool:
    """Is the float m exactly the rational v?"""
    if isinstance(v, Fraction | int):
        return math.isfinite(m) and m.as_integer_ratio() == (v.numerator, v.denominator)
    return Fraction(m) == Fraction(v)


def imul(alo, ahi, blo, bhi):
    """Interval product, outward rounded."""
    p = np.stack(np.broadcast_arrays(alo * blo, alo * bhi, ahi * blo, ahi * bhi))
    return down(p.min(0)), up(p.max(0))


@dataclass
class Aff:
    """c + g·e + [lo, hi] for e ∈ [-1, 1]^k: c, lo, hi of one shape S, g of shape (k,) + S (direction first, so that
    each direction's slice is contiguous)."""

    c: np.ndarray
    g: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    @property
    def k(self) -> int:
        return self.g.shape[0]

    @classmethod
    def interval(cls, lo, hi, k: int) -> Aff:
        """The constant enclosure [lo, hi] (no linear part)."""
        lo, hi = np.broadcast_arrays(np.asarray(lo, np.float64), np.asarray(hi, np.float64))
        c = (lo + hi) / 2
        return cls(c, np.zeros((k,) + c.shape), down(lo - c), up(hi - c))

    @classmethod
    def zeros(cls, shape, k: int) -> Aff:
        z = np.zeros(shape)
        return cls(z, np.zeros((k,) + tuple(shape)), z.copy(), z.copy())

    def radius(self) -> np.ndarray:
        """An upper bound on Σ_i |g_i|."""
        s = np.abs(self.g[0])
        for gi in self.g[1:]:
            s = s + np.abs(gi)
        return np.where(s == 0, 0.0, up(s * (1 + (self.k + 2) * U)))

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """[lo, hi] containing every value of the form on the cell."""
        G = self.radius()
        point = (G == 0) & (self.lo == 0) & (self.hi == 0)  # exactly c
        lo = np.where(point, self.c, down(down(self.c - G) + self.lo))
        return lo, np.where(point, self.c, up(up(self.c + G) + self.hi))

    def absmax(self) -> np.ndarray:
        lo, hi = self.bounds()
        return np.maximum(np.abs(lo), np.abs(hi))

    def __getitem__(self, idx) -> Aff:
        idx = idx if isinstance(idx, tuple) else (idx,)
        return Aff(self.c[idx], self.g[(slice(None),) + idx], self.lo[idx], self.hi[idx])

    def _with_error(self, c, g, lo, hi, err) -> Aff:
        err = up(err * (1 + 4 * U) + TINY)
        return Aff(c, g, down(lo - err), up(hi + err))

    def add(self, other: Aff) -> Aff:
        c, g = self.c + other.c, self.g + other.g
        err = U * (np.abs(self.c) + np.abs(other.c) + self.radius() + other.radius())
        return self._with_error(c, g, down(self.lo + other.lo), up(self.hi + other.hi), err)

    def add_interval(self, lo, hi) -> Aff:
        """self + w for every w ∈ [lo, hi]: the midpoint joins the centre (products then keep it first-order)."""
        lo, hi = np.asarray(lo, np.float64), np.asarray(hi, np.float64)
        m = (lo + hi) / 2
        c = self.c + m
        err = U * (np.abs(self.c) + np.abs(m))
        return self._with_error(
            c, np.broadcast_to(self.g, (self.k,) + c.shape), down(self.lo + down(lo - m)), up(self.hi + up(hi - m)), err
        )

    def scale(self, wlo, whi) -> Aff:
        """w · self for every w ∈ [wlo, whi] (arrays broadcast against the form's shape)."""
        wlo, whi = np.asarray(wlo, np.float64), np.asarray(whi, np.float64)
        wm = (wlo + whi) / 2
        wr = up(np.maximum(up(whi - wm), up(wm - wlo)))
        c, g = wm * self.c, wm * self.g
        lo, hi = imul(wm, wm, self.lo, self.hi)
        err = U * (np.abs(c) + np.abs(wm) * self.radius()) + wr * self.absmax()
        return self._with_error(c, g, lo, hi, err)

    def mul(self, other: Aff) -> Aff:
        """The product of two forms over the same cell: first-order terms kept, the rest bounded."""
        ca, cb = self.c, other.c
        c = ca * cb
        g = ca * other.g + cb * self.g
        Ga, Gb = self.radius(), other.radius()
        rl, rh = imul(down(self.lo - Ga), up(self.hi + Ga), down(other.lo - Gb), up(other.hi + Gb))
        al, ah = imul(ca, ca, other.lo, other.hi)
        bl, bh = imul(cb, cb, self.lo, self.hi)
        lo, hi = down(down(rl + al) + bl), up(up(rh + ah) + bh)
        err = 4 * U * (np.abs(c) + np.abs(ca) * Gb + np.abs(cb) * Ga)
        return self._with_error(c, g, lo, hi, err)

    def lift(self, groups: np.ndarray) -> Aff:
        """The same values with each remainder made a direction of its own: c + g·e + Σ_j r e_{k+j} + [m, m], where
        [lo, hi] ⊂ m + r[-1, 1] and j = groups[...] (shape of c) names the new direction of each entry. Entries of one
        group share a direction, which is sound as long as nothing combines two entries of one group before
        `collapse` (a token-wise FFN on (B, rows, n) with one group per row: rows of one token never share one)."""
        m = (self.lo + self.hi) / 2
        r = up(np.maximum(up(self.hi - m), up(m - self.lo)))
        n_new = int(groups.max(initial=-1)) + 1
        extra = np.zeros((n_new,) + self.c.shape)
        for j in range(n_new):
            extra[j] = np.where(groups == j, r, 0.0)
        return Aff(self.c, np.concatenate([self.g, extra]), m, m.copy())

    def collapse(self, k: int) -> Aff:
        """Back to the first k directions: the others' |coefficients| join the remainder (after `lift`)."""
        if self.k == k:
            return self
        tail = Aff(self.c, self.g[k:], self.lo, self.hi).radius()
        return Aff(self.c, self.g[:k], down(self.lo - tail), up(self.hi + tail))

    def relu(self, known_pos: np.ndarray | None = None) -> Aff:
        """σ(v): v itself where v >= 0 on the cell (or where known_pos says so: v >= 0 by construction, such as a
        non-negative combination of ReLU outputs, whatever the enclosure's range), exactly 0 where v <= 0, else
        the chord λv + [·, ·]."""
        lo, hi = self.bounds()
        pos, neg = lo >= 0, hi <= 0
        if known_pos is not None:
            pos = pos | np.broadcast_to(known_pos, pos.shape)
            neg = neg & ~pos
        mixed = ~(pos | neg)
        lam = np.where(pos, 1.0, 0.0)
        if mixed.any():
            lam[mixed] = hi[mixed] / (hi[mixed] - lo[mixed])
        out = self.scale(lam, lam)
        # σ(v) - λv on [lo, hi] is piecewise linear: its extremes are among v = lo, 0, hi
        a_lo, a_hi = imul(-lam, -lam, lo, lo)
        b_lo, b_hi = imul(down(1 - lam), up(1 - lam), hi, hi)
        extra_lo = np.where(mixed, np.minimum(0.0, np.minimum(a_lo, b_lo)), 0.0)
        extra_hi = np.where(mixed, np.maximum(0.0, np.maximum(a_hi, b_hi)), 0.0)
        out = out.add_interval(extra_lo, extra_hi)
        keep = np.where(pos, 1.0, 0.0)  # exact: v itself, or exactly 0
        c = np.where(mixed, out.c, keep * self.c)
        g = np.where(mixed, out.g, keep * self.g)
        return Aff(c, g, np.where(mixed, out.lo, keep * self.lo), np.where(mixed, out.hi, keep * self.hi))

    def lincomb(self, W: np.ndarray, axis: int, blo=None, bhi=None) -> Aff:
        """Σ_j W[o, j] self[..., j, ...] (+ b[o] ∈ [blo, bhi]) along `axis`; W the round-to-nearest floats of
        rationals (their rounding is counted)."""
        W = np.asarray(W, np.float64)
        n = W.shape[1] + 1

        def apply(M, x, ax):
            return np.moveaxis(np.tensordot(M, x, axes=([1], [ax])), 0, ax)

        axis = axis % self.c.ndim
        c, g = apply(W, self.c, axis), apply(W, self.g, axis + 1)
        Wp, Wn, A = np.maximum(W, 0), np.minimum(W, 0), np.abs(W)
        lo = apply(Wp, self.lo, axis) + apply(Wn, self.hi, axis)
        hi = apply(Wp, self.hi, axis) + apply(Wn, self.lo, axis)
        rmax = np.maximum(np.abs(self.lo), np.abs(self.hi))
        err = rounding_gamma(n) * (apply(A, np.abs(self.c) + self.radius() + rmax, axis))
        if blo is not None:
            shape = [1] * c.ndim
            shape[axis] = -1
            bl, bh = np.reshape(blo, shape), np.reshape(bhi, shape)
            bm = (bl + bh) / 2
            c = c + bm
            err = err + rounding_gamma(n) * np.abs(bm)
            lo, hi = down(lo + down(bl - bm)), up(hi + up(bh - bm))
        return self._with_error(c, g, lo, hi, err)

    def sum(self, axis: int) -> Aff:
        """Σ along axis (its length n enters the rounding bound)."""
        axis = axis % self.c.ndim
        n = self.c.shape[axis]
        rmax = np.maximum(np.abs(self.lo), np.abs(self.hi))
        err = rounding_gamma(n) * (np.abs(self.c) + self.radius() + rmax).sum(axis)
        return self._with_error(self.c.sum(axis), self.g.sum(axis + 1), self.lo.sum(axis), self.hi.sum(axis), err)


def scatter_add(base: Aff, vals: Aff, cols: np.ndarray, axis: int) -> Aff:
    """base with vals[..., j] added to base[..., cols[j]] along the last axis of c (the token axis). The sums run
    as a sparse product in some order; the bound γ_n Σ|·| holds for every order (n the most terms into a column)."""
    from scipy import sparse

    assert axis == -1
    if not len(cols):
        return base
    n = int(np.bincount(cols).max()) + 1
    P, L = len(cols), base.c.shape[-1]
    S = sparse.csr_matrix((np.ones(P), (np.arange(P), cols)), shape=(P, L))

    def into(x, y):
        return y + (x.reshape(-1, P) @ S).reshape(y.shape)

    rmax = np.maximum(np.abs(vals.lo), np.abs(vals.hi))
    err = into(np.abs(vals.c) + vals.radius() + rmax, np.zeros_like(base.c))
    rbase = np.maximum(np.abs(base.lo), np.abs(base.hi))
    err = rounding_gamma(n) * (err + np.abs(base.c) + base.radius() + rbase)
    c, g = into(vals.c, base.c), into(vals.g, base.g)
    return base._with_error(c, g, into(vals.lo, base.lo), into(vals.hi, base.hi), err)


# --------------------------------------------------------------------------------------------
# targets


_FUNCS = ("sin", "cos", "tan", "exp", "log", "sqrt")


def _iv_eval(expr, env: dict):
    """The sympy expression on mpmath intervals (outward rounded); CertifyError for what has no enclosure here."""
    import sympy
    from mpmath import iv

    if expr.is_Symbol:
        return env[expr.name]
    if expr.is_Integer or expr.is_Rational:
        return iv.mpf(int(expr.p)) / iv.mpf(int(expr.q))
    if expr.is_Float:  # its exact binary value
        q = sympy.Rational(expr)
        return iv.mpf(int(q.p)) / iv.mpf(int(q.q))
    if expr is sympy.pi:
        return iv.pi
    if expr is sympy.E:
        return iv.e
    args = [_iv_eval(a, env) for a in expr.args]
    if expr.is_Add:
        return sum(args[1:], args[0])
    if expr.is_Mul:
        out = args[0]
        for a in args[1:]:
            out = out * a
        return out
    if expr.is_Pow:
        base, ex = expr.args
        if ex.is_Integer:
            return args[0] ** int(ex)
        if ex == sympy.Rational(1, 2):
            return iv.sqrt(args[0])
        return iv.exp(args[1] * iv.log(args[0]))
    if isinstance(expr, sympy.Abs):
        a = args[0]
        lo, hi = float(a.a), float(a.b)
        if lo >= 0:
            return a
        if hi <= 0:
            return -a
        return iv.mpf([0, max(-lo, hi)])
    name = type(expr).__name__
    if name in _FUNCS:
        return getattr(iv, name)(*args)
    raise CertifyError(f"no sound interval enclosure for {name} in a target; use {', '.join(_FUNCS)}, abs, powers")


def _iv_bounds(v) -> tuple[float, float]:
    lo, hi = float(v.a), float(v.b)  # mpmath iv endpoints are float64 at the default precision
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ZeroDivisionError
    return lo, hi


class TargetEnclosure:
    """Encloses f (a theory.targets.Target) on boxes as `Aff` forms in the box's directions."""

    def __init__(self, target):
        import sympy

        self.target = target
        self.syms = target.symbols
        self.grad = [sympy.diff(target.expr, s) for s in self.syms]
        # refuse up front what has no enclosure, at one point of the domain
        env = {s.name: _iv_point(0.5) for s in self.syms}
        _iv_eval(target.expr, env)

    def enclose(self, mid: np.ndarray, half: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> Aff:
        """f on the boxes [lo, hi] (n, D) as forms c + g·e + [r] with x = mid + half·e (the domain may clip the box
        to [lo, hi] ⊂ [mid - half, mid + half]); the mean-value form where ∇f is finite on the box."""
        from mpmath import iv

        n, k = mid.shape
        out = Aff.zeros((n,), k)
        for r in range(n):
            box = {s.name: iv.mpf([float(lo[r, i]), float(hi[r, i])]) for i, s in enumerate(self.syms)}
            try:
                grads = [_iv_bounds(_iv_eval(gx, box)) for gx in self.grad]
                at = {s.name: _iv_point(mid[r, i]) for i, s in enumerate(self.syms)}
                f0 = _iv_bounds(_iv_eval(self.target.expr, at))
            except (ZeroDivisionError, ValueError, CertifyError):
                grads = None
            if grads is None:
                flo, fhi = _range_of(self.target.expr, box)
                c = (flo + fhi) / 2
                out.c[r], out.lo[r], out.hi[r] = c, down(flo - c), up(fhi - c)
                continue
            c = (f0[0] + f0[1]) / 2
            rem_lo, rem_hi = down(f0[0] - c), up(f0[1] - c)
            for i, (gl, gh) in enumerate(grads):
                gm = (gl + gh) / 2
                gr = up(max(up(gh - gm), up(gm - gl)))
                out.g[i, r] = gm * half[r, i]
                e = up(up(gr * half[r, i]) + U * abs(out.g[i, r]) + TINY)
                rem_lo, rem_hi = down(rem_lo - e), up(rem_hi + e)
            out.c[r], out.lo[r], out.hi[r] = c, rem_lo, rem_hi
        return out


def _iv_point(v: float):
    from mpmath import iv

    return iv.mpf([float(v), float(v)])


def _range_of(expr, box) -> tuple[float, float]:
    try:
        return _iv_bounds(_iv_eval(expr, box))
    except ZeroDivisionError:
        raise CertifyError("the target has no finite enclosure on a cell (unbounded or undefined there)") from None


# --------------------------------------------------------------------------------------------
# FFNs of one input row: exact piecewise-linear functions


def _pl_eval(layers: list, r: Fraction, memo: dict | None = None) -> list[list[Fraction]]:
    """Every layer's pre-activations of the ReLU network `layers` ([(W rows, b)] exact, W's one input column) at r."""
    if memo is not None and r in memo:
        return memo[r]
    out, y = [], [r]
    for li, (W, b) in enumerate(layers):
        if li:
            y = [max(v, Fraction(0)) for v in y]
        y = [
            sum((w * v for w, v in zip(row, y, strict=True) if w and v), Fraction(0)) + bu
            for row, bu in zip(W, b, strict=True)
        ]
        out.append(y)
    if memo is not None:
        memo[r] = out
    return out


def _pl_breakpoints(layers: list) -> list[Fraction]:
    """Every r where some hidden unit's pre-activation crosses 0 (exact). Layer i's pre-activations are linear between
    the breakpoints of layers < i, so each piece holds at most one zero of each unit, found from two of its points."""
    bps: list[Fraction] = []
    memo: dict = {}
    for li in range(len(layers) - 1):
        pts = sorted(set(bps))
        pieces = [(None, pts[0]), *zip(pts[:-1], pts[1:], strict=True), (pts[-1], None)] if pts else [(None, None)]
        for a, b in pieces:
            p = a if a is not None else (b - 1 if b is not None else Fraction(0))
            q = b if b is not None else p + 1
            vp, vq = _pl_eval(layers, p, memo)[li], _pl_eval(layers, q, memo)[li]
            for u in range(len(vp)):
                if vp[u] == vq[u]:
                    continue
                z = p - vp[u] * (q - p) / (vq[u] - vp[u])  # the zero of the unit's line through (p, vp), (q, vq)
                if (a is None or z >= a) and (b is None or z <= b):
                    bps.append(z)
    return sorted(set(bps))


@dataclass
class PiecewiseLinear:
    """z + FFN(z) for an FFN whose first layer reads one data row, c: per output row o, a continuous piecewise-linear
    function h_o of r = z_c (h_o = [o == c] r + FFN(z)_o), exact, stored as the value A_o at r = 0 of its leftmost
    piece's line, that piece's slope s_o and the slope changes at its breakpoints:

        h_o(r) = A_o + s_o r + Σ_k Δ_ok σ(r - β_ok)      for every real r.

    `enclose` gives h_o(r) over a form r as λ r + [m_lo, m_hi] (λ the slope of r's piece, the chord where r's range
    holds one breakpoint, 0 where it holds more) with m the range of h_o - λ r over r's range: its extremes are at the
    ends of the range and at the breakpoints inside (h_o - λ r is piecewise linear), so every ReLU case is exact."""

    c: int
    beta: list  # per row: (lo, hi) float arrays (K,) around the exact breakpoints
    value: list  # per row: (lo, hi) float arrays (K,) around h_o(β_ok), exact
    delta: list  # per row: (lo, hi) float arrays (K,) around Δ_ok
    A: list  # per row: (lo, hi) floats around A_o
    s: list  # per row: (lo, hi) floats around s_o
    slopes: list  # per row: float array (K + 1,): the slope of each piece (λ, any float is sound)

    @classmethod
    def of(cls, layers: list, c: int) -> PiecewiseLinear:
        """layers: [(W, b)] exact (object arrays), the first layer reading only data row c, the last one linear."""
        W0, b0 = layers[0]
        net = [([[W0[u, c]] for u in range(W0.shape[0])], list(b0))]
        net += [([list(row) for row in W], list(b)) for W, b in layers[1:]]
        bps = _pl_breakpoints(net)

        def h(r: Fraction) -> list[Fraction]:
            out = _pl_eval(net, r)[-1]
            return [out[o] + (r if o == c else 0) for o in range(2)]

        pts = [bps[0] - 1, *bps, bps[-1] + 1] if bps else [Fraction(0), Fraction(1)]
        vals = [h(p) for p in pts]
        beta, value, delta, A, s, slopes = [], [], [], [], [], []
        for o in range(2):
            sl = [(vals[i + 1][o] - vals[i][o]) / (pts[i + 1] - pts[i]) for i in range(len(pts) - 1)]
            keep = [k for k in range(len(bps)) if sl[k + 1] != sl[k]]  # breakpoints of this row
            bk = [bps[k] for k in keep]
            dk = [sl[k + 1] - sl[k] for k in keep]
            vk = [vals[k + 1][o] for k in keep]
            a0 = vals[0][o] - sl[0] * pts[0]
            beta.append(_fi(bk))
            value.append(_fi(vk))
            delta.append(_fi(dk))
            A.append(tuple(float(v[0]) for v in _fi([a0])))
            s.append(tuple(float(v[0]) for v in _fi([sl[0]])))
            slopes.append(np.array([float(sl[0])] + [float(sl[k + 1]) for k in keep]))
        return cls(c, beta, value, delta, A, s, slopes)

    def at(self, o: int, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """[lo, hi] around h_o(r) at float points r (any shape): A + s r + Σ_k Δ_k σ(r - β_k), outward rounded (the
        sum over k in any order: γ_K of its absolute sum)."""
        lo, hi = imul(self.s[o][0], self.s[o][1], r, r)
        lo, hi = down(lo + self.A[o][0]), up(hi + self.A[o][1])
        (blo, bhi), (dlo, dhi) = self.beta[o], self.delta[o]
        if not len(blo):
            return lo, hi
        shape = (-1,) + (1,) * np.ndim(r)
        blo, bhi, dlo, dhi = (np.reshape(v, shape) for v in (blo, bhi, dlo, dhi))
        tlo, thi = np.maximum(down(r - bhi), 0.0), np.maximum(up(r - blo), 0.0)  # (K, ...): σ(r - β_k)
        plo, phi = imul(dlo, dhi, tlo, thi)
        err = rounding_gamma(len(plo)) * np.maximum(np.abs(plo), np.abs(phi)).sum(0)
        return down(down(lo + plo.sum(0)) - err), up(up(hi + phi.sum(0)) + err)

    def enclose(self, o: int, r: Aff) -> Aff:
        """h_o(r) over the form r (any shape) as a form λ r + [m_lo, m_hi] (class docstring)."""
        rlo, rhi = r.bounds()
        finite = np.isfinite(rlo) & np.isfinite(rhi)
        rlo, rhi = np.where(finite, rlo, 0.0), np.where(finite, rhi, 0.0)
        plo, phi, vlo, vhi, where = self.candidates(o, rlo, rhi)  # (2 + K, ...) each: the ends, the breakpoints
        n_in = where[2:].sum(0)
        piece = np.searchsorted((self.beta[o][0] + self.beta[o][1]) / 2, (rlo + rhi) / 2)
        width = rhi - rlo
        chord = ((vlo[1] + vhi[1]) / 2 - (vlo[0] + vhi[0]) / 2) / np.where(width > 0, width, 1.0)
        lam = np.where(n_in == 0, self.slopes[o][piece], np.where((n_in == 1) & (width > 0), chord, 0.0))
        lam = np.where(np.isfinite(lam), lam, 0.0)
        lo, hi = imul(lam, lam, plo, phi)  # h - λ r at each candidate point: its range over [rlo, rhi]
        mlo = np.where(where, down(vlo - hi), np.inf).min(0)
        mhi = np.where(where, up(vhi - lo), -np.inf).max(0)
        out = r.scale(lam, lam).add_interval(mlo, mhi)
        if not finite.all():
            out.lo, out.hi = np.where(finite, out.lo, -np.inf), np.where(finite, out.hi, np.inf)
        return out

    def candidates(self, o: int, rlo: np.ndarray, rhi: np.ndarray) -> tuple[np.ndarray, ...]:
        """Where h_o - λ r takes its extremes over [rlo, rhi]: the two ends, then every breakpoint that may lie inside
        (one that lies outside only widens the range); as arrays (2 + K,) + r's shape: the point's lo, hi, h_o's lo,
        hi there, and where it counts."""
        (blo, bhi), (vlo, vhi) = self.beta[o], self.value[o]
        shape = (-1,) + (1,) * rlo.ndim
        full = (len(blo),) + rlo.shape
        ends = np.stack([rlo, rhi])
        hlo, hhi = self.at(o, ends)
        inside = (np.reshape(bhi, shape) >= rlo) & (np.reshape(blo, shape) <= rhi)
        return (
            np.concatenate([ends, np.broadcast_to(np.reshape(blo, shape), full)]),
            np.concatenate([ends, np.broadcast_to(np.reshape(bhi, shape), full)]),
            np.concatenate([hlo, np.broadcast_to(np.reshape(vlo, shape), full)]),
            np.concatenate([hhi, np.broadcast_to(np.reshape(vhi, shape), full)]),
            np.concatenate([np.ones((2,) + rlo.shape, bool), inside]),
        )


def _fi(values: list) -> tuple[np.ndarray, np.ndarray]:
    if not values:
        return np.zeros(0), np.zeros(0)
    return frac_interval(np.array(values, dtype=object))
