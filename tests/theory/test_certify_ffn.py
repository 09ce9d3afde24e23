"""The FFN enclosure of `theory.certify` (issue #41 item 3): each data row's remainder enters the FFN as a direction of
its own (`Aff.lift`, `Aff.collapse`) and ReLUs of non-negative combinations of ReLU outputs are the identity. Exact
rational evaluation at points of the forms lies inside; a lift that gives both rows one direction, and a ReLU taken
as the identity where its input can be negative, are caught; on the circle the enclosure of T - f shrinks with the
cell and contains the exact error."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmcheck.theory import certify
from tmcheck.theory.certify_arith import Aff


def two_rows(c, g, rem) -> Aff:
    """A form (1, 2, 1): rows 0 and 1 of one token, k = 1 direction, remainders [-rem_r, rem_r]."""
    r = np.array(rem, np.float64).reshape(1, 2, 1)
    return Aff(np.array(c, np.float64).reshape(1, 2, 1), np.array(g, np.float64).reshape(1, 1, 2, 1), -r, r.copy())


def exact_ffn(layers, z):
    """Z + FFN(Z) for one token in rationals (the plan's float weights read exactly)."""
    W, lo, _ = layers[0]
    y = [sum(Fraction(W[u, j]) * z[j] for j in range(2)) + Fraction(lo[u, 0]) for u in range(W.shape[0])]
    for W, blo, _ in layers[1:]:
        y = [max(v, Fraction(0)) for v in y]
        y = [sum(Fraction(W[o, u]) * y[u] for u in range(len(y))) + Fraction(blo[o]) for o in range(W.shape[0])]
    return [z[0] + y[0], z[1] + y[1]]


def layers_of(W1, b1, W2, b2, W3=None, b3=None):
    """An FFN in the plan's format (`certify._cert_ffn_plan`): exact dyadic weights, so lo = hi."""
    W1, b1 = np.array(W1, np.float64), np.array(b1, np.float64)[:, None]
    out = [(W1, b1, b1.copy())]
    for W, b in ((W2, b2), (W3, b3)):
        if W is not None:
            b = np.array(b, np.float64)
            out.append((np.array(W, np.float64), b, b.copy()))
    return out


def check_contains(layers, Z: Aff, e: float, s0: float, s1: float) -> bool:
    """Is the exact Z + FFN(Z) at direction e and remainders s0 rem_0, s1 rem_1 inside the enclosure?"""
    z = [
        Fraction(Z.c[0, r, 0]) + Fraction(Z.g[0, 0, r, 0]) * Fraction(e) + Fraction(Z.hi[0, r, 0]) * Fraction(s)
        for r, s in ((0, s0), (1, s1))
    ]
    want = exact_ffn(layers, z)
    lo, hi = certify._ffn_enclosure(layers, Z, np.array([0])).bounds()
    return all(Fraction(lo[0, r, 0]) <= want[r] <= Fraction(hi[0, r, 0]) for r in range(2))


MAILBOX = layers_of([[0, 1], [0, 1]], [-1, 0], [[3, -2], [0, -1]], [0, 0])  # b = 2: row 0 += row 1 - 3, row 1 = 0
CHAIN = layers_of(  # y = σ(row0 - 1), then σ(2y), then row 0 gets σ(2y) - σ(2y - 1) = min(2y, 1) for 2y >= 0
    [[1, 0]], [-1], [[2], [2]], [0, -1], [[1, -1], [0, 0]], [0, 0]
)
SIGNED = layers_of([[1, 0], [0, 1]], [0, 0], [[1, -1]], [0], [[1], [0]], [0, 0])  # σ(σ(row0) - σ(row1))


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from([MAILBOX, CHAIN, SIGNED]),
    st.lists(st.floats(-3, 6), min_size=2, max_size=2),
    st.lists(st.floats(-1, 1), min_size=2, max_size=2),
    st.lists(st.floats(0, 0.5), min_size=2, max_size=2),
    st.floats(-1, 1),
    st.floats(-1, 1),
    st.floats(-1, 1),
)
def test_ffn_enclosure_contains_the_exact_value(layers, c, g, rem, e, s0, s1):
    assert check_contains(layers, two_rows(c, g, rem), e, s0, s1)


def test_remainders_cancel_in_the_mailbox():
    """Row 1 in [S - b, S + b] with a remainder: the mailbox's row 1 - σ(row 1) is exactly 0, and row 0 gets
    row 1's remainder once (not (2b + 1) times)."""
    lo, hi = certify._ffn_enclosure(MAILBOX, two_rows([0, 3], [0, 0.25], [0, 0.01]), np.array([0])).bounds()
    assert abs(hi[0, 1, 0]) + abs(lo[0, 1, 0]) < 1e-12
    assert hi[0, 0, 0] - lo[0, 0, 0] < 2 * (0.25 + 0.01) + 1e-9


def test_a_lift_with_one_direction_for_both_rows_is_caught(monkeypatch):
    """The mutant: both rows' remainders share one direction, so row 0 - row 1 cancels them. The exact value at
    opposite remainders lies outside."""
    real = Aff.lift
    monkeypatch.setattr(Aff, "lift", lambda self, groups: real(self, np.zeros_like(groups)))
    diff = layers_of([[1, 0], [0, 1]], [10, 10], [[1, -1], [0, 0]], [0, 0])  # row 0 += row 0 - row 1
    assert not check_contains(diff, two_rows([0, 0], [0, 0], [0.1, 0.1]), 0.0, 1.0, -1.0)


def test_a_relu_taken_as_identity_on_a_signed_input_is_caught(monkeypatch):
    """The mutant: every hidden ReLU after the first layer is the identity. SIGNED's σ(row0) - σ(row1) < 0 is then
    passed on instead of 0."""
    real = Aff.relu
    monkeypatch.setattr(Aff, "relu", lambda self, known_pos=None: real(self, None if known_pos is None else True))
    assert not check_contains(SIGNED, two_rows([0, 2], [0, 0], [0, 0]), 0.0, 0.0, 0.0)


@pytest.fixture(scope="module")
def circle():
    from certify_cases import circle_enclosure

    return circle_enclosure(6)


def test_circle_enclosure_shrinks_with_the_cell(circle):
    """On cells of width w = 2^-8 ... 2^-11 centred at several θ, the enclosure of T - f is at most 20 w wide (T - f is
    Lipschitz in θ; a remainder charged up to 2b + 1 times in the mailbox and 2^L times in the indicator, as before
    the FFN lift, gave widths of order 10^6 w² and failed the data bounds) and at least halves with the cell."""
    _, enc = circle
    th = np.array([[0.3], [1.0], [2.2], [4.0], [5.1234]])
    widths = []
    for k in range(8, 12):
        w = 2.0**-k
        lo, hi = enc.enclose(th - w / 2, th + w / 2)
        assert (hi - lo <= 20 * w).all(), (k, hi - lo)
        widths.append(hi - lo)
    for a, b in zip(widths, widths[1:], strict=False):
        assert (b <= a / 2 + 1e-9).all(), (a, b)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 999), st.integers(1, 40), st.integers(0, 1000))
def test_circle_cell_enclosures_contain_the_exact_error(circle, start, width, where):
    """Soundness on cells: x(θ) at a point of a random θ-cell, T there by the exact claim, f = x0."""
    from tmcheck.theory.lemmas.theorem2 import claim_value, rational

    plan, enc = circle
    lo, hi = start * 2 * np.pi / 1000, start * 2 * np.pi / 1000 + width / 2000
    elo, ehi = enc.enclose(np.array([[lo]]), np.array([[hi]]))
    t = lo + (hi - lo) * where / 1000
    x = plan.manifold.Q @ np.array([np.cos(t), np.sin(t)])
    err = float(claim_value(plan, [rational(u) for u in x])) - x[0]
    assert elo[0] - 1e-9 <= err <= ehi[0] + 1e-9


def test_a_cell_whose_data_bound_failed_passes_on_only_its_valid_stages(circle):
    """A θ-cell wide enough that a later block's data bound fails: its parts inherit the stages up to that block
    from its pass and the parent's (here the root's: every token recomputed) after it, and still enclose the exact
    error (the stages after the failed block are not enclosures: their locality hypothesis failed)."""
    from tmcheck.theory.lemmas.theorem2 import claim_value, rational

    plan, enc = circle
    cell = ((Fraction(710, 113) * 3 / 4,), (Fraction(710, 113),))  # the last quarter: the f_n block (4) fails
    states, _, _, valid = enc.pass_(*certify.cell_floats([cell]))
    upto = int(valid[0])
    assert 0 < upto < len(enc.plans)  # a data bound failed, after the first block
    fr = certify.freeze(states, enc.root.active, 0, enc.root, enc.needed, 1e-9, upto)
    later = range(upto + 1, len(enc.plans) + 1)
    assert all(fr.active[s] is enc.root.active[s] and fr.lo[s] is enc.root.lo[s] for s in later)
    assert sum(len(fr.active[s]) for s in range(upto + 1)) < (upto + 1) * enc.net.l
    for part in certify.halves(cell, 4):
        lo, hi = certify.cell_floats([part])
        elo, ehi = enc.enclose(lo, hi, fr)
        t = (lo[0, 0] + hi[0, 0]) / 2
        x = plan.manifold.Q @ np.array([np.cos(t), np.sin(t)])
        err = float(claim_value(plan, [rational(u) for u in x])) - x[0]
        assert elo[0] - 1e-9 <= err <= ehi[0] + 1e-9


# --------------------------------------------------------------------------------------------
# FFNs of one input row (`PiecewiseLinear`): Theorem 2's at the proven N's settings, Lemma 1's ψ


def proven_circle_ffns():
    """The chart block's mailbox and the ψ + indicator FFN of the circle in R^3 at ε = 0.3, N = 425 (S_I = 8, r² of
    the atlas, L = 7 doublings: the network `tmcheck theorem 2 --certify` proves), and Lemma 1's ψ FFN at N = 5."""
    from tmcheck.theory.lemmas.theorem2 import mailbox_ffn, psi_indicator_ffn, rational
    from tmcheck.theory.manifolds import make_manifold
    from tmcheck.theory.sparse import psi_ffn
    from tmcheck.theory.spec import theorem2_constants

    m = make_manifold("circle", 3, 0)
    const = theorem2_constants(m)
    return {
        "mailbox": mailbox_ffn(const.b),
        "psi+indicator": psi_indicator_ffn(425, const.S_I, rational(m.r) ** 2, 7),
        "psi": psi_ffn(5),
    }


FFNS = proven_circle_ffns()
SCALAR = {name: certify._scalar_ffn(layers) for name, layers in FFNS.items()}


def exact_layers(layers, z):
    """Z + FFN(Z) for one token (rows 0 and 1 given, rows 2-3 zero, row 4 = 1) from the Layers' exact weights."""
    h = [z[0], z[1], Fraction(0), Fraction(0), Fraction(1)]
    for i, lay in enumerate(layers):
        if i:
            h = [max(v, Fraction(0)) for v in h]
        h = [
            sum(Fraction(w) * v for w, v in zip(row, h, strict=True)) + Fraction(b)
            for row, b in zip(lay.W, lay.b, strict=True)
        ]
    return [z[0] + h[0], z[1] + h[1]]


def breakpoints(name: str) -> list[Fraction]:
    from tmcheck.theory.certify_arith import _pl_breakpoints

    layers = FFNS[name]
    W0 = [[Fraction(lay_row[1])] for lay_row in layers[0].W]
    net = [(W0, [Fraction(w[4]) + Fraction(b) for w, b in zip(layers[0].W, layers[0].b, strict=True)])]
    net += [([[Fraction(v) for v in row] for row in lay.W], [Fraction(v) for v in lay.b]) for lay in layers[1:]]
    return _pl_breakpoints(net)


def test_breakpoints_are_the_relus_kinks():
    """ψ's kinks u = ±1, ±2 (r = 1 ± 1/(3(N - 1)), 1 ± 2/(3(N - 1))) and row 1's σ(r) at 0; the mailbox's σ(r - 1),
    σ(r); the indicator's 1̂ ramp [c0, c0 + Δ] (c0 = S_I + r² - Δ) and its u1 - u2 step at S_I - 1, S_I."""
    from tmcheck.theory.lemmas.theorem2 import rational
    from tmcheck.theory.manifolds import make_manifold

    a = Fraction(12)
    assert breakpoints("psi") == [0, 1 - 2 / a, 1 - 1 / a, 1 + 1 / a, 1 + 2 / a]
    assert breakpoints("mailbox") == [0, 1]
    r2, delta, a = rational(make_manifold("circle", 3, 0).r) ** 2, Fraction(1, 128), Fraction(3 * 424)
    c0 = 8 + r2 - delta
    want = [0, 1 - 2 / a, 1 - 1 / a, 1 + 1 / a, 1 + 2 / a, Fraction(7), Fraction(8), c0, c0 + delta]
    assert breakpoints("psi+indicator") == sorted(want)


def around(name: str, k: int, offset: float, width: float) -> float:
    """A centre for row 1: breakpoint k of the FFN (cyclically) moved by offset · width."""
    bps = breakpoints(name)
    return float(bps[k % len(bps)]) + offset * width


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(sorted(FFNS)),
    st.integers(0, 20),
    st.floats(-1.5, 1.5),
    st.integers(-24, 3),
    st.floats(0, 1),
    st.floats(-4, 4),
    st.lists(st.floats(-1, 1), min_size=3, max_size=3),
)
def test_scalar_ffn_enclosure_contains_the_exact_value(name, k, offset, log_width, share, row0, where):
    """Row 1's range placed on, beside or across the FFN's kinks (widths 2^-24 ... 8, linear part and remainder in
    any proportion): the exact Z + FFN(Z) at a point of the form lies inside the enclosure, in both rows."""
    width = 2.0**log_width
    c1 = around(name, k, offset, width)
    Z = two_rows([row0, c1], [0.5 * width, share * width], [0.25 * width, (1 - share) * width])
    e, s0, s1 = where
    z = [
        Fraction(Z.c[0, r, 0]) + Fraction(Z.g[0, 0, r, 0]) * Fraction(e) + Fraction(Z.hi[0, r, 0]) * Fraction(s)
        for r, s in ((0, s0), (1, s1))
    ]
    want = exact_layers(FFNS[name], z)
    out = certify._scalar_ffn_enclosure(SCALAR[name], Z)
    assert all(form_at(out, r, e)[0] <= want[r] <= form_at(out, r, e)[1] for r in range(2)), (want, out)


def form_at(F: Aff, r: int, e: float) -> tuple[Fraction, Fraction]:
    """The interval the form gives row r of its one token at direction e (exact): c + g e + [lo, hi]."""
    v = Fraction(F.c[0, r, 0]) + Fraction(F.g[0, 0, r, 0]) * Fraction(e)
    return v + Fraction(F.lo[0, r, 0]), v + Fraction(F.hi[0, r, 0])


def test_psi_stays_in_its_range_on_a_wide_cell():
    """The cause of the failed data bound at N = 425: on a θ-tile of width 2π/512, a chart's z moves by about 0.025,
    so ψ's argument u = 3(N - 1)(r - 1) spans about 30 kinks' worth; a chord per ReLU then charged each unit that
    width (ψ's enclosure about 31 wide, rows past the copy block's M = 5) although ψ lies in [0, 1]. The enclosure of
    the whole function is within ψ's range whatever the width, and the per-unit enclosure is not."""
    name = "psi+indicator"
    for w in (0.001, 0.025, 1.0):
        Z = two_rows([0, 1], [0, w], [0, 0])
        lo, hi = certify._scalar_ffn_enclosure(SCALAR[name], Z).bounds()
        assert -1e-9 <= lo[0, 0, 0] and hi[0, 0, 0] <= 1 + 1e-9 and lo[0, 1, 0] >= -w - 1e-9
    plan = certify._cert_ffn_plan(FFNS[name], np.array([[0], [0], [1]], dtype=object))
    lo, hi = certify._ffn_enclosure(plan, two_rows([0, 1], [0, 0.025], [0, 0]), np.array([0])).bounds()
    assert hi[0, 0, 0] - lo[0, 0, 0] > 10


def test_a_kink_inside_the_range_moves_the_bound():
    """r across ψ's peak (ends both at ψ = 0, the middle at 1): the bound reaches 1 only through the breakpoints."""
    Z = two_rows([0, 1], [0, 0.5], [0, 0])
    lo, hi = certify._scalar_ffn_enclosure(SCALAR["psi"], Z).bounds()
    assert hi[0, 0, 0] >= 1 and lo[0, 0, 0] <= 0


def test_skipping_the_breakpoints_inside_is_caught(monkeypatch):
    """The mutant: h - λ r is taken at the ends of r's range only. Across ψ's peak the exact 1 lies outside."""
    from tmcheck.theory.certify_arith import PiecewiseLinear

    real = PiecewiseLinear.candidates
    monkeypatch.setattr(
        PiecewiseLinear, "candidates", lambda self, o, rlo, rhi: tuple(a[:2] for a in real(self, o, rlo, rhi))
    )
    Z = two_rows([0, 1], [0, 0.5], [0, 0])
    lo, hi = certify._scalar_ffn_enclosure(SCALAR["psi"], Z).bounds()
    assert not hi[0, 0, 0] >= 1


def test_dropping_the_remainder_is_caught(monkeypatch):
    """The mutant: the range of h - λ r enters as its midpoint only (the remainder dropped). Across one kink (ψ's u = 1
    at the centre, e = 0) the form then misses the exact ψ = 1 there; the real enclosure holds it."""
    Z = two_rows([0, float(1 + Fraction(1, 12))], [0, 0.05], [0, 0])
    lo, hi = form_at(certify._scalar_ffn_enclosure(SCALAR["psi"], Z), 0, 0.0)
    assert lo <= 1 <= hi
    real = Aff.add_interval
    monkeypatch.setattr(Aff, "add_interval", lambda self, lo, hi: real(self, (lo + hi) / 2, (lo + hi) / 2))
    lo, hi = form_at(certify._scalar_ffn_enclosure(SCALAR["psi"], Z), 0, 0.0)
    assert not lo <= 1 <= hi
