"""Local evaluation of the Lemma 1 and Theorem 2 networks (Appendix E.1-E.2) with a certificate of locality.

T(x) = H_final[0, l-1] depends on a few tokens only: the charts' copies of x, their coordinates z and
indicators, the s_{i,j} whose ψ is non-zero at x, and the patches whose factors are all non-zero. Every
other token enters through a ReLU whose argument is pinned: an s_{i,j} far from z_i has ψ = 0, a patch
with a zero factor has product 0, so its f_n head adds exactly σ(0 · f_n + R) = R, which the sum block's
shift cancels. This module computes T(x) from the plan's own blocks, never building the l-token network,
and proves that the tokens it leaves out behave so.

Method (abstract interpretation over a partition of the l tokens). The chosen tokens are classes of one
token and hold exact rational values. The others are grouped into classes, each with a box: an interval
per data row (rows 0-1) containing every member's value, block after block:
  * the s_{i,j} of one axis outside its window, per contiguous range of j (their ψ kernels, 1 - t_j, are
    affine in j, so the hull of the range's two end members' kernels holds every member's);
  * the factor slot k of the patches of one grid whose first axis outside the chosen window is i*: each
    slot reads the hull of the tokens its members can read (the chosen s_{i,j} of the window, or the
    s classes); the f_n kernel's constant f_n lies in [-R, R] (|f̃_n| <= R, checked when a value is read).
A block maps each box through the class's heads (interval products, σ of an interval) and the FFN, run as
affine forms in the token's two data rows: a ReLU whose argument has one sign on the box is linear or 0 there,
so the ψ FFN of an s_{i,j} with |u| >= 2 gives row 0 exactly 0 (its four ReLUs cancel) and the move/clear
FFNs leave exact zeros (a ReLU with both signs on the box is bounded by [0, max] instead, soundly).
Induction over the blocks: every member's state lies in its class's box, because its update reads only
its own state and tokens in the source classes, with kernels in the class's kernel box.

Certificate (`LocalResult.certified`):
  1. the classes partition the l tokens (their sizes sum to l) and every head into a chosen token reads a
     chosen token (closure), so the chosen tokens' values are computed, not bounded;
  2. every box lies in |rows 0-1| <= M at each block: Lemma 3's hypothesis on every token, under which each
     realized head equals its Interaction term (`sparse.sufficient_C`) and no other pair scores above 0;
  3. the dense sum head reads Σ_t row 1 over all tokens = Σ_classes size · box, which must be one number,
     and the decoder's box must be one number: T(x).
A dropped token that matters breaks 1 (a chosen token reads it) or 3 (its ψ, read through an undecided
ReLU, leaves a box of positive width that reaches the sum), so the value is never silently wrong.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from tmcheck.theory.sparse import SparseBlock, patch_index, psi_window

F0, F1 = Fraction(0), Fraction(1)
Interval = tuple[Fraction, Fraction]
Box = tuple[Interval, Interval]  # rows 0 and 1


# --------------------------------------------------------------------------------------------
# interval arithmetic on exact rationals


def _point(v) -> Interval:
    if type(v) is not Fraction:
        v = Fraction(v)
    return (v, v)


def _add(a: Interval, b: Interval) -> Interval:
    return (a[0] + b[0], a[1] + b[1])


def _mul(a: Interval, b: Interval) -> Interval:
    if a[0] == a[1] and b[0] == b[1]:
        v = a[0] * b[0]
        return (v, v)
    p = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
    return (min(p), max(p))


def _relu(a: Interval) -> Interval:
    return (max(a[0], F0), max(a[1], F0))


def _hull(boxes: Sequence[Box]) -> Box:
    return tuple((min(b[r][0] for b in boxes), max(b[r][1] for b in boxes)) for r in (0, 1))


def _abs_max(box: Box) -> Fraction:
    return max(abs(box[0][0]), abs(box[0][1]), abs(box[1][0]), abs(box[1][1]))


def _dot(row: Sequence[Interval], box: Box) -> Interval:
    """<row, h> for a token h = (row 0, row 1, I_t, 1): rows 2-3 must have weight 0 (checked by `Edge`)."""
    return _add(_add(_mul(row[0], box[0]), _mul(row[1], box[1])), row[4])


# --------------------------------------------------------------------------------------------
# affine forms through an FFN


def _form_range(form: tuple, box: Box) -> Interval:
    """a0 r0 + a1 r1 + [c_lo, c_hi] over the box."""
    a0, a1, lo, hi = form
    if box[0][0] == box[0][1] and box[1][0] == box[1][1]:
        v = (a0 * box[0][0] if a0 else F0) + (a1 * box[1][0] if a1 else F0)
        return (lo + v, hi + v)
    for a, (blo, bhi) in ((a0, box[0]), (a1, box[1])):
        if a > 0:
            lo, hi = lo + a * blo, hi + a * bhi
        elif a < 0:
            lo, hi = lo + a * bhi, hi + a * blo
    return (lo, hi)


def compile_ffn(layers: Sequence) -> list[list[tuple]]:
    """Per layer, per unit: (bias, [(input, weight), ...] over the non-zero weights), as Fractions; an FFN that
    reads the interaction rows or writes rows 2-4 is refused (the blocks of Lemma 1 and Theorem 2 do neither)."""
    out = []
    for li, lay in enumerate(layers):
        W, b = np.asarray(lay.W), np.asarray(lay.b)
        units = []
        for u in range(W.shape[0]):
            terms = [(c, Fraction(W[u, c])) for c in range(W.shape[1]) if W[u, c] != 0]
            if li == 0 and any(c in (2, 3) for c, _ in terms):
                raise ValueError("an FFN reads the interaction rows: not a Lemma 1 / Theorem 2 FFN")
            units.append((Fraction(b[u]), terms))
        out.append(units)
    if out and any(out[-1][r][0] != 0 or out[-1][r][1] for r in (2, 3, 4)):
        raise ValueError("an FFN writes rows 2-4")
    return out


def ffn_forms(ffn: list[list[tuple]], box: Box) -> tuple[tuple, tuple]:
    """FFN(z) over z in `box` (FFN from `compile_ffn`) as affine forms in (row 0, row 1), rows 0 and 1: a ReLU
    whose argument has one sign on the box is 0 or the identity there; one with both signs is bounded by
    [0, max] (module docstring). On a point box every form is a number: the exact value."""
    forms = [(F1, F0, F0, F0), (F0, F1, F0, F0), None, None, (F0, F0, F1, F1)]
    for li, units in enumerate(ffn):
        out = []
        for bias, terms in units:
            a0, a1, lo, hi = F0, F0, bias, bias
            for c, w in terms:
                f0, f1, flo, fhi = forms[c]
                if f0:
                    a0 += w * f0
                if f1:
                    a1 += w * f1
                if flo or fhi:
                    lo, hi = (lo + w * flo, hi + w * fhi) if w > 0 else (lo + w * fhi, hi + w * flo)
            f = (a0, a1, lo, hi)
            if li < len(ffn) - 1:
                r = _form_range(f, box)
                if r[1] <= 0:
                    f = (F0, F0, F0, F0)
                elif r[0] < 0:  # both signs on the box: σ in [0, max], correlation dropped
                    f = (F0, F0, F0, r[1])
            out.append(f)
        forms = out
    return forms[0], forms[1]


def _ffn_point(ffn: list[list[tuple]], box: Box) -> tuple[tuple, tuple]:
    """`ffn_forms` on a point box (the same numbers, without the forms): plain exact arithmetic."""
    h = [box[0][0], box[1][0], None, None, F1]
    for li, units in enumerate(ffn):
        out = []
        for bias, terms in units:
            v = bias
            for c, w in terms:
                v += w * h[c] if w != 1 else h[c]
            out.append(v if li == len(ffn) - 1 or v > 0 else F0)
        h = out
    return (F0, F0, h[0], h[0]), (F0, F0, h[1], h[1])


def ffn_box(ffn: list[list[tuple]], box: Box, memo: dict | None = None) -> Box:
    """The box of z + FFN(z) over z in `box`. `memo` caches the forms by the rows the FFN reads."""
    if not ffn:
        return box
    if memo is not None and box in memo:
        return memo[box]
    reads = tuple(c for c in (0, 1) if any(c == k for _, terms in ffn[0] for k, _ in terms))
    key = tuple(box[c] for c in reads)
    if memo is None or key not in memo:
        forms = _ffn_point(ffn, box) if all(lo == hi for lo, hi in key) else ffn_forms(ffn, box)
        if memo is None:
            return _residual(forms, box)
        memo[key] = forms
    out = _residual(memo[key], box)
    if memo is not None:
        memo[box] = out
    return out


def _residual(forms: tuple, box: Box) -> Box:
    """z + FFN(z): the forms plus the identity, over the box."""
    f0, f1 = forms
    return (_form_range((F1 + f0[0], f0[1], f0[2], f0[3]), box), _form_range((f1[0], F1 + f1[1], f1[2], f1[3]), box))


# --------------------------------------------------------------------------------------------
# classes and their heads


@dataclass(frozen=True)
class Edge:
    """One Lemma 3 head into every member of a class: σ(<Q^B h, K^B h'>) (times sign) added to `row`, h' a
    token of the source classes (their hull), K^B's entries as intervals over the members."""

    sources: tuple
    Q: tuple  # 2 rows of 5 intervals
    K: tuple
    row: int
    sign: int

    def __post_init__(self):
        if any(r[c] != (F0, F0) for r in self.Q + self.K for c in (2, 3)):
            raise ValueError("a head reads the interaction rows in its data kernel")
        if self.row not in (0, 1):
            raise ValueError(f"a head writes row {self.row}: rows 2-4 are fixed")


@dataclass
class TokenClass:
    size: int
    h0: Box
    edges: list = field(default_factory=list)  # per block: list[Edge]


@dataclass
class LocalResult:
    """T(x) from the chosen tokens, and the certificate that the others are what they must be."""

    value: Fraction | None
    certified: bool
    failures: list[str]
    tokens_chosen: int  # tokens evaluated exactly
    classes: int  # classes of left-out tokens
    l: int  # tokens covered by the partition (must equal the network's l)
    heads: list[int]  # heads per block, counted over the partition (size x heads into a member)


@functools.lru_cache(maxsize=100_000)
def _interval_kernel(rows) -> tuple:
    return tuple(tuple(_point(v) for v in r) for r in rows)


def _hull_kernel(a: tuple, b: tuple) -> tuple:
    return tuple(
        tuple((min(x[0], y[0]), max(x[1], y[1])) for x, y in zip(ra, rb, strict=True))
        for ra, rb in zip(a, b, strict=True)
    )


def _inside(a: tuple, b: tuple) -> bool:
    return all(y[0] <= x[0] and x[1] <= y[1] for ra, rb in zip(a, b, strict=True) for x, y in zip(ra, rb, strict=True))


@dataclass(frozen=True)
class Grid:
    """One Lemma 1 grid on a run of tokens (Lemma 1's whole network, or chart n of Theorem 2): the tokens its ψ
    heads read (x^i, or z_i), the s_{i,j} from psi_base, the patches' F factor slots from prod_base, the factor
    tokens after the d s-factors (Theorem 2's indicator), the chosen s windows and patch windows per axis."""

    z: tuple[int, ...]
    N: int
    psi_base: int
    prod_base: int
    F: int
    extra: tuple[int, ...]
    s_window: tuple[tuple[int, ...], ...]
    patch_window: tuple[tuple[int, ...], ...]

    @property
    def d(self) -> int:
        return len(self.z)

    def s_token(self, i: int, j: int) -> int:
        return self.psi_base + i * self.N + j

    def slot(self, p: Sequence[int], k: int) -> int:
        return self.prod_base + patch_index(p, self.N) * self.F + k

    def chosen_patches(self) -> list[tuple[int, ...]]:
        return [tuple(p) for p in itertools.product(*self.patch_window)]

    def s_ranges(self, i: int) -> list[tuple[int, int]]:
        """The maximal runs of j outside axis i's s window."""
        out, start = [], 0
        for j in [*sorted(self.s_window[i]), self.N]:
            if j > start:
                out.append((start, j - 1))
            start = j + 1
        return out

    def first_out(self, p: Sequence[int]) -> int | None:
        """The first axis on which patch p leaves the patch window (None: p is chosen)."""
        return next((i for i, j in enumerate(p) if j not in self.patch_window[i]), None)

    def patch_class_size(self, i_star: int) -> int:
        out = self.N - len(self.patch_window[i_star])
        for i in range(i_star):
            out *= len(self.patch_window[i])
        return out * self.N ** (self.d - 1 - i_star)

    def patch_class_ends(self, i_star: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The first and last member of the class of patches whose first axis out of the window is i_star."""
        win = self.patch_window[i_star]
        first = next(j for j in range(self.N) if j not in win)
        last = next(j for j in reversed(range(self.N)) if j not in win)
        lo = [min(self.patch_window[i]) for i in range(i_star)] + [first] + [0] * (self.d - 1 - i_star)
        hi = [max(self.patch_window[i]) for i in range(i_star)] + [last] + [self.N - 1] * (self.d - 1 - i_star)
        return tuple(lo), tuple(hi)


Interactions = Callable[[set[int]], list[list]]  # tokens -> per block, the Interactions into them


@dataclass
class LocalProblem:
    """The partition, the blocks' FFNs and bounds M, and the decoder's class: what `run` evaluates."""

    l: int
    blocks: list[SparseBlock]  # FFN, M, dense heads of each block (their interactions are not read)
    classes: dict
    decoder: object
    chosen: int
    failures: list[str]


def build_problem(
    l: int,
    stages: list[SparseBlock],
    grids: Sequence[Grid],
    base: Sequence[int],
    h0: dict[int, Fraction],
    interactions: Interactions,
    R: Fraction,
) -> LocalProblem:
    """The partition of the l tokens for these grids' windows: the `base` tokens (x, chart coordinates,
    indicators) and the windows' tokens chosen, the rest in classes (module docstring). `interactions`
    generates the plan's heads into given tokens; h0 holds row 0 of the embedded input (x)."""
    failures: list[str] = []
    chosen: set[int] = set(base)
    for g in grids:
        chosen.update(g.s_token(i, j) for i in range(g.d) for j in g.s_window[i])
        chosen.update(g.slot(p, k) for p in g.chosen_patches() for k in range(g.F))
    s_class = {}  # s token range key -> (grid index, axis, first j, last j)
    patch_members: dict = {}
    for gi, g in enumerate(grids):
        for i in range(g.d):
            for a, b in g.s_ranges(i):
                key = ("s", g.s_token(i, a), g.s_token(i, b))
                s_class[key] = (gi, i, a, b)
        for i_star in range(g.d):
            if g.patch_class_size(i_star):
                patch_members[(gi, i_star)] = g.patch_class_ends(i_star)
    need = set(chosen)
    for key, (gi, i, a, b) in s_class.items():
        need.update((key[1], key[2], grids[gi].s_token(i, (a + b) // 2)))
    for (gi, _), ends in patch_members.items():
        need.update(grids[gi].slot(p, k) for p in ends for k in range(grids[gi].F))
    into = _index(interactions(need), len(stages) - 1)
    s_keys: dict = {}
    for key, (gi, i, _, _) in s_class.items():
        s_keys.setdefault((gi, i), []).append(key)
    n_blocks = len(stages) - 1
    classes: dict = {}
    for t in sorted(chosen):
        edges = [_chosen_edges(t, into.get((b, t), []), chosen, b, failures) for b in range(n_blocks)]
        classes[t] = TokenClass(1, (_point(h0.get(t, F0)), (F0, F0)), [*edges, []])
    for key, (gi, i, a, b) in s_class.items():
        g = grids[gi]
        members = [g.s_token(i, j) for j in (a, b, (a + b) // 2)]
        edges = [
            _s_edges(key, [into.get((blk, t), []) for t in members], chosen, blk, failures) for blk in range(n_blocks)
        ]
        classes[key] = TokenClass(b - a + 1, ((F0, F0), (F0, F0)), [*edges, []])
    for (gi, i_star), ends in patch_members.items():
        g = grids[gi]
        for k in range(g.F):
            edges = []
            for blk in range(n_blocks):
                heads = [into.get((blk, g.slot(p, k)), []) for p in ends]
                srcs = [
                    [_patch_source(g, gi, i_star, p, it.t2, s_keys, chosen) for it in hs]
                    for p, hs in zip(ends, heads, strict=True)
                ]
                edges.append(_patch_edges((gi, i_star, k), heads, srcs, stages[blk].name == "f_n", R, blk, failures))
            classes[("patch", gi, i_star, k)] = TokenClass(
                g.patch_class_size(i_star), ((F0, F0), (F0, F0)), [*edges, []]
            )
    covered = sum(c.size for c in classes.values())
    if covered != l:
        failures.append(f"the classes cover {covered} tokens, not l = {l}")
    decoder = _class_of(l - 1, grids, chosen)
    return LocalProblem(l, stages, classes, decoder, len(chosen), failures)


def _chosen_edges(t: int, heads: list, chosen: set, blk: int, failures: list) -> list[Edge]:
    """The heads into chosen token t: each must read a chosen token (closure)."""
    out = []
    for it in heads:
        if it.t2 not in chosen:
            failures.append(f"block {blk}: chosen token {t} reads token {it.t2}, which is left out")
            continue
        out.append(Edge((it.t2,), _interval_kernel(it.Q_data), _interval_kernel(it.K_data), it.row, it.sign))
    return out


def _s_edges(key: tuple, heads: list[list], chosen: set, blk: int, failures: list) -> list[Edge]:
    """The heads into an s class, from its first, last and middle members' (`heads`): one source and Q^B for all,
    K^B the hull of the ends' (ψ's kernel constant 1 - t_j is affine in j; the middle one is checked inside)."""
    lo, hi, mid = heads
    if not len(lo) == len(hi) == len(mid):
        failures.append(f"block {blk}: the s tokens {key[1]}..{key[2]} differ in their number of heads")
    out = []
    for x, y, w in zip(lo, hi, mid, strict=False):
        if len({(v.t2, v.Q_data, v.row, v.sign) for v in (x, y, w)}) > 1 or x.t2 not in chosen:
            failures.append(f"block {blk}: the s tokens {key[1]}..{key[2]} do not share their heads' sources")
            continue
        K = _hull_kernel(_interval_kernel(x.K_data), _interval_kernel(y.K_data))
        if not _inside(_interval_kernel(w.K_data), K):
            failures.append(f"block {blk}: an s token inside {key[1]}..{key[2]} has a kernel outside its ends'")
        out.append(Edge((x.t2,), _interval_kernel(x.Q_data), K, x.row, x.sign))
    return out


def _patch_edges(
    cls: tuple, heads: list[list], srcs: list[list], f_block: bool, R: Fraction, blk: int, failures: list
) -> list[Edge]:
    """The heads into a patch class's slot, from its first and last members' (`heads`, their source classes
    `srcs`): the same sources, Q^B and K^B for both, but for the f_n block's constant f_n, widened to [-R, R]."""
    if len(heads[0]) != len(heads[1]):
        failures.append(f"block {blk}: the patches of class {cls[:2]} differ in their heads")
    out = []
    for x, y, sx, sy in zip(*heads, *srcs, strict=False):
        if sx is None or sx != sy:
            failures.append(f"block {blk}: patch slot {cls[2]} of class {cls[:2]} reads an unclassified token")
            continue
        Kx, Ky = _interval_kernel(x.K_data), _interval_kernel(y.K_data)
        if f_block:  # each member's own f_n: only |f_n| <= R is used
            Kx, Ky = _any_f(Kx, R, failures), _any_f(Ky, R, failures)
        if (x.Q_data, x.row, x.sign) != (y.Q_data, y.row, y.sign) or Kx != Ky:
            failures.append(f"block {blk}: the patches of class {cls[:2]} differ in a head")
        out.append(Edge(sx, _interval_kernel(x.Q_data), Kx, x.row, x.sign))
    return out


def _any_f(K: tuple, R: Fraction, failures: list) -> tuple:
    """The f_n head's kernel (kernel_row(0, f_n), kernel_row(0, R)) with f_n widened to [-R, R]."""
    f = K[0][4][0]
    if abs(f) > R:
        failures.append(f"a grid value f_n = {float(f):.6g} exceeds R = {float(R):.6g}")
    return ((*K[0][:4], (-R, R)), *K[1:])


def _index(per_block: list[list], n_blocks: int) -> dict:
    out: dict = {}
    for b in range(n_blocks):
        for it in per_block[b]:
            out.setdefault((b, it.t1), []).append(it)
    return out


def _patch_source(g: Grid, gi: int, i_star: int, p, t2: int, s_class: dict, chosen: set) -> tuple | None:
    """The classes a head into a slot of patch p (of class (gi, i_star)) reads, for the token t2 it reads in p
    (s_class: (grid, axis) -> the keys of that axis's s classes)."""
    rel = t2 - g.prod_base
    base = patch_index(p, g.N) * g.F
    if 0 <= rel - base < g.F:
        return (("patch", gi, i_star, rel - base),)
    if t2 in g.extra:
        return (t2,)
    rel = t2 - g.psi_base
    if not 0 <= rel < g.d * g.N:
        return None
    i = rel // g.N
    win = g.s_window[i]
    if i < i_star:
        js = list(g.patch_window[i])
        ranges = []
    else:
        js = [j for j in win if i > i_star or j not in g.patch_window[i]]
        ranges = s_class.get((gi, i), [])
    srcs = tuple(g.s_token(i, j) for j in js if g.s_token(i, j) in chosen) + tuple(sorted(ranges))
    return srcs or None


def _class_of(t: int, grids: Sequence[Grid], chosen: set):
    if t in chosen:
        return t
    for gi, g in enumerate(grids):
        rel = t - g.prod_base
        if 0 <= rel < g.F * g.N**g.d:
            q, p = rel // g.F, []
            for _ in range(g.d):
                q, j = divmod(q, g.N)
                p.append(j)
            return ("patch", gi, g.first_out(p[::-1]), rel % g.F)
    raise ValueError(f"token {t} is neither chosen nor a patch slot")


# --------------------------------------------------------------------------------------------
# the evaluation


def run(problem: LocalProblem) -> LocalResult:
    """Every class's box through the blocks; T(x) is the decoder's row 0 when the certificate holds."""
    failures = list(problem.failures)
    boxes = {k: c.h0 for k, c in problem.classes.items()}
    heads = []
    for b, blk in enumerate(problem.blocks):
        ffn, memo = compile_ffn(blk.ffn_layers(problem.l)), {}
        M = blk.M
        outside = [k for k, bx in boxes.items() if bx[0][0] < -M or bx[1][0] < -M or bx[0][1] > M or bx[1][1] > M]
        if outside:
            worst = (outside[0], boxes[outside[0]])
            failures.append(
                f"block {b} ({blk.name}): |rows 0-1| of {worst[0]} reaches {float(_abs_max(worst[1])):.6g} > M = "
                f"{float(blk.M):.6g}, outside Lemma 3's domain"
            )
        dense = _dense(blk, problem.classes, boxes, failures)
        heads.append(sum(c.size * len(c.edges[b]) for c in problem.classes.values()) + len(blk.dense))
        new = {}
        for key, c in problem.classes.items():
            box = boxes[key]
            z = [box[0], box[1]]
            for e in c.edges[b]:
                src = _hull([boxes[s] for s in e.sources])
                score = (F0, F0)
                for qr, kr in zip(e.Q, e.K, strict=True):
                    score = _add(score, _mul(_dot(qr, box), _dot(kr, src)))
                v = _relu(score)
                z[e.row] = _add(z[e.row], v if e.sign > 0 else (-v[1], -v[0]))
            z = (_add(z[0], dense[0]), _add(z[1], dense[1]))
            new[key] = ffn_box(ffn, z, memo)
        boxes = new
    out = boxes[problem.decoder][0]
    if out[0] != out[1]:
        failures.append(f"the output is only bounded, to [{float(out[0]):.6g}, {float(out[1]):.6g}]")
    ok = not failures
    left_out = len(problem.classes) - problem.chosen
    return LocalResult(out[0] if ok else None, ok, failures, problem.chosen, left_out, problem.l, heads)


def _dense(blk: SparseBlock, classes: dict, boxes: dict, failures: list) -> tuple[Interval, Interval]:
    """What the block's dense heads add to rows 0-1 of every token: only constant-score heads (score
    <Q e_4, K e_4> for every pair) whose values read rows 0, 1 and 4 are local: σ(score) Σ_t V h_t."""
    add = [(F0, F0), (F0, F0)]
    for h in blk.dense:
        Q, K, V = (np.asarray(m) for m in (h.Q, h.K, h.V))
        if any(Q[r, c] != 0 or K[r, c] != 0 for r in range(5) for c in range(4)) or any(
            V[r, c] != 0 for r in range(5) for c in (2, 3)
        ):
            failures.append(f"block {blk.name}: a dense head whose score or value depends on the token")
            continue
        s = max(sum(Fraction(Q[r, 4]) * Fraction(K[r, 4]) for r in range(5)), F0)
        for r in (0, 1):
            tot = (F0, F0)
            if not (V[r, 0] or V[r, 1] or V[r, 4]):
                continue
            for key, c in classes.items():
                v = _add(
                    _add(_mul(_point(V[r, 0]), boxes[key][0]), _mul(_point(V[r, 1]), boxes[key][1])), _point(V[r, 4])
                )
                tot = _add(tot, _mul(_point(c.size), v))
            add[r] = _add(add[r], _mul(_point(s), tot))
    return tuple(add)


# --------------------------------------------------------------------------------------------
# Lemma 1 and Theorem 2


Windows = tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]  # (s windows, patch windows) per axis


class Lemma1Local:
    """Lemma 1's network (`lemmas.lemma1.lemma1_plan`) evaluated locally; the plan's blocks are listed, and
    indexed here by the token each head writes."""

    def __init__(self, plan):
        self.plan = plan
        self.stages = plan.blocks
        self._into: dict = {}
        for b, blk in enumerate(plan.blocks[:-1]):
            for it in blk.interactions:
                self._into.setdefault(it.t1, {}).setdefault(b, []).append(it)

    def interactions(self, tokens: set[int]) -> list[list]:
        out = [[] for _ in self.stages[:-1]]
        for t in tokens:
            for b, its in self._into.get(t, {}).items():
                out[b].extend(its)
        return out

    def windows(self, x) -> Windows:
        w = tuple(psi_window(Fraction(v), self.plan.N) for v in x)
        return w, w

    def evaluate(self, x, windows: Windows | None = None) -> LocalResult:
        lay, d = self.plan.layout, self.plan.d
        s_win, p_win = self.windows(x) if windows is None else windows
        grid = Grid(tuple(range(d)), self.plan.N, lay.psi_base, lay.prod_base, lay.F, (), s_win, p_win)
        h0 = {i: Fraction(v) for i, v in enumerate(x)}
        problem = build_problem(self.plan.l, self.stages, [grid], range(d), h0, self.interactions, self.plan.R)
        return run(problem)


class Theorem2Local:
    """Theorem 2's network evaluated locally from a plan (`lemmas.theorem2.theorem2_plan`, lazy or not): the
    heads into the chosen tokens of chart n come from `chart_blocks(plan, n, selection)`, generated per call,
    so a network of 10^9 tokens is never listed."""

    def __init__(self, plan):
        from tmcheck.theory import spec as resources_spec
        from tmcheck.theory.lemmas.theorem2 import Selection, chart_blocks, sum_block

        self.plan = plan
        self.lay = resources_spec.Theorem2Layout(plan.d, plan.D, plan.N, plan.manifold.C_M)
        self._chart_blocks, self._Selection = chart_blocks, Selection
        empty = Selection(((),) * plan.d, ())
        self.stages = [*chart_blocks(plan, 0, empty), sum_block(plan)]

    def interactions(self, tokens: set[int]) -> list[list]:
        lay, d, N = self.lay, self.plan.d, self.plan.N
        by_chart: dict[int, list[int]] = {}
        for t in tokens:
            by_chart.setdefault(t // lay.Lc, []).append(t)
        out = [[] for _ in self.stages[:-1]]
        psi0, prod0 = lay.psi_base(0), lay.prod_base(0)
        for n, ts in by_chart.items():
            js: list[set] = [set() for _ in range(d)]
            pats = set()
            for t in ts:
                rel = t - n * lay.Lc
                if psi0 <= rel < prod0:
                    js[(rel - psi0) // N].add((rel - psi0) % N)
                elif rel >= prod0:
                    q, p = (rel - prod0) // lay.F, []
                    for _ in range(d):
                        q, j = divmod(q, N)
                        p.append(j)
                    pats.add(tuple(p[::-1]))
            sel = self._Selection(tuple(tuple(sorted(j)) for j in js), tuple(sorted(pats)))
            want = set(ts)
            for b, blk in enumerate(self._chart_blocks(self.plan, n, sel)):
                out[b].extend(it.shifted(n * lay.Lc) for it in blk.interactions if it.t1 + n * lay.Lc in want)
        return out

    def windows(self, x) -> dict[int, Windows]:
        """Per chart: the s windows around φ_n(x), and the same patch windows where 1̂_n(x) != 0 (else none)."""
        from tmcheck.theory.lemmas.theorem2 import claim_parts

        out = {}
        for n, (_, ind, z) in enumerate(claim_parts(self.plan, x)):
            w = tuple(psi_window(zi, self.plan.N) for zi in z)
            out[n] = (w, w if ind != 0 else ((),) * self.plan.d)
        return out

    def evaluate(self, x, windows: dict[int, Windows] | None = None) -> LocalResult:
        plan, lay = self.plan, self.lay
        x = [Fraction(v) for v in x]
        wins = self.windows(x) if windows is None else windows
        grids, base, h0 = [], [], {}
        for n in range(plan.manifold.C_M):
            s_win, p_win = wins[n]
            z = tuple(lay.z_tokens(n))
            ind = lay.indicator(n)
            grids.append(Grid(z, plan.N, lay.psi_base(n), lay.prod_base(n), lay.F, (ind,), s_win, p_win))
            base += [*lay.x_tokens(n), *z, ind]
            h0.update({t: x[j] for j, t in enumerate(lay.x_tokens(n))})
        problem = build_problem(lay.l, self.stages, grids, base, h0, self.interactions, plan.R)
        return run(problem)
