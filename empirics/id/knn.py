"""One exact k-nearest-neighbour engine for every ID estimator (paper Section 5, "Estimating the ID").

The whole cost of MLE and TwoNN at D = 768 is the kNN search, so it is done once, here, in torch
(CUDA when present). Above one tile the points are first put in a locality order (``_locality_order``:
the leaf order of a k-d tree on random projections), so the diagonal tiles hold most neighbours and
give tight thresholds early; ties are still broken by the caller's index, and the answer comes back in
the caller's rows. Then three steps:

1. **Candidate search in low precision.** The data are scaled by a power of two when their largest
   entry is outside [2^-64, 2^64) (so squares stay in range at any scale), centred in float64 (which
   removes most of the cancellation of the Gram trick), scaled by a power of two so the largest norm
   is in [1/2, 1), and rounded to the search type, chunk by chunk (``_Frame``: no float64 copy of the
   input is made): bfloat16 on CPUs with native bf16 dot products (avx512_bf16 or AMX;
   about 3x the float32 GEMM rate here), else float32. Squared distances ``|x_i|^2 + |x_j|^2 -
   2 h_i.h_j`` are formed tile by tile over the upper triangle, each tile serving the rows of both of
   its blocks. Diagonal tiles come first and fill a running top-m (m = k + margin) per row with
   ``torch.topk``; after that a row only takes the tile entries below its current m-th value. Those
   hits are found without comparing every entry: one pass takes the minima of chunks of W = 32
   entries along each row and each column, and only chunks whose minimum is below the threshold are
   compared entry by entry (``_row_hits``, ``_col_hits``). The diagonal is excluded by index, never by distance.
   Memory: one (block, block) tile plus O(N m). For a few query rows (``queries``) the same search
   runs over a rectangle of (rows, block) tiles instead of the triangle.
2. **Exact re-ranking in float64.** The m candidates of each row are re-measured as the float64
   norm of the difference vector and the first k kept (ties broken by index).
3. **Certificate.** ``T_i``, the final m-th candidate value of row i, is at most the search value of
   every non-candidate (a value is dropped only when it is >= the running m-th value, which never
   increases). ``lower(T_i)`` below bounds the exact squared distance of every pair whose search
   value is >= T_i; if the exact k-th squared distance is below it, no non-candidate can be among
   the k nearest, so the row is exact. Other rows are answered by a **range query**: their true k
   nearest lie within the current k-th distance dk, so every point whose search value is at most
   ``upper(dk^2)`` (the same bound read the other way) is re-measured in float64 and the k nearest
   kept. That needs no certificate, and its hits are the few points within the search type's error
   of dk, so a row that fails costs one row of the Gram matrix. Without a projection the query runs
   on the search's own points (bf16 too: all-MiniLM-L6-v2 tokens, N = 8192, 1,200 rows, AMD EPYC VM,
   idle: 0.075 s in float32, its float32 copy not counted, against 0.041 s in bf16); a chunk of rows
   whose bf16 threshold takes in more than RANGE_HITS_PER_ROW points a row (near-equidistant data)
   is searched again in float32. Results are therefore exact on every device, and CPU and GPU agree
   up to ties.

**The bound.** Write x_i for the scaled centred float64 point, h_i for its search-type rounding
(entries below 2^-126 set to 0, so flush-to-zero of inputs changes nothing), e_i = x_i - h_i, and
R, H, E for the largest |x|, |h|, |e| over all points (|x| and |e| measured in float64 for the
bf16 search; for float32, |e| <= u32 |x| + sqrt(D) 2^-126 since rounding to nearest moves each entry
by at most u32 of it; |h| bounded by |x| + |e|). Exactly,
``x_i.x_j - h_i.h_j = e_i.x_j + h_i.e_j``, so by Cauchy-Schwarz
``|x_i.x_j - h_i.h_j| <= |e_i| R + |h_i| E`` whatever the rounding did. A float32 dot product of
length K (products rounded or fused, sums in any order; bf16 x bf16 products are even exact) is off
by at most ``gamma_K`` times the sum of the terms' magnitudes [Higham, Accuracy and Stability, Thm
3.5 and Sec. 3.1], plus K 2^-126 for flushed subnormal
products; with R < 1 every such absolute term is below 2^-100, which the bound adds once.

- float32 (``addmm``; s = fl32(|x|^2), one add of s_i + (s_j - 2P), the factor 2 exact):
  ``|d~^2 - d^2| <= 2(|e_i| R + |h_i| E) + 2 gamma_D |h_i| H + 4 u32 (|x_i|^2 + R^2 + 2 |h_i| H)``.
- bfloat16: the squared norms ride in the GEMM as three bf16 parts s' = (hi, mid, lo) with
  |x|^2 - (hi + mid + lo) = r known exactly, rows ``[h, s', 1, 1, 1]`` against columns
  ``[-2h, 1, 1, 1, s']``. Before its single rounding to bf16 (torch's CPU bf16 matmul accumulates
  in float32, oneDNN's documented accumulation type) the sum y is within
  ``2(|e_i| R + |h_i| E) + |r_i| + max|r| + gamma_{D+6} (2 |h_i| H + |s'_i|_1 + max |s'|_1)`` of
  d^2. The rounding gives |d~^2 - y| <= 2^-8 |y|, so a search value >= T > 0 means y >= T / (1 + 2^-8).

``lower(T) = T / (1 + u_o) - slack`` (u_o = 2^-8 for bf16 output, else 0), where slack is the matching
bound above plus ``4 gamma64 (|x_i|^2 + R^2)`` (gamma64 = (D + 3) 2^-53) for the float64 re-ranking,
the whole slack inflated by 2^-20 for the float64 arithmetic that evaluates it;
``upper(t) = (t + slack)(1 + u_o)`` bounds the search value of any point at squared distance <= t
(its sum before rounding is at most t + slack >= 0; bf16's rounding moves it by at most u_o of it).

**Local maxima.** R, H, E (and max |r|, max |s'|_1) only enter through the other point j of a pair,
and only points that can be among the k nearest of x_i matter: those satisfy
``|x_j| <= |x_i| + dk_i =: rho_i`` (triangle inequality; a point farther out is farther than dk_i).
With the measured ratios ``eps = max |e_j| / |x_j|``, ``alpha = max |s'_j|_1 / |x_j|^2``,
``sigma = max |r_j| / |x_j|^2`` (zero points have e = s' = r = 0), each global maximum is replaced by
the smaller of itself and ``rho_i``, ``(1 + eps) rho_i``, ``eps rho_i``, ``alpha rho_i^2``,
``sigma rho_i^2``. On clustered embeddings, where a few far points set the global maxima, this is
what lets a small-norm row pass (all-MiniLM-L6-v2 tokens, N = 8192: 1200 rows fail instead of 2021).

**Principal subspace.** Data of low intrinsic dimension in a large D (the case this toolkit is
about) have most of their variance in a few directions. Where deciding that can cost less than the
whole-space GEMM it could save (``_decision_pays``: not for wide data, N of a few D), and the top p of
PROJ_DIMS (p <= D/4) leave at most PROJ_RESIDUAL of it out (leading eigenvectors of the covariance of
PROJ_SAMPLE rows, by block subspace iteration: ``_principal_subspace``), step 1 runs on
z = xs P instead of xs, a GEMM D/p times smaller; steps 2 and 3 are unchanged (the re-ranking and the
range query are in the whole space). Projection only shrinks distances, so a non-candidate's whole-space
distance is at least its subspace distance, and the certificate bounds it as ``_Projected`` says (with
P orthonormal and z exact only up to measured rounding). On an idle machine (stage timers, not under
`quiet`; benchmarks/bench_knn.py has the quiet figures), S^16 in R^768 + noise,
N = 32768, float32 search (no bf16 dot products): 10.2 s for the kNN in the whole space, 4.0 s with
p = 32, the same neighbours and distances bit for bit.

**Input frame.** The re-ranking measures distances on the input scaled by a power of two (exact, so
they are the input's own float64 distances), while the bound is about the centred points; centring
rounds each coordinate once, moving a distance by at most 2^-52 (|x_i| + |x_j|), so the certificate
and the range query use ``reach_i = dk_i + 2^-52 (|x_i| + rho_i)`` in place of dk_i.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from tmcheck.empirics.device import resolve_device

U32 = 2.0**-24
U_BF16 = 2.0**-8
# a bf16 range query's chunk of rows with more hits than this a row is searched again in float32
# (_range_search): each hit costs a float64 distance, a float32 tile row costs N / (GEMM rate)
RANGE_HITS_PER_ROW = 256
TINY = 2.0**-126  # smallest normal float32 / bfloat16
W = 32  # chunk width of the tile filter (_row_hits, _col_hits)
MERGE_CAP = 256  # more new hits per row of a tile than this on average: dense top-k instead
SAFE = (2.0**-64, 2.0**64)  # input magnitudes whose float64 distances need no scaling (_exact_search)
UNIT_PASS_MAX = 2.0**32  # largest s1 for which _Points forms h unscaled and scales it afterwards
PROJ_RESIDUAL = 1e-3  # largest share of the variance a projected search may leave out (_projection)
PROJ_DIMS = (16, 32, 64, 128)  # the subspace dimensions tried, smallest first, each at most D / 4
PROJ_SAMPLE = 4096  # rows whose covariance gives the subspace (any orthonormal basis keeps it exact)
PROJ_OVERSAMPLE = 8  # extra columns of the subspace iteration's block beyond the largest p it may take
PROJ_ITERS = 4  # block power iterations on the covariance (_principal_subspace)
# CPU rates for the projection's cost rule (_decision_pays), measured on an idle Intel Xeon VM with AMX,
# 2 threads: float64 GEMM, and the search's GEMM in bfloat16 and float32
RATE_F64 = 1.0e11
RATE_SEARCH = {"bfloat16": 2.7e12, "float32": 3.4e11}
RERANK_CPU_BYTES = 12 * 2**20  # gathered float64 candidates per chunk of the re-ranking on the CPU (_rerank)


def _gamma(K: int, u: float) -> float:
    """Higham's gamma_K = K u / (1 - K u): the relative error bound of a length-K dot product."""
    return K * u / (1 - K * u)


def _unit_power(r: float) -> float:
    """The power of two s with s r in [1/2, 1) (1 for r = 0): scaling by it is exact."""
    return float(np.ldexp(1.0, -int(np.frexp(r)[1]))) if r > 0 else 1.0


@dataclass(frozen=True)
class Neighbors:
    """Exact k nearest neighbours of every row, self excluded.

    distances: (N, k) float64, ascending per row; indices: (N, k) int64.
    n_recomputed: rows whose low-precision candidate set could not be certified and were searched
    again (in float32, then, if still uncertified, exhaustively in float64).
    """

    distances: np.ndarray
    indices: np.ndarray
    n_recomputed: int
    device: str


@lru_cache(maxsize=1)
def cpu_has_bf16() -> bool:
    """True when the CPU has native bf16 dot products (x86 avx512_bf16 or AMX-BF16)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def default_margin(k: int, dtype) -> int:
    """Extra candidates per row: max(8, k // 2) for a bf16 search, max(8, k // 8) for float32. A row
    passes the certificate when its (k + margin)-th candidate's search value, less the search error, is
    beyond its exact k-th distance; float32's error is 2^16 times bf16's, so a far smaller gap suffices,
    and every candidate costs a float64 distance in the re-ranking (two thirds of the engine's time at
    k = 100, N = 8192, D = 768). There, in float32 on one thread of this loaded AMD EPYC VM: 3.1-3.2 CPU s
    at margin 12 against 4.2-4.3 at 50, no row failing either way; a row that fails gets an exact range
    query, so the margin moves the speed, never the answer."""
    import torch

    return max(8, k // 2) if dtype == torch.bfloat16 else max(8, k // 8)


def _search_type(dev, precision: str):
    import torch

    if precision == "auto":
        precision = "bfloat16" if dev.type == "cpu" and cpu_has_bf16() else "float32"
    if precision not in ("bfloat16", "float32"):
        raise ValueError(f"precision must be 'auto', 'bfloat16' or 'float32', got {precision!r}")
    return getattr(torch, precision)


class _Frame:
    """The points as the engine sees them, never materialised as a whole: x0 = s0 X (the caller's float32 or float64
    rows scaled by a power of two, so exact), taken in the locality order ``label`` (position p is the
    caller's row label[p]), and xs = s1 (x0 - mean), the centred points of the search. Rows are made on
    demand, in chunks: no (N, D) float64 copy of the input exists, and the values are those of the
    whole-array expressions. Measured alone (../shared/tools/quiet, 2 threads), removing the four copies
    took the duplicate-checked kNN from 4.31 to 3.10 s at N = 32768, D = 768; one locality-ordered copy
    for the re-ranking's gathers (nearby memory) gave 3.04-3.20 s against 3.10-3.22 s without, so none is made."""

    CHUNK_BYTES = 16 * 2**20  # float64 rows per chunk of a pass over the points (and its temporaries)

    def __init__(self, x, s0: float = 1.0, label=None, mean=None, s1: float = 1.0):
        self.x, self.s0, self.label, self.mean, self.s1 = x, s0, label, mean, s1
        self.n, self.dim = x.shape
        self.ordered = label is None  # self.x is indexed by position (else by the caller's row)
        self.chunk_rows = max(1, self.CHUNK_BYTES // (8 * self.dim))
        self._buf = None  # see _block

    def x0(self, pos):
        """Rows of x0 at positions `pos`, float64: for an index tensor a new tensor, for a slice (a chunk of
        a pass) the frame's chunk buffer. float32 input is widened here, per block: exact, and no float64
        copy of the whole input is made."""
        import torch

        if isinstance(pos, slice):
            g = self._block(pos.stop - pos.start)
            if not self.ordered:
                return self.gather(pos, g)  # label[pos]: the caller's rows of these positions
            g.copy_(self.x[pos])
        else:
            g = (self.x[pos] if self.ordered else torch.index_select(self.x, 0, self.label[pos])).to(torch.float64)
        return g.mul_(self.s0) if self.s0 != 1.0 else g

    def _block(self, rows: int):
        """A float64 buffer for `rows` rows, one per frame, reused by every chunk of a pass: each chunk
        freshly allocated left the heap fragmented by the allocator's 2 MiB alignment (the chunk loop of
        the locality order alone grew the peak memory by about the input's size, N = 32768, D = 768)."""
        import torch

        if rows > self.chunk_rows:
            return torch.empty(rows, self.dim, dtype=torch.float64, device=self.x.device)
        if self._buf is None:
            self._buf = torch.empty(self.chunk_rows, self.dim, dtype=torch.float64, device=self.x.device)
        return self._buf[:rows]

    def gather(self, pos, out):
        """x0[pos] into `out` (a preallocated (len(pos), D) float64 tensor)."""
        import torch

        idx = pos if self.ordered else self.label[pos]
        if self.x.dtype == torch.float64:
            torch.index_select(self.x, 0, idx, out=out)
        else:  # float32 rows gathered in their own type, then widened into out (exact)
            out.copy_(torch.index_select(self.x, 0, idx))
        return out.mul_(self.s0) if self.s0 != 1.0 else out

    def xs(self, r0: int, r1: int):
        """Rows r0..r1 of the centred search points, float64."""
        g = self.x0(slice(r0, r1))
        if self.mean is not None:
            g.sub_(self.mean)
        return g.mul_(self.s1) if self.s1 != 1.0 else g

    def chunks(self):
        """(r0, r1) of each chunk of a pass; the rows x0 and xs return for a chunk live until the next one."""
        for r0 in range(0, self.n, self.chunk_rows):
            yield r0, min(self.n, r0 + self.chunk_rows)


def _frame(x) -> _Frame:
    """A _Frame as is, or the trivial frame of a float64 tensor (x0 = xs = x)."""
    return x if isinstance(x, _Frame) else _Frame(x)


class _Points:
    """Scaled centred points in the search type, with the norms the certificate needs.

    float32: h (N, D), tiles by ``addmm``. bfloat16: the squared norms ride in the GEMM, so one
    bf16 product gives the squared distance: rows ``[h, s', 1, 1, 1]`` against columns
    ``[-2h, 1, 1, 1, s']``, s' = (hi, mid, lo) bf16 parts of |x|^2 (zero padding to a multiple of 16).
    """

    def __init__(self, xs, dtype, sq=None, unit: bool = False):
        """xs: the centred points, a float64 tensor or a _Frame (made chunk by chunk).

        unit: choose the frame's s1 in the same pass (the power of two that brings the largest |x| into
        [1/2, 1)): h, |x|^2 and |e| are formed unscaled and scaled afterwards, which is exact for a power
        of two except where an entry is flushed, and the flush (< TINY per entry) is added to |e| as
        sqrt(D) TINY. A cloud so small that its unscaled rounding would be subnormal is done in two passes."""
        import torch

        fr = _frame(xs)
        n, dim = fr.n, fr.dim
        dev = fr.x.device
        self._buf = None  # the tile buffer (see tile)
        self.bf16 = dtype == torch.bfloat16
        self.dtype = dtype
        kp = dim + 6 + (-(dim + 6) % 16) if self.bf16 else dim
        h = torch.empty(n, kp, dtype=dtype, device=dev)  # bf16: the GEMM rows, h in the first D columns
        exact_norms = sq is None or dtype != torch.float32
        if exact_norms:
            self.sq = torch.empty(n, dtype=torch.float64, device=dev)  # (N,) |x|^2
            self.en = torch.empty_like(self.sq)  # (N,) |e|
        if unit:
            fr.s1 = 1.0
        for r0, r1 in fr.chunks():
            x = fr.xs(r0, r1)
            hc = h[r0:r1, :dim]
            hc.copy_(x)
            if not unit:
                hc[hc.abs() < TINY] = 0  # flush subnormals ourselves, so the GEMM's flushing changes nothing
            if exact_norms:
                self.sq[r0:r1] = (x * x).sum(dim=1)
                self.en[r0:r1] = torch.linalg.vector_norm(x.sub_(hc.to(torch.float64)), dim=1)
        if unit:
            rmax = float(self.sq.max().sqrt())
            s1 = _unit_power(rmax)
            if s1 > UNIT_PASS_MAX:  # unscaled, the cloud's rounding would be subnormal: two passes
                fr.s1 = s1
                self.__init__(fr, dtype)
                return
            fr.s1 = s1
            h[:, :dim].mul_(s1)  # exact: a power of two
            h[h.abs() < TINY] = 0  # flush subnormals ourselves, so the GEMM's flushing changes nothing
            self.sq.mul_(s1 * s1)
            self.en.mul_(s1).add_(dim**0.5 * TINY)  # the flush moved each flushed entry by < TINY
        if not exact_norms:
            # rounding to nearest float32 moves each entry by <= u32 |x| (or < TINY where flushed), so
            # |e| <= u32 |x| + sqrt(D) TINY: no float64 pass over the points is needed
            self.sq = sq
            self.en = U32 * sq.sqrt() * (1 + 2.0**-40) + dim**0.5 * TINY
        self.hn = self.sq.sqrt() + self.en  # |h| <= |x| + |e|: the bound only needs an upper bound
        if not self.bf16:
            self.h, self.s = h, self.sq.to(torch.float32)  # (N, D), (N,)
            self.terms = dim
            return
        parts, rest = [], self.sq.clone()
        for _ in range(3):
            p = rest.to(dtype)
            p[p.abs() < TINY] = 0
            parts.append(p)
            rest = rest - p.to(torch.float64)  # exact: p holds the leading bits of rest
        s3 = torch.stack(parts, dim=1)  # (N, 3)
        self.s_err = rest.abs()  # (N,) |x|^2 - (hi + mid + lo)
        self.s_abs = s3.to(torch.float64).abs().sum(dim=1)  # (N,) |hi| + |mid| + |lo|
        self.rows = h  # (N, Kp): [h, s', 1, 1, 1, 0...]
        self.rows[:, dim : dim + 3] = s3
        self.rows[:, dim + 3 : dim + 6] = 1
        self.rows[:, dim + 6 :] = 0
        self.cols = torch.empty_like(h)  # (N, Kp): [-2h, 1, 1, 1, s', 0...]; -2h is exact
        torch.mul(h[:, :dim], -2, out=self.cols[:, :dim])
        self.cols[:, dim : dim + 3] = 1
        self.cols[:, dim + 3 : dim + 6] = s3
        self.cols[:, dim + 6 :] = 0
        self.terms = dim + 6

    def tile(self, qi, cj):
        """(|qi|, |cj|) search values of the squared distances; qi, cj: slices or index tensors.

        The tile is written into one buffer the _Points keeps (grown to the largest tile asked for), so
        it is valid until the next call: every caller is done with a tile before it asks for the next.
        A tile of 3072^2 float32 is 36 MiB, above glibc's largest mmap threshold (32 MiB), so a new
        tensor per tile was a fresh mapping, zero-filled page by page and unmapped again (#28)."""
        import torch

        a = self.rows[qi] if self.bf16 else self.h[qi]
        b = self.cols[cj] if self.bf16 else self.h[cj]
        size = a.shape[0] * b.shape[0]
        if self._buf is None or self._buf.numel() < size:
            self._buf = torch.empty(size, dtype=self.dtype, device=a.device)
        out = self._buf[:size].view(a.shape[0], b.shape[0])
        if self.bf16:
            return torch.mm(a, b.T, out=out)  # bf16
        return torch.addmm(self.s[None, cj], a, b.T, alpha=-2.0, out=out).add_(self.s[qi, None])

    def slack(self, rows=None, rho=None):
        """Per row i, a bound on |y - d^2| over all points j that can matter, where y is the search
        value before its final rounding (the search value itself for float32) plus the float64
        re-ranking error; the derivation is in the module docstring. rho (per row, optional): an upper
        bound on |x_j| of every j that can matter (|x_i| + dk_i: a farther point is farther than dk_i
        from x_i); the global maxima R, H, E are then replaced by the local ones."""
        import torch

        K = self.terms
        gamma, gamma64 = _gamma(K, U32), _gamma(K + 3, 2.0**-53)
        pick = (lambda v: v) if rows is None else (lambda v: v[rows])
        sq, hn, en = pick(self.sq), pick(self.hn), pick(self.en)
        R, H, E = self.sq.max().sqrt(), self.hn.max(), self.en.max()
        SA = self.s_abs.max() if self.bf16 else None
        SE = self.s_err.max() if self.bf16 else None
        if rho is not None:
            r = self.ratios
            R = torch.minimum(R, rho)
            H, E = torch.minimum(H, (1 + r["e"]) * rho), torch.minimum(E, r["e"] * rho)
            if self.bf16:
                SA, SE = torch.minimum(SA, r["s_abs"] * rho**2), torch.minimum(SE, r["s_err"] * rho**2)
        R2 = R * R
        slack = 2 * (en * R + hn * E) + 4 * gamma64 * (sq + R2) + 2.0**-100
        if self.bf16:
            slack = slack + gamma * (2 * hn * H + pick(self.s_abs) + SA) + pick(self.s_err) + SE
        else:
            slack = slack + 2 * gamma * hn * H + 4 * U32 * (sq + R2 + 2 * hn * H)
        return slack * (1 + 2.0**-20)

    @cached_property
    def ratios(self):
        """Largest |e_j| / |x_j|, s_abs_j / |x_j|^2, s_err_j / |x_j|^2 over points x_j != 0 (a zero point
        has e = h = s' = 0), inflated by 2^-30 for the float64 evaluation."""
        import torch

        nz = self.sq > 0
        out = {
            "e": (self.en[nz] / self.sq[nz].sqrt()).max() if bool(nz.any()) else torch.zeros((), dtype=torch.float64)
        }
        if self.bf16:
            for name, v in (("s_abs", self.s_abs), ("s_err", self.s_err)):
                out[name] = (v[nz] / self.sq[nz]).max() if bool(nz.any()) else torch.zeros((), dtype=torch.float64)
        return {name: v * (1 + 2.0**-30) for name, v in out.items()}

    def lower(self, t, rows=None, rho=None):
        """A lower bound on the exact squared distance from each row to any point that can matter
        (see slack) whose search value is >= t (float64, per row)."""
        return (t / (1 + U_BF16) if self.bf16 else t) - self.slack(rows, rho)

    def upper(self, t, rows=None, rho=None):
        """An upper bound on the search value of every point that can matter (see slack) at exact
        squared distance <= t: its sum before rounding is at most t + slack (>= 0), and bf16's one
        rounding of the output moves a value by at most u_o of it."""
        u = t + self.slack(rows, rho)
        return u * (1 + U_BF16) if self.bf16 else u


def _merge(best_d, best_i, new_d, new_i, m):
    """Keep the m smallest of two (rows, *) candidate lists."""
    import torch

    vals = torch.cat([best_d, new_d], dim=1)
    idx = torch.cat([best_i, new_i], dim=1)
    top, pos = torch.topk(vals, m, dim=1, largest=False, sorted=False)
    return top, torch.gather(idx, 1, pos)


def _update(best_d, best_i, r0: int, d2, c0: int, m: int) -> None:
    """Merge the whole tile d2 (its rows are points r0.., its columns points c0..) into the top-m."""
    import torch

    rows = slice(r0, r0 + d2.shape[0])
    v, p = torch.topk(d2, min(m, d2.shape[1]), dim=1, largest=False, sorted=False)
    best_d[rows], best_i[rows] = _merge(best_d[rows], best_i[rows], v, p + c0, m)


def _update_sparse(best_d, best_i, r0: int, p, j, v, m: int) -> None:
    """Merge new hits (local row p ascending, global column j, value v) into rows r0.. of the top-m.
    Only the rows with hits are merged: off the diagonal most rows of a tile have none."""
    import torch

    if not len(p):
        return
    u, counts = torch.unique_consecutive(p, return_counts=True)  # the rows with hits, and how many each
    slot = torch.repeat_interleave(torch.arange(len(u), device=p.device), counts)  # each hit's row among u
    start = torch.cumsum(counts, 0) - counts
    pos = torch.arange(len(p), device=p.device) - start[slot]  # rank of each hit within its row
    width = int(counts.max())
    new_d = torch.full((len(u), width), float("inf"), dtype=best_d.dtype, device=p.device)
    new_i = torch.full((len(u), width), -1, dtype=best_i.dtype, device=p.device)
    new_d[slot, pos], new_i[slot, pos] = v, j
    rows = u + r0
    best_d[rows], best_i[rows] = _merge(best_d[rows], best_i[rows], new_d, new_i, m)


def _merge_hits(best_d, best_i, r0: int, nrows: int, p, c, tile, c0: int, m: int) -> None:
    """Merge the hits (p ascending, c) of `tile` (rows: points r0.., columns: points c0..) into the
    top-m of rows r0..; a dense top-k of the whole tile when they are too many for a sparse merge."""
    if len(p) > MERGE_CAP * nrows:
        _update(best_d, best_i, r0, tile, c0, m)
    else:
        _update_sparse(best_d, best_i, r0, p, c + c0, tile[p, c], m)


def _row_hits(d2, thr, itype):
    """(r, c), r ascending: the entries of the tile below their row's threshold.

    Hits are rare once the thresholds are tight, so the tile is read once for the minima of chunks of
    W entries of each row, and only chunks whose minimum is below the threshold are compared entry
    by entry (all entries, when that is most of them). A row's chunk c holds its columns c, c + s,
    c + 2s, ... (s = bj / W), so the minima are one reduction across the middle axis of a (bi, W, s)
    view, vectorised along contiguous memory: on an idle machine (2 threads, bf16 tiles of 3072^2) about
    1 ms a tile, against 5.5 ms for chunks of W adjacent entries (a reduction along the innermost 32).
    Below a positive threshold floats order as their bit patterns (negative values too: their sign bit
    makes them negative integers), so the compares run on the integer view, which is faster.
    """
    import torch

    bi, bj = d2.shape
    if bj % W or not bool(thr.min() > 0):
        return torch.nonzero(d2 < thr[:, None], as_tuple=True)
    key, kt = d2.view(itype), thr.view(itype)
    s = bj // W
    chunks = key.view(bi, W, s)  # chunks[r, :, c]: columns c, c + s, ... of row r
    r, ch = torch.nonzero(chunks.amin(dim=1) < kt[:, None], as_tuple=True)
    if len(r) * W > bi * bj // 4:
        return torch.nonzero(key < kt[:, None], as_tuple=True)
    q, w = torch.nonzero(chunks[r, :, ch] < kt[r, None], as_tuple=True)  # (hits, W) chunks
    return r[q], w * s + ch[q]


def _col_hits(d2, thr, itype):
    """(r, c), c ascending: the entries of the tile below their column's threshold (as _row_hits)."""
    import torch

    bi, bj = d2.shape
    if bi % W or not bool(thr.min() > 0):
        c, r = torch.nonzero(d2.T < thr[:, None], as_tuple=True)
        return r, c
    key, kt = d2.view(itype), thr.view(itype)
    chunks = key.view(bi // W, W, bj)
    c, rh = torch.nonzero(chunks.amin(dim=1).T < kt[:, None], as_tuple=True)
    if len(c) * W > bi * bj // 4:
        c, r = torch.nonzero(key.T < kt[:, None], as_tuple=True)
        return r, c
    q, w = torch.nonzero(chunks[rh, :, c] < kt[c, None], as_tuple=True)
    return rh[q] * W + w, c[q]


def _triangle_search(pts: _Points, m: int, block_size: int):
    """Running top-m (values, indices) of every row over all other rows, by tiles of the triangle."""
    import torch

    n = len(pts.sq)
    dev = pts.sq.device
    best_d = torch.full((n, m), float("inf"), dtype=pts.dtype, device=dev)
    best_i = torch.full((n, m), -1, dtype=torch.int64, device=dev)
    itype = torch.int16 if pts.dtype == torch.bfloat16 else torch.int32  # same width as the tile's type
    starts = list(range(0, n, block_size))
    for i0 in starts:  # diagonal tiles first: they make the thresholds finite
        i1 = min(n, i0 + block_size)
        d2 = pts.tile(slice(i0, i1), slice(i0, i1))
        d2.fill_diagonal_(float("inf"))
        # a dense top-k: in the locality order a diagonal tile holds most of its rows' neighbours, so
        # a filter against thresholds seeded from part of it passes a quarter of the entries. On an idle
        # machine (2 threads, N = 32768, bf16 tiles of 3072^2): 0.26 s for the 11 diagonal tiles against
        # 0.70 s for a top-k over 768 columns followed by the filter on the rest
        _update(best_d, best_i, i0, d2, i0, m)
    for a, i0 in enumerate(starts):
        i1 = min(n, i0 + block_size)
        for j0 in starts[a + 1 :]:
            j1 = min(n, j0 + block_size)
            d2 = pts.tile(slice(i0, i1), slice(j0, j1))  # (bi, bj)
            thr_r = best_d[i0:i1].max(dim=1).values  # (bi,) current m-th value of each row
            thr_c = best_d[j0:j1].max(dim=1).values  # (bj,)
            r, c = _row_hits(d2, thr_r, itype)
            _merge_hits(best_d, best_i, i0, i1 - i0, r, c, d2, j0, m)
            r, c = _col_hits(d2, thr_c, itype)
            _merge_hits(best_d, best_i, j0, j1 - j0, c, r, d2.T, i0, m)
            del d2
    return best_d, best_i


def _rectangle_search(pts: _Points, rows, m: int, block_size: int):
    """Running top-m (values, indices) of the given rows over all other rows, by (rows, block) tiles."""
    import torch

    n, q = len(pts.sq), len(rows)
    best_d = torch.full((q, m), float("inf"), dtype=pts.dtype, device=rows.device)
    best_i = torch.full((q, m), -1, dtype=torch.int64, device=rows.device)
    step = max(1, 2**24 // block_size)  # query rows per tile: a tile holds at most 2^24 values
    for r0 in range(0, q, step):
        r = rows[r0 : r0 + step]
        for j0 in range(0, n, block_size):
            j1 = min(n, j0 + block_size)
            d2 = pts.tile(r, slice(j0, j1))
            own = torch.nonzero((r >= j0) & (r < j1)).flatten()
            d2[own, r[own] - j0] = float("inf")  # the row itself, excluded by index
            _update(best_d, best_i, r0, d2, j0, m)
    return best_d, best_i


def kneighbors(
    X,
    k: int,
    *,
    device: str = "auto",
    block_size: int | None = None,
    margin: int | None = None,
    precision: str = "auto",
    rerank_bytes: int = 128 * 2**20,
    queries=None,
    project="auto",
) -> Neighbors:
    """Exact k nearest neighbours (Euclidean) of each row of X among the other rows.

    queries (optional): the rows (indices into X) to answer, each among all rows of X; the result then
    has one row per query, in the given order. Its cost is proportional to len(queries) * N (a
    rectangle of tiles, no triangle), so it pays for a few rows, e.g. those a removed duplicate left
    short of a neighbour.

    block_size: rows per tile of the search (default 3072 on CPU, 16384 on CUDA; a tile holds
    block_size^2 float32 values). margin: extra candidates per row re-ranked in float64 (default
    ``default_margin``); a larger margin means fewer rows fail the certificate. precision: the candidate
    search's type, 'bfloat16', 'float32', or 'auto' (bfloat16 on CPUs with native bf16 dot products,
    else float32); it changes the speed, never the result. project: the candidate search in a
    principal subspace ('auto': the smallest of PROJ_DIMS, at most D / 4, that leaves at most
    PROJ_RESIDUAL of the variance out, else none; an int p: that many dimensions; 0: none). The
    answer is the same (see ``_projection``): it changes the speed, never the result.
    """
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"expected a 2-D array of points, got shape {X.shape}")
    n, dim = X.shape
    if not 1 <= k < n:
        raise ValueError(f"need 1 <= k < N for kNN, got k={k}, N={n}")
    dev = resolve_device(device)
    dtype = _search_type(dev, precision)
    if block_size is None:
        block_size = 16384 if dev.type == "cuda" else 3072
    m = min(n - 1, k + (default_margin(k, dtype) if margin is None else margin))
    if queries is not None:
        queries = np.asarray(queries)
        if queries.ndim != 1 or not np.issubdtype(queries.dtype, np.integer):
            raise ValueError(f"queries must be a 1-D array of row indices, got {queries.dtype} {queries.shape}")
        if len(queries) and not (0 <= queries.min() and queries.max() < n):
            raise ValueError(f"queries must be row indices in [0, {n}), got {queries.min()}..{queries.max()}")
    if not (project == "auto" or (isinstance(project, (int, np.integer)) and 0 <= project)):
        raise ValueError(f"project must be 'auto' or a number of dimensions >= 0, got {project!r}")
    with _ieee_float32_products():
        return _exact_search(X, k, dev, dtype, block_size, m, rerank_bytes, queries, project)


@contextmanager
def _ieee_float32_products():
    """The certificate assumes IEEE float32 products. set_float32_matmul_precision('high'/'medium')
    lets torch use TF32 (CUDA) or bf16 passes (oneDNN) for float32 matmuls, which would void it, so
    the search runs at 'highest' and the caller's setting is restored afterwards."""
    import torch

    old = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(old)


def _search_frame(X, dev, block_size: int, queries):
    """Step 1's frame of X: the exact power-of-two scale s0, the mean and (for a search of every row
    above one tile) the locality order; returns (frame, s0, label)."""
    import torch

    n = X.shape[0]
    # x0 (never materialised, see _Frame): the input times s0, a power of two that brings a largest entry
    # outside [2^-64, 2^64) into [1/2, 1); that is exact and keeps squares in range at any input scale.
    # The re-ranking measures distances on x0, so they are the input's own float64 distances. xs: x0
    # centred (removing most of the Gram trick's cancellation) and scaled by a second power of two, s1,
    # so its largest norm is in [1/2, 1).
    # the caller's array itself on the CPU, never modified: float32 stays float32 (rows are widened to
    # float64 per block by the frame), other types become float64
    x = torch.as_tensor(X)
    x = (x if x.dtype in (torch.float32, torch.float64) else x.to(torch.float64)).to(dev)
    lo, hi = (float(v) for v in torch.aminmax(x))  # NaN or inf when any entry is (torch propagates NaN)
    if not (np.isfinite(hi) and np.isfinite(lo)):
        raise ValueError("kNN needs finite points: X has NaN or infinite entries")
    amax = max(hi, -lo)  # max |x| without an (N, D) temporary
    if 0 < amax < np.finfo(np.float64).tiny:  # no power of two brings it to [1/2, 1) in one float64 factor
        raise ValueError(
            f"kNN needs points above float64's subnormal range: the largest |entry| is {amax:.3g}, below "
            f"{np.finfo(np.float64).tiny:.3g}; rescale them (the dimension does not change with the scale)"
        )
    # inside the window, scaling by a power of two moves every intermediate of a distance by the same
    # exponent, which changes no bit unless one turns subnormal: that needs a squared coordinate
    # difference below 2^-894 and a distance below 2^-357 of the largest entry (near-duplicates hundreds
    # of orders below rtol). So the engine measures on the input itself there: a multiply less per
    # gathered candidate
    s0 = 1.0 if SAFE[0] <= amax < SAFE[1] else _unit_power(amax)
    fr = _Frame(x, s0)
    # one pass: the mean and (above one tile) the random projections of the locality order
    order = n > block_size and queries is None
    R = _projections(fr.dim, x.device) if order else None
    total, proj = 0, []
    for r0, r1 in fr.chunks():
        c = fr.x0(slice(r0, r1))
        total = total + c.sum(dim=0, keepdim=True)
        if order:
            proj.append(c @ R)
    mean = total / n
    # near points at near indices (one tile then holds most of a row's neighbours, and the re-ranking
    # gathers from nearby memory); `label` maps a position back to the caller's row, which breaks ties
    label = _kd_order(torch.cat(proj).sub_(mean @ R)) if order else None
    fr = _Frame(x, s0, label, mean)
    return fr, s0, label


def _certify(fr, pts, proj, best_d, out_d, out_i, rows, k: int, s1: float, block_size: int) -> int:
    """Step 3: the rows whose k-th re-ranked distance the candidate search cannot certify get an exact
    range query (out_d, out_i updated in place); returns how many."""
    import torch

    dk = out_d[:, -1] * s1  # the k-th distance, in the frame of xs
    sq = pts.sq if proj is None else proj.sq  # |xs|^2
    norm = sq.sqrt() if rows is None else sq[rows].sqrt()
    # every point within dk of x_i has norm <= |x_i| + dk (the inflation covers float64 rounding)
    rho = (norm + dk) * (1 + 2.0**-30)
    # centring rounds each coordinate once: the centred distance is within 2^-52 (|x_i| + |x_j|)
    # of the input's, so the certificate and the range query work with dk plus that
    reach = dk + 2.0**-52 * (norm + rho)
    t = best_d.max(dim=1).values.double()
    if proj is None:
        bad = torch.nonzero(reach**2 >= pts.lower(t, rows=rows, rho=rho)).flatten()
    else:
        bad = torch.nonzero(reach >= proj.lower(pts, t, reach)).flatten()
    if len(bad):
        # the range query is in the whole space. Without a projection it runs on the search's own
        # points (bf16 included: no float32 copy, half the GEMM), and a chunk of rows whose bf16
        # threshold takes in too many points is searched again in float32 (_range_search). After a
        # projection it runs in float32; |xs|^2 is the projection's, measured on the same chunks of
        # xs (a power of two apart, so exactly), so no float64 pass over the points is made
        sq = pts.sq if proj is None else proj.sq
        f32 = lambda: _Points(fr, torch.float32, sq=sq)  # noqa: E731
        search = pts if proj is None else f32()
        at = bad if rows is None else rows[bad]
        out_d[bad], out_i[bad] = _range_search(
            fr,
            search,
            at,
            reach[bad] ** 2,
            rho[bad],
            k,
            block_size,
            fallback=None if search.dtype == torch.float32 else f32,
        )
    return len(bad)


def _exact_search(
    X, k: int, dev, dtype, block_size: int, m: int, rerank_bytes: int, queries=None, project="auto"
) -> Neighbors:
    """Steps 1-3 of the module docstring, for every row or for the rows `queries`."""
    import torch

    fr, s0, label = _search_frame(X, dev, block_size, queries)

    proj = _projection(fr, project, dtype) if queries is None and project != 0 else None
    if proj is not None:  # the candidates from a principal subspace; fr.s1 set by _projection
        pts = _Points(proj.z, dtype, unit=True)  # sets proj.z.s1
    else:
        pts = _Points(fr, dtype, unit=True)  # sets fr.s1
    s1 = fr.s1
    if queries is None:
        rows = None
        best_d, best_i = _triangle_search(pts, m, block_size)
    else:
        rows = torch.as_tensor(queries, dtype=torch.int64, device=dev)
        best_d, best_i = _rectangle_search(pts, rows, m, block_size)
    out_d, out_i = _rerank(fr, best_i, k, rerank_bytes, rows=rows)
    n_recomputed = 0
    if m < fr.n - 1:  # else every other point was a candidate
        n_recomputed = _certify(fr, pts, proj, best_d, out_d, out_i, rows, k, s1, block_size)
    if label is not None:  # back to the caller's rows and indices
        out_i = label[out_i]
        out_d[label], out_i[label] = out_d.clone(), out_i.clone()
    return Neighbors((out_d / s0).cpu().numpy(), out_i.cpu().numpy(), n_recomputed, str(dev))


class _Projected:
    """The centred points' coordinates in a principal subspace, for the candidate search.

    z = fl(xs P) (float64; P: D x p with orthonormal columns up to rounding) is a _Frame of its own
    (its s1 scales z again). The certificate needs a lower bound on |xs_i - xs_j| for every
    non-candidate j from one on |z_i - z_j| (what the search bounds): |P^T v| <= ||P||_2 |v| with
    ||P||_2 <= 1 + delta (from the measured P^T P - I), and each computed row is within E of the exact
    P^T xs_i (a float64 dot product of length D off by gamma_D sum |xs_ik P_kl|; over the p columns
    <= gamma_D ||P||_F |xs_i| <= gamma_D sqrt(p) (1 + delta) R), so
    ``|xs_i - xs_j| >= (|z_i - z_j| - 2 E) / (1 + delta)``. A point left out of the subspace only
    looks nearer there, never farther: no true neighbour is lost, and a row whose k-th distance is
    below the bound of its m-th candidate is exact as before."""

    def __init__(self, z, sq, p: int, delta: float, E: float):
        self.z = _Frame(z)  # position order; _Points(unit=True) sets z.s1
        self.sq = sq  # (N,) |xs|^2 in the frame of xs (fr.s1 applied)
        self.p, self.delta, self.E = p, delta, E

    def lower(self, pts, t, reach):
        """Per row, a lower bound on |xs_i - xs_j| over non-candidates j that can matter (those with
        |xs_i - xs_j| <= reach_i), from the search values t (the m-th candidate's) of pts (on z)."""
        import torch

        s1z = self.z.s1
        # such a j has |z_j| <= |z_i| + |z_i - z_j| <= |z_i| + (1 + delta) reach + 2E (in z's frame)
        rho = (pts.sq.sqrt() + s1z * ((1 + self.delta) * reach + 2 * self.E)) * (1 + 2.0**-30)
        dz = torch.clamp(pts.lower(t, rho=rho), min=0).sqrt() * (1 - 2.0**-50) / s1z
        return (dz - 2 * self.E) / (1 + self.delta) * (1 - 2.0**-50)


def _block_width(dim: int, project="auto") -> int:
    """Columns of the subspace iteration's block: the largest p the search may take (the largest of
    PROJ_DIMS at most D / 4 for 'auto', else the p asked for) plus PROJ_OVERSAMPLE, at most D."""
    top = max([q for q in PROJ_DIMS if q <= dim // 4], default=PROJ_DIMS[0]) if project == "auto" else int(project)
    return min(dim, top + PROJ_OVERSAMPLE)


def _decision_pays(n: int, dim: int, device, dtype) -> bool:
    """Whether deciding on a subspace can cost less than the whole-space search's GEMM, the most a subspace
    can save. The decision is float64 GEMMs only: the covariance of min(N, PROJ_SAMPLE) rows (2 s D^2
    flops) and PROJ_ITERS block iterations on it (2 D^2 l each, l = _block_width); no D x D
    eigendecomposition, whose cost is D^3 at LAPACK's far lower and machine-dependent rate (MKL's eigh and
    eigvalsh at D = 768 took 0.03 s on an idle Intel Xeon, 0.7-1.5 s on this 2-core AMD EPYC VM under
    load, and up to 50 s inside the engine there: with k = 100 at N = 8192 that made 'auto' 2.5x slower
    than project=0). On CUDA (other rates) it always runs."""
    import torch

    if device.type != "cpu":
        return True
    s = min(n, PROJ_SAMPLE)
    decide = (2 * s * dim**2 + 2 * (PROJ_ITERS + 1) * dim**2 * _block_width(dim)) / RATE_F64
    gemm = n * n * dim / RATE_SEARCH["bfloat16" if dtype == torch.bfloat16 else "float32"]
    return decide < gemm


def _principal_subspace(cov, width: int):
    """(Ritz values descending, (D, width) orthonormal basis) of the leading eigenpairs of the symmetric
    positive semidefinite cov: block subspace iteration from a seeded Gaussian block (PROJ_ITERS products
    with cov, each followed by a QR), then the Rayleigh-Ritz step on the (width, width) matrix Q^T cov Q.
    By Ky Fan's maximum principle the sum of the top q Ritz values is at most that of the top q
    eigenvalues, so the variance a subspace is judged to leave out is never underestimated; and any
    orthonormal basis keeps the search exact (``_Projected``), so the iteration's accuracy only moves the
    speed."""
    import torch

    g = torch.Generator().manual_seed(1)
    Q = torch.randn(cov.shape[0], width, generator=g, dtype=torch.float64).to(cov.device)  # (D, width)
    with _one_thread(cov.device):
        for _ in range(PROJ_ITERS):
            Q = torch.linalg.qr(cov @ Q).Q
        theta, U = torch.linalg.eigh(Q.T @ cov @ Q)  # ascending, (width, width)
    return theta.flip(0), Q @ U.flip(1)


@contextmanager
def _one_thread(device):
    """torch's intra-op threads set to one on the CPU inside the block (the caller's setting restored
    afterwards): for small LAPACK calls (at D = 768 the subspace iteration took 0.18-0.22 s on one thread
    against 0.33-0.64 s on two on this 2-core VM under load, where a second thread only waits for a busy
    core) and for the re-ranking's workers (``_share_rows``)."""
    import torch

    threads = torch.get_num_threads()
    if device.type == "cpu":
        torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _projection(fr: _Frame, project="auto", dtype=None):
    """The subspace search of ``kneighbors(project=...)``, or None for the whole space. Sets fr.s1 (as
    _Points(unit=True) would: the power of two that brings the largest |xs| into [1/2, 1)). dtype: the
    search type, for the cost rule of 'auto' (``_decision_pays``)."""
    import torch

    n, dim = fr.n, fr.dim
    if project == "auto" and (
        dim < 4 * PROJ_DIMS[0] or n <= PROJ_SAMPLE // 2 or not _decision_pays(n, dim, fr.x.device, dtype)
    ):
        return None
    fr.s1 = 1.0
    step = -(-n // PROJ_SAMPLE)  # at most PROJ_SAMPLE rows (n // PROJ_SAMPLE took all n below 2 PROJ_SAMPLE)
    rows = torch.arange(0, n, step, device=fr.x.device)  # every step-th position
    cov = torch.zeros(dim, dim, dtype=torch.float64, device=fr.x.device)
    for r0 in range(0, len(rows), fr.chunk_rows):  # the sample in chunks: no (PROJ_SAMPLE, D) copy at once
        sample = fr.gather(rows[r0 : r0 + fr.chunk_rows], fr._block(len(rows[r0 : r0 + fr.chunk_rows])))
        if fr.mean is not None:
            sample.sub_(fr.mean)
        cov.addmm_(sample.T, sample)
    theta, Q = _principal_subspace(cov, _block_width(dim, project))  # descending; (D, width)
    total = float(torch.diagonal(cov).sum())  # the whole variance (times the sample size)
    if project == "auto":
        p = None
        for q in PROJ_DIMS:
            if q > dim // 4:
                break
            left = total - float(theta[:q].clamp(min=0).sum())
            if total > 0 and left <= PROJ_RESIDUAL * total:
                p = q
                break
        if p is None:
            return None
    else:
        p = min(int(project), dim)
    P = Q[:, :p].contiguous()  # (D, p), leading direction first
    g = P.T @ P - torch.eye(p, dtype=P.dtype, device=P.device)
    gamma_d = _gamma(dim, 2.0**-53)
    # ||P||_2^2 = ||P^T P||_2 <= 1 + ||G||_F; the computed G is within gamma_D |P_i| |P_j| of the exact one
    # per entry (p gamma_D (1 + delta)^2 in Frobenius norm, the 2^-30 covering the (1 + delta)^2)
    off = (float(torch.linalg.matrix_norm(g)) + p * gamma_d) * (1 + 2.0**-30)
    delta = float(np.sqrt(1 + off)) * (1 + 2.0**-50) - 1
    z = torch.empty(n, p, dtype=torch.float64, device=fr.x.device)
    sq = torch.empty(n, dtype=torch.float64, device=fr.x.device)
    for r0, r1 in fr.chunks():
        x = fr.xs(r0, r1)
        sq[r0:r1] = (x * x).sum(dim=1)
        torch.mm(x, P, out=z[r0:r1])
    rmax = float(sq.max().sqrt())
    s1 = _unit_power(rmax)
    fr.s1 = s1  # exact: a power of two, so z and |xs|^2 scale with it
    z.mul_(s1)
    sq.mul_(s1 * s1)
    R = float(sq.max().sqrt()) * (1 + 2.0**-40)
    E = gamma_d * np.sqrt(p) * (1 + delta) * R * (1 + 2.0**-40)
    return _Projected(z, sq, p, delta, E)


def _locality_order(x, mean, leaf: int = 64, dims: int = 32):
    """A permutation of the rows that puts near points at near positions: the leaf order of a k-d tree
    (recursive median bisection, each node split on its widest coordinate) over `dims` Gaussian random
    projections of the centred points x - mean (seeded: the order, hence the speed, is reproducible; the result
    does not depend on it). About 0.13 s at N = 32768, D = 768; it took the engine from 4.5 s to 3.9 s
    there (quiet, 2 threads) by making the diagonal tiles' thresholds tight, so later tiles have few hits."""
    import torch

    fr = _frame(x)
    R = _projections(fr.dim, fr.x.device, dims)
    # (x - mean) R without an (N, D) temporary
    return _kd_order(torch.cat([fr.x0(slice(r0, r1)) @ R for r0, r1 in fr.chunks()]).sub_(mean @ R), leaf)


def _projections(dim: int, device, dims: int = 32):
    """The seeded (dim, dims) Gaussian matrix of the locality order's random projections."""
    import torch

    g = torch.Generator().manual_seed(0)
    return torch.randn(dim, dims, generator=g, dtype=torch.float64).to(device)


def _kd_order(P, leaf: int = 64):
    """The leaf order of a k-d tree over the rows of P (a tensor): recursive median bisection, each node split
    on its widest coordinate."""
    import torch

    dev = P.device
    P = P.cpu().numpy()
    idx = np.arange(len(P))
    stack = [(0, len(P))]
    while stack:
        lo, hi = stack.pop()
        if hi - lo <= leaf:
            continue
        sub = P[idx[lo:hi]]
        c = int(np.argmax(sub.max(axis=0) - sub.min(axis=0)))
        mid = (hi - lo) // 2
        idx[lo:hi] = idx[lo:hi][np.argpartition(sub[:, c], mid)]
        stack += [(lo, lo + mid), (lo + mid, hi)]
    return torch.as_tensor(idx, device=dev)


def _rerank(x64, cand, k: int, rerank_bytes: int, rows=None):
    """Exact float64 distances from each query row to its candidates; keep the k nearest, ties by index.

    x64: the points, a float64 tensor or a _Frame (distances on its x0; ties by the caller's index
    ``label`` when it reorders). rows: the query rows (default all). cand: (len(rows), m) candidate
    positions, a numpy array or a tensor. Returns torch tensors (len(rows), k) on the points' device.
    """
    import torch

    fr = _frame(x64)
    dim, dev = fr.dim, fr.x.device
    cand = torch.as_tensor(cand, device=dev)
    n, m = cand.shape
    rows = torch.arange(n, device=dev) if rows is None else torch.as_tensor(rows, device=dev)
    # on the CPU, query rows in chunks whose gathered candidates fill RERANK_CPU_BYTES (N = 32768, m = 30,
    # D = 768, 2 threads). On an AMD EPYC VM (../shared/tools/quiet): 0.67 s for chunks
    # of 128 rows (24 MB) against 1.63 s for 8, 0.69 s for 256 and 1.18 s for 728 (128 MiB). On an Intel
    # Xeon VM with AMX (2 MiB L2 per core, idle machine): flat at 0.83-0.89 s from 1 to 12 MB (5 to 68
    # rows), 1.07 s at 16 MB and 1.25 s at 24 MB; at 1 thread 1.49-1.61 s up to 12 MB, 3.0 s at 24 MB.
    # 12 MB (68 rows there) is on that flat part, and between the AMD's measured 8 and 128 rows. (At 8 MB
    # the peak memory of test_the_callers_array_is_read_in_place varied from 3.4 to 4.0 times the input,
    # glibc's heap taking the freed chunks; at 12 MB it was 3.50-3.51 in 8 runs)
    # The chunks are shared out among the CPU's threads as contiguous runs of rows, each worker with its own
    # buffers (the RERANK_CPU_BYTES split between them) and one intra-op thread: torch's own two threads on
    # each chunk's gather and cdist meet at a barrier per call, some 1900 calls at N = 8192, k = 100, and on
    # this 2-core AMD EPYC VM under load the re-ranking there took 6.8-10.3 CPU s (14-25 s) that way against
    # 2.4-2.7 (5.5-6.1 s) for two independent workers, the same distances bit for bit.
    workers = torch.get_num_threads() if dev.type == "cpu" else 1
    cap = RERANK_CPU_BYTES // workers if dev.type == "cpu" else rerank_bytes
    chunk = max(1, min(cap, rerank_bytes) // (8 * m * dim))
    dist = torch.empty(cand.shape, dtype=torch.float64, device=dev)

    def measure(lo: int, hi: int) -> None:  # dist[lo:hi], chunk by chunk
        buf = torch.empty(chunk * m, dim, dtype=torch.float64, device=dev)
        qbuf = torch.empty(chunk, dim, dtype=torch.float64, device=dev)
        for r0 in range(lo, hi, chunk):
            r1 = min(hi, r0 + chunk)
            g = fr.gather(cand[r0:r1].reshape(-1), buf[: (r1 - r0) * m]).view(r1 - r0, m, dim)
            dist[r0:r1] = _distances(fr.gather(rows[r0:r1], qbuf[: r1 - r0])[:, None, :], g)[:, 0, :]

    _share_rows(n, workers, measure)
    # sort by (distance, index): order by index, then a stable sort by distance
    order = torch.argsort(cand if fr.label is None else fr.label[cand], dim=1)
    cand, dist = torch.gather(cand, 1, order), torch.gather(dist, 1, order)
    order = torch.sort(dist, dim=1, stable=True).indices[:, :k]
    return torch.gather(dist, 1, order), torch.gather(cand, 1, order)


def _share_rows(n: int, workers: int, work) -> None:
    """work(lo, hi) over `workers` contiguous runs of range(n), in that many Python threads (torch releases
    the GIL) each with one intra-op thread (the caller's setting restored afterwards): no barrier between
    them until the end. One worker (or a few rows) runs in the caller's thread as is."""
    import torch

    if workers <= 1 or n < 2 * workers:
        work(0, n)
        return
    from concurrent.futures import ThreadPoolExecutor

    bounds = [n * w // workers for w in range(workers + 1)]
    # fresh threads take up the one-thread setting at their first parallel call
    with _one_thread(torch.device("cpu")), ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda w: work(bounds[w], bounds[w + 1]), range(workers)))


def _range_hits(pts, q, thr, block_size: int):
    """(local row p ascending within each tile, global column j) of every point whose search value is
    at most the row's threshold thr (float32), the query row itself excluded."""
    import torch

    n = len(pts.sq)
    p, j = [], []
    for j0 in range(0, n, block_size):
        val = pts.tile(q, slice(j0, min(n, j0 + block_size)))  # (c, bj) in the search type
        pp, jj = torch.nonzero(val <= thr[:, None], as_tuple=True)  # bf16 against float32: exact
        keep = (jj + j0) != q[pp]
        p.append(pp[keep])
        j.append(jj[keep] + j0)
    return torch.cat(p), torch.cat(j)


def _range_search(x64, pts, rows, reach2, rho, k: int, block_size: int, fallback=None):
    """Exact k nearest of the given rows by a range query in the search type of pts (float32 or bf16).

    reach2 (per row): an upper bound, in the frame of pts, on the squared centred distance of every
    point that can be among the k nearest (the current k are within it); rho as in ``slack``. Every
    such point has search value at most ``upper(reach2)``, so every point at or below that value (self
    excluded) is re-measured in float64 (on x64, a tensor or a _Frame: the input's frame) and the k
    nearest kept, ties by index (by the frame's `label` of the index, as in _rerank). No certificate is
    needed, and the hits are few: those within the search type's error of the k-th distance. bf16's
    error is 2^16 times float32's, so on data where many points lie that close to the k-th distance
    (near-equidistant shells) a chunk of rows with more than RANGE_HITS_PER_ROW hits a row is searched
    again on ``fallback()`` (float32 points, made once when first needed). Memory: a (rows, block) tile.
    """
    import torch

    fr = _frame(x64)
    label, dev = fr.label, fr.x.device
    n = len(pts.sq)
    up = lambda p: (p.upper(reach2, rows, rho) * (1 + 2.0**-22)).to(torch.float32)  # noqa: E731  rounding up
    thr, thr32, pts32 = up(pts), None, None
    chunk = max(16, 2**22 // n)
    out_d = torch.empty(len(rows), k, dtype=torch.float64, device=dev)
    out_i = torch.empty(len(rows), k, dtype=torch.int64, device=dev)
    for r0 in range(0, len(rows), chunk):
        q = rows[r0 : r0 + chunk]
        p, j = _range_hits(pts, q, thr[r0 : r0 + chunk], block_size)
        if fallback is not None and len(p) > RANGE_HITS_PER_ROW * len(q):
            if pts32 is None:
                pts32 = fallback()
                thr32 = up(pts32)
            p, j = _range_hits(pts32, q, thr32[r0 : r0 + chunk], block_size)
        if label is not None:  # hits in ascending label within each row, as the sorts below need
            order = torch.sort(label[j], stable=True).indices
            p, j = p[order], j[order]
        dist = _pair_distances(fr, q[p], j)
        # (row, distance, index) order: for each row the hits came in ascending index, so two stable
        # sorts, by distance and then by row, give it
        order = torch.sort(dist, stable=True).indices
        p, j, dist = p[order], j[order], dist[order]
        order = torch.sort(p, stable=True).indices
        p, j, dist = p[order], j[order], dist[order]
        counts = torch.bincount(p, minlength=len(q))
        if bool((counts < k).any()):
            raise RuntimeError("kNN range search found fewer than k points: the search error bound failed")
        at = (torch.cumsum(counts, 0) - counts)[:, None] + torch.arange(k, device=p.device)  # (c, k)
        out_d[r0 : r0 + chunk], out_i[r0 : r0 + chunk] = dist[at], j[at]
    return out_d, out_i


def _pair_distances(x64, a, b, pairs: int = 2048):
    """float64 |x_b - x_a| for position pairs (a, b) of x64 (a tensor or a _Frame, on its x0), computed as
    the re-ranking computes them."""
    import torch

    fr = _frame(x64)
    out = torch.empty(len(a), dtype=torch.float64, device=fr.x.device)
    buf = torch.empty(2, min(pairs, len(a)), fr.dim, dtype=torch.float64, device=fr.x.device)
    for p0 in range(0, len(a), pairs):
        c = len(a[p0 : p0 + pairs])
        g = fr.gather(b[p0 : p0 + pairs], buf[0, :c])
        out[p0 : p0 + c] = _distances(fr.gather(a[p0 : p0 + pairs], buf[1, :c])[:, None, :], g[:, None, :])[:, 0, 0]
    return out


def _distances(q, g):
    """float64 |g - q| per batch: q (B, 1, D), g (B, r, D) -> (B, 1, r), by one kernel that reads each
    difference once (no difference vector is written: on an idle machine, chunks of the re-ranking at
    m = 30 took 12-17% less time than a gather, an in-place subtraction and vector_norm, at 1 and 2
    threads, D = 384 and 768). The re-ranking and the range query both measure through it, so a row
    gets the same numbers whichever step answers it."""
    import torch

    return torch.cdist(q, g, compute_mode="donot_use_mm_for_euclid_dist")
